/*
 * md_dev.cuh - what the GPU engine's kernel files (md_kernels.cu, md_small.cu,
 * md_cells.cu, md_lists.cu) share: the warp mask, position loads and grid
 * sizes.
 * Device code, included by .cu files only.
 */
#ifndef HALOX_MD_DEV_CUH
#define HALOX_MD_DEV_CUH

#include "md_gpu.h"

#include <cuda_runtime.h>

#define HXG_FULL 0xffffffffu

/* Position i of an array of stride XS (3 or 4 floats). NC: through the
 * read-only cache, allowed only where nothing in the kernel writes x. */
template <int XS, bool NC = true>
__device__ __forceinline__ float3 hxg_load(const float *__restrict__ x, int i)
{
    if (XS == 4) {
        const float4 *p = reinterpret_cast<const float4 *>(x) + i;
        const float4 q = NC ? __ldg(p) : *p;
        return make_float3(q.x, q.y, q.z);
    }
    const float *p = x + 3 * (size_t) i;
    if (NC)
        return make_float3(__ldg(p), __ldg(p + 1), __ldg(p + 2));
    return make_float3(p[0], p[1], p[2]);
}

/* Position i for a kernel that may start before the positions are final
 * (CG: launched with PDL, reading after hxi_dev_grid_wait): through the L2
 * (ld.global.cg), coherent with writes made while the kernel ran, where
 * the read-only path of a const __restrict__ array is not. */
template <int XS, bool CG>
__device__ __forceinline__ float3 hxg_xload(const float *__restrict__ x, int i)
{
    if (!CG)
        return hxg_load<XS>(x, i);
    if (XS == 4) {
        const float4 q = __ldcg(reinterpret_cast<const float4 *>(x) + i);
        return make_float3(q.x, q.y, q.z);
    }
    const float *p = x + 3 * (size_t) i;
    return make_float3(__ldcg(p), __ldcg(p + 1), __ldcg(p + 2));
}

/* a[t] of a kernel parameter's per-type table (t < HXG_MAX_TYPES) by a
 * chain of selects: an index into a parameter that is not a constant
 * would copy the whole table into each thread's local memory first. */
template <typename T> __device__ __forceinline__ T hxg_by_type(const T (&a)[HXG_MAX_TYPES], int t)
{
    T v = a[0];
#pragma unroll
    for (int k = 1; k < HXG_MAX_TYPES; k++)
        v = t == k ? a[k] : v;
    return v;
}

/* Blocks of `block` threads for n items, and one block for none: a rank
 * may own no atoms (its halo none either), and a launch of no blocks
 * fails. Every kernel launched on it guards its index (i < n), so that
 * block does nothing, where its launcher does not skip the launch. */
static inline int hxg_blocks(long long n, int block)
{
    return n > 0 ? (int) ((n + block - 1) / block) : 1;
}

#endif /* HALOX_MD_DEV_CUH */
