/*
 * engine_parts.h - the parts of the GPU engine's state, one job each:
 * struct hx_md_engine (engine.h) holds one of each by value (e->dev,
 * e->atoms, e->lists, ...). Each part says which files set it up and
 * which own it; a function that touches one part alone takes that part,
 * not the engine (timers.c, staging.c, stretch.c, hxg_eng_vote_free,
 * hxg_eng_drop_step_graphs, hxg_eng_cells_view).
 */
#ifndef HALOX_MD_GPU_ENGINE_PARTS_H
#define HALOX_MD_GPU_ENGINE_PARTS_H

#include "md/md.h"

#include "core/hxi.h"
#include "md/gpu/md_gpu.h"
#include "md/gpu/md_thermostat.h"

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

/* The GPU this rank drives: which one, its streams and their events, and
 * the bookkeeping that lives on it (flags, thermo sums, the report in
 * mapped host memory). Set up by setup.c; every file launches on its
 * streams. */
struct hxg_device {
    int device, ndevices, local_rank, local_size;
    unsigned char gpu_uuid[16]; /* the device's, to count the ranks sharing it */
    char name[256];
    long long fill; /* threads that fill the GPU once */
    cudaStream_t s_loc, s_nl;
    cudaStream_t s_b; /* the non-local half of the lists (high priority) */
    cudaEvent_t ev_kd, ev_rev, ev_acc;
    hxg_flags *flags;
    double *acc;
    hxg_report *report; /* mapped host memory */
    hxg_report *report_dev;
};

/* What the step kernels compute with: the pair potential, the box as pair
 * code sees it, the integrator's constants, the list cutoff, and the shape
 * of the force kernels. Set up by setup.c (rh by engine.c); read through
 * hxg_eng_consts and the views (engine.h). */
struct hxg_phys {
    hxg_lj lj;
    hxg_geom geom;
    float dtf, dt, mass, trig2;
    double rh;
    int tpp, tpp_nl;
    int room; /* local forces compiled to leave room beside them (setup.c) */
    /* Several atom types (types.c): the masses and the pairs' table (pairs,
     * device memory, which ty.pairs reads), and the mass of all atoms
     * (thermo's density; 0 with one type). */
    hxg_types ty;
    hxg_pair_ij *pairs;
    double mass_sum;
};

/* The atoms on the device (setup.c sizes them, the rebuilds in rebuild.c
 * and rebuild_dev.c fill them; the launchers see hxg_eng_atoms_view):
 * home atoms' positions, velocities, forces, positions at the last build
 * and ids, the cell sort's scratch (sx4, sv4, sid), the zones of the local
 * atoms, and the bytes each array holds (b_*). */
struct hxg_atoms {
    int nhome, nhalo, ntotal;
    int cap_home, cap_total;
    float *x4, *v4, *f4, *xold4, *sx4, *sv4;
    int64_t *id, *sid;
    uint8_t *zones;
    /* Several types and ranks: the local atoms' types (the home atoms'
     * from the w of x4, the halo's from the transport's field exchange;
     * types.c), cap_total of them. */
    int32_t *type;
    size_t b_x4, b_v4, b_f4, b_xold4, b_sx4, b_sv4, b_id, b_sid, b_zones, b_type;
};

/* The cell lists (setup.c sizes them; the sorts and list builds fill
 * them; the launchers see hxg_eng_cells_view): the grid, each atom's cell
 * (cellof), the atoms in cell order (atoms), per cell its count and start,
 * the scan's scratch, and the positions in cell order (xsort, 4 floats per
 * local atom: the list build). Several ranks, device rebuilds: the halo
 * atoms' cell starts (the home atoms' stay in start for the local list,
 * which may still be built beside the non-local one). */
struct hxg_cells {
    hxg_cellgrid grid;
    int32_t *cellof, *atoms, *cnt, *start, *scan_tmp;
    int32_t *halo_start;
    float *xsort;
    size_t b_xsort, b_cellof, b_atoms;
    size_t b_cnt, b_start, b_halo_start; /* cnt, start, halo_start: bytes held */
};

/* The neighbour lists, local and non-local: setup.c sizes them, rebuild.c
 * builds them (lists_check.c checks them); the launchers see
 * hxg_eng_lists_view. */
