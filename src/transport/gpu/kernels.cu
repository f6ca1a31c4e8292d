/*
 * kernels.cu - pack, unpack and wait kernels shared by the GPU transports,
 * with their C launchers. Index arithmetic is done on the host; these only
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
