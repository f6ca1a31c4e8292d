/*
 * md_cells.cu - the GPU engine's cell lists: per-cell counts, their scan,
 * each cell's atoms in index order, positions gathered in cell order, and
 * the cell sort of home atoms (the arrays themselves reordered by cell).
 * md_lists.cu builds the neighbour lists from them.
 */
#include "md_cells.cuh"

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

/* The atom count of a launch: n, or where dn is given (a graph replayed
 * over rebuilds, its grid sized for n atoms at most), *dn. */
__device__ __forceinline__ int hxg_count_of(int n, const int32_t *dn)
{
    return dn ? *dn : n;
}

/* p moved by whole edges of a triclinic box until its heights lie within
 * the box (an edge moves no other dimension's height, so the three are
 * counted from p as it is). A height that rounding leaves a hair outside
 * is clamped into the edge cell by hxg_cell_of. */
__device__ __forceinline__ float3 hxg_wrap_tilted(float3 p, const hxg_geom &g)
{
    const float ma = floorf((hxg_height(p, g, 0) - g.face_lo[0]) / g.height[0]);
    const float mb = floorf((hxg_height(p, g, 1) - g.face_lo[1]) / g.height[1]);
    const float mc = floorf((hxg_height(p, g, 2) - g.face_lo[2]) / g.height[2]);
    p.x -= ma * g.box_len[0] + mb * g.per_tilt[0] + mc * g.per_tilt[1];
    p.y -= mb * g.box_len[1] + mc * g.per_tilt[2];
    p.z -= mc * g.box_len[2];
    return p;
}

/* One thread per atom: its cell, and a count per cell (atomic). WRAP (the
 * single-rank rebuild, XS 4): x is first wrapped into the box; a
 * non-finite coordinate is reported (flags->bad) and parked at the box
 * origin, so that the build stays in bounds. */
template <int XS, bool WRAP>
__global__ void hxg_k_cell_count(hxg_gate gate, int n, const int32_t *dn, float *__restrict__ x,
                                 hxg_cellgrid cg_, hxg_geom g, int32_t *__restrict__ cnt,
                                 int32_t *__restrict__ cellof)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= hxg_count_of(n, dn) || !hxg_open(gate))
        return;
    float3 p = hxg_load<XS, false>(x, i);
    if (WRAP) {
        if (!isfinite(p.x) || !isfinite(p.y) || !isfinite(p.z)) {
            gate.flags->bad = 1;
            p = make_float3(g.box_lo[0], g.box_lo[1], g.box_lo[2]);
        }
        if (g.tri) {
            p = hxg_wrap_tilted(p, g);
        } else {
            p.x -= g.box_len[0] * floorf((p.x - g.box_lo[0]) / g.box_len[0]);
            p.y -= g.box_len[1] * floorf((p.y - g.box_lo[1]) / g.box_len[1]);
            p.z -= g.box_len[2] * floorf((p.z - g.box_lo[2]) / g.box_len[2]);
        }
        float4 *q = reinterpret_cast<float4 *>(x) + i;
        *q = make_float4(p.x, p.y, p.z, q->w);
    }
    const int c = hxg_cell_of(hxg_heights(p, g), cg_);
    cellof[i] = c;
    atomicAdd(&cnt[c], 1);
}

/* The cell scan in one launch (a decoupled look-back scan): block b takes
 * chunk b of HXG_SCAN_CHUNK cells in the order the blocks start (a ticket,
 * so that every chunk before it belongs to a block already running),
 * publishes the chunk's sum, then walks back over the chunks before it
 * (a warp, 32 chunks at a time), adding their sums until it meets one that
 * has published its inclusive prefix, publishes its own and writes its
 * cells' starts (the last chunk also the total, start[n]). A status word
 * holds a flag and a value together, so one 64-bit store publishes both.
 * The last block to finish clears what the launch used (statuses, ticket,
 * exit count), so that the scratch is all zeros again for the next scan.
 * One launch where there were three (chunks, their sums, the offsets):
 * each launch in a graph costs the GPU a fixed time, a large part of a
 * small system's scan (docs/performance.md, "The cell scan in one
 * launch"). */
