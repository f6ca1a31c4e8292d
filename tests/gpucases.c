#include "gpucases.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

/* 3 or more domains along a dimension: width 2.1 < rh gives 2 pulses (and
 * rh < half the box); else one pulse in a box of 12. */
static void box_for(const int grid[3], double len[3])
{
    for (int d = 0; d < 3; d++)
        len[d] = grid[d] >= 3 ? 2.1 * grid[d] : 12.0;
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

void hxt_gpu_cases(hx_comm *comm, const int grids[][3], int ngrids, uint64_t seed,
                   hxt_gpu_case_fn fn, void *ctx, hx_plan **last)
{
    int nranks = hx_comm_size(comm), rank = hx_comm_rank(comm);
    hx_plan *previous = NULL;
    for (int g = 0; g < ngrids; g++) {
        double lo[3] = {0.0, 0.0, 0.0}, len[3];
        hx_decomp d;
        box_for(grids[g], len);
        if (!hxt_agree(comm,
                       HXT_OK(hx_decomp_init(&d, lo, len, HXT_GPU_RH, grids[g], nranks, rank))))
            continue;
        double vol = len[0] * len[1] * len[2];
        for (int sys = 0; sys < 2; sys++) {
            int n = (int) (0.8442 * vol * (sys == 0 ? 1.0 : 3.0));
            uint64_t cs = seed + 17u * (uint64_t) g + (uint64_t) sys;
            hxt_sys s;
            hxt_local l;
            hx_plan *plan = NULL;
            char gs[32], label[96];
            hxt_sys_random(&s, n, lo, len, cs);
            hxt_local_take(&l, &s, &d);
            snprintf(label, sizeof label, "grid %s, %d atoms", hxt_grid_str(grids[g], gs), n);
            if (hxt_agree(comm, HXT_OK(hx_plan_create(&plan, comm, &d, l.n, l.x)))) {
                if (rank == 0)
                    printf("%s: %d pulses, max ntotal %d\n", label, hx_plan_npulses(plan),
                           hx_plan_max_ntotal(plan));
                fn(comm, plan, label, cs * 31u + 7u, ctx);
            }
            if (previous)
                hx_plan_destroy(previous);
            previous = plan;
            hxt_local_free(&l);
            hxt_sys_free(&s);
        }
    }
    *last = previous;
}
