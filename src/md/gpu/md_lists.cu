/*
 * md_lists.cu - the GPU engine's cell and neighbour-list builds, the cell
 * sort of home atoms, and the single-rank rebuild done entirely on the
 * device (kernels that decide by themselves whether this step rebuilds).
 * Thin extern "C" launchers; the cell grid is set up on the host
 * (setup.c). docs/md-gpu.md says how the build walks rows of cells.
 */
#include "md_dev.cuh"

#include <climits>
#include <cstdlib>

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

__device__ __forceinline__ int hxg_cell_of(float3 p, const hxg_cellgrid &cg_)
{
    const int cx = hxg_cell_coord(p.x, cg_.lo[0], cg_.inv_w[0], cg_.n[0]);
    const int cy = hxg_cell_coord(p.y, cg_.lo[1], cg_.inv_w[1], cg_.n[1]);
    const int cz = hxg_cell_coord(p.z, cg_.lo[2], cg_.inv_w[2], cg_.n[2]);
    return (cz * cg_.n[1] + cy) * cg_.n[0] + cx;
}

/* Cells are at least rh / 2 wide (the engine's set-up), so an atom's
 * neighbours within rh lie at most HXG_REACH cells away along each
 * dimension. */
#define HXG_REACH 2
#define HXG_ROWS  ((2 * HXG_REACH + 1) * (2 * HXG_REACH + 1))

/* The candidates of one atom come in rows: for each (oy, oz) in
 * [-HXG_REACH, HXG_REACH]^2 (oz outer), the cells along x of that row that
 * can hold atoms within rh of it. With atoms ordered by cell, a run of
 * consecutive cells along x is one range of the cell list. A row's range
 * is cut to the atom's reach (rows out of reach are empty) and split in two
 * segments where it wraps around a periodic boundary; each segment carries
 * the image shift of its cells (a multiple of the box length), so that the
 * distance test needs no minimum image. Where a periodic dimension has few
 * cells, one cell can appear in two segments or rows with different
 * shifts; since the box is longer than 2 rh, at most one of those images
 * lies within rh, so no pair is listed twice. */
struct hxg_seg {
    int kbeg, kend; /* candidate range in the cell list */
    float3 xs;      /* the atom's position minus the segment's image shift */
};

/* The period of unwrapped cell q along a periodic dimension of n cells:
 * wherever the build asks, q lies at most HXG_REACH cells beyond the grid,
 * and a periodic dimension has at least 3 cells (the box is longer than
 * 2 rh, the cells a little over rh / 2 wide), so q is in [-n, 2n) and no
 * division is needed. */
__device__ __forceinline__ int hxg_period_of(int q, int n)
{
    return q < 0 ? -1 : (q >= n ? 1 : 0);
}

/* Range along one dimension: cell q (unwrapped, in the atom's frame) is
 * valid, wrapped into qw with image shift sh; d is the distance from the
 * coordinate to the cell's slab. */
__device__ __forceinline__ bool hxg_row_dim(float xv, int q, const hxg_cellgrid &cg_,
                                            const hxg_geom &g, int k, int *qw, float *sh, float *d)
{
    const int n = cg_.n[k];
    int m = 0;
    if (cg_.periodic[k]) {
        m = hxg_period_of(q, n);
    } else if (q < 0 || q >= n) {
        return false;
    }
    *qw = q - m * n;
    *sh = (float) m * g.per_len[k];
    const float w = 1.0f / cg_.inv_w[k];
    const float lo = cg_.lo[k] + (float) q * w;
    *d = fmaxf(0.0f, fmaxf(lo - xv, xv - (lo + w)));
    return true;
}

/* Segments of row r (0 .. HXG_ROWS-1) of an atom at xi in cell c. rhp: the
 * list cutoff padded against rounding (the ranges may include a little
 * more, never less). Empty segments have kbeg == kend. */
