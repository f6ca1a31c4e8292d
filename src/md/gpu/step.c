/*
 * step.c - the GPU engine's step schedules: which kind of step comes next
 * (one rank's device-resident step is in step_single.c), a multi-rank step
 * replayed from one graph between checks (graph mode), and a step through
 * the host path, which rebuilds and agrees on errors over the ranks. Also
 * the force pass outside a step (create, thermo).
 */
#include "md/gpu/engine.h"

#include "md/md_driver.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------- several ranks, graph mode */

/* Graph mode (e->graphs.mgraph) replays every step that is neither a rebuild
 * candidate nor a thermo step from one CUDA graph of the whole two-stream
 * step, and such steps never synchronise with the host or the other ranks.
 * Where the ranks still meet: candidate steps (the rebuild is collective,
 * and with `check yes` the decision is data-dependent, read back and
 * allreduced), thermo steps and thermo() (collective sums) -- the checks.
 * Which steps those are depends only on the step count, the config and the
 * driver's thermo flag, the same on every rank, so every rank reaches the
 * same collective in the same step.
 *
 * Why nothing in between can hang: a replayed step only enqueues work (a
 * graph launch never waits for another rank), and every device-side wait of
 * the fused transports is bounded by its timeout; the first wait to expire
 * records itself and makes every later wait on that rank return at once,
 * so each rank's streams drain in bounded time whatever its peers do. A
 * failure seen on the host between checks (a launch, a capture) is kept in
 * e->sched.pending, printed at once as a warning, and this rank stops enqueuing
 * (its peers' waits then expire) but keeps stepping until the next check,
 * where the streams are drained, the transport's timeout record is read
 * (hx_transport_sync) and the status is agreed: every rank returns the
 * same error from that step. */

/* The first deferred failure, raised again for the check (HX_OK if none). */
hx_status hxg_eng_pending_status(hx_md_engine *e)
{
    if (e->sched.pending == HX_OK)
        return HX_OK;
    return hxi_error(
        e->sched.pending, "%s (rank %d, step %lld; reported at the check of step %lld)",
        e->sched.pending_msg, e->rank, (long long) (e->cfg.first_step + e->sched.pending_step),
        (long long) (e->cfg.first_step + e->step));
}

void hxg_eng_defer(hx_md_engine *e, hx_status st)
{
    if (e->sched.pending != HX_OK || st == HX_OK)
        return;
    e->sched.pending = st;
    e->sched.pending_step = e->step;
    snprintf(e->sched.pending_msg, sizeof e->sched.pending_msg, "%s", hx_last_error());
    hxi_warn("GPU engine: rank %d failed at step %lld: %s; the run stops at the next rebuild or "
             "thermo step, where the ranks agree on errors",
             e->rank, (long long) (e->cfg.first_step + e->step), e->sched.pending_msg);
}

/* Rank-local part of a check: deferred failures, then drained streams and
 * the transport's timeout record. The caller agrees on the result. */
hx_status hxg_eng_check_local(hx_md_engine *e, hx_status st)
{
    if (st == HX_OK)
        st = hxg_eng_pending_status(e);
    if (st == HX_OK && (cudaStreamSynchronize(e->dev.s_loc) != cudaSuccess ||
                        cudaStreamSynchronize(e->dev.s_nl) != cudaSuccess))
        st = cuda_fail(cudaGetLastError(), "waiting for the steps since the last check");
    if (st == HX_OK)
        st = hx_transport_sync(e->xport.t);
    return st;
}

/* What follows the kick-drift of a step between checks (see
 * launch_multi_step); also of a voted step (vote.c), whose kernels all
 * read gate (e->dev.flags, else NULL): while flags->halt they do nothing, and
 * the local forces count the step (flags->cur) when they run. */
