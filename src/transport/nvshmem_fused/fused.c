/*
 * fused.c - the `nvshmem-fused` and `nvshmem-fused-tma` transports: one
 * kernel launch per step moves the coordinates of every pulse of every
 * dimension, one moves the forces back (fused_kernels.cu). The host only
 * launches; everything per plan (descriptors, peer pointers, dependency
 * masks, grid size) is computed here once, in set_plan, so that the two
 * launches take the same arguments every step and a CUDA graph can replay
 * them (graph mode, hx_transport_step_graph).
 *
 * Coordinates: a pulse's home atoms are packed the moment its row runs;
 * atoms that earlier pulses delivered wait only for the signals of the
 * pulses they came from (the plan's per-entry sources, not all earlier
 * pulses). Direct stores into the peer's array where nvshmem_ptr gives a
 * pointer, else staging + put with signal; the -tma variant moves each
 * warp's chunk with one bulk asynchronous copy on the direct path.
 *
 * Forces, per pulse, in one of three modes (HALOX_FUSED_FORCE_MODE):
 * push (the owner of the halo forces stores them into the receiver's
 * staging slot and the receiver adds them), pull (default; the receiver
 * reads the owner's array, then acks), atomic (the owner adds them into
 * the receiver's array with remote atomics through the receiver's map).
 * Pull and atomic need load/store access both ways; both ends of a pulse
 * agree on the mode once per plan, and fall back to push where they
 * cannot. Push and pull add every atom's contributions in the cpu
 * transport's order (an unpack waits for the later pulses that share its
 * atoms), so their forces are bitwise those of the cpu transport.
 */
#define _POSIX_C_SOURCE 200809L
#include "transport/fused/fused_core.h"
#include "transport/gpu/fields_dev.h"
#include "transport/nvshmem_fused/fused_fields.h"
#include "transport/probes.h"
#include "transport/nvshmem/shm.h"
#include "transport/nvshmem/shm_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The default force mode. Measured on the GPU machine (docs/fused.md), the
 * modes ranked atomic < pull < push in time per step at every size and
 * grid. Atomic adds land in any order, so its forces are not bitwise those
 * of the cpu transport, which docs/design.md asks of every GPU transport; pull is
 * the fastest mode that keeps them bitwise, and the default. */
#define FZ_DEFAULT_FMODE HXI_FZ_F_PULL

typedef struct hxi_fz {
    hxi_shm s;
    hxi_fz_core c; /* the kernels' state, descriptors and launches */
    int tma;
    int fmode;     /* requested force mode, the same on every rank */
    uint64_t *ack; /* symmetric: HX_MAX_PULSES ack slots, zero at start */
    int *d_pmaps;  /* atomic: the receivers' maps, concatenated */
    size_t pmaps_cap;
    int nfmode[3];       /* pulses (either end) per agreed force mode */
    int nxdirect, nxput; /* coordinate pulses by path */
    /* Which ends of each pulse reach the other by load/store (set_plan),
     * kept while the pulses and their peers stay the same (peers_np -1:
     * not known yet). */
    int peers_np;
    int peers_rank[HX_MAX_PULSES][2];
    int scap[HX_MAX_PULSES], rcap[HX_MAX_PULSES], peer_s[HX_MAX_PULSES], peer_r[HX_MAX_PULSES];
    hxi_fzf fzf; /* fields in the fused kernel (fused_fields.c) */
} hxi_fz;

static const char *fz_name(int tma)
{
    return tma ? "nvshmem-fused-tma" : "nvshmem-fused";
}

