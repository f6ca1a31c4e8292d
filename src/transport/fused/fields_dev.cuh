/*
 * fields_dev.cuh - the field half of a fused coordinate row
 * (fused_fields.h says how it rides with the coordinates). Included by
 * fused_kernels.cu after its helpers fz_hit, fz_wait and fz_wait_deps.
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
    const size_t first = (size_t) P->g.recv_offset;
    for (int f = 0; f < a.fld.n; f++) {
        const hxi_fz_field F = a.fld.f[f];
        const size_t w = (size_t) F.words, total = (size_t) P->g.nrecv * w;
        const uint32_t *src = (const uint32_t *) (a.fld.land + F.land) + first * w;
        uint32_t *dst = (uint32_t *) F.data + first * w;
        for (size_t e = blockIdx.x * (size_t) blockDim.x + threadIdx.x; e < total;
             e += (size_t) gridDim.x * blockDim.x)
            dst[e] = src[e];
    }
}

#endif /* HALOX_FUSED_FIELDS_DEV_CUH */
