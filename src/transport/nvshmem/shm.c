/*
 * shm.c - NVSHMEM set-up shared by the nvshmem-* transports.
 *
 * NVSHMEM starts once per process, with the unique-ID bootstrap: rank 0
 * asks for the ID and MPI broadcasts it (NVSHMEM's own MPI bootstrap plugin
 * is tied to one MPI build, the ID is 128 plain bytes). PE numbers are the
 * ranks of the first communicator, so every later user must bring a
 * communicator of the same size and numbering. NVSHMEM cannot start again
 * after nvshmem_finalize in the same process, so the last user's close
 * ends it for good: a program that uses NVSHMEM transports one after
 * another keeps one alive across them.
 */
#define _POSIX_C_SOURCE 200809L
#include "transport/nvshmem/shm.h"
#include "transport/gpu/kernels.h"
#include "transport/nvshmem/shm_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int shm_users;     /* open transports using NVSHMEM in this process */
static int shm_finalized; /* NVSHMEM ran and was finalised: no restart */

static hx_status shm_start(hx_comm *comm, int rank, int nranks)
{
    if (shm_users > 0) {
        int bad = hxi_shm_api_n_pes() != nranks || hxi_shm_api_my_pe() != rank;
        HXI_CHECK(hxi_allreduce_int(comm, &bad, 1, 1));
        if (bad)
            return hxi_error(HX_ERR_UNSUPPORTED,
                             "NVSHMEM runs over %d PEs numbered by the communicator of the first "
                             "nvshmem transport; this communicator (%d ranks) numbers them "
                             "differently; use the same communicator for every nvshmem transport",
                             hxi_shm_api_n_pes(), nranks);
        shm_users++;
        return HX_OK;
    }
    int bad = shm_finalized;
    HXI_CHECK(hxi_allreduce_int(comm, &bad, 1, 1));
    if (bad)
        return hxi_error(HX_ERR_UNSUPPORTED,
                         "NVSHMEM was finalised when the last nvshmem transport of this process "
                         "was destroyed and cannot start again; keep one nvshmem transport alive "
                         "while creating the next");
    unsigned char uid[HXI_SHM_UID_BYTES];
    memset(uid, 0, sizeof uid);
    int st = 0;
    if (rank == 0)
        st = hxi_shm_api_get_uid(uid);
    HXI_CHECK(hxi_allreduce_int(comm, &st, 1, 1));
    if (st != 0)
        return hxi_error(HX_ERR_NVSHMEM, "nvshmemx_get_uniqueid failed on rank 0 (status %d)", st);
    HXI_CHECK(hxi_bcast(comm, uid, (size_t) hxi_shm_api_uid_bytes(), 0));
    st = hxi_shm_api_init(rank, nranks, uid);
    int any = st != 0;
    HXI_CHECK(hxi_allreduce_int(comm, &any, 1, 1));
    if (any)
        return hxi_error(HX_ERR_NVSHMEM,
                         "NVSHMEM initialisation (unique-ID bootstrap) failed (status %d on rank "
                         "%d); run with NVSHMEM_DEBUG=WARN for NVSHMEM's reason",
                         st, rank);
    if (hxi_shm_api_n_pes() != nranks || hxi_shm_api_my_pe() != rank) {
        return hxi_error(HX_ERR_NVSHMEM, "NVSHMEM started with %d PEs (PE %d), expected %d (%d)",
                         hxi_shm_api_n_pes(), hxi_shm_api_my_pe(), nranks, rank);
    }
    shm_users = 1;
    return HX_OK;
}

static void shm_stop(void)
{
    if (shm_users <= 0)
        return;
    if (--shm_users == 0) {
        hxi_shm_api_finalize();
        shm_finalized = 1;
    }
}