hx_status hxg_eng_launch_multi_rest(hx_md_engine *e, cudaEvent_t fork, cudaEvent_t join,
                                    hxg_flags *gate, int close)
{
    const hxg_atoms_view a = hxg_eng_atoms_view(e);
    const hxg_lists_view l = hxg_eng_lists_view(e);
    const hxg_consts kc = hxg_eng_consts(e);
    CU(cudaEventRecord(fork, e->dev.s_loc), "event");
    CU(cudaStreamWaitEvent(e->dev.s_nl, fork, 0), "event wait");
    int k = hxg_eng_tm_open(&e->timers, HX_MD_HALO_FWD, e->dev.s_nl);
    HXI_CHECK(hx_transport_forward(e->xport.t));
    hxg_eng_tm_close(&e->timers, k, e->dev.s_nl);
    k = hxg_eng_tm_open(&e->timers, HX_MD_LOCAL, e->dev.s_loc);
    /* PDL (HALOX_MD_PDL) where the kernel before is the kick-drift (local)
     * or the forward exchange (non-local): not in a voted step, whose
     * kernels read the vote's outcome, which the kernel before writes. */
    const int pdl = gate ? 0 : e->sched.pdl;
    CU(hxg_force_local((void *) e->dev.s_loc, a, l, kc, NULL, gate,
                       HXG_FORCE_WRITE | ((pdl & 2) ? HXG_FORCE_PDL : 0)),
       "local force launch");
    hxg_eng_tm_close(&e->timers, k, e->dev.s_loc);
    k = hxg_eng_tm_open(&e->timers, HX_MD_NONLOCAL, e->dev.s_nl);
    CU(hxg_force_nonlocal((void *) e->dev.s_nl, a, l, kc, NULL, gate,
                          HXG_FORCE_WRITE | ((pdl & 1) ? HXG_FORCE_PDL : 0)),
       "non-local force launch");
    hxg_eng_tm_close(&e->timers, k, e->dev.s_nl);
    HXI_CHECK(hxg_eng_reverse(e));
    CU(cudaEventRecord(join, e->dev.s_nl), "event");
    CU(cudaStreamWaitEvent(e->dev.s_loc, join, 0), "event wait");
    if (!close)
        return HX_OK; /* the next kick-drift closes this step */
    k = hxg_eng_tm_open(&e->timers, HX_MD_INTEGRATE, e->dev.s_loc);
    CU(hxg_kick((void *) e->dev.s_loc, a, e->xport.tf, kc, NULL, gate), "kick launch");
    hxg_eng_tm_close(&e->timers, k, e->dev.s_loc);
    return HX_OK;
}

hx_status hxg_eng_reverse(hx_md_engine *e)
{
    if (e->full)
        return HX_OK; /* newton off: every home atom's force is whole here */
    const int k = hxg_eng_tm_open(&e->timers, HX_MD_HALO_REV, e->dev.s_nl);
    const hx_status st = hx_transport_reverse(e->xport.t);
    hxg_eng_tm_close(&e->timers, k, e->dev.s_nl);
    return st;
}

hx_status hxg_eng_close_kick(hx_md_engine *e)
{
    if (!e->sched.kick_open)
        return HX_OK;
    e->sched.kick_open = 0;
    CU(hxg_kick((void *) e->dev.s_loc, hxg_eng_atoms_view(e), e->xport.tf, hxg_eng_consts(e), NULL,
                NULL),
       "kick launch");
    return HX_OK;
}

/* One step between checks, on both streams (captured, or launched when the
 * step is timed or capture failed): kick-drift, which also writes the home
 * coordinates into the transport's array; fork to the non-local stream for
 * forward, non-local forces and reverse while the local forces run; join;
 * closing kick, or with kick_fuse none: the kick-drift closes the step
 * before it instead (open: whether it does). No thermo sums, and no
 * half-skin check: such a step is never a rebuild candidate, so it needs no step number (the
 * transport keeps its own on the device). fork/join: the events that link the streams (capture
 * needs its own pair, see capture_multi). Rank-local. (Local forces split
 * around the non-local ones, so that the reverse exchange overlaps local
 * work, measured slower at every size: the non-local kernel alone on the
 * GPU takes longer than beside the local one; docs/md-gpu.md, "Why full
 * lists and no atomics".) */
static hx_status launch_multi(hx_md_engine *e, cudaEvent_t fork, cudaEvent_t join, int open)
{
    const hxg_decide d = {e->dev.flags, 0, e->cfg.neigh_every, 0, 0};
    int k = hxg_eng_tm_open(&e->timers, HX_MD_INTEGRATE, e->dev.s_loc);
    CU(hxg_kickdrift((void *) e->dev.s_loc, hxg_eng_atoms_view(e), open ? e->xport.tf : NULL,
                     hxg_eng_consts(e), d, NULL, 0),
       "kick-drift launch");
    hxg_eng_tm_close(&e->timers, k, e->dev.s_loc);
    return hxg_eng_launch_multi_rest(e, fork, join, NULL, !e->sched.kick_fuse);
}

/* The step that is replayed: with kick_fuse it closes the step before it
 * and leaves itself open. */
