/*
 * md_walks.cuh - the list build's walks: how one atom (one thread, or a
 * group of lanes) goes through the rows of cells that can hold its
 * neighbours (md_cells.cuh) and adds its hits to its lists, in one order
 * whichever walk builds them. md_lists.cu's kernels call them. Device code,
 * included by md_lists.cu only.
 */
#ifndef HALOX_MD_WALKS_CUH
#define HALOX_MD_WALKS_CUH

#include "md_cells.cuh"

#include <climits>

/* The squared distance of a candidate from the atom (xs: the atom's
 * position minus the segment's image shift). Every walk tests candidates
 * with this one expression, so that all of them list the same pairs. */
__device__ __forceinline__ float hxg_d2(float3 xs, float4 xj)
{
    const float dx = xs.x - xj.x, dy = xs.y - xj.y, dz = xs.z - xj.z;
    return dx * dx + dy * dy + dz * dz;
}

/* Lanes per atom in the list build's groups: at most this many. */
#define HXG_BG 8

/* The rows of an atom's walk: HXG_SIDE offsets along y inside each of
 * HXG_SIDE along z, row r at (oy, oz) = (r % HXG_SIDE, r / HXG_SIDE) -
 * HXG_REACH. */
#define HXG_SIDE (2 * HXG_REACH + 1)
#define HXG_ROWS (HXG_SIDE * HXG_SIDE)

/* Row segments worked out by lane src (own on that lane), for every lane
 * of the warp (all of them call this together). Both segments of a row
 * share y and z. */
__device__ __forceinline__ void hxg_seg_from(const hxg_seg own[2], int src, hxg_seg seg[2])
{
    const float ys = __shfl_sync(HXG_FULL, own[0].xs.y, src);
    const float zs = __shfl_sync(HXG_FULL, own[0].xs.z, src);
#pragma unroll
    for (int k = 0; k < 2; k++) {
        seg[k].kbeg = __shfl_sync(HXG_FULL, own[k].kbeg, src);
        seg[k].kend = __shfl_sync(HXG_FULL, own[k].kend, src);
        seg[k].xs = make_float3(__shfl_sync(HXG_FULL, own[k].xs.x, src), ys, zs);
    }
}

/* Whether a pair off the local list is this rank's to list in nl: a home
 * atom with a halo one, or two halo atoms not both off home along any
 * dimension (the zone rule). */
__device__ __forceinline__ bool hxg_owned(bool ihome, bool jhome, unsigned mi,
                                          const uint8_t *__restrict__ zones, int j)
{
    return ihome || jhome || (mi & hxg_zone_mask(zones, j)) == 0;
}

/* Hits of atom i among the candidates of one cell structure, by the
 * BG consecutive lanes of its group (sub = the lane's place in it),
 * added to its lists after the nloc and nnl slots already filled. The lanes
 * take a segment's candidates BG at a time; a ballot gives each hit its
 * slot, so the list keeps the candidates' order (rows, segments, atoms by
 * index within a cell) whatever the lane count: the lists are those of
 * hxg_walk_thread. The rows' set-up (hxg_row) is shared out: the group
 * takes the rows BG at a time, lane sub works out row r0 + sub of each
 * batch, and the group walks the batch's rows in order, each row's
 * segments from the lane that made them (hxg_seg_from), so that a lane
 * makes ceil(HXG_ROWS / BG) rows' set-up where each of the group made all
 * of them, most of a lane's instructions at 8 lanes an atom. Every lane of
 * the warp calls this together (the loops are warp-uniform: every atom
 * walks all rows and both segments, empty or not); lanes that do not walk
 * (on false) only take part in the ballots and shuffles.
 * Home atoms (i < nhome): home neighbours into loc, halo ones into nl.
 * Halo atoms: partners of pairs this rank owns (the zone rule: no dimension
 * in which both are off home) into nl. indexed: xsort is a cell list's
 * positions with each atom's index in w (hxg_k_gather); else atoms are
 * stored in cell order (cell c holds [start[c], start[c+1])). HOME: every
 * atom is a home atom in cell order (candidate k is atom k, every hit goes
 * to the local list, no zone rule): the same list with one ballot a batch
 * and fewer instructions a candidate, the build's bound at the sizes that
 * take lane groups (Nsight Compute, 16,384 atoms: an instruction issued on
 * 59 % of the cycles). */
