/*
 * md_lists.cu - the GPU engine's neighbour-list builds: the lists of all
 * local atoms at once (one rank; cell lists from md_cells.cu), the local
 * list of home atoms already in cell order, the non-local lists of a
 * multi-rank rebuild (home atoms against the halo, halo atoms against
 * everything), and the single-rank rebuild done entirely on the device
 * (kernels that decide by themselves whether this step rebuilds). Thin
 * extern "C" launchers; the cell grid is set up on the host (setup.c).
 * The walks over the rows of cells are in md_walks.cuh; docs/md-gpu.md
 * says how they go.
 */
#include "md_walks.cuh"

#include "core/hxi.h"

#include <cfloat>
#include <climits>
#include <cstdlib>

/* The counts of atom i's lists (at most what they hold), the largest
 * count seen over a list's room, so that the host grows the lists and
 * builds again, and the largest count of any atom (one atomic per warp:
 * the lanes that call this together reduce first). */
__device__ __forceinline__ void hxg_list_counts(int i, bool ihome, int nloc, int nnl, int nlr,
                                                hxg_list loc, hxg_list nl, hxg_flags *flags)
{
    if (ihome)
        loc.cnt[i] = min(nloc, loc.max);
    if (nl.cnt) {
        nl.cnt[i] = nlr >= 0 ? min(nnl, nl.max) : 0;
        if (nlr < 0 && nnl > 0)
            atomicMax(&flags->unreached, i + 1);
    }
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
__device__ __forceinline__ void
hxg_build_atom(int i, bool active, bool ihome, const float *__restrict__ x,
               const uint8_t *__restrict__ zones, const hxg_cellgrid &cg_, const hxg_geom &g,
               float3 *xi, int ci[3], unsigned *mi)
{
    *xi = make_float3(0.0f, 0.0f, 0.0f);
    ci[0] = ci[1] = ci[2] = 0;
    *mi = 0;
    if (!active)
        return;
    *xi = hxg_load<XS>(x, i);
    const float3 h = hxg_heights(*xi, g);
    ci[0] = hxg_cell_coord(h.x, cg_.lo[0], cg_.inv_w[0], cg_.n[0]);
    ci[1] = hxg_cell_coord(h.y, cg_.lo[1], cg_.inv_w[1], cg_.n[1]);
    ci[2] = hxg_cell_coord(h.z, cg_.lo[2], cg_.inv_w[2], cg_.n[2]);
    *mi = (ihome || zones == nullptr) ? 0u : hxg_zone_mask(zones, i);
}

/* The list build's block size (HXG_RING, its ring's slots a lane, is in
 * md_gpu.h). */
#define HXG_BUILD_BLOCK 128
#ifndef HXG_BUILD_MINB
#define HXG_BUILD_MINB 8
#endif
/* Blocks an SM for the one-thread build: its ring (HXG_RING x 32 ints a
 * warp, 32 KB a block) leaves room for 6 blocks an SM whatever the
 * registers, so it may take the registers of 6. */
#ifndef HXG_BUILD_MINB1
#define HXG_BUILD_MINB1 6
#endif

/* Lists of every local atom (home and halo) from one cell structure.
 * LANES 1: one thread per atom (hxg_walk_thread, or hxg_walk_home with
 * HOME: every atom a home atom in cell order); LANES 2, 4 or 8: a group
 * of lanes per atom (hxg_walk_group), for systems too small to fill the GPU
 * one thread each. In the group form a warp whose first atom is past the
 * end leaves as a whole; the others keep every lane for the ballots. */
template <int XS, int LANES, bool HOME = false>
__global__ void __launch_bounds__(HXG_BUILD_BLOCK, LANES == 1 ? HXG_BUILD_MINB1 : HXG_BUILD_MINB)
    hxg_k_build(hxg_gate gate, int nhome, int ntotal, const float *__restrict__ x,
                const float4 *__restrict__ xsort, const uint8_t *__restrict__ zones,
                hxg_cellgrid cg_, hxg_geom g, float rh2, const int32_t *__restrict__ start,
                bool indexed, bool full, hxg_list loc, hxg_list nl, hxg_flags *flags)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (!hxg_open(gate) || (t & ~31) / LANES >= ntotal)
        return;
    const int i = t / LANES;
    const bool active = i < ntotal, ihome = active && i < nhome;
    float3 xi;
    int ci[3];
    unsigned mi;
    hxg_build_atom<XS>(i, active, ihome, x, zones, cg_, g, &xi, ci, &mi);
    /* The atom's row in nl (a compact nl: -1 where it can have no entry).
     * full: a halo atom lists nothing (its count is still set). */
    const int nlr = !nl.row ? i : (active ? __ldg(nl.row + i) : -1);
    const bool walk = active && (ihome || !full);
    if (LANES == 1) {
        __shared__ int32_t ring[HXG_BUILD_BLOCK / 32][HXG_RING][32];
        int32_t(*wr)[32] = ring[threadIdx.x >> 5];
        hxg_tstate s = {0, 0, 0, INT_MAX};
        if (HOME)
            hxg_walk_home(i, active, xi, ci, xsort, cg_, g, rh2, start, loc, wr, s);
        else
            hxg_walk_thread(i, walk, ihome, nhome, xi, ci, mi, xsort, zones, cg_, g, rh2, start,
                            indexed, loc, nl, nlr, wr, s);
        hxg_store_staged(i, ihome, s, s.flushed,
                         __reduce_max_sync(HXG_FULL, ihome ? min(s.nloc, s.direct) : 0), loc, wr);
        if (active)
            hxg_list_counts(i, ihome, s.nloc, s.nnl, nlr, loc, nl, flags);
        return;
    }
    int nloc = 0, nnl = 0;
    hxg_walk_group<LANES, HOME>(i, walk, ihome, nhome, xi, ci, mi, xsort, zones, cg_, g, rh2, start,
                                indexed, loc, nl, nlr, nloc, nnl);
    if (active && (threadIdx.x & (LANES - 1)) == 0)
        hxg_list_counts(i, ihome, nloc, nnl, nlr, loc, nl, flags);
}