__device__ __forceinline__ void hxg_row(float3 xi, const int c[3], int r, const hxg_cellgrid &cg_,
                                        const hxg_geom &g, float rhp,
                                        const int32_t *__restrict__ start, hxg_seg seg[2])
{
    seg[0].kbeg = seg[0].kend = seg[1].kbeg = seg[1].kend = 0;
    seg[0].xs = seg[1].xs = xi;
    const int oy = r % (2 * HXG_REACH + 1) - HXG_REACH, oz = r / (2 * HXG_REACH + 1) - HXG_REACH;
    int qy, qz;
    float sy, sz, dy, dz;
    if (!hxg_row_dim(xi.y, c[1] + oy, cg_, g, 1, &qy, &sy, &dy) ||
        !hxg_row_dim(xi.z, c[2] + oz, cg_, g, 2, &qz, &sz, &dz))
        return;
    const float rx2 = rhp * rhp - dy * dy - dz * dz;
    if (rx2 <= 0.0f)
        return;
    const float rx = sqrtf(rx2);
    const int n = cg_.n[0];
    int ax = (int) floorf((xi.x - rx - cg_.lo[0]) * cg_.inv_w[0]);
    int bx = (int) floorf((xi.x + rx - cg_.lo[0]) * cg_.inv_w[0]);
    ax = max(ax, c[0] - HXG_REACH);
    bx = min(min(bx, c[0] + HXG_REACH), ax + n); /* at most two periods */
    if (!cg_.periodic[0]) {
        ax = max(ax, 0);
        bx = min(bx, n - 1);
    }
    if (ax > bx)
        return;
    const int base = (qz * cg_.n[1] + qy) * n;
    const float3 xr = make_float3(xi.x, xi.y - sy, xi.z - sz);
    /* Unwrapped cells [ax, bx]: at most n + 1 of them, so at most two
     * periods. They still cover [x - rh, x + rh], which is shorter than
     * the box (rh < half the box length, checked at set-up). */
    const int m0 = cg_.periodic[0] ? hxg_period_of(ax, n) : 0;
    const int m1 = cg_.periodic[0] ? hxg_period_of(bx, n) : 0;
    const int a0 = ax - m0 * n, b0 = m0 == m1 ? bx - m0 * n : n - 1;
    seg[0].kbeg = __ldg(start + base + a0);
    seg[0].kend = __ldg(start + base + b0 + 1);
    seg[0].xs = make_float3(xr.x - (float) m0 * g.per_len[0], xr.y, xr.z);
    if (m1 != m0) {
        seg[1].kbeg = __ldg(start + base);
        seg[1].kend = __ldg(start + base + bx - m1 * n + 1);
        seg[1].xs = make_float3(xr.x - (float) m1 * g.per_len[0], xr.y, xr.z);
    }
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

/* out[c] = in[0] + ... + in[c-1] for c < n and *total = the sum, by one
 * block: each thread scans a contiguous chunk, then the chunk sums are
 * scanned across the block. Every thread of the block calls it. */
__device__ void hxg_block_scan(const int32_t *in, int32_t *out, int n, int32_t *total)
{
    __shared__ int32_t wsum[32];
    const int nt = blockDim.x, tid = threadIdx.x;
    const int chunk = (n + nt - 1) / nt;
    const int beg = min(tid * chunk, n), end = min(beg + chunk, n);
    int32_t s = 0;
    for (int c = beg; c < end; c++)
        s += in[c];
    const int lane = tid & 31, warp = tid >> 5, nw = (nt + 31) >> 5;
    int32_t incl = s;
    for (int o = 1; o < 32; o <<= 1) {
        const int32_t y = __shfl_up_sync(HXG_FULL, incl, o);
        if (lane >= o)
            incl += y;
    }
    if (lane == 31)
        wsum[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        int32_t v = lane < nw ? wsum[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            const int32_t y = __shfl_up_sync(HXG_FULL, v, o);
            if (lane >= o)
                v += y;
        }
        wsum[lane] = v;
    }
    __syncthreads();
    int32_t base = (warp > 0 ? wsum[warp - 1] : 0) + incl - s;
    for (int c = beg; c < end; c++) {
        out[c] = base;
        base += in[c];
    }
    if (tid == nt - 1)
        *total = base;
    __syncthreads();
}

/* Sorts one cell's atoms a[0..m) by index, by one thread (insertion sort:
 * cells of at least rh / 2 hold a few atoms at liquid densities). The
 * order of the list (and so the float summation order) then does not
 * depend on the order of atomics. */
__device__ void hxg_sort_cell(int32_t *a, int m)
{
    for (int k = 1; k < m; k++) {
        const int32_t v = a[k];
        int q = k - 1;
        while (q >= 0 && a[q] > v) {
            a[q + 1] = a[q];
            q--;
        }
        a[q + 1] = v;
    }
}

/* The counts of atom i's lists (at most what they hold), the largest
 * count seen over a list's room, so that the host grows the lists and
 * builds again, and the largest count of any atom (one atomic per warp:
 * the lanes that call this together reduce first). */
__device__ __forceinline__ void hxg_list_counts(int i, bool ihome, int nloc, int nnl, hxg_list loc,
                                                hxg_list nl, hxg_flags *flags)
{
    if (ihome)
        loc.cnt[i] = min(nloc, loc.max);
    if (nl.cnt)
        nl.cnt[i] = min(nnl, nl.max);
    if (nloc > loc.max || (nl.cnt && nnl > nl.max))
        atomicMax(&flags->need, max(nloc, nnl));
    const unsigned m = __activemask();
    const int most = __reduce_max_sync(m, max(nloc, nnl));
    if ((threadIdx.x & 31) == __ffs(m) - 1)
        atomicMax(&flags->maxcnt, most);
}

/* What the list build needs of atom i: its position, its cell and, for a
 * halo atom, its zone mask (zeros for an inactive lane, i out of range). */
template <int XS>
__device__ __forceinline__ void hxg_build_atom(int i, bool active, bool ihome,
                                               const float *__restrict__ x,
                                               const uint8_t *__restrict__ zones,
                                               const hxg_cellgrid &cg_, float3 *xi, int ci[3],
                                               unsigned *mi)
{
    *xi = make_float3(0.0f, 0.0f, 0.0f);
    ci[0] = ci[1] = ci[2] = 0;
    *mi = 0;
    if (!active)
        return;
    *xi = hxg_load<XS>(x, i);
    ci[0] = hxg_cell_coord(xi->x, cg_.lo[0], cg_.inv_w[0], cg_.n[0]);
    ci[1] = hxg_cell_coord(xi->y, cg_.lo[1], cg_.inv_w[1], cg_.n[1]);
    ci[2] = hxg_cell_coord(xi->z, cg_.lo[2], cg_.inv_w[2], cg_.n[2]);
    *mi = (ihome || zones == nullptr) ? 0u : hxg_zone_mask(zones, i);
}

/* Lanes per atom in the list build. */
#define HXG_BG 8

/* Lists of atom i, by the HXG_BG consecutive lanes of its group (sub = the
 * lane's place in it). The lanes take a segment's candidates HXG_BG at a
 * time; a ballot gives each hit its slot, so the list keeps the
 * candidates' order (rows, segments, atoms by index within a cell) whatever
 * the lane count: the lists are those of hxg_build_thread. Every lane of
 * the warp calls this together (the loops are warp-uniform: every atom
 * walks all rows and both segments, empty or not); inactive lanes (i out
 * of range) only take part in the ballots.
 * Home atoms (i < nhome): home neighbours into loc, halo ones into nl.
 * Halo atoms: partners of pairs this rank owns (the zone rule: no dimension
 * in which both are off home) into nl. indexed: xsort is the cell list's
 * positions with each atom's index in w (hxg_k_gather); else atoms are stored
 * in cell order (cell c holds [start[c], start[c+1])). */
template <int XS>
__device__ void hxg_build_group(int i, bool active, int nhome, const float *__restrict__ x,
                                const float4 *__restrict__ xsort, const uint8_t *__restrict__ zones,
                                const hxg_cellgrid &cg_, const hxg_geom &g, float rh2,
                                const int32_t *start, bool indexed, hxg_list loc,
                                hxg_list nl, hxg_flags *flags)
{
    const int lane = threadIdx.x & 31, sub = lane & (HXG_BG - 1);
    const unsigned gmask = ((HXG_BG == 32) ? HXG_FULL : ((1u << HXG_BG) - 1u))
                           << (lane & ~(HXG_BG - 1));
    const unsigned below = (1u << lane) - 1u;
    const float rhp = hxg_rh_padded(rh2);
    const bool ihome = i < nhome;
    float3 xi;
    int ci[3];
    unsigned mi;
    hxg_build_atom<XS>(i, active, ihome, x, zones, cg_, &xi, ci, &mi);
    int nloc = 0, nnl = 0;
    for (int r = 0; r < HXG_ROWS; r++) {
        hxg_seg seg[2];
        if (active)
            hxg_row(xi, ci, r, cg_, g, rhp, start, seg);
        else
            seg[0].kbeg = seg[0].kend = seg[1].kbeg = seg[1].kend = 0;
        for (int sgi = 0; sgi < 2; sgi++) {
            const int kbeg = seg[sgi].kbeg, kend = seg[sgi].kend;
            const float3 xs = seg[sgi].xs;
            for (int k0 = kbeg; __any_sync(HXG_FULL, k0 < kend); k0 += HXG_BG) {
                const int k = k0 + sub;
                bool hloc = false, hnl = false;
                int j = -1;
                if (k < kend) {
                    const float4 xj = __ldg(xsort + k);
                    const float dx = xs.x - xj.x, dy = xs.y - xj.y, dz = xs.z - xj.z;
                    if (dx * dx + dy * dy + dz * dz < rh2)
                        j = indexed ? __float_as_int(xj.w) : k;
                    if (j >= 0 && j != i) {
                        const bool jhome = j < nhome;
                        if (ihome && jhome)
                            hloc = true;
                        else
                            hnl = ihome || jhome || (mi & hxg_zone_mask(zones, j)) == 0;
                    }
                }
                const unsigned bl = __ballot_sync(HXG_FULL, hloc) & gmask;
                const unsigned bn = __ballot_sync(HXG_FULL, hnl) & gmask;
                if (hloc) {
                    const int slot = nloc + __popc(bl & below);
                    if (slot < loc.max)
                        loc.nb[(size_t) slot * loc.stride + i] = j;
                }
                if (hnl) {
                    const int slot = nnl + __popc(bn & below);
                    if (slot < nl.max)
                        nl.nb[(size_t) slot * nl.stride + i] = j;
                }
                nloc += __popc(bl);
                nnl += __popc(bn);
            }
        }
    }
    if (active && sub == 0)
        hxg_list_counts(i, ihome, nloc, nnl, loc, nl, flags);
}

/* ------------------------------------------------------------ list build */

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

/* One thread per atom: its cell, and a count per cell (atomic). WRAP (the
 * single-rank rebuild, XS 4): x is first wrapped into the box; a
 * non-finite coordinate is reported (flags->bad) and parked at the box
 * origin, so that the build stays in bounds. */
template <int XS, bool WRAP>
__global__ void hxg_k_cell_count(hxg_gate gate, int n, float *__restrict__ x, hxg_cellgrid cg_,
                                 hxg_geom g, int32_t *__restrict__ cnt,
                                 int32_t *__restrict__ cellof)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || !hxg_open(gate))
        return;
    float3 p = hxg_load<XS, false>(x, i);
    if (WRAP) {
        if (!isfinite(p.x) || !isfinite(p.y) || !isfinite(p.z)) {
            gate.flags->bad = 1;
            p = make_float3(g.box_lo[0], g.box_lo[1], g.box_lo[2]);
        }
        p.x -= g.box_len[0] * floorf((p.x - g.box_lo[0]) / g.box_len[0]);
        p.y -= g.box_len[1] * floorf((p.y - g.box_lo[1]) / g.box_len[1]);
        p.z -= g.box_len[2] * floorf((p.z - g.box_lo[2]) / g.box_len[2]);
        float4 *q = reinterpret_cast<float4 *>(x) + i;
        *q = make_float4(p.x, p.y, p.z, q->w);
    }
    const int c = hxg_cell_of(p, cg_);
    cellof[i] = c;
    atomicAdd(&cnt[c], 1);
}