template <int BG, bool HOME = false>
__device__ __forceinline__ void
hxg_walk_group(int i, bool on, bool ihome, int nhome, float3 xi, const int ci[3], unsigned mi,
               const float4 *__restrict__ xsort, const uint8_t *__restrict__ zones,
               const hxg_cellgrid &cg_, const hxg_geom &g, float rh2, const int32_t *start,
               bool indexed, hxg_list loc, hxg_list nl, int nlr, int &nloc, int &nnl)
{
    const int lane = threadIdx.x & 31, sub = lane & (BG - 1);
    const unsigned gmask = ((BG == 32) ? HXG_FULL : ((1u << BG) - 1u)) << (lane & ~(BG - 1));
    const unsigned below = (1u << lane) - 1u;
    const float rhp = hxg_rh_padded(rh2);
    const float3 w = hxg_cell_w(cg_);
    const int first = lane & ~(BG - 1);
    for (int r0 = 0; r0 < HXG_ROWS; r0 += BG) {
        hxg_seg own[2];
        {
            /* A lane past the last row (r >= HXG_ROWS) sets up an empty one:
             * it does not walk, so its offsets, beyond the reach, only feed
             * values that hxg_row then drops. */
            const int r = r0 + sub;
            const hxg_zrow zr =
                hxg_row_z(on && r < HXG_ROWS, xi, ci, r / HXG_SIDE - HXG_REACH, w, cg_, g);
            hxg_row(zr, xi, ci, r % HXG_SIDE - HXG_REACH, w, cg_, g, rhp, start, own);
        }
        for (int rb = 0; rb < min(BG, HXG_ROWS - r0); rb++) {
            hxg_seg seg[2];
            hxg_seg_from(own, first + rb, seg);
#pragma unroll
            for (int sgi = 0; sgi < 2; sgi++) {
                const int kbeg = seg[sgi].kbeg, kend = seg[sgi].kend;
                const float3 xs = seg[sgi].xs;
                for (int k0 = kbeg; HOME && __any_sync(HXG_FULL, k0 < kend); k0 += BG) {
                    const int k = k0 + sub;
                    const bool hloc = k < kend && k != i && hxg_d2(xs, __ldg(xsort + k)) < rh2;
                    const unsigned bl = __ballot_sync(HXG_FULL, hloc) & gmask;
                    if (hloc) {
                        const int slot = nloc + __popc(bl & below);
                        if (slot < loc.max)
                            loc.nb[(size_t) slot * loc.stride + i] = k;
                    }
                    nloc += __popc(bl);
                }
                for (int k0 = kbeg; !HOME && __any_sync(HXG_FULL, k0 < kend); k0 += BG) {
                    const int k = k0 + sub;
                    bool hloc = false, hnl = false;
                    int j = -1;
                    if (k < kend) {
                        const float4 xj = __ldg(xsort + k);
                        if (hxg_d2(xs, xj) < rh2)
                            j = indexed ? __float_as_int(xj.w) : k;
                        if (j >= 0 && j != i) {
                            const bool jhome = j < nhome;
                            if (ihome && jhome)
                                hloc = true;
                            else
                                hnl = hxg_owned(ihome, jhome, mi, zones, j);
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
                        if (slot < nl.max && nlr >= 0)
                            nl.nb[(size_t) slot * nl.stride + nlr] = j;
                    }
                    nloc += __popc(bl);
                    nnl += __popc(bn);
                }
            }
        }
    }
}

/* Where one lane of the one-thread build stands: the slots it filled, the
 * local-list slots stored for every home lane of the warp (warp-uniform),
 * and the slot from which this lane stores its local list directly. */
struct hxg_tstate {
    int nloc, nnl, flushed, direct;
};

/* A 4-byte store to shared memory (addr: a shared-window address) when p,
 * as one predicated instruction: the compiler, left to itself, branches
 * around the store and forms the address anew each time. */
__device__ __forceinline__ void hxg_st_shared_if(bool p, uint32_t addr, int32_t v)
{
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %2, 0;\n\t@q st.shared.b32 [%0], %1;\n\t}"
                 :
                 : "r"(addr), "r"(v), "r"((int) p)
                 : "memory");
}

