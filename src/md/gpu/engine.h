/*
 * engine.h - what the files of the GPU engine of halox-md share, and no one
 * else includes: the engine's state (struct hx_md_engine, made of the
 * parts in engine_parts.h), the views of it the launchers take, the CUDA
 * error helper and the functions one file of src/md/gpu/ calls in another
 * (the hxg_eng_ prefix; what one file alone uses stays static there).
 * engine.c says which file does which job.
 */
#ifndef HALOX_MD_GPU_ENGINE_H
#define HALOX_MD_GPU_ENGINE_H

#include "md/md.h"

#include "core/hxi.h"
#include "md/gpu/engine_parts.h"
#include "md/gpu/md_gpu.h"

#include <cuda_runtime_api.h>

#include <stdint.h>

/* The engine: who and where it runs, how far the run is, and its parts
 * (engine_parts.h), one job each. */
struct hx_md_engine {
    hx_md_config cfg;
    hx_comm *comm;
    hx_md_system *sys;
    hx_decomp decomp;
    int rank, nranks;
    int multi; /* more than one rank: halo exchange */
    /* newton off with several ranks (hxg_eng_choose_newton): the full-shell
     * plan, halo atoms from both sides, home atoms' forces from all their
     * neighbours on this rank, no reverse exchange. */
    int full;
    int newton_chosen; /* the engine chose (the deck did not say) */
    int host_rebuild;  /* rebuild through the host (HALOX_MD_REBUILD=host) */
    int tight;         /* capacities without margin (HALOX_MD_TIGHT=1, for tests) */
    int64_t step;
    int ago; /* steps since the last build (host path) */
    int acc_valid;
    char desc[1536];

    struct hxg_device dev;
    struct hxg_phys phys;
    struct hxg_atoms atoms;
    struct hxg_cells cells;
    struct hxg_lists lists;
    struct hxg_rebuild rebuild;
    struct hxg_graphs graphs;
    struct hxg_vote vote;
    struct hxg_timers timers;
    struct hxg_xport xport;
    struct hxg_host host;
    struct hxg_sched sched;
    struct hxg_therm therm;
    struct hxg_bal bal;
};

/* How many atoms the non-local forces visit: nl_atoms of nl_idx when
 * nl_on, else all local atoms. */
static inline int hxg_eng_nl_count(const hx_md_engine *e)
{
    return e->lists.nl_on ? e->lists.nl_atoms : e->atoms.ntotal;
}

/* The views the launchers take (md_gpu.h), of the engine as it is now. */
static inline hxg_atoms_view hxg_eng_atoms_view(const hx_md_engine *e)
{
    const struct hxg_atoms *at = &e->atoms;
    hxg_atoms_view a = {at->x4,
                        at->v4,
                        at->f4,
                        at->xold4,
                        at->id,
                        at->sx4,
                        at->sv4,
                        at->sid,
                        e->multi ? e->xport.tx : NULL,
                        e->multi ? e->xport.tf : NULL,
                        e->multi ? at->zones : NULL,
                        e->phys.geom,
                        at->nhome,
                        at->ntotal};
    return a;
}

static inline hxg_cells_view hxg_eng_cells_view(const struct hxg_cells *cl)
{
    hxg_cells_view c = {cl->grid,   cl->cnt,   cl->start,    cl->halo_start,
                        cl->cellof, cl->atoms, cl->scan_tmp, cl->xsort};
    return c;
}

static inline hxg_lists_view hxg_eng_lists_view(const hx_md_engine *e)
{
    const struct hxg_lists *ls = &e->lists;
    hxg_lists_view l;
    const hxg_list none = {NULL, NULL, 0, 0, NULL, 0};
    l.loc = ls->loc;
    l.nl = e->multi ? ls->nl : none;
    l.pos = ls->nl_pos;
    l.rowatom = ls->nl_atom;
    l.nl_idx = ls->nl_on ? ls->nl_idx : NULL; /* NULL: atoms 0 .. nl_n - 1 */
    for (int k = 0; k < 3; k++) {
        l.near[k] = ls->near[k];
        l.near_rows[k] = ls->near_rows[k];
        l.near_lo[k] = ls->near_lo[k];
        l.near_rows_lo[k] = ls->near_rows_lo[k];
    }
    l.rh2 = e->phys.lj.rh2;
    l.halo_pairs = ls->halo_pairs;
    l.full = e->full;
    l.nl_n = hxg_eng_nl_count(e);
    return l;
}