hx_status hxi_shm_alloc(hx_comm *comm, void **p, size_t bytes, const char *what)
{
    *p = hxi_shm_api_malloc(bytes);
    int bad = *p == NULL;
    HXI_CHECK(hxi_allreduce_int(comm, &bad, 1, 1));
    if (bad) {
        hxi_shm_api_free(*p);
        *p = NULL;
        return hxi_error(HX_ERR_NOMEM,
                         "nvshmem_malloc of %zu bytes for %s failed on some rank: the symmetric "
                         "heap is too small; raise NVSHMEM_SYMMETRIC_SIZE (e.g. 8G) or use more "
                         "GPUs",
                         bytes, what);
    }
    return HX_OK;
}

void hxi_shm_free(void **p)
{
    hxi_shm_api_free(*p); /* collective even for NULL, as every rank calls it */
    *p = NULL;
}

hx_status hxi_shm_open(hxi_shm *s, hx_transport *t, const char *who)
{
    memset(s, 0, sizeof *s);
    hx_status st = hxi_gpu_open(&s->g, t, who);
    if (st != HX_OK)
        return st;

    /* Several processes on one GPU: device-side spin waits need the
     * processes to run at the same time, which only MPS gives; without it
     * they time-slice and a waiting kernel can hold the GPU from the peer
     * it waits for. */
    int refuse =
        s->g.ranks_on_device > 1 && !s->g.mps && !hxi_knobs()->allow_shared_gpu;
    HXI_CHECK_GOTO(hxi_allreduce_int(t->comm, &refuse, 1, 1), st, fail_gpu);
    if (refuse) {
        if (s->g.ranks_on_device > 1 && !s->g.mps)
            st = hxi_gpu_refuse_shared(
                &s->g, "no MPS daemon runs (device-side waits of processes time-sliced on one GPU "
                       "do not progress; start MPS with nvidia-cuda-mps-control -d, or set "
                       "HALOX_ALLOW_SHARED_GPU=1 to try anyway)");
        else
            st = hxi_error(HX_ERR_UNSUPPORTED,
                           "transport %s: another rank shares its GPU with other processes and no "
                           "MPS daemon runs there; start MPS or run one process per GPU",
                           who);
        goto fail_gpu;
    }
    HXI_CHECK_GOTO(shm_start(t->comm, s->g.rank, s->g.nranks), st, fail_gpu);
    s->init_status = hxi_shm_api_status();
    HXI_CHECK_GOTO(hxi_shm_alloc(t->comm, (void **) &s->sig, HXI_SHM_NSIG * sizeof(uint64_t),
                                 "the signal slots"),
                   st, fail_shm);
    HXI_CUDA_GOTO(cudaMemset(s->sig, 0, HXI_SHM_NSIG * sizeof(uint64_t)), st, fail_sig);
    HXI_CHECK_GOTO(
        hxi_gpu_malloc((void **) &s->d_count, HXI_SHM_NSIG * sizeof(int), "the block counters"), st,
        fail_sig);
    HXI_CUDA_GOTO(cudaMemset(s->d_count, 0, HXI_SHM_NSIG * sizeof(int)), st, fail_sig);
    HXI_CHECK_GOTO(hxi_agree(t->comm, hxi_shm_vote_open(s, t)), st, fail_sig);
    HXI_CUDA_GOTO(cudaDeviceSynchronize(), st, fail_sig);
    /* No peer may signal before every slot is zero. */
    HXI_CHECK_GOTO(hxi_barrier(t->comm), st, fail_sig);
    s->force_put = t->opts.force_put != 0; /* HALOX_FORCE_PUT already, where unset */
    if (t->opts.capacity > 0) {
        size_t bytes = (size_t) t->opts.capacity * 3 * sizeof(float);
        HXI_CHECK_GOTO(hxi_shm_alloc(t->comm, &t->x, bytes, "coordinates"), st, fail_sig);
        HXI_CHECK_GOTO(hxi_shm_alloc(t->comm, &t->f, bytes, "forces"), st, fail_sig);
        t->capacity = t->opts.capacity;
    }
    return HX_OK;
fail_sig:
    if (s->d_count)
        cudaFree(s->d_count);
    s->d_count = NULL;
    /* Collective frees in one order on every rank: x, f, sig, votes. */
    hxi_shm_free(&t->x);
    hxi_shm_free(&t->f);
    hxi_shm_free((void **) &s->sig);
    hxi_shm_vote_close(s);
fail_shm:
    shm_stop();
fail_gpu:
    hxi_gpu_close(&s->g);
    return st;
}

