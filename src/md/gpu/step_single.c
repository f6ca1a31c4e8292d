/*
 * step_single.c - the GPU engine's step of one rank, device-resident: the
 * kick-drift, the rebuild kernels where one may happen (each deciding by
 * itself on the device) and the forces with the closing kick, captured
 * into CUDA graphs (one per kind of step, and batches of steps) and
 * replayed; and the recovery of a rebuild whose list overflowed.
 */
#include "md/gpu/engine.h"

#include "md/md_driver.h"

#include <stdio.h>
#include <string.h>

/* The rebuild decision of a device-resident step (its step is flags->cur),
 * as the kick-drift and the rebuild's kernels take it. */
static hxg_decide device_decide(const hx_md_engine *e)
{
    const hx_md_config *c = &e->cfg;
    const hxg_decide d = {e->dev.flags, -1, c->neigh_every, c->neigh_delay, c->neigh_check};
    return d;
}

/* The kernels of one device-resident step on the local stream: kick-drift,
 * the rebuild kernels where one may happen, forces with the closing kick.
 * The step number comes from flags->cur, so that the same launches can be
 * captured once and replayed. cond != 0: the kick-drift also sets that
 * conditional node's condition (capture_conditional). */
static hx_status launch_kickdrift(hx_md_engine *e, int want_thermo, unsigned long long cond)
{
    int k = hxg_eng_tm_open(&e->timers, HX_MD_INTEGRATE, e->dev.s_loc);
    HXI_CHECK(hxg_eng_therm_begin(e, e->dev.flags, -1));
    CU(hxg_kickdrift((void *) e->dev.s_loc, hxg_eng_atoms_view(e), NULL, hxg_eng_consts(e),
                     device_decide(e), want_thermo ? e->dev.acc : NULL, cond),
       "kick-drift launch");
    hxg_eng_tm_close(&e->timers, k, e->dev.s_loc);
    return HX_OK;
}

static hx_status launch_rebuild(hx_md_engine *e, cudaStream_t s)
{
    int k = hxg_eng_tm_open(&e->timers, HX_MD_NEIGH, s);
    CU(hxg_rebuild_single((void *) s, hxg_eng_atoms_view(e), hxg_eng_cells_view(&e->cells),
                          hxg_eng_lists_view(e), device_decide(e), e->dev.report_dev),
       "device rebuild launch");
    hxg_eng_tm_close(&e->timers, k, s);
    return HX_OK;
}

/* The forces with the closing kick (fused into them, unless fix langevin
 * adds its term first), then the thermostats' end of the step. */
static hx_status launch_forces(hx_md_engine *e, int want_thermo)
{
    double *acc = want_thermo ? e->dev.acc : NULL;
    const int kick = e->therm.lang_on ? 0 : HXG_FORCE_KICK;
    int k = hxg_eng_tm_open(&e->timers, HX_MD_LOCAL, e->dev.s_loc);
    CU(hxg_force_local((void *) e->dev.s_loc, hxg_eng_atoms_view(e), hxg_eng_lists_view(e),
                       hxg_eng_consts(e), acc, e->dev.flags, HXG_FORCE_WRITE | kick),
       "force launch");
    hxg_eng_tm_close(&e->timers, k, e->dev.s_loc);
    if (!hxg_eng_therm_on(e))
        return HX_OK;
    k = hxg_eng_tm_open(&e->timers, HX_MD_INTEGRATE, e->dev.s_loc);
    HXI_CHECK(hxg_eng_therm_close_single(e, acc, e->dev.flags, -1));
    hxg_eng_tm_close(&e->timers, k, e->dev.s_loc);
    return HX_OK;
}

static hx_status launch_device_step(hx_md_engine *e, int candidate, int want_thermo)
{
    HXI_CHECK(launch_kickdrift(e, want_thermo, 0));
    if (candidate)
        HXI_CHECK(launch_rebuild(e, e->dev.s_loc));
    return launch_forces(e, want_thermo);
}

