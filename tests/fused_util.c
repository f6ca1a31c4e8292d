/*
 * fused_util.c - the nvshmem-fused tests' variants, reference and check
 * (fused_util.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "fused_util.h"

#include "core/hxi.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hxt_fz_bitwise_forces(const hxt_fz_var *v)
{
    return strcmp(v->fmode, "atomic") != 0 || v->put;
}

int hxt_fz_have_gpu(hx_comm *comm)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess)
        (void) cudaGetLastError();
    return hxt_agree(comm, e == cudaSuccess && ndev > 0);
}

int hxt_fz_create(hx_comm *comm, hxt_fz_var *v, const char *name, const char *fmode, int put,
                  double timeout_s, void *stream)
{
    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.dtype = HX_FLOAT;
    o.graph = 1;
    o.timeout_s = timeout_s;
    o.stream = stream;
    hxt_tvariant tv = {name, put, ""};
    snprintf(tv.label, sizeof tv.label, "%s[%s]%s", name, fmode, put ? "(put)" : "");
    memset(v, 0, sizeof *v);
    snprintf(v->label, sizeof v->label, "%s", tv.label);
    v->fmode = fmode;
    v->put = put;
    HXT_CHECK(hxi_knobs_set("HALOX_FUSED_FORCE_MODE", fmode) == HX_OK, "%s: force mode %s: %s",
              tv.label, fmode, hx_last_error());
    hx_transport *t = hxt_transport_try(comm, &o, &tv);
    hxi_knobs_set("HALOX_FUSED_FORCE_MODE", "");
    if (!t)
        return 0;
    v->t = t;
    v->alive = 1;
    return 1;
}

int hxt_fz_create_all(hx_comm *comm, hxt_fz_var *v, double timeout_s)
{
    static const char *modes[3] = {"push", "pull", "atomic"};
    int n = 0;
    for (int m = 0; m < 3; m++)
        for (int put = 0; put < 2; put++)
            n += hxt_fz_create(comm, &v[n], "nvshmem-fused", modes[m], put, timeout_s, NULL);
    for (int put = 0; put < 2; put++)
        n += hxt_fz_create(comm, &v[n], "nvshmem-fused-tma", "push", put, timeout_s, NULL);
    return n;
}

int hxt_fz_create_named(hx_comm *comm, hxt_fz_var *v, const char *name, double timeout_s)
{
    int n = hxt_fz_create(comm, &v[0], name, "pull", 0, timeout_s, NULL);
    n += hxt_fz_create(comm, &v[n], name, "push", 0, timeout_s, NULL);
    return n;
}

int hxt_fz_ref_init(hx_comm *comm, hxt_fz_ref *r)
{
    memset(r, 0, sizeof *r);
    r->cf = hxt_cpu_transport(comm, HX_FLOAT);
    r->cd = hxt_cpu_transport(comm, HX_DOUBLE);
    return hxt_agree(comm, r->cf && r->cd);
}

void hxt_fz_ref_free(hxt_fz_ref *r)
{
    hx_transport_destroy(r->cf);
    hx_transport_destroy(r->cd);
    free(r->xr);
    free(r->fr);
    free(r->sabs);
    free(r->tmp);
}

int hxt_fz_ref_plan(hx_comm *comm, hxt_fz_ref *r, const hx_plan *plan)
{
    int nt = hx_plan_ntotal(plan);
    if (nt + 1 > r->cap) {
        r->cap = 2 * (nt + 1);
        r->xr = realloc(r->xr, (size_t) r->cap * 3 * sizeof(float));
        r->fr = realloc(r->fr, (size_t) r->cap * 3 * sizeof(float));
        r->sabs = realloc(r->sabs, (size_t) r->cap * 3 * sizeof(double));
        r->tmp = realloc(r->tmp, (size_t) r->cap * 3 * sizeof(double));
    }
    int ok = HXT_OK(hx_transport_set_plan(r->cf, plan));
    ok &= HXT_OK(hx_transport_set_plan(r->cd, plan));
    return hxt_agree(comm, ok);
}

int hxt_fz_ref_step(hx_comm *comm, hxt_fz_ref *r, const hx_plan *plan, const double *cur,
                    const double *force)
{
    int nh = hx_plan_nhome(plan), nt = hx_plan_ntotal(plan);
    float *x = hx_transport_coords(r->cf), *f = hx_transport_forces(r->cf);
    double *fd = hx_transport_forces(r->cd);
    for (int i = 0; i < nh * 3; i++)
        x[i] = (float) cur[i];
    for (int i = 0; i < nt * 3; i++) {
        f[i] = (float) force[i];
        fd[i] = fabs(force[i]);
    }
    int ok = HXT_OK(hx_transport_forward(r->cf));
    ok &= HXT_OK(hx_transport_reverse(r->cf));
    ok &= HXT_OK(hx_transport_reverse(r->cd));
    memcpy(r->xr, x, (size_t) nt * 3 * sizeof(float));
    memcpy(r->fr, f, (size_t) nh * 3 * sizeof(float));
    memcpy(r->sabs, fd, (size_t) nh * 3 * sizeof(double));
    return hxt_agree(comm, ok);
}

void hxt_fz_forces(double *force, int n3, hxt_rng *rng)
{
    for (int i = 0; i < n3; i++) {
        double v = (2.0 * hxt_uniform(rng) - 1.0) * pow(10.0, 2.0 * hxt_uniform(rng) - 1.0);
        force[i] = (double) (float) v;
    }
}

int hxt_fz_check(hx_comm *comm, const hxt_fz_ref *r, const hx_plan *plan, hxt_fz_var *v,
                 const double *cur, const double *force, int graph, const char *what)
{
    int nh = hx_plan_nhome(plan), nt = hx_plan_ntotal(plan);
    double *got = malloc((size_t) (nt + 1) * 3 * sizeof(double));
    double *poison = malloc((size_t) (nt - nh + 1) * 3 * sizeof(double));
    for (int i = 0; i < (nt - nh) * 3; i++)
        poison[i] = NAN;
    hx_transport *t = v->t;
    /* Home coordinates, poisoned halo (an entry nobody writes shows), and
     * this step's forces, which only the reverse reads. No peer may send
     * before every rank has written. */
    int ok = HXT_OK(hx_transport_write(t, HX_COORDS, 0, nh, cur));
    ok &= HXT_OK(hx_transport_write(t, HX_COORDS, nh, nt - nh, poison));
    ok &= HXT_OK(hx_transport_write(t, HX_FORCES, 0, nt, force));
    ok &= HXT_OK(hxi_barrier(comm));
    if (graph) {
        ok &= HXT_OK(hx_transport_step_graph(t));
    } else {
        ok &= HXT_OK(hx_transport_forward(t));
        ok &= HXT_OK(hx_transport_reverse(t));
    }
    ok &= HXT_OK(hx_transport_sync(t));
    if (ok && HXT_OK(hx_transport_read(t, HX_COORDS, 0, nt, got))) {
        int bad = 0;
        for (int i = 0; i < nt * 3; i++)
            if (!hxt_same_f((float) got[i], r->xr[i])) {
                if (bad < 3)
                    fprintf(stderr, "[rank %d] %s %s (%s): coordinate %d.%d is %.9g, cpu %.9g\n",
                            hxt_rank, v->label, what, graph ? "graph" : "launched", i / 3, i % 3,
                            got[i], (double) r->xr[i]);
                bad++;
            }
        HXT_CHECK(bad == 0, "%s %s (%s): %d of %d coordinates differ", v->label, what,
                  graph ? "graph" : "launched", bad, nt * 3);
        ok &= bad == 0;
    }
    if (ok && HXT_OK(hx_transport_read(t, HX_FORCES, 0, nh, got))) {
        int bad = 0, bitwise = hxt_fz_bitwise_forces(v);
        for (int i = 0; i < nh * 3; i++) {
            float want = r->fr[i];
            int good = bitwise ? hxt_same_f((float) got[i], want)
                               : fabs(got[i] - (double) want) <= 1e-6 * fmax(r->sabs[i], 1e-30);
            if (!good) {
                if (bad < 3)
                    fprintf(stderr,
                            "[rank %d] %s %s (%s): force %d.%d is %.9g, cpu %.9g (bound %.3g)\n",
                            hxt_rank, v->label, what, graph ? "graph" : "launched", i / 3, i % 3,
                            got[i], (double) want, r->sabs[i]);
                bad++;
            }
        }
        HXT_CHECK(bad == 0, "%s %s (%s): %d of %d home forces differ (%s)", v->label, what,
                  graph ? "graph" : "launched", bad, nh * 3,
                  bitwise ? "bitwise" : "1e-6 of the magnitude sum");
        ok &= bad == 0;
    }
    free(got);
    free(poison);
    return hxt_agree(comm, ok);
}