/* Adds j to atom i's local list in the one-thread builds when h: into the
 * lane's ring entry for slot s.nloc (rl: the shared address of this lane's
 * column of the ring) while that slot is below lim = min(s.flushed +
 * loc.ring, s.direct), i.e. while the lane is less than loc.ring slots
 * (HXG_RING but in tests) ahead of the warp's stores, else straight to the
 * list from then on. The
 * ring store is predicated and the direct store, rare, a branch of its
 * own, so that a warp whose lanes hit and miss unevenly does not run two
 * paths per candidate. */
__device__ __forceinline__ void hxg_put_local(bool h, int i, int j, hxg_list loc, size_t ls,
                                              uint32_t rl, int &lim, hxg_tstate &s)
{
    const bool ring = h && s.nloc < lim;
    hxg_st_shared_if(ring, rl + ((uint32_t) (s.nloc & (HXG_RING - 1)) << 7), j);
    if (h && !ring) {
        s.direct = min(s.direct, s.nloc);
        lim = s.direct;
        if (s.nloc < loc.max)
            loc.nb[(size_t) s.nloc * ls + i] = j;
    }
    s.nloc += h;
}

/* Local-list slots [from, to) of this lane that wait in the ring go out;
 * every lane of the warp takes part, each slot one coalesced line. The
 * tests of a slot (filled, not stored directly, inside the list) are one
 * bound, and the slot's address steps by the list's stride: a slot costs a
 * few instructions, where the tests and the address made anew for each
 * cost 27 (Nsight Compute, 2,048,000 atoms: 14 % of the build). */
__device__ __forceinline__ void hxg_store_staged(int i, bool ihome, const hxg_tstate &s, int from,
                                                 int to, hxg_list loc, int32_t (*ring)[32])
{
    const int lane = threadIdx.x & 31;
    const int end = ihome ? min(min(to, s.nloc), min(s.direct, loc.max)) : from;
    const size_t ls = (size_t) loc.stride;
    int32_t *p = loc.nb + (size_t) from * ls + i;
    for (int sl = from; sl < end; sl++, p += ls)
        *p = ring[sl & (HXG_RING - 1)][lane];
}

/* After a row: the slots every home lane of the warp has filled go out of
 * the ring (hxg_store_staged), and each lane's limit follows. Every lane
 * of the warp calls this together. */
__device__ __forceinline__ void hxg_flush_ring(int i, bool ihome, hxg_tstate &s, hxg_list loc,
                                               int32_t (*ring)[32], int &lim)
{
    const int most = __reduce_min_sync(HXG_FULL, ihome ? s.nloc : INT_MAX);
    if (most != INT_MAX) {
        hxg_store_staged(i, ihome, s, s.flushed, most, loc, ring);
        s.flushed = most;
        lim = min(s.flushed + loc.ring, s.direct);
    }
}

/* Hits of atom i among the candidates of one cell structure by one
 * thread: the same candidates in the same order as hxg_walk_group, so the
 * lists, and the forces summed over them, are the same whichever kernel
 * built them. Used where there are enough atoms to fill the GPU with one
 * thread each: no ballots, and the threads of a warp, holding neighbouring
 * atoms of a cell-sorted array, read mostly the same candidates.
 * The local list (the bulk of the pairs) is column-major: slot s of atom i
 * at s * stride + i. Stored as found, each lane's store would touch a
 * sector of its own. Instead each lane keeps its latest HXG_RING slots in
 * `ring` (this warp's HXG_RING x 32 ints), and after every row the warp
 * stores the slots that every lane has filled, one coalesced line per slot.
 * A lane that gets loc.ring slots ahead of the slowest one stores the rest
 * of its list directly (from slot `direct` on). Every lane of the warp
 * calls this together; lanes that do not walk (on false) only take part in
 * the warp's reductions. ihome: i is a home atom (and active). */
