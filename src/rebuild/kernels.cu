/*
 * kernels.cu - the device rebuild's kernels: migration (classify with the
 * scan of its counts, then place-and-pack, unpack), the plan's pulses
 * (count, with the home atoms' check in the first pulse; place, with the
 * summary the host reads; receive), share masks and the census. Thin
 * extern "C" launchers; all decisions and bookkeeping are the host's
 * (rebuild.c, plan_device.c). Every kernel runs HXR_BLOCK threads per
 * block; none waits for another block, so any grid size is safe.
 *
 * Stable compaction in two launches: per block counts of each class, and
 * the last block to finish (hxi_last_block) scans the counts over blocks;
 * then each block ranks its atoms within the block (a block-wide exclusive
 * scan) and adds the block's offset: atoms keep their order inside each
 * class. A launch costs the host microseconds, so whatever can ride on
 * one of these two passes (a check, a copy, the last block's summary and
 * its publication to the host) does.
 */
#include "rebuild/box_dev.cuh" /* hxr_wrap, hxr_wrap_tilted, hxr_class */
#include "rebuild/rebuild.h"
#include "transport/gpu/gpu_dev.cuh"  /* hxi_last_block */
#include "transport/gpu/pack_dev.cuh" /* hxi_dev_load_shifted */

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <cstring>

typedef cub::BlockScan<int, HXR_BLOCK> hxr_bscan;

static inline int hxr_grid(long long n)
{
    return (int) ((n + HXR_BLOCK - 1) / HXR_BLOCK);
}

extern "C" int hxr_blocks(long long n)
{
    return hxr_grid(n > 0 ? n : 1);
}

/* Lowest bad atom wins; its kind and dimension go with it (set after the
 * index, so a later, lower index may overwrite them: the host reads them
 * after the kernel, and re-reads the atom itself for the message). */
__device__ void hxr_report_bad(hxr_result *res, int i, int kind, int dim)
{
    if (atomicMin(&res->bad_index, i) > i) {
        res->bad_kind = kind;
        res->bad_dim = dim;
    }
}

__device__ void hxr_clear(hxr_result *res)
{
    int32_t *w = reinterpret_cast<int32_t *>(res);
    for (int k = threadIdx.x; k < (int) (sizeof(hxr_result) / 4); k += blockDim.x)
        w[k] = 0;
    __syncthreads();
    if (threadIdx.x == 0)
        res->bad_index = INT_MAX;
}

__global__ void hxr_k_reset(hxr_result *res)
{
    hxr_clear(res);
}

/* The end of the last kernel before the host reads the result: the block
 * copies it into pub (mapped pinned host memory; the host reads it once
 * the stream has drained) and clears it for the next use, so that neither
 * the copy nor the clearing costs a launch of its own. Every thread of the
 * block calls this. */
__device__ void hxr_publish(hxr_result *res, hxr_result *pub)
{
    __syncthreads();
    const int32_t *w = reinterpret_cast<const int32_t *>(res);
    int32_t *p = reinterpret_cast<int32_t *>(pub);
    for (int k = threadIdx.x; k < (int) (sizeof(hxr_result) / 4); k += blockDim.x)
        p[k] = w[k];
    __syncthreads();
    hxr_clear(res);
    __threadfence_system();
}

/* ------------------------------------------------------------ migration */

/* Block counts each thread of hxr_scan_counts takes at a time, and the
 * classes it scans at most. A block's counts of its classes are one word,
 * 10 bits a class (a block has fewer than 1,024 atoms), so that one load
 * brings all of them: one round trip to L2 for every class, and the
 * registers of one class (the last block of the class kernel holds them,
 * and the kernel's occupancy pays for its registers). */
#define HXR_SCAN_RUN 16
#define HXR_MAX_CLS  3
static_assert(HXR_BLOCK < 1024, "a class count of a block in 10 bits (hxr_k_classify's block "
                                "counts, hxr_k_pack's ranks within a block)");

__device__ __forceinline__ int hxr_cls_count(int word, int c)
{
    return (word >> (10 * c)) & 1023;
}

