/*
 * ncd.c - the `nccl-dev` transport: the fused design of nvshmem-fused (one
 * kernel moves the coordinates of every pulse, one moves the forces back;
 * transport/fused/) on NCCL's device API instead of NVSHMEM, for sites
 * that ship NCCL 2.28 or later and not NVSHMEM.
 *
 * Memory: every array a peer touches lives in an NCCL window, memory from
 * ncclMemAlloc registered with ncclCommWindowRegister (symmetric: every
 * rank registers the same size, in the same order). Where a peer's window
 * lies in this process comes from ncclGetLsaPointer, asked once per
 * registration by a one-thread kernel for every rank of the LSA team (the
 * ranks NCCL reaches by load/store: NVLink, or PCIe peers), and the
 * descriptors of the fused kernels take those pointers as they take
 * nvshmem_ptr's. Windows: the signal and ack slots (fixed), coordinates
 * and forces (grown with the plan, contents kept), the force staging slots
 * of push mode.
 *
 * Paths: coordinates by direct stores and a release of the step into the
 * receiver's slot; forces in pull mode (default: the receiver reads the
 * owner's array, then acks) or push mode (HALOX_FUSED_FORCE_MODE=push: the
 * owner stores into the receiver's staging slot). Both keep the cpu
 * transport's order of additions, so coordinates and forces are bitwise
 * those of `cpu`. A peer outside the LSA team would need NCCL's GIN
 * (put with signal over the network), which this transport does not use
 * yet: set_plan refuses such a plan and says what to use instead. No NCCL
 * kernel runs in a step (the waits are the fused kernels' own, bounded), so
 * a lost peer is HX_ERR_TIMEOUT as in nvshmem-fused.
 *
 * One rank: no peer, no pulse, nothing to exchange; its arrays are plain
 * device memory and no NCCL communicator is made. NCCL 2.28 gives a
 * communicator of one rank no symmetric memory (ncclCommWindowRegister
 * returns no window, ncclDevCommCreate "invalid usage"), so the windows
 * of the general path cannot exist there, and need not.
 */
#define _POSIX_C_SOURCE 200809L
#include "transport/fused/fused_core.h"
#include "transport/gpu/fields_dev.h"
#include "transport/nccl/comm.h"
#include "transport/nccl_dev/ncd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCD_WHO "nccl-dev"
/* NCCL's first release with the device API (nccl_device.h). */
#define NCD_MIN_NCCL 22800

/* One registered window: this rank's memory and where each LSA peer's lies. */
typedef struct ncd_win {
    void *ptr; /* ncclMemAlloc'd and registered; cudaMalloc'd on one rank */
    size_t bytes;
    ncclWindow_t win;
    void **peer; /* host: lsa_size base pointers */
} ncd_win;

typedef struct hxi_ncd {
    hxi_gpu g;
    hxi_fz_core c;
    ncclComm_t comm;
    void *devcomm; /* ncclDevComm (ncd_kernels.cu) */
    int lsa_size;
    int solo;       /* one rank: no NCCL, plain device memory (see the top) */
    int fmode;      /* HXI_FZ_F_PULL or HXI_FZ_F_PUSH, the same on every rank */
    void **d_bases; /* device: lsa_size pointers, hxi_ncd_bases' output */
    /* Slots: coordinate signal of pulse p at p, force signal at
     * HX_MAX_PULSES + p, ack at 2 * HX_MAX_PULSES + p. */
    ncd_win flags;
    ncd_win x, f;  /* t->x, t->f */
    ncd_win stage; /* push mode: npulses force slots of `stride` atoms */
    size_t stage_cap;
    int stride;
} hxi_ncd;

#define NCD_FSIG   HX_MAX_PULSES
#define NCD_ACK    (2 * HX_MAX_PULSES)
#define NCD_NFLAGS (3 * HX_MAX_PULSES)

/* Releases a window. Collective where it was registered (deregistration
 * is); `registered` 0 skips that part (a registration that failed
 * somewhere: the communicator goes next, and NCCL's windows with it). */
static void ncd_win_close(hxi_ncd *m, ncd_win *w, int registered)
{
    if (w->win && registered)
        (void) ncclCommWindowDeregister(m->comm, w->win);
    if (w->ptr && m->solo)
        (void) cudaFree(w->ptr);
    else if (w->ptr)
        (void) ncclMemFree(w->ptr);
    free(w->peer);
    memset(w, 0, sizeof *w);
}

