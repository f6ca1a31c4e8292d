/*
 * stream.c - the `nvshmem-stream` transport: per pulse, a pack kernel and a
 * put-with-signal enqueued on the stream (nvshmemx_float_put_signal_nbi_on_stream),
 * then a stream-ordered wait for the incoming signal.
 *
 * The wait is our own one-thread kernel (hxi_gpu_wait_signal), not
 * nvshmemx_signal_wait_until_on_stream: NVSHMEM's on-stream wait cannot
 * time out, so a peer that never sends would hang the stream for good,
 * and NVSHMEM refuses it in its limited multi-process-per-GPU mode. The
 * kernel spins just the same, gives up after the timeout, and records who
 * waited for what; hx_transport_sync reports it.
 */
#include "transport/gpu/fields_dev.h"
#include "transport/gpu/kernels.h"
#include "transport/nvshmem/shm.h"
#include "transport/nvshmem/shm_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hx_status stream_create(hx_transport *t)
{
    HXI_CHECK(hxi_shm_create(t, "nvshmem-stream"));
    hxi_shm *s = t->impl;
    snprintf(t->describe, sizeof t->describe,
             "nvshmem-stream: pack kernel + put with signal on the stream per pulse, bounded "
             "wait kernel; %s; GPU %d, %d rank(s) on it%s",
             hxi_shm_mode(s), s->g.device, s->g.ranks_on_device, s->g.mps ? ", MPS" : "");
    return HX_OK;
}

static hx_status stream_set_plan(hx_transport *t)
{
    hxi_shm *s = t->impl;
    return hxi_shm_set_plan(s, t);
}

static hx_status stream_forward(hx_transport *t)
{
    hxi_shm *s = t->impl;
    hxi_gpu *g = &s->g;
    HXI_CHECK(hxi_shm_order(t));
    HXI_CHECK(hxi_gpu_begin_forward(g));
    int withhold = hxi_gpu_withhold(g);
    float *x = t->x;
    for (int p = 0; p < g->npulses; p++) {
        const hxi_gpu_pulse *q = &g->pulse[p];
        float *slot = hxi_shm_slot(s, s->xstage, p);
        if (q->nsend > 0 && !withhold) {
            HXI_CUDA(
                hxi_gpu_pack(g->stream, slot, x, g->maps + q->map_offset, q->nsend, q->shift, 0));
            hxi_shm_api_put_signal_on_stream(x + (size_t) q->peer_offset * 3, slot,
                                             (size_t) q->nsend * 3, s->sig + p, g->seq,
                                             q->send_rank, g->stream);
        }
        if (q->nrecv > 0)
            HXI_CUDA(hxi_gpu_wait_signal(g->stream, s->sig + p, hxi_gpu_wait_for(g, p, 0), g->d_hit,
                                         g->rec_d));
    }
    return HX_OK;
}

static hx_status stream_reverse(hx_transport *t)
{
    hxi_shm *s = t->impl;
    hxi_gpu *g = &s->g;
    HXI_CHECK(hxi_gpu_check_usable(g));
    float *f = t->f;
    for (int p = g->npulses - 1; p >= 0; p--) {
        const hxi_gpu_pulse *q = &g->pulse[p];
        float *slot = hxi_shm_slot(s, s->fstage, p);
        if (q->nrecv > 0)
            hxi_shm_api_put_signal_on_stream(slot, f + (size_t) q->recv_offset * 3,
                                             (size_t) q->nrecv * 3, s->sig + HXI_SHM_FSIG + p,
                                             g->seq, q->recv_rank, g->stream);
        if (q->nsend > 0) {
            HXI_CUDA(hxi_gpu_wait_signal(g->stream, s->sig + HXI_SHM_FSIG + p,
                                         hxi_gpu_wait_for(g, p, 1), g->d_hit, g->rec_d));
            HXI_CUDA(hxi_gpu_unpack_add(g->stream, f, slot, g->maps + q->map_offset, q->nsend, 0));
        }
    }
    return HX_OK;
}

const hxi_transport_ops hxi_transport_nvshmem_stream = {
    .name = "nvshmem-stream",
    .caps = HX_CAP_DEVICE | HX_CAP_FIELDS | HX_CAP_PEER | HX_CAP_VOTE,
    .create = stream_create,
    .destroy = hxi_shm_destroy,
    .set_plan = stream_set_plan,
    .forward = stream_forward,
    .reverse = stream_reverse,
    .xchg_reserve = hxi_shm_xchg_reserve,
    .xchg = hxi_shm_xchg,
    .vote = hxi_shm_vote,
    .sync = hxi_shm_sync,
    .fields_forward = hxi_fdev_forward,
    .fields_reverse = hxi_fdev_reverse,
};
