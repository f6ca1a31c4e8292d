/*
 * engine.h - what the files of the GPU engine of halox-md share, and no one
 * else includes: the engine's state (struct hx_md_engine), the CUDA error
 * helper and the functions one file of src/md/gpu/ calls in another (the
 * hxg_eng_ prefix; what one file alone uses stays static there). engine.c
 * says which file holds which part.
 */
#ifndef HALOX_MD_GPU_ENGINE_H
#define HALOX_MD_GPU_ENGINE_H

#include "md/md.h"

#include "core/hxi.h"
#include "md/gpu/md_gpu.h"

#include <cuda_runtime_api.h>

#include <stdint.h>

/* One stage timer (a pair of events); defined in timers.c, which alone
 * reads it. */
typedef struct tm_span tm_span;
/* The timed stretches' events (stretch.c). */
typedef struct hxg_stretch hxg_stretch;

/* A run of launches on one stream sent as one CUDA graph (chain.c): the
 * executable of its last run, updated in place at the next. off: this rank
 * launches the run one by one (no graphs, or a capture failed). key: the
 * arguments the executable was captured with (hxg_chain_replay; key_bytes
 * 0: none). */
typedef struct hxg_chain {
    cudaGraphExec_t exec;
    int off;
    size_t key_bytes;
    unsigned char key[384];
} hxg_chain;

struct hx_md_engine {
    hx_md_config cfg;
    hx_comm *comm;
    hx_md_system *sys;
    hx_decomp decomp;
    int rank, nranks;
    int multi;        /* more than one rank: halo exchange */
    int host_rebuild; /* rebuild through the host (HALOX_MD_REBUILD=host) */
    int device, ndevices, local_rank, local_size;
    unsigned char gpu_uuid[16]; /* the device's, to count the ranks sharing it */
    char device_name[256];
    cudaStream_t s_loc, s_nl;
    cudaEvent_t ev_kd, ev_rev, ev_acc;
    hx_transport *t;
    hx_plan *plan;
    int blocking_transport; /* forward/reverse block the host (mpi, cpu) */

    /* physics */
    hxg_lj lj;
    hxg_geom geom;
    hxg_cellgrid cells;
    float dtf, dt, mass, trig2;
    double rh;
    int tpp, tpp_nl;
    int room; /* local forces compiled to leave room beside them (setup.c) */

    /* sizes */
    int nhome, nhalo, ntotal;
    int cap_home, cap_total;
    int max_neigh;          /* largest neighbour count of any atom at any list build so far */
    int64_t list_regrowths; /* rebuilds after the set-up whose lists had to grow */
    int last_want;          /* the last step launched is a thermo step */

