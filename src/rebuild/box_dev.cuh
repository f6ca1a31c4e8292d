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
    double box_lo, box_len, lo, hi, below_lo, above_hi;
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
    r.below_lo = HXR_PICK(below_lo);
    r.above_hi = HXR_PICK(above_hi);
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

/* Whether x lies in domain c (of g) with faces lo and hi, the first
 * domain reaching down and the last up without end: hx_decomp_cell
 * clamps a height beyond the box into them. */
__device__ __forceinline__ bool hxr_in(double x, double lo, double hi, int c, int g)
{
    return (c == 0 || x >= lo) && (c == g - 1 || x < hi);
}

/* Class of a coordinate along one dimension: 0 in the domain, 1 in the
 * lower neighbour's (to it), 2 in the upper neighbour's, -1 further (only
 * where the dimension has four domains or more). The neighbours' domains
 * come from their outer faces, the bounds that decide ownership
 * (hx_decomp_bound: equal domains or set cuts): the lower neighbour of
 * the first domain is the last one, up to the box's upper face, and the
 * upper neighbour of the last is the first, from the box's lower face. */
__device__ __forceinline__ int hxr_class(double x, const hxr_dim1 &d)
{
    const int g = d.grid, cb = (d.coord + g - 1) % g, ca = (d.coord + 1) % g;
    if (hxr_in(x, d.lo, d.hi, d.coord, g))
        return 0;
    if (g == 2)
        return x < d.lo ? 1 : 2;
    const double below_hi = d.coord > 0 ? d.lo : d.box_lo + d.box_len;
    const double above_lo = d.coord < g - 1 ? d.hi : d.box_lo;
    if (hxr_in(x, d.below_lo, below_hi, cb, g))
        return 1;
    return hxr_in(x, above_lo, d.above_hi, ca, g) ? 2 : -1;
}

#endif /* HALOX_REBUILD_BOX_DEV_CUH */
