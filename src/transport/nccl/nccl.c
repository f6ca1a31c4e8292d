/*
 * nccl.c - the `nccl` transport: per pulse, a pack kernel and one grouped
 * ncclSend/ncclRecv on the stream (unpack kernel for forces), with no host
 * synchronisation. NCCL kernels wait without a bound, so hx_transport_sync
 * polls the stream with a deadline and aborts the communicator when it
 * passes: a missing peer becomes HX_ERR_TIMEOUT, not a hang.
 *
 * NCCL refuses two ranks on one GPU ("invalid usage", with or without MPS);
 * this transport finds that case itself before NCCL does, and says what to
 * do instead.
 */
#include "transport/gpu/fields_dev.h"
#include "transport/gpu/kernels.h"
#include "transport/nccl/comm.h"

#include <nccl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct nccl_impl {
    hxi_gpu g;
    ncclComm_t comm;
    float *d_buf; /* packed coordinates, then received forces: total_send atoms */
    size_t d_buf_cap;
    void *xr[HXI_XCHG_SLOTS]; /* the rebuild's received bytes, per slot */
    size_t xr_cap[HXI_XCHG_SLOTS];
} nccl_impl;

static void nccl_free(hx_transport *t, nccl_impl *m)
{
    if (m->comm)
        ncclCommDestroy(m->comm);
    m->comm = NULL;
    hxi_gpu_close(&m->g);
    if (t->x)
        cudaFree(t->x);
    if (t->f)
        cudaFree(t->f);
    t->x = t->f = NULL;
    if (m->d_buf)
        cudaFree(m->d_buf);
    for (int k = 0; k < HXI_XCHG_SLOTS; k++)
        if (m->xr[k])
            cudaFree(m->xr[k]);
    free(m);
    t->impl = NULL;
}

static hx_status nccl_create(hx_transport *t)
{
    nccl_impl *m = NULL;
    HXI_CHECK(hxi_alloc((void **) &m, sizeof *m, "the nccl transport"));
    memset(m, 0, sizeof *m);
    hx_status st = hxi_gpu_open(&m->g, t, "nccl");
    if (st != HX_OK) {
        free(m);
        return st;
    }
    t->impl = m;
    HXI_CHECK_GOTO(hxi_nccl_comm_open(t, &m->g, &m->comm), st, fail);
    int version = 0;
    ncclGetVersion(&version);
    snprintf(t->describe, sizeof t->describe,
             "nccl: pack kernel + grouped ncclSend/ncclRecv per pulse on the stream, no host "
             "sync; NCCL %d; GPU %d",
             version, m->g.device);
    if (t->opts.capacity > 0) {
        t->capacity = t->opts.capacity;
        HXI_CHECK_GOTO(hxi_gpu_regrow(&t->x, (size_t) t->capacity, 0, "coordinates"), st, fail);
        HXI_CHECK_GOTO(hxi_gpu_regrow(&t->f, (size_t) t->capacity, 0, "forces"), st, fail);
    }
    return HX_OK;
fail:
    nccl_free(t, m);
    return st;
}

static void nccl_destroy(hx_transport *t)
{
    nccl_impl *m = t->impl;
    if (!m)
        return;
    if (m->g.stream)
        (void) cudaStreamSynchronize(m->g.stream);
    nccl_free(t, m);
}

static hx_status nccl_set_plan(hx_transport *t)
{
    nccl_impl *m = t->impl;
    HXI_CHECK(hxi_gpu_check_usable(&m->g));
    HXI_CUDA(cudaStreamSynchronize(m->g.stream));
    int grow = 0, cap = 0;
    HXI_CHECK(hxi_transport_fit(t, &grow, &cap));
    if (grow) {
        size_t keep = t->x ? (size_t) (t->capacity < cap ? t->capacity : cap) : 0;
        HXI_CHECK(hxi_gpu_regrow(&t->x, (size_t) cap, keep, "coordinates"));
        HXI_CHECK(hxi_gpu_regrow(&t->f, (size_t) cap, keep, "forces"));
        t->capacity = cap;
    }
    HXI_CHECK(hxi_gpu_upload_plan(&m->g, t->plan));
    size_t need = (size_t) m->g.total_send;
    if (!m->d_buf || m->d_buf_cap < need) {
        size_t cap2 = need + need / 4 + 1024;
        HXI_CHECK(hxi_gpu_regrow((void **) &m->d_buf, cap2, 0, "the nccl send buffer"));
        m->d_buf_cap = cap2;
    }
    return HX_OK;
}

static hx_status nccl_forward(hx_transport *t)
{
    nccl_impl *m = t->impl;
    hxi_gpu *g = &m->g;
    HXI_CHECK(hxi_gpu_begin_forward(g));
    int withhold = hxi_gpu_withhold(g);
    float *x = t->x;
    for (int p = 0; p < g->npulses; p++) {
        const hxi_gpu_pulse *q = &g->pulse[p];
        float *buf = m->d_buf + (size_t) q->map_offset * 3;
        HXI_CUDA(hxi_gpu_pack(g->stream, buf, x, g->maps + q->map_offset, q->nsend, q->shift, 0));
        HXI_NCCL(ncclGroupStart());
        if (q->nsend > 0 && !withhold)
            HXI_NCCL(
                ncclSend(buf, (size_t) q->nsend * 3, ncclFloat, q->send_rank, m->comm, g->stream));
        if (q->nrecv > 0)
            HXI_NCCL(ncclRecv(x + (size_t) q->recv_offset * 3, (size_t) q->nrecv * 3, ncclFloat,
                              q->recv_rank, m->comm, g->stream));
        HXI_NCCL(ncclGroupEnd());
    }
    return HX_OK;
}