/* The cell scan in three launches: each block of 1024 threads scans a
 * chunk of HXG_SCAN_CHUNK cells and leaves the chunk's sum; one block scans
 * the sums (total into start[ncell]); each block adds its chunk's offset.
 * Blocks never wait for each other. */
#define HXG_SCAN_CHUNK 4096
__global__ void hxg_k_scan_part(hxg_gate gate, const int32_t *cnt, int32_t *start, int n,
                                int32_t *bsum)
{
    if (!hxg_open(gate))
        return;
    const int beg = blockIdx.x * HXG_SCAN_CHUNK, len = min(HXG_SCAN_CHUNK, n - beg);
    hxg_block_scan(cnt + beg, start + beg, len, bsum + blockIdx.x);
}

__global__ void hxg_k_scan_top(hxg_gate gate, const int32_t *bsum, int nb, int32_t *boff,
                               int32_t *total)
{
    if (!hxg_open(gate))
        return;
    hxg_block_scan(bsum, boff, nb, total);
}

__global__ void hxg_k_scan_add(hxg_gate gate, int32_t *start, int n, const int32_t *boff)
{
    if (blockIdx.x == 0 || !hxg_open(gate))
        return;
    const int beg = blockIdx.x * HXG_SCAN_CHUNK, len = min(HXG_SCAN_CHUNK, n - beg);
    const int32_t off = boff[blockIdx.x];
    for (int c = threadIdx.x; c < len; c += blockDim.x)
        start[beg + c] += off;
}