/* Whether home atom at xi lies at or past near, or at or below lo (a
 * full-shell halo; -FLT_MAX otherwise), along some dimension, so that it
 * may have halo neighbours (see hxg_k_build_nl). Bounds are heights
 * (hxg_height). */
__device__ __forceinline__ bool hxg_near(float3 x, const hxg_geom &g, float3 near, float3 lo)
{
    const float3 xi = hxg_heights(x, g);
    return xi.x >= near.x || xi.y >= near.y || xi.z >= near.z || xi.x <= lo.x || xi.y <= lo.y ||
           xi.z <= lo.z;
}

/* One thread per local atom: 1 where it may have a non-local list (a halo
 * atom, unless full, or a home atom near a face the halo lies beyond),
 * into row. */
__global__ void hxg_k_nl_reach(int nhome, int ntotal, const float *__restrict__ x, hxg_geom g,
                               float3 near, float3 lo, bool full, int32_t *__restrict__ row)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < ntotal)
        row[i] = i >= nhome ? !full : hxg_near(hxg_load<3>(x, i), g, near, lo);
}

/* One thread per local atom, and one more: the flags in row become rows
 * (pos: their exclusive prefix sum, ntotal + 1 ints), -1 for atoms without
 * one and for those past stride rows; rows needed past stride are noted,
 * the rows given are counted (flags->nl_rows). rowatom (may be NULL): the
 * atom of each row; an atom without a row gets a count of 0 in cnt. */
__global__ void hxg_k_nl_rows(int ntotal, const int32_t *__restrict__ pos, int32_t *row, int stride,
                              int32_t *rowatom, int32_t *cnt, hxg_flags *flags)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < ntotal) {
        const int r = row[i] && pos[i] < stride ? pos[i] : -1;
        row[i] = r;
        if (rowatom) {
            if (r >= 0)
                rowatom[r] = i;
            else
                cnt[i] = 0;
        }
    } else if (i == ntotal) {
        flags->nl_rows = min(pos[ntotal], stride);
        if (pos[ntotal] > stride)
            flags->need_rows = pos[ntotal];
    }
}

/* The non-local lists of a multi-rank rebuild, apart from the local list
 * (built from the home atoms alone, hxg_build_sorted, which may still run
 * beside this). x: positions of home then halo atoms (3 floats). A halo
 * atom walks the home atoms' cells (xhome: home positions in cell order,
 * hstart their starts), then the halo atoms' (xhalo: indexed, start);
 * a home atom walks only the halo atoms' cells, and only where it lies
 * within reach of a face the halo lies beyond: near[d] is the domain's
 * upper bound minus rh (and a margin) along a dimension with pulses, past
 * every coordinate along the others. A home atom below near along every
 * dimension has no halo neighbour: every halo atom came in through a pulse
 * and lies at or above the upper bound along its dimension. The lists of
 * home atoms are those hxg_k_build makes; a halo atom lists its home
 * partners first. halo_pairs 0: no two halo atoms make a pair of this
 * rank's (pulses along one dimension only: every halo atom is off home
 * along it, so the zone rule owns none of their pairs), and halo atoms
 * skip the halo's cells, half their walk. A full-shell halo lies below
 * the domain too (near_lo, the lower bound plus rh) and its atoms have no
 * rows (hxg_k_nl_reach): only home atoms walk. */