/* One block (the last of a counting grid): exclusive scan of each class's
 * block counts (bcnt: a word a block, hxr_cls_count) over nb blocks into
 * boff (stride ncls); totals into res->count; then,
 * with pub, the result is published. Each thread loads a run of
 * HXR_SCAN_RUN consecutive blocks' counts at once, so that one block-wide
 * scan covers HXR_SCAN_RUN x HXR_BLOCK blocks (a million atoms) instead of
 * HXR_BLOCK, each behind its own loads from L2: the whole grid waits for
 * this block. The counts are read past L1, which may hold no other block's
 * writes. */
__device__ void hxr_scan_counts(int nb, int ncls, const int32_t *bcnt, int32_t *boff,
                                hxr_result *res, hxr_result *pub)
{
    __shared__ typename hxr_bscan::TempStorage tmp;
    int carry[HXR_MAX_CLS] = {0};
    for (int b0 = 0; b0 < nb; b0 += HXR_BLOCK * HXR_SCAN_RUN) {
        const int first = b0 + (int) threadIdx.x * HXR_SCAN_RUN;
        int v[HXR_SCAN_RUN];
#pragma unroll
        for (int k = 0; k < HXR_SCAN_RUN; k++)
            v[k] = first + k < nb ? __ldcg(bcnt + first + k) : 0;
#pragma unroll
        for (int c = 0; c < HXR_MAX_CLS; c++) {
            if (c >= ncls)
                break;
            int run = 0;
#pragma unroll
            for (int k = 0; k < HXR_SCAN_RUN; k++)
                run += hxr_cls_count(v[k], c);
            int off, sum;
            hxr_bscan(tmp).ExclusiveSum(run, off, sum);
            __syncthreads(); /* tmp is used again */
            off += carry[c];
#pragma unroll
            for (int k = 0; k < HXR_SCAN_RUN; k++) {
                if (first + k < nb)
                    boff[ncls * (first + k) + c] = off;
                off += hxr_cls_count(v[k], c);
            }
            carry[c] += sum;
        }
    }
    if (threadIdx.x == 0)
        for (int c = 0; c < ncls; c++)
            res->count[c] = carry[c];
    if (pub)
        hxr_publish(res, pub);
}

/* One thread per atom: class 0 (stays), 1 (to the lower neighbour) or 2
 * (to the upper one) along d.dim; counts per class and block. With wrap
 * (the first pass), every position is first wrapped into the box (all
 * three dimensions) and checked against every decomposed dimension: an
 * atom more than a hop away along any of them is reported, as is a
 * non-finite position, and counted as staying. */
__global__ void __launch_bounds__(HXR_BLOCK, 4)
    hxr_k_classify(hxr_layout L, int n, hxr_dom d, int wrap, int32_t *cls, int32_t *bcnt,
                   int32_t *boff, int *counter, hxr_result *res, hxr_result *pub)
{
    __shared__ int32_t cnt[3];
    if (threadIdx.x < 3)
        cnt[threadIdx.x] = 0;
    __syncthreads();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    int c = -1; /* past the end */
    if (i < n) {
        float *p = L.x + (size_t) i * L.xs;
        float v[3];
        if (L.xs == 4 && (reinterpret_cast<uintptr_t>(L.x) & 15) == 0) {
            const float4 q = *reinterpret_cast<const float4 *>(p);
            v[0] = q.x, v[1] = q.y, v[2] = q.z;
        } else {
            v[0] = p[0], v[1] = p[1], v[2] = p[2];
        }
        c = 0;
        const bool finite = isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
        if (!finite) {
            hxr_report_bad(res, i, HXR_BAD_NAN, -1);
        } else if (wrap && d.tri) {
            const bool moved = hxr_wrap_tilted(d, v);
#pragma unroll
            for (int k = 0; k < 3; k++) {
                const hxr_dim1 dk = hxr_dim_of(d, k);
                if (moved)
                    p[k] = v[k];
                if (dk.grid > 1 && hxr_class(hxr_height3(dk.n0, dk.n1, dk.n2, v), dk) < 0)
                    hxr_report_bad(res, i, HXR_BAD_FAR, k);
            }
        } else if (wrap) {
#pragma unroll
            for (int k = 0; k < 3; k++) {
                const hxr_dim1 dk = hxr_dim_of(d, k);
                if ((double) v[k] < dk.box_lo || (double) v[k] >= dk.box_lo + dk.box_len) {
                    v[k] = hxr_wrap(v[k], dk.box_lo, dk.box_len);
                    p[k] = v[k];
                }
                if (dk.grid > 1 && hxr_class((double) v[k], dk) < 0)
                    hxr_report_bad(res, i, HXR_BAD_FAR, k);
            }
        }
        if (finite && d.dim >= 0) {
            const hxr_dim1 dd = hxr_dim_of(d, d.dim);
            const double x = d.tri ? hxr_height3(dd.n0, dd.n1, dd.n2, v)
                                   : (double) (d.dim == 0 ? v[0] : (d.dim == 1 ? v[1] : v[2]));
            c = max(hxr_class(x, dd), 0);
        }
        cls[i] = c;
    }
    /* A warp's count of each class, one shared add each: every atom of a
     * block adding to one count (nearly all stay) would queue. */
    for (int k = 0; k < 3; k++) {
        const unsigned b = __ballot_sync(0xffffffffu, c == k);
        if ((threadIdx.x & 31) == 0 && b)
            atomicAdd(&cnt[k], __popc(b));
    }
    __syncthreads();
    if (threadIdx.x == 0)
        bcnt[blockIdx.x] = cnt[0] | cnt[1] << 10 | cnt[2] << 20;
    if (hxi_last_block(counter))
        hxr_scan_counts(gridDim.x, 3, bcnt, boff, res, pub);
}

