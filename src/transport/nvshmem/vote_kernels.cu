/*
 * vote_kernels.cu - the kernel of hx_transport_vote for the nvshmem-*
 * transports: one block sends this rank's yes or no to every other rank
 * and waits for theirs.
 *
 * Rank r's vote number k lands in slot r of every other rank as the word
 * (k << 1) | yes: a release store where load/store reaches the peer, else
 * NVSHMEM's signal operation. A waiter takes slot q once it holds at least
 * k << 1. A peer can be at most one vote ahead of us: its vote k + 1 needs
 * our vote k, which we send before we wait. When the slot already holds
 * vote k + 1, that peer's vote k was no (it saw its own yes and would have
 * stopped, as every rank does after a yes), so only a slot holding
 * exactly vote k contributes its bit.
 */
#include "transport/gpu/gpu_dev.cuh"
#include "transport/gpu/gpu_types.h"

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdint.h>

__global__ void hxi_k_vote(const int32_t *in, int32_t *out, uint64_t *slots,
                           uint64_t *const *peer, uint64_t *seq_dev, hxi_gpu_wait_info w,
                           int nranks, int *d_hit, hxi_gpu_timeout *rec)
{
    __shared__ int32_t mine;
    __shared__ uint64_t seq;
    if (threadIdx.x == 0) {
        mine = *(const volatile int32_t *) in;
        /* A transport that has timed out has lost a step: it votes yes,
         * so that every rank stops at this vote. */
        if (mine >= 0 && *(const volatile int *) d_hit)
            mine = 1;
        seq = *seq_dev + 1;
    }
    __syncthreads();
    if (mine < 0)
        return; /* this vote is sat out, alike on every rank */
    const int me = w.rank;
    const uint64_t word = (seq << 1) | (mine != 0 ? 1u : 0u);
    for (int q = threadIdx.x; q < nranks; q += blockDim.x) {
        if (q == me)
            continue;
        uint64_t *p = peer[q];
        if (p)
            hxi_dev_st_release_sys(p + me, word);
        else
            nvshmemx_signal_op(slots + me, word, NVSHMEM_SIGNAL_SET, q);
    }
    int yes = mine != 0, lost = 0;
    for (int q = threadIdx.x; q < nranks; q += blockDim.x) {
        if (q == me)
            continue;
        hxi_gpu_wait_info wq = w;
        wq.peer = q;
        wq.step = seq << 1;
        uint64_t v = 0;
        if (hxi_dev_wait_cmp<true>(slots + q, &wq, d_hit, rec, &v))
            yes |= (v >> 1) == seq && (v & 1u);
        else
            lost = 1;
    }
    yes = __syncthreads_or(yes);
    lost = __syncthreads_or(lost);
    if (threadIdx.x == 0) {
        *out = yes || lost;
        *seq_dev = seq;
    }
}

extern "C" cudaError_t hxi_shm_vote_launch(cudaStream_t s, const int32_t *in, int32_t *out,
                                           uint64_t *slots, uint64_t *const *peer, uint64_t *seq,
                                           hxi_gpu_wait_info w, int nranks, int *d_hit,
                                           hxi_gpu_timeout *rec)
{
    int threads = nranks < 256 ? ((nranks + 31) / 32) * 32 : 256;
    hxi_k_vote<<<1, threads, 0, s>>>(in, out, slots, peer, seq, w, nranks, d_hit, rec);
    return cudaGetLastError();
}