static hx_status fz_create(hx_transport *t, int tma)
{
    const char *who = fz_name(tma);
    hxi_fz *z = NULL;
    HXI_CHECK(hxi_alloc((void **) &z, sizeof *z, who));
    memset(z, 0, sizeof *z);
    z->tma = tma;
    z->peers_np = -1;
    hx_status st = hxi_shm_open(&z->s, t, who);
    if (st != HX_OK) {
        free(z);
        return st;
    }
    hxi_gpu *g = &z->s.g;
    HXI_CHECK_GOTO(hxi_fz_force_mode(t, FZ_DEFAULT_FMODE, 3, &z->fmode), st, fail);
    HXI_CHECK_GOTO(hxi_shm_alloc(t->comm, (void **) &z->ack, HX_MAX_PULSES * sizeof(uint64_t),
                                 "the ack slots"),
                   st, fail);
    /* Local set-up, then one agreement, so that every rank takes the same
     * (collective) way out. */
    st = hxi_fz_core_open(&z->c, who, tma);
    if (st == HX_OK) {
        cudaError_t e = cudaMemset(z->ack, 0, HX_MAX_PULSES * sizeof(uint64_t));
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        if (e != cudaSuccess)
            st = hxi_cuda_error(e, "zeroing the ack slots", __FILE__, __LINE__);
    }
    HXI_CHECK_GOTO(hxi_agree(t->comm, st), st, fail);
    /* No peer may signal into our ack slots before they are zero. */
    HXI_CHECK_GOTO(hxi_barrier(t->comm), st, fail);
    t->impl = z;
    snprintf(t->describe, sizeof t->describe,
             "%s: one kernel for all pulses each way%s, forces %s; %s; GPU %d, %d rank(s) on "
             "it%s",
             who, tma ? " (bulk copies per warp)" : "", hxi_fz_fmode_names[z->fmode],
             hxi_shm_mode(&z->s), g->device, g->ranks_on_device, g->mps ? ", MPS" : "");
    return HX_OK;
fail:
    hxi_fz_core_close(&z->c);
    hxi_shm_free((void **) &z->ack); /* collective: every rank reaches this */
    hxi_shm_close(&z->s, t);
    free(z);
    return st;
}

static hx_status fz_create_plain(hx_transport *t)
{
    return fz_create(t, 0);
}
static hx_status fz_create_tma(hx_transport *t)
{
    return fz_create(t, 1);
}

static void fz_destroy(hx_transport *t)
{
    hxi_fz *z = t->impl;
    if (!z)
        return;
    if (z->s.g.stream)
        (void) cudaStreamSynchronize(z->s.g.stream);
    (void) hxi_barrier(t->comm);
    hxi_shm_free((void **) &z->ack);
    hxi_fzf_close(&z->fzf);
    hxi_fz_core_close(&z->c);
    if (z->d_pmaps)
        cudaFree(z->d_pmaps);
    hxi_shm_close(&z->s, t);
    free(z);
    t->impl = NULL;
}

enum { FZ_TAG_CAP = 401, FZ_TAG_MAP = 402 };

/* Takes the plan into the NVSHMEM state (hxi_shm_set_plan) once the step
 * captured on the old one is gone. *stale: some rank's pulses have other
 * peers now, so their reach must be learnt again (fz_learn_reach). */
static hx_status fz_take_plan(hx_transport *t, hxi_fz *z, int *stale)
{
    hxi_shm *s = &z->s;
    hxi_gpu *g = &s->g;
    const hx_plan *plan = t->plan;
    /* A step captured by the transport refers to the old arrays and
     * descriptors: it goes once its last launch is done. Otherwise, with
     * HALOX_PLAN_WAIT=0, the host does not wait for the stream: the
     * descriptors are uploaded in stream order behind the kernels that
     * read the old ones. */
    if (z->c.exec || g->plan_wait)
        HXI_CUDA(cudaStreamSynchronize(g->stream));
    hxi_fz_core_drop_graph(&z->c);
    /* The peers' reach is asked again where any rank's pulses changed. */
    int changed = z->peers_np != hx_plan_npulses(plan);
    for (int p = 0; !changed && p < z->peers_np; p++)
        changed = z->peers_rank[p][0] != hx_plan_pulse(plan, p)->send_rank ||
                  z->peers_rank[p][1] != hx_plan_pulse(plan, p)->recv_rank;
    s->set_plan_max = changed;
    const hx_status st = hxi_shm_set_plan(s, t);
    *stale = s->set_plan_max;
    s->set_plan_max = 0;
    return st;
}

/* Which ends of each pulse can reach the other by load/store: the force
 * sender needs the receiver's f and force slot, the receiver the sender's
 * f and ack slot. Both ends learn both answers, once for a set of pulses
 * (the arrays are symmetric: a peer's reach does not change when they
 * grow). Collective. */