/* One thread per atom: a slot in its cell taken from the top by an atomic
 * decrement, which also leaves every count at zero for the next build. */
__global__ void hxg_k_cell_fill(hxg_gate gate, int n, const int32_t *__restrict__ cellof,
                                const int32_t *__restrict__ start, int32_t *cnt,
                                int32_t *__restrict__ cellatoms)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || !hxg_open(gate))
        return;
    const int c = cellof[i];
    cellatoms[start[c] + atomicSub(&cnt[c], 1) - 1] = i;
}

/* One thread per cell (see hxg_sort_cell). */
__global__ void hxg_k_cell_sort(hxg_gate gate, int ncell, const int32_t *__restrict__ start,
                                int32_t *__restrict__ cellatoms)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= ncell || !hxg_open(gate))
        return;
    hxg_sort_cell(cellatoms + start[c], start[c + 1] - start[c]);
}

/* Slots of the local list each lane of the one-thread build keeps in
 * shared memory before they go out (see hxg_build_thread), and the list
 * build's block size. */
#define HXG_RING        32
#define HXG_BUILD_BLOCK 128

/* Lists of atom i by one thread: the same candidates in the same order as
 * hxg_build_group, so the lists, and the forces summed over them, are the
 * same whichever kernel built them. Used where there are enough atoms to
 * fill the GPU with one thread each: no ballots, and the threads of a
 * warp, holding neighbouring atoms of a cell-sorted array, read mostly the
 * same candidates.
 * The local list (the bulk of the pairs) is column-major: slot s of atom i
 * at s * stride + i. Stored as found, each lane's store would touch a
 * sector of its own. Instead each lane keeps its latest HXG_RING slots in
 * `ring` (this warp's HXG_RING x 32 ints), and after every row the warp
 * stores the slots that every lane has filled, one coalesced line per slot.
 * A lane that gets HXG_RING slots ahead of the slowest one stores the rest
 * of its list directly (from slot `direct` on). Every lane of the warp
 * calls this together; inactive lanes (i out of range) only take part in
 * the warp's reductions. */