#define HXG_SCAN_PER   4                     /* cells a thread */
#define HXG_SCAN_CHUNK (1024 * HXG_SCAN_PER) /* cells a block of 1,024 threads */
#define HXG_SCAN_AGG   (1ull << 32)          /* flag: the chunk's sum */
#define HXG_SCAN_INCL  (2ull << 32)          /* flag: the inclusive prefix through the chunk */

/* The scratch of a scan: nb status words, then the ticket and the exit
 * count (HXG_MAX_SCAN_BLOCKS - 1 status words fit in scan_tmp). */
struct hxg_scan_ws {
    unsigned long long *status;
    unsigned *ticket, *exits;
};

__device__ __forceinline__ hxg_scan_ws hxg_scan_ws_of(int32_t *scan_tmp)
{
    unsigned long long *w = reinterpret_cast<unsigned long long *>(scan_tmp);
    hxg_scan_ws ws = {w, reinterpret_cast<unsigned *>(w + HXG_MAX_SCAN_BLOCKS - 1),
                      reinterpret_cast<unsigned *>(w + HXG_MAX_SCAN_BLOCKS - 1) + 1};
    return ws;
}

__device__ __forceinline__ unsigned long long hxg_ld_volatile(const unsigned long long *p)
{
    return *reinterpret_cast<const volatile unsigned long long *>(p);
}

/* A thread's HXG_SCAN_PER counts of its chunk (len cells from cell beg),
 * from cell c0 of the chunk on: one 16-byte load where vec (the four whole and aligned),
 * else one by one, zeros past the chunk. */
__device__ __forceinline__ void hxg_scan_load(const int32_t *__restrict__ cnt, int beg, int c0,
                                              int len, bool vec, int32_t v[HXG_SCAN_PER])
{
    if (vec) {
        const int4 q = __ldg(reinterpret_cast<const int4 *>(cnt + beg + c0));
        v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
    } else {
#pragma unroll
        for (int k = 0; k < HXG_SCAN_PER; k++)
            v[k] = c0 + k < len ? cnt[beg + c0 + k] : 0;
    }
}

/* The same thread's starts, stored as hxg_scan_load loaded its counts. */
__device__ __forceinline__ void hxg_scan_store(int32_t *__restrict__ start, int beg, int c0,
                                               int len, bool vec, const int32_t e[HXG_SCAN_PER])
{
    if (vec) {
        *reinterpret_cast<int4 *>(start + beg + c0) = make_int4(e[0], e[1], e[2], e[3]);
    } else {
#pragma unroll
        for (int k = 0; k < HXG_SCAN_PER; k++)
            if (c0 + k < len)
                start[beg + c0 + k] = e[k];
    }
}

