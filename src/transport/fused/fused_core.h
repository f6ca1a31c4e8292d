/*
 * fused_core.h - the host side the fused transports share (nvshmem-fused,
 * nvshmem-fused-tma, nccl-dev): the device state of the two kernels, the
 * per-plan work that does not depend on how peers are reached (dependency
 * runs and masks, grid size, kernel arguments, the upload of the
 * descriptors), and the launches, plain and captured. Each transport fills
 * the pointers of its descriptors (hp[]: peer arrays and signal slots) from
 * its own memory layer, NVSHMEM's symmetric heap or NCCL's windows.
 */
#ifndef HALOX_FUSED_CORE_H
#define HALOX_FUSED_CORE_H

#include "transport/fused/fused.h"
#include "transport/gpu/gpu.h"

typedef struct hxi_fz_core {
    const char *who;  /* transport name, for messages */
    int tma;          /* forward with bulk copies (nvshmem-fused-tma) */
    int per_sm;       /* resident blocks of the two kernels an SM (0: not asked yet) */
    uint64_t *d_done; /* device: per-pulse "unpacked" flags */
    uint64_t *d_step; /* device: last step of the forward kernel */
    unsigned *d_cnt;  /* device: HXI_FZ_NCNT counters */
    hxi_fz_pulse hp[HX_MAX_PULSES];
    hxi_fz_pulse *d_pulses;
    hxi_fz_seg *d_segs;
    size_t segs_cap;
    hxi_fz_args args;
    int bx; /* blocks per pulse row */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
} hxi_fz_core;

/* Force modes by HXI_FZ_F_* value: "push", "pull", "atomic". */
extern const char *const hxi_fz_fmode_names[3];
/* The force mode asked for: HALOX_FUSED_FORCE_MODE, agreed over the ranks
 * (HX_ERR_INVALID where it is not one of the first `offered` names, or
 * differs between ranks), else dflt. Collective. */
hx_status hxi_fz_force_mode(hx_transport *t, int dflt, int offered, int *mode);

/* Allocates and zeroes the device state (local; the caller agrees on the
 * outcome over the ranks before any peer may signal). */
hx_status hxi_fz_core_open(hxi_fz_core *c, const char *who, int tma);
void hxi_fz_core_close(hxi_fz_core *c);
/* Drops the captured step (its arrays or descriptors changed). */
void hxi_fz_core_drop_graph(hxi_fz_core *c);

/* Dependent runs of every pulse's map (local; HX_ERR_STATE for a plan
 * whose dependent entries lie in no earlier pulse's receive range). */
hx_status hxi_fz_segments(const hx_plan *plan, hxi_fz_seg **out, int *nseg, int seg_range[][2]);
/* hp[p]'s fields that come from the plan alone (counts, offsets, ranks,
 * shift, dependencies, dependency runs); the pointers and modes stay zero. */
void hxi_fz_pulse_from_plan(hxi_fz_pulse *d, const hxi_gpu_pulse *q, const int seg_range[2]);
/* The reverse chain's masks (send_after_done, send_after_fsig,
 * unpack_after) of hp[0..np) from their modes and the plan's sharing. */
void hxi_fz_order(hxi_fz_core *c, int np, const hx_plan *plan);
/* Entries of the map before the first 16-byte aligned destination, or -1
 * when none is (dst not 4-byte aligned): the -tma variant's head. */
int hxi_fz_head(const float *dst);
/* Uploads the dependency runs and hp[0..np) on g's stream (ahead of the
 * kernels), sets the grid size and the kernels' arguments. sig, ack: this
 * rank's signal and ack slots (forces at sig + fsig_base + p). Local. */
hx_status hxi_fz_core_adopt(hxi_fz_core *c, const hxi_gpu *g, hx_transport *t,
                            const hxi_fz_seg *segs, int nseg, const uint64_t *sig,
                            const uint64_t *ack, int fsig_base, int unpack_atomic);

/* The transport operations on the core (g: the transport's device). */
hx_status hxi_fz_core_forward(hxi_fz_core *c, hxi_gpu *g);
hx_status hxi_fz_core_reverse(hxi_fz_core *c, hxi_gpu *g, const hx_transport *t);
/* The reverse with arguments of the caller's (c->args with fields). */
hx_status hxi_fz_core_reverse_with(hxi_fz_core *c, hxi_gpu *g, const hx_transport *t,
                                   const hxi_fz_args *a);
hx_status hxi_fz_core_step_graph(hxi_fz_core *c, hxi_gpu *g);

#endif /* HALOX_FUSED_CORE_H */