template <int XS>
__device__ void hxg_build_thread(int i, bool active, int nhome, const float *__restrict__ x,
                                 const float4 *__restrict__ xsort,
                                 const uint8_t *__restrict__ zones, const hxg_cellgrid &cg_,
                                 const hxg_geom &g, float rh2, const int32_t *__restrict__ start,
                                 bool indexed, hxg_list loc, hxg_list nl, hxg_flags *flags,
                                 int32_t (*ring)[32])
{
    const int lane = threadIdx.x & 31;
    const bool ihome = active && i < nhome;
    float3 xi;
    int ci[3];
    unsigned mi;
    hxg_build_atom<XS>(i, active, ihome, x, zones, cg_, &xi, ci, &mi);
    const size_t ls = (size_t) loc.stride, ns = (size_t) nl.stride;
    const float rhp = hxg_rh_padded(rh2);
    int nloc = 0, nnl = 0;
    int flushed = 0;      /* warp-uniform: slots below are stored for every home lane */
    int direct = INT_MAX; /* this lane's slots from here on are stored directly */
    /* Slots [from, to) of this lane's list that wait in the ring go out;
     * every lane of the warp takes part, each slot one coalesced line. */
    auto store_staged = [&](int from, int to) {
        for (int sl = from; sl < to; sl++)
            if (ihome && sl < nloc && sl < direct && sl < loc.max)
                loc.nb[(size_t) sl * ls + i] = ring[sl % HXG_RING][lane];
    };
    for (int r = 0; r < HXG_ROWS; r++) {
        hxg_seg seg[2];
        if (active)
            hxg_row(xi, ci, r, cg_, g, rhp, start, seg);
        else
            seg[0].kbeg = seg[0].kend = seg[1].kbeg = seg[1].kend = 0;
#pragma unroll
        for (int sgi = 0; sgi < 2; sgi++) {
            const float3 xs = seg[sgi].xs;
            const int kend = seg[sgi].kend;
            /* The next candidate is loaded before this one is tested. */
            float4 next = seg[sgi].kbeg < kend ? __ldg(xsort + seg[sgi].kbeg) : float4{};
            for (int k = seg[sgi].kbeg; k < kend; k++) {
                const float4 xj = next;
                if (k + 1 < kend)
                    next = __ldg(xsort + k + 1);
                const float dx = xs.x - xj.x, dy = xs.y - xj.y, dz = xs.z - xj.z;
                if (!(dx * dx + dy * dy + dz * dz < rh2))
                    continue;
                const int j = indexed ? __float_as_int(xj.w) : k;
                if (j == i)
                    continue;
                const bool jhome = j < nhome;
                if (ihome && jhome) {
                    if (nloc - flushed < HXG_RING && nloc < direct) {
                        ring[nloc % HXG_RING][lane] = j;
                    } else {
                        direct = min(direct, nloc);
                        if (nloc < loc.max)
                            loc.nb[(size_t) nloc * ls + i] = j;
                    }
                    nloc++;
                } else if (ihome || jhome || (mi & hxg_zone_mask(zones, j)) == 0) {
                    if (nnl < nl.max)
                        nl.nb[(size_t) nnl * ns + i] = j;
                    nnl++;
                }
            }
        }
        const int most = __reduce_min_sync(HXG_FULL, ihome ? nloc : INT_MAX);
        if (most != INT_MAX) {
            store_staged(flushed, most);
            flushed = most;
        }
    }
    store_staged(flushed, __reduce_max_sync(HXG_FULL, ihome ? min(nloc, direct) : 0));
    if (active)
        hxg_list_counts(i, ihome, nloc, nnl, loc, nl, flags);
}

/* Lists of every local atom (home and halo). LANES 1: one thread per atom
 * (hxg_build_thread); LANES HXG_BG: a group of lanes per atom
 * (hxg_build_group), for systems too small to fill the GPU one thread
 * each. In the group form a warp whose first atom is past the end leaves
 * as a whole; the others keep every lane for the ballots. */