__global__ void __launch_bounds__(1024)
    hxg_k_scan(hxg_gate gate, const int32_t *__restrict__ cnt, int32_t *__restrict__ start, int n,
               int nb, int32_t *scan_tmp)
{
    if (!hxg_open(gate))
        return;
    __shared__ int32_t wsum[32];
    __shared__ int s_b, s_off;
    const hxg_scan_ws ws = hxg_scan_ws_of(scan_tmp);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nw = blockDim.x >> 5;
    if (tid == 0)
        s_b = (int) atomicAdd(ws.ticket, 1u);
    __syncthreads();
    const int b = s_b;
    const int beg = b * HXG_SCAN_CHUNK, len = min(HXG_SCAN_CHUNK, n - beg);
    /* Each thread's four cells and their sum (one 16-byte load where the
     * four are whole and aligned: the loads of a thread are all in flight
     * at once, where a loop over them waited for each in turn); the sums
     * scanned over the block, warp by warp, then the warps' totals by the
     * first warp. */
    const int c0 = HXG_SCAN_PER * tid;
    const uintptr_t at =
        reinterpret_cast<uintptr_t>(cnt + beg + c0) | reinterpret_cast<uintptr_t>(start + beg + c0);
    const bool vec = c0 + HXG_SCAN_PER <= len && at % 16 == 0;
    int32_t v[HXG_SCAN_PER];
    hxg_scan_load(cnt, beg, c0, len, vec, v);
    int32_t mine = 0;
#pragma unroll
    for (int k = 0; k < HXG_SCAN_PER; k++)
        mine += v[k];
    int32_t incl = mine;
    for (int o = 1; o < 32; o <<= 1) {
        const int32_t y = __shfl_up_sync(HXG_FULL, incl, o);
        if (lane >= o)
            incl += y;
    }
    if (lane == 31)
        wsum[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        int32_t t = lane < nw ? wsum[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            const int32_t y = __shfl_up_sync(HXG_FULL, t, o);
            if (lane >= o)
                t += y;
        }
        wsum[lane] = t;
    }
    __syncthreads();
    if (warp == 0) {
        const int32_t agg = wsum[nw - 1];
        int32_t off = 0;
        if (b == 0) {
            if (lane == 0)
                atomicExch(ws.status, HXG_SCAN_INCL | (unsigned) agg);
        } else {
            if (lane == 0)
                atomicExch(ws.status + b, HXG_SCAN_AGG | (unsigned) agg);
            /* The warp reads 32 chunks at a time, lane l chunk j - l: once
             * each has published, the sums up to the nearest inclusive one
             * are this chunk's offset; with none in the window, the window
             * moves on. Every chunk before b has a running block, so each
             * publishes; one thread reading one chunk at a time took up to
             * a round trip to L2 per chunk while all of them ran at once. */
            for (int j = b - 1;; j -= 32) {
                const int k = j - lane;
                unsigned long long w = k >= 0 ? hxg_ld_volatile(ws.status + k) : HXG_SCAN_INCL;
                while (__any_sync(HXG_FULL, !(w >> 32)))
                    if (!(w >> 32))
                        w = hxg_ld_volatile(ws.status + k);
                const unsigned incl = __ballot_sync(HXG_FULL, (w & HXG_SCAN_INCL) != 0);
                const int stop = incl ? __ffs(incl) - 1 : 31;
                off += (int32_t) __reduce_add_sync(HXG_FULL, lane <= stop ? (unsigned) w : 0u);
                if (incl)
                    break;
            }
            if (lane == 0)
                atomicExch(ws.status + b, HXG_SCAN_INCL | (unsigned) (off + agg));
        }
        if (lane == 0) {
            s_off = off;
            if (b == nb - 1)
                start[n] = off + agg;
        }
    }
    __syncthreads();
    int32_t e[HXG_SCAN_PER];
    e[0] = s_off + (warp > 0 ? wsum[warp - 1] : 0) + incl - mine;
#pragma unroll
    for (int k = 1; k < HXG_SCAN_PER; k++)
        e[k] = e[k - 1] + v[k - 1];
    hxg_scan_store(start, beg, c0, len, vec, e);
    /* The last block out clears the scratch (every other block has done
     * its look-back by then). */
    __shared__ int s_last;
    __syncthreads();
    if (tid == 0) {
        __threadfence();
        s_last = atomicAdd(ws.exits, 1u) == (unsigned) nb - 1;
    }
    __syncthreads();
    if (s_last) {
        for (int k = tid; k < nb; k += blockDim.x)
            ws.status[k] = 0ull;
        if (tid == 0) {
            *ws.ticket = 0u;
            *ws.exits = 0u;
        }
    }
}

/* One thread per atom: a slot in its cell taken from the top by an atomic
 * decrement, which also leaves every count at zero for the next build. */
