/*
 * md_cells.cuh - what the GPU engine's cell and list-build kernel files
 * (md_cells.cu, md_lists.cu) share: the cell grid's helpers, the rows of
 * cells an atom's candidates come in, the gate of the single-rank rebuild,
 * and the host launchers one file lends the other. Device code, included
 * by .cu files only.
 */
#ifndef HALOX_MD_CELLS_CUH
#define HALOX_MD_CELLS_CUH

#include "md_dev.cuh"

/* ------------------------------------------------------------ cells */

/* Cell of a coordinate along one dimension, clamped into the grid. At a
 * list build every coordinate lies inside the grid's extent (periodic
 * dimensions are wrapped into the box first), so clamping only catches
 * rounding at the edges and keeps each atom in the cell its coordinate
 * says, which the image shifts of the build rely on. */
__device__ __forceinline__ int hxg_cell_coord(float x, float lo, float inv, int n)
{
    return min(max((int) floorf((x - lo) * inv), 0), n - 1);
}

/* Height of p along dimension k: dot(normal[k], p) in a triclinic box
 * (the coordinate cells are made along), p's coordinate k otherwise. */
__device__ __forceinline__ float hxg_height(float3 p, const hxg_geom &g, int k)
{
    if (!g.tri)
        return k == 0 ? p.x : (k == 1 ? p.y : p.z);
    const float *n = g.normal[k];
    return n[0] * p.x + n[1] * p.y + n[2] * p.z;
}

__device__ __forceinline__ float3 hxg_heights(float3 p, const hxg_geom &g)
{
    return g.tri ? make_float3(hxg_height(p, g, 0), hxg_height(p, g, 1), hxg_height(p, g, 2)) : p;
}

/* Cell of the point whose heights (hxg_heights) are p. */
__device__ __forceinline__ int hxg_cell_of(float3 p, const hxg_cellgrid &cg_)
{
    const int cx = hxg_cell_coord(p.x, cg_.lo[0], cg_.inv_w[0], cg_.n[0]);
    const int cy = hxg_cell_coord(p.y, cg_.lo[1], cg_.inv_w[1], cg_.n[1]);
    const int cz = hxg_cell_coord(p.z, cg_.lo[2], cg_.inv_w[2], cg_.n[2]);
    return (cz * cg_.n[1] + cy) * cg_.n[0] + cx;
}

/* Cells are at least rh / 2 wide along y and z (the engine's set-up), so
 * an atom's neighbours within rh lie at most HXG_REACH cells away along
 * those; along x they may be narrower (cg_.reach_x cells within rh). */
#define HXG_REACH 2

/* The candidates of one atom come in rows: for each (oy, oz) in
 * [-HXG_REACH, HXG_REACH]^2 (oz outer), the cells along x of that row that
 * can hold atoms within rh of it. With atoms ordered by cell, a run of
 * consecutive cells along x is one range of the cell list. A row's range
 * is cut to the atom's reach (rows out of reach are empty) and split in two
 * segments where it wraps around a periodic boundary; each segment carries
 * the image shift of its cells (a multiple of the box length; in a
 * triclinic box of the edge crossed, whose tilts move the other
 * coordinates too), so that the distance test needs no minimum image.
 * Ranges are in heights (hxg_height), shifts in coordinates. Where a periodic dimension has few
 * cells, one cell can appear in two segments or rows with different
 * shifts; since the box is longer than 2 rh, at most one of those images
 * lies within rh, so no pair is listed twice. */
struct hxg_seg {
    int kbeg, kend; /* candidate range in the cell list */
    float3 xs;      /* the atom's position minus the segment's image shift */
};

/* The period of unwrapped cell q along a periodic dimension of n cells:
 * wherever the build asks, q lies at most the reach (HXG_REACH, reach_x)
 * cells beyond the grid, and a periodic dimension has more cells than
 * that (the box is longer than 2 rh, which the reach's cells cover), so q
 * is in [-n, 2n) and no division is needed. */
__device__ __forceinline__ int hxg_period_of(int q, int n)
{
    return q < 0 ? -1 : (q >= n ? 1 : 0);
}

/* Range along one dimension: cell q (unwrapped, in the atom's frame),
 * wrapped into qw, which lies m periods away (-1, 0, 1: the image shift
 * is m edges); d is the distance from the height xv to the cell's slab
 * (w: the cells' width, 1 / inv_w). Whether
 * q is valid (inside the grid, or along a periodic dimension) is the
 * result; qw, sh and d are set either way (finite, meaningless when not
 * valid), so that the callers select instead of branching: a branch here
 * cost every row copies of its segments on each way out. */