static hx_status fz_learn_reach(hx_transport *t, hxi_fz *z)
{
    hxi_shm *s = &z->s;
    hxi_gpu *g = &s->g;
    const int np = g->npulses;
    z->peers_np = -1;
    for (int p = 0; p < np; p++) {
        const hxi_gpu_pulse *q = &g->pulse[p];
        z->scap[p] = !s->force_put && hxi_shm_api_ptr(t->f, q->recv_rank) &&
                     hxi_shm_api_ptr(s->sig + HXI_SHM_FSIG + p, q->recv_rank);
        z->rcap[p] = !s->force_put && hxi_shm_api_ptr(t->f, q->send_rank) &&
                     hxi_shm_api_ptr(z->ack + p, q->send_rank);
        HXI_CHECK(hxi_sendrecv(t->comm, &z->scap[p], sizeof(int), q->recv_rank, &z->peer_s[p],
                               sizeof(int), q->send_rank, FZ_TAG_CAP));
        HXI_CHECK(hxi_sendrecv(t->comm, &z->rcap[p], sizeof(int), q->send_rank, &z->peer_r[p],
                               sizeof(int), q->recv_rank, FZ_TAG_CAP));
        z->peers_rank[p][0] = q->send_rank;
        z->peers_rank[p][1] = q->recv_rank;
    }
    z->peers_np = np;
    return HX_OK;
}

/* Atomic mode: each force sender needs the receiver's map of the pulse.
 * pmap_off[p]: where pulse p's starts in *pmaps (host, malloc'd, the
 * caller frees it), *total entries in all (0 in the other modes).
 * Collective. */
static hx_status fz_peer_maps(hx_transport *t, hxi_fz *z, int pmap_off[], int **pmaps,
                              size_t *total)
{
    hxi_gpu *g = &z->s.g;
    const hx_plan *plan = t->plan;
    const int np = g->npulses;
    size_t pmap_total = 0;
    for (int p = 0; p < np; p++) {
        pmap_off[p] = (int) pmap_total;
        pmap_total += z->fmode == HXI_FZ_F_ATOMIC ? (size_t) g->pulse[p].nrecv : 0;
    }
    *total = pmap_total;
    if (z->fmode != HXI_FZ_F_ATOMIC)
        return HX_OK;
    int *hmaps = NULL;
    hx_status st = hxi_alloc((void **) pmaps, (pmap_total + 1) * sizeof(int), "peer maps");
    /* A device plan keeps its maps on the device: the opt-in atomic
     * mode is the one place where they are copied to the host. */
    if (st == HX_OK && hx_plan_on_device(plan)) {
        st = hxi_alloc((void **) &hmaps, ((size_t) g->total_send + 1) * sizeof(int),
                       "the maps on the host");
        /* The maps are the plan's kernels' output, on the stream. */
        cudaError_t e = st == HX_OK
                            ? cudaMemcpyAsync(hmaps, g->maps, (size_t) g->total_send * sizeof(int),
                                              cudaMemcpyDeviceToHost, g->stream)
                            : cudaSuccess;
        if (e == cudaSuccess && st == HX_OK)
            e = cudaStreamSynchronize(g->stream);
        if (e != cudaSuccess)
            st =
                hxi_cuda_error(e, "copying the maps for the atomic force mode", __FILE__, __LINE__);
    }
    st = hxi_agree(t->comm, st);
    for (int p = 0; st == HX_OK && p < np; p++) {
        const hx_pulse *P = hx_plan_pulse(plan, p);
        const int *map = P->map ? P->map : hmaps + g->pulse[p].map_offset;
        st = hxi_sendrecv(t->comm, map, (size_t) P->nsend * sizeof(int), P->send_rank,
                          *pmaps + pmap_off[p], (size_t) P->nrecv * sizeof(int), P->recv_rank,
                          FZ_TAG_MAP);
    }
    free(hmaps);
    return st;
}

/* Pulse p's coordinates: direct stores where nvshmem_ptr reaches send_rank's
 * array, else the staging slot and a put. */
static void fz_pulse_coords(hx_transport *t, hxi_fz *z, hxi_fz_pulse *d, int p)
{
    hxi_shm *s = &z->s;
    const hxi_gpu_pulse *q = &d->g;
    if (s->peer_x[p]) {
        d->xmode = HXI_FZ_X_DIRECT;
        d->xdst = s->peer_x[p];
        d->xsig = s->peer_xsig[p];
        d->xhead = hxi_fz_head(d->xdst);
    } else {
        d->xmode = hxi_shm_api_ptr(t->x, q->send_rank) ? HXI_FZ_X_PUT_BLOCK : HXI_FZ_X_PUT_THREAD;
        d->xdst = hxi_shm_slot(s, s->xstage, p);
        d->xsig = s->sig + p;
        d->xput_dst = (float *) t->x + (size_t) q->peer_offset * 3;
        d->xhead = -1;
    }
    if (q->nsend > 0) {
        if (d->xmode == HXI_FZ_X_DIRECT)
            z->nxdirect++;
        else
            z->nxput++;
    }
}

