/*
 * pulse.c - the `nvshmem-pulse` transport: one kernel per pulse that packs,
 * sends, signals and waits (nvshmem/pulse_kernels.cu). Where nvshmem_ptr gives a
 * peer pointer the kernel stores straight into the peer's array and
 * signals with a system-scope release store; elsewhere (or with
 * force_put / HALOX_FORCE_PUT=1) it packs into a symmetric staging slot and
 * puts with signal. The host only launches.
 */
#include "transport/gpu/fields_dev.h"
#include "transport/nvshmem/pulse_kernels.h"
#include "transport/nvshmem/shm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PULSE_BLOCK 256

static hx_status pulse_create(hx_transport *t)
{
    HXI_CHECK(hxi_shm_create(t, "nvshmem-pulse"));
    hxi_shm *s = t->impl;
    snprintf(t->describe, sizeof t->describe,
             "nvshmem-pulse: one pack-send-wait kernel per pulse; %s; GPU %d, %d rank(s) on it%s",
             hxi_shm_mode(s), s->g.device, s->g.ranks_on_device, s->g.mps ? ", MPS" : "");
    return HX_OK;
}

static hx_status pulse_set_plan(hx_transport *t)
{
    hxi_shm *s = t->impl;
    HXI_CHECK(hxi_shm_set_plan(s, t));
    snprintf(t->describe, sizeof t->describe,
             "nvshmem-pulse: one pack-send-wait kernel per pulse, %s; %s; GPU %d, %d rank(s) on "
             "it%s",
             hxi_shm_paths(s), hxi_shm_mode(s), s->g.device, s->g.ranks_on_device,
             s->g.mps ? ", MPS" : "");
    return HX_OK;
}

/* Blocks for n atoms. Capped so that the blocks of every process sharing
 * the GPU can be resident at once: blocks that spin on a signal must not
 * keep the blocks that produce it (ours or a peer's) off the GPU. */
static int blocks_for(const hxi_gpu *g, int n)
{
    int b = (n + PULSE_BLOCK - 1) / PULSE_BLOCK;
    int per = g->ranks_on_device > 0 ? g->ranks_on_device : 1;
    int cap = 2 * g->sm_count / per;
    if (cap < 1)
        cap = 1;
    if (b > cap)
        b = cap;
    return b < 1 ? 1 : b;
}

static hx_status pulse_forward(hx_transport *t)
{
    hxi_shm *s = t->impl;
    hxi_gpu *g = &s->g;
    HXI_CHECK(hxi_shm_order(t));
    HXI_CHECK(hxi_gpu_begin_forward(g));
    int withhold = hxi_gpu_withhold(g);
    float *x = t->x;
    for (int p = 0; p < g->npulses; p++) {
        const hxi_gpu_pulse *q = &g->pulse[p];
        hxi_shm_pulse_args a;
        memset(&a, 0, sizeof a);
        a.src = x;
        a.map = g->maps + q->map_offset;
        a.nout = withhold ? 0 : q->nsend;
        a.nin = q->nrecv;
        if (a.nout == 0 && a.nin == 0)
            continue;
        a.dim = q->dim;
        a.shift = q->shift;
        a.direct_dst = s->peer_x[p];
        a.direct_sig = s->peer_xsig[p];
        a.stage = hxi_shm_slot(s, s->xstage, p);
        a.put_dst = x + (size_t) q->peer_offset * 3;
        a.put_sig = s->sig + p;
        a.pe = q->send_rank;
        a.my_sig = s->sig + p;
        a.counter = s->d_count + p;
        a.value = g->seq;
        a.wait = hxi_gpu_wait_for(g, p, 0);
        a.d_hit = g->d_hit;
        a.rec = g->rec_d;
        HXI_CUDA(hxi_shm_pulse_forward(g->stream, &a, blocks_for(g, a.nout)));
    }
    return HX_OK;
}

static hx_status pulse_reverse(hx_transport *t)
{
    hxi_shm *s = t->impl;
    hxi_gpu *g = &s->g;
    HXI_CHECK(hxi_gpu_check_usable(g));
    float *f = t->f;
    for (int p = g->npulses - 1; p >= 0; p--) {
        const hxi_gpu_pulse *q = &g->pulse[p];
        hxi_shm_pulse_args a;
        memset(&a, 0, sizeof a);
        a.src = f + (size_t) q->recv_offset * 3;
        a.map = g->maps + q->map_offset;
        a.f = f;
        a.inbox = hxi_shm_slot(s, s->fstage, p);
        a.nout = q->nrecv;
        a.nin = q->nsend;
        if (a.nout == 0 && a.nin == 0)
            continue;
        a.dim = q->dim;
        a.direct_dst = s->peer_f[p];
        a.direct_sig = s->peer_fsig[p];
        a.put_dst = hxi_shm_slot(s, s->fstage, p);
        a.put_sig = s->sig + HXI_SHM_FSIG + p;
        a.pe = q->recv_rank;
        a.my_sig = s->sig + HXI_SHM_FSIG + p;
        a.counter = s->d_count + HXI_SHM_FSIG + p;
        a.value = g->seq;
        a.wait = hxi_gpu_wait_for(g, p, 1);
        a.d_hit = g->d_hit;
        a.rec = g->rec_d;
        int n = a.nout > a.nin ? a.nout : a.nin;
        HXI_CUDA(hxi_shm_pulse_reverse(g->stream, &a, blocks_for(g, n)));
    }
    return HX_OK;
}

const hxi_transport_ops hxi_transport_nvshmem_pulse = {
    .name = "nvshmem-pulse",
    .caps = HX_CAP_DEVICE | HX_CAP_FIELDS | HX_CAP_PEER | HX_CAP_VOTE,
    .create = pulse_create,
    .destroy = hxi_shm_destroy,
    .set_plan = pulse_set_plan,
    .forward = pulse_forward,
    .reverse = pulse_reverse,
    .xchg_reserve = hxi_shm_xchg_reserve,
    .xchg = hxi_shm_xchg,
    .vote = hxi_shm_vote,
    .sync = hxi_shm_sync,
    .fields_forward = hxi_fdev_forward,
    .fields_reverse = hxi_fdev_reverse,
};
