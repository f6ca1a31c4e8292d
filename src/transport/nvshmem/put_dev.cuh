/*
 * put_dev.cuh - the put path of the NVSHMEM transports with many blocks per
 * pulse: each block puts its own slice of the pulse and makes it complete
 * (quiet); the grid's last block then sets the receiver's signal. So a pulse
 * is copied by as many blocks as it has slices, not by one.
 *
 * Order: a block's put is complete (nvshmem_quiet: delivered at the target)
 * before the block arrives on the pulse's election counter; the last block
 * to arrive has observed every arrival (GPU-scope acquire) and fences at
 * system scope before its signal, so the signal cannot be seen before any
 * block's data. The receiver waits for the signal as on the other paths.
 */
#ifndef HALOX_PUT_DEV_CUH
#define HALOX_PUT_DEV_CUH

#include <nvshmem.h>
#include <nvshmemx.h>

/* Items per slice at least: smaller puts would cost more in their issue
 * and quiet than they save in copy time. */
#define HXI_PUT_MIN_SLICE 256

/* Block b of nb takes the items [*lo, *hi) of n, in whole units of `unit`
 * items (a slice boundary never splits a unit), at least HXI_PUT_MIN_SLICE
 * items per block; blocks past the end get an empty range. */
static __device__ __forceinline__ void hxi_put_slice(int n, int unit, int b, int nb, int *lo,
                                                     int *hi)
{
    const int units = (n + unit - 1) / unit;
    const int min_units = (HXI_PUT_MIN_SLICE + unit - 1) / unit;
    int per = (units + nb - 1) / nb;
    if (per < min_units)
        per = min_units;
    const int u0 = min(units, b * per), u1 = min(units, u0 + per);
    *lo = min(n, u0 * unit);
    *hi = min(n, u1 * unit);
}

/* Block-collective: puts n floats from src (written by any thread of this
 * block, or before the kernel) to dst on pe and returns once they are
 * delivered. block_copy: every thread copies (a load/store peer); else
 * thread 0 posts one transfer for the network to carry, after a system
 * fence that makes the block's stores to src visible to it. */
static __device__ void hxi_put_complete(float *dst, const float *src, size_t n, int pe,
                                        bool block_copy)
{
    __syncthreads();
    if (n == 0)
        return;
    if (block_copy) {
        nvshmemx_float_put_nbi_block(dst, src, n, pe);
        __syncthreads();
        if (threadIdx.x == 0)
            nvshmem_quiet();
    } else if (threadIdx.x == 0) {
        __threadfence_system();
        nvshmem_float_put_nbi(dst, src, n, pe);
        nvshmem_quiet();
    }
}

/* One thread of the grid's last block, after its election: sets the
 * receiver's signal to v once every block's put is delivered. */
static __device__ __forceinline__ void hxi_put_signal(uint64_t *sig, uint64_t v, int pe)
{
    __threadfence_system();
    nvshmemx_signal_op(sig, v, NVSHMEM_SIGNAL_SET, pe);
}

#endif /* HALOX_PUT_DEV_CUH */