/* Pulse p's forces in the mode both of its ends can do: the sending side
 * (we hold its halo forces) and the receiving side (forces on our map
 * entries come back). Returns 1 where a peer adds into our array
 * remotely (then the unpacks add atomically too). */
static int fz_pulse_forces(hx_transport *t, hxi_fz *z, hxi_fz_pulse *d, int p)
{
    hxi_shm *s = &z->s;
    const hxi_gpu_pulse *q = &d->g;
    float *slot_f = hxi_shm_slot(s, s->fstage, p);
    int smode = z->fmode != HXI_FZ_F_PUSH && z->scap[p] && z->peer_r[p] ? z->fmode : HXI_FZ_F_PUSH;
    if (smode == HXI_FZ_F_PULL) {
        d->fsend = HXI_FZ_FS_PULL;
        d->fsig = hxi_shm_api_ptr(s->sig + HXI_SHM_FSIG + p, q->recv_rank);
    } else if (smode == HXI_FZ_F_ATOMIC) {
        d->fsend = HXI_FZ_FS_ATOMIC;
        d->fdst = hxi_shm_api_ptr(t->f, q->recv_rank);
        d->fsig = hxi_shm_api_ptr(s->sig + HXI_SHM_FSIG + p, q->recv_rank);
    } else if (s->peer_f[p]) {
        d->fsend = HXI_FZ_FS_DIRECT;
        d->fdst = s->peer_f[p];
        d->fsig = s->peer_fsig[p];
    } else {
        d->fsend = hxi_shm_api_ptr(t->f, q->recv_rank) ? HXI_FZ_FS_PUT_BLOCK : HXI_FZ_FS_PUT_THREAD;
        d->fdst = slot_f;
        d->fsig = s->sig + HXI_SHM_FSIG + p;
    }
    int rmode = z->fmode != HXI_FZ_F_PUSH && z->peer_s[p] && z->rcap[p] ? z->fmode : HXI_FZ_F_PUSH;
    d->frecv = rmode;
    if (rmode == HXI_FZ_F_PULL)
        d->fsrc = (const float *) hxi_shm_api_ptr(t->f, q->send_rank) + (size_t) q->peer_offset * 3;
    else
        d->fsrc = slot_f;
    /* Push: for a reverse whose fields ride the forces (its ack). */
    d->ack_peer = hxi_shm_api_ptr(z->ack + p, q->send_rank);
    if (q->nrecv > 0)
        z->nfmode[smode]++;
    if (q->nsend > 0)
        z->nfmode[rmode]++;
    return q->nsend > 0 && rmode == HXI_FZ_F_ATOMIC;
}

/* The device copies (peer maps, descriptors, dependency runs), agreed on:
 * local work, then one agreement. */
static hx_status fz_upload(hx_transport *t, hxi_fz *z, const int *pmaps, size_t pmap_total,
                           const hxi_fz_seg *segs, int nseg, int unpack_atomic)
{
    hxi_gpu *g = &z->s.g;
    hx_status st = HX_OK;
    if (pmap_total > z->pmaps_cap || !z->d_pmaps) {
        if (z->d_pmaps)
            cudaFree(z->d_pmaps);
        z->d_pmaps = NULL;
        z->pmaps_cap = 0;
        size_t cap = pmap_total + pmap_total / 4 + 1024;
        st = hxi_gpu_malloc((void **) &z->d_pmaps, cap * sizeof(int), "the peer maps");
        if (st == HX_OK)
            z->pmaps_cap = cap;
    }
    if (st == HX_OK) {
        for (int p = 0; p < g->npulses; p++)
            z->c.hp[p].pmap = z->d_pmaps + z->c.hp[p].pmap_offset;
        if (pmap_total > 0) {
            cudaError_t e = cudaMemcpyAsync(z->d_pmaps, pmaps, pmap_total * sizeof(int),
                                            cudaMemcpyHostToDevice, g->stream);
            if (e != cudaSuccess)
                st = hxi_cuda_error(e, "uploading the peer maps", __FILE__, __LINE__);
        }
    }
    if (st == HX_OK)
        st = hxi_fz_core_adopt(&z->c, g, t, segs, nseg, z->s.sig, z->ack, HXI_SHM_FSIG,
                               unpack_atomic);
    return hxi_agree(t->comm, st);
}

