/*
 * kernels.h - launchers of the kernels shared by the GPU transports
 * (gpu/kernels.cu). Callable from C. Each returns the launch's cudaError_t.
 */
#ifndef HALOX_GPU_KERNELS_H
#define HALOX_GPU_KERNELS_H

#include "transport/gpu/gpu_types.h"

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i] = x[map[i]] (3 floats per atom) with `shift` added: the
 * coordinate pack of one pulse. dst may be a peer's memory. */
cudaError_t hxi_gpu_pack(cudaStream_t s, float *dst, const float *x, const int *map, int n,
                         hxi_fshift shift, int max_blocks);

/* f[map[i]] += src[i]: the force unpack of one pulse. A pulse's map holds
 * each atom at most once, so the adds need no atomics; pulses are ordered
 * by the stream. */
cudaError_t hxi_gpu_unpack_add(cudaStream_t s, float *f, const float *src, const int *map, int n,
                               int max_blocks);

/* One thread waits until *sig == w.step, bounded by w.timeout_ns: the
 * stream-ordered wait of the nvshmem-stream transport. */
cudaError_t hxi_gpu_wait_signal(cudaStream_t s, const uint64_t *sig, hxi_gpu_wait_info w,
                                int *d_hit, hxi_gpu_timeout *rec);

/* One message of the rebuild's byte exchange by load/store: `bytes` (a
 * multiple of 4) from src to peer_dst (the peer's landing buffer), then
 * `value` released into peer_sig, then a bounded wait until *my_sig ==
 * w.step. counter: a device int, zero, that the message's last block
 * resets. */
typedef struct hxi_xchg_direct_msg {
    const void *src;
    void *peer_dst;
    size_t bytes;
    uint64_t *peer_sig;
    uint64_t value;
    int *counter;
    const uint64_t *my_sig;
    hxi_gpu_wait_info w;
} hxi_xchg_direct_msg;

enum { HXI_XCHG_DIRECT_MAX = 2 };

/* n (1 .. HXI_XCHG_DIRECT_MAX) such messages in one launch, a row of
 * blocks each. At most max_blocks blocks in all (all resident: the first
 * block of each row spins). */
cudaError_t hxi_gpu_xchg_direct(cudaStream_t s, const hxi_xchg_direct_msg *m, int n, int *d_hit,
                                hxi_gpu_timeout *rec, int max_blocks);

#ifdef __cplusplus
}
#endif

#endif /* HALOX_GPU_KERNELS_H */
