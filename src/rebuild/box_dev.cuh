/*
 * box_dev.cuh - the box and the domain as the device migration sees them
 * (kernels.cu): the wrap into the box (orthorhombic: per coordinate;
 * triclinic: by whole edges, along heights), one dimension of an hxr_dom
 * as scalars, the height of a point, and the class of an atom along a
 * dimension (stays, goes down, goes up). The rules are the host's
 * (core/decomp.c, core/migrate.c) on float positions.
 */
#ifndef HALOX_REBUILD_BOX_DEV_CUH
#define HALOX_REBUILD_BOX_DEV_CUH

#include "rebuild/rebuild.h"

#include <cuda_runtime.h>

/* Wraps x into [lo, lo + len) in float. Rounding can leave the result on
 * the upper edge or just below lo; both are moved inside, so that every
 * wrapped coordinate passes the box checks of the plan. */
__device__ __forceinline__ float hxr_wrap(float x, double lo, double len)
{
    const float flo = (float) lo, flen = (float) len;
    float t = x - flen * floorf((x - flo) / flen);
    if ((double) t >= lo + len)
        t -= flen;
    if ((double) t < lo) {
        t = flo;
        if ((double) t < lo)
            t = nextafterf(t, INFINITY);
    }
    return t;
}

/* One dimension of an hxr_dom, as scalars. The kernels pick a dimension
 * known only when they run (d.dim); indexing the parameter's arrays with
 * it made every thread copy the whole structure to local memory first
 * (128 bytes a thread), which slowed the class kernel by half or more
 * (docs/performance.md, "The list build's rows and flushes, the
 * migration's class kernel"). */
struct hxr_dim1 {
    double box_lo, box_len, lo, hi;
    double n0, n1, n2; /* triclinic: the face normal */
    int grid, coord;
};

__device__ __forceinline__ hxr_dim1 hxr_dim_of(const hxr_dom &d, int k)
{
    hxr_dim1 r;
#define HXR_PICK(f) (k == 0 ? d.f[0] : (k == 1 ? d.f[1] : d.f[2]))
    r.box_lo = HXR_PICK(box_lo);
    r.box_len = HXR_PICK(box_len);
    r.lo = HXR_PICK(lo);
    r.hi = HXR_PICK(hi);
    r.grid = HXR_PICK(grid);
    r.coord = HXR_PICK(coord);
#undef HXR_PICK
#define HXR_PICK_N(c) (k == 0 ? d.normal[0][c] : (k == 1 ? d.normal[1][c] : d.normal[2][c]))
    r.n0 = HXR_PICK_N(0);
    r.n1 = HXR_PICK_N(1);
    r.n2 = HXR_PICK_N(2);
#undef HXR_PICK_N
    return r;
}

/* Height of the point v along the normal (n0, n1, n2): in double, each
 * product and sum rounded on its own (no fused multiply-add), so that it
 * is the host's hx_decomp_height of the same coordinates, bitwise. */
__device__ __forceinline__ double hxr_height3(double n0, double n1, double n2, const float *v)
{
    return __dadd_rn(__dadd_rn(__dmul_rn(n0, (double) v[0]), __dmul_rn(n1, (double) v[1])),
                     __dmul_rn(n2, (double) v[2]));
}

/* Triclinic wrap into the box, in float: along z, y, x, each by whole
 * edges until the height is inside (a wrap along d moves no other
 * height); where rounding leaves it just outside, a sliver of the edge
 * moves it in (the host's hxi_wrap_tilted does the same in double). An
 * atom still outside is caught by the plan's home check. Returns whether
 * v moved. */
__device__ __forceinline__ bool hxr_wrap_tilted(const hxr_dom &d, float v[3])
{
    bool moved = false;
#pragma unroll
    for (int k = 2; k >= 0; k--) {
        const hxr_dim1 dk = hxr_dim_of(d, k);
        const double lo = dk.box_lo, hi = dk.box_lo + dk.box_len;
        double t = hxr_height3(dk.n0, dk.n1, dk.n2, v);
        for (int tries = 0; tries < 8 && (t < lo || t >= hi); tries++) {
            double m = floor((t - lo) / dk.box_len);
            if (tries >= 4)
                m = t < lo ? (t - lo) / dk.box_len - 0x1p-20 : (t - hi) / dk.box_len + 0x1p-20;
            else if (m == 0.0)
                m = t < lo ? -1.0 : 1.0;
#pragma unroll
            for (int c = 0; c < 3; c++)
                v[c] = (float) ((double) v[c] - m * d.edge[k][c]);
            t = hxr_height3(dk.n0, dk.n1, dk.n2, v);
            moved = true;
        }
    }
    return moved;
}

/* Domain index of a coordinate inside the box along one dimension, as
 * hx_decomp_cell: the estimate floor((x - lo) n / L), corrected against
 * the bounds lo + L c / n that decide ownership. */
__device__ __forceinline__ int hxr_owner(double x, const hxr_dim1 &d)
{
    const int n = d.grid;
    const double lo = d.box_lo, len = d.box_len;
    int c = (int) floor((x - lo) * n / len);
    c = c < 0 ? 0 : (c >= n ? n - 1 : c);
    if (c > 0 && x < lo + len * c / n)
        c--;
    else if (c + 1 < n && x >= lo + len * (c + 1) / n)
        c++;
    return c;
}

/* Class of a coordinate along one dimension: 0 inside the domain, 1 below
 * (to the lower neighbour), 2 at or above (to the upper one), -1 more than
 * one hop away (only where the dimension has four domains or more). */
__device__ __forceinline__ int hxr_class(double x, const hxr_dim1 &d)
{
    if (x >= d.lo && x < d.hi)
        return 0;
    const int g = d.grid, delta = (hxr_owner(x, d) - d.coord + g) % g;
    if (g == 2)
        return x < d.lo ? 1 : 2;
    if (delta == g - 1)
        return 1;
    if (delta == 1)
        return 2;
    return delta == 0 ? 0 : -1;
}

#endif /* HALOX_REBUILD_BOX_DEV_CUH */