template <int LANES>
__global__ void __launch_bounds__(HXG_BUILD_BLOCK, HXG_BUILD_MINB)
    hxg_k_build_nl(int nhome, const float *__restrict__ x, const float4 *__restrict__ xhome,
                   const int32_t *__restrict__ hstart, const float4 *__restrict__ xhalo,
                   const int32_t *__restrict__ start, const uint8_t *__restrict__ zones,
                   hxg_cellgrid cg_, hxg_geom g, float rh2, float3 near, float3 near_lo,
                   bool halo_pairs, const int32_t *__restrict__ rowatom, hxg_list nl,
                   hxg_flags *flags)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    /* Lane groups take the rows of the compact list (the atoms that may
     * have entries), w the row, i its atom. */
    const int nwalk = flags->nl_rows;
    if ((t & ~31) / LANES >= nwalk)
        return;
    const int w = t / LANES;
    const bool active = w < nwalk;
    const int i = active ? __ldg(rowatom + w) : 0;
    const bool ihome = active && i < nhome;
    float3 xi;
    int ci[3];
    unsigned mi;
    hxg_build_atom<3>(i, active, ihome, x, zones, cg_, g, &xi, ci, &mi);
    const int nlr = active ? w : -1;
    const bool halo = active && !ihome;
    const bool reach = (halo && halo_pairs) || (ihome && hxg_near(xi, g, near, near_lo));
    const hxg_list none = {nullptr, nullptr, 0, 0, nullptr, 0};
    int nnl = 0;
    if (LANES == 1) {
        hxg_tstate s = {0, 0, 0, INT_MAX};
        hxg_walk_thread(i, halo, false, nhome, xi, ci, mi, xhome, zones, cg_, g, rh2, hstart, false,
                        none, nl, nlr, nullptr, s);
        hxg_walk_thread(i, reach, ihome, nhome, xi, ci, mi, xhalo, zones, cg_, g, rh2, start, true,
                        none, nl, nlr, nullptr, s);
        nnl = s.nnl;
    } else {
        int nloc = 0;
        hxg_walk_group<LANES>(i, halo, false, nhome, xi, ci, mi, xhome, zones, cg_, g, rh2, hstart,
                              false, none, nl, nlr, nloc, nnl);
        hxg_walk_group<LANES>(i, reach, ihome, nhome, xi, ci, mi, xhalo, zones, cg_, g, rh2, start,
                              true, none, nl, nlr, nloc, nnl);
    }
    if (active && (threadIdx.x & (LANES - 1)) == 0)
        hxg_list_counts(i, false, 0, nnl, nlr, none, nl, flags);
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
 * SM, 4 from 128, else 8; the home walks (HOME: every atom a home atom in
 * cell order) one thread from 192, 4 from 160, else 8. With fewer atoms
 * per SM, one thread an atom leaves most of the GPU idle and a group of
 * lanes an atom builds faster; with more, the groups' extra instructions
 * (ballots, shared-out rows) cost more than the lanes they fill. Each
 * switch is where the build kernels measured with the lanes forced cross
 * (docs/md-gpu.md, "Data"; docs/performance.md, "The lane groups share
 * out their rows"; docs/results/lanes-home-2026-12-04.txt,
 * docs/results/rows-shared-2026-12-04.txt). HALOX_MD_LANES=,,1|2|4|8
 * overrides (tests). */
static int hxg_build_lanes(long long n, bool home = false)
{
    static int sms = -1, forced = 0;
    if (sms < 0) {
        int dev = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
            cudaGetLastError();
            sms = 1;
        }
        forced = hxi_knobs()->md_lanes[2];
    }
    if (forced == 1 || forced == 2 || forced == 4 || forced == HXG_BG)
        return forced;
    if (n >= (home ? 192LL : 256LL) * sms)
        return 1;
    return n >= (home ? 160LL : 128LL) * sms ? 4 : HXG_BG;
}

