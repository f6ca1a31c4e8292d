/*
 * shm_api.h - the NVSHMEM host calls the nvshmem transports make, as plain
 * C functions. NVSHMEM's own headers are C++ only (bool, static_assert,
 * CUDA half types), so the host logic in C reaches NVSHMEM through this
 * thin layer, compiled as CUDA in shm_api.cu. No logic lives there.
 */
#ifndef HALOX_SHM_API_H
#define HALOX_SHM_API_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { HXI_SHM_UID_BYTES = 128 };
/* NVSHMEM init status values (nvshmemx_init_status_t). */
enum { HXI_SHM_LIMITED_MPG = 3, HXI_SHM_FULL_MPG = 4 };

int hxi_shm_api_uid_bytes(void);
int hxi_shm_api_get_uid(void *uid);
/* Unique-ID bootstrap; returns NVSHMEM's status (0: success). Never exits. */
int hxi_shm_api_init(int rank, int nranks, const void *uid);
int hxi_shm_api_status(void);
void hxi_shm_api_finalize(void);
int hxi_shm_api_my_pe(void);
int hxi_shm_api_n_pes(void);
void *hxi_shm_api_malloc(size_t bytes);
void hxi_shm_api_free(void *p);
void *hxi_shm_api_ptr(const void *p, int pe);
void hxi_shm_api_barrier_all(void);
void hxi_shm_api_put_signal_on_stream(float *dest, const float *src, size_t nelems, uint64_t *sig,
                                      uint64_t value, int pe, cudaStream_t s);
void hxi_shm_api_quiet_on_stream(cudaStream_t s);
/* bytes from src into dest on pe, then sig on pe set to value (stream-ordered). */
void hxi_shm_api_putmem_signal_on_stream(void *dest, const void *src, size_t bytes, uint64_t *sig,
                                         uint64_t value, int pe, cudaStream_t s);
/* sig on pe set to value (stream-ordered). */
void hxi_shm_api_signal_on_stream(uint64_t *sig, uint64_t value, int pe, cudaStream_t s);
void hxi_shm_api_versions(int *major, int *minor, int *patch);

#ifdef __cplusplus
}
#endif

#endif /* HALOX_SHM_API_H */