void hxi_shm_close(hxi_shm *s, hx_transport *t)
{
    if (s->g.stream)
        (void) cudaStreamSynchronize(s->g.stream);
    (void) hxi_barrier(t->comm);
    hxi_shm_free(&t->x);
    hxi_shm_free(&t->f);
    hxi_shm_free((void **) &s->xstage);
    hxi_shm_free((void **) &s->fstage);
    for (int k = 0; k < HXI_XCHG_SLOTS; k++)
        hxi_shm_free(&s->xch[k]);
    hxi_shm_free((void **) &s->sig);
    hxi_shm_vote_close(s);
    if (s->d_count)
        cudaFree(s->d_count);
    s->d_count = NULL;
    shm_stop();
    hxi_gpu_close(&s->g);
}

/* Reallocates a symmetric array of `atoms` atoms, keeping `keep` atoms. */
static hx_status sym_regrow(hx_comm *comm, void **p, size_t atoms, size_t keep, const char *what)
{
    void *n = NULL;
    HXI_CHECK(hxi_shm_alloc(comm, &n, atoms * 3 * sizeof(float), what));
    if (*p && keep > 0) {
        cudaError_t e = cudaMemcpy(n, *p, keep * 3 * sizeof(float), cudaMemcpyDeviceToDevice);
        if (e != cudaSuccess)
            (void) hxi_cuda_error(e, "cudaMemcpy (keeping data while growing)", __FILE__, __LINE__);
    }
    hxi_shm_free(p);
    *p = n;
    return HX_OK;
}

hx_status hxi_shm_set_plan(hxi_shm *s, hx_transport *t)
{
    HXI_CHECK(hxi_gpu_check_usable(&s->g));
    if (s->g.plan_wait)
        HXI_CUDA(cudaStreamSynchronize(s->g.stream));
    const hx_plan *plan = t->plan;
    int grow = 0, cap = 0;
    HXI_CHECK(hxi_transport_fit(t, &grow, &cap));
    /* Staging slots: one per pulse, as large as the largest send of any
     * rank, so that a slot's offset is the same on every rank. */
    int np = hx_plan_npulses(plan);
    int stride = plan->max_nsend > 0 ? plan->max_nsend : 1;
    int v[2] = {(size_t) np * (size_t) stride > s->stage_cap || !s->xstage, s->set_plan_max};
    HXI_CHECK(hxi_allreduce_int(t->comm, v, 2, 1));
    const int sgrow = v[0];
    s->set_plan_max = v[1];
    if (grow || sgrow) {
        /* Our kernels queued before may still use the arrays (the host
         * waited for them above unless HALOX_PLAN_WAIT=0), and peers may
         * still be finishing their last step's reads of what we sent:
         * nobody frees before everybody has drained. Without growth the
         * new descriptors go to the GPU in stream order, behind the
         * kernels that read the old ones. */
        HXI_CUDA(cudaStreamSynchronize(s->g.stream));
        HXI_CHECK(hxi_barrier(t->comm));
    }
    if (grow) {
        size_t keep = t->x ? (size_t) (t->capacity < cap ? t->capacity : cap) : 0;
        HXI_CHECK(sym_regrow(t->comm, &t->x, (size_t) cap, keep, "coordinates"));
        HXI_CHECK(sym_regrow(t->comm, &t->f, (size_t) cap, keep, "forces"));
        t->capacity = cap;
    }
    if (sgrow) {
        int need = np * stride, agreed = need;
        HXI_CHECK(hxi_allreduce_int(t->comm, &agreed, 1, 1));
        size_t scap = (size_t) hxi_capacity_for(agreed, 1024);
        hxi_shm_free((void **) &s->xstage);
        hxi_shm_free((void **) &s->fstage);
        s->stage_cap = 0;
        HXI_CHECK(hxi_shm_alloc(t->comm, (void **) &s->xstage, scap * 3 * sizeof(float),
                            "the coordinate staging slots"));
        HXI_CHECK(hxi_shm_alloc(t->comm, (void **) &s->fstage, scap * 3 * sizeof(float),
                            "the force staging slots"));
        s->stage_cap = scap;
    }
    s->stride = stride;
    HXI_CHECK(hxi_gpu_upload_plan(&s->g, plan));

    s->ndirect = 0;
    float *x = t->x;
    for (int p = 0; p < np; p++) {
        const hxi_gpu_pulse *q = &s->g.pulse[p];
        s->peer_x[p] = NULL;
        s->peer_xsig[p] = NULL;
        s->peer_f[p] = NULL;
        s->peer_fsig[p] = NULL;
        if (s->force_put)
            continue;
        float *px = hxi_shm_api_ptr(x, q->send_rank);
        uint64_t *pxs = hxi_shm_api_ptr(s->sig + p, q->send_rank);
        if (px && pxs) {
            s->peer_x[p] = px + (size_t) q->peer_offset * 3;
            s->peer_xsig[p] = pxs;
            s->ndirect++;
        }
        float *pf = hxi_shm_api_ptr(s->fstage, q->recv_rank);
        uint64_t *pfs = hxi_shm_api_ptr(s->sig + HXI_SHM_FSIG + p, q->recv_rank);
        if (pf && pfs) {
            s->peer_f[p] = pf + (size_t) p * (size_t) stride * 3;
            s->peer_fsig[p] = pfs;
            s->ndirect++;
        }
    }
    return HX_OK;
}

