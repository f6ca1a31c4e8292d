/*
 * fused_core.c - what the fused transports share on the host (see
 * fused_core.h): the kernels' device state, the per-plan work that does not
 * depend on how the peers are reached, and the launches.
 */
#define _POSIX_C_SOURCE 200809L
#include "transport/fused/fused_core.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *const hxi_fz_fmode_names[3] = {"push", "pull", "atomic"};

hx_status hxi_fz_force_mode(hx_transport *t, int dflt, int offered, int *mode)
{
    /* The knob's indices are the modes (HXK_FORCE_MODES); -1: unset. */
    const int asked = hxi_knobs()->fused_force_mode;
    int m = asked < 0 ? dflt : asked, bad = m >= offered;
    int v[3] = {m, -m, bad};
    HXI_CHECK(hxi_allreduce_int(t->comm, v, 3, 1));
    if (v[2]) {
        char list[32] = "";
        for (int k = 0; k < offered; k++) {
            strncat(list,
                    k == 0             ? ""
                    : k == offered - 1 ? " or "
                                       : ", ",
                    sizeof list - strlen(list) - 1);
            strncat(list, hxi_fz_fmode_names[k], sizeof list - strlen(list) - 1);
        }
        return hxi_error(HX_ERR_INVALID,
                         "HALOX_FUSED_FORCE_MODE='%s' on some rank: transport %s takes %s",
                         hxi_fz_fmode_names[m], t->ops->name, list);
    }
    if (v[0] != -v[1])
        return hxi_error(HX_ERR_INVALID,
                         "HALOX_FUSED_FORCE_MODE differs between ranks: give every rank the "
                         "same value (mpirun -x HALOX_FUSED_FORCE_MODE)");
    *mode = m;
    return HX_OK;
}

hx_status hxi_fz_core_open(hxi_fz_core *c, const char *who, int tma)
{
    memset(c, 0, sizeof *c);
    c->who = who;
    c->tma = tma;
    hx_status st =
        hxi_gpu_malloc((void **) &c->d_done, HX_MAX_PULSES * sizeof(uint64_t), "the unpack flags");
    if (st == HX_OK)
        st = hxi_gpu_malloc((void **) &c->d_step, sizeof(uint64_t), "the step counter");
    if (st == HX_OK)
        st = hxi_gpu_malloc((void **) &c->d_cnt, HXI_FZ_NCNT * sizeof(unsigned),
                            "the block counters");
    if (st == HX_OK)
        st = hxi_gpu_malloc((void **) &c->d_pulses, HX_MAX_PULSES * sizeof(hxi_fz_pulse),
                            "the fused pulse descriptors");
    if (st == HX_OK) {
        cudaError_t e = cudaMemset(c->d_done, 0, HX_MAX_PULSES * sizeof(uint64_t));
        if (e == cudaSuccess)
            e = cudaMemset(c->d_step, 0, sizeof(uint64_t));
        if (e == cudaSuccess)
            e = cudaMemset(c->d_cnt, 0, HXI_FZ_NCNT * sizeof(unsigned));
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        if (e != cudaSuccess)
            st = hxi_cuda_error(e, "zeroing the fused kernels' flags", __FILE__, __LINE__);
    }
    return st;
}

void hxi_fz_core_drop_graph(hxi_fz_core *c)
{
    if (c->exec)
        cudaGraphExecDestroy(c->exec);
    if (c->graph)
        cudaGraphDestroy(c->graph);
    c->exec = NULL;
    c->graph = NULL;
}

void hxi_fz_core_close(hxi_fz_core *c)
{
    hxi_fz_core_drop_graph(c);
    void *dev[] = {c->d_pulses, c->d_segs, c->d_cnt, c->d_step, c->d_done};
    for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++)
        if (dev[k])
            cudaFree(dev[k]);
    c->d_pulses = NULL;
    c->d_segs = NULL;
    c->d_cnt = NULL;
    c->d_step = NULL;
    c->d_done = NULL;
    c->segs_cap = 0;
}

int hxi_fz_head(const float *dst)
{
    uintptr_t a = (uintptr_t) dst;
    for (int h = 0; h < 4; h++)
        if ((a + 12u * (uintptr_t) h) % 16u == 0)
            return h;
    return -1;
}

/* Entries at or above nsend_home are sorted (the plan appends candidates
 * in index order), and pulses' receive ranges are disjoint and ascending,
 * so each source pulse is one run, as long as the plan counts
 * (hx_plan_from_pulse). */