#if CUDART_VERSION >= 13000
/* A candidate step as a graph whose rebuild kernels sit in the body of a
 * conditional (if) node: the kick-drift's last block sets the condition
 * from the same gate the rebuild's kernels test, and a step that does not
 * rebuild skips them instead of launching each to return at once (with
 * `check yes` every step is a candidate, and those launches were a large
 * part of its step; docs/md-gpu.md, "A step"). The body is captured from
 * s_b, which a single rank does not otherwise use. */
static cudaError_t capture_conditional(hx_md_engine *e, int want_thermo, int nsteps,
                                       cudaGraph_t *out)
{
    cudaGraph_t g = NULL;
    enum cudaStreamCaptureStatus cs;
    int capturing = 0;
    cudaError_t ce = cudaGraphCreate(&g, 0);
    if (ce == cudaSuccess)
        ce = cudaStreamBeginCaptureToGraph(e->dev.s_loc, g, NULL, NULL, 0,
                                           cudaStreamCaptureModeThreadLocal);
    capturing = ce == cudaSuccess;
    /* Each step has its own node and condition. */
    for (int i = 0; i < nsteps && ce == cudaSuccess; i++) {
        cudaGraph_t body = NULL;
        cudaGraphConditionalHandle h = 0;
        cudaGraphNode_t node = NULL;
        const cudaGraphNode_t *deps = NULL;
        const cudaGraphEdgeData *edges = NULL;
        size_t ndeps = 0;
        ce = cudaGraphConditionalHandleCreate(&h, g, 0, cudaGraphCondAssignDefault);
        if (ce == cudaSuccess && launch_kickdrift(e, want_thermo, h) != HX_OK)
            ce = cudaErrorUnknown;
        if (ce == cudaSuccess)
            ce = cudaStreamGetCaptureInfo(e->dev.s_loc, &cs, NULL, NULL, &deps, &edges, &ndeps);
        if (ce == cudaSuccess) {
            struct cudaGraphNodeParams p;
            memset(&p, 0, sizeof p);
            p.type = cudaGraphNodeTypeConditional;
            p.conditional.handle = h;
            p.conditional.type = cudaGraphCondTypeIf;
            p.conditional.size = 1;
            ce = cudaGraphAddNode(&node, g, deps, edges, ndeps, &p);
            if (ce == cudaSuccess)
                body = p.conditional.phGraph_out[0];
        }
        if (ce == cudaSuccess)
            ce = cudaStreamUpdateCaptureDependencies(e->dev.s_loc, &node, NULL, 1,
                                                     cudaStreamSetCaptureDependencies);
        if (ce == cudaSuccess) {
            ce = cudaStreamBeginCaptureToGraph(e->dev.s_b, body, NULL, NULL, 0,
                                               cudaStreamCaptureModeThreadLocal);
            if (ce == cudaSuccess) {
                hx_status st = launch_rebuild(e, e->dev.s_b);
                cudaGraph_t tmp = NULL;
                ce = cudaStreamEndCapture(e->dev.s_b, &tmp);
                if (st != HX_OK && ce == cudaSuccess)
                    ce = cudaErrorUnknown;
            }
        }
        if (ce == cudaSuccess && launch_forces(e, want_thermo) != HX_OK)
            ce = cudaErrorUnknown;
    }
    if (capturing) {
        cudaGraph_t tmp = NULL;
        cudaError_t ee = cudaStreamEndCapture(e->dev.s_loc, &tmp);
        if (ce == cudaSuccess)
            ce = ee;
    }
    if (ce != cudaSuccess) {
        if (g)
            cudaGraphDestroy(g);
        cudaGetLastError();
        return ce;
    }
    *out = g;
    return cudaSuccess;
}
#endif

/* Captures nsteps steps of one kind into one graph and instantiates it
 * (NULL where that failed). With `check yes` a candidate step goes into a
 * graph with a conditional node where the runtime allows; otherwise into
 * a plain graph whose rebuild kernels return at once on steps that do not
 * rebuild. With `check no` every candidate step past the delay rebuilds,
 * and the node would only add its cost: launching its body makes a
 * rebuild longer (docs/md-gpu.md, "A step"). */