__device__ __forceinline__ bool hxg_row_dim(float xv, int q, float w, const hxg_cellgrid &cg_,
                                            int k, int *qw, float *mf, float *d)
{
    const int n = cg_.n[k];
    const int m = cg_.periodic[k] ? hxg_period_of(q, n) : 0;
    *qw = q - m * n;
    *mf = (float) m;
    const float lo = cg_.lo[k] + (float) q * w;
    *d = fmaxf(0.0f, fmaxf(lo - xv, xv - (lo + w)));
    return cg_.periodic[k] || (q >= 0 && q < n);
}

/* 1 / sqrt(x) for the row's reach: the approximate square root the
 * padding allows, without the fix-up for subnormal x that rsqrtf carries
 * (a subnormal x gives an infinite reach, cut to the atom's cells: more
 * candidates, never fewer). */
__device__ __forceinline__ float hxg_rsqrt(float x)
{
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

/* What the rows of one offset oz along z share (the one-thread walks have
 * hxg_row_z compute it once for the 2 HXG_REACH + 1 rows of that offset; in
 * the lane groups each lane computes it for the row it sets up): the cell
 * along z, wrapped
 * (-1: out of the grid, or the atom does not walk), its periods (the
 * image shift is mz edges c) and the distance to its slab. */
struct hxg_zrow {
    int qz;
    float mz, dz;
};

/* Segments of row (oy, zr) of an atom at xi in cell c (w: the cells'
 * widths). rhp: the list cutoff padded against rounding (the ranges may
 * include a little more, never less; the approximate square root errs by
 * far less than the padding). Empty segments have kbeg == kend. Computed
 * without branches, a row out of the grid or out of reach reading cell 0's
 * starts and emptied at the end: nearly every row is walked, and each way
 * out of a branching form cost copies of both segments (Nsight Compute,
 * 2,048,000 atoms: 176 instructions a row, a fifth of them copies). */
__device__ __forceinline__ void hxg_row(const hxg_zrow &zr, float3 xi, const int c[3], int oy,
                                        float3 w, const hxg_cellgrid &cg_, const hxg_geom &g,
                                        float rhp, const int32_t *__restrict__ start,
                                        hxg_seg seg[2])
{
    int qy;
    float my, dy;
    const bool yok = hxg_row_dim(hxg_height(xi, g, 1), c[1] + oy, w.y, cg_, 1, &qy, &my, &dy);
    /* Along heights in a triclinic box the distances to the slabs of y and
     * z do not add as squares (the normals are not orthogonal): each only
     * bounds the row, and the reach along x is the whole rh. */
    const float rx2 = g.tri ? (fmaxf(dy, zr.dz) < rhp ? rhp * rhp : 0.0f)
                            : rhp * rhp - dy * dy - zr.dz * zr.dz;
    const bool reach = zr.qz >= 0 && yok && rx2 > 0.0f;
    const float rx = reach ? rx2 * hxg_rsqrt(rx2) : 0.0f;
    const int n = cg_.n[0];
    const float hx = hxg_height(xi, g, 0);
    int ax = (int) floorf((hx - rx - cg_.lo[0]) * cg_.inv_w[0]);
    int bx = (int) floorf((hx + rx - cg_.lo[0]) * cg_.inv_w[0]);
    ax = max(ax, c[0] - cg_.reach_x);
    bx = min(min(bx, c[0] + cg_.reach_x), ax + n); /* at most two periods */
    if (!cg_.periodic[0]) {
        ax = max(ax, 0);
        bx = min(bx, n - 1);
    }
    const bool on = reach && ax <= bx;
    if (!on)
        ax = bx = 0;
    /* Unwrapped cells [ax, bx]: at most n + 1 of them, so at most two
     * periods. They still cover [x - rh, x + rh], which is shorter than
     * the box (rh < half the box length, checked at set-up). */
    const int m0 = cg_.periodic[0] ? hxg_period_of(ax, n) : 0;
    const int m1 = cg_.periodic[0] ? hxg_period_of(bx, n) : 0;
    const int a0 = ax - m0 * n, b0 = m0 == m1 ? bx - m0 * n : n - 1;
    const unsigned base = on ? (unsigned) ((zr.qz * cg_.n[1] + qy) * n) : 0u;
    const int32_t *row = start + base;
    const int k0 = __ldg(row + (unsigned) a0), k1 = __ldg(row + (unsigned) (b0 + 1));
    seg[0].kbeg = on ? k0 : 0;
    seg[0].kend = on ? k1 : 0;
    /* The atom minus the image shift: my edges b and mz edges c (the tilts
     * are 0 in an orthorhombic box, exact zeros added), then m0 or m1
     * edges a. */
    const float zs = xi.z - zr.mz * g.per_len[2];
    const float ys = xi.y - my * g.per_len[1] - zr.mz * g.per_tilt[2];
    const float xt = xi.x - my * g.per_tilt[0] - zr.mz * g.per_tilt[1];
    seg[0].xs = make_float3(xt - (float) m0 * g.per_len[0], ys, zs);
    seg[1].xs = make_float3(xt - (float) m1 * g.per_len[0], ys, zs);
    seg[1].kbeg = seg[1].kend = 0;
    if (m1 != m0) {
        seg[1].kbeg = __ldg(row);
        seg[1].kend = __ldg(row + (unsigned) (bx - m1 * n + 1));
    }
}

/* The part of the rows of offset oz shared (hxg_zrow) of an atom at xi in
 * cell c; qz -1 where it does not walk (on false). The rows are walked oz
 * outer, oy inner (each in [-HXG_REACH, HXG_REACH]), and every lane of a
 * warp walks all of them together, empty or not, so that a walk may hold
 * warp-wide operations between rows. Each walk writes the two loops out:
 * one helper taking the walk's body as a lambda made the home walk's
 * build slower (docs/results/build-2026-12-02.txt, call 3). */
__device__ __forceinline__ hxg_zrow hxg_row_z(bool on, float3 xi, const int c[3], int oz, float3 w,
                                              const hxg_cellgrid &cg_, const hxg_geom &g)
{
    /* A cell out of the grid, or an atom that does not walk: qz -1. */
    hxg_zrow zr;
    const bool ok =
        hxg_row_dim(hxg_height(xi, g, 2), c[2] + oz, w.z, cg_, 2, &zr.qz, &zr.mz, &zr.dz);
    if (!(on && ok))
        zr.qz = -1;
    return zr;
}

/* The cells' widths, as the rows need them. */
__device__ __forceinline__ float3 hxg_cell_w(const hxg_cellgrid &cg_)
{
    return make_float3(1.0f / cg_.inv_w[0], 1.0f / cg_.inv_w[1], 1.0f / cg_.inv_w[2]);
}

/* rh padded so that rounding in the row ranges can only add candidates. */
__device__ __forceinline__ float hxg_rh_padded(float rh2)
{
    return sqrtf(rh2) * (1.0f + 1e-5f) + 1e-6f;
}

__device__ __forceinline__ unsigned hxg_zone_mask(const uint8_t *zones, int i)
{
    const uchar4 z = reinterpret_cast<const uchar4 *>(zones)[i];
    return (z.x != 0) | ((z.y != 0) << 1) | ((z.z != 0) << 2);
}

/* Whether a list-build kernel works in this launch. Ungated (on == 0) for
 * the host-driven builds. Gated for the single-rank rebuild, which decides
 * on the device as LAMMPS's Neighbor::decide: step % every == 0, step -
 * last_build >= delay and, with check, moved_step == step. Every kernel of
 * one rebuild reads the same values (earlier kernels on the stream wrote
 * them; only hxg_k_finish changes last_build, and it runs last), so all of
 * them decide alike and either all work or none does. */
struct hxg_gate {
    hxg_flags *flags;
    long long step; /* < 0: flags->cur */
    int every, delay, check, on;
};

__device__ __forceinline__ bool hxg_open(const hxg_gate &g)
{
    if (!g.on)
        return true;
    const hxg_flags *fl = g.flags;
    if (fl->halt)
        return false; /* an earlier build overflowed: the host takes over */
    const long long step = g.step >= 0 ? g.step : fl->cur;
    return step % g.every == 0 && step - fl->last_build >= g.delay &&
           (!g.check || fl->moved_step == step);
}

/* Cell starts from counts (one launch, see hxg_k_scan). */
cudaError_t hxg_scan_cells(cudaStream_t s, hxg_gate gate, const int32_t *cnt, int32_t *start,
                           int ncell, int32_t *scan_tmp);

/* Cell lists over c.grid of the n atoms at x (stride xs floats: 3 or 4),
 * ungated: counts (c.cnt), starts (c.start), each atom's cell (c.cellof),
 * each cell's atoms sorted by index (c.atoms), and their positions in cell
 * order with index + base in w (c.xsort, see hxg_k_gather). c.cnt is
 * zeroed here and left at zero. */
cudaError_t hxg_cell_lists(cudaStream_t s, hxg_flags *flags, int n, const float *x, int xs,
                           int base, hxg_geom g, const hxg_cells_view &c);

/* Cell sort of the a.nhome home atoms (x4, v4, id through the scratch
 * arrays s*, c.atoms the permutation; xold4 set), then the cell starts of
 * the sorted atoms (c.start). adopt: the sorted atoms are copied back into
 * x4, v4, id; else they stay in the scratch arrays, which the caller takes
 * as its own. wrap: positions are wrapped into the box first (the
 * single-rank rebuild; migration wraps the multi-rank ones). c.cnt must be
 * zero; it is left at zero. dn (device, may be NULL): the kernels read the
 * atom count there when they run, a.nhome then only bounds it (the grids'
 * size). */
cudaError_t hxg_launch_sort(cudaStream_t s, hxg_gate gate, bool wrap, bool adopt, const int32_t *dn,
                            const hxg_atoms_view &a, const hxg_cells_view &c);

#endif /* HALOX_MD_CELLS_CUH */
