/*
 * shm.h - NVSHMEM set-up shared by the nvshmem-* transports: the once per
 * process start (unique-ID bootstrap, ID broadcast over MPI), the shared-GPU
 * policy, symmetric buffers sized from the largest rank and re-sized
 * together, per-pulse signal slots, and the peer pointers of each pulse.
 */
#ifndef HALOX_SHM_H
#define HALOX_SHM_H

#include "transport/gpu/gpu.h"

/* Signal slots: coordinates of pulse p at p, forces at HXI_SHM_FSIG + p,
 * the rebuild's byte exchange at HXI_SHM_XSIG + slot. */
#define HXI_SHM_FSIG HX_MAX_PULSES
#define HXI_SHM_XSIG (2 * HX_MAX_PULSES)
#define HXI_SHM_NSIG (2 * HX_MAX_PULSES + HXI_XCHG_SLOTS)

typedef struct hxi_shm {
    hxi_gpu g;
    int force_put;          /* opts.force_put or HALOX_FORCE_PUT=1 */
    int init_status;        /* NVSHMEM's, e.g. limited or full multi-process mode */
    float *xstage, *fstage; /* symmetric: npulses slots of `stride` atoms */
    size_t stage_cap;       /* atoms in each */
    int stride;             /* atoms per pulse slot (largest send over all ranks) */
    uint64_t *sig;          /* symmetric: HXI_SHM_NSIG slots, zero at start */
    int *d_count;           /* device: per-slot block counters for the last-block election */

    /* Per pulse, NULL where the peer is reached only through puts (or
     * force_put is set): the send_rank's coordinates at our peer_offset and
     * its coordinate signal; the recv_rank's force slot and force signal. */
    float *peer_x[HX_MAX_PULSES];
    uint64_t *peer_xsig[HX_MAX_PULSES];
    float *peer_f[HX_MAX_PULSES];
    uint64_t *peer_fsig[HX_MAX_PULSES];
    int ndirect; /* pulses (both directions) with direct stores */

    /* The rebuild's byte exchange: a symmetric landing buffer per slot,
     * and the exchanges made on each (the signal value). */
    void *xch[HXI_XCHG_SLOTS];
    size_t xch_cap;
    uint64_t xseq[HXI_XCHG_SLOTS];

    /* The device-side vote (hxi_shm_vote): a symmetric slot per rank that
     * that rank's votes land in, the peers' slot arrays where load/store
     * reaches them (device array, NULL entries: put with signal), and the
     * votes made so far (device). */
    uint64_t *vslot;
    uint64_t **d_vpeer;
    uint64_t *d_vseq;
    int32_t *d_order; /* device: a vote's in (0) and out, for hxi_shm_order */

    /* In: an int of the caller of hxi_shm_set_plan; out: its largest
     * value over the ranks, taken with set_plan's own agreement. */
    int set_plan_max;
} hxi_shm;

/* Pulse p's slot of a staging array (s->xstage or s->fstage). */
static inline float *hxi_shm_slot(const hxi_shm *s, float *stage, int p)
{
    return stage + (size_t) p * (size_t) s->stride * 3;
}

/* Collective. Opens the device (hxi_gpu_open), applies the shared-GPU
 * policy, starts NVSHMEM if this is the first user in the process, and
 * allocates the signal slots (and the arrays, when opts.capacity > 0). */
hx_status hxi_shm_open(hxi_shm *s, hx_transport *t, const char *who);
/* Collective. Frees what open and set_plan allocated; the last user in the
 * process finalises NVSHMEM (which then cannot start again in it). */
void hxi_shm_close(hxi_shm *s, hx_transport *t);
/* Collective. Allocates an hxi_shm into t->impl and opens it; the
 * transports whose whole state is the shared one (stream, pulse). */
hx_status hxi_shm_create(hx_transport *t, const char *who);
/* Collective. Closes and frees what hxi_shm_create made. */
void hxi_shm_destroy(hx_transport *t);
/* hx_transport_sync for every nvshmem-* transport: waits for the stream
 * and reports a timed-out device wait. t->impl starts with an hxi_shm. */
hx_status hxi_shm_sync(hx_transport *t);
/* Collective. Adopts t->plan: grows the symmetric arrays (t->x, t->f) and
 * staging slots together on all ranks, uploads the plan, and looks up the
 * peer pointers. */
hx_status hxi_shm_set_plan(hxi_shm *s, hx_transport *t);
/* Collective symmetric allocation (nvshmem_malloc): every rank asks for
 * the same size, and all agree on the outcome (HX_ERR_NOMEM on every rank
 * when it failed on one). hxi_shm_free is collective too, even for NULL. */
hx_status hxi_shm_alloc(hx_comm *comm, void **p, size_t bytes, const char *what);
void hxi_shm_free(void **p);

/* The byte exchange of device rebuilds (see hxi_transport_ops.xchg): for
 * load/store peers one kernel that stores every message into its peer's
 * symmetric landing buffer, signals and waits, bounded, for the incoming
 * signals; else a put with signal and a bounded wait a message. t->impl must start with an hxi_shm
 * (every nvshmem-* transport's does). */
hx_status hxi_shm_xchg_reserve(hx_transport *t, size_t bytes);
hx_status hxi_shm_xchg(hx_transport *t, hxi_xchg_msg *m, int n);
/* hx_transport_vote for every nvshmem-* transport (vote.c). open: collective,
 * before the barrier that follows the zeroing of the slots; close:
 * collective. */
hx_status hxi_shm_vote_open(hxi_shm *s, hx_transport *t);
void hxi_shm_vote_close(hxi_shm *s);
hx_status hxi_shm_vote(hx_transport *t, const int32_t *in, int32_t *out);
/* Before a forward on a full-shell plan (nothing else on it): a vote on
 * the stream, so that no rank stores a step's halo into a peer that still
 * reads the previous one. The eighth shell's reverse orders the steps (a
 * sender has this step's forces only after the receiver read its halo);
 * a full-shell plan has no reverse, and the vote, which waits for every
 * rank's, stands in: each rank votes once its stream has passed what came
 * before its forward. Graph-capturable, as the vote is. */
hx_status hxi_shm_order(hx_transport *t);
/* The vote kernel's launcher (vote_kernels.cu). */
cudaError_t hxi_shm_vote_launch(cudaStream_t s, const int32_t *in, int32_t *out, uint64_t *slots,
                                uint64_t *const *peer, uint64_t *seq, hxi_gpu_wait_info w,
                                int nranks, int *d_hit, hxi_gpu_timeout *rec);

/* Words for describe: "direct stores (NVLink/same GPU)", "puts", "mixed". */
const char *hxi_shm_paths(const hxi_shm *s);
const char *hxi_shm_mode(const hxi_shm *s);

#endif /* HALOX_SHM_H */
