/*
 * md_cells.cu - the GPU engine's cell lists: per-cell counts, their scan,
 * each cell's atoms in index order, positions gathered in cell order, and
 * the cell sort of home atoms (the arrays themselves reordered by cell).
 * md_lists.cu builds the neighbour lists from them.
 */
#include "md_cells.cuh"

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

/* The atom count of a launch: n, or where dn is given (a graph replayed
 * over rebuilds, its grid sized for n atoms at most), *dn. */
__device__ __forceinline__ int hxg_count_of(int n, const int32_t *dn)
{
    return dn ? *dn : n;
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

/* One thread per atom: the cell-sorted copy into the scratch arrays. */
__global__ void hxg_k_permute(hxg_gate gate, int n, const int32_t *dn,
                              const int32_t *__restrict__ perm,
                              const float4 *__restrict__ x4, const float4 *__restrict__ v4,
                              const int64_t *__restrict__ id, float4 *__restrict__ sx4,
                              float4 *__restrict__ sv4, int64_t *__restrict__ sid)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= hxg_count_of(n, dn) || !hxg_open(gate))
        return;
    const int o = perm[k];
    sx4[k] = x4[o];
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

cudaError_t hxg_cell_lists(cudaStream_t s, hxg_flags *flags, int n, const float *x, int xs,
                           int base, hxg_cellgrid cg_, hxg_geom g, int32_t *cell_cnt,
                           int32_t *cell_start, int32_t *cellof, int32_t *cellatoms, float4 *xsort,
                           int32_t *scan_tmp)
{
    const hxg_gate open = {flags, 0, 1, 0, 0, 0};
    cudaError_t err = cudaMemsetAsync(cell_cnt, 0, sizeof(int32_t) * (size_t) cg_.ncell, s);
    if (err != cudaSuccess)
        return err;
    const int nb = hxg_blocks(n > 0 ? n : 1, 256);
    float *xw = const_cast<float *>(x); /* not written without WRAP */
    if (n > 0 && xs == 4)
        hxg_k_cell_count<4, false>
            <<<nb, 256, 0, s>>>(open, n, nullptr, xw, cg_, g, cell_cnt, cellof);
    else if (n > 0)
        hxg_k_cell_count<3, false>
            <<<nb, 256, 0, s>>>(open, n, nullptr, xw, cg_, g, cell_cnt, cellof);
    err = hxg_scan_cells(s, open, cell_cnt, cell_start, cg_.ncell, scan_tmp);
    if (err != cudaSuccess || n <= 0)
        return err;
    hxg_k_cell_fill<<<nb, 256, 0, s>>>(open, n, nullptr, cellof, cell_start, cell_cnt, cellatoms);
    hxg_k_cell_sort<<<hxg_blocks(cg_.ncell, 256), 256, 0, s>>>(open, cg_.ncell, cell_start,
                                                               cellatoms);
    if (xs == 4)
        hxg_k_gather<4><<<nb, 256, 0, s>>>(n, x, base, cellatoms, xsort);
    else
        hxg_k_gather<3><<<nb, 256, 0, s>>>(n, x, base, cellatoms, xsort);
    return cudaGetLastError();
}

cudaError_t hxg_launch_sort(cudaStream_t s, hxg_gate gate, bool wrap, int n, const int32_t *dn,
                            float *x4, float *v4, int64_t *id, float *xold4, float *sx4, float *sv4,
                            int64_t *sid, hxg_cellgrid cg_, hxg_geom g, int32_t *cell_cnt,
                            int32_t *cell_start, int32_t *cellof, int32_t *perm, int32_t *scan_tmp)
{
    const int nb = hxg_blocks(n > 0 ? n : 1, 256);
    if (wrap)
        hxg_k_cell_count<4, true><<<nb, 256, 0, s>>>(gate, n, dn, x4, cg_, g, cell_cnt, cellof);
    else
        hxg_k_cell_count<4, false><<<nb, 256, 0, s>>>(gate, n, dn, x4, cg_, g, cell_cnt, cellof);
    cudaError_t err = hxg_scan_cells(s, gate, cell_cnt, cell_start, cg_.ncell, scan_tmp);
    if (err != cudaSuccess)
        return err;
    hxg_k_cell_fill<<<nb, 256, 0, s>>>(gate, n, dn, cellof, cell_start, cell_cnt, perm);
    hxg_k_cell_sort<<<hxg_blocks(cg_.ncell, 256), 256, 0, s>>>(gate, cg_.ncell, cell_start, perm);
    hxg_k_permute<<<nb, 256, 0, s>>>(gate, n, dn, perm, (const float4 *) x4, (const float4 *) v4,
                                     id, (float4 *) sx4, (float4 *) sv4, sid);
    hxg_k_adopt<<<nb, 256, 0, s>>>(gate, n, dn, (const float4 *) sx4, (const float4 *) sv4, sid,
                                   (float4 *) x4, (float4 *) xold4, (float4 *) v4, id);
    return cudaGetLastError();
}

extern "C" int hxg_sort_home(void *stream, int n, const int32_t *dn, float *x4, float *v4,
                             int64_t *id, float *xold4, float *sx4, float *sv4, int64_t *sid,
                             hxg_cellgrid cg_, hxg_geom g, int32_t *cell_cnt, int32_t *cell_start,
                             int32_t *cellof, int32_t *perm, int32_t *scan_tmp, hxg_flags *flags)
{
    cudaStream_t s = (cudaStream_t) stream;
    const hxg_gate open = {flags, 0, 1, 0, 0, 0};
    cudaError_t err = cudaMemsetAsync(cell_cnt, 0, sizeof(int32_t) * (size_t) cg_.ncell, s);
    if (err == cudaSuccess)
        err = hxg_launch_sort(s, open, false, n, dn, x4, v4, id, xold4, sx4, sv4, sid, cg_, g,
                              cell_cnt, cell_start, cellof, perm, scan_tmp);
    return (int) err;
}
