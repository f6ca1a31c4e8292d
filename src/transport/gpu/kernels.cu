/*
 * kernels.cu - pack, unpack, wait and byte-exchange kernels shared by the
 * GPU transports, with their C launchers. Index arithmetic is done on the host; these only
 * move floats.
 */
#include "transport/gpu/gpu_dev.cuh"
#include "transport/gpu/pack_dev.cuh"
#include "transport/gpu/kernels.h"

#include <cstdint>
#include <cstring>

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
                           const int *__restrict__ map, int n, hxi_fshift shift)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        hxi_dev_pack_one(dst, x, map, i, shift);
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

/* The rebuild's byte exchange with peers reached by load/store, each
 * message a row of blocks (blockIdx.y): the row copies the message's
 * words from src into the peer's landing buffer (16 bytes a thread where
 * both are aligned to 16), the row's last block (hxi_last_block, on the
 * message's counter) publishes with one st.release.sys of the value into
 * the peer's signal, and thread 0 of the row's block 0 then waits, bounded,
 * for our own signal: kernels after this one on the stream read what the
 * peers sent. Both directions of a migration go in one launch, where one
 * launch each waited for the other. */
struct hxi_xchg_direct_args {
    hxi_xchg_direct_msg m[HXI_XCHG_DIRECT_MAX];
    int vec[HXI_XCHG_DIRECT_MAX];
};

__global__ void hxi_k_xchg_direct(const hxi_xchg_direct_args a, int *d_hit, hxi_gpu_timeout *rec)
{
    static_assert(HXI_XCHG_DIRECT_MAX == 2, "a row picks its message by a select");
    const hxi_xchg_direct_msg m = blockIdx.y == 0 ? a.m[0] : a.m[1];
    const int vec = blockIdx.y == 0 ? a.vec[0] : a.vec[1];
    const uint32_t *__restrict__ src = static_cast<const uint32_t *>(m.src);
    uint32_t *__restrict__ dst = static_cast<uint32_t *>(m.peer_dst);
    const size_t words = m.bytes / 4;
    const size_t first = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t) gridDim.x * blockDim.x;
    const size_t n4 = vec ? words / 4 : 0;
    const uint4 *s4 = reinterpret_cast<const uint4 *>(src);
    uint4 *d4 = reinterpret_cast<uint4 *>(dst);
    for (size_t i = first; i < n4; i += stride)
        d4[i] = s4[i];
    for (size_t i = 4 * n4 + first; i < words; i += stride)
        dst[i] = src[i];
    if (hxi_last_block(m.counter) && threadIdx.x == 0)
        hxi_dev_st_release_sys(m.peer_sig, m.value);
    if (blockIdx.x == 0 && threadIdx.x == 0)
        hxi_dev_wait_eq(m.my_sig, &m.w, d_hit, rec);
}

extern "C" cudaError_t hxi_gpu_xchg_direct(cudaStream_t s, const hxi_xchg_direct_msg *m, int n,
                                           int *d_hit, hxi_gpu_timeout *rec, int max_blocks)
{
    if (n < 1 || n > HXI_XCHG_DIRECT_MAX)
        return cudaErrorInvalidValue;
    hxi_xchg_direct_args a;
    memset(&a, 0, sizeof a);
    size_t want = 1;
    for (int k = 0; k < n; k++) {
        if (m[k].bytes % 4 != 0)
            return cudaErrorInvalidValue;
        a.m[k] = m[k];
        const size_t words = m[k].bytes / 4;
        a.vec[k] = (uintptr_t) m[k].src % 16 == 0 && (uintptr_t) m[k].peer_dst % 16 == 0;
        const size_t items = a.vec[k] ? words / 4 + words % 4 : words;
        const size_t b = (items + HXI_BLOCK - 1) / HXI_BLOCK;
        if (b > want)
            want = b;
    }
    const int cap = max_blocks / n > 1 ? max_blocks / n : 1;
    const int bx = want > (size_t) cap ? cap : (int) want;
    hxi_k_xchg_direct<<<dim3(bx, n), HXI_BLOCK, 0, s>>>(a, d_hit, rec);
    return cudaGetLastError();
}

extern "C" cudaError_t hxi_gpu_pack(cudaStream_t s, float *dst, const float *x, const int *map,
                                    int n, hxi_fshift shift, int max_blocks)
{
    if (n <= 0)
        return cudaSuccess;
    hxi_k_pack<<<hxi_blocks(n, max_blocks), HXI_BLOCK, 0, s>>>(dst, x, map, n, shift);
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