template <int XS, int LANES>
__global__ void __launch_bounds__(HXG_BUILD_BLOCK)
    hxg_k_build(hxg_gate gate, int nhome, int ntotal, const float *__restrict__ x,
                const float4 *__restrict__ xsort, const uint8_t *__restrict__ zones,
                hxg_cellgrid cg_, hxg_geom g, float rh2, const int32_t *__restrict__ start,
                bool indexed, hxg_list loc, hxg_list nl, hxg_flags *flags)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (!hxg_open(gate))
        return;
    if (LANES == 1) {
        __shared__ int32_t ring[HXG_BUILD_BLOCK / 32][HXG_RING][32];
        if ((t & ~31) < ntotal)
            hxg_build_thread<XS>(t, t < ntotal, nhome, x, xsort, zones, cg_, g, rh2, start,
                                 indexed, loc, nl, flags, ring[threadIdx.x >> 5]);
        return;
    }
    if ((t & ~31) / LANES >= ntotal)
        return;
    const int i = t / LANES;
    hxg_build_group<XS>(i, i < ntotal, nhome, x, xsort, zones, cg_, g, rh2, start, indexed, loc, nl,
                        flags);
}

/* One thread per cell-list slot: the positions in cell order, each with
 * its atom's index in w (the bits of an int), so that the build reads each
 * row's candidates, and the index of a hit, from consecutive memory. */
template <int XS>
__global__ void hxg_k_gather(int n, const float *__restrict__ x,
                             const int32_t *__restrict__ cellatoms, float4 *__restrict__ xsort)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n)
        return;
    const int i = cellatoms[k];
    const float3 p = hxg_load<XS>(x, i);
    xsort[k] = make_float4(p.x, p.y, p.z, __int_as_float(i));
}

/* ------------------------------------------------ single-rank rebuild */

/* One thread per atom: the cell-sorted copy into the scratch arrays. */
__global__ void hxg_k_permute(hxg_gate gate, int n, const int32_t *__restrict__ perm,
                              const float4 *__restrict__ x4, const float4 *__restrict__ v4,
                              const int64_t *__restrict__ id, float4 *__restrict__ sx4,
                              float4 *__restrict__ sv4, int64_t *__restrict__ sid)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n || !hxg_open(gate))
        return;
    const int o = perm[k];
    sx4[k] = x4[o];
    sv4[k] = v4[o];
    sid[k] = id[o];
}

/* One thread per atom: the sorted atoms back into the arrays the step
 * kernels (and captured graphs) use, and the positions of this build. */
__global__ void hxg_k_adopt(hxg_gate gate, int n, const float4 *__restrict__ sx4,
                            const float4 *__restrict__ sv4, const int64_t *__restrict__ sid,
                            float4 *__restrict__ x4, float4 *__restrict__ xold4,
                            float4 *__restrict__ v4, int64_t *__restrict__ id)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n || !hxg_open(gate))
        return;
    const float4 p = sx4[k];
    x4[k] = p;
    xold4[k] = p;
    v4[k] = sv4[k];
    id[k] = sid[k];
}

/* One thread: the bookkeeping of a device rebuild, published to mapped
 * host memory with a system fence, so that the host reads it without a
 * synchronisation. Runs last: its change of last_build closes the gate. A
 * list that overflowed halts the step kernels that follow (hxg_flags). */
__global__ void hxg_k_finish(hxg_gate gate, hxg_report *report)
{
    if (threadIdx.x != 0 || !hxg_open(gate))
        return;
    hxg_flags *fl = gate.flags;
    const long long step = gate.step >= 0 ? gate.step : fl->cur;
    fl->last_build = step;
    fl->rebuilds += 1;
    if (fl->need > 0)
        fl->halt = 1;
    report->last_build = step;
    report->rebuilds = fl->rebuilds;
    report->need = fl->need;
    report->bad = fl->bad;
    report->maxcnt = fl->maxcnt;
    __threadfence_system();
}

/* ------------------------------------------------------------ launchers */

/* Lanes per atom of the list build: one thread per atom from 256 atoms per
 * SM, else a group. On H200s: 32,000 atoms on one GPU take as long either
 * way; 21,000 local atoms per rank on two GPUs rebuild 120 us faster in
 * groups (470 us a rebuild instead of 590).
 * HALOX_MD_BUILD_LANES=1|8 overrides (for measurements). */
static int hxg_build_lanes(long long n)
{
    static int sms = -1, forced = 0;
    if (sms < 0) {
        int dev = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
            cudaGetLastError();
            sms = 1;
        }
        const char *env = getenv("HALOX_MD_BUILD_LANES");
        forced = env ? atoi(env) : 0;
    }
    if (forced == 1 || forced == HXG_BG)
        return forced;
    return n >= 256LL * sms ? 1 : HXG_BG;
}

