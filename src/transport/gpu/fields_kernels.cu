/*
 * fields_kernels.cu - the kernels of the device field exchange: a pulse's
 * values of every named array gathered by its map into one staging buffer,
 * and a received buffer added by the map. One launch per pulse covers all
 * the arrays: blockIdx.y picks the array.
 */
#include "transport/gpu/fields_kernels.h"

#include <cstdint>

#define HXI_FDEV_BLOCK      256
#define HXI_FDEV_MAX_BLOCKS 1024

struct hxi_fdev_args {
    hxi_fdev_arr a[HXI_FDEV_MAX];
};

/* Copied as 4-byte words: every type's values are whole words, and the
 * arrays (cudaMalloc) and blocks (8-byte offsets) are word aligned. */
__global__ void hxi_k_fdev_gather(char *stage, const hxi_fdev_args args,
                                  const int *__restrict__ map, int n)
{
    const hxi_fdev_arr a = args.a[blockIdx.y];
    const int w = a.width * (a.type == HXI_FDEV_DOUBLE ? 2 : 1);
    const uint32_t *src = (const uint32_t *) a.data;
    uint32_t *dst = (uint32_t *) (stage + a.off);
    const size_t total = (size_t) n * (size_t) w;
    for (size_t e = blockIdx.x * (size_t) blockDim.x + threadIdx.x; e < total;
         e += (size_t) gridDim.x * blockDim.x) {
        const size_t i = e / (size_t) w, c = e % (size_t) w;
        dst[e] = src[(size_t) map[i] * (size_t) w + c];
    }
}

template <typename T>
__device__ void hxi_fdev_add_one(const hxi_fdev_arr &a, const char *stage, const int *map, int n)
{
    T *dst = (T *) a.data;
    const T *src = (const T *) (stage + a.off);
    const size_t w = (size_t) a.width, total = (size_t) n * w;
    for (size_t e = blockIdx.x * (size_t) blockDim.x + threadIdx.x; e < total;
         e += (size_t) gridDim.x * blockDim.x)
        dst[(size_t) map[e / w] * w + e % w] += src[e];
}

__global__ void hxi_k_fdev_add(const char *stage, const hxi_fdev_args args,
                               const int *__restrict__ map, int n)
{
    const hxi_fdev_arr &a = args.a[blockIdx.y];
    if (a.type == HXI_FDEV_DOUBLE)
        hxi_fdev_add_one<double>(a, stage, map, n);
    else if (a.type == HXI_FDEV_FLOAT)
        hxi_fdev_add_one<float>(a, stage, map, n);
    else /* int32 as uint32: wraps where a signed sum would overflow */
        hxi_fdev_add_one<uint32_t>(a, stage, map, n);
}

/* The launch shape: enough blocks for the widest array's words. */
static cudaError_t hxi_fdev_shape(const hxi_fdev_arr *a, int na, int n, hxi_fdev_args *args,
                                  dim3 *grid)
{
    if (na < 1 || na > HXI_FDEV_MAX || n < 0)
        return cudaErrorInvalidValue;
    size_t words = 0;
    for (int k = 0; k < na; k++) {
        size_t w = (size_t) n * a[k].width * (a[k].type == HXI_FDEV_DOUBLE ? 2 : 1);
        words = w > words ? w : words;
        args->a[k] = a[k];
    }
    size_t bx = (words + HXI_FDEV_BLOCK - 1) / HXI_FDEV_BLOCK;
    *grid = dim3((unsigned) (bx < 1                     ? 1
                             : bx > HXI_FDEV_MAX_BLOCKS ? HXI_FDEV_MAX_BLOCKS
                                                        : bx),
                 (unsigned) na);
    return cudaSuccess;
}

extern "C" cudaError_t hxi_fdev_gather(cudaStream_t s, void *stage, const hxi_fdev_arr *a, int na,
                                       const int *map, int n)
{
    hxi_fdev_args args;
    dim3 grid;
    cudaError_t e = hxi_fdev_shape(a, na, n, &args, &grid);
    if (e != cudaSuccess || n == 0)
        return e;
    hxi_k_fdev_gather<<<grid, HXI_FDEV_BLOCK, 0, s>>>((char *) stage, args, map, n);
    return cudaGetLastError();
}

extern "C" cudaError_t hxi_fdev_add(cudaStream_t s, const void *stage, const hxi_fdev_arr *a,
                                    int na, const int *map, int n)
{
    hxi_fdev_args args;
    dim3 grid;
    cudaError_t e = hxi_fdev_shape(a, na, n, &args, &grid);
    if (e != cudaSuccess || n == 0)
        return e;
    hxi_k_fdev_add<<<grid, HXI_FDEV_BLOCK, 0, s>>>((const char *) stage, args, map, n);
    return cudaGetLastError();
}