static hx_status launch_multi_step(hx_md_engine *e, cudaEvent_t fork, cudaEvent_t join)
{
    return launch_multi(e, fork, join, e->sched.kick_fuse);
}

/* *exec made from graph g: the existing executable updated in place
 * where the topology allows (cudaGraphExecUpdate), else a new one
 * instantiated with UseNodePriority (kernel nodes keep their stream's
 * priority: the exchange branch stays ahead of the local forces), then
 * uploaded on stream s. On failure *exec is NULL. g stays the caller's. */
static hx_status exec_from(cudaGraph_t g, cudaGraphExec_t *exec, cudaStream_t s)
{
    hx_status st = HX_OK;
    if (*exec) {
        cudaGraphExecUpdateResultInfo info;
        if (cudaGraphExecUpdate(*exec, g, &info) != cudaSuccess) {
            cudaGetLastError();
            cudaGraphExecDestroy(*exec);
            *exec = NULL;
        }
    }
    if (!*exec) {
        cudaError_t ce = cudaGraphInstantiate(exec, g, cudaGraphInstantiateFlagUseNodePriority);
        if (ce != cudaSuccess) {
            *exec = NULL;
            st = cuda_fail(ce, "instantiating the captured step");
        }
    }
    if (st == HX_OK && cudaGraphUpload(*exec, s) != cudaSuccess)
        cudaGetLastError(); /* only saves the first replay some time */
    return st;
}

/* Captures fn's step into *exec (launch_multi_step above, the voted one in
 * vote.c): capture begins on the local stream, the non-local stream joins
 * through the fork event and leaves through the join event, so the graph
 * holds both branches and their order; exec_from makes the executable.
 * Capture makes no CUDA call that waits, so it may run while the GPU is
 * busy. With keep, the captured graph replaces *keep (for graphs built of
 * it), else it is dropped. On failure *exec is NULL. */
hx_status hxg_eng_capture_into(hx_md_engine *e, hxg_launch_fn fn, cudaGraphExec_t *exec,
                               cudaGraph_t *keep)
{
    cudaGraph_t g = NULL;
    const int timing = e->timers.timing_now;
    hx_status st = HX_OK;
    cudaError_t ce;
    e->timers.timing_now = 0;
    ce = cudaStreamBeginCapture(e->dev.s_loc, cudaStreamCaptureModeThreadLocal);
    if (ce != cudaSuccess) {
        st = cuda_fail(ce, "beginning the capture of a step");
    } else {
        st = fn(e, e->graphs.ev_gfork, e->graphs.ev_gjoin);
        if (st != HX_OK) {
            /* Join the other stream anyway, so that the capture ends. */
            (void) cudaEventRecord(e->graphs.ev_gjoin, e->dev.s_nl);
            (void) cudaStreamWaitEvent(e->dev.s_loc, e->graphs.ev_gjoin, 0);
        }
        ce = cudaStreamEndCapture(e->dev.s_loc, &g);
        if (st == HX_OK && ce != cudaSuccess)
            st = cuda_fail(ce, "capturing a step");
    }
    if (st == HX_OK)
        st = exec_from(g, exec, e->dev.s_loc);
    if (keep && *keep) {
        cudaGraphDestroy(*keep);
        *keep = NULL;
    }
    if (keep && st == HX_OK)
        *keep = g;
    else if (g)
        cudaGraphDestroy(g);
    e->timers.timing_now = timing;
    if (st != HX_OK) {
        cudaGetLastError();
        if (*exec)
            cudaGraphExecDestroy(*exec);
        *exec = NULL;
    }
    return st;
}

/* The step between checks into e->graphs.mg_exec, and the voted step where the
 * ranks vote: a failure turns replay off on this rank (the same kernels are
 * launched one by one instead; where the ranks meet does not change). */
void hxg_eng_capture_multi(hx_md_engine *e)
{
    hx_status st =
        hxg_eng_capture_into(e, launch_multi_step, &e->graphs.mg_exec, &e->graphs.mg_graph);
    if (st != HX_OK) {
        cudaGetLastError();
        hxi_warn("GPU engine: rank %d could not capture a step into a CUDA graph (%s); launching "
                 "its kernels one by one instead",
                 e->rank, hx_last_error());
        e->graphs.mg_ok = 0;
        return;
    }
    if (e->vote.on)
        hxg_eng_capture_vote(e); /* the voted step, of the same arrays */
    e->graphs.mg_batch_dirty = e->graphs.mg_batch_ok && !e->vote.on;
    e->graphs.mg_dirty = 0;
}

