#include "gpucases.h"

#include "core/hxi.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Steps per plan: enough for step counters and buffer reuse to matter. */
#define HXT_GPU_STEPS 10

/* 3 or more domains along a dimension: width 2.1 < rh gives 2 pulses (and
 * rh < half the box); else one pulse in a box of 12. */
static void box_for(const int grid[3], double lo[3], double len[3])
{
    for (int d = 0; d < 3; d++) {
        lo[d] = 0.0;
        len[d] = grid[d] >= 3 ? 2.1 * grid[d] : 12.0;
    }
}

static int default_grids(int nranks, int grids[][3])
{
    static const int g2[2][3] = {{1, 1, 2}, {2, 1, 1}};
    static const int g4[2][3] = {{2, 2, 1}, {1, 1, 4}};
    static const int g8[2][3] = {{2, 2, 2}, {2, 1, 4}};
    const int(*src)[3] = nranks == 2 ? g2 : nranks == 4 ? g4 : nranks == 8 ? g8 : NULL;
    if (!src)
        return hxt_grids_for(nranks, grids, 4);
    memcpy(grids, src, 2 * sizeof *src);
    return 2;
}

int hxt_gpu_setup(hx_comm *comm, int argc, char **argv, int grids[8][3], int *ngrids)
{
    int nranks = hx_comm_size(comm), ndev = 0;
    *ngrids = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--grid") == 0 && i + 1 < argc && *ngrids < 8)
            if (hx_grid_parse(argv[++i], grids[*ngrids]) == HX_OK)
                (*ngrids)++;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (!hxt_agree(comm, e == cudaSuccess && ndev > 0))
        return hxt_skip(comm, "no CUDA device visible here (the GPU transports need one)");
    if (*ngrids == 0)
        *ngrids = default_grids(nranks, grids);
    for (int g = 0; g < *ngrids; g++)
        if (grids[g][0] * grids[g][1] * grids[g][2] != nranks)
            *ngrids = 0;
    if (*ngrids == 0)
        return hxt_skip(comm, "no test grid for this rank count (use 2, 4 or 8, or --grid)");
    return 0;
}

const double hxt_gpu_tilts[HXT_GPU_NTILTS][3] = {{0.2, 0.2, 0.2}, {0.5, -0.5, 0.5}};

hxt_walk hxt_gpu_walk(const int grids[][3], int ngrids, uint64_t seed)
{
    /* Density 0.8442, then three times the atoms (so that buffers grow). */
    static const hxt_spec specs[2] = {{HXT_GPU_RH, 0, 0.0, 0.8442}, {HXT_GPU_RH, 0, 0.0, 2.5326}};
    hxt_walk w = {.grids = grids,
                  .ngrids = ngrids,
                  .box_of = box_for,
                  .specs = specs,
                  .nspecs = 2,
                  .seed = seed,
                  .keep = 1};
    return w;
}

/* The reverse of `force` on t against the cpu transport's home forces
 * fref, to 1e-6 relative (of max(|f|, 1)); on a full-shell plan, the
 * reverse refused (nothing goes back). Returns 1 when all went well. */
static int check_reverse(hx_transport *t, const hx_plan *plan, const double *force,
                         const float *fref, double *got, const char *who, const char *label,
                         int step)
{
    int nhome = hx_plan_nhome(plan), ntotal = hx_plan_ntotal(plan);
    if (hx_plan_full_shell(plan))
        return HXT_FAILS(hx_transport_reverse(t), HX_ERR_STATE, "newton off");
    int ok = HXT_OK(hx_transport_write(t, HX_FORCES, 0, ntotal, force));
    ok &= HXT_OK(hx_transport_reverse(t));
    ok &= HXT_OK(hx_transport_sync(t));
    if (ok && HXT_OK(hx_transport_read(t, HX_FORCES, 0, nhome, got))) {
        int bad = 0;
        for (int i = 0; i < nhome * 3; i++) {
            double want = fref[i];
            double tol = 1e-6 * fmax(fabs(want), 1.0);
            if (!(fabs(got[i] - want) <= tol)) {
                if (bad < 3)
                    fprintf(stderr, "[rank %d] %s %s step %d: force %d.%d is %.9g, cpu has %.9g\n",
                            hxt_rank, who, label, step, i / 3, i % 3, got[i], want);
                bad++;
            }
        }
        HXT_CHECK(bad == 0, "%s %s step %d: %d of %d home forces differ", who, label, step, bad,
                  nhome * 3);
    }
    return ok;
}

void hxt_gpu_check_plan(hx_comm *comm, const hxt_case *c, void *ctx)
{
    const hx_plan *plan = c->plan;
    const int full = hx_plan_full_shell(plan);
    const uint64_t seed = c->seed;
    char label[96];
    snprintf(label, sizeof label, "grid %s%s%s, %d atoms", c->gs,
             c->d.triclinic ? " triclinic" : "", full ? " full shell" : "", c->spec.natoms);
    if (hx_comm_rank(comm) == 0)
        printf("%s: %d pulses, max ntotal %d\n", label, hx_plan_npulses(plan),
               hx_plan_max_ntotal(plan));
    hxt_gpu_entry *gt = ((hxt_gpu_set *) ctx)->e;
    int ngt = ((hxt_gpu_set *) ctx)->n;
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
            continue;
        }
        void *x = hx_transport_coords(gt[k].t);
        if (gt[k].last_x && x != gt[k].last_x)
            gt[k].moved++;
        gt[k].last_x = x;
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

    for (int step = 0; step < HXT_GPU_STEPS; step++) {
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
        if (!full)
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
            ok &= check_reverse(t, plan, force, fref, got, gt[k].label, label, step);
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
