/*
 * kernels.cu - pack, unpack, wait and byte-exchange kernels shared by the
 * GPU transports, with their C launchers. Index arithmetic is done on the host; these only
 * move floats.
 */
#include "transport/gpu/gpu_dev.cuh"
#include "transport/gpu/kernels.h"

#define HXI_BLOCK 256

static int hxi_blocks(int n, int max_blocks)
{
    int b = (n + HXI_BLOCK - 1) / HXI_BLOCK;
    if (max_blocks > 0 && b > max_blocks)
        b = max_blocks;
    return b < 1 ? 1 : b;
}

/* Coordinate pack. Grid-stride over atoms, one thread per atom; no
 * signalling and no ordering beyond the kernel boundary: the caller's
 * stream (or an explicit sync) publishes dst. */
__global__ void hxi_k_pack(float *__restrict__ dst, const float *__restrict__ x,
                           const int *__restrict__ map, int n, int dim, float shift)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float *s = x + 3 * (size_t) map[i];
        float v0 = s[0], v1 = s[1], v2 = s[2];
        if (dim == 0)
            v0 += shift;
        else if (dim == 1)
            v1 += shift;
        else
            v2 += shift;
        float *d = dst + 3 * (size_t) i;
        d[0] = v0;
        d[1] = v1;
        d[2] = v2;
    }
}

/* Force unpack. Grid-stride, one thread per received atom; the map of one
 * pulse has distinct entries, so plain read-modify-write is race free. */
__global__ void hxi_k_unpack_add(float *__restrict__ f, const float *__restrict__ src,
                                 const int *__restrict__ map, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float *d = f + 3 * (size_t) map[i];
        const float *s = src + 3 * (size_t) i;
        d[0] += s[0];
        d[1] += s[1];
        d[2] += s[2];
    }
}

/* Stream-ordered signal wait. One block of one thread: spins with relaxed
 * system-scope loads, acquires once the signal equals the step, and gives
 * up (recording who waited for what) after the timeout. Kernels after it on
 * the stream see the peer's data through the acquire and the kernel
 * boundary. */
__global__ void hxi_k_wait_signal(const uint64_t *sig, hxi_gpu_wait_info w, int *d_hit,
                                  hxi_gpu_timeout *rec)
{
    hxi_dev_wait_eq(sig, &w, d_hit, rec);
}

/* The rebuild's byte exchange with a peer reached by load/store: the grid
 * copies `words` 4-byte words from src into the peer's landing buffer dst
 * (16 bytes a thread where both are aligned to 16), the last block
 * (hxi_last_block) publishes with one st.release.sys of `value` into the
 * peer's signal, and thread 0 of block 0 then waits, bounded, for our own
 * signal: kernels after this one on the stream read what the peer sent. */
__global__ void hxi_k_xchg_direct(const uint32_t *__restrict__ src, uint32_t *__restrict__ dst,
                                  size_t words, int vec, uint64_t *peer_sig, uint64_t value,
                                  int *counter, const uint64_t *my_sig, hxi_gpu_wait_info w,
                                  int *d_hit, hxi_gpu_timeout *rec)
{
    const size_t first = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t) gridDim.x * blockDim.x;
    const size_t n4 = vec ? words / 4 : 0;
    const uint4 *s4 = reinterpret_cast<const uint4 *>(src);
    uint4 *d4 = reinterpret_cast<uint4 *>(dst);
    for (size_t i = first; i < n4; i += stride)
        d4[i] = s4[i];
    for (size_t i = 4 * n4 + first; i < words; i += stride)
        dst[i] = src[i];
    if (hxi_last_block(counter) && threadIdx.x == 0)
        hxi_dev_st_release_sys(peer_sig, value);
    if (blockIdx.x == 0 && threadIdx.x == 0)
        hxi_dev_wait_eq(my_sig, &w, d_hit, rec);
}

extern "C" cudaError_t hxi_gpu_xchg_direct(cudaStream_t s, const void *src, void *peer_dst,
                                           size_t bytes, uint64_t *peer_sig, uint64_t value,
                                           int *counter, const uint64_t *my_sig,
                                           hxi_gpu_wait_info w, int *d_hit, hxi_gpu_timeout *rec,
                                           int max_blocks)
{
    if (bytes % 4 != 0)
        return cudaErrorInvalidValue;
    const size_t words = bytes / 4;
    const int vec = (uintptr_t) src % 16 == 0 && (uintptr_t) peer_dst % 16 == 0;
    const size_t items = vec ? words / 4 + words % 4 : words;
    const size_t want = (items + HXI_BLOCK - 1) / HXI_BLOCK;
    int blocks = want > (size_t) max_blocks ? max_blocks : (int) want;
    if (blocks < 1)
        blocks = 1;
    hxi_k_xchg_direct<<<blocks, HXI_BLOCK, 0, s>>>(
        (const uint32_t *) src, (uint32_t *) peer_dst, words, vec, peer_sig, value, counter,
        my_sig, w, d_hit, rec);
    return cudaGetLastError();
}

extern "C" cudaError_t hxi_gpu_pack(cudaStream_t s, float *dst, const float *x, const int *map,
                                    int n, int dim, float shift, int max_blocks)
{
    if (n <= 0)
        return cudaSuccess;
    hxi_k_pack<<<hxi_blocks(n, max_blocks), HXI_BLOCK, 0, s>>>(dst, x, map, n, dim, shift);
    return cudaGetLastError();
}

extern "C" cudaError_t hxi_gpu_unpack_add(cudaStream_t s, float *f, const float *src,
                                          const int *map, int n, int max_blocks)
{
    if (n <= 0)
        return cudaSuccess;
    hxi_k_unpack_add<<<hxi_blocks(n, max_blocks), HXI_BLOCK, 0, s>>>(f, src, map, n);
    return cudaGetLastError();
}

extern "C" cudaError_t hxi_gpu_wait_signal(cudaStream_t s, const uint64_t *sig, hxi_gpu_wait_info w,
                                           int *d_hit, hxi_gpu_timeout *rec)
{
    hxi_k_wait_signal<<<1, 1, 0, s>>>(sig, w, d_hit, rec);
    return cudaGetLastError();
}