template <int XS>
static void hxg_launch_build(cudaStream_t s, hxg_gate gate, int nhome, int ntotal, const float *x,
                             const float4 *xsort, const uint8_t *zones, hxg_cellgrid cg_,
                             hxg_geom g, float rh2, const int32_t *start, bool indexed, hxg_list loc,
                             hxg_list nl, hxg_flags *flags)
{
    if (hxg_build_lanes(ntotal) == 1)
        hxg_k_build<XS, 1><<<hxg_blocks(ntotal, HXG_BUILD_BLOCK), HXG_BUILD_BLOCK, 0, s>>>(
            gate, nhome, ntotal, x, xsort, zones, cg_, g, rh2, start, indexed, loc, nl, flags);
    else
        hxg_k_build<XS, HXG_BG>
            <<<hxg_blocks((long long) ntotal * HXG_BG, HXG_BUILD_BLOCK), HXG_BUILD_BLOCK, 0, s>>>(
            gate, nhome, ntotal, x, xsort, zones, cg_, g, rh2, start, indexed, loc, nl, flags);
}

/* Cell starts from counts (three launches, see hxg_k_scan_part). */
static cudaError_t hxg_scan_cells(cudaStream_t s, hxg_gate gate, const int32_t *cnt, int32_t *start,
                                  int ncell, int32_t *scan_tmp)
{
    const int nb = (ncell + HXG_SCAN_CHUNK - 1) / HXG_SCAN_CHUNK;
    if (nb > HXG_MAX_SCAN_BLOCKS)
        return cudaErrorInvalidValue;
    hxg_k_scan_part<<<nb, 1024, 0, s>>>(gate, cnt, start, ncell, scan_tmp);
    hxg_k_scan_top<<<1, 1024, 0, s>>>(gate, scan_tmp, nb, scan_tmp + HXG_MAX_SCAN_BLOCKS,
                                      start + ncell);
    if (nb > 1)
        hxg_k_scan_add<<<nb, 1024, 0, s>>>(gate, start, ncell, scan_tmp + HXG_MAX_SCAN_BLOCKS);
    return cudaGetLastError();
}

extern "C" int hxg_build_lists(void *stream, int nhome, int ntotal, const float *x, int xs,
                               const uint8_t *zones, hxg_cellgrid cg_, hxg_geom g, float rh2,
                               int32_t *cell_cnt, int32_t *cell_start, int32_t *cellof,
                               int32_t *cellatoms, float *xsort, int32_t *scan_tmp, hxg_list loc,
                               hxg_list nl, hxg_flags *flags)
{
    cudaStream_t s = (cudaStream_t) stream;
    const hxg_gate open = {flags, 0, 1, 0, 0, 0};
    cudaError_t err = cudaMemsetAsync(cell_cnt, 0, sizeof(int32_t) * (size_t) cg_.ncell, s);
    if (err != cudaSuccess)
        return (int) err;
    if (ntotal > 0) {
        float *xw = const_cast<float *>(x); /* not written without WRAP */
        if (xs == 4)
            hxg_k_cell_count<4, false><<<hxg_blocks(ntotal, 256), 256, 0, s>>>(
                open, ntotal, xw, cg_, g, cell_cnt, cellof);
        else
            hxg_k_cell_count<3, false><<<hxg_blocks(ntotal, 256), 256, 0, s>>>(
                open, ntotal, xw, cg_, g, cell_cnt, cellof);
    }
    err = hxg_scan_cells(s, open, cell_cnt, cell_start, cg_.ncell, scan_tmp);
    if (err != cudaSuccess || ntotal <= 0)
        return (int) err;
    hxg_k_cell_fill<<<hxg_blocks(ntotal, 256), 256, 0, s>>>(open, ntotal, cellof, cell_start,
                                                            cell_cnt, cellatoms);
    hxg_k_cell_sort<<<hxg_blocks(cg_.ncell, 256), 256, 0, s>>>(open, cg_.ncell, cell_start,
                                                               cellatoms);
    float4 *xs4 = reinterpret_cast<float4 *>(xsort);
    if (xs == 4) {
        hxg_k_gather<4><<<hxg_blocks(ntotal, 256), 256, 0, s>>>(ntotal, x, cellatoms, xs4);
        hxg_launch_build<4>(s, open, nhome, ntotal, x, xs4, zones, cg_, g, rh2, cell_start, true,
                            loc, nl, flags);
    } else {
        hxg_k_gather<3><<<hxg_blocks(ntotal, 256), 256, 0, s>>>(ntotal, x, cellatoms, xs4);
        hxg_launch_build<3>(s, open, nhome, ntotal, x, xs4, zones, cg_, g, rh2, cell_start, true,
                            loc, nl, flags);
    }
    return (int) cudaGetLastError();
}

/* Cell sort of n home atoms (x4, v4, id through the scratch arrays s*;
 * xold4 set), then the cell starts of the sorted atoms. WRAP: positions
 * are wrapped into the box first (the single-rank rebuild; migration
 * wraps the multi-rank ones). */