/* Word k of atom a's record. */
__device__ __forceinline__ uint32_t *hxr_word(const hxr_layout &L, long long a, int k)
{
    if (k < L.xs)
        return reinterpret_cast<uint32_t *>(L.x) + a * L.xs + k;
    k -= L.xs;
    for (int f = 0; f < L.nf; f++) {
        if (k < L.f[f].words)
            return reinterpret_cast<uint32_t *>(L.f[f].data) + a * L.f[f].words + k;
        k -= L.f[f].words;
    }
    return nullptr; /* not reached: k < L.words */
}

/* Record words a thread of hxr_k_pack loads before it stores them. */
#define HXR_PACK_RUN 4

/* The blocks of hxr_k_classify (whose block offsets boff holds), one
 * launch: each atom's slot within its class, in order (one block-wide scan
 * of the three classes' counts, 10 bits each), then the block's records,
 * one thread per word, into the buffer of each atom's class at its slot.
 * Leavers whose slot lies at or past their buffer's room (room_down,
 * room_up records) are not written: the host, which learns the counts
 * after this kernel, grows the buffer and packs again. Without stay the
 * stayers are not copied; with holes, holes[r] is the index of the r-th
 * leaver of either class (ascending), for hxr_k_fill. */
__global__ void hxr_k_pack(hxr_layout L, int n, const int32_t *cls, const int32_t *bcnt,
                           const int32_t *boff, uint32_t *stay, uint32_t *down, uint32_t *up,
                           int room_down, int room_up, int32_t *holes)
{
    /* Without stayers to copy, a block with no leaver has nothing to do:
     * most of them, as the atoms that leave lie near the domain's faces,
     * together in a cell-sorted array. */
    if (!stay) {
        const int bc = __ldg(bcnt + blockIdx.x);
        if (hxr_cls_count(bc, 1) + hxr_cls_count(bc, 2) == 0)
            return;
    }
    __shared__ typename hxr_bscan::TempStorage tmp;
    __shared__ int32_t slot[HXR_BLOCK];
    __shared__ int8_t cl[HXR_BLOCK];
    const int base = blockIdx.x * HXR_BLOCK, i = base + threadIdx.x;
    const int c = i < n ? cls[i] : -1;
    int off;
    hxr_bscan(tmp).ExclusiveSum(c >= 0 ? 1 << (10 * c) : 0, off);
    if (c >= 0) {
        slot[threadIdx.x] = boff[3 * blockIdx.x + c] + hxr_cls_count(off, c);
        cl[threadIdx.x] = (int8_t) c;
    }
    if (holes && c > 0)
        holes[boff[3 * blockIdx.x + 1] + boff[3 * blockIdx.x + 2] + hxr_cls_count(off, 1) +
              hxr_cls_count(off, 2)] = i;
    __syncthreads();
    /* HXR_PACK_RUN words a thread at a time: their loads all go out before
     * the first store, where one word at a time waited a round trip to
     * memory for each (a block has L.words of them a thread). */
    const unsigned words = (unsigned) L.words, na = (unsigned) min(HXR_BLOCK, n - base);
    const unsigned total = na * words;
    for (unsigned w0 = threadIdx.x; w0 < total; w0 += HXR_PACK_RUN * HXR_BLOCK) {
        uint32_t val[HXR_PACK_RUN], *dst[HXR_PACK_RUN];
#pragma unroll
        for (int j = 0; j < HXR_PACK_RUN; j++) {
            const unsigned w = w0 + (unsigned) j * HXR_BLOCK;
            dst[j] = nullptr;
            if (w >= total)
                continue;
            const unsigned a = w / words, k = w - a * words;
            const int c = cl[a];
            if (c == 0 ? !stay : slot[a] >= (c == 1 ? room_down : room_up))
                continue;
            uint32_t *buf = c == 0 ? stay : (c == 1 ? down : up);
            dst[j] = buf + (long long) slot[a] * words + k;
            val[j] = *hxr_word(L, (long long) base + a, (int) k);
        }
#pragma unroll
        for (int j = 0; j < HXR_PACK_RUN; j++)
            if (dst[j])
                *dst[j] = val[j];
    }
}