/* Collective: a window of `bytes` (the same on every rank), its first
 * keep_bytes copied from `keep` (device), the rest zero, registered, and
 * the LSA peers' bases looked up. On failure, on every rank, nothing is
 * left registered by this call. */
static hx_status ncd_win_open(hx_transport *t, hxi_ncd *m, ncd_win *w, size_t bytes,
                              const void *keep, size_t keep_bytes, const char *what)
{
    memset(w, 0, sizeof *w);
    hx_status st = HX_OK;
    ncclResult_t r = ncclSuccess;
    if (m->solo)
        st = hxi_gpu_malloc(&w->ptr, bytes, what);
    else
        r = ncclMemAlloc(&w->ptr, bytes);
    if (r != ncclSuccess) {
        w->ptr = NULL;
        st = hxi_error(HX_ERR_NOMEM, "%s: ncclMemAlloc of %zu bytes for %s failed: %s", NCD_WHO,
                       bytes, what, ncclGetErrorString(r));
    }
    if (st == HX_OK) {
        cudaError_t e = keep_bytes ? cudaMemcpy(w->ptr, keep, keep_bytes, cudaMemcpyDeviceToDevice)
                                   : cudaSuccess;
        if (e == cudaSuccess && bytes > keep_bytes)
            e = cudaMemset((char *) w->ptr + keep_bytes, 0, bytes - keep_bytes);
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        if (e != cudaSuccess)
            st = hxi_cuda_error(e, "preparing an NCCL window", __FILE__, __LINE__);
    }
    if (st == HX_OK)
        st = hxi_alloc((void **) &w->peer, (size_t) m->lsa_size * sizeof(void *), what);
    if (m->solo) { /* its own memory is all it reaches */
        if (st != HX_OK) {
            ncd_win_close(m, w, 0);
            return st;
        }
        w->bytes = bytes;
        w->peer[0] = w->ptr;
        return HX_OK;
    }
    st = hxi_agree(t->comm, st);
    if (st == HX_OK) {
        r = ncclCommWindowRegister(m->comm, w->ptr, bytes, &w->win, NCCL_WIN_COLL_SYMMETRIC);
        if (r != ncclSuccess) {
            w->win = NULL;
            st = hxi_nccl_error(r, "ncclCommWindowRegister");
        }
        st = hxi_agree(t->comm, st);
    }
    if (st == HX_OK) {
        struct cudaPointerAttributes pa;
        cudaError_t e = cudaSuccess;
        if (!w->win)
            st = hxi_error(HX_ERR_UNSUPPORTED,
                           "%s: NCCL registered no window for %s: this communicator has no "
                           "symmetric memory (NCCL offers it where every two of its ranks on a "
                           "node reach each other by CUDA P2P, with cuMem allocations: "
                           "NCCL_CUMEM_ENABLE and NCCL_WIN_ENABLE must not be 0); use "
                           "nvshmem-fused or nccl",
                           NCD_WHO, what);
        else
            e = cudaPointerGetAttributes(&pa, (const void *) w->win);
        if (st != HX_OK) {
        } else if (e != cudaSuccess || pa.type != cudaMemoryTypeDevice) {
            (void) cudaGetLastError();
            st = hxi_error(HX_ERR_UNSUPPORTED,
                           "%s: NCCL's handle of the window for %s is not device memory; this "
                           "NCCL's device API is not the one %s was written for",
                           NCD_WHO, what, NCD_WHO);
        }
        st = hxi_agree(t->comm, st);
        if (st != HX_OK) {
            ncd_win_close(m, w, 1);
            return st;
        }
    }
    if (st == HX_OK) {
        w->bytes = bytes;
        cudaError_t e = hxi_ncd_bases(m->g.stream, w->win, m->lsa_size, m->d_bases);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(w->peer, m->d_bases, (size_t) m->lsa_size * sizeof(void *),
                                cudaMemcpyDeviceToHost, m->g.stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(m->g.stream);
        if (e != cudaSuccess)
            st = hxi_cuda_error(e, "looking up the LSA peers' windows", __FILE__, __LINE__);
        st = hxi_agree(t->comm, st);
        if (st != HX_OK) {
            ncd_win_close(m, w, 1); /* registered on every rank: collective */
            return st;
        }
        return HX_OK;
    }
    ncd_win_close(m, w, 0);
    return st;
}

/* Where `local` (inside window w) lies in world rank `rank`'s window, as
 * this process reaches it; NULL when rank is not in the LSA team. */
static int ncd_lsa_index(const hxi_ncd *m, int rank)
{
    if (m->solo)
        return rank == m->g.rank ? 0 : -1;
    return hxi_ncd_lsa_index(m->comm, rank);
}

static void *ncd_peer(const hxi_ncd *m, const ncd_win *w, const void *local, int rank)
{
    int k = ncd_lsa_index(m, rank);
    if (k < 0 || k >= m->lsa_size || !w->peer || !w->peer[k])
        return NULL;
    return (char *) w->peer[k] + ((const char *) local - (const char *) w->ptr);
}

static void ncd_free(hx_transport *t, hxi_ncd *m, int registered)
{
    hxi_fz_core_close(&m->c);
    ncd_win_close(m, &m->stage, registered);
    ncd_win_close(m, &m->f, registered);
    ncd_win_close(m, &m->x, registered);
    ncd_win_close(m, &m->flags, registered);
    t->x = t->f = NULL;
    if (m->d_bases)
        cudaFree(m->d_bases);
    if (m->devcomm)
        hxi_ncd_devcomm_destroy(m->comm, m->devcomm);
    if (m->comm)
        ncclCommDestroy(m->comm);
    hxi_gpu_close(&m->g);
    free(m);
    t->impl = NULL;
}

/* Collective: x and f windows of `cap` atoms, keeping their first atoms. */
static hx_status ncd_grow_arrays(hx_transport *t, hxi_ncd *m, int cap)
{
    const size_t bytes = (size_t) cap * 3 * sizeof(float);
    size_t keep =
        m->x.ptr ? (size_t) (t->capacity < cap ? t->capacity : cap) * 3 * sizeof(float) : 0;
    ncd_win *arr[2] = {&m->x, &m->f};
    const char *what[2] = {"coordinates", "forces"};
    for (int k = 0; k < 2; k++) {
        ncd_win next;
        HXI_CHECK(ncd_win_open(t, m, &next, bytes, arr[k]->ptr, keep, what[k]));
        ncd_win_close(m, arr[k], 1);
        *arr[k] = next;
    }
    t->x = m->x.ptr;
    t->f = m->f.ptr;
    t->capacity = cap;
    return HX_OK;
}

static void ncd_describe_solo(hx_transport *t, const hxi_ncd *m)
{
    snprintf(t->describe, sizeof t->describe,
             "%s: one rank, nothing to exchange; its arrays are device memory of its own (NCCL "
             "2.28 gives a communicator of one rank no symmetric memory); GPU %d",
             NCD_WHO, m->g.device);
}

static hx_status ncd_create(hx_transport *t)
{
    hxi_ncd *m = NULL;
    HXI_CHECK(hxi_alloc((void **) &m, sizeof *m, "the nccl-dev transport"));
    memset(m, 0, sizeof *m);
    hx_status st = hxi_gpu_open(&m->g, t, NCD_WHO);
    if (st != HX_OK) {
        free(m);
        return st;
    }
    t->impl = m;
    /* Built against NCCL 2.28 or later; the library loaded may be older. */
    int v = hxi_nccl_version_code();
    int old = v < NCD_MIN_NCCL;
    HXI_CHECK_GOTO(hxi_allreduce_int(t->comm, &old, 1, 1), st, fail);
    if (old) {
        st = hxi_error(HX_ERR_UNSUPPORTED,
                       "transport %s needs NCCL 2.28 or later at run time (its device API); "
                       "rank %d loaded NCCL %d.%d.%d: put a newer libnccl first on "
                       "LD_LIBRARY_PATH, or use nccl or nvshmem-fused",
                       NCD_WHO, m->g.rank, v / 10000, v / 100 % 100, v % 100);
        goto fail;
    }
    m->solo = hx_comm_size(t->comm) == 1;
    if (m->solo) {
        m->lsa_size = 1;
    } else {
        HXI_CHECK_GOTO(hxi_nccl_comm_open(t, &m->g, &m->comm), st, fail);
        int r = hxi_ncd_devcomm_create(m->comm, &m->devcomm);
        st = r == 0 ? HX_OK : hxi_nccl_error(r, "ncclDevCommCreate");
        HXI_CHECK_GOTO(hxi_agree(t->comm, st), st, fail);
        m->lsa_size = hxi_ncd_lsa_size(m->comm);
    }
    HXI_CHECK_GOTO(hxi_fz_force_mode(t, HXI_FZ_F_PULL, 2, &m->fmode), st, fail);
    st = hxi_fz_core_open(&m->c, NCD_WHO, 0);
    if (st == HX_OK)
        st = hxi_gpu_malloc((void **) &m->d_bases,
                            (size_t) (m->lsa_size > 0 ? m->lsa_size : 1) * sizeof(void *),
                            "the LSA peers' bases");
    HXI_CHECK_GOTO(hxi_agree(t->comm, st), st, fail);
    HXI_CHECK_GOTO(ncd_win_open(t, m, &m->flags, NCD_NFLAGS * sizeof(uint64_t), NULL, 0,
                                "the signal and ack slots"),
                   st, fail);
    /* No peer may signal before every rank's slots are zero. */
    HXI_CHECK_GOTO(hxi_barrier(t->comm), st, fail);
    if (t->opts.capacity > 0)
        HXI_CHECK_GOTO(ncd_grow_arrays(t, m, t->opts.capacity), st, fail);
    if (m->solo)
        ncd_describe_solo(t, m);
    else
        snprintf(t->describe, sizeof t->describe,
                 "%s: one kernel for all pulses each way, NCCL %d.%d.%d windows, load/store "
                 "within the LSA team of %d rank(s), forces %s; GPU %d",
                 NCD_WHO, v / 10000, v / 100 % 100, v % 100, m->lsa_size,
                 hxi_fz_fmode_names[m->fmode], m->g.device);
    return HX_OK;
fail:
    ncd_free(t, m, 1);
    return st;
}

static void ncd_destroy(hx_transport *t)
{
    hxi_ncd *m = t->impl;
    if (!m)
        return;
    if (m->g.stream)
        (void) cudaStreamSynchronize(m->g.stream);
    /* Peers may still read our arrays (pull) until their last step ends. */
    (void) hxi_barrier(t->comm);
    ncd_free(t, m, 1);
}

/* The pulses' peers must be in the LSA team: -1 when they are, else the
 * first pulse whose are not. */
static int ncd_unreached(const hxi_ncd *m, int *peer)
{
    for (int p = 0; p < m->g.npulses; p++) {
        const hxi_gpu_pulse *q = &m->g.pulse[p];
        if (q->nsend > 0 && ncd_lsa_index(m, q->send_rank) < 0) {
            *peer = q->send_rank;
            return p;
        }
        if (q->nrecv > 0 && ncd_lsa_index(m, q->recv_rank) < 0) {
            *peer = q->recv_rank;
            return p;
        }
    }
    return -1;
}

/* Fills the descriptors' pointers and modes (all pulses reach their peers
 * by load/store: ncd_unreached said so). */
static void ncd_describe_pulses(hx_transport *t, hxi_ncd *m, const int seg_range[][2])
{
    const uint64_t *sig = m->flags.ptr;
    for (int p = 0; p < m->g.npulses; p++) {
        const hxi_gpu_pulse *q = &m->g.pulse[p];
        hxi_fz_pulse *d = &m->c.hp[p];
        hxi_fz_pulse_from_plan(d, q, seg_range[p]);
        float *slot = (float *) m->stage.ptr + (size_t) p * (size_t) m->stride * 3;
        /* Coordinates: straight into send_rank's array, then its slot p. */
        d->xmode = HXI_FZ_X_DIRECT;
        d->xhead = -1;
        if (q->nsend > 0) {
            d->xdst =
                (float *) ncd_peer(m, &m->x, t->x, q->send_rank) + (size_t) q->peer_offset * 3;
            d->xsig = ncd_peer(m, &m->flags, sig + p, q->send_rank);
        }
        /* Forces we send (our halo entries of p, to recv_rank), and those
         * we receive (on our map entries, from send_rank). */
        if (m->fmode == HXI_FZ_F_PULL) {
            d->fsend = HXI_FZ_FS_PULL;
            d->frecv = HXI_FZ_F_PULL;
            if (q->nrecv > 0)
                d->fsig = ncd_peer(m, &m->flags, sig + NCD_FSIG + p, q->recv_rank);
            if (q->nsend > 0) {
                d->fsrc = (const float *) ncd_peer(m, &m->f, t->f, q->send_rank) +
                          (size_t) q->peer_offset * 3;
                d->ack_peer = ncd_peer(m, &m->flags, sig + NCD_ACK + p, q->send_rank);
            }
        } else {
            d->fsend = HXI_FZ_FS_DIRECT;
            d->frecv = HXI_FZ_F_PUSH;
            if (q->nrecv > 0) {
                d->fdst = ncd_peer(m, &m->stage, slot, q->recv_rank);
                d->fsig = ncd_peer(m, &m->flags, sig + NCD_FSIG + p, q->recv_rank);
            }
            d->fsrc = slot;
        }
    }
}

static hx_status ncd_set_plan(hx_transport *t)
{
    hxi_ncd *m = t->impl;
    hxi_gpu *g = &m->g;
    const hx_plan *plan = t->plan;
    HXI_CHECK(hxi_gpu_check_usable(g));
    /* The captured step refers to the old arrays and descriptors. */
    HXI_CUDA(cudaStreamSynchronize(g->stream));
    hxi_fz_core_drop_graph(&m->c);
    int grow = 0, cap = 0;
    HXI_CHECK(hxi_transport_fit(t, &grow, &cap));
    /* Staging slots (push): one per pulse, as large as the largest send of
     * any rank, so that a slot's offset is the same on every rank. */
    const int np = hx_plan_npulses(plan);
    const int stride = plan->max_nsend > 0 ? plan->max_nsend : 1;
    int need = m->fmode == HXI_FZ_F_PUSH ? np * stride : 1;
    int v[2] = {(size_t) need > m->stage_cap || !m->stage.ptr, need};
    HXI_CHECK(hxi_allreduce_int(t->comm, v, 2, 1));
    if (grow || v[0]) /* peers may still be reading what we sent last */
        HXI_CHECK(hxi_barrier(t->comm));
    if (grow)
        HXI_CHECK(ncd_grow_arrays(t, m, cap));
    if (v[0]) {
        size_t scap = (size_t) hxi_capacity_for(v[1], 1024);
        ncd_win_close(m, &m->stage, 1);
        m->stage_cap = 0;
        HXI_CHECK(ncd_win_open(t, m, &m->stage, scap * 3 * sizeof(float), NULL, 0,
                               "the force staging slots"));
        m->stage_cap = scap;
    }
    m->stride = stride;
    HXI_CHECK(hxi_gpu_upload_plan(g, plan));

    int peer = -1, p_bad = ncd_unreached(m, &peer);
    hx_status st = p_bad < 0 ? HX_OK
                             : hxi_error(HX_ERR_UNSUPPORTED,
                                         "transport %s: rank %d reaches rank %d (pulse %d) only "
                                         "over the network, outside NCCL's load/store (LSA) "
                                         "team; %s does not use NCCL's GIN for network peers "
                                         "yet: use nvshmem-fused or nccl across nodes",
                                         NCD_WHO, g->rank, peer, p_bad, NCD_WHO);
    HXI_CHECK(hxi_agree(t->comm, st));

    hxi_fz_seg *segs = NULL;
    int nseg = 0, seg_range[HX_MAX_PULSES][2];
    st = hxi_fz_segments(plan, &segs, &nseg, seg_range);
    if (st == HX_OK) {
        ncd_describe_pulses(t, m, seg_range);
        hxi_fz_order(&m->c, np, plan);
        const uint64_t *sig = m->flags.ptr;
        st = hxi_fz_core_adopt(&m->c, g, t, segs, nseg, sig, sig + NCD_ACK, NCD_FSIG, 0);
    }
    free(segs);
    HXI_CHECK(hxi_agree(t->comm, st));
    if (m->solo) {
        ncd_describe_solo(t, m);
        return HX_OK;
    }
    int vc = hxi_nccl_version_code();
    snprintf(t->describe, sizeof t->describe,
             "%s: one kernel for all %d pulses each way (%d x %d blocks); coordinates direct "
             "stores, forces %s, into NCCL %d.%d.%d windows (load/store within the LSA team of "
             "%d rank(s)); GPU %d",
             NCD_WHO, np, m->c.bx, np, hxi_fz_fmode_names[m->fmode], vc / 10000, vc / 100 % 100,
             vc % 100, m->lsa_size, g->device);
    return HX_OK;
}

/* A full-shell plan has no reverse to order the steps (a sender has this
 * step's forces only after the receiver read its halo), and this transport
 * has no device-side vote to stand in (the nvshmem-* transports'
 * hxi_shm_order): the host orders them, once the stream has drained, with
 * a barrier, so that no rank stores a step's halo into a peer that still
 * reads the previous one. Such a forward blocks and cannot be captured. */
static hx_status ncd_order(hx_transport *t, hxi_ncd *m)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (!t->plan->full_shell)
        return HX_OK;
    HXI_CUDA(cudaStreamIsCapturing(m->g.stream, &cs));
    if (cs != cudaStreamCaptureStatusNone)
        return hxi_error(HX_ERR_STATE,
                         "nccl-dev: a forward on a full-shell plan (newton off) waits for the "
                         "host and cannot be captured in a CUDA graph: use nvshmem-fused");
    HXI_CHECK(hxi_gpu_sync(&m->g));
    return hxi_barrier(t->comm);
}

