/*
 * vote.c - several ranks with `check yes` and lists checked every step
 * (LAMMPS's default, HOOMD-blue's check): the rebuild decision made on the
 * device, so that a step that does not rebuild never waits for the host.
 *
 * The host path decides at every candidate step by reading the half-skin
 * flag back and allreducing it: a host synchronisation and an MPI
 * collective every step, and every step launched kernel by kernel. Here a
 * candidate step is one CUDA graph: the kick-drift with the half-skin
 * check, a vote over the ranks through the transport (hx_transport_vote),
 * and the rest of the step (halo exchange, forces, closing kick), whose
 * kernels and the transport's (opts.gate) all return at once after a yes.
 * A yes stops the step on every rank alike (flags->halt; each rank's later
 * kick-drifts and votes return at once too, so the ranks sit out the same
 * votes) and publishes the step to mapped host memory. (The rest of the
 * step in the body of a conditional node that the vote opens does the
 * same, and measured slower than the host decision: running a node's body
 * costs the GPU more than gated kernels cost a stopped step;
 * docs/md-gpu-graphs.md.)
 *
 * The host goes on issuing steps without waiting, at most vote.ahead
 * steps past the last one it knows went on (HXG_VOTE_AHEAD, 2): before
 * issuing step t it waits for step t - vote.ahead to finish on the GPU
 * (an event) and reads the published word. A stopped step s is then
 * finished as the host path would finish a rebuild step (the collective
 * rebuild, forces, closing kick), and the steps issued after it, which
 * did nothing, are issued again. So the run rebuilds at exactly the steps
 * of the host decision and computes the same numbers. The engine returns
 * to its caller only with every issued step known (vote_known up to the
 * last): the caller may meet the other ranks in collectives of its own.
 *
 * Failures: a vote that times out counts as yes (the transport records
 * the timeout), and a rank whose transport recorded a timeout (a lost
 * exchange) votes yes, so the ranks stop together; at the stop they agree
 * on errors before anything else collective (hxg_eng_check_local, then
 * hxi_agree, the same first collective as every other check); a rank whose
 * peer stopped without it sees that peer's next vote time out and stops
 * too. A failure on the host is deferred as for replayed steps.
 */
#include "md/gpu/engine.h"

#include "md/md_driver.h"

hx_status hxg_eng_vote_setup(hx_md_engine *e)
{
    const hx_md_config *c = &e->cfg;
    int no = !(e->graphs.mgraph && c->neigh_check && c->neigh_every == 1 &&
               (hx_transport_caps(e->xport.t) & HX_CAP_VOTE));
    HXI_CHECK(hxi_allreduce_int(e->comm, &no, 1, 1));
    e->vote.on = !no;
    e->vote.spec_last = -1;
    if (!e->vote.on)
        return HX_OK;
    e->vote.ahead = HXG_VOTE_AHEAD;
    hx_status st = hxg_eng_dev_grow(&e->vote.buf, &(size_t){0}, 2 * sizeof(int32_t), "vote words");
    for (int k = 0; k < HXG_VOTE_RING && st == HX_OK; k++)
        if (cudaEventCreateWithFlags(&e->vote.ev[k], cudaEventDisableTiming) != cudaSuccess)
            st = cuda_fail(cudaGetLastError(), "event");
    return hxi_agree(e->comm, st);
}

void hxg_eng_vote_free(struct hxg_vote *v)
{
    if (v->exec)
        cudaGraphExecDestroy(v->exec);
    v->exec = NULL;
    for (int k = 0; k < HXG_VOTE_RING; k++)
        if (v->ev[k])
            cudaEventDestroy(v->ev[k]);
    if (v->buf)
        cudaFree(v->buf);
    v->buf = NULL;
}

/* A voted step on both streams: kick-drift with the half-skin check of
 * step flags->cur, this rank's vote, the vote on the non-local stream (the
 * transport's), its outcome (a yes sets flags->halt), and the rest of the
 * step, gated by flags->halt. */
static hx_status launch_voted(hx_md_engine *e, cudaEvent_t fork, cudaEvent_t join)
{
    const hxg_decide d = {e->dev.flags, -1, 1, 0, 1}; /* the check at every step */
    int k = hxg_eng_tm_open(&e->timers, HX_MD_INTEGRATE, e->dev.s_loc);
    CU(hxg_kickdrift((void *) e->dev.s_loc, hxg_eng_atoms_view(e), NULL, hxg_eng_consts(e), d, NULL,
                     0),
       "kick-drift launch");
    hxg_eng_tm_close(&e->timers, k, e->dev.s_loc);
    k = hxg_eng_tm_open(&e->timers, HX_MD_OTHER, e->dev.s_loc);
    CU(hxg_vote_in((void *) e->dev.s_loc, e->dev.flags, e->vote.buf), "vote launch");
    CU(cudaEventRecord(fork, e->dev.s_loc), "event");
    CU(cudaStreamWaitEvent(e->dev.s_nl, fork, 0), "event wait");
    HXI_CHECK(hx_transport_vote(e->xport.t, e->vote.buf, e->vote.buf + 1));
    CU(cudaEventRecord(join, e->dev.s_nl), "event");
    CU(cudaStreamWaitEvent(e->dev.s_loc, join, 0), "event wait");
    CU(hxg_vote_out((void *) e->dev.s_loc, e->dev.flags, e->vote.buf + 1, e->dev.report_dev),
       "vote launch");
    hxg_eng_tm_close(&e->timers, k, e->dev.s_loc);
    return hxg_eng_launch_multi_rest(e, fork, join, e->dev.flags, 1);
}