__global__ void hxg_k_cell_fill(hxg_gate gate, int n, const int32_t *dn,
                                const int32_t *__restrict__ cellof,
                                const int32_t *__restrict__ start, int32_t *cnt,
                                int32_t *__restrict__ cellatoms)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= hxg_count_of(n, dn) || !hxg_open(gate))
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

/* One thread per cell-list slot: the positions in cell order, each with
 * its atom's index plus base in w (the bits of an int), so that the build reads each
 * row's candidates, and the index of a hit, from consecutive memory. */
template <int XS>
__global__ void hxg_k_gather(int n, const float *__restrict__ x, int base,
                             const int32_t *__restrict__ cellatoms, float4 *__restrict__ xsort)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n)
        return;
    const int i = cellatoms[k];
    const float3 p = hxg_load<XS>(x, i);
    xsort[k] = make_float4(p.x, p.y, p.z, __int_as_float(i + base));
}

/* ------------------------------------------------ cell sort of home atoms */

/* One thread per atom: the cell-sorted copy into the scratch arrays (and,
 * with xold4, the positions of this build: the caller then takes the
 * scratch arrays as its own instead of copying them back). */
__global__ void hxg_k_permute(hxg_gate gate, int n, const int32_t *dn,
                              const int32_t *__restrict__ perm, const float4 *__restrict__ x4,
                              const float4 *__restrict__ v4, const int64_t *__restrict__ id,
                              float4 *__restrict__ sx4, float4 *__restrict__ sv4,
                              int64_t *__restrict__ sid, float4 *__restrict__ xold4)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= hxg_count_of(n, dn) || !hxg_open(gate))
        return;
    const int o = perm[k];
    const float4 p = x4[o];
    sx4[k] = p;
    if (xold4)
        xold4[k] = p;
    sv4[k] = v4[o];
    sid[k] = id[o];
}

/* One thread per atom: the sorted atoms back into the arrays the step
 * kernels (and captured graphs) use, and the positions of this build. */
__global__ void hxg_k_adopt(hxg_gate gate, int n, const int32_t *dn, const float4 *__restrict__ sx4,
                            const float4 *__restrict__ sv4, const int64_t *__restrict__ sid,
                            float4 *__restrict__ x4, float4 *__restrict__ xold4,
                            float4 *__restrict__ v4, int64_t *__restrict__ id)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= hxg_count_of(n, dn) || !hxg_open(gate))
        return;
    const float4 p = sx4[k];
    x4[k] = p;
    xold4[k] = p;
    v4[k] = sv4[k];
    id[k] = sid[k];
}

/* ------------------------------------------------------------ launchers */

cudaError_t hxg_scan_cells(cudaStream_t s, hxg_gate gate, const int32_t *cnt, int32_t *start,
                           int ncell, int32_t *scan_tmp)
{
    const int nb = ncell > 0 ? (ncell + HXG_SCAN_CHUNK - 1) / HXG_SCAN_CHUNK : 1;
    if (nb > HXG_MAX_SCAN_BLOCKS - 1)
        return cudaErrorInvalidValue;
    hxg_k_scan<<<nb, 1024, 0, s>>>(gate, cnt, start, ncell, nb, scan_tmp);
    return cudaGetLastError();
}

extern "C" int hxg_scan(void *stream, const int32_t *cnt, int32_t *start, int n, int32_t *scan_tmp)
{
    const hxg_gate open = {nullptr, 0, 1, 0, 0, 0};
    return (int) hxg_scan_cells((cudaStream_t) stream, open, cnt, start, n, scan_tmp);
}