/* The step kernels' constants; atoms move only under nve (dtf, dt 0
 * otherwise). */
static inline hxg_consts hxg_eng_consts(const hx_md_engine *e)
{
    const struct hxg_phys *p = &e->phys;
    hxg_consts k;
    k.lj = p->lj;
    k.dtf = e->cfg.nve ? p->dtf : 0.0f;
    k.dt = e->cfg.nve ? p->dt : 0.0f;
    k.mass = p->mass;
    k.trig2 = p->trig2;
    k.tpp = p->tpp;
    k.tpp_nl = p->tpp_nl;
    k.room = p->room;
    k.vscale = e->therm.nh && e->cfg.nve ? &e->therm.nh->scale : NULL;
    k.ty = p->ty;
    k.ty.type = e->multi ? e->atoms.type : NULL;
    for (int t = 0; t < HXG_MAX_TYPES; t++)
        k.ty.dtf[t] = e->cfg.nve ? p->ty.dtf[t] : 0.0f;
    return k;
}

/* Map entries of a plan, over all its pulses (the transport's maps, laid
 * out pulse after pulse). */
static inline int hxg_eng_map_entries(const hx_plan *p)
{
    int n = 0;
    for (int q = 0; q < hx_plan_npulses(p); q++)
        n += hx_plan_pulse(p, q)->nsend;
    return n;
}

/* The map entries the reverse exchange adds into (the non-local forces
 * must overwrite their targets first): all of them, none with newton off,
 * which has no reverse. */
static inline int hxg_eng_reverse_entries(const hx_md_engine *e, const hx_plan *p)
{
    return e->full ? 0 : hxg_eng_map_entries(p);
}

/* ---------------------------------------------------------------- errors */

static inline hx_status cuda_fail(int err, const char *what)
{
    /* Busy: another process holds the GPU in an exclusive mode, or an MPS
     * server still recovers from a client killed moments ago (it refuses
     * new clients for a few seconds). */
    const char *hint = err == cudaErrorDevicesUnavailable
                           ? "; the GPU is taken by another process (exclusive compute mode), or, "
                             "under MPS, the server is still recovering from a killed client: "
                             "retry in a few seconds"
                           : "";
    return hxi_error(HX_ERR_CUDA,
                     "GPU engine: %s failed: %s (%s)%s; check the GPU with nvidia-smi, "
                     "or run the CPU engine",
                     what, cudaGetErrorName((cudaError_t) err),
                     cudaGetErrorString((cudaError_t) err), hint);
}

#define CU(call, what) HXI_CUDA_AS(call, cuda_fail, what)

/* ----------------------------------------------------------- setup.c */

hx_status hxg_eng_local_rank(hx_md_engine *e);
/* Atoms per rank below which the GPU engine runs newton off when the deck
 * does not say: there the reverse exchange, the longest link of a small
 * system's step, costs more than the second half of the halo and the
 * pairs across a boundary computed twice (docs/performance.md, "newton
 * off on the GPU engine"). */
#define HXG_FULL_BELOW 100000
/* e->full and e->newton_chosen: newton as the deck says, else by the atoms
 * per rank; several ranks only (one rank has no halo either way). */
void hxg_eng_choose_newton(hx_md_engine *e);
const char *hxg_eng_default_transport(const hx_md_engine *e);
hx_status hxg_eng_make_transport(hx_md_engine *e);
hx_status hxg_eng_create_local(hx_md_engine *e);
hx_status hxg_eng_choose_tpp(hx_md_engine *e);
hx_status hxg_eng_dev_grow(void *p, size_t *have, size_t need, const char *what);
int hxg_eng_round_up(long long v, int to);
int hxg_eng_cap_for(const hx_md_engine *e, int need);
hx_status hxg_eng_ensure_capacity(hx_md_engine *e, int nhome, int ntotal);
/* After the domain changed (fix balance's new cuts in e->decomp): the
 * cell grid and its arrays, and the reach of the halo, for it. Rank-local. */
hx_status hxg_eng_domain_changed(hx_md_engine *e);
/* After the device migration grew positions, velocities and ids to cap
 * atoms: the other home-sized arrays follow. */
