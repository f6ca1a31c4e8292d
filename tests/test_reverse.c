/*
 * test_reverse: the cpu transport's force exchange. Every local atom (home
 * and halo) gets a random force; after hx_transport_reverse each home atom
 * holds its own value plus the values put on all its halo images on all
 * ranks. Forwarded atoms make chains, so with 2 and 3 pulses a value must
 * pass through intermediate ranks before it reaches its owner. Double data
 * to 1e-12 and float data to 1e-6 of the sum of magnitudes (the order of
 * summation differs from the reference's). Two steps per plan, so that a
 * second exchange on the same plan is checked too.
 */
#include "oracle.h"

#include "core/hxi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double box_lo[3] = {2.0, 0.0, -1.5};
static const double box_len[3] = {12.5, 14.0, 11.75};

static void run_case(hx_comm *comm, const hx_plan *plan, const hxt_sys *s, const int64_t *home,
                     const int64_t *ids, hx_dtype dtype, uint64_t seed, const char *gs,
                     long *nchained)
{
    int nhome = hx_plan_nhome(plan), ntotal = hx_plan_ntotal(plan);
    int N = s->n, rank = hx_comm_rank(comm);
    const char *tn = dtype == HX_DOUBLE ? "double" : "float";
    hx_transport *t = hxt_cpu_transport(comm, dtype);
    if (!hxt_agree(comm, t != NULL))
        return;
    if (!hxt_agree(comm, HXT_OK(hx_transport_set_plan(t, plan)))) {
        hx_transport_destroy(t);
        return;
    }
    double *want = malloc((size_t) N * 6 * sizeof(double)); /* sums, then |values| */
    int *images = malloc((size_t) N * sizeof(int));
    for (int step = 0; step < 2; step++) {
        /* A step: coordinates forward, then forces back. */
        if (dtype == HX_DOUBLE) {
            double *x = hx_transport_coords(t);
            for (int i = 0; i < nhome; i++)
                memcpy(&x[3 * i], &s->x[3 * home[i]], 3 * sizeof(double));
        } else {
            float *x = hx_transport_coords(t);
            for (int i = 0; i < nhome; i++)
                for (int k = 0; k < 3; k++)
                    x[3 * i + k] = (float) s->x[3 * home[i] + k];
        }
        HXT_OK(hx_transport_forward(t));

        hxt_rng r = {seed * 1000003u + (uint64_t) rank * 7919u + (uint64_t) step};
        memset(want, 0, (size_t) N * 6 * sizeof(double));
        memset(images, 0, (size_t) N * sizeof(int));
        void *fv = hx_transport_forces(t);
        for (int i = 0; i < ntotal; i++) {
            int64_t id = ids[i];
            for (int k = 0; k < 3; k++) {
                /* Magnitudes spread over four decades. */
                double v = (2.0 * hxt_uniform(&r) - 1.0) * pow(10.0, 4.0 * hxt_uniform(&r) - 2.0);
                if (dtype == HX_DOUBLE)
                    ((double *) fv)[3 * i + k] = v;
                else {
                    float vf = (float) v;
                    ((float *) fv)[3 * i + k] = vf;
                    v = vf;
                }
                if (id >= 0 && id < N) {
                    want[3 * id + k] += v;
                    want[3 * N + 3 * id + k] += fabs(v);
                }
            }
            if (id >= 0 && id < N)
                images[id]++;
        }
        HXT_OK(hxi_allreduce_double(comm, want, 6 * N, 0));
        HXT_OK(hxi_allreduce_int(comm, images, N, 0));

        int ok = HXT_OK(hx_transport_reverse(t));
        ok &= HXT_OK(hx_transport_sync(t));
        fv = hx_transport_forces(t);
        const double tol = dtype == HX_DOUBLE ? 1e-12 : 1e-6;
        int nbad = 0, first = -1;
        double fgot = 0, fwant = 0;
        long chained = 0;
        for (int i = 0; i < nhome && ok; i++) {
            int64_t id = ids[i];
            for (int k = 0; k < 3; k++) {
                double got =
                    dtype == HX_DOUBLE ? ((double *) fv)[3 * i + k] : ((float *) fv)[3 * i + k];
                double w = want[3 * id + k], mag = want[3 * N + 3 * id + k];
                if (!(fabs(got - w) <= tol * mag)) {
                    if (nbad++ == 0) {
                        first = (int) id;
                        fgot = got;
                        fwant = w;
                    }
                }
            }
            chained += images[id] > 1;
        }
        HXT_CHECK(
            nbad == 0,
            "grid %s rh %g %s step %d: %d force components wrong (first id %d: %.17g, want %.17g)",
            gs, hx_plan_decomp(plan)->cutoff, tn, step, nbad, first, fgot, fwant);
        if (step == 0)
            *nchained += chained;
    }
    free(want);
    free(images);
    hx_transport_destroy(t);
}

static void reverse_case(hx_comm *comm, const hxt_case *c, void *ctx)
{
    (void) ctx;
    const int nr = hx_comm_size(comm), N = c->spec.natoms;
    hx_transport *td = hxt_cpu_transport(comm, HX_DOUBLE);
    if (hxt_agree(comm, td != NULL)) {
        int64_t *ids = hxt_trace_ids(td, c->plan, c->l.id, NULL);
        int nid = 0;
        for (int i = 0; i < hx_plan_ntotal(c->plan); i++)
            nid += ids[i] < 0 || ids[i] >= N;
        HXT_CHECK(nid == 0, "grid %s: %d local atoms not identified", c->gs, nid);
        long chained = 0;
        run_case(comm, c->plan, &c->s, c->l.id, ids, HX_DOUBLE, c->seed + 1, c->gs, &chained);
        run_case(comm, c->plan, &c->s, c->l.id, ids, HX_FLOAT, c->seed + 1, c->gs, &chained);
        int any = (int) (chained > 0);
        HXT_OK(hxi_allreduce_int(comm, &any, 1, 0));
        /* Some home atom must have had an image somewhere, or nothing was
         * tested. */
        if (nr > 1)
            HXT_CHECK(any > 0, "grid %s rh %g: no home atom has a halo image", c->gs, c->spec.rh);
        free(ids);
    }
    if (td)
        hx_transport_destroy(td);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_reverse");
    int grids[16][3];
    if (hxt_grids_for(hx_comm_size(comm), grids, 16) == 0)
        return hxt_skip(comm, "no grid in the test list has this many domains");

    const hxt_spec specs[] = {{1.25, 2000, 0, 0}, {2.8, 2000, 0, 0}, {5.5, 2000, 0, 0}};
    int ncases = hxt_for_each_plan(comm, box_lo, box_len, specs, 3, 4242, reverse_case, NULL);
    HXT_CHECK(ncases > 0, "no case ran");
    return hxt_finish(comm);
}