hx_status hxi_fz_segments(const hx_plan *plan, hxi_fz_seg **out, int *nseg, int seg_range[][2])
{
    int np = hx_plan_npulses(plan), n = 0;
    hxi_fz_seg *segs = NULL;
    HXI_CHECK(hxi_alloc((void **) &segs,
                        (size_t) (np * (np > 1 ? np - 1 : 1) / 2 + 1) * sizeof *segs,
                        "dependency runs"));
    for (int p = 0; p < np; p++) {
        const hx_pulse *P = hx_plan_pulse(plan, p);
        int begin = P->nsend_home;
        seg_range[p][0] = n;
        for (int q = 0; q < p; q++) {
            int c = hx_plan_from_pulse(plan, p, q);
            if (c == 0)
                continue;
            segs[n].begin = begin;
            segs[n].end = begin + c;
            segs[n].src = q;
            segs[n].pad_ = 0;
            begin += c;
            n++;
        }
        seg_range[p][1] = n;
        if (begin != P->nsend) {
            free(segs);
            return hxi_error(HX_ERR_STATE,
                             "pulse %d: %d of its %d halo map entries lie in no earlier pulse's "
                             "receive range: the plan is inconsistent",
                             p, P->nsend - begin, P->nsend - P->nsend_home);
        }
    }
    *out = segs;
    *nseg = n;
    return HX_OK;
}

void hxi_fz_pulse_from_plan(hxi_fz_pulse *d, const hxi_gpu_pulse *q, const int seg_range[2])
{
    memset(d, 0, sizeof *d);
    d->g = *q;
    d->seg_begin = seg_range[0];
    d->seg_end = seg_range[1];
}

void hxi_fz_order(hxi_fz_core *c, int np, const hx_plan *plan)
{
    for (int p = 0; p < np; p++) {
        hxi_fz_pulse *d = &c->hp[p];
        const uint64_t share = hx_plan_pulse(plan, p)->share;
        d->send_after_done = d->send_after_fsig = d->unpack_after = 0;
        for (int r = p + 1; r < np; r++) {
            const hxi_fz_pulse *later = &c->hp[r];
            if (later->g.nsend == 0)
                continue;
            uint64_t bit = UINT64_C(1) << r;
            if (later->g.deps >> p & 1u) {
                if (later->frecv == HXI_FZ_F_ATOMIC)
                    d->send_after_fsig |= bit;
                else
                    d->send_after_done |= bit;
            }
            if ((share & bit) && later->frecv != HXI_FZ_F_ATOMIC)
                d->unpack_after |= bit;
        }
    }
}

/* Blocks per row: enough for one atom per thread in the largest pulse,
 * capped so that the rows of every process sharing this GPU can all be
 * resident at once (blocks spin on signals that other blocks, ours or a
 * peer's, must be running to produce). */
static int fz_grid(hxi_fz_core *c, const hxi_gpu *g)
{
    const int np = g->npulses;
    int most = 1;
    for (int p = 0; p < np; p++) {
        int n = g->pulse[p].nsend > g->pulse[p].nrecv ? g->pulse[p].nsend : g->pulse[p].nrecv;
        if (n > most)
            most = n;
    }
    if (c->per_sm < 1) /* the kernels' occupancy: asked once */
        c->per_sm = hxi_fz_blocks_per_sm(c->tma);
    const int per_sm = c->per_sm;
    int sharing = g->ranks_on_device > 0 ? g->ranks_on_device : 1;
    long resident = (long) per_sm * g->sm_count / sharing;
    int cap_rows = np > 0 ? (int) (resident / np) : 1;
    if (cap_rows < 1) {
        hxi_warn("%s: %d pulses with %d processes on GPU %d leave room for less than one "
                 "resident block per pulse; device waits may stall",
                 c->who, np, sharing, g->device);
        cap_rows = 1;
    }
    int bx = (most + HXI_FZ_THREADS - 1) / HXI_FZ_THREADS;
    if (bx > cap_rows)
        bx = cap_rows;
    return bx < 1 ? 1 : bx;
}

