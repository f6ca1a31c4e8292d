/*
 * fields_kernels.h - launchers of the kernels of the device field exchange
 * (gpu/fields_kernels.cu, driven by gpu/fields_dev.c). Callable from C.
 * Each returns the launch's cudaError_t.
 */
#ifndef HALOX_GPU_FIELDS_KERNELS_H
#define HALOX_GPU_FIELDS_KERNELS_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types as the kernels read them (the values of hx_ftype). */
enum { HXI_FDEV_FLOAT = 1, HXI_FDEV_DOUBLE = 2, HXI_FDEV_INT32 = 3 };

/* Arrays of one launch: the most a field call names (HX_MAX_FIELDS). */
enum { HXI_FDEV_MAX = 32 };

/* One array of a pulse's message: a device array of `width` values of
 * `type` per atom, and where its block starts in the staging buffer (a
 * multiple of 8 bytes). */
typedef struct hxi_fdev_arr {
    void *data;
    int32_t type;
    int32_t width;
    uint64_t off;
} hxi_fdev_arr;

/* stage[block of a[k]][i] = a[k].data[map[i]] for i < n, every array at
 * once (a row of blocks each): a pulse's values packed by its map. */
cudaError_t hxi_fdev_gather(cudaStream_t s, void *stage, const hxi_fdev_arr *a, int na,
                            const int *map, int n);

/* a[k].data[map[i]] += stage[block of a[k]][i] for i < n, in each array's
 * type (int32 wraps modulo 2^32). A pulse's map holds each atom at most
 * once, so the adds need no atomics and their order is fixed. */
cudaError_t hxi_fdev_add(cudaStream_t s, const void *stage, const hxi_fdev_arr *a, int na,
                         const int *map, int n);

#ifdef __cplusplus
}
#endif

#endif /* HALOX_GPU_FIELDS_KERNELS_H */