hx_status hxg_eng_home_grown(hx_md_engine *e, int cap);

/* --------------------------------------------------------- rebuild.c */

hx_status hxg_eng_rebuild_host(hx_md_engine *e, int initial);
/* Home atoms from the device into s (double). Rank-local. */
hx_status hxg_eng_download_home(hx_md_engine *e, hx_md_system *s);

/* --------------------------------------------------------- staging.c */

/* n atoms from host to device on stream s, through the pinned staging
 * buffer: w 3 or 4, host doubles (3 per atom) into w floats per atom (the
 * fourth 0, or with w 4 and type given, the bits of type - 1: the atom's
 * type as the kernels read it, md_gpu.h); w 0, `size` bytes per atom as
 * they are. Waits for the copy. */
hx_status hxg_eng_put(struct hxg_host *host, void *dst, const void *src, const int32_t *type, int n,
                      int w, size_t size, cudaStream_t s);
/* n atoms from device floats (w per atom, the first 3 taken) into host
 * doubles (3 per atom), and with w 4 and type given, the fourth's bits
 * plus 1 into type. Waits for the copy. */
hx_status hxg_eng_get(struct hxg_host *host, double *dst, int32_t *type, const float *src, int n,
                      int w, cudaStream_t s);
hx_status hxg_eng_stage_create(struct hxg_host *host);
void hxg_eng_stage_destroy(struct hxg_host *host);
/* Rebuild phase times: adds the time since *t to phase[k] (traced as
 * names[k] under HALOX_TRACE) and moves *t on; with HALOX_LOG=1, prints
 * (rank 0 only) the mean of each of n phases over count rebuilds. */
void hxg_eng_phase_mark(double *phase, const char *const *names, int k, double *t);
void hxg_eng_phase_log(int rank, const char *what, const char *const *names, const double *phase,
                       int n, int64_t count);
/* Cell and neighbour lists of the current atoms, growing the lists when an
 * atom has more neighbours than they hold. Rank-local. */
hx_status hxg_eng_build_lists(hx_md_engine *e);
/* chain.c: fn's launches on s (fn returns the first launch error, 0 if
 * none) as one CUDA graph, or one by one without graphs. */
typedef int (*hxg_chain_fn)(hx_md_engine *e, const void *arg, cudaStream_t s);
hx_status hxg_chain_run(hx_md_engine *e, hxg_chain *c, cudaStream_t s, hxg_chain_fn fn,
                        const void *arg, const char *what);
/* chain.c: fn's launches, which read nothing but the `bytes` of args (a
 * plain struct, zeroed before it is filled, so that its padding compares
 * equal too) and device memory, as one CUDA graph that is launched again
 * as it is while args are the same bytes, and captured again when they
 * change. */
typedef int (*hxg_chain_kfn)(const void *args, cudaStream_t s);
hx_status hxg_chain_replay(hx_md_engine *e, hxg_chain *c, cudaStream_t s, hxg_chain_kfn fn,
                           const void *args, size_t bytes, const char *what);
void hxg_chain_free(hxg_chain *c);
/* Queues the local list of home atoms just sorted on the device, on the
 * local stream after the non-local stream's work so far: it builds while
 * the rebuild goes on (the plan); hxg_eng_build_lists adds the non-local
 * lists and waits for both. */
hx_status hxg_eng_queue_local_list(hx_md_engine *e);
/* Queues the non-local lists (and the atoms the non-local forces visit)
 * from the plan's own coordinates and zones, on their own stream after the
 * non-local stream's work so far: they build while the transport adopts
 * the plan (whose set-up waits for the non-local stream). */
hx_status hxg_eng_queue_nonlocal_list(hx_md_engine *e, const hx_plan *plan);
/* HALOX_MD_CHECK=lists: the lists of a two-half build against those of
 * the one-pass build (lists_check.c). Rank-local. */
hx_status hxg_eng_check_lists(hx_md_engine *e);

/* One rank's list of its atoms in cell order (sorted, cell starts set),
 * growing it until it holds every atom's neighbours. */
hx_status hxg_eng_relist_single(hx_md_engine *e);
/* The error of lists that still overflow after growing. */
hx_status hxg_eng_lists_overflow(void);
void hxg_eng_rebuild_log(const hx_md_engine *e);
/* The same phase times under another name, per `count` rebuilds. */
void hxg_eng_rebuild_log_as(const hx_md_engine *e, const char *what, int64_t count);
hx_status hxg_eng_check_report(hx_md_engine *e);