hx_status hxi_fz_core_adopt(hxi_fz_core *c, const hxi_gpu *g, hx_transport *t,
                            const hxi_fz_seg *segs, int nseg, const uint64_t *sig,
                            const uint64_t *ack, int fsig_base, int unpack_atomic)
{
    const int np = g->npulses;
    hx_status st = HX_OK;
    if ((size_t) nseg > c->segs_cap || !c->d_segs) {
        if (c->d_segs)
            cudaFree(c->d_segs);
        c->d_segs = NULL;
        c->segs_cap = 0;
        size_t cap = (size_t) nseg + (size_t) nseg / 2 + 64;
        HXI_CHECK(
            hxi_gpu_malloc((void **) &c->d_segs, cap * sizeof(hxi_fz_seg), "the dependency runs"));
        c->segs_cap = cap;
    }
    /* On the stream, ahead of the kernels that read them: a copy from
     * pageable memory has taken its source by the time it returns, and
     * costs the host less than cudaMemcpy's wait. */
    cudaError_t e = cudaSuccess;
    if (nseg > 0)
        e = cudaMemcpyAsync(c->d_segs, segs, (size_t) nseg * sizeof *segs, cudaMemcpyHostToDevice,
                            g->stream);
    if (e == cudaSuccess && np > 0)
        e = cudaMemcpyAsync(c->d_pulses, c->hp, (size_t) np * sizeof(hxi_fz_pulse),
                            cudaMemcpyHostToDevice, g->stream);
    if (e != cudaSuccess)
        st = hxi_cuda_error(e, "uploading the fused pulse descriptors", __FILE__, __LINE__);
    HXI_CHECK(st);

    c->bx = fz_grid(c, g);
    hxi_fz_args *a = &c->args;
    memset(a, 0, sizeof *a);
    a->pulses = c->d_pulses;
    a->segs = c->d_segs;
    a->maps = g->maps;
    a->x = t->x;
    a->f = t->f;
    a->sig = sig;
    a->ack = ack;
    a->done = c->d_done;
    a->cnt = c->d_cnt;
    a->step = c->d_step;
    a->d_hit = g->d_hit;
    a->rec = g->rec_d;
    a->timeout_ns = g->timeout_ns;
    a->withhold_step = g->withhold_rank == g->rank ? g->withhold_step : 0;
    a->gate = t->opts.gate;
    a->rank = g->rank;
    a->npulses = np;
    a->fsig_base = fsig_base;
    a->unpack_atomic = unpack_atomic;
    return HX_OK;
}

hx_status hxi_fz_core_forward(hxi_fz_core *c, hxi_gpu *g)
{
    HXI_CHECK(hxi_gpu_begin_forward(g));
    if (g->npulses == 0)
        return HX_OK;
    HXI_CUDA(hxi_fz_forward(g->stream, &c->args, c->bx, c->tma));
    return HX_OK;
}

hx_status hxi_fz_core_reverse(hxi_fz_core *c, hxi_gpu *g, const hx_transport *t)
{
    return hxi_fz_core_reverse_with(c, g, t, &c->args);
}

hx_status hxi_fz_core_reverse_with(hxi_fz_core *c, hxi_gpu *g, const hx_transport *t,
                                   const hxi_fz_args *a)
{
    HXI_CHECK(hxi_gpu_check_usable(g));
    if (t->step == 0)
        return hxi_error(HX_ERR_STATE,
                         "%s: reverse before the first forward: call hx_transport_forward first",
                         c->who);
    if (g->npulses == 0)
        return HX_OK;
    HXI_CUDA(hxi_fz_reverse(g->stream, a, c->bx));
    return HX_OK;
}

/* Captures forward + reverse on the transport's stream. */
static hx_status fz_capture(hxi_fz_core *c, hxi_gpu *g)
{
    HXI_CUDA(cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeThreadLocal));
    cudaError_t e1 = hxi_fz_forward(g->stream, &c->args, c->bx, c->tma);
    cudaError_t e2 = hxi_fz_reverse(g->stream, &c->args, c->bx);
    cudaGraph_t graph = NULL;
    cudaError_t e3 = cudaStreamEndCapture(g->stream, &graph);
    cudaError_t e = e1 != cudaSuccess ? e1 : e2 != cudaSuccess ? e2 : e3;
    if (e != cudaSuccess) {
        if (graph)
            cudaGraphDestroy(graph);
        return hxi_cuda_error(e, "capturing the fused step into a CUDA graph", __FILE__, __LINE__);
    }
    e = cudaGraphInstantiate(&c->exec, graph, 0);
    if (e != cudaSuccess) {
        cudaGraphDestroy(graph);
        c->exec = NULL;
        return hxi_cuda_error(e, "cudaGraphInstantiate (fused step)", __FILE__, __LINE__);
    }
    c->graph = graph;
    return HX_OK;
}

hx_status hxi_fz_core_step_graph(hxi_fz_core *c, hxi_gpu *g)
{
    HXI_CHECK(hxi_gpu_begin_forward(g));
    if (g->npulses == 0)
        return HX_OK;
    if (!c->exec)
        HXI_CHECK(fz_capture(c, g));
    HXI_CUDA(cudaGraphLaunch(c->exec, g->stream));
    return HX_OK;
}