static hx_status nccl_reverse(hx_transport *t)
{
    nccl_impl *m = t->impl;
    hxi_gpu *g = &m->g;
    HXI_CHECK(hxi_gpu_check_usable(g));
    float *f = t->f;
    for (int p = g->npulses - 1; p >= 0; p--) {
        const hxi_gpu_pulse *q = &g->pulse[p];
        float *buf = m->d_buf + (size_t) q->map_offset * 3;
        HXI_NCCL(ncclGroupStart());
        if (q->nrecv > 0)
            HXI_NCCL(ncclSend(f + (size_t) q->recv_offset * 3, (size_t) q->nrecv * 3, ncclFloat,
                              q->recv_rank, m->comm, g->stream));
        if (q->nsend > 0)
            HXI_NCCL(
                ncclRecv(buf, (size_t) q->nsend * 3, ncclFloat, q->send_rank, m->comm, g->stream));
        HXI_NCCL(ncclGroupEnd());
        HXI_CUDA(hxi_gpu_unpack_add(g->stream, f, buf, g->maps + q->map_offset, q->nsend, 0));
    }
    return HX_OK;
}

static hx_status nccl_sync(hx_transport *t)
{
    nccl_impl *m = t->impl;
    hxi_gpu *g = &m->g;
    HXI_CHECK(hxi_gpu_check_usable(g));
    double t0 = hxi_now();
    for (;;) {
        int done = 0;
        HXI_CHECK(hxi_gpu_stream_poll(g, 0.001, &done));
        if (done)
            return HX_OK;
        ncclResult_t ae = ncclSuccess;
        ncclCommGetAsyncError(m->comm, &ae);
        if (ae != ncclSuccess && ae != ncclInProgress) {
            ncclCommAbort(m->comm);
            m->comm = NULL;
            return hxi_gpu_fail(g, HX_ERR_NCCL,
                                "rank %d: NCCL reported an asynchronous error in step %llu: %s; "
                                "the communicator was aborted",
                                g->rank, (unsigned long long) g->seq, ncclGetErrorString(ae));
        }
        double waited = hxi_now() - t0;
        if (waited > g->timeout_s) {
            ncclCommAbort(m->comm);
            m->comm = NULL;
            return hxi_gpu_fail(
                g, HX_ERR_TIMEOUT,
                "rank %d waited %.1f s for the nccl exchange of step %llu (%d pulses, from ranks "
                "above it): a peer did not send or stalled; the communicator was aborted; check "
                "that every rank calls hx_transport_forward and hx_transport_reverse equally "
                "often, or raise the timeout (opts.timeout_s or HALOX_TIMEOUT_S)",
                g->rank, waited, (unsigned long long) g->seq, g->npulses);
        }
    }
}

/* The rebuild's byte exchange: the messages' sends and receives as one
 * group on the stream, each into a receive buffer of its slot (rank-local growth: nothing here is
 * symmetric, so there is nothing to reserve together). */
static hx_status nccl_xchg_reserve(hx_transport *t, size_t bytes)
{
    (void) t, (void) bytes;
    return HX_OK;
}

static hx_status nccl_xchg(hx_transport *t, hxi_xchg_msg *msg, int n)
{
    nccl_impl *m = t->impl;
    HXI_CHECK(hxi_gpu_check_usable(&m->g));
    for (int k = 0; k < n; k++) {
        const int slot = msg[k].slot;
        if (slot < 0 || slot >= HXI_XCHG_SLOTS || (k > 0 && slot == msg[0].slot))
            return hxi_error(HX_ERR_INVALID, "nccl: rebuild exchange slot %d", slot);
        HXI_CHECK(hxi_gpu_grow(&m->xr[slot], &m->xr_cap[slot], msg[k].rbytes,
                               msg[k].rbytes + msg[k].rbytes / 4 + 4096,
                               "the rebuild's receive buffer"));
    }
    /* Counts were exchanged first: a peer sends nothing exactly when we
     * expect nothing, so skipping empty messages keeps the pairs matched
     * (NCCL matches the sends and receives between two ranks in the order
     * of the group, and every rank gives the messages in one order). */
    HXI_NCCL(ncclGroupStart());
    for (int k = 0; k < n; k++) {
        if (msg[k].sbytes > 0)
            HXI_NCCL(
                ncclSend(msg[k].sbuf, msg[k].sbytes, ncclChar, msg[k].dest, m->comm, m->g.stream));
        if (msg[k].rbytes > 0)
            HXI_NCCL(ncclRecv(m->xr[msg[k].slot], msg[k].rbytes, ncclChar, msg[k].src, m->comm,
                              m->g.stream));
        msg[k].rbuf = m->xr[msg[k].slot];
    }
    HXI_NCCL(ncclGroupEnd());
    return HX_OK;
}

const hxi_transport_ops hxi_transport_nccl = {
    .name = "nccl",
    .caps = HX_CAP_DEVICE | HX_CAP_FIELDS | HX_CAP_GPU_PER_RANK,
    .create = nccl_create,
    .destroy = nccl_destroy,
    .set_plan = nccl_set_plan,
    .forward = nccl_forward,
    .reverse = nccl_reverse,
    .xchg_reserve = nccl_xchg_reserve,
    .xchg = nccl_xchg,
    .sync = nccl_sync,
    .fields_forward = hxi_fdev_forward,
    .fields_reverse = hxi_fdev_reverse,
};
