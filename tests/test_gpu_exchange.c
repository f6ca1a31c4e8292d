/*
 * test_gpu_exchange: every GPU transport against the cpu transport (float)
 * on the same random system and plan. Halo coordinates must be bitwise
 * equal; after the reverse of random forces, home forces must agree to
 * 1e-6 relative. Ten steps per plan with home coordinates moving a little
 * each step (no re-plan), so that step counters and buffer reuse are
 * exercised; then a re-plan with three times the atoms, so that buffers
 * grow. The nvshmem transports run twice: with peer pointers and with the
 * put path forced. Then the same in triclinic boxes (hxt_gpu_tilts), where
 * a pulse's shift has up to three non-zero components. Grids: per rank count (2: 1x1x2 and 2x1x1;
 * 4: 2x2x1 and 1x1x4 with 2 pulses; 8: 2x2x2 and 2x1x4) or --grid AxBxC (repeatable).
 * --transport NAME limits the run to one transport. --full: full-shell
 * plans (hx_plan_create_full): the forwards bitwise as above, and every
 * reverse refused (HX_ERR_STATE) instead of compared.
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

#define MAXT 16 /* transport variants: every GPU transport, peer ones twice */

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_gpu_exchange");
    int rank = hx_comm_rank(comm);
    int grids[8][3], ngrids = 0;
    const char *only = NULL;
    int full = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--transport") == 0 && i + 1 < argc)
            only = argv[++i];
        full |= strcmp(argv[i], "--full") == 0;
    }
    int skip = hxt_gpu_setup(comm, argc, argv, grids, &ngrids);
    if (skip)
        return skip;

    hxt_gpu_entry gt[MAXT];
    memset(gt, 0, sizeof gt);
    int ngt = 0;
    hxt_tvariant v[MAXT];
    const int nv = hxt_transport_variants(0, HX_CAP_HOST, 1, v, MAXT - 1);
    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.dtype = HX_FLOAT;
    for (int k = 0; k < nv; k++) {
        if (only && strcmp(v[k].name, only) != 0)
            continue;
        hx_transport *t = hxt_transport_try(comm, &o, &v[k]);
        if (!t)
            continue;
        snprintf(gt[ngt].label, sizeof gt[ngt].label, "%s", v[k].label);
        if (rank == 0)
            printf("%s: %s\n", gt[ngt].label, hx_transport_describe(t));
        gt[ngt].t = t;
        gt[ngt].alive = 1;
        ngt++;
    }
    HXT_CHECK(ngt > 0 || only, "no GPU transport could be created");

    hx_plan *previous = NULL;
    hxt_gpu_set set = {gt, ngt};
    if (ngt > 0) {
        hxt_walk w = hxt_gpu_walk((const int(*)[3]) grids, ngrids, 1234u);
        w.full = full;
        hxt_walk_plans(comm, &w, hxt_gpu_check_plan, &set, &previous);
        for (int k = 0; k < HXT_GPU_NTILTS; k++) {
            hx_plan *last = NULL;
            w.tilt_frac = hxt_gpu_tilts[k];
            w.seed = 5678u + 100u * (uint64_t) k;
            hxt_walk_plans(comm, &w, hxt_gpu_check_plan, &set, &last);
            /* The transports hold the newest plan; the one before may go. */
            if (last) {
                if (previous)
                    hx_plan_destroy(previous);
                previous = last;
            }
        }
    }
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