/* batch_k copies of the captured step (e->graphs.mg_graph) as child graphs in a
 * row, into e->graphs.mg_batch: no launch is captured again, so this costs the
 * host a copy of the step's graph per step and the executable's update. */
static hx_status batch_of_children(hx_md_engine *e)
{
    cudaGraph_t b = NULL;
    cudaGraphNode_t prev = NULL, node = NULL;
    if (!e->graphs.mg_graph)
        return hxi_error(HX_ERR_STATE, "GPU engine: no captured step to repeat");
    cudaError_t ce = cudaGraphCreate(&b, 0);
    for (int i = 0; ce == cudaSuccess && i < e->graphs.batch_k; i++) {
        ce = cudaGraphAddChildGraphNode(&node, b, prev ? &prev : NULL, prev ? 1 : 0,
                                        e->graphs.mg_graph);
        prev = node;
    }
    hx_status st = ce == cudaSuccess ? exec_from(b, &e->graphs.mg_batch, e->dev.s_loc)
                                     : cuda_fail(ce, "a graph of child graphs");
    if (b)
        cudaGraphDestroy(b);
    if (st != HX_OK && e->graphs.mg_batch) {
        cudaGraphExecDestroy(e->graphs.mg_batch);
        e->graphs.mg_batch = NULL;
    }
    return st;
}

/* The batch of steps into e->graphs.mg_batch, after a step was launched, so that
 * the host's work costs it while the GPU runs that step, not while it
 * waits for its next work, as it would right after a rebuild: copies of
 * the captured step (batch_of_children). A failure leaves each step
 * replayed from its own graph. */
static void capture_batch(hx_md_engine *e)
{
    e->graphs.mg_batch_dirty = 0;
    hx_status st = batch_of_children(e);
    if (st == HX_OK)
        return;
    cudaGetLastError();
    hxi_info("GPU engine: rank %d could not capture %d steps into one CUDA graph (%s); each "
             "step is replayed from its own",
             e->rank, e->graphs.batch_k, hx_last_error());
    e->graphs.mg_batch_ok = 0;
}

/* Captures now, at the end of a step (outside the stretches the driver
 * times), when the plan changed and the next step will be replayed (not
 * a fix balance step, which rebuilds). */
void hxg_eng_capture_ahead(hx_md_engine *e)
{
    if (e->graphs.mgraph && e->graphs.mg_ok && e->graphs.mg_dirty && e->sched.pending == HX_OK &&
        (e->vote.on || !hxi_md_rebuild_candidate(&e->cfg, e->ago + 1)) &&
        !hxg_eng_balance_due(e, e->step + 1))
        hxg_eng_capture_multi(e);
    hxg_eng_capture_single_ahead(e);
}

/* A step between checks: replayed, or launched when timed (or where capture
 * failed). Returns HX_OK even on failure: the failure is deferred to the
 * next check, where every rank meets (see above). */
static hx_status step_replay(hx_md_engine *e)
{
    e->ago++;
    return hxg_eng_replay_one(e);
}

/* step_replay with e->ago counted already. */
hx_status hxg_eng_replay_one(hx_md_engine *e)
{
    if (e->sched.pending != HX_OK)
        return HX_OK; /* stopped at its failure; peers' waits expire */
    if (e->sched.kick_fuse && !e->sched.kick_open) {
        /* The step before closed itself (a thermo step, the first step,
         * or its kick was applied for a read): this one, launched, only
         * opens; the replayed ones after it close the one before. */
        e->sched.kick_open = 1;
        hxg_eng_defer(e, launch_multi(e, e->dev.ev_kd, e->dev.ev_rev, 0));
        return HX_OK;
    }
    if (e->graphs.mg_ok && !e->timers.timing_now) {
        if (e->graphs.mg_dirty)
            hxg_eng_capture_multi(e);
        if (e->graphs.mg_ok) {
            cudaError_t ce = cudaGraphLaunch(e->graphs.mg_exec, e->dev.s_loc);
            if (ce == cudaSuccess)
                e->graphs.steps++;
            else
                hxg_eng_defer(e, cuda_fail(ce, "graph launch"));
            return HX_OK;
        }
    }
    hxg_eng_defer(e, launch_multi_step(e, e->dev.ev_kd, e->dev.ev_rev));
    return HX_OK;
}