    /* device arrays */
    float *x4, *v4, *f4, *xold4, *sx4, *sv4;
    int64_t *id, *sid;
    float *tx, *tf; /* the transport's arrays (multi only) */
    uint8_t *zones;
    float *xsort; /* 4 floats per local atom: positions in cell order (list build) */
    int32_t *cellof, *cellatoms, *cell_cnt, *cell_start, *scan_tmp;
    /* Several ranks, device rebuilds: the halo atoms' cell starts (the
     * home atoms' stay in cell_start for the local list, which may still be
     * built beside the non-local one), the reach of the halo (see
     * hxg_build_nonlocal), and whether the local list is queued already
     * (hxg_eng_queue_local_list). ev_list orders the two halves. */
    int32_t *halo_start;
    float near[3];
    float near_rows[3]; /* the same bound, never moved by tests: the compact list's rows */
    int halo_pairs;     /* pulses along two dimensions or more: halo atoms pair among them */
    int loc_queued, nl_queued;
    /* HALOX_MD_EARLY_FORCES=1: a rebuild step that sums no thermo queues
     * its local forces right behind the local list (rb_early, set by the
     * rebuild for this step), where the GPU would otherwise wait for the
     * host's plan and checks; loc_forces: they are queued, and the step's
     * forces leave them out. */
    int early_forces, rb_thermo, rb_early, loc_forces;
    /* HALOX_MD_PDL, bits: 1 the non-local forces of a step between checks
     * launched with programmatic dependent launch after the forward
     * exchange, 2 the local forces after the kick-drift (step.c) */
    int pdl;
    int64_t early_n; /* rebuild steps whose local forces went early */
    cudaEvent_t ev_list, ev_nlq;
    cudaStream_t s_b; /* the non-local half of the lists (high priority) */
    /* The cell sort (one chain per pair of arrays it sorts from: it leaves
     * the sorted atoms in the scratch arrays, which then swap roles with
     * the home arrays), the non-local lists (chain.c). */
    hxg_chain ch_sort[2], ch_nl;
    int sort_par; /* which of ch_sort the next sort replays */
    /* The atoms the non-local forces visit after a device rebuild
     * (hxg_nl_atoms): nl_idx[0 .. nl_atoms) when nl_on, else all ntotal.
     * nl_pos: the scan's scratch (cap_total + 1). On where the local atoms
     * fill the GPU once: below, the kernel over all of them is shorter than
     * the launches that would pick them. */
    int32_t *nl_idx, *nl_pos;
    size_t b_nlidx, b_nlpos;
    int nl_atoms, nl_on;
    /* Three size rules, forced by HALOX_MD_REBUILD=small|large (tests). */
    int nl_pick;    /* nl_on: 1 always, 0 never, else by size */
    int nl_early;   /* non-local lists from the plan's arrays (1), after the forward
                       exchange (0), else by size (rebuild_dev.c) */
    int plan_ahead; /* the plan's first count ahead of the sort (1), after it (0), else by
                       size (rebuild_dev.c) */
    int local_late; /* HALOX_MD_LOCAL_LATE: the local list queued beside the plan (0),
                       after the forward exchange (1), after the plan's kernels (2)
                       (rebuild_dev.c) */
    long long fill; /* threads that fill the GPU once */
    hxg_list loc, nl;
    size_t b_x4, b_v4, b_f4, b_xold4, b_sx4, b_sv4, b_id, b_sid, b_zones, b_xsort, b_cellof,
        b_cellatoms, b_locnb, b_loccnt, b_nlnb, b_nlcnt, b_nlrow, b_nlatom;
    int32_t *nl_atom; /* the atom of each row of the compact non-local list */
    int nl_rows_min; /* rows a compact non-local list needed at a build that overflowed */
    hxg_flags *flags;
    double *acc;
    hxg_report *report; /* mapped host memory */
    hxg_report *report_dev;

    /* host staging (pinned) */
    void *stage[2];          /* pinned staging halves (staging.c) */
    cudaEvent_t ev_stage[2]; /* each half's last copy */
    double *fout;
    int fout_cap;
    int32_t *hcell;
    double *htmp;
    int64_t *htmp_id;
    int hsort_cap;

    /* state */
    int64_t step;
    int64_t last_build; /* host's view (host path, or unchecked device path) */
    int64_t host_rebuilds;
    /* Seconds in each phase of the host-path rebuilds (HALOX_LOG=1 prints
     * them per rebuild at the end): see rebuild_phase_names in rebuild.c. */
    double rb_phase[9];
    /* The device rebuild (several ranks; rebuild_dev.c): its context, the
     * seconds of each phase, the rebuilds so far, and the census of atoms
     * it checks after each (debug builds and HALOX_MD_CHECK=atoms). */
    hx_rebuild *rb;
#define HXG_NPHASE 7
    double dev_phase[HXG_NPHASE];
    int64_t dev_rebuilds;
    /* A device rebuild's step on the host (HALOX_LOG): its start and end,
     * and, summed over the run, the time before it in its step, its own,
     * the rest of its step and the capture of the next step. */
    double rb_t0, rb_t1, dev_step[4];
    int64_t dev_step_n;  /* the rebuilds dev_step times (not those a vote on the GPU decided) */
    long long dev_calls; /* calls with other ranks in the rebuilds (hxi_comm_tally) */
    double dev_calls_s;
    int check_atoms;
    int check_lists; /* the two-half list build against the one-pass one (HALOX_MD_CHECK=lists) */
    int tight;         /* capacities without margin (HALOX_MD_TIGHT=1, for tests) */
    int graph_allowed; /* HALOX_MD_GRAPH_STEPS is not 0 */
    int64_t growths; /* device rebuilds that grew the home arrays */
    int census_set;
    uint64_t census_sum;
    int ago; /* steps since the last build (host path) */
    int acc_valid;
    hx_md_stats stats;
    int timers_on;
    int timers_every; /* time one step in this many (HALOX_MD_TIMERS) */
    int timing_now;   /* this step is timed */
    tm_span *spans;
    int span_next;
    /* The driver's timed stretches (ops->mark). */
    hxg_stretch *stretch;
    int graphs;                  /* replay device-resident steps from CUDA graphs */
    int graph_cond; /* their rebuilds in conditional nodes (until one cannot be captured) */
    cudaGraphExec_t gexec[2][2]; /* [candidate step][thermo step] */
    int batch_k; /* steps a graph replays in hxg_eng_steps (HALOX_MD_GRAPH_STEPS), either mode */
    cudaGraphExec_t gbatch[2];   /* batch_k steps, [candidate step] */
    int64_t graph_steps;         /* steps replayed from graphs so far (either path) */

