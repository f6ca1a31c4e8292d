/*
 * order_dev.cuh - the PTX loads, stores and atomics with a memory order that
 * the transports' kernels signal and wait with, in one place. Scope says
 * who must observe the access: .sys for another GPU or a host thread (the
 * peers' signals), .gpu for the other blocks of this GPU (a kernel's own
 * counters and flags, which live in global memory).
 */
#ifndef HALOX_ORDER_DEV_CUH
#define HALOX_ORDER_DEV_CUH

#include <stdint.h>

/* Spin loads: relaxed at system scope (the writer may be another GPU or a
 * proxy thread on the host), then one acquire once the value matches. */
static __device__ __forceinline__ uint64_t hxi_dev_ld_relaxed_sys(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ uint64_t hxi_dev_ld_acquire_sys(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

/* Release at system scope: everything this thread has observed (including
 * the other blocks' stores, made visible to it by the GPU-scope election)
 * is visible to whoever acquires the signal. */
static __device__ __forceinline__ void hxi_dev_st_release_sys(uint64_t *p, uint64_t v)
{
    asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* An arrival on a modular counter in global memory (it wraps to 0 at
 * `bound`): release publishes the arriving block's stores at GPU scope,
 * acquire lets the last arrival observe every other block's. */
static __device__ __forceinline__ unsigned hxi_dev_inc_acq_rel_gpu(unsigned *p, unsigned bound)
{
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;"
                 : "=r"(old)
                 : "l"(p), "r"(bound)
                 : "memory");
    return old;
}

/* Flags in global memory read by blocks of this kernel only: GPU scope. */
static __device__ __forceinline__ uint64_t hxi_dev_ld_relaxed_gpu(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ void hxi_dev_st_relaxed_gpu(uint64_t *p, uint64_t v)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

static __device__ __forceinline__ void hxi_dev_st_release_gpu(uint64_t *p, uint64_t v)
{
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

#endif /* HALOX_ORDER_DEV_CUH */