static hx_status step_forces(hx_md_engine *e, int rebuild, double *acc, hx_status st);

/* Host-path rebuilds (every multi-rank run). Every return is agreed on by
 * all ranks, so that nobody is left in a collective. */
static hx_status step_host(hx_md_engine *e, int want_thermo, hx_status st)
{
    const hx_md_config *c = &e->cfg;
    const int64_t step = e->step;
    double *acc = want_thermo ? e->dev.acc : NULL;
    int rebuild = 0;
    /* fix balance forces a rebuild (LAMMPS's FixBalance sets
     * next_reneighbor), to the domains it moves. */
    const int balance = hxg_eng_balance_due(e, step);

    e->ago++;
    if (balance || hxi_md_rebuild_candidate(&e->cfg, e->ago)) {
        /* A device rebuild without the half-skin check drains nothing
         * here: its migration waits for the queued steps on the GPU and
         * reports their failures (hxg_eng_rebuild_device). fix balance's
         * count reads the positions first: the steps are drained and the
         * transport's record read before it. */
        const int queued = e->rebuild.rb && !c->neigh_check && !balance;
        if (e->graphs.mgraph && queued && st == HX_OK)
            st = hxg_eng_pending_status(e);
        else if (e->graphs.mgraph)
            st = hxg_eng_check_local(e, st); /* agreed below, before any collective */
        if (!c->neigh_check || balance) {
            rebuild = 1;
        } else {
            double t0 = hxi_now();
            int64_t moved = -1;
            if (st == HX_OK &&
                (cudaMemcpyAsync(&moved, &e->dev.flags->moved_step, sizeof moved,
                                 cudaMemcpyDeviceToHost, e->dev.s_loc) != cudaSuccess ||
                 cudaStreamSynchronize(e->dev.s_loc) != cudaSuccess))
                st = cuda_fail(cudaGetLastError(), "half-skin check");
            HXI_CHECK(hxi_agree(e->comm, st));
            rebuild = moved == step;
            HXI_CHECK(hxi_allreduce_int(e->comm, &rebuild, 1, 1));
            e->timers.stats.stage[HX_MD_OTHER] += hxi_now() - t0;
        }
        if (rebuild) {
            HXI_CHECK(hxi_agree(e->comm, st));
            e->rebuild.thermo = want_thermo;
            if (balance)
                HXI_CHECK(hxg_eng_balance_rebuild(e));
            else
                HXI_CHECK(e->rebuild.rb ? hxg_eng_rebuild_device(e) : hxg_eng_rebuild_host(e, 0));
        }
    }
    return step_forces(e, rebuild, acc, st);
}

/* A rebuild in this step (after its kick-drift), agreed on already, and
 * the rest of the step: what step_host does when the ranks decided to
 * rebuild (vote.c, for a step the ranks' vote stopped). */
hx_status hxg_eng_rebuild_and_finish(hx_md_engine *e)
{
    e->rebuild.thermo = 0;
    HXI_CHECK(e->rebuild.rb ? hxg_eng_rebuild_device(e) : hxg_eng_rebuild_host(e, 0));
    return step_forces(e, 1, NULL, HX_OK);
}

/* The forces of a host-path step after its rebuild decision (a rebuild
 * forwards the halo itself), and the closing kick; agreed on. */
