/*
 * pulse_kernels.cu - the nvshmem-pulse transport's kernels: one launch per pulse
 * that packs, sends, signals and waits.
 */
#include "transport/gpu/gpu_dev.cuh"
#include "transport/gpu/pack_dev.cuh"
#include "transport/nvshmem/pulse_kernels.h"
#include "transport/nvshmem/put_dev.cuh"

#define HXI_BLOCK 256

/* Entry i of the pulse's map, shift applied, stored at dst[3 i]. */
static __device__ __forceinline__ void pulse_pack(const hxi_shm_pulse_args &a, int i, float *dst)
{
    hxi_dev_pack_one(dst, a.src, a.map, i, a.shift);
}

/* Coordinates of one pulse.
 * Direct path: blocks grid-stride over the `nout` atoms to pack, one thread
 * per atom, each storing its atom straight into the peer's coordinate
 * array; the last block (hxi_last_block) has thread 0 publish with one
 * st.release.sys of the step value into the peer's slot. Put path
 * (put_dev.cuh): each block packs its own slice of the atoms into the local
 * staging slot and puts that slice (all its threads copy; a thread-scope
 * put to a load/store peer would be copied by one thread); the last block
 * sets the signal. Then thread 0 of block 0 waits, bounded, for our own
 * slot: later pulses read what arrives. */
__global__ void hxi_k_pulse_forward(hxi_shm_pulse_args a)
{
    if (a.nout > 0 && a.direct_dst) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < a.nout;
             i += gridDim.x * blockDim.x)
            pulse_pack(a, i, a.direct_dst);
        if (hxi_last_block(a.counter) && threadIdx.x == 0)
            hxi_dev_st_release_sys(a.direct_sig, a.value);
    } else if (a.nout > 0) {
        int lo, hi;
        hxi_put_slice(a.nout, 1, blockIdx.x, gridDim.x, &lo, &hi);
        for (int i = lo + threadIdx.x; i < hi; i += blockDim.x)
            pulse_pack(a, i, a.stage);
        hxi_put_complete(a.put_dst + 3 * (size_t) lo, a.stage + 3 * (size_t) lo,
                         3 * (size_t) (hi - lo), a.pe, true);
        if (hxi_last_block(a.counter) && threadIdx.x == 0)
            hxi_put_signal(a.put_sig, a.value, a.pe);
    }
    if (a.nin > 0 && blockIdx.x == 0 && threadIdx.x == 0)
        hxi_dev_wait_eq(a.my_sig, &a.wait, a.d_hit, a.rec);
}

/* Forces of one pulse.
 * Send: the `nout` halo forces are contiguous in f. Direct path: blocks
 * grid-stride copy them into the peer's force slot, and the last block's
 * thread 0 publishes with st.release.sys. Put path: each block puts its
 * slice straight from f (symmetric), the last block sets the signal.
 * Receive: thread
 * 0 of every block waits, bounded, for our slot, then the blocks
 * grid-stride add the `nin` received forces into f through the map (a
 * pulse's map holds each atom once: no atomics). The grid is capped by the
 * host so that all blocks are resident while they spin. */
__global__ void hxi_k_pulse_reverse(hxi_shm_pulse_args a)
{
    __shared__ int ok;
    if (a.nout > 0) {
        if (a.direct_dst) {
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < 3 * a.nout;
                 i += gridDim.x * blockDim.x)
                a.direct_dst[i] = a.src[i];
            if (hxi_last_block(a.counter) && threadIdx.x == 0)
                hxi_dev_st_release_sys(a.direct_sig, a.value);
        } else {
            int lo, hi;
            hxi_put_slice(a.nout, 1, blockIdx.x, gridDim.x, &lo, &hi);
            hxi_put_complete(a.put_dst + 3 * (size_t) lo, a.src + 3 * (size_t) lo,
                             3 * (size_t) (hi - lo), a.pe, true);
            if (hxi_last_block(a.counter) && threadIdx.x == 0)
                hxi_put_signal(a.put_sig, a.value, a.pe);
        }
    }
    if (a.nin > 0) {
        if (threadIdx.x == 0)
            ok = hxi_dev_wait_eq(a.my_sig, &a.wait, a.d_hit, a.rec);
        __syncthreads();
        if (!ok)
            return;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < a.nin;
             i += gridDim.x * blockDim.x) {
            float *d = a.f + 3 * (size_t) a.map[i];
            const float *s = a.inbox + 3 * (size_t) i;
            d[0] += s[0];
            d[1] += s[1];
            d[2] += s[2];
        }
    }
}

extern "C" cudaError_t hxi_shm_pulse_forward(cudaStream_t s, const hxi_shm_pulse_args *a,
                                             int blocks)
{
    int grid = blocks > 1 ? blocks : 1;
    hxi_k_pulse_forward<<<grid, HXI_BLOCK, 0, s>>>(*a);
    return cudaGetLastError();
}

extern "C" cudaError_t hxi_shm_pulse_reverse(cudaStream_t s, const hxi_shm_pulse_args *a,
                                             int blocks)
{
    int grid = blocks > 1 ? blocks : 1;
    hxi_k_pulse_reverse<<<grid, HXI_BLOCK, 0, s>>>(*a);
    return cudaGetLastError();
}