static cudaGraphExec_t capture_exec(hx_md_engine *e, int candidate, int want_thermo, int nsteps)
{
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    int timing = e->timers.timing_now;
    e->timers.timing_now = 0;
    hx_status st = HX_OK;
#if CUDART_VERSION >= 13000
    if (candidate && e->graphs.cond && e->cfg.neigh_check) {
        cudaError_t ce = capture_conditional(e, want_thermo, nsteps, &g);
        if (ce == cudaSuccess && cudaGraphInstantiate(&x, g, 0) != cudaSuccess) {
            ce = cudaErrorUnknown;
            x = NULL;
            cudaGetLastError();
        }
        if (g)
            cudaGraphDestroy(g);
        g = NULL;
        if (ce == cudaSuccess) {
            e->timers.timing_now = timing;
            return x;
        }
        hxi_info("GPU engine: a rebuild step could not be captured with a conditional node "
                 "(%s); its rebuild kernels are replayed every candidate step instead",
                 cudaGetErrorString(ce));
        e->graphs.cond = 0;
    }
#endif
    if (cudaStreamBeginCapture(e->dev.s_loc, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        st = HX_ERR_CUDA;
    } else {
        for (int i = 0; i < nsteps && st == HX_OK; i++)
            st = launch_device_step(e, candidate, want_thermo);
        if (cudaStreamEndCapture(e->dev.s_loc, &g) != cudaSuccess)
            st = HX_ERR_CUDA;
    }
    if (st == HX_OK && cudaGraphInstantiate(&x, g, 0) != cudaSuccess) {
        st = HX_ERR_CUDA;
        x = NULL;
    }
    if (g)
        cudaGraphDestroy(g);
    cudaGetLastError();
    e->timers.timing_now = timing;
    return st == HX_OK ? x : NULL;
}

/* Captures one kind of step. A failure turns graphs off; the plain
 * launches do the same work. */
static void capture_step(hx_md_engine *e, int candidate, int want_thermo)
{
    cudaGraphExec_t x = capture_exec(e, candidate, want_thermo, 1);
    if (!x) {
        hxi_warn("GPU engine: could not capture a step into a CUDA graph; launching kernels "
                 "one by one instead");
        e->graphs.on = 0;
        return;
    }
    e->graphs.gexec[candidate][want_thermo] = x;
}

void hxg_eng_drop_step_graphs(struct hxg_graphs *g)
{
    for (int a = 0; a < 2; a++) {
        for (int b = 0; b < 2; b++)
            if (g->gexec[a][b]) {
                cudaGraphExecDestroy(g->gexec[a][b]);
                g->gexec[a][b] = NULL;
            }
        if (g->gbatch[a]) {
            cudaGraphExecDestroy(g->gbatch[a]);
            g->gbatch[a] = NULL;
        }
    }
}

/* Whether one rank's step s may rebuild (its kind of graph). */
static int device_candidate(const hx_md_engine *e, int64_t s)
{
    return s % e->cfg.neigh_every == 0;
}

/* One rank, rebuilds on the device: no host synchronisation in a step. */
hx_status hxg_eng_step_single(hx_md_engine *e, int want_thermo)
{
    const int candidate = device_candidate(e, e->step);
    e->sched.last_want = want_thermo;
    if (e->graphs.on && !e->timers.timing_now) {
        if (!e->graphs.gexec[candidate][want_thermo])
            capture_step(e, candidate, want_thermo);
        if (e->graphs.on) {
            CU(cudaGraphLaunch(e->graphs.gexec[candidate][want_thermo], e->dev.s_loc),
               "graph launch");
            e->graphs.steps++;
            return hxg_eng_check_report(e);
        }
    }
    HXI_CHECK(launch_device_step(e, candidate, want_thermo));
    return hxg_eng_check_report(e);
}

/* The steps e->step + 1 .. e->step + k (k = e->graphs.batch_k) of one rank as
 * one graph launch: none of them a thermo step (the caller's promise) or
 * timed, all of one kind (candidate or not). Returns 0 where they cannot
 * be (the caller then takes them one at a time), -1 if the launch failed. */
int hxg_eng_launch_batch(hx_md_engine *e)
{
    const int k = e->graphs.batch_k;
    if (e->multi || e->host_rebuild || !e->graphs.on || k < 2)
        return 0;
    const int candidate = device_candidate(e, e->step + 1);
    for (int i = 1; i <= k; i++)
        if (device_candidate(e, e->step + i) != candidate ||
            hxg_eng_tm_sampled(&e->timers, e->step + i))
            return 0;
    if (!e->graphs.gbatch[candidate]) {
        e->graphs.gbatch[candidate] = capture_exec(e, candidate, 0, k);
        if (!e->graphs.gbatch[candidate]) {
            hxi_info("GPU engine: %d steps could not be captured into one CUDA graph; each step "
                     "is replayed from its own",
                     k);
            e->graphs.batch_k = 1;
            return 0;
        }
    }
    if (cudaGraphLaunch(e->graphs.gbatch[candidate], e->dev.s_loc) != cudaSuccess)
        return -1;
    e->step += k;
    e->timers.stats.steps += k;
    e->graphs.steps += k;
    e->sched.last_want = 0;
    e->acc_valid = 0;
    e->timers.timing_now = 0;
    return k;
}

/* One rank's graphs, captured ahead (hxg_eng_capture_ahead): the four kinds
 * of step, once (their arrays never move), so that no capture falls inside
 * the timed loop, and the batch of the steps that come in runs: candidates
 * when every step is one, else the others. */
void hxg_eng_capture_single_ahead(hx_md_engine *e)
{
    if (e->multi)
        return;
    for (int c = 0; c < 2; c++)
        for (int t = 0; t < 2; t++)
            if (e->graphs.on && !e->graphs.gexec[c][t])
                capture_step(e, c, t);
    const int c = e->cfg.neigh_every == 1;
    if (e->graphs.on && e->graphs.batch_k > 1 && !e->graphs.gbatch[c])
        e->graphs.gbatch[c] = capture_exec(e, c, 0, e->graphs.batch_k);
}

/* The single-rank rebuild of some step s found an atom with more
 * neighbours than the list holds: the device halted every kernel after it
 * (hxg_flags.halt), so steps s+1 .. e->step, which the host has launched,
 * did nothing, and step s lacks its forces. This grows the list, builds it
 * again on the atoms as that rebuild sorted them, finishes step s (forces,
 * the closing kick and the thermostats' end of the step) and launches the
 * later steps again. The lists hold the same neighbours in the same order
 * as a large enough list would, so the run computes the same numbers.
 * The captured steps hold the old list and are captured again. */
hx_status hxg_eng_recover_single(hx_md_engine *e)
{
    for (int round = 0; round < 4; round++) {
        hxg_flags fl;
        CU(cudaStreamSynchronize(e->dev.s_loc), "waiting for the halted steps");
        CU(cudaMemcpy(&fl, e->dev.flags, sizeof fl, cudaMemcpyDeviceToHost), "flag read-back");
        if (!fl.halt)
            return HX_OK;
        const int64_t s = fl.cur;
        HXI_CHECK(hxg_eng_relist_single(e));
        hxg_eng_drop_step_graphs(&e->graphs);
        e->lists.regrowths++;
        e->dev.report->need = 0;
        HXI_CHECK(launch_forces(e, s == e->step && e->sched.last_want));
        for (int64_t t = s + 1; t <= e->step; t++)
            HXI_CHECK(
                launch_device_step(e, device_candidate(e, t), t == e->step && e->sched.last_want));
    }
    return hxg_eng_lists_overflow();
}
