/*
 * md_small.cu - the GPU engine's small kernels beside the step's: the
 * rebuild vote's three one-thread kernels (vote.c), the copy into the
 * transport's arrays, and the home atoms' types for the halo's field
 * exchange (types.c), with their thin extern "C" launchers (md_gpu.h).
 */
#include "md_dev.cuh"

#include <stdint.h>

__global__ void hxg_k_vote_in(const hxg_flags *flags, int32_t *vin)
{
    const volatile hxg_flags *f = flags;
    *vin = f->halt ? -1 : (f->moved_step == f->cur ? 1 : 0);
}

__global__ void hxg_k_vote_out(hxg_flags *flags, const int32_t *vout, hxg_report *report)
{
    volatile hxg_flags *f = flags;
    if (f->halt || !*(const volatile int32_t *) vout)
        return;
    f->halt = 1;
    report->halted = f->cur + 1;
    __threadfence_system();
}

__global__ void hxg_k_set_cur(hxg_flags *flags, long long cur)
{
    flags->cur = cur;
    flags->halt = 0;
}

extern "C" int hxg_vote_in(void *stream, hxg_flags *flags, int32_t *vin)
{
    hxg_k_vote_in<<<1, 1, 0, (cudaStream_t) stream>>>(flags, vin);
    return (int) cudaGetLastError();
}

extern "C" int hxg_vote_out(void *stream, hxg_flags *flags, const int32_t *vout, hxg_report *report)
{
    hxg_k_vote_out<<<1, 1, 0, (cudaStream_t) stream>>>(flags, vout, report);
    return (int) cudaGetLastError();
}

extern "C" int hxg_set_cur(void *stream, hxg_flags *flags, int64_t cur)
{
    hxg_k_set_cur<<<1, 1, 0, (cudaStream_t) stream>>>(flags, (long long) cur);
    return (int) cudaGetLastError();
}

/* dst[0 .. n) = src[0 .. n), or zeros where src is NULL: a kernel instead
 * of cudaMemcpyAsync / cudaMemsetAsync into the transport's arrays, whose
 * calls took the host about twice a launch's time in a rebuild
 * (HALOX_TRACE_API, docs/performance.md). Four floats a thread where both
 * arrays are 16-byte aligned. */
__global__ void hxg_k_copy(long long n, float *__restrict__ dst, const float *__restrict__ src)
{
    const long long stride = (long long) gridDim.x * blockDim.x;
    const long long t = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    const bool v4 = (((uintptr_t) dst | (uintptr_t) src) & 15) == 0;
    const long long n4 = v4 ? n / 4 : 0;
    for (long long k = t; k < n4; k += stride)
        reinterpret_cast<float4 *>(dst)[k] =
            src ? reinterpret_cast<const float4 *>(src)[k] : make_float4(0.f, 0.f, 0.f, 0.f);
    for (long long k = 4 * n4 + t; k < n; k += stride)
        dst[k] = src ? src[k] : 0.0f;
}

extern "C" int hxg_copy(void *stream, float *dst, const float *src, long long n)
{
    if (n <= 0)
        return 0;
    const long long per = 256LL * 4;
    long long nb = (n + per - 1) / per;
    if (nb > 65536)
        nb = 65536;
    hxg_k_copy<<<(unsigned) nb, 256, 0, (cudaStream_t) stream>>>(n, dst, src);
    return (int) cudaGetLastError();
}

/* One thread a home atom (hxg_types_of). */
__global__ void hxg_k_types_of(int n, const float4 *__restrict__ x4, int32_t *__restrict__ type)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        type[i] = __float_as_int(x4[i].w);
}

extern "C" int hxg_types_of(void *stream, const float *x4, int32_t *type, int n)
{
    if (n <= 0)
        return 0;
    hxg_k_types_of<<<hxg_blocks(n, 256), 256, 0, (cudaStream_t) stream>>>(n, (const float4 *) x4,
                                                                          type);
    return (int) cudaGetLastError();
}