cudaError_t hxg_cell_lists(cudaStream_t s, hxg_flags *flags, int n, const float *x, int xs,
                           int base, hxg_geom g, const hxg_cells_view &c)
{
    const hxg_gate open = {flags, 0, 1, 0, 0, 0};
    const hxg_cellgrid &cg_ = c.grid;
    float4 *xsort = reinterpret_cast<float4 *>(c.xsort);
    cudaError_t err = cudaMemsetAsync(c.cnt, 0, sizeof(int32_t) * (size_t) cg_.ncell, s);
    if (err != cudaSuccess)
        return err;
    const int nb = hxg_blocks(n > 0 ? n : 1, 256);
    float *xw = const_cast<float *>(x); /* not written without WRAP */
    if (n > 0 && xs == 4)
        hxg_k_cell_count<4, false>
            <<<nb, 256, 0, s>>>(open, n, nullptr, xw, cg_, g, c.cnt, c.cellof);
    else if (n > 0)
        hxg_k_cell_count<3, false>
            <<<nb, 256, 0, s>>>(open, n, nullptr, xw, cg_, g, c.cnt, c.cellof);
    err = hxg_scan_cells(s, open, c.cnt, c.start, cg_.ncell, c.scan_tmp);
    if (err != cudaSuccess || n <= 0)
        return err;
    hxg_k_cell_fill<<<nb, 256, 0, s>>>(open, n, nullptr, c.cellof, c.start, c.cnt, c.atoms);
    hxg_k_cell_sort<<<hxg_blocks(cg_.ncell, 256), 256, 0, s>>>(open, cg_.ncell, c.start, c.atoms);
    if (xs == 4)
        hxg_k_gather<4><<<nb, 256, 0, s>>>(n, x, base, c.atoms, xsort);
    else
        hxg_k_gather<3><<<nb, 256, 0, s>>>(n, x, base, c.atoms, xsort);
    return cudaGetLastError();
}

cudaError_t hxg_launch_sort(cudaStream_t s, hxg_gate gate, bool wrap, bool adopt, const int32_t *dn,
                            const hxg_atoms_view &a, const hxg_cells_view &c)
{
    const int n = a.nhome;
    const hxg_cellgrid &cg_ = c.grid;
    const int nb = hxg_blocks(n > 0 ? n : 1, 256);
    if (wrap)
        hxg_k_cell_count<4, true>
            <<<nb, 256, 0, s>>>(gate, n, dn, a.x4, cg_, a.geom, c.cnt, c.cellof);
    else
        hxg_k_cell_count<4, false>
            <<<nb, 256, 0, s>>>(gate, n, dn, a.x4, cg_, a.geom, c.cnt, c.cellof);
    cudaError_t err = hxg_scan_cells(s, gate, c.cnt, c.start, cg_.ncell, c.scan_tmp);
    if (err != cudaSuccess)
        return err;
    hxg_k_cell_fill<<<nb, 256, 0, s>>>(gate, n, dn, c.cellof, c.start, c.cnt, c.atoms);
    hxg_k_cell_sort<<<hxg_blocks(cg_.ncell, 256), 256, 0, s>>>(gate, cg_.ncell, c.start, c.atoms);
    hxg_k_permute<<<nb, 256, 0, s>>>(gate, n, dn, c.atoms, (const float4 *) a.x4,
                                     (const float4 *) a.v4, a.id, (float4 *) a.sx4,
                                     (float4 *) a.sv4, a.sid, adopt ? nullptr : (float4 *) a.xold4);
    if (adopt)
        hxg_k_adopt<<<nb, 256, 0, s>>>(gate, n, dn, (const float4 *) a.sx4, (const float4 *) a.sv4,
                                       a.sid, (float4 *) a.x4, (float4 *) a.xold4, (float4 *) a.v4,
                                       a.id);
    return cudaGetLastError();
}

extern "C" int hxg_sort_home(void *stream, hxg_atoms_view a, hxg_cells_view c, const int32_t *dn,
                             int adopt, hxg_flags *flags)
{
    cudaStream_t s = (cudaStream_t) stream;
    const hxg_gate open = {flags, 0, 1, 0, 0, 0};
    cudaError_t err = cudaMemsetAsync(c.cnt, 0, sizeof(int32_t) * (size_t) c.grid.ncell, s);
    if (err == cudaSuccess)
        err = hxg_launch_sort(s, open, false, adopt != 0, dn, a, c);
    return (int) err;
}