__device__ __forceinline__ void
hxg_walk_thread(int i, bool on, bool ihome, int nhome, float3 xi, const int ci[3], unsigned mi,
                const float4 *__restrict__ xsort, const uint8_t *__restrict__ zones,
                const hxg_cellgrid &cg_, const hxg_geom &g, float rh2,
                const int32_t *__restrict__ start, bool indexed, hxg_list loc, hxg_list nl, int nlr,
                int32_t (*ring)[32], hxg_tstate &s)
{
    const int lane = threadIdx.x & 31;
    const size_t ls = (size_t) loc.stride, ns = (size_t) nl.stride;
    const float rhp = hxg_rh_padded(rh2);
    const float3 w = hxg_cell_w(cg_);
    /* (no ring where the walk lists no local pairs: the non-local builds) */
    const uint32_t rl = ring ? (uint32_t) __cvta_generic_to_shared(&ring[0][lane]) : 0u;
    int lim = min(s.flushed + loc.ring, s.direct);
    for (int oz = -HXG_REACH; oz <= HXG_REACH; oz++) {
        const hxg_zrow zr = hxg_row_z(on, xi, ci, oz, w, cg_, g);
        for (int oy = -HXG_REACH; oy <= HXG_REACH; oy++) {
            hxg_seg seg[2];
            hxg_row(zr, xi, ci, oy, w, cg_, g, rhp, start, seg);
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
                    if (!(hxg_d2(xs, xj) < rh2))
                        continue;
                    const int j = indexed ? __float_as_int(xj.w) : k;
                    if (j == i)
                        continue;
                    const bool jhome = j < nhome;
                    if (ihome && jhome) {
                        hxg_put_local(true, i, j, loc, ls, rl, lim, s);
                    } else if (hxg_owned(ihome, jhome, mi, zones, j)) {
                        if (s.nnl < nl.max && nlr >= 0)
                            nl.nb[(size_t) s.nnl * ns + nlr] = j;
                        s.nnl++;
                    }
                }
            }
            hxg_flush_ring(i, ihome, s, loc, ring, lim);
        }
    }
}

/* One row's candidates for hxg_walk_home where every lane's hits fit in
 * its ring (the caller checked: its filled slots plus the row's candidates
 * stay below its limit), so that a hit is one predicated shared store and
 * no lane can go direct. WRAP: some lane's row wraps around the periodic
 * boundary along x; its two segments are walked as one range, segment 0
 * first (the order of every walk), the second shifted by its own image
 * (the segments differ only along x). Without WRAP only segment 0 has
 * candidates. Two candidates are loaded and tested at a time. */
template <bool WRAP>
__device__ __forceinline__ void hxg_row_ring(int i, const hxg_seg seg[2],
                                             const float4 *__restrict__ xsort, float rh2,
                                             uint32_t rl, int &nloc)
{
    const int b0 = seg[0].kbeg, n0 = seg[0].kend - b0;
    const int n = WRAP ? n0 + (seg[1].kend - seg[1].kbeg) : n0;
    const int d1 = seg[1].kbeg - n0; /* candidate q >= n0 is atom q + d1 */
    for (int q = 0; q < n; q += 2) {
        const int q1 = min(q + 1, n - 1);
        const int ka = WRAP && q >= n0 ? q + d1 : q + b0;
        const int kb = WRAP && q1 >= n0 ? q1 + d1 : q1 + b0;
        const float4 a = __ldg(xsort + ka), b = __ldg(xsort + kb);
        float3 xa = seg[0].xs, xb = seg[0].xs;
        if (WRAP) {
            xa.x = q >= n0 ? seg[1].xs.x : xa.x;
            xb.x = q1 >= n0 ? seg[1].xs.x : xb.x;
        }
        const bool ha = hxg_d2(xa, a) < rh2 && ka != i;
        const bool hb = q + 1 < n && hxg_d2(xb, b) < rh2 && kb != i;
        hxg_st_shared_if(ha, rl + ((uint32_t) (nloc & (HXG_RING - 1)) << 7), ka);
        nloc += ha;
        hxg_st_shared_if(hb, rl + ((uint32_t) (nloc & (HXG_RING - 1)) << 7), kb);
        nloc += hb;
    }
}