/* ----------------------------------------------------- rebuild_dev.c */

hx_status hxg_eng_rebuild_device(hx_md_engine *e);
void hxg_eng_rebuild_device_log(const hx_md_engine *e);
hx_status hxg_eng_census(hx_md_engine *e);

/* ----------------------------------------------------- step_single.c */

hx_status hxg_eng_step_single(hx_md_engine *e, int want_thermo);
/* One rank's next e->batch_k steps as one graph launch: k, 0 where they
 * cannot go so (the caller takes them one at a time), -1 if it failed. */
int hxg_eng_launch_batch(hx_md_engine *e);
void hxg_eng_capture_single_ahead(hx_md_engine *e);
/* After a single-rank device rebuild overflowed its list (see step_single.c). */
hx_status hxg_eng_recover_single(hx_md_engine *e);
/* Destroys the single-rank step graphs (captured again when next needed). */
void hxg_eng_drop_step_graphs(struct hxg_graphs *g);

/* ------------------------------------------------------------ step.c */

hx_status hxg_eng_step(hx_md_engine *e, int want_thermo);
hx_status hxg_eng_steps(hx_md_engine *e, int n);
hx_status hxg_eng_force_pass(hx_md_engine *e, int write, double *acc);
hx_status hxg_eng_pending_status(hx_md_engine *e);
void hxg_eng_capture_ahead(hx_md_engine *e);
/* What vote.c shares with the step schedules. */
void hxg_eng_defer(hx_md_engine *e, hx_status st);
hx_status hxg_eng_check_local(hx_md_engine *e, hx_status st);
hx_status hxg_eng_launch_multi_rest(hx_md_engine *e, cudaEvent_t fork, cudaEvent_t join,
                                    hxg_flags *gate, int close);
/* The reverse exchange on the non-local stream, timed; nothing with
 * newton off (e->full). */
hx_status hxg_eng_reverse(hx_md_engine *e);
/* The closing kick the last step left open (kick_fuse), on the local stream. */
hx_status hxg_eng_close_kick(hx_md_engine *e);
void hxg_eng_capture_multi(hx_md_engine *e);
/* One step's launches on both streams (fork and join: the events that link
 * them), as step.c and vote.c capture them. */
typedef hx_status (*hxg_launch_fn)(hx_md_engine *e, cudaEvent_t fork, cudaEvent_t join);
hx_status hxg_eng_capture_into(hx_md_engine *e, hxg_launch_fn fn, cudaGraphExec_t *exec,
                               cudaGraph_t *keep);
hx_status hxg_eng_replay_one(hx_md_engine *e);
hx_status hxg_eng_rebuild_and_finish(hx_md_engine *e);
/* ------------------------------------------------------------ vote.c */
/* Collective: whether the ranks vote on rebuilds (e->vote.on), and its
 * state. After the transport is made. */
hx_status hxg_eng_vote_setup(hx_md_engine *e);
void hxg_eng_vote_free(struct hxg_vote *v);
/* Captures the voted step (with the plain one, hxg_eng_capture_multi). */
void hxg_eng_capture_vote(hx_md_engine *e);
/* Step e->step as a voted step (e->ago not yet counted). */
hx_status hxg_eng_step_vote(hx_md_engine *e);
/* Waits until every voted step up to `upto` is known to have gone on,
 * finishing the one a vote stopped (a collective rebuild) and issuing
 * the steps after it again. */
hx_status hxg_eng_vote_known(hx_md_engine *e, int64_t upto);

/* ------------------------------------------------------ thermostat.c */

/* Whether a thermostat runs (fix nvt or fix langevin). */
static inline int hxg_eng_therm_on(const hx_md_engine *e)
{
    return e->therm.nh != NULL || e->therm.lang_on;
}
/* Collective: fix langevin's term on the first forces and fix nvt's chain
 * on the device (e->therm), after the first force pass. */
hx_status hxg_eng_therm_setup(hx_md_engine *e);
void hxg_eng_therm_free(struct hxg_therm *t);
/* On the local stream, gated by gate (NULL: none), at step `done` of the
 * run (done < 0: the device-resident step's counter, md_thermostat.h):
 * fix nvt's first half before the kick-drift; fix langevin's term after
 * the forces. */
