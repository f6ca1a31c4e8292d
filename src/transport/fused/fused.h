/*
 * fused.h - the nvshmem-fused and nvshmem-fused-tma transports: what the
 * host code (fused.c) and the kernels (fused_kernels.cu) share, and the C
 * launchers. Fixed-width types and plain pointers only.
 *
 * One kernel launch per step moves the coordinates of every pulse, and one
 * moves the forces back; both are graph-capturable: their arguments change
 * only with the plan, and the step number lives in device memory.
 */
#ifndef HALOX_FUSED_H
#define HALOX_FUSED_H

#include "transport/fused/fused_fields.h"
#include "transport/gpu/gpu_types.h"

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per block of every fused kernel (8 warps). */
#define HXI_FZ_THREADS 256
#define HXI_FZ_WARPS   (HXI_FZ_THREADS / 32)

/* How a pulse's coordinates reach send_rank. */
enum {
    HXI_FZ_X_DIRECT = 0,    /* stores into the peer's array (nvshmem_ptr) */
    HXI_FZ_X_PUT_BLOCK = 1, /* staging slot, each block puts its slice (all
                               threads copy), the last block signals */
    HXI_FZ_X_PUT_THREAD = 2 /* the same with one thread's put per slice (network peer) */
};

/* Force modes, as requested (HALOX_FUSED_FORCE_MODE) and as agreed per pulse. */
enum {
    HXI_FZ_F_PUSH = 0,  /* owner of the halo forces stores them into the
                           receiver's staging slot; the receiver adds */
    HXI_FZ_F_PULL = 1,  /* the receiver reads them from the owner's array */
    HXI_FZ_F_ATOMIC = 2 /* the owner adds them into the receiver's array
                           with remote atomics, through the receiver's map */
};

/* How the halo forces of a pulse leave this rank (the sending side). */
enum {
    HXI_FZ_FS_DIRECT = 0,     /* push: stores into the peer's staging slot */
    HXI_FZ_FS_PUT_BLOCK = 1,  /* push: per-block puts from f, then a signal */
    HXI_FZ_FS_PUT_THREAD = 2, /* push: the same, one thread's put per block (network peer) */
    HXI_FZ_FS_PULL = 3,       /* signal "ready"; the peer reads, then acks */
    HXI_FZ_FS_ATOMIC = 4      /* wait "ready", remote atomic adds, signal */
};

/* A run of a pulse's map entries [begin, end) that pulse `src` delivered. */
typedef struct hxi_fz_seg {
    int32_t begin, end, src, pad_;
} hxi_fz_seg;

/* One pulse as the fused kernels see it: the pulse every GPU transport
 * sees (g: counts, offsets, ranks, shift, deps), then how the fused kernels
 * move it. Built on the host once per plan. */
typedef struct hxi_fz_pulse {
    hxi_gpu_pulse g;
    int32_t seg_begin, seg_end; /* dependent runs: segs[seg_begin .. seg_end) */
    int32_t xmode;              /* HXI_FZ_X_* */
    int32_t xhead;              /* TMA: entries before the first 16-byte aligned destination */
    int32_t fsend;              /* HXI_FZ_FS_* (when nrecv > 0) */
    int32_t frecv;              /* HXI_FZ_F_* (when nsend > 0) */
    int32_t pmap_offset;        /* atomic: recv_rank's map of this pulse in the peer-map array */
    int32_t pad_;
    /* Forces: sending pulse p's halo forces waits until every later pulse
     * that adds into that range has done so: local unpacks (done flags) or
     * a peer's remote atomics (force signals). */
    uint64_t send_after_done, send_after_fsig;
    /* Forces: the unpack of this pulse comes after the unpacks of later
     * pulses that share atoms with it, so that every atom's sum is formed in
     * the cpu transport's order (deterministic, bitwise equal). */
    uint64_t unpack_after;
    /* Coordinates. Direct: xdst is send_rank's x at our peer offset, xsig its
     * slot p. Put: xdst is our staging slot; xput_dst and xsig symmetric. */
    float *xdst;
    uint64_t *xsig;
    float *xput_dst;
    /* Forces, sending side. Direct push: fdst is recv_rank's staging slot p;
     * put: symmetric slot address (fput_src our f at recv_offset); atomic:
     * recv_rank's f. fsig: recv_rank's force slot p (symmetric for puts). */
    float *fdst;
    uint64_t *fsig;
    const int *pmap;
    /* Forces, receiving side. Push: our staging slot p; pull: send_rank's f
     * at our peer offset. ack_peer: send_rank's ack slot p (pull, and
     * push with fields: done reading; atomic: ready for adds). */
    const float *fsrc;
    uint64_t *ack_peer;
    /* A full-shell plan ordered in the forward kernel (hxi_fz_args.order):
     * recv_rank's ack slot p, where we say at each forward that our halo of
     * this pulse is free (read by what ran before on our stream). */
    uint64_t *free_peer;
} hxi_fz_pulse;