struct hxg_lists {
    hxg_list loc, nl;
    int max_neigh;     /* largest neighbour count of any atom at any list build so far */
    int64_t regrowths; /* rebuilds after the set-up whose lists had to grow */
    /* The reach of the halo (see hxg_build_nonlocal), and whether the
     * local list is queued already (hxg_eng_queue_local_list). ev_list
     * orders the two halves. */
    float near[3];
    float near_rows[3];    /* the same bound, never moved by tests: the compact list's rows */
    float near_lo[3];      /* full shell: the lower faces' bound (-FLT_MAX: no halo below) */
    float near_rows_lo[3]; /* the same, never moved by tests */
    int halo_pairs;        /* pulses along two dimensions or more: halo atoms pair among them */
    int loc_queued, nl_queued;
    cudaEvent_t ev_list, ev_nlq;
    hxg_chain ch_nl; /* the non-local lists' launches (chain.c) */
    /* The atoms the non-local forces visit after a device rebuild
     * (hxg_nl_atoms): nl_idx[0 .. nl_atoms) when nl_on, else all ntotal.
     * nl_pos: the scan's scratch (cap_total + 1). On where the local atoms
     * fill the GPU once: below, the kernel over all of them is shorter than
     * the launches that would pick them. */
    int32_t *nl_idx, *nl_pos;
    size_t b_nlidx, b_nlpos;
    int nl_atoms, nl_on;
    int32_t *nl_atom; /* the atom of each row of the compact non-local list */
    int nl_rows_min;  /* rows a compact non-local list needed at a build that overflowed */
    size_t b_locnb, b_loccnt, b_nlnb, b_nlcnt, b_nlrow, b_nlatom;
};

/* Phases of a device rebuild (rebuild_dev.c). */
#define HXG_NPHASE 7

/* The rebuilds (rebuild.c: the host path; rebuild_dev.c: the device
 * rebuild with several ranks), their counts, phase times and checks.
 * engine.c sets the checks at create, setup.c the size rules; step.c
 * times a rebuild's step. */
struct hxg_rebuild {
    /* The device rebuild (several ranks): its context, the seconds of
     * each phase, the rebuilds so far, and the census of atoms it checks
     * after each (debug builds and HALOX_MD_CHECK=atoms). */
    hx_rebuild *rb;
    int64_t host_rebuilds;
    /* Seconds in each phase of the host-path rebuilds (HALOX_LOG=1 prints
     * them per rebuild at the end): see rebuild_phase_names in rebuild.c. */
    double rb_phase[9];
    double dev_phase[HXG_NPHASE];
    int64_t dev_rebuilds;
    /* A device rebuild's step on the host (HALOX_LOG): its start and end,
     * and, summed over the run, the time before it in its step, its own,
     * the rest of its step and the capture of the next step. */
    double t0, t1, dev_step[4];
    int64_t dev_step_n;  /* the rebuilds dev_step times (not those a vote on the GPU decided) */
    long long dev_calls; /* calls with other ranks in the rebuilds (hxi_comm_tally) */
    double dev_calls_s;
    int check_atoms;
    int check_lists; /* the two-half list build against the one-pass one (HALOX_MD_CHECK=lists) */
    int64_t growths; /* device rebuilds that grew the home arrays */
    int census_set;
    uint64_t census_sum;
    /* Three size rules, forced by HALOX_MD_REBUILD=small|large (tests). */
    int nl_pick;    /* nl_on: 1 always, 0 never, else by size */
    int nl_early;   /* non-local lists from the plan's arrays (1), after the forward
                       exchange (0), else by size (rebuild_dev.c) */
    int plan_ahead; /* the plan's first count ahead of the sort (1), after it (0), else by
                       size (rebuild_dev.c) */
    int local_late; /* HALOX_MD_LOCAL_LATE: the local list queued beside the plan (0),
                       after the forward exchange (1), after the plan's kernels (2)
                       (rebuild_dev.c) */
    /* HALOX_MD_EARLY_FORCES=1: a rebuild step that sums no thermo queues
     * its local forces right behind the local list (early, set by the
     * rebuild for this step; thermo: the step sums thermo), where the GPU
     * would otherwise wait for the host's plan and checks; loc_forces:
     * they are queued, and the step's forces leave them out. */
    int early_forces, thermo, early, loc_forces;
    int64_t early_n; /* rebuild steps whose local forces went early */
    /* The cell sort (one chain per pair of arrays it sorts from: it leaves
     * the sorted atoms in the scratch arrays, which then swap roles with
     * the home arrays; chain.c). */
    hxg_chain ch_sort[2];
    int sort_par; /* which of ch_sort the next sort replays */
};

/* The steps replayed from CUDA graphs (step_single.c: one rank; step.c:
 * several ranks, graph mode). engine.c decides graph mode at create;
 * chain.c reads `allowed`. */