/* Captures the voted step into e->vote.exec (NULL where that failed: the
 * same kernels are then launched one by one). */
void hxg_eng_capture_vote(hx_md_engine *e)
{
    if (hxg_eng_capture_into(e, launch_voted, &e->vote.exec, NULL) != HX_OK)
        hxi_info("GPU engine: rank %d could not capture a voted step (%s); it launches their "
                 "kernels one by one",
                 e->rank, hx_last_error());
}

/* The published word: the step a vote stopped, or -1. */
static int64_t halted_step(const struct hxg_device *d)
{
    return (int64_t) d->report->halted - 1;
}

/* Issues step e->step, a voted one, without waiting: replayed, or
 * launched kernel by kernel (timed, or where capture failed). */
static hx_status issue(hx_md_engine *e)
{
    if (e->graphs.mg_dirty && e->graphs.mg_ok)
        hxg_eng_capture_multi(e);
    if (e->vote.spec_last < 0)
        e->vote.spec_known = e->step - 1; /* nothing in flight: all before it known */
    if (!e->vote.cur_set) {
        CU(hxg_set_cur((void *) e->dev.s_loc, e->dev.flags, e->step), "step counter");
        e->vote.cur_set = 1;
    }
    if (e->vote.exec && !e->timers.timing_now) {
        CU(cudaGraphLaunch(e->vote.exec, e->dev.s_loc), "graph launch");
        e->graphs.steps++;
    } else {
        HXI_CHECK(launch_voted(e, e->dev.ev_kd, e->dev.ev_rev));
    }
    CU(cudaEventRecord(e->vote.ev[e->step % HXG_VOTE_RING], e->dev.s_loc), "event");
    e->vote.spec_last = e->step;
    return HX_OK;
}

hx_status hxg_eng_step_vote(hx_md_engine *e)
{
    e->ago++;
    if (e->sched.pending != HX_OK)
        return HX_OK; /* stopped at its failure; the peers' votes time out */
    hxg_eng_defer(e, issue(e));
    return HX_OK;
}

/* Step s was stopped by a yes on every rank, and e->vote.spec_last is the last
 * step issued: the ranks agree on errors, rebuild, finish step s, and the
 * steps after it (which did nothing) are issued again. */
static hx_status resolve(hx_md_engine *e, int64_t s)
{
    const int64_t now = e->step, last = e->vote.spec_last;
    HXI_CHECK(hxi_agree(e->comm, hxg_eng_check_local(e, HX_OK)));
    e->vote.stops++;
    e->dev.report->halted = 0;
    e->step = s;
    /* The halt lifted first: the rebuild's own exchanges pass the gate. The
     * finish (launched, ungated) does not count steps, so flags->cur is
     * already the next step's. */
    if (hxg_set_cur((void *) e->dev.s_loc, e->dev.flags, s + 1) != 0 ||
        cudaStreamSynchronize(e->dev.s_loc) != cudaSuccess)
        return cuda_fail(cudaGetLastError(), "step counter");
    e->vote.cur_set = 1;
    hx_status st = hxg_eng_rebuild_and_finish(e);
    e->vote.spec_known = s;
    e->vote.spec_last = s;
    for (int64_t u = s + 1; u <= last && st == HX_OK; u++) {
        e->step = u;
        if (hxi_md_rebuild_candidate(&e->cfg, e->ago + 1)) {
            e->ago++;
            st = issue(e);
        } else {
            /* inside the delay after the rebuild: a plain step */
            e->ago++;
            st = hxg_eng_replay_one(e);
            e->vote.cur_set = 0;
            e->vote.spec_known = u;
            e->vote.spec_last = u;
        }
    }
    e->step = now;
    return st;
}

hx_status hxg_eng_vote_known(hx_md_engine *e, int64_t upto)
{
    while (e->sched.pending == HX_OK && e->vote.spec_last >= 0) {
        const int64_t u =
            upto < e->vote.spec_last ? upto : e->vote.spec_last; /* issued ones only */
        if (e->vote.spec_known >= u)
            break;
        cudaError_t ce = u == e->vote.spec_last
                             ? cudaStreamSynchronize(e->dev.s_loc)
                             : cudaEventSynchronize(e->vote.ev[u % HXG_VOTE_RING]);
        if (ce != cudaSuccess) {
            hxg_eng_defer(e, cuda_fail(ce, "waiting for a voted step"));
            break;
        }
        const int64_t h = halted_step(&e->dev);
        if (h < 0 || h > u) {
            e->vote.spec_known = u;
            continue;
        }
        HXI_CHECK(resolve(e, h));
    }
    if (e->vote.spec_last >= 0 && e->vote.spec_known >= e->vote.spec_last)
        e->vote.spec_last = -1; /* none in flight */
    return HX_OK;
}