static cudaError_t hxg_launch_sort(cudaStream_t s, hxg_gate gate, bool wrap, int n, float *x4,
                                   float *v4, int64_t *id, float *xold4, float *sx4, float *sv4,
                                   int64_t *sid, hxg_cellgrid cg_, hxg_geom g, int32_t *cell_cnt,
                                   int32_t *cell_start, int32_t *cellof, int32_t *perm,
                                   int32_t *scan_tmp)
{
    const int nb = hxg_blocks(n > 0 ? n : 1, 256);
    if (wrap)
        hxg_k_cell_count<4, true><<<nb, 256, 0, s>>>(gate, n, x4, cg_, g, cell_cnt, cellof);
    else
        hxg_k_cell_count<4, false><<<nb, 256, 0, s>>>(gate, n, x4, cg_, g, cell_cnt, cellof);
    cudaError_t err = hxg_scan_cells(s, gate, cell_cnt, cell_start, cg_.ncell, scan_tmp);
    if (err != cudaSuccess)
        return err;
    hxg_k_cell_fill<<<nb, 256, 0, s>>>(gate, n, cellof, cell_start, cell_cnt, perm);
    hxg_k_cell_sort<<<hxg_blocks(cg_.ncell, 256), 256, 0, s>>>(gate, cg_.ncell, cell_start, perm);
    hxg_k_permute<<<nb, 256, 0, s>>>(gate, n, perm, (const float4 *) x4, (const float4 *) v4, id,
                                     (float4 *) sx4, (float4 *) sv4, sid);
    hxg_k_adopt<<<nb, 256, 0, s>>>(gate, n, (const float4 *) sx4, (const float4 *) sv4, sid,
                                   (float4 *) x4, (float4 *) xold4, (float4 *) v4, id);
    return cudaGetLastError();
}

extern "C" int hxg_build_sorted(void *stream, int n, const float *x4, hxg_cellgrid cg_,
                                hxg_geom g, float rh2, const int32_t *cell_start, hxg_list loc,
                                hxg_flags *flags)
{
    const hxg_gate open = {flags, 0, 1, 0, 0, 0};
    const hxg_list none = {nullptr, nullptr, 0, 0};
    if (n <= 0)
        return 0;
    hxg_launch_build<4>((cudaStream_t) stream, open, n, n, x4,
                        reinterpret_cast<const float4 *>(x4), nullptr, cg_, g, rh2, cell_start,
                        false, loc, none, flags);
    return (int) cudaGetLastError();
}

extern "C" int hxg_sort_home(void *stream, int n, float *x4, float *v4, int64_t *id, float *xold4,
                             float *sx4, float *sv4, int64_t *sid, hxg_cellgrid cg_, hxg_geom g,
                             int32_t *cell_cnt, int32_t *cell_start, int32_t *cellof, int32_t *perm,
                             int32_t *scan_tmp, hxg_flags *flags)
{
    cudaStream_t s = (cudaStream_t) stream;
    const hxg_gate open = {flags, 0, 1, 0, 0, 0};
    cudaError_t err = cudaMemsetAsync(cell_cnt, 0, sizeof(int32_t) * (size_t) cg_.ncell, s);
    if (err == cudaSuccess)
        err = hxg_launch_sort(s, open, false, n, x4, v4, id, xold4, sx4, sv4, sid, cg_, g, cell_cnt,
                              cell_start, cellof, perm, scan_tmp);
    return (int) err;
}

extern "C" int hxg_rebuild_single(void *stream, int n, float *x4, float *v4, int64_t *id,
                                  float *xold4, float *sx4, float *sv4, int64_t *sid,
                                  hxg_cellgrid cg_, hxg_geom g, float rh2, int32_t *cell_cnt,
                                  int32_t *cell_start, int32_t *cellof, int32_t *perm,
                                  int32_t *scan_tmp, hxg_list loc, hxg_flags *flags,
                                  hxg_report *report, int64_t step, int every, int delay, int check)
{
    cudaStream_t s = (cudaStream_t) stream;
    const hxg_gate gate = {flags, (long long) step, every > 0 ? every : 1, delay, check, 1};
    const hxg_list none = {nullptr, nullptr, 0, 0};
    cudaError_t err = hxg_launch_sort(s, gate, true, n, x4, v4, id, xold4, sx4, sv4, sid, cg_, g,
                                      cell_cnt, cell_start, cellof, perm, scan_tmp);
    if (err != cudaSuccess)
        return (int) err;
    /* Atoms are in cell order now: a cell's atoms are [start[c], start[c+1]). */
    hxg_launch_build<4>(s, gate, n, n, x4, reinterpret_cast<const float4 *>(x4), nullptr, cg_, g,
                        rh2, cell_start, false, loc, none, flags);
    hxg_k_finish<<<1, 32, 0, s>>>(gate, report);
    return (int) cudaGetLastError();
}