static hx_status step_forces(hx_md_engine *e, int rebuild, double *acc, hx_status st)
{
    int k;
    const hxg_atoms_view a = hxg_eng_atoms_view(e);
    const hxg_lists_view l = hxg_eng_lists_view(e);
    const hxg_consts kc = hxg_eng_consts(e);
    if (st == HX_OK && !e->multi) {
        const int kick = e->therm.lang_on ? 0 : HXG_FORCE_KICK;
        k = hxg_eng_tm_open(&e->timers, HX_MD_LOCAL, e->dev.s_loc);
        if (hxg_force_local((void *) e->dev.s_loc, a, l, kc, acc, NULL, HXG_FORCE_WRITE | kick) !=
            0)
            st = cuda_fail(cudaGetLastError(), "force launch");
        hxg_eng_tm_close(&e->timers, k, e->dev.s_loc);
        return st == HX_OK ? hxg_eng_therm_close_single(e, acc, NULL, e->step) : st;
    }
    if (st == HX_OK && !rebuild) {
        if (cudaEventRecord(e->dev.ev_kd, e->dev.s_loc) != cudaSuccess ||
            cudaStreamWaitEvent(e->dev.s_nl, e->dev.ev_kd, 0) != cudaSuccess)
            st = cuda_fail(cudaGetLastError(), "event");
    }
    /* A transport that blocks the host goes after the local kernel is
     * queued, so that they overlap; otherwise the halo goes first. */
    for (int pass = 0; pass < 2 && st == HX_OK; pass++) {
        if ((pass == 0) == (e->xport.blocking != 0) && rebuild && e->rebuild.loc_forces) {
            e->rebuild.loc_forces = 0; /* queued by the rebuild behind the local list */
        } else if ((pass == 0) == (e->xport.blocking != 0)) {
            k = hxg_eng_tm_open(&e->timers, HX_MD_LOCAL, e->dev.s_loc);
            if (hxg_force_local((void *) e->dev.s_loc, a, l, kc, acc, NULL, HXG_FORCE_WRITE) != 0)
                st = cuda_fail(cudaGetLastError(), "local force launch");
            hxg_eng_tm_close(&e->timers, k, e->dev.s_loc);
        } else if (!rebuild) {
            k = hxg_eng_tm_open(&e->timers, HX_MD_HALO_FWD, e->dev.s_nl);
            st = hx_transport_forward(e->xport.t);
            hxg_eng_tm_close(&e->timers, k, e->dev.s_nl);
        }
    }
    if (st == HX_OK) {
        k = hxg_eng_tm_open(&e->timers, HX_MD_NONLOCAL, e->dev.s_nl);
        if (hxg_force_nonlocal((void *) e->dev.s_nl, a, l, kc, acc, NULL,
                               HXG_FORCE_WRITE | ((e->sched.pdl & 1) ? HXG_FORCE_PDL : 0)) != 0)
            st = cuda_fail(cudaGetLastError(), "non-local force launch");
        hxg_eng_tm_close(&e->timers, k, e->dev.s_nl);
    }
    if (st == HX_OK)
        st = hxg_eng_reverse(e);
    /* fix langevin's term on the local forces, beside the halo's. */
    if (st == HX_OK)
        st = hxg_eng_therm_langevin(e, NULL, e->step);
    if (st == HX_OK && (cudaEventRecord(e->dev.ev_rev, e->dev.s_nl) != cudaSuccess ||
                        cudaStreamWaitEvent(e->dev.s_loc, e->dev.ev_rev, 0) != cudaSuccess))
        st = cuda_fail(cudaGetLastError(), "event");
    if (st == HX_OK && e->sched.kick_fuse && !acc) {
        e->sched.kick_open = 1; /* the next kick-drift closes this step */
    } else if (st == HX_OK) {
        k = hxg_eng_tm_open(&e->timers, HX_MD_INTEGRATE, e->dev.s_loc);
        if (hxg_kick((void *) e->dev.s_loc, a, e->xport.tf, kc, acc, NULL) != 0)
            st = cuda_fail(cudaGetLastError(), "kick launch");
        hxg_eng_tm_close(&e->timers, k, e->dev.s_loc);
    }
    HXI_CHECK(hxi_agree(e->comm, st));
    return hxg_eng_therm_end_multi(e, acc);
}

/* The kick-drift that opens a host-path step, with the half-skin check of
 * this step (step_host reads it back at a candidate). Skipped after a
 * failure (st), which it passes on. */
static hx_status kickdrift_host_path(hx_md_engine *e, int want_thermo, hx_status st)
{
    const hx_md_config *c = &e->cfg;
    int k = hxg_eng_tm_open(&e->timers, HX_MD_INTEGRATE, e->dev.s_loc);
    const float *fclose = e->sched.kick_open ? e->xport.tf : NULL; /* the step before's kick */
    const hxg_decide d = {e->dev.flags, e->step, c->neigh_every, 0, c->neigh_check};
    if (st == HX_OK)
        st = hxg_eng_therm_begin(e, NULL, e->step);
    if (st == HX_OK && hxg_kickdrift((void *) e->dev.s_loc, hxg_eng_atoms_view(e), fclose,
                                     hxg_eng_consts(e), d, want_thermo ? e->dev.acc : NULL, 0) != 0)
        st = cuda_fail(cudaGetLastError(), "kick-drift launch");
    if (st == HX_OK)
        e->sched.kick_open = 0;
    hxg_eng_tm_close(&e->timers, k, e->dev.s_loc);
    return st;
}