hx_status hxg_eng_therm_begin(hx_md_engine *e, const hxg_flags *gate, int64_t done);
hx_status hxg_eng_therm_langevin(hx_md_engine *e, const hxg_flags *gate, int64_t done);
/* One rank, after the local forces were written (with the closing kick
 * fused into them unless fix langevin is on): fix langevin's term and
 * the closing kick, then fix nvt's second half. acc: a thermo step's sums. */
hx_status hxg_eng_therm_close_single(hx_md_engine *e, double *acc, const hxg_flags *gate,
                                     int64_t done);
/* Several ranks, after the closing kick: fix nvt's second half, its
 * kinetic sum over the ranks. Collective and agreed on. */
hx_status hxg_eng_therm_end_multi(hx_md_engine *e, double *acc);
/* fix nvt's chain into sys (has_nh and the chain), for restart files. */
hx_status hxg_eng_therm_gather(hx_md_engine *e, hx_md_system *sys);
/* Appends the thermostats to the description buf (n bytes). */
void hxg_eng_therm_describe(const hx_md_engine *e, char *buf, size_t n);

/* ----------------------------------------------------------- types.c */

/* Rank-local, after the physics: the per-type masses and the pairs' table
 * (e->phys.ty; one type: ty.n 1 and nothing more). */
hx_status hxg_eng_types_setup(hx_md_engine *e);
/* Collective, after the transport is made and the first atoms are in
 * e->sys: the field the halo's types travel in (several types and ranks)
 * and the mass of all atoms. */
hx_status hxg_eng_types_start(hx_md_engine *e);
/* The forward exchange of a rebuild on the transport's stream: with
 * several types the home atoms' types (from x4) go with the coordinates
 * to the halo (hx_transport_fields_forward), else the coordinates alone. */
hx_status hxg_eng_forward_rebuild(hx_md_engine *e);
void hxg_eng_types_free(hx_md_engine *e);

/* ----------------------------------------------------- fix_balance.c */

/* fix balance rebalances at step `step` of the run (e->step's count): a
 * multiple of NFREQ, several ranks (one rank's domain is the box). */
int hxg_eng_balance_due(const hx_md_engine *e, int64_t step);
/* Collective, at such a step after its kick-drift: counts the home atoms
 * on the GPU, moves the cuts as the CPU engine does (balance.c of
 * src/md), then the rebuild, to the new domains: the device's (the host
 * path's where the device migration cannot take the move, or with
 * HALOX_MD_REBUILD=host). */
hx_status hxg_eng_balance_rebuild(hx_md_engine *e);
/* Frees e->bal; with HALOX_LOG=1 rank 0 logs how often the cuts moved. */
void hxg_eng_balance_free(hx_md_engine *e);

/* ----------------------------------------------------- trace_cupti.c */

/* Under HALOX_TRACE: CUPTI's activity records of every kernel, copy and
 * memset of this process go into the trace (a warning where CUPTI cannot
 * start; the host ranges are kept). Process-wide, once. */
void hxg_trace_cupti_start(void);

/* ---------------------------------------------------------- timers.c */

/* graphs: steps replay from CUDA graphs (one timed step in 128 by
 * default, see timers.c). */
hx_status hxg_eng_timers_create(struct hxg_timers *t, int graphs);
void hxg_eng_timers_destroy(struct hxg_timers *t);
int hxg_eng_tm_open(struct hxg_timers *t, int stage, cudaStream_t s);
void hxg_eng_tm_close(struct hxg_timers *t, int k, cudaStream_t s);
void hxg_eng_tm_harvest_all(struct hxg_timers *t);
int hxg_eng_tm_sampled(const struct hxg_timers *t, int64_t step);

/* --------------------------------------------------------- stretch.c */

hx_status hxg_eng_stretch_create(hxg_stretch **out);
void hxg_eng_stretch_destroy(hxg_stretch **st);
/* ops->mark and ops->stretch_seconds (md.h). */
hx_status hxg_eng_mark(hx_md_engine *e, int end);
hx_status hxg_eng_stretch_seconds(hx_md_engine *e, double *sec, int n);

#endif /* HALOX_MD_GPU_ENGINE_H */
