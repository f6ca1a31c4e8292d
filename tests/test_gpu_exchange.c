/*
 * test_gpu_exchange: every GPU transport against the cpu transport (float)
 * on the same random system and plan. Halo coordinates must be bitwise
 * equal; after the reverse of random forces, home forces must agree to
 * 1e-6 relative. Ten steps per plan with home coordinates moving a little
 * each step (no re-plan), so that step counters and buffer reuse are
 * exercised; then a re-plan with three times the atoms, so that buffers
 * grow. The nvshmem transports run twice: with peer pointers and with the
 * put path forced. Grids: per rank count (2: 1x1x2 and 2x1x1; 4: 2x2x1 and
 * 1x1x4 with 2 pulses; 8: 2x2x2 and 2x1x4) or --grid AxBxC (repeatable).
 * --transport NAME limits the run to one transport.
 *
 * All GPU transports are created up front and live together: NVSHMEM can
 * start only once per process.
 */
#include "gpucases.h"

#include "core/hxi.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT   8
#define NSTEPS 10

typedef struct gput {
    hx_transport *t;
    char label[64];
    int alive;
} gput;

/* One plan, NSTEPS steps, every live transport against the cpu one. */
typedef struct gput_set {
    gput *gt;
    int ngt;
} gput_set;

static void run_plan(hx_comm *comm, const hx_plan *plan, const char *label, uint64_t seed,
                     void *ctx)
{
    gput *gt = ((gput_set *) ctx)->gt;
    int ngt = ((gput_set *) ctx)->ngt;
    int rank = hx_comm_rank(comm);
    int nhome = hx_plan_nhome(plan), ntotal = hx_plan_ntotal(plan);
    hx_transport *ref = hxt_cpu_transport(comm, HX_FLOAT);
    if (!hxt_agree(comm, ref != NULL))
        return;
    if (!hxt_agree(comm, HXT_OK(hx_transport_set_plan(ref, plan)))) {
        hx_transport_destroy(ref);
        return;
    }
    for (int k = 0; k < ngt; k++) {
        if (!gt[k].alive)
            continue;
        int ok = HXT_OK(hx_transport_set_plan(gt[k].t, plan));
        if (!hxt_agree(comm, ok)) {
            gt[k].alive = 0;
            if (rank == 0)
                fprintf(stderr, "%s: set_plan failed on some rank\n", gt[k].label);
        }
    }
    const double *x0 = hx_plan_coords(plan);
    double *cur = malloc((size_t) (nhome + 1) * 3 * sizeof(double));
    double *force = malloc((size_t) (ntotal + 1) * 3 * sizeof(double));
    double *got = malloc((size_t) (ntotal + 1) * 3 * sizeof(double));
    double *poison = malloc((size_t) (ntotal + 1) * 3 * sizeof(double));
    memcpy(cur, x0, (size_t) nhome * 3 * sizeof(double));
    for (int i = 0; i < ntotal * 3; i++)
        poison[i] = NAN;
    hxt_rng mv = {seed * 31u + (uint64_t) rank};

    for (int step = 0; step < NSTEPS; step++) {
        /* Home atoms move a little; the plan stays. */
        if (step > 0)
            for (int i = 0; i < nhome * 3; i++)
                cur[i] += 0.02 * (hxt_uniform(&mv) - 0.5);
        float *xr = hx_transport_coords(ref);
        for (int i = 0; i < nhome * 3; i++)
            xr[i] = (float) cur[i];
        hxt_rng fr = {seed * 1000003u + (uint64_t) rank * 7919u + (uint64_t) step};
        float *fref = hx_transport_forces(ref);
        for (int i = 0; i < ntotal * 3; i++) {
            double v = (2.0 * hxt_uniform(&fr) - 1.0) * pow(10.0, 2.0 * hxt_uniform(&fr) - 1.0);
            fref[i] = (float) v;
            force[i] = (double) fref[i];
        }
        HXT_OK(hx_transport_forward(ref));
        HXT_OK(hx_transport_reverse(ref));
        HXT_OK(hx_transport_sync(ref));

        for (int k = 0; k < ngt; k++) {
            if (!gt[k].alive)
                continue;
            hx_transport *t = gt[k].t;
            int ok = HXT_OK(hx_transport_write(t, HX_COORDS, 0, nhome, cur));
            /* Unwritten halo entries must show: poison them, and let no
             * peer send before everyone has. */
            ok &= HXT_OK(hx_transport_write(t, HX_COORDS, nhome, ntotal - nhome, poison));
            ok &= HXT_OK(hxi_barrier(comm));
            ok &= HXT_OK(hx_transport_forward(t));
            ok &= HXT_OK(hx_transport_sync(t));
            if (ok && HXT_OK(hx_transport_read(t, HX_COORDS, 0, ntotal, got))) {
                int bad = 0;
                for (int i = 0; i < ntotal * 3; i++)
                    if (!hxt_same_f((float) got[i], xr[i])) {
                        if (bad < 3)
                            fprintf(stderr,
                                    "[rank %d] %s %s step %d: coordinate %d.%d is %.9g, cpu "
                                    "has %.9g\n",
                                    rank, gt[k].label, label, step, i / 3, i % 3, got[i],
                                    (double) xr[i]);
                        bad++;
                    }
                HXT_CHECK(bad == 0, "%s %s step %d: %d of %d halo coordinates differ", gt[k].label,
                          label, step, bad, (ntotal - nhome) * 3);
            }
            ok &= HXT_OK(hx_transport_write(t, HX_FORCES, 0, ntotal, force));
            ok &= HXT_OK(hx_transport_reverse(t));
            ok &= HXT_OK(hx_transport_sync(t));
            if (ok && HXT_OK(hx_transport_read(t, HX_FORCES, 0, nhome, got))) {
                int bad = 0;
                for (int i = 0; i < nhome * 3; i++) {
                    double want = fref[i];
                    double tol = 1e-6 * fmax(fabs(want), 1.0);
                    if (!(fabs(got[i] - want) <= tol)) {
                        if (bad < 3)
                            fprintf(stderr,
                                    "[rank %d] %s %s step %d: force %d.%d is %.9g, cpu has "
                                    "%.9g\n",
                                    rank, gt[k].label, label, step, i / 3, i % 3, got[i], want);
                        bad++;
                    }
                }
                HXT_CHECK(bad == 0, "%s %s step %d: %d of %d home forces differ", gt[k].label,
                          label, step, bad, nhome * 3);
            }
            if (!hxt_agree(comm, ok)) {
                if (rank == 0)
                    fprintf(stderr, "%s %s: step %d failed; dropping this transport\n", gt[k].label,
                            label, step);
                gt[k].alive = 0;
            }
        }
    }
    free(cur);
    free(force);
    free(got);
    free(poison);
    hx_transport_destroy(ref);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_gpu_exchange");
    int rank = hx_comm_rank(comm);
    int grids[8][3], ngrids = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--transport") == 0 && i + 1 < argc)
            only = argv[++i];
    int skip = hxt_gpu_setup(comm, argc, argv, grids, &ngrids);
    if (skip)
        return skip;

    gput gt[MAXT];
    int ngt = 0;
    for (int i = 0; i < hx_transport_count() && ngt < MAXT - 1; i++) {
        const char *name = hx_transport_name_at(i);
        if (strcmp(name, "cpu") == 0 || (only && strcmp(name, only) != 0))
            continue;
        int variants = strncmp(name, "nvshmem", 7) == 0 ? 2 : 1;
        for (int v = 0; v < variants; v++) {
            hx_transport_opts o;
            hx_transport_opts_init(&o);
            o.name = name;
            o.dtype = HX_FLOAT;
            o.force_put = v;
            hx_transport *t = NULL;
            hx_status st = hx_transport_create(&t, comm, &o);
            int created = hxt_agree(comm, st == HX_OK);
            snprintf(gt[ngt].label, sizeof gt[ngt].label, "%s%s", name, v ? "(put)" : "");
            if (!created) {
                if (t)
                    hx_transport_destroy(t);
                /* Refusing a setting it cannot run in is allowed; any other
                 * failure is not. */
                HXT_CHECK(st == HX_OK || st == HX_ERR_UNSUPPORTED, "%s: create: %s: %s",
                          gt[ngt].label, hx_status_string(st), hx_last_error());
                if (rank == 0 || st != HX_OK)
                    printf("[rank %d] %s: not run: %s\n", rank, gt[ngt].label,
                           st == HX_OK ? "refused on another rank" : hx_last_error());
                continue;
            }
            if (rank == 0)
                printf("%s: %s\n", gt[ngt].label, hx_transport_describe(t));
            gt[ngt].t = t;
            gt[ngt].alive = 1;
            ngt++;
        }
    }
    HXT_CHECK(ngt > 0 || only, "no GPU transport could be created");

    hx_plan *previous = NULL;
    gput_set set = {gt, ngt};
    if (ngt > 0)
        hxt_gpu_cases(comm, (const int(*)[3]) grids, ngrids, 1234u, run_plan, &set, &previous);
    for (int k = 0; k < ngt; k++) {
        if (rank == 0)
            printf("%s: %s\n", gt[k].label, gt[k].alive ? "ran every case" : "FAILED a case");
        HXT_CHECK(gt[k].alive, "%s failed a case (see above)", gt[k].label);
    }
    for (int k = ngt - 1; k >= 0; k--)
        hx_transport_destroy(gt[k].t);
    if (previous)
        hx_plan_destroy(previous);
    return hxt_finish(comm);
}