static void fz_describe(hx_transport *t, const hxi_fz *z)
{
    const hxi_gpu *g = &z->s.g;
    snprintf(t->describe, sizeof t->describe,
             "%s: one kernel for all %d pulses each way (%d x %d blocks)%s; coordinates %s; "
             "forces push %d, pull %d, atomic %d (pulse ends; asked %s); %s; GPU %d, %d rank(s) "
             "on it%s",
             fz_name(z->tma), g->npulses, z->c.bx, g->npulses,
             z->tma ? ", bulk copies per warp" : "",
             z->nxput == 0      ? "direct stores"
             : z->nxdirect == 0 ? "put with signal"
                                : "mixed",
             z->nfmode[0], z->nfmode[1], z->nfmode[2], hxi_fz_fmode_names[z->fmode],
             hxi_shm_mode(&z->s), g->device, g->ranks_on_device, g->mps ? ", MPS" : "");
}

/* A full-shell plan orders its forwards inside the kernel (hxi_k_fz_forward,
 * a.order) where every rank reaches each of its senders' ack slots by
 * store (unused on such a plan: it has no reverse), else through
 * hxi_shm_order's vote. The same on every rank, into *out. Collective. */
static hx_status fz_order_in_kernel(hx_transport *t, hxi_fz *z, int *out)
{
    int order = t->plan->full_shell && !z->s.force_put;
    for (int p = 0; p < z->s.g.npulses; p++) {
        const hxi_gpu_pulse *q = &z->s.g.pulse[p];
        hxi_fz_pulse *d = &z->c.hp[p];
        d->free_peer = order && q->nrecv > 0 ? hxi_shm_api_ptr(z->ack + p, q->recv_rank) : NULL;
        if (q->nrecv > 0 && !d->free_peer)
            order = 0;
    }
    int no = !order;
    HXI_CHECK(hxi_allreduce_int(t->comm, &no, 1, 1));
    *out = !no;
    return HX_OK;
}

/* Pulse ends whose forces a reverse's fields cannot ride (fused_fields.c):
 * sent by a put or by remote atomics, received by remote atomics, or
 * received where the sender's ack slot is out of reach of a store. */
static int fz_forces_off(const hxi_fz *z, int np)
{
    int off = 0;
    for (int p = 0; p < np; p++) {
        const hxi_fz_pulse *d = &z->c.hp[p];
        off += d->g.nrecv > 0 && d->fsend != HXI_FZ_FS_DIRECT && d->fsend != HXI_FZ_FS_PULL;
        off += d->g.nsend > 0 && (d->frecv == HXI_FZ_F_ATOMIC || !d->ack_peer);
    }
    return off;
}

/* A new plan: its pulses' reach, the peer maps (atomic mode), every
 * pulse's descriptor, and their device copies. */
static hx_status fz_set_plan(hx_transport *t)
{
    hxi_fz *z = t->impl;
    hxi_gpu *g = &z->s.g;
    int stale = 0;
    HXI_CHECK(fz_take_plan(t, z, &stale));
    const int np = g->npulses;
    hxi_fz_seg *segs = NULL;
    int nseg = 0, seg_range[HX_MAX_PULSES][2], pmap_off[HX_MAX_PULSES];
    int *pmaps = NULL;
    size_t pmap_total = 0;
    hx_status st = hxi_fz_segments(t->plan, &segs, &nseg, seg_range);
    HXI_CHECK_GOTO(hxi_agree(t->comm, st), st, done);
    if (stale)
        HXI_CHECK_GOTO(fz_learn_reach(t, z), st, done);
    HXI_CHECK_GOTO(fz_peer_maps(t, z, pmap_off, &pmaps, &pmap_total), st, done);

    memset(z->nfmode, 0, sizeof z->nfmode);
    z->nxdirect = z->nxput = 0;
    int unpack_atomic = 0;
    for (int p = 0; p < np; p++) {
        hxi_fz_pulse *d = &z->c.hp[p];
        hxi_fz_pulse_from_plan(d, &g->pulse[p], seg_range[p]);
        d->pmap_offset = pmap_off[p];
        fz_pulse_coords(t, z, d, p);
        unpack_atomic |= fz_pulse_forces(t, z, d, p);
    }
    hxi_fz_order(&z->c, np, t->plan);
    int order = 0;
    HXI_CHECK_GOTO(fz_order_in_kernel(t, z, &order), st, done);
    hxi_fzf_new_plan(&z->fzf, z->nxput, fz_forces_off(z, np));
    HXI_CHECK_GOTO(fz_upload(t, z, pmaps, pmap_total, segs, nseg, unpack_atomic), st, done);
    z->c.args.order = order; /* the upload set the arguments afresh */
    fz_describe(t, z);
done:
    free(segs);
    free(pmaps);
    return st;
}