/* One thread per record word: records back into the arrays, from three
 * buffers in turn. */
__global__ void hxr_k_unpack(hxr_layout L, int n0, const uint32_t *a, int n1, const uint32_t *b,
                             int n2, const uint32_t *c)
{
    const unsigned w = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned n = (unsigned) n0 + (unsigned) n1 + (unsigned) n2;
    if (w >= n * (unsigned) L.words)
        return;
    const long long at = w / (unsigned) L.words;
    const int k = (int) (w - (unsigned) at * (unsigned) L.words);
    const uint32_t *src;
    if (at < n0)
        src = a + at * L.words;
    else if (at < n0 + n1)
        src = b + (at - n0) * L.words;
    else
        src = c + (at - n0 - n1) * L.words;
    *hxr_word(L, at, k) = src[k];
}

/* Leavers' indices below v in holes (ascending, nh of them). */
__device__ __forceinline__ int hxr_below(const int32_t *holes, int nh, int v)
{
    int lo = 0, hi = nh;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (__ldg(holes + mid) < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One thread per record word: the migration without order (hxr_fill).
 * Items: the atoms at n1 .. n0 - 1 (where n1 < n0), whose stayers move
 * into the leavers' places below n1, then the arrivals (nb from b, na
 * from a), which fill the leavers' places left below n1 in order, then
 * n0, n0 + 1, ... Sources and destinations never overlap. */
__global__ void hxr_k_fill(hxr_layout L, int n0, int n1, const int32_t *cls, const int32_t *holes,
                           int nh, int nb, const uint32_t *b, int na, const uint32_t *a)
{
    const unsigned w = blockIdx.x * blockDim.x + threadIdx.x;
    const int nmove = n0 > n1 ? n0 - n1 : 0;
    const unsigned items = (unsigned) nmove + (unsigned) nb + (unsigned) na;
    if (w >= items * (unsigned) L.words)
        return;
    const int q = (int) (w / (unsigned) L.words);
    const int k = (int) (w - (unsigned) q * (unsigned) L.words);
    const int below = hxr_below(holes, nh, n1); /* leavers' places to fill */
    long long dst;
    uint32_t v;
    if (q < nmove) {
        const int p = n1 + q;
        if (cls[p] != 0)
            return; /* a leaver: its record has gone */
        /* Stayers at or past n1 before p, in order: the (n1 - below)
         * stayers under n1 come first among all stayers. */
        const int r = (p - hxr_below(holes, nh, p)) - (n1 - below);
        dst = __ldg(holes + r);
        v = *hxr_word(L, p, k);
    } else {
        const int e = q - nmove; /* arrival e */
        const int r = (nmove - (nh - below)) + e;
        dst = r < below ? (long long) __ldg(holes + r) : (long long) n0 + (r - below);
        v = e < nb ? b[(long long) e * L.words + k] : a[(long long) (e - nb) * L.words + k];
    }
    *hxr_word(L, dst, k) = v;
}

/* ----------------------------------------------------------------- plan */

/* The checks of hx_plan_create of home atom i at p (finite, inside the
 * box, inside the domain; the first bad atom into res). */
__device__ __forceinline__ void hxr_check_home(const hxr_pdom &d, int i, const float *p,
                                               hxr_result *res)
{
#pragma unroll
    for (int k = 0; k < 3; k++) {
        const double v =
            d.tri ? hxr_height3(d.normal[k][0], d.normal[k][1], d.normal[k][2], p) : (double) p[k];
        if (!isfinite(p[k]))
            hxr_report_bad(res, i, HXR_BAD_NAN, -1);
        else if (v < d.lo[k] || v >= d.hi[k] || v < d.box_lo[k] || v >= d.box_hi[k])
            hxr_report_bad(res, i, HXR_BAD_OUTSIDE, k);
    }
}

/* Whether the candidate at p (3 floats) is sent: the one rule of the count
 * and the place passes. Orthorhombic: its coordinate along the dimension,
 * widened to double, below the limit (above it for dir +1); triclinic:
 * its height. */
__device__ __forceinline__ bool hxr_selected(const float *p, const hxr_sel &s)
{
    const double v =
        s.tri ? hxr_height3(s.normal[0], s.normal[1], s.normal[2], p) : (double) p[s.dim];
    return s.dir < 0 ? v < s.limit : v > s.limit;
}

/* The zone word z with byte dim moved by -dir (modulo 256, that byte
 * alone: an offset is a signed byte), as core/plan.c moves it. */
__device__ __forceinline__ uint32_t hxr_zone_step(uint32_t z, int dim, int dir)
{
    const int sh = 8 * dim;
    const uint32_t b = ((z >> sh) - (uint32_t) dir) & 0xffu;
    return (z & ~(0xffu << sh)) | (b << sh);
}

/* Home atom i: checked, and copied into the plan's arrays with zone 0.
 * Returns its position (3 floats). */
__device__ const float *hxr_home_atom(const hxr_home_in &h, int i, float *px, hxr_result *res)
{
    const float *p = h.x + (size_t) i * h.xs;
    for (int k = 0; k < 3; k++)
        px[3 * (size_t) i + k] = p[k];
    hxr_check_home(h.dom, i, p, res);
    h.pz[i] = 0u;
    return p;
}

/* One thread per home atom: hxr_home_atom (a plan without pulses). */
__global__ void hxr_k_home(hxr_home_in h, int nhome, float *px, hxr_result *res)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nhome)
        hxr_home_atom(h, i, px, res);
}

