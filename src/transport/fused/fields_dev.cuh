/*
 * fields_dev.cuh - the field half of a fused coordinate row and of a
 * fused force row (fused_fields.h says how they ride with the coordinates
 * and the forces). Included by fused_kernels.cu after its helpers fz_hit,
 * fz_wait and fz_wait_deps.
 */
#ifndef HALOX_FUSED_FIELDS_DEV_CUH
#define HALOX_FUSED_FIELDS_DEV_CUH

/* The sending side of row p: warps take chunks of 32 map entries
 * round-robin over the row, as the plain coordinate row does; a chunk
 * with entries an earlier pulse delivered waits for that pulse's signal
 * first (its values are then in our landing buffer). Each lane stores its
 * entry's words of every field at the entry's place in send_rank's
 * landing buffer (peer_offset + i). Ends with a block barrier, so that
 * the coordinate row's arrival on the pulse counter comes after every
 * store here. */
static __device__ void fz_fields_row(const hxi_fz_args &a, const hxi_fz_pulse *P, int p,
                                     uint64_t step)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int n = P->g.nsend, nh = P->g.nsend_home, nchunks = (n + 31) / 32;
    const int *map = a.maps + P->g.map_offset;
    char *peer = a.fld.peer_land[p];
    uint32_t seen = 0;
    for (int k = blockIdx.x * HXI_FZ_WARPS + warp; k < nchunks; k += gridDim.x * HXI_FZ_WARPS) {
        const int c0 = 32 * k, c1 = min(n, c0 + 32);
        if (c1 > nh && !fz_wait_deps(a, P, step, max(c0, nh), c1, &seen))
            break;
        const int i = c0 + lane;
        if (i >= c1)
            continue;
        const size_t j = (size_t) map[i], at = (size_t) P->g.peer_offset + (size_t) i;
        for (int f = 0; f < a.fld.n; f++) {
            const hxi_fz_field F = a.fld.f[f];
            const uint32_t *src = j < (size_t) a.fld.nhome
                                      ? (const uint32_t *) F.data
                                      : (const uint32_t *) (a.fld.land + F.land);
            uint32_t *dst = (uint32_t *) (peer + F.land) + at * (size_t) F.words;
            src += j * (size_t) F.words;
            for (int w = 0; w < F.words; w++)
                dst[w] = src[w];
        }
    }
    __syncthreads();
}

/* Every field's entries [first, first + count) between the caller's
 * arrays and our landing buffer (the same places in both), word by word
 * over the row's threads (tid of nthr): into the arrays (a forward's
 * delivery) or out of them (a reverse's halo values). */
static __device__ void fz_fields_move(const hxi_fz_args &a, size_t first, int count, bool to_land,
                                      size_t tid, size_t nthr)
{
    for (int f = 0; f < a.fld.n; f++) {
        const hxi_fz_field F = a.fld.f[f];
        const size_t w = (size_t) F.words, total = (size_t) count * w;
        uint32_t *arr = (uint32_t *) F.data + first * w;
        uint32_t *land = (uint32_t *) (a.fld.land + F.land) + first * w;
        const uint32_t *src = to_land ? arr : land;
        uint32_t *dst = to_land ? land : arr;
        for (size_t e = tid; e < total; e += nthr)
            dst[e] = src[e];
    }
}

/* The receiving side of row p, every block of the row: thread 0 waits for
 * the pulse's signal (block 0 has already), then the blocks copy their
 * share of [recv_offset, recv_offset + nrecv) of every field from the
 * landing buffer into the arrays. Nothing after a timed-out wait. */
static __device__ void fz_fields_land(const hxi_fz_args &a, const hxi_fz_pulse *P, int p,
                                      uint64_t step)
{
    __shared__ int s_ok;
    if (threadIdx.x == 0)
        s_ok = !fz_hit(a) &&
               (blockIdx.x == 0 || fz_wait(a, a.sig + p, step, p, P->g.dim, 0, P->g.recv_rank));
    __syncthreads();
    if (!s_ok)
        return;
    fz_fields_move(a, (size_t) P->g.recv_offset, P->g.nrecv, false,
                   blockIdx.x * (size_t) blockDim.x + threadIdx.x, (size_t) gridDim.x * blockDim.x);
}

/* Reverse, the sending side of pulse p (we hold its halo, for
 * recv_rank): after the waits that let us send its forces, the row's
 * threads copy the halo values [recv_offset, recv_offset + nrecv) of
 * every field into our landing buffer, where recv_rank reads them once
 * the pulse's force signal is released (after every block's stores). */
static __device__ void fz_fields_stage(const hxi_fz_args &a, const hxi_fz_pulse *P, int tid,
                                       int nthr)
{
    fz_fields_move(a, (size_t) P->g.recv_offset, P->g.nrecv, true, (size_t) tid, (size_t) nthr);
}

/* dst[map[i]][c] += src[i][c] for i < n, c < w: a pulse's map holds each
 * atom at most once, so no two threads add into one value. */
template <typename T>
static __device__ void fz_field_add(T *dst, const T *src, const int *map, int n, size_t w,
                                    size_t tid, size_t nthr)
{
    const size_t total = (size_t) n * w;
    for (size_t e = tid; e < total; e += nthr)
        dst[(size_t) map[e / w] * w + e % w] += src[e];
}

/* Reverse, the receiving side of pulse p (our map entries, from
 * send_rank), after the pulse's force signal and the unpacks of later
 * pulses that share atoms: every field's values that send_rank staged for
 * this pulse, read from its landing buffer at peer_offset + i (where the
 * forward stored), added by the map in the field's type (int32 as uint32:
 * it wraps where a signed sum would overflow), as the forces are. */
static __device__ void fz_fields_add(const hxi_fz_args &a, const hxi_fz_pulse *P, int p, int tid,
                                     int nthr)
{
    const int *map = a.maps + P->g.map_offset;
    const int n = P->g.nsend;
    const size_t first = (size_t) P->g.peer_offset;
    for (int f = 0; f < a.fld.n; f++) {
        const hxi_fz_field F = a.fld.f[f];
        const char *src = a.fld.peer_land[p] + F.land + 4 * (size_t) F.words * first;
        if (F.type == HXI_FZF_DOUBLE)
            fz_field_add<double>((double *) F.data, (const double *) src, map, n,
                                 (size_t) F.words / 2, tid, nthr);
        else if (F.type == HXI_FZF_FLOAT)
            fz_field_add<float>((float *) F.data, (const float *) src, map, n, (size_t) F.words,
                                tid, nthr);
        else
            fz_field_add<uint32_t>((uint32_t *) F.data, (const uint32_t *) src, map, n,
                                   (size_t) F.words, tid, nthr);
    }
}

#endif /* HALOX_FUSED_FIELDS_DEV_CUH */