static hx_status fz_forward(hx_transport *t)
{
    hxi_fz *z = t->impl;
    if (!z->c.args.order) /* else the kernel orders itself (hxi_k_fz_forward) */
        HXI_CHECK(hxi_shm_order(t));
    return hxi_fz_core_forward(&z->c, &z->s.g);
}

static hx_status fz_reverse(hx_transport *t)
{
    hxi_fz *z = t->impl;
    return hxi_fz_core_reverse(&z->c, &z->s.g, t);
}

/* Fields forward: with the coordinates in the fused kernel where every
 * rank can, else the generic device path (the same choice on every rank). */
static hx_status fz_fields_forward(hx_transport *t, const hxi_field *f, int n)
{
    hxi_fz *z = t->impl;
    int done = 0;
    HXI_CHECK(hxi_fzf_forward(t, &z->fzf, &z->c, &z->s.g, f, n, &done));
    return done ? HX_OK : hxi_fdev_forward(t, f, n);
}

/* Fields reverse: with the forces in the fused kernel where every rank
 * can, else the generic device path (the same choice on every rank). */
static hx_status fz_fields_reverse(hx_transport *t, const hxi_field *f, int n)
{
    hxi_fz *z = t->impl;
    int done = 0;
    HXI_CHECK(hxi_fzf_reverse(t, &z->fzf, &z->c, &z->s.g, f, n, &done));
    return done ? HX_OK : hxi_fdev_reverse(t, f, n);
}

static hx_status fz_step_graph(hx_transport *t)
{
    hxi_fz *z = t->impl;
    return hxi_fz_core_step_graph(&z->c, &z->s.g);
}

const hxi_transport_ops hxi_transport_nvshmem_fused = {
    .name = "nvshmem-fused",
    .caps = HX_CAP_DEVICE | HX_CAP_FIELDS | HX_CAP_PEER | HX_CAP_GRAPH | HX_CAP_VOTE,
    .create = fz_create_plain,
    .destroy = fz_destroy,
    .set_plan = fz_set_plan,
    .forward = fz_forward,
    .reverse = fz_reverse,
    .xchg_reserve = hxi_shm_xchg_reserve,
    .xchg = hxi_shm_xchg,
    .vote = hxi_shm_vote,
    .sync = hxi_shm_sync,
    .step_graph = fz_step_graph,
    .fields_forward = fz_fields_forward,
    .fields_reverse = fz_fields_reverse,
};

const hxi_transport_ops hxi_transport_nvshmem_fused_tma = {
    .name = "nvshmem-fused-tma",
    .caps = HX_CAP_DEVICE | HX_CAP_FIELDS | HX_CAP_PEER | HX_CAP_GRAPH | HX_CAP_VOTE,
    .create = fz_create_tma,
    .destroy = fz_destroy,
    .set_plan = fz_set_plan,
    .forward = fz_forward,
    .reverse = fz_reverse,
    .xchg_reserve = hxi_shm_xchg_reserve,
    .xchg = hxi_shm_xchg,
    .vote = hxi_shm_vote,
    .sync = hxi_shm_sync,
    .step_graph = fz_step_graph,
    .fields_forward = fz_fields_forward,
    .fields_reverse = fz_fields_reverse,
};

/* ------------------------------------------------------------ floor probe */

const char *hxi_fused_default_force_mode(void)
{
    return hxi_fz_fmode_names[FZ_DEFAULT_FMODE];
}