    /* Several ranks, graph mode: the same on every rank (agreed at create),
     * since it decides where the ranks meet in collectives. */
    int mgraph;
    int mg_ok;    /* this rank replays (its capture worked); rank-local */
    int mg_dirty; /* arrays or plan changed since the capture */
    cudaGraphExec_t mg_exec;
    /* batch_k such steps in one graph (hxg_eng_steps); mg_batch_ok: this
     * rank has it (rank-local); mg_batch_dirty: to be captured again, after
     * a step replayed from mg_exec */
    cudaGraphExec_t mg_batch;
    int mg_batch_ok, mg_batch_dirty;
    cudaGraph_t mg_graph;           /* the step captured into mg_exec: the batch repeats it */
    int64_t mg_batched;             /* steps replayed batch_k to a launch so far */
    cudaEvent_t ev_gfork, ev_gjoin; /* fork and join inside the capture */
    /* Several ranks, graph mode without votes: a step's closing kick is
     * left to the next step's kick-drift (hxg_kickdrift's fclose), one
     * launch fewer a step, except on thermo steps. kick_open: the last
     * step left its kick to the next; hxg_eng_close_kick applies it before
     * anything reads the velocities or forces. */
    int kick_fuse, kick_open;
    /* Several ranks, `check yes` every step: the rebuild decision voted on
     * the device (vote.c; the same on every rank, agreed at create). */
    int dvote;
#define HXG_VOTE_RING 8
/* Steps a rank issues past the last one it knows did not rebuild (below
 * HXG_VOTE_RING; docs/md-gpu-graphs.md). */
#define HXG_VOTE_AHEAD 2
    int vote_ahead;          /* steps issued past the last known (HXG_VOTE_AHEAD) */
    cudaGraphExec_t vg_exec; /* a voted step (NULL: launched, each vote waited for) */
    int32_t *vbuf;           /* device: this rank's vote, the outcome */
    int64_t spec_last;       /* the last voted step issued and not yet known (-1: none) */
    int64_t spec_known;      /* steps up to here are known to have gone on or rebuilt */
    int cur_set;             /* flags->cur holds the step being issued */
    cudaEvent_t ev_vote[HXG_VOTE_RING]; /* the end of each voted step, by step % ring */
    int64_t vote_stops;                 /* steps a vote stopped (rebuilds) */
    hx_status pending;              /* first failure since the last check */
    int64_t pending_step;
    char pending_msg[640];
    char desc[1536];
};

/* The atoms of the non-local forces: how many, and their list (NULL: all). */
static inline int hxg_eng_nl_count(const hx_md_engine *e)
{
    return e->nl_on ? e->nl_atoms : e->ntotal;
}

static inline const int32_t *hxg_eng_nl_idx(const hx_md_engine *e)
{
    return e->nl_on ? e->nl_idx : NULL;
}

/* The views the launchers take (md_gpu.h), of the engine as it is now. */
static inline hxg_atoms_view hxg_eng_atoms_view(const hx_md_engine *e)
{
    hxg_atoms_view a = {e->x4,
                        e->v4,
                        e->f4,
                        e->xold4,
                        e->id,
                        e->sx4,
                        e->sv4,
                        e->sid,
                        e->multi ? e->tx : NULL,
                        e->multi ? e->tf : NULL,
                        e->multi ? e->zones : NULL,
                        e->geom,
                        e->nhome,
                        e->ntotal};
    return a;
}

static inline hxg_cells_view hxg_eng_cells_view(const hx_md_engine *e)
{
    hxg_cells_view c = {e->cells,  e->cell_cnt,  e->cell_start, e->halo_start,
                        e->cellof, e->cellatoms, e->scan_tmp,   e->xsort};
    return c;
}

static inline hxg_lists_view hxg_eng_lists_view(const hx_md_engine *e)
{
    hxg_lists_view l;
    const hxg_list none = {NULL, NULL, 0, 0, NULL, 0};
    l.loc = e->loc;
    l.nl = e->multi ? e->nl : none;
    l.pos = e->nl_pos;
    l.rowatom = e->nl_atom;
    l.nl_idx = e->nl_on ? e->nl_idx : NULL; /* as hxg_eng_nl_idx */
    for (int k = 0; k < 3; k++) {
        l.near[k] = e->near[k];
        l.near_rows[k] = e->near_rows[k];
    }
    l.rh2 = e->lj.rh2;
    l.halo_pairs = e->halo_pairs;
    l.nl_n = hxg_eng_nl_count(e);
    return l;
}