static hx_status ncd_forward(hx_transport *t)
{
    hxi_ncd *m = t->impl;
    HXI_CHECK(ncd_order(t, m));
    return hxi_fz_core_forward(&m->c, &m->g);
}

static hx_status ncd_reverse(hx_transport *t)
{
    hxi_ncd *m = t->impl;
    return hxi_fz_core_reverse(&m->c, &m->g, t);
}

static hx_status ncd_sync(hx_transport *t)
{
    hxi_ncd *m = t->impl;
    return hxi_gpu_sync(&m->g);
}

static hx_status ncd_step_graph(hx_transport *t)
{
    hxi_ncd *m = t->impl;
    return hxi_fz_core_step_graph(&m->c, &m->g);
}

hx_status hxi_ncd_self_check(hx_transport *t)
{
    if (!t || t->ops != &hxi_transport_nccl_dev)
        return hxi_error(HX_ERR_INVALID, "the nccl-dev self check needs an nccl-dev transport");
    hxi_ncd *m = t->impl;
    if (!m->x.ptr || t->capacity < 1)
        return hxi_error(HX_ERR_STATE, "the nccl-dev self check needs arrays: set a plan first");
    float *self = ncd_peer(m, &m->x, m->x.ptr, m->g.rank);
    if (!self)
        return hxi_error(HX_ERR_STATE, "%s: rank %d is not in its own LSA team", NCD_WHO,
                         m->g.rank);
    const int n = 3 * t->capacity;
    float *out = NULL, *back = NULL;
    hx_status st = hxi_alloc((void **) &out, (size_t) n * sizeof(float), "a test pattern");
    if (st == HX_OK)
        st = hxi_alloc((void **) &back, (size_t) n * sizeof(float), "a test pattern");
    if (st == HX_OK) {
        for (int i = 0; i < n; i++)
            out[i] = (float) (i % 977) * 0.5f - (float) m->g.rank;
        cudaError_t e = cudaMemcpy(self, out, (size_t) n * sizeof(float), cudaMemcpyDefault);
        if (e == cudaSuccess)
            e = cudaMemcpy(back, m->x.ptr, (size_t) n * sizeof(float), cudaMemcpyDefault);
        if (e != cudaSuccess)
            st = hxi_cuda_error(e, "the nccl-dev self check's copies", __FILE__, __LINE__);
        else if (memcmp(out, back, (size_t) n * sizeof(float)) != 0)
            st = hxi_error(HX_ERR_STATE,
                           "%s: what was written through rank %d's LSA pointer to its own "
                           "coordinates (%p) did not come back through the local one (%p)",
                           NCD_WHO, m->g.rank, (void *) self, m->x.ptr);
    }
    free(out);
    free(back);
    return st;
}

const hxi_transport_ops hxi_transport_nccl_dev = {
    .name = NCD_WHO,
    .caps = HX_CAP_DEVICE | HX_CAP_FIELDS | HX_CAP_PEER | HX_CAP_GRAPH | HX_CAP_GPU_PER_RANK,
    /* NCCL refuses two ranks on one GPU and its exchange has not yet run
     * on two GPUs (on one rank there is nothing to exchange;
     * docs/transports.md). */
    .unproven = "experimental: its exchange has not yet run on two GPUs, one process each "
                "(NCCL refuses two ranks on one GPU); check its results against "
                "nvshmem-fused or cpu; auto leaves it out",
    .create = ncd_create,
    .destroy = ncd_destroy,
    .set_plan = ncd_set_plan,
    .forward = ncd_forward,
    .reverse = ncd_reverse,
    .sync = ncd_sync,
    .step_graph = ncd_step_graph,
    .fields_forward = hxi_fdev_forward,
    .fields_reverse = hxi_fdev_reverse,
};