/* The rows of a compact non-local list l.nl of the local atoms at x
 * (hxg_k_nl_reach from l.near_rows, a scan into l.pos, hxg_k_nl_rows;
 * rowatom may be NULL). */
static cudaError_t hxg_nl_rows(cudaStream_t s, const float *x, const hxg_atoms_view &a,
                               const hxg_lists_view &l, int32_t *rowatom, int32_t *scan_tmp,
                               hxg_flags *flags)
{
    const int nhome = a.nhome, ntotal = a.ntotal;
    if (ntotal <= 0)
        return cudaSuccess;
    const hxg_gate open = {flags, 0, 1, 0, 0, 0};
    const float3 near = make_float3(l.near_rows[0], l.near_rows[1], l.near_rows[2]);
    const float3 lo = make_float3(l.near_rows_lo[0], l.near_rows_lo[1], l.near_rows_lo[2]);
    hxg_k_nl_reach<<<hxg_blocks(ntotal, 256), 256, 0, s>>>(nhome, ntotal, x, a.geom, near, lo,
                                                           l.full != 0,
                                                           l.nl.row);
    cudaError_t err = hxg_scan_cells(s, open, l.nl.row, l.pos, ntotal, scan_tmp);
    if (err != cudaSuccess)
        return err;
    hxg_k_nl_rows<<<hxg_blocks((long long) ntotal + 1, 256), 256, 0, s>>>(
        ntotal, l.pos, l.nl.row, l.nl.stride, rowatom, l.nl.cnt, flags);
    return cudaGetLastError();
}

/* The arguments of hxg_k_build, in its order, as its launchers pass them
 * on. */
struct hxg_build_k {
    hxg_gate gate;
    int nhome, ntotal;
    const float *x;
    const float4 *xsort;
    const uint8_t *zones;
    hxg_cellgrid cg_;
    hxg_geom g;
    float rh2;
    const int32_t *start;
    bool indexed, full;
    hxg_list loc, nl;
    hxg_flags *flags;
};

/* The same of hxg_k_build_nl. */
struct hxg_build_nl_k {
    int nhome;
    const float *x;
    const float4 *xhome;
    const int32_t *hstart;
    const float4 *xhalo;
    const int32_t *start;
    const uint8_t *zones;
    hxg_cellgrid cg_;
    hxg_geom g;
    float rh2;
    float3 near, near_lo;
    bool hp;
    const int32_t *rowatom;
    hxg_list nl;
    hxg_flags *flags;
};

/* hxg_k_build's arguments from the views: the atoms of a with their zones,
 * the cells c (starts c.start), the lists l; the positions (x, xsort) and
 * indexed are the caller's to set. */
static hxg_build_k hxg_build_args(hxg_gate gate, const hxg_atoms_view &a, const hxg_cells_view &c,
                                  const hxg_lists_view &l, hxg_flags *flags)
{
    hxg_build_k k;
    k.gate = gate;
    k.nhome = a.nhome;
    k.ntotal = a.ntotal;
    k.x = nullptr;
    k.xsort = nullptr;
    k.zones = a.zones;
    k.cg_ = c.grid;
    k.g = a.geom;
    k.rh2 = l.rh2;
    k.start = c.start;
    k.indexed = false;
    k.full = l.full != 0;
    k.loc = l.loc;
    k.nl = l.nl;
    k.flags = flags;
    return k;
}

template <int XS, int L, bool HOME = false>
static void hxg_launch_build_l(cudaStream_t s, const hxg_build_k &k)
{
    hxg_k_build<XS, L, HOME>
        <<<hxg_blocks((long long) k.ntotal * L, HXG_BUILD_BLOCK), HXG_BUILD_BLOCK, 0, s>>>(
            k.gate, k.nhome, k.ntotal, k.x, k.xsort, k.zones, k.cg_, k.g, k.rh2, k.start, k.indexed,
            k.full, k.loc, k.nl, k.flags);
}

template <int L> static void hxg_launch_build_nl(cudaStream_t s, const hxg_build_nl_k &k)
{
    /* A lane group for each row there is room for (the kernel reads how
     * many were given). */
    hxg_k_build_nl<L>
        <<<hxg_blocks((long long) k.nl.stride * L, HXG_BUILD_BLOCK), HXG_BUILD_BLOCK, 0, s>>>(
            k.nhome, k.x, k.xhome, k.hstart, k.xhalo, k.start, k.zones, k.cg_, k.g, k.rh2, k.near,
            k.near_lo, k.hp, k.rowatom, k.nl, k.flags);
}