/* One thread per home atom, in whatever order they are: checked, and
 * counted where the first pulse selects it (into res->count[0]); the last
 * block keeps the position of the lowest bad atom (bad_pos: the caller
 * may reorder the atoms before the host reads it) and publishes. */
__global__ void hxr_k_first_count(hxr_home_in h, int nhome, hxr_sel sel, int *counter,
                                  hxr_result *res, hxr_result *pub)
{
    typedef cub::BlockReduce<int, HXR_BLOCK> reduce;
    __shared__ typename reduce::TempStorage tmp;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = 0;
    if (i < nhome) {
        const float *p = h.x + (size_t) i * h.xs;
        hxr_check_home(h.dom, i, p, res);
        v = hxr_selected(p, sel) ? 1 : 0;
    }
    const int sum = reduce(tmp).Sum(v);
    if (threadIdx.x == 0 && sum > 0)
        atomicAdd(&res->count[0], sum);
    if (!hxi_last_block(counter))
        return;
    const int bad = __ldcg(&res->bad_index);
    if (bad != INT_MAX && threadIdx.x < 3)
        res->bad_pos[threadIdx.x] = h.x[(size_t) bad * h.xs + threadIdx.x];
    hxr_publish(res, pub);
}

/* One thread per candidate: selected candidates per block; the last block
 * scans the counts (total into res->count[0]). With h.x (the first
 * pulse, whose candidates are the home atoms), each candidate is first
 * checked and copied (hxr_home_atom). */