/* A step through the host path: every multi-rank step that is not
 * replayed, and every step of one rank with host rebuilds. With graph mode
 * this is a check: a deferred failure skips the launches and is agreed in
 * step_host; the next step is captured here when it will be replayed. */
static hx_status step_checked(hx_md_engine *e, int want_thermo)
{
    const int64_t built = e->rebuild.dev_rebuilds;
    const double t0 = hxi_now();
    hx_status st = e->graphs.mgraph ? hxg_eng_pending_status(e) : HX_OK;
    st = kickdrift_host_path(e, want_thermo, st);
    st = step_host(e, want_thermo, st);
    const double t1 = hxi_now();
    if (st == HX_OK)
        hxg_eng_capture_ahead(e);
    if (e->rebuild.dev_rebuilds != built) {
        e->rebuild.dev_step[0] += e->rebuild.t0 - t0;
        e->rebuild.dev_step[1] += e->rebuild.t1 - e->rebuild.t0;
        e->rebuild.dev_step[2] += t1 - e->rebuild.t1;
        e->rebuild.dev_step[3] += hxi_now() - t1;
        e->rebuild.dev_step_n += e->rebuild.dev_rebuilds - built;
    }
    return st;
}

/* One step, of one of three kinds: device-resident (one rank), replayed
 * between checks (several ranks, graph mode), or through the host path
 * with its rebuild and collective checks. */
static hx_status one_step(hx_md_engine *e, int want_thermo)
{
    hx_status st = HX_OK;

    e->step++;
    e->timers.stats.steps++;
    e->acc_valid = 0;
    e->timers.timing_now = hxg_eng_tm_sampled(&e->timers, e->step);
    want_thermo = want_thermo != 0;
    const int balance = hxg_eng_balance_due(e, e->step); /* a checked step */
    /* Voted steps: the earlier ones known to have gone on (a thermo step:
     * all of them), any stopped one rebuilt and what followed it again. */
    if (e->vote.on) {
        st = hxg_eng_vote_known(e, want_thermo ? e->step - 1 : e->step - e->vote.ahead);
        /* A step of another kind (a plain one, inside the delay after a
         * rebuild) only once all earlier ones are known. */
        if (st == HX_OK && (balance || !hxi_md_rebuild_candidate(&e->cfg, e->ago + 1)))
            st = hxg_eng_vote_known(e, e->step - 1);
    }
    if (st != HX_OK)
        return st;
    if (!e->multi && !e->host_rebuild)
        st = hxg_eng_step_single(e, want_thermo);
    else if (e->graphs.mgraph && !want_thermo && !balance &&
             !hxi_md_rebuild_candidate(&e->cfg, e->ago + 1))
        st = step_replay(e);
    else if (e->vote.on && !want_thermo && !balance)
        st = hxg_eng_step_vote(e);
    else
        st = step_checked(e, want_thermo);
    /* A fix balance step is a checked one, never voted. */
    if (e->vote.on && (want_thermo || balance || !hxi_md_rebuild_candidate(&e->cfg, e->ago)))
        e->vote.cur_set = 0; /* not a voted step: the device's step counter stood still */
    e->acc_valid = st == HX_OK && want_thermo;
    return st;
}

/* Voted steps are settled (every one known to have gone on or rebuilt)
 * before the engine returns to the caller, which may meet the other
 * ranks in collectives of its own. */
static hx_status settle(hx_md_engine *e, hx_status st)
{
    if (st == HX_OK && e->vote.on)
        st = hxg_eng_vote_known(e, e->step);
    return st;
}

/* The steps e->step + 1 .. e->step + batch_k between checks (graph mode,
 * several ranks) as one launch of mg_batch: none of them a rebuild
 * candidate, a thermo step (the caller's promise) or timed, the step
 * before left open for the first to close (with kick_fuse), the batch
 * captured for the current arrays, and nothing pending. Returns 0 where
 * they cannot be (the caller takes them one at a time); a failed launch
 * is deferred to the next check like a replayed step's, and the steps
 * count as taken. */