/* HOME: as hxg_walk_group's (and hxg_walk_home where one thread an atom
 * builds). */
template <int XS, bool HOME = false>
static void hxg_launch_build(cudaStream_t s, const hxg_build_k &k)
{
    switch (hxg_build_lanes(k.ntotal, HOME)) {
    case 1:
        hxg_launch_build_l<XS, 1, HOME>(s, k);
        break;
    case 2:
        hxg_launch_build_l<XS, 2, HOME>(s, k);
        break;
    case 4:
        hxg_launch_build_l<XS, 4, HOME>(s, k);
        break;
    default:
        hxg_launch_build_l<XS, HXG_BG, HOME>(s, k);
    }
}

/* The local list l.loc of the a.nhome home atoms stored in cell order at
 * x4 (candidate k is atom k; c.start their cell starts): hxg_walk_home
 * where one thread per atom builds, else the lane groups' home walk. */
static void hxg_launch_build_home(cudaStream_t s, hxg_gate gate, const hxg_atoms_view &a,
                                  const hxg_cells_view &c, const hxg_lists_view &l,
                                  hxg_flags *flags)
{
    const hxg_list none = {nullptr, nullptr, 0, 0, nullptr, 0};
    /* Every atom a home atom, the positions their own cell order. */
    hxg_build_k k = hxg_build_args(gate, a, c, l, flags);
    k.ntotal = a.nhome;
    k.x = a.x4;
    k.xsort = reinterpret_cast<const float4 *>(a.x4);
    k.zones = nullptr;
    k.indexed = false;
    k.nl = none;
    hxg_launch_build<4, true>(s, k);
}

extern "C" int hxg_build_lists(void *stream, hxg_atoms_view a, hxg_cells_view c, hxg_lists_view l,
                               hxg_flags *flags)
{
    cudaStream_t s = (cudaStream_t) stream;
    const hxg_gate open = {flags, 0, 1, 0, 0, 0};
    const int xs = a.x3 ? 3 : 4;
    const float *x = a.x3 ? a.x3 : a.x4;
    cudaError_t err = cudaSuccess;
    if (l.nl.row && xs == 3)
        err = hxg_nl_rows(s, x, a, l, nullptr, c.scan_tmp, flags);
    if (err != cudaSuccess)
        return (int) err;
    err = hxg_cell_lists(s, flags, a.ntotal, x, xs, 0, a.geom, c);
    if (err != cudaSuccess || a.ntotal <= 0)
        return (int) err;
    hxg_build_k k = hxg_build_args(open, a, c, l, flags);
    k.x = x;
    k.xsort = reinterpret_cast<const float4 *>(c.xsort);
    k.indexed = true;
    if (xs == 4)
        hxg_launch_build<4>(s, k);
    else
        hxg_launch_build<3>(s, k);
    return (int) cudaGetLastError();
}

extern "C" int hxg_build_nonlocal(void *stream, const float *x, hxg_atoms_view a, hxg_cells_view c,
                                  hxg_lists_view l, hxg_flags *flags)
{
    cudaStream_t s = (cudaStream_t) stream;
    if (!l.nl.row || !l.rowatom)
        return (int) cudaErrorInvalidValue; /* the non-local list is always compact */
    const int nhome = a.nhome, nhalo = a.ntotal - nhome;
    cudaError_t err = hxg_nl_rows(s, x, a, l, l.rowatom, c.scan_tmp, flags);
    if (err != cudaSuccess)
        return (int) err;
    hxg_cells_view halo = c; /* the halo atoms' cell lists: their own starts */
    halo.start = c.halo_start;
    err = hxg_cell_lists(s, flags, nhalo, x + 3 * (size_t) nhome, 3, nhome, a.geom, halo);
    if (err != cudaSuccess || a.ntotal <= 0)
        return (int) err;
    hxg_build_nl_k k;
    k.nhome = nhome;
    k.x = x;
    k.xhome = reinterpret_cast<const float4 *>(a.x4);
    k.hstart = c.start;
    k.xhalo = reinterpret_cast<const float4 *>(c.xsort);
    k.start = c.halo_start;
    k.zones = a.zones;
    k.cg_ = c.grid;
    k.g = a.geom;
    k.rh2 = l.rh2;
    k.near = make_float3(l.near[0], l.near[1], l.near[2]);
    k.near_lo = make_float3(l.near_lo[0], l.near_lo[1], l.near_lo[2]);
    k.hp = l.halo_pairs != 0;
    k.rowatom = l.rowatom;
    k.nl = l.nl;
    k.flags = flags;
    /* Lanes by the atoms that walk: the halo (twice) and as many home atoms
     * near it. */
    switch (hxg_build_lanes(nhalo)) {
    case 1:
        hxg_launch_build_nl<1>(s, k);
        break;
    case 2:
        hxg_launch_build_nl<2>(s, k);
        break;
    case 4:
        hxg_launch_build_nl<4>(s, k);
        break;
    default:
        hxg_launch_build_nl<HXG_BG>(s, k);
    }
    return (int) cudaGetLastError();
}