/* hxg_walk_thread where every atom is a home atom in cell order (one
 * rank's rebuild, and the local list of several ranks): candidate k is atom
 * k, all hits go to the local list, and no zone rule applies. Two
 * candidates are loaded and tested at a time (the second clamped to the
 * segment), then stored in order: the same list as hxg_walk_thread makes,
 * with fewer instructions per candidate, where the build spends its time
 * (Nsight Compute, 2,048,000 atoms: 83 % of the SMs' issue slots). A row
 * whose candidates fit in every lane's ring (nearly all of them) takes
 * hxg_row_ring, which drops the per-hit test for the ring's room that
 * hxg_put_local makes; the segments of a row that wraps along x are walked
 * there as one range, so that a warp holding the boundary walks the row
 * once. */
__device__ void hxg_walk_home(int i, bool on, float3 xi, const int ci[3],
                              const float4 *__restrict__ xsort, const hxg_cellgrid &cg_,
                              const hxg_geom &g, float rh2, const int32_t *__restrict__ start,
                              hxg_list loc, int32_t (*ring)[32], hxg_tstate &s)
{
    const int lane = threadIdx.x & 31;
    const size_t ls = (size_t) loc.stride;
    const float rhp = hxg_rh_padded(rh2);
    const float3 w = hxg_cell_w(cg_);
    const uint32_t rl = (uint32_t) __cvta_generic_to_shared(&ring[0][lane]);
    int lim = min(s.flushed + loc.ring, s.direct);
    for (int oz = -HXG_REACH; oz <= HXG_REACH; oz++) {
        const hxg_zrow zr = hxg_row_z(on, xi, ci, oz, w, cg_, g);
        for (int oy = -HXG_REACH; oy <= HXG_REACH; oy++) {
            hxg_seg seg[2];
            hxg_row(zr, xi, ci, oy, w, cg_, g, rhp, start, seg);
            const int n1 = seg[1].kend - seg[1].kbeg;
            const bool room = s.nloc + (seg[0].kend - seg[0].kbeg) + n1 <= lim;
            if (__all_sync(HXG_FULL, room)) {
                if (__any_sync(HXG_FULL, n1 > 0))
                    hxg_row_ring<true>(i, seg, xsort, rh2, rl, s.nloc);
                else
                    hxg_row_ring<false>(i, seg, xsort, rh2, rl, s.nloc);
            } else {
#pragma unroll
                for (int sgi = 0; sgi < 2; sgi++) {
                    const float3 xs = seg[sgi].xs;
                    const int kend = seg[sgi].kend;
                    for (int k = seg[sgi].kbeg; k < kend; k += 2) {
                        const int k1 = min(k + 1, kend - 1);
                        const float4 a = __ldg(xsort + k), b = __ldg(xsort + k1);
                        const bool ha = hxg_d2(xs, a) < rh2 && k != i;
                        const bool hb = k + 1 < kend && hxg_d2(xs, b) < rh2 && k1 != i;
                        hxg_put_local(ha, i, k, loc, ls, rl, lim, s);
                        hxg_put_local(hb, i, k1, loc, ls, rl, lim, s);
                    }
                }
            }
            hxg_flush_ring(i, on, s, loc, ring, lim);
        }
    }
}

#endif /* HALOX_MD_WALKS_CUH */
