/*
 * gpu_dev.cuh - device helpers shared by the kernels of the GPU transports:
 * the clock, the signal loads and stores (order_dev.cuh), and the bounded
 * wait that turns a missing peer into a recorded timeout instead of a hang,
 * and the election of a grid's last block.
 */
#ifndef HALOX_GPU_DEV_CUH
#define HALOX_GPU_DEV_CUH

#include "transport/gpu/gpu_types.h"
#include "transport/gpu/order_dev.cuh"

#include <stdint.h>

/* Nanoseconds; coarse (about a microsecond) but shared by all SMs. */
static __device__ __forceinline__ uint64_t hxi_dev_clock_ns(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Lets the kernel launched next on the stream with programmatic stream
 * serialisation (the fused reverse kernel; the GPU engine's force kernels
 * with HALOX_MD_PDL) start its blocks now: they read what does not depend
 * on this kernel, then wait for its end (hxi_dev_grid_wait). No effect on a kernel
 * launched plainly, which starts after this one ends. */
static __device__ __forceinline__ void hxi_dev_launch_dependents(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* Waits until the kernel before this one on the stream has finished and
 * its writes are visible: for a kernel launched with programmatic stream
 * serialisation, which may start earlier; at once otherwise. */
static __device__ __forceinline__ void hxi_dev_grid_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* Records the first timeout of this transport. d_hit (device memory) elects
 * the writer; the details go to the mapped host record. */
static __device__ void hxi_dev_record_timeout(int *d_hit, hxi_gpu_timeout *rec,
                                              const hxi_gpu_wait_info *w, uint64_t seen,
                                              uint64_t waited)
{
    if (atomicCAS(d_hit, 0, 1) != 0)
        return;
    rec->rank = w->rank;
    rec->peer = w->peer;
    rec->pulse = w->pulse;
    rec->dim = w->dim;
    rec->kind = w->kind;
    rec->step = w->step;
    rec->seen = seen;
    rec->waited_ns = waited;
    __threadfence_system();
    rec->hit = 1;
    __threadfence_system();
}

/* Waits, in one thread, until *sig == w->step (GE: until *sig >=
 * w->step). Returns 1 when it did, 0 on a timeout (recorded) or when an
 * earlier wait of this transport timed out (d_hit set): then the step is
 * lost anyway, and waiting again would only add one timeout per pulse to
 * the time until the host reports it. *seen (when not NULL) receives the
 * value that ended the wait. */
template <bool GE>
static __device__ int hxi_dev_wait_cmp(const uint64_t *sig, const hxi_gpu_wait_info *w, int *d_hit,
                                       hxi_gpu_timeout *rec, uint64_t *seen)
{
    uint64_t v = hxi_dev_ld_acquire_sys(sig);
    if (GE ? v >= w->step : v == w->step) {
        if (seen)
            *seen = v;
        return 1;
    }
    const volatile int *hit = d_hit;
    if (*hit)
        return 0;
    uint64_t t0 = hxi_dev_clock_ns();
    for (unsigned spin = 1;; spin++) {
        v = hxi_dev_ld_relaxed_sys(sig);
        if (GE ? v >= w->step : v == w->step) {
            v = hxi_dev_ld_acquire_sys(sig);
            if (seen)
                *seen = v;
            return 1;
        }
        if ((spin & 255u) == 0) {
            uint64_t waited = hxi_dev_clock_ns() - t0;
            if (*hit)
                return 0;
            if (waited > w->timeout_ns) {
                hxi_dev_record_timeout(d_hit, rec, w, v, waited);
                return 0;
            }
        }
    }
}

static __device__ __forceinline__ int hxi_dev_wait_eq(const uint64_t *sig,
                                                      const hxi_gpu_wait_info *w, int *d_hit,
                                                      hxi_gpu_timeout *rec)
{
    return hxi_dev_wait_cmp<false>(sig, w, d_hit, rec, NULL);
}

/* The last block of the grid to get here returns 1 (in every thread of
 * that block). Each thread's fence orders its own stores (GPU scope)
 * before the block's arrival; the winner fences again before reading or
 * publishing, so it has observed every block's stores and its later
 * system-scope release carries them (cumulativity). The winner resets the
 * counter for the next launch; the kernel boundary orders that. */
static __device__ int hxi_last_block(int *counter)
{
    __shared__ int last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        int prev = atomicAdd(counter, 1);
        last = prev == (int) gridDim.x - 1;
        if (last)
            *counter = 0;
    }
    __syncthreads();
    if (last)
        __threadfence();
    return last;
}

#endif /* HALOX_GPU_DEV_CUH */