__global__ void hxr_k_select_count(hxr_home_in h, float *px, int lo, int hi, hxr_sel sel,
                                   int32_t *bcnt, int32_t *boff, int *counter, hxr_result *res)
{
    typedef cub::BlockReduce<int, HXR_BLOCK> reduce;
    __shared__ typename reduce::TempStorage tmp;
    const int i = lo + blockIdx.x * blockDim.x + threadIdx.x;
    int v = 0;
    if (i < hi) {
        const float *c = h.x ? hxr_home_atom(h, i, px, res) : px + 3 * (size_t) i;
        v = hxr_selected(c, sel) ? 1 : 0;
    }
    const int sum = reduce(tmp).Sum(v);
    if (threadIdx.x == 0)
        bcnt[blockIdx.x] = sum;
    if (hxi_last_block(counter))
        hxr_scan_counts(gridDim.x, 1, bcnt, boff, res, nullptr);
}

/* Map entries before candidate b (b in [lo, hi]), read past L1: other
 * blocks of the grid wrote them. A block that selected none wrote no
 * running count: before each of its candidates lie its offset's entries. */
__device__ __forceinline__ int hxr_before(const int32_t *spos, const int32_t *bcnt,
                                          const int32_t *boff, int lo, int hi, int total, int b)
{
    b = b < lo ? lo : (b > hi ? hi : b);
    if (b == hi)
        return total;
    const int blk = (b - lo) / HXR_BLOCK;
    return __ldcg(bcnt + blk) == 0 ? __ldcg(boff + blk) : __ldcg(spos + (b - lo));
}

/* One thread per candidate: its place in the map (home atoms come first:
 * candidates are in index order), the record sent, and the running count
 * (spos, the map entries before this candidate), except in blocks that
 * selected none (bcnt: the count kernel's per block), which only take
 * part in the election of the last block: in a cell-sorted array the
 * atoms near a face lie together, so most blocks select none. The last block to finish
 * then counts the selected home atoms and those from each earlier pulse's
 * receive range, sets *recount where the total is not the `expect` of a
 * count taken ahead (expect >= 0), and publishes the result (res->count[0],
 * the total, is already set). */
__global__ void hxr_k_select_place(const float *px, const uint32_t *pz, int lo, int hi, hxr_sel s,
                                   hxi_fshift shift, const int32_t *bcnt, const int32_t *boff,
                                   int32_t *map, int32_t *spos, float4 *send, int nhome, int np,
                                   hxr_ranges r, int expect, int32_t *recount, int *counter,
                                   hxr_result *res, hxr_result *pub)
{
    __shared__ typename hxr_bscan::TempStorage tmp;
    const int i = lo + blockIdx.x * blockDim.x + threadIdx.x;
    const bool some = __ldg(bcnt + blockIdx.x) != 0; /* the whole block alike */
    const bool sel = some && i < hi && hxr_selected(px + 3 * (size_t) i, s);
    int off = 0;
    if (some)
        hxr_bscan(tmp).ExclusiveSum(sel ? 1 : 0, off);
    if (some && i < hi) {
        const int at = boff[blockIdx.x] + off;
        spos[i - lo] = at;
        if (sel) {
            map[at] = i;
            float v0, v1, v2; /* shifted in float, as the GPU transports pack */
            hxi_dev_load_shifted(px, i, shift, v0, v1, v2);
            const uint32_t z = hxr_zone_step(pz[i], s.dim, s.dir);
            send[at] = make_float4(v0, v1, v2, __uint_as_float(z));
        }
    }
    if (!hxi_last_block(counter))
        return;
    const int total = res->count[0], q = threadIdx.x;
    if (q == 0)
        res->nsel_home = hxr_before(spos, bcnt, boff, lo, hi, total, nhome);
    if (q == 0 && expect >= 0 && total != expect)
        *(volatile int32_t *) recount = 1; /* made visible by the publication's fence */
    if (q < np)
        res->from[q] = hxr_before(spos, bcnt, boff, lo, hi, total, r.end[q]) -
                       hxr_before(spos, bcnt, boff, lo, hi, total, r.beg[q]);
    hxr_publish(res, pub);
}