const char *hxi_shm_paths(const hxi_shm *s)
{
    if (s->force_put)
        return "put with signal (forced: peer pointers ignored)";
    if (s->g.npulses == 0)
        return "no pulses";
    if (s->ndirect == 2 * s->g.npulses)
        return "direct stores to peer memory (nvshmem_ptr)";
    if (s->ndirect == 0)
        return "put with signal (no peer pointers)";
    return "mixed: direct stores where nvshmem_ptr allows, puts elsewhere";
}

const char *hxi_shm_mode(const hxi_shm *s)
{
    switch (s->init_status) {
    case HXI_SHM_LIMITED_MPG:
        return "NVSHMEM limited multi-process-per-GPU mode";
    case HXI_SHM_FULL_MPG:
        return "NVSHMEM full multi-process-per-GPU mode";
    default:
        return "one process per GPU";
    }
}

hx_status hxi_shm_create(hx_transport *t, const char *who)
{
    hxi_shm *s = NULL;
    HXI_CHECK(hxi_alloc((void **) &s, sizeof *s, who));
    hx_status st = hxi_shm_open(s, t, who);
    if (st != HX_OK) {
        free(s);
        return st;
    }
    t->impl = s;
    return HX_OK;
}

void hxi_shm_destroy(hx_transport *t)
{
    hxi_shm *s = t->impl;
    if (!s)
        return;
    hxi_shm_close(s, t);
    free(s);
    t->impl = NULL;
}

hx_status hxi_shm_sync(hx_transport *t)
{
    hxi_shm *s = t->impl;
    return hxi_gpu_sync(&s->g);
}

hx_status hxi_shm_xchg_reserve(hx_transport *t, size_t bytes)
{
    hxi_shm *s = t->impl;
    if (bytes <= s->xch_cap && s->xch[0])
        return HX_OK;
    /* Every rank passes the same size, so all take this branch together;
     * peers may still read what they received last. */
    hx_status st = HX_OK;
    if (cudaStreamSynchronize(s->g.stream) != cudaSuccess)
        st = hxi_cuda_error(cudaGetLastError(), "waiting before the landing buffers grow", __FILE__,
                           __LINE__);
    HXI_CHECK(hxi_agree(t->comm, st));
    HXI_CHECK(hxi_barrier(t->comm));
    size_t cap = bytes + bytes / 4 + 4096;
    for (int k = 0; k < HXI_XCHG_SLOTS; k++) {
        hxi_shm_free(&s->xch[k]);
        s->xch_cap = 0;
        HXI_CHECK(hxi_shm_alloc(t->comm, &s->xch[k], cap, "the rebuild's landing buffers"));
    }
    s->xch_cap = cap;
    return HX_OK;
}

