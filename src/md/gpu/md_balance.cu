/*
 * md_balance.cu - fix balance's count of the home atoms on the GPU
 * (balance.c): each atom's fractional coordinates, as LAMMPS's
 * Domain::x2lamda computes them (core/balance_math.h, which libhalox's
 * hx_balance_count runs on the host), wrapped into [0, 1), binned along
 * each dimension by the cuts and counted per bin, with its thin extern "C" launcher
 * (md_gpu.h).
 */
#include "md_dev.cuh"

#include "core/balance_math.h"

#include <stdint.h>

/* Bins of a block's histogram kept in shared memory; more go straight to
 * global memory. */
#define HXG_BAL_SHARED 4096

/* The bin of atom i. The grid is read from global memory (a copy of the
 * launcher's), not from the kernel's parameters, which are too large to
 * be indexed by a dimension known only at run time without a local copy. */
__device__ __forceinline__ int hxg_bal_cell(const hxg_bal_grid &g, const float *x4, int i)
{
    const float4 p = reinterpret_cast<const float4 *>(x4)[i];
    const double d[3] = {(double) p.x - g.box_lo[0], (double) p.y - g.box_lo[1],
                         (double) p.z - g.box_lo[2]};
    int cell = 0;
    for (int k = 2; k >= 0; k--) {
        double l = hxi_bal_lamda(g.box_len, g.tilt, g.tri, k, d);
        l -= floor(l); /* Domain::pbc: one box length at a time, here at once */
        if (!(l < 1.0) || !(l >= 0.0))
            l = 0.0; /* rounding up to the upper face, as Domain::pbc's max(x, lo) */
        cell = cell * g.grid[k] + hxi_bal_binary(l, g.grid[k], g.cut[k]);
    }
    return cell;
}

__global__ void hxg_k_bal_count(const float *__restrict__ x4, int n, const hxg_bal_grid *g,
                                int32_t *counts, int ncell)
{
    extern __shared__ int32_t hist[];
    const bool shared = ncell <= HXG_BAL_SHARED;
    if (shared)
        for (int c = threadIdx.x; c < ncell; c += blockDim.x)
            hist[c] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const int c = hxg_bal_cell(*g, x4, i);
        atomicAdd(shared ? &hist[c] : &counts[c], 1);
    }
    __syncthreads();
    if (shared)
        for (int c = threadIdx.x; c < ncell; c += blockDim.x)
            if (hist[c])
                atomicAdd(&counts[c], hist[c]);
}

/* The grid goes to the device behind counts (one allocation the caller
 * sized: counts, padded to 8 bytes, then the grid). */
extern "C" int hxg_bal_count(void *stream, const float *x4, int n, const hxg_bal_grid *g,
                             int32_t *counts)
{
    cudaStream_t s = (cudaStream_t) stream;
    const int ncell = g->grid[0] * g->grid[1] * g->grid[2];
    hxg_bal_grid *dg = (hxg_bal_grid *) (counts + ((ncell + 1) & ~1));
    cudaError_t e = cudaMemsetAsync(counts, 0, sizeof(int32_t) * (size_t) ncell, s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(dg, g, sizeof *g, cudaMemcpyHostToDevice, s);
    if (e != cudaSuccess || n <= 0)
        return (int) e;
    const int threads = 256;
    int blocks = (n + threads - 1) / threads;
    blocks = blocks > 1024 ? 1024 : blocks;
    const size_t shm = ncell <= HXG_BAL_SHARED ? sizeof(int32_t) * (size_t) ncell : 0;
    hxg_k_bal_count<<<blocks, threads, shm, s>>>(x4, n, dg, counts, ncell);
    return (int) cudaGetLastError();
}