/* One thread per received atom. */
__global__ void hxr_k_receive(const float4 *recv, int n, int at, float *px, uint32_t *pz)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float4 v = recv[i];
    const size_t o = (size_t) (at + i);
    px[3 * o] = v.x;
    px[3 * o + 1] = v.y;
    px[3 * o + 2] = v.z;
    pz[o] = __float_as_uint(v.w);
}

/* One thread per map entry: its pulse's bit on the atom (an atom is at most
 * once in a map, but in several maps: atomic). */
__global__ void hxr_k_mask_set(const int32_t *map, int n, int bit, unsigned long long *mask)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicOr(&mask[map[i]], 1ull << bit);
}

struct hxr_or {
    __device__ __forceinline__ unsigned long long operator()(unsigned long long a,
                                                             unsigned long long b) const
    {
        return a | b;
    }
};

/* One thread per map entry: the OR of the pulses on its atoms. */
__global__ void hxr_k_mask_or(const int32_t *map, int n, int bit, const unsigned long long *mask,
                              hxr_result *res)
{
    typedef cub::BlockReduce<unsigned long long, HXR_BLOCK> reduce;
    __shared__ typename reduce::TempStorage tmp;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long m = reduce(tmp).Reduce(i < n ? mask[map[i]] : 0ull, hxr_or());
    if (threadIdx.x == 0 && m)
        atomicOr(&res->share[bit], m);
}

/* ---------------------------------------------------------------- census */

/* splitmix64: a well-mixed hash, so that a sum of hashed ids changes when
 * an atom is lost or duplicated (a plain sum can be balanced by another
 * error). */