hx_status hxi_fused_pingpong(hx_transport *t, long bytes, int iters, double *oneway_us)
{
    if (t->ops != &hxi_transport_nvshmem_fused && t->ops != &hxi_transport_nvshmem_fused_tma)
        return hxi_error(HX_ERR_INVALID, "the ping-pong probe needs an nvshmem-fused transport");
    hxi_fz *z = t->impl;
    hxi_gpu *g = &z->s.g;
    hx_status st = HX_OK;
    long nfloat = bytes > 0 ? (bytes + 3) / 4 : 0;
    float *buf = NULL, *src = NULL;
    uint64_t *flag = NULL, *d_ns = NULL;
    unsigned *cnt = NULL;
    *oneway_us = 0.0;
    if (g->nranks < 2)
        return hxi_error(HX_ERR_INVALID, "the ping-pong probe needs 2 ranks or more");
    HXI_CHECK(hxi_shm_alloc(t->comm, (void **) &buf, (size_t) (nfloat + 4) * sizeof(float),
                            "the ping-pong buffer"));
    HXI_CHECK_GOTO(hxi_shm_alloc(t->comm, (void **) &flag, sizeof(uint64_t), "the ping-pong flag"),
                   st, out);
    int role = g->rank;
    int bad = 0;
    if (role < 2) {
        bad |= cudaMemset(flag, 0, sizeof(uint64_t)) != cudaSuccess;
        bad |= hxi_gpu_malloc((void **) &src, (size_t) (nfloat + 4) * sizeof(float),
                              "ping-pong source") != HX_OK;
        bad |= hxi_gpu_malloc((void **) &cnt, sizeof(unsigned), "ping-pong counter") != HX_OK;
        bad |= hxi_gpu_malloc((void **) &d_ns, sizeof(uint64_t), "ping-pong timer") != HX_OK;
        if (!bad) {
            bad |= cudaMemset(src, 0, (size_t) (nfloat + 4) * sizeof(float)) != cudaSuccess;
            bad |= cudaMemset(cnt, 0, sizeof(unsigned)) != cudaSuccess;
            bad |= cudaMemset(d_ns, 0, sizeof(uint64_t)) != cudaSuccess;
            bad |= cudaDeviceSynchronize() != cudaSuccess;
        }
        if (!hxi_shm_api_ptr(buf, 1 - role) || !hxi_shm_api_ptr(flag, 1 - role))
            bad = 2;
    }
    HXI_CHECK_GOTO(hxi_allreduce_int(t->comm, &bad, 1, 1), st, out);
    if (bad) {
        st = hxi_error(bad == 2 ? HX_ERR_UNSUPPORTED : HX_ERR_CUDA, "ping-pong probe: %s",
                       bad == 2 ? "ranks 0 and 1 cannot reach each other by load/store"
                                : "device set-up failed");
        goto out;
    }
    HXI_CHECK_GOTO(hxi_barrier(t->comm), st, out);
    if (role < 2) {
        int per_sm = hxi_fz_blocks_per_sm(0);
        int sharing = g->ranks_on_device > 0 ? g->ranks_on_device : 1;
        long cap = (long) per_sm * g->sm_count / sharing;
        long bx = (nfloat / 3 + HXI_FZ_THREADS - 1) / HXI_FZ_THREADS;
        if (bx > cap)
            bx = cap;
        if (bx < 1)
            bx = 1;
        int warm = iters / 10 + 5;
        cudaError_t e = hxi_fz_pingpong(g->stream, role, hxi_shm_api_ptr(buf, 1 - role),
                                        hxi_shm_api_ptr(flag, 1 - role), flag, src, nfloat,
                                        (int) bx, iters, warm, 0, cnt, d_ns);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(g->stream);
        uint64_t ns = 0;
        if (e == cudaSuccess)
            e = cudaMemcpy(&ns, d_ns, sizeof ns, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess)
            st = hxi_cuda_error(e, "ping-pong kernel", __FILE__, __LINE__);
        else if (role == 0 && ns == 0)
            st = hxi_error(HX_ERR_TIMEOUT, "ping-pong probe: rank 1 did not answer within 10 s");
        else
            *oneway_us = 1e-3 * (double) ns / (2.0 * iters);
    }
    st = hxi_agree(t->comm, st);
    if (st == HX_OK)
        st = hxi_bcast(t->comm, oneway_us, sizeof *oneway_us, 0);
out:
    if (src)
        cudaFree(src);
    if (cnt)
        cudaFree(cnt);
    if (d_ns)
        cudaFree(d_ns);
    (void) hxi_barrier(t->comm);
    hxi_shm_free((void **) &flag);
    hxi_shm_free((void **) &buf);
    return st;
}