extern "C" int hxg_build_sorted(void *stream, hxg_atoms_view a, hxg_cells_view c, hxg_lists_view l,
                                hxg_flags *flags)
{
    const hxg_gate open = {flags, 0, 1, 0, 0, 0};
    if (a.nhome <= 0)
        return 0;
    hxg_launch_build_home((cudaStream_t) stream, open, a, c, l, flags);
    return (int) cudaGetLastError();
}

extern "C" int hxg_rebuild_single(void *stream, hxg_atoms_view a, hxg_cells_view c,
                                  hxg_lists_view l, hxg_decide d, hxg_report *report)
{
    cudaStream_t s = (cudaStream_t) stream;
    const hxg_gate gate = {d.flags, (long long) d.step, d.every > 0 ? d.every : 1, d.delay, d.check,
                           1};
    cudaError_t err = hxg_launch_sort(s, gate, true, true, nullptr, a, c);
    if (err != cudaSuccess)
        return (int) err;
    /* Atoms are in cell order now: a cell's atoms are [start[c], start[c+1]). */
    hxg_launch_build_home(s, gate, a, c, l, d.flags);
    hxg_k_finish<<<1, 32, 0, s>>>(gate, report);
    return (int) cudaGetLastError();
}

/* ------------------------------------------- the atoms of the non-local forces */

/* One thread per local atom: 1 where its non-local list has entries. */
__global__ void hxg_k_nl_flag(int ntotal, const int32_t *__restrict__ cnt,
                              int32_t *__restrict__ flag)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < ntotal)
        flag[i] = cnt[i] > 0;
}

/* One thread per map entry: its target is visited too (repeated targets
 * store the same value). */
__global__ void hxg_k_nl_flag_maps(int nmaps, const int32_t *__restrict__ maps, int32_t *flag)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < nmaps)
        flag[maps[k]] = 1;
}

/* One thread per local atom, and one more for the count. */
__global__ void hxg_k_nl_compact(int ntotal, const int32_t *__restrict__ flag,
                                 const int32_t *__restrict__ pos, int32_t *__restrict__ idx,
                                 hxg_flags *flags)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == ntotal)
        flags->nl_atoms = pos[ntotal];
    else if (i < ntotal && flag[i])
        idx[pos[i]] = i;
}

extern "C" int hxg_nl_atoms(void *stream, hxg_atoms_view a, hxg_cells_view c, hxg_lists_view l,
                            const int32_t *maps, int nmaps, hxg_flags *flags)
{
    cudaStream_t s = (cudaStream_t) stream;
    const hxg_gate open = {flags, 0, 1, 0, 0, 0};
    const int ntotal = a.ntotal;
    int32_t *flag = c.cellof; /* scratch */
    if (ntotal <= 0)
        return (int) cudaMemsetAsync(&flags->nl_atoms, 0, sizeof flags->nl_atoms, s);
    hxg_k_nl_flag<<<hxg_blocks(ntotal, 256), 256, 0, s>>>(ntotal, l.nl.cnt, flag);
    if (nmaps > 0)
        hxg_k_nl_flag_maps<<<hxg_blocks(nmaps, 256), 256, 0, s>>>(nmaps, maps, flag);
    cudaError_t err = hxg_scan_cells(s, open, flag, l.pos, ntotal, c.scan_tmp);
    if (err != cudaSuccess)
        return (int) err;
    hxg_k_nl_compact<<<hxg_blocks((long long) ntotal + 1, 256), 256, 0, s>>>(ntotal, flag, l.pos,
                                                                             l.nl_idx, flags);
    return (int) cudaGetLastError();
}