/* Kernel arguments: fixed for a plan, so a captured graph replays them. */
typedef struct hxi_fz_args {
    const hxi_fz_pulse *pulses; /* device copy */
    const hxi_fz_seg *segs;
    const int *maps; /* the plan's maps, concatenated */
    float *x, *f;
    const uint64_t *sig; /* our symmetric slots: coordinates p, forces HXI_SHM_FSIG + p */
    const uint64_t *ack; /* our symmetric ack slots */
    uint64_t *done;      /* device: per-pulse "unpacked" flags */
    unsigned *cnt;       /* device: election counters, see HXI_FZ_CNT_* */
    uint64_t *step;      /* device: the last step the forward kernel ran */
    int *d_hit;
    hxi_gpu_timeout *rec;
    uint64_t timeout_ns;
    uint64_t withhold_step; /* test hook: skip our coordinate sends in this step */
    const int32_t *gate;    /* opts.gate: while nonzero, both kernels return at once */
    int32_t rank, npulses;
    int32_t fsig_base;     /* HXI_SHM_FSIG */
    int32_t unpack_atomic; /* 1: force unpacks use atomic adds (a peer adds
                              into our array remotely in this plan) */
    int32_t order;         /* 1: a full-shell plan whose forward kernel waits, before
                              storing into a peer's halo, for the peer's word that it
                              is free (hxi_fz_pulse.free_peer, our ack slots) */
    hxi_fz_fields fld;     /* forward: fields with the coordinates (n 0: none) */
} hxi_fz_args;

/* Counter words: forward per pulse, reverse send per pulse, reverse unpack
 * per pulse, forward exit. Each is a modular counter (atom.inc wraps at the
 * number of arrivals), so it is back at zero after every complete launch. */
#define HXI_FZ_CNT_FWD    0
#define HXI_FZ_CNT_SEND   32
#define HXI_FZ_CNT_UNPACK 64
#define HXI_FZ_CNT_EXIT   96
#define HXI_FZ_NCNT       97

/* Launches; each returns the launch's error. bx blocks per pulse row; the
 * reverse kernel with programmatic stream serialisation (fused_kernels.cu). */
cudaError_t hxi_fz_forward(cudaStream_t s, const hxi_fz_args *a, int bx, int tma);
cudaError_t hxi_fz_reverse(cudaStream_t s, const hxi_fz_args *a, int bx);
/* Resident blocks per SM of the kernel used for the forward (tma or not)
 * and the reverse, the smaller of the two. */
int hxi_fz_blocks_per_sm(int tma);

/* Ping-pong between this rank and peer through `peer_buf` / `peer_flag`
 * (the peer's symmetric arrays, reached by load/store): `iters` rounds
 * after `warm` warm-up rounds, each carrying `nfloat` floats one way and
 * back, with bx blocks storing and the last block signalling. Role 0
 * starts. *ns receives the nanoseconds of the timed rounds (role 0). */
cudaError_t hxi_fz_pingpong(cudaStream_t s, int role, float *peer_buf, uint64_t *peer_flag,
                            const uint64_t *my_flag, const float *src, long nfloat, int bx,
                            int iters, int warm, uint64_t base, unsigned *cnt, uint64_t *ns);

#ifdef __cplusplus
}
#endif

#endif /* HALOX_FUSED_H */