static int launch_batch_multi(hx_md_engine *e)
{
    const int k = e->graphs.batch_k;
    if (!e->multi || !e->graphs.mgraph || !e->graphs.mg_ok || !e->graphs.mg_batch_ok ||
        e->graphs.mg_dirty || e->graphs.mg_batch_dirty || e->vote.on || k < 2 ||
        e->sched.pending != HX_OK || (e->sched.kick_fuse && !e->sched.kick_open))
        return 0;
    for (int i = 1; i <= k; i++)
        if (hxi_md_rebuild_candidate(&e->cfg, e->ago + i) ||
            hxg_eng_tm_sampled(&e->timers, e->step + i) || hxg_eng_balance_due(e, e->step + i))
            return 0;
    const cudaError_t ce = cudaGraphLaunch(e->graphs.mg_batch, e->dev.s_loc);
    if (ce != cudaSuccess) {
        hxg_eng_defer(e, cuda_fail(ce, "graph launch"));
    } else {
        e->graphs.steps += k;
        e->graphs.mg_batched += k;
    }
    e->step += k;
    e->timers.stats.steps += k;
    e->ago += k;
    e->acc_valid = 0;
    e->timers.timing_now = 0;
    return k;
}

/* n steps, none a thermo step, with nothing of the caller's between them,
 * replayed e->graphs.batch_k to a graph launch where they can be (one rank:
 * hxg_eng_launch_batch; several: launch_batch_multi): the GPU waits longer
 * between two graph launches than between two steps in one graph (what
 * one kernel to the next costs; docs/md-gpu.md, "A step"). */
hx_status hxg_eng_steps(hx_md_engine *e, int n)
{
    while (n > 0) {
        int k = 0;
        if (n >= e->graphs.batch_k)
            k = e->multi ? launch_batch_multi(e) : hxg_eng_launch_batch(e);
        if (k < 0)
            return cuda_fail(cudaGetLastError(), "graph launch");
        if (k > 0) {
            n -= k;
            /* Several ranks meet at the next check, where errors are
             * agreed; one rank reads its report now. */
            if (!e->multi)
                HXI_CHECK(hxg_eng_check_report(e));
        } else {
            n--;
            HXI_CHECK(one_step(e, 0));
            if (e->multi && e->graphs.mg_batch_dirty && n >= e->graphs.batch_k && e->graphs.mg_ok &&
                !e->graphs.mg_dirty && e->sched.pending == HX_OK)
                capture_batch(e);
        }
    }
    return settle(e, HX_OK);
}

hx_status hxg_eng_step(hx_md_engine *e, int want_thermo)
{
    return settle(e, one_step(e, want_thermo));
}

/* ------------------------------------------------------ outside a step */

/* Forces (and, with acc, energy and virial) for the current positions,
 * without moving atoms: the first force pass and thermo recomputation.
 * write: forces are stored (f4 ends as the total force on home atoms) and
 * the force halo is exchanged. Rank-local apart from the transport. */
hx_status hxg_eng_force_pass(hx_md_engine *e, int write, double *acc)
{
    if (acc) {
        CU(cudaMemsetAsync(acc, 0, HXG_NACC * sizeof(double), e->dev.s_loc), "clear sums");
        CU(cudaEventRecord(e->dev.ev_acc, e->dev.s_loc), "event");
        CU(cudaStreamWaitEvent(e->dev.s_nl, e->dev.ev_acc, 0), "event wait");
    }
    const hxg_atoms_view a = hxg_eng_atoms_view(e);
    const hxg_lists_view l = hxg_eng_lists_view(e);
    hxg_consts kc = hxg_eng_consts(e);
    const int how = write ? HXG_FORCE_WRITE : 0;
    CU(hxg_force_local((void *) e->dev.s_loc, a, l, kc, acc, NULL, how), "local force launch");
    if (e->multi) {
        CU(hxg_force_nonlocal((void *) e->dev.s_nl, a, l, kc, acc, NULL, how),
           "non-local force launch");
        if (write)
            HXI_CHECK(hxg_eng_reverse(e));
        CU(cudaEventRecord(e->dev.ev_rev, e->dev.s_nl), "event");
        CU(cudaStreamWaitEvent(e->dev.s_loc, e->dev.ev_rev, 0), "event wait");
    }
    /* Combine the halo-side forces (multi) and sum m v^2, without a kick. */
    kc.dtf = 0.0f; /* no kick */
    for (int t = 0; t < HXG_MAX_TYPES; t++)
        kc.ty.dtf[t] = 0.0f;
    CU(hxg_kick((void *) e->dev.s_loc, a, (e->multi && write) ? e->xport.tf : NULL, kc, acc, NULL),
       "kick launch");
    CU(cudaStreamSynchronize(e->dev.s_loc), "force pass");
    if (e->multi)
        HXI_CHECK(hx_transport_sync(e->xport.t));
    return HX_OK;
}
