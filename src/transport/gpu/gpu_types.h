/*
 * gpu_types.h - plain structs shared by the host code (C) and the kernels
 * (CUDA) of the GPU transports. Fixed-width types only; no CUDA or MPI here.
 */
#ifndef HALOX_GPU_TYPES_H
#define HALOX_GPU_TYPES_H

#include <stdint.h>

/* A pulse's periodic image in float, added to the three coordinates while
 * packing: hx_pulse.shift of a pulse along dim, component by component,
 * with a zero off dim as -0.0f (hxi_pack_shift: adding it changes no
 * value, not even a -0.0). */
typedef struct hxi_fshift {
    float v[3];
} hxi_fshift;

static inline hxi_fshift hxi_fshift_of(const double s[3], int dim)
{
    hxi_fshift f;
    for (int k = 0; k < 3; k++)
        f.v[k] = s[k] == 0.0 && k != dim ? -0.0f : (float) s[k];
    return f;
}

/* One pulse as the kernels see it: the host copy of hx_pulse with the map
 * replaced by an offset into the transport's concatenated device map. */
typedef struct hxi_gpu_pulse {
    int32_t dim, index;
    int32_t send_rank, recv_rank;
    int32_t nsend, nsend_home;
    int32_t nrecv, recv_offset, peer_offset;
    int32_t map_offset; /* first entry of this pulse's map in the device map array */
    hxi_fshift shift;   /* added to the coordinates while packing them */
    int32_t pad_;
    uint64_t deps; /* bit q: the map reads atoms delivered by pulse q */
} hxi_gpu_pulse;

/* Which wait a kernel is doing, for the timeout report. */
typedef struct hxi_gpu_wait_info {
    uint64_t step;       /* value the signal must reach */
    uint64_t timeout_ns; /* %globaltimer budget */
    int32_t rank;        /* waiting rank */
    int32_t peer;        /* rank expected to signal */
    int32_t pulse;       /* global pulse index */
    int32_t dim;         /* HX_X, HX_Y, HX_Z */
    int32_t kind;        /* 0: coordinates, 1: forces, 2: rebuild bytes, 3: a vote */
    int32_t pad_;
} hxi_gpu_wait_info;

/* kind of a wait for a peer's vote (hx_transport_vote; step: the vote's
 * number times 2). */
#define HXI_WAIT_VOTE 3

/* The record of the first wait that timed out. Lives in mapped pinned host
 * memory: the kernel writes it with plain stores and a system fence; the
 * host reads it after the stream has drained. The election of the one
 * writer uses a separate word in device memory (hxi_gpu.d_hit), since
 * atomics on host memory are not atomic over PCIe on every platform. */
typedef struct hxi_gpu_timeout {
    volatile int32_t hit;
    int32_t rank, peer, pulse, dim, kind;
    uint64_t step; /* value waited for */
    uint64_t seen; /* value the signal held at the timeout */
    uint64_t waited_ns;
} hxi_gpu_timeout;

#endif /* HALOX_GPU_TYPES_H */