struct hxg_graphs {
    int allowed; /* HALOX_MD_GRAPH_STEPS is not 0 */
    int on;      /* one rank replays its device-resident steps from CUDA graphs */
    int cond;    /* their rebuilds in conditional nodes (until one cannot be captured) */
    cudaGraphExec_t gexec[2][2]; /* [candidate step][thermo step] */
    int batch_k; /* steps a graph replays in hxg_eng_steps (HALOX_MD_GRAPH_STEPS), either mode */
    cudaGraphExec_t gbatch[2]; /* batch_k steps, [candidate step] */
    int64_t steps;             /* steps replayed from graphs so far (either path) */
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
};

#define HXG_VOTE_RING 8
/* Steps a rank issues past the last one it knows did not rebuild (below
 * HXG_VOTE_RING; docs/md-gpu-graphs.md). */
#define HXG_VOTE_AHEAD 2

/* Several ranks, `check yes` every step: the rebuild decision voted on the
 * device (vote.c; step.c asks it which steps are known). */
struct hxg_vote {
    int on;                        /* the ranks vote (the same on every rank, agreed at create) */
    int ahead;                     /* steps issued past the last known (HXG_VOTE_AHEAD) */
    cudaGraphExec_t exec;          /* a voted step (NULL: launched, each vote waited for) */
    int32_t *buf;                  /* device: this rank's vote, the outcome */
    int64_t spec_last;             /* the last voted step issued and not yet known (-1: none) */
    int64_t spec_known;            /* steps up to here are known to have gone on or rebuilt */
    int cur_set;                   /* flags->cur holds the step being issued */
    cudaEvent_t ev[HXG_VOTE_RING]; /* the end of each voted step, by step % ring */
    int64_t stops;                 /* steps a vote stopped (rebuilds) */
};

/* The stage timers (timers.c), the driver's timed stretches (stretch.c,
 * ops->mark) and the statistics they sum into: the step and rebuild files
 * open and close the timers and add their host times to stats. */
struct hxg_timers {
    int on;
    int every;      /* time one step in this many (HALOX_MD_TIMERS) */
    int timing_now; /* this step is timed */
    tm_span *spans;
    int span_next;
    hxg_stretch *stretch;
    hx_md_stats stats;
};

/* The halo exchange as the engine sees it: the transport, the plan it
 * adopted, its arrays (multi only) and whether its forward and reverse
 * block the host (mpi, cpu). setup.c makes the transport; the rebuilds
 * give it plans and take its arrays. */
struct hxg_xport {
    hx_transport *t;
    hx_plan *plan;
    float *tx, *tf;
    int blocking;
    int type_field; /* the field id of atoms.type (several types and ranks), else -1 */
};

/* Host memory (staging.c, rebuild.c, engine.c): the pinned staging halves
 * and each half's last copy, the forces gather returns, and the scratch of
 * the host path's cell sort. */
struct hxg_host {
    void *stage[2];
    cudaEvent_t ev_stage[2];
    int serial; /* conversions on one thread: several ranks share the host's cores */
    double *fout;
    int fout_cap;
    int32_t *hcell;
    double *htmp;
    int64_t *htmp_id;
    int hsort_cap;
};

/* How the steps are issued (step.c, step_single.c) and the first failure a
 * step between checks deferred. */
struct hxg_sched {
    int last_want; /* the last step launched is a thermo step (one rank) */
    /* HALOX_MD_PDL, bits: 1 the non-local forces of a step between checks
     * launched with programmatic dependent launch after the forward
     * exchange, 2 the local forces after the kick-drift (step.c) */
    int pdl;
    /* Several ranks, graph mode without votes: a step's closing kick is
     * left to the next step's kick-drift (hxg_kickdrift's fclose), one
     * launch fewer a step, except on thermo steps. kick_open: the last
     * step left its kick to the next; hxg_eng_close_kick applies it before
     * anything reads the velocities or forces. */
    int kick_fuse, kick_open;
    hx_status pending; /* first failure since the last check */
    int64_t pending_step;
    char pending_msg[640];
};

/* The thermostats (thermostat.c sets them up and launches their kernels
 * from the step files): fix nvt's chain in device memory (nh, NULL
 * without fix nvt), a pinned double for the sum over the ranks (several
 * ranks), and fix langevin's constants (lang_on: fix langevin). */
struct hxg_therm {
    hxg_nh_dev *nh;
    double *host;
    int lang_on;
    hxg_langevin lang;
};

/* fix balance (fix_balance.c, which owns it): the count's device memory
 * (bins and the grid, hxg_bal_bytes) and the pinned host copy of the
 * bins; the rebalances that moved the cuts and those whose atoms went
 * through the host (a move the device migration cannot take). */
struct hxg_bal {
    int32_t *d_cnt;
    size_t b_cnt;
    int32_t *h_cnt;
    int h_cap;
    int64_t moved, via_host;
};

#endif /* HALOX_MD_GPU_ENGINE_PARTS_H */