hx_status hxi_shm_xchg(hx_transport *t, hxi_xchg_msg *m, int n)
{
    hxi_shm *s = t->impl;
    hxi_gpu *g = &s->g;
    HXI_CHECK(hxi_gpu_check_usable(g));
    if (n < 1 || n > HXI_XCHG_DIRECT_MAX)
        return hxi_error(HX_ERR_INVALID, "%s: rebuild exchange of %d messages at once", g->who, n);
    for (int k = 0; k < n; k++) {
        const int slot = m[k].slot;
        if (slot < 0 || slot >= HXI_XCHG_SLOTS || (k > 0 && slot == m[0].slot) ||
            m[k].sbytes > s->xch_cap || m[k].rbytes > s->xch_cap)
            return hxi_error(HX_ERR_OVERFLOW,
                             "%s: rebuild exchange of %zu bytes out, %zu in (slot %d) does not "
                             "fit the %zu reserved, or its slot is taken: call xchg_reserve with "
                             "the largest message first, one message a slot",
                             g->who, m[k].sbytes, m[k].rbytes, slot, s->xch_cap);
    }
    hxi_xchg_direct_msg dm[HXI_XCHG_DIRECT_MAX];
    int direct = !s->force_put;
    for (int k = 0; k < n; k++) {
        const int slot = m[k].slot;
        uint64_t *sig = s->sig + HXI_SHM_XSIG + slot;
        hxi_xchg_direct_msg *d = &dm[k];
        memset(d, 0, sizeof *d);
        d->value = ++s->xseq[slot];
        d->w.step = d->value;
        d->w.timeout_ns = g->timeout_ns;
        d->w.rank = g->rank;
        d->w.peer = m[k].src;
        d->w.pulse = -1;
        d->w.dim = -1;
        d->w.kind = 2;
        d->src = m[k].sbuf;
        d->bytes = m[k].sbytes;
        d->my_sig = sig;
        d->counter = s->d_count + HXI_SHM_XSIG + slot;
        d->peer_dst = direct ? hxi_shm_api_ptr(s->xch[slot], m[k].dest) : NULL;
        d->peer_sig = direct ? hxi_shm_api_ptr(sig, m[k].dest) : NULL;
        direct = direct && d->peer_dst && d->peer_sig && m[k].sbytes % 4 == 0;
        m[k].rbuf = s->xch[slot];
    }
    /* Load/store peers: copy, signal and wait in one launch for all the
     * messages (a launch costs the host microseconds; the rebuild makes
     * several of these). Else NVSHMEM's put-with-signal on the stream, then
     * the wait, a message at a time. */
    if (direct) {
        HXI_CUDA(hxi_gpu_xchg_direct(g->stream, dm, n, g->d_hit, g->rec_d,
                                     g->sm_count > 0 ? g->sm_count : 1));
        return HX_OK;
    }
    for (int k = 0; k < n; k++) {
        const int slot = m[k].slot;
        uint64_t *sig = s->sig + HXI_SHM_XSIG + slot;
        if (m[k].sbytes > 0)
            hxi_shm_api_putmem_signal_on_stream(s->xch[slot], m[k].sbuf, m[k].sbytes, sig,
                                                dm[k].value, m[k].dest, g->stream);
        else
            hxi_shm_api_signal_on_stream(sig, dm[k].value, m[k].dest, g->stream);
        HXI_CUDA(hxi_gpu_wait_signal(g->stream, sig, dm[k].w, g->d_hit, g->rec_d));
    }
    return HX_OK;
}