/* The step kernels' constants; atoms move only under nve (dtf, dt 0
 * otherwise). */
static inline hxg_consts hxg_eng_consts(const hx_md_engine *e)
{
    hxg_consts k;
    k.lj = e->lj;
    k.dtf = e->cfg.nve ? e->dtf : 0.0f;
    k.dt = e->cfg.nve ? e->dt : 0.0f;
    k.mass = e->mass;
    k.trig2 = e->trig2;
    k.tpp = e->tpp;
    k.tpp_nl = e->tpp_nl;
    k.room = e->room;
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
const char *hxg_eng_default_transport(const hx_md_engine *e);
hx_status hxg_eng_make_transport(hx_md_engine *e);
hx_status hxg_eng_create_local(hx_md_engine *e);
hx_status hxg_eng_choose_tpp(hx_md_engine *e);
hx_status hxg_eng_dev_grow(void *p, size_t *have, size_t need, const char *what);
int hxg_eng_round_up(long long v, int to);
int hxg_eng_cap_for(const hx_md_engine *e, int need);
hx_status hxg_eng_ensure_capacity(hx_md_engine *e, int nhome, int ntotal);
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
 * fourth 0); w 0, `size` bytes per atom as they are. Waits for the copy. */
hx_status hxg_eng_put(hx_md_engine *e, void *dst, const void *src, int n, int w, size_t size,
                      cudaStream_t s);
/* n atoms from device floats (w per atom, the first 3 taken) into host
 * doubles (3 per atom). Waits for the copy. */
hx_status hxg_eng_get(hx_md_engine *e, double *dst, const float *src, int n, int w,
                      cudaStream_t s);
hx_status hxg_eng_stage_create(hx_md_engine *e);
void hxg_eng_stage_destroy(hx_md_engine *e);
/* Rebuild phase times: adds the time since *t to phase[k] (traced as
 * names[k] under HALOX_TRACE) and moves *t on; with HALOX_LOG=1, prints
 * the mean of each of n phases over count rebuilds on rank 0. */
void hxg_eng_phase_mark(double *phase, const char *const *names, int k, double *t);
void hxg_eng_phase_log(const hx_md_engine *e, const char *what, const char *const *names,
                       const double *phase, int n, int64_t count);
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
void hxg_eng_drop_step_graphs(hx_md_engine *e);

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
/* Collective: whether the ranks vote on rebuilds (e->dvote), and its
 * state. After the transport is made. */
hx_status hxg_eng_vote_setup(hx_md_engine *e);
void hxg_eng_vote_free(hx_md_engine *e);
/* Captures the voted step (with the plain one, hxg_eng_capture_multi). */
void hxg_eng_capture_vote(hx_md_engine *e);
/* Step e->step as a voted step (e->ago not yet counted). */
hx_status hxg_eng_step_vote(hx_md_engine *e);
/* Waits until every voted step up to `upto` is known to have gone on,
 * finishing the one a vote stopped (a collective rebuild) and issuing
 * the steps after it again. */
hx_status hxg_eng_vote_known(hx_md_engine *e, int64_t upto);

/* ----------------------------------------------------- trace_cupti.c */

/* Under HALOX_TRACE: CUPTI's activity records of every kernel, copy and
 * memset of this process go into the trace (a warning where CUPTI cannot
 * start; the host ranges are kept). Process-wide, once. */
void hxg_trace_cupti_start(void);

/* ---------------------------------------------------------- timers.c */

hx_status hxg_eng_timers_create(hx_md_engine *e);
void hxg_eng_timers_destroy(hx_md_engine *e);
int hxg_eng_tm_open(hx_md_engine *e, int stage, cudaStream_t s);
void hxg_eng_tm_close(hx_md_engine *e, int k, cudaStream_t s);
void hxg_eng_tm_harvest_all(hx_md_engine *e);
int hxg_eng_tm_sampled(const hx_md_engine *e, int64_t step);

/* --------------------------------------------------------- stretch.c */

hx_status hxg_eng_stretch_create(hx_md_engine *e);
void hxg_eng_stretch_destroy(hx_md_engine *e);
/* ops->mark and ops->stretch_seconds (md.h). */
hx_status hxg_eng_mark(hx_md_engine *e, int end);
hx_status hxg_eng_stretch_seconds(hx_md_engine *e, double *sec, int n);

#endif /* HALOX_MD_GPU_ENGINE_H */