__device__ __forceinline__ unsigned long long hxr_hash(unsigned long long z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

__global__ void hxr_k_census(const int64_t *ids, int n, hxr_result *res)
{
    typedef cub::BlockReduce<unsigned long long, HXR_BLOCK> reduce;
    __shared__ typename reduce::TempStorage tmp;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long h = i < n ? hxr_hash((unsigned long long) ids[i]) : 0ull;
    const unsigned long long sum = reduce(tmp).Sum(h);
    if (threadIdx.x == 0) {
        atomicAdd(&res->census[0],
                  (unsigned long long) min(HXR_BLOCK, n - (int) blockIdx.x * HXR_BLOCK));
        atomicAdd(&res->census[1], sum);
    }
}

/* ------------------------------------------------------------ launchers */

#define HXR_S(stream) ((cudaStream_t) (stream))

extern "C" int hxr_reset(void *stream, hxr_result *res)
{
    hxr_k_reset<<<1, HXR_BLOCK, 0, HXR_S(stream)>>>(res);
    return (int) cudaGetLastError();
}

extern "C" int hxr_classify(void *stream, hxr_layout L, int n, hxr_dom dom, int wrap, int32_t *cls,
                            int32_t *bcnt, int32_t *boff, int *counter, hxr_result *res,
                            hxr_result *pub)
{
    hxr_k_classify<<<hxr_blocks(n), HXR_BLOCK, 0, HXR_S(stream)>>>(L, n, dom, wrap, cls, bcnt, boff,
                                                                   counter, res, pub);
    return (int) cudaGetLastError();
}

extern "C" int hxr_pack(void *stream, hxr_layout L, int n, const int32_t *cls, const int32_t *bcnt,
                        const int32_t *boff, uint32_t *stay, uint32_t *down, uint32_t *up,
                        int room_down, int room_up, int32_t *holes)
{
    if (n > 0)
        hxr_k_pack<<<hxr_blocks(n), HXR_BLOCK, 0, HXR_S(stream)>>>(
            L, n, cls, bcnt, boff, stay, down, up, room_down, room_up, holes);
    return (int) cudaGetLastError();
}

extern "C" int hxr_fill(void *stream, hxr_layout L, int n0, int n1, const int32_t *cls,
                        const int32_t *holes, int nh, int nb, const uint32_t *b, int na,
                        const uint32_t *a)
{
    const long long items = (long long) (n0 > n1 ? n0 - n1 : 0) + nb + na;
    if (items * L.words >= 4294967296LL)
        return (int) cudaErrorInvalidValue;
    if (items > 0)
        hxr_k_fill<<<hxr_grid(items * L.words), HXR_BLOCK, 0, HXR_S(stream)>>>(
            L, n0, n1, cls, holes, nh, nb, b, na, a);
    return (int) cudaGetLastError();
}

extern "C" int hxr_unpack(void *stream, hxr_layout L, int n0, const uint32_t *a, int n1,
                          const uint32_t *b, int n2, const uint32_t *c)
{
    const long long n = (long long) n0 + n1 + n2;
    if (n * L.words >= 4294967296LL)
        return (int) cudaErrorInvalidValue;
    if (n > 0)
        hxr_k_unpack<<<hxr_grid(n * L.words), HXR_BLOCK, 0, HXR_S(stream)>>>(L, n0, a, n1, b, n2,
                                                                             c);
    return (int) cudaGetLastError();
}

extern "C" int hxr_home(void *stream, hxr_home_in h, int nhome, float *px, hxr_result *res)
{
    if (nhome > 0)
        hxr_k_home<<<hxr_blocks(nhome), HXR_BLOCK, 0, HXR_S(stream)>>>(h, nhome, px, res);
    return (int) cudaGetLastError();
}

extern "C" int hxr_first_count(void *stream, hxr_home_in h, int nhome, hxr_sel sel, int *counter,
                               hxr_result *res, hxr_result *pub)
{
    hxr_k_first_count<<<hxr_blocks(nhome), HXR_BLOCK, 0, HXR_S(stream)>>>(h, nhome, sel, counter,
                                                                          res, pub);
    return (int) cudaGetLastError();
}

extern "C" int hxr_select_count(void *stream, const hxr_home_in *home, float *px, int lo, int hi,
                                hxr_sel sel, int32_t *bcnt, int32_t *boff, int *counter,
                                hxr_result *res)
{
    hxr_home_in h;
    if (home)
        h = *home;
    else
        memset(&h, 0, sizeof h);
    hxr_k_select_count<<<hxr_blocks(hi - lo), HXR_BLOCK, 0, HXR_S(stream)>>>(
        h, px, lo, hi, sel, bcnt, boff, counter, res);
    return (int) cudaGetLastError();
}

extern "C" int hxr_select_place(void *stream, const float *px, const uint32_t *pz, int lo, int hi,
                                hxr_sel sel, hxi_fshift shift, const int32_t *bcnt,
                                const int32_t *boff, int32_t *map, int32_t *spos, float *send,
                                int nhome, int np, hxr_ranges r, int expect, int32_t *recount,
                                int *counter, hxr_result *res, hxr_result *pub)
{
    hxr_k_select_place<<<hxr_blocks(hi - lo), HXR_BLOCK, 0, HXR_S(stream)>>>(
        px, pz, lo, hi, sel, shift, bcnt, boff, map, spos, (float4 *) send, nhome, np, r, expect,
        recount, counter, res, pub);
    return (int) cudaGetLastError();
}

extern "C" int hxr_receive(void *stream, const float *recv, int n, int at, float *px, uint32_t *pz)
{
    if (n > 0)
        hxr_k_receive<<<hxr_blocks(n), HXR_BLOCK, 0, HXR_S(stream)>>>((const float4 *) recv, n, at,
                                                                      px, pz);
    return (int) cudaGetLastError();
}

extern "C" int hxr_mask_set(void *stream, const int32_t *map, int n, int bit,
                            unsigned long long *mask)
{
    if (n > 0)
        hxr_k_mask_set<<<hxr_blocks(n), HXR_BLOCK, 0, HXR_S(stream)>>>(map, n, bit, mask);
    return (int) cudaGetLastError();
}

extern "C" int hxr_mask_or(void *stream, const int32_t *map, int n, int bit,
                           const unsigned long long *mask, hxr_result *res)
{
    if (n > 0)
        hxr_k_mask_or<<<hxr_blocks(n), HXR_BLOCK, 0, HXR_S(stream)>>>(map, n, bit, mask, res);
    return (int) cudaGetLastError();
}

extern "C" int hxr_census(void *stream, const int64_t *ids, int n, hxr_result *res)
{
    if (n > 0)
        hxr_k_census<<<hxr_blocks(n), HXR_BLOCK, 0, HXR_S(stream)>>>(ids, n, res);
    return (int) cudaGetLastError();
}
