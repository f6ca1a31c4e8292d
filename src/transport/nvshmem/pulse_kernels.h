/*
 * pulse_kernels.h - launchers of the nvshmem-pulse kernels (nvshmem/pulse_kernels.cu).
 */
#ifndef HALOX_SHM_PULSE_KERNELS_H
#define HALOX_SHM_PULSE_KERNELS_H

#include "transport/gpu/gpu_types.h"

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One pulse in one direction. Coordinates: `out` atoms gathered from src
 * through map (with the shift) go to pe; `in` atoms are awaited. Forces:
 * `out` atoms read contiguously from src go to pe's force slot; `in`
 * atoms are awaited in inbox and added into f through map. */
typedef struct hxi_shm_pulse_args {
    const float *src;
    const int *map;
    float *f;
    const float *inbox;
    int32_t nout, nin;
    int32_t dim;
    hxi_fshift shift;
    float *direct_dst;    /* peer memory (nvshmem_ptr), or NULL for the put path */
    uint64_t *direct_sig; /* the peer's signal slot, when direct_dst is set */
    float *stage;         /* forward put path: local symmetric slot to pack into */
    float *put_dst;       /* put path: symmetric address of the destination */
    uint64_t *put_sig;    /* put path: symmetric address of the signal slot */
    int32_t pe;
    int32_t pad_;
    const uint64_t *my_sig; /* local slot the incoming signal lands in */
    int *counter;           /* device counter for the last-block election */
    uint64_t value;         /* the step's signal value */
    hxi_gpu_wait_info wait;
    int *d_hit;
    hxi_gpu_timeout *rec;
} hxi_shm_pulse_args;

cudaError_t hxi_shm_pulse_forward(cudaStream_t s, const hxi_shm_pulse_args *a, int blocks);
cudaError_t hxi_shm_pulse_reverse(cudaStream_t s, const hxi_shm_pulse_args *a, int blocks);

#ifdef __cplusplus
}
#endif

#endif /* HALOX_SHM_PULSE_KERNELS_H */
