/*
 * rebuild_dev.c - the GPU engine's device rebuild with several ranks: the
 * atoms stay on the GPU, and the host sees counts and errors only.
 *
 * Migration of positions, velocities and ids (hx_rebuild_migrate, which
 * also wraps), the cell sort of the home atoms (hxg_sort_home), the halo
 * plan built on the device (hx_plan_create_device, whose own exchange
 * delivers the halo coordinates), the transport's adoption of the plan,
 * then the transport's forward exchange, all on the transport's stream
 * (the non-local stream). The local list builds from the sorted home atoms
 * on the local stream from the sort on, the non-local lists from the
 * plan's coordinates on a third stream from the plan on. The plan's first
 * pulse is counted ahead of the sort (hx_plan_count_device), so that the
 * host's count messages go while the GPU sorts.
 * HALOX_MD_REBUILD=host takes the host path instead (rebuild.c), which
 * stays as the reference.
 */
#include "md/gpu/engine.h"

#include "md/md_driver.h"

#include <stdio.h>
#include <string.h>

static const char *const phase_names[HXG_NPHASE] = {"drain",    "migrate", "sort", "plan",
                                                    "set_plan", "forward", "lists"};

void hxg_eng_rebuild_device_log(const hx_md_engine *e)
{
    hxg_eng_phase_log(e->rank, "device rebuilds", phase_names, e->rebuild.dev_phase, HXG_NPHASE,
                      e->rebuild.dev_rebuilds);
    static const char *const step_names[4] = {"before", "rebuild", "after", "capture"};
    hxg_eng_phase_log(e->rank, "device rebuild steps", step_names, e->rebuild.dev_step, 4,
                      e->rebuild.dev_step_n);
    if (e->rebuild.dev_rebuilds > 0 && e->rank == 0 && hxi_log_level() >= 1)
        hxi_info("GPU engine: %.1f calls with other ranks a device rebuild on rank 0, %.3f ms "
                 "in them",
                 (double) e->rebuild.dev_calls / (double) e->rebuild.dev_rebuilds,
                 1e3 * e->rebuild.dev_calls_s / (double) e->rebuild.dev_rebuilds);
    if (e->rebuild.early_forces && e->rank == 0 && hxi_log_level() >= 1)
        hxi_info("GPU engine: the local forces of %lld of %lld device rebuild steps queued "
                 "behind the local list on rank 0",
                 (long long) e->rebuild.early_n, (long long) e->rebuild.dev_rebuilds);
    if (e->graphs.mgraph && !e->vote.on && e->rank == 0 && hxi_log_level() >= 1)
        hxi_info("GPU engine: %lld steps replayed from CUDA graphs on rank 0, %lld of them %d to "
                 "a launch",
                 (long long) e->graphs.steps, (long long) e->graphs.mg_batched, e->graphs.batch_k);
    if (e->vote.on && e->rank == 0)
        hxi_info("GPU engine: %lld of %lld device rebuilds decided by a vote on the GPU, %lld "
                 "steps replayed from CUDA graphs on rank 0",
                 (long long) e->vote.stops, (long long) e->rebuild.dev_rebuilds,
                 (long long) e->graphs.steps);
}

/* Atoms over all ranks and the checksum of their ids, against those of the
 * set-up: a lost or duplicated atom is an error naming the step (after a
 * rebuild where HALOX_MD_CHECK asks, and at every thermo row). */
hx_status hxg_eng_census(hx_md_engine *e)
{
    int64_t natoms = 0;
    uint64_t sum = 0;
    HXI_CHECK(hx_rebuild_census(e->rebuild.rb, e->atoms.nhome, e->atoms.id, &natoms, &sum));
    if (!e->rebuild.census_set) {
        e->rebuild.census_sum = sum;
        e->rebuild.census_set = 1;
    }
    if (natoms != e->sys->natoms || sum != e->rebuild.census_sum)
        return hxi_error(HX_ERR_STATE,
                         "GPU engine: at step %lld the ranks hold %lld atoms "
                         "(id checksum %016llx) where there were %lld (%016llx): atoms were lost "
                         "or duplicated; rerun with HALOX_MD_REBUILD=host and report this",
                         (long long) (e->cfg.first_step + e->step), (long long) natoms,
                         (unsigned long long) sum, (long long) e->sys->natoms,
                         (unsigned long long) e->rebuild.census_sum);
    return HX_OK;
}

/* What the cell sort of the home atoms reads (one chain, replayed while
 * these stay the same, see chain.c): the arrays, the grid and the capacity
 * its grids are sized for (atoms.nhome); the count of this rebuild is
 * read on the device (flags->nhome). Only those fields are set, the rest
 * zero, so that nothing else the views could hold starts a new capture. */
typedef struct sort_args {
    hxg_atoms_view atoms;
    hxg_cells_view cells;
    hxg_flags *flags;
} sort_args;

static int sort_chain(const void *arg, cudaStream_t s)
{
    const sort_args *a = arg;
    return hxg_sort_home((void *) s, a->atoms, a->cells, &a->flags->nhome, 0, a->flags);
}

/* The cell sort of this rebuild's home atoms, on the non-local stream. */
static hx_status queue_sort(hx_md_engine *e)
{
    sort_args a;
    memset(&a, 0, sizeof a); /* padding too: the arguments are compared as bytes */
    a.atoms.x4 = e->atoms.x4;
    a.atoms.v4 = e->atoms.v4;
    a.atoms.xold4 = e->atoms.xold4;
    a.atoms.sx4 = e->atoms.sx4;
    a.atoms.sv4 = e->atoms.sv4;
    a.atoms.id = e->atoms.id;
    a.atoms.sid = e->atoms.sid;
    a.atoms.geom = e->phys.geom;
    a.atoms.nhome = e->atoms.cap_home;
    a.cells.grid = e->cells.grid;
    a.cells.cnt = e->cells.cnt;
    a.cells.start = e->cells.start;
    a.cells.cellof = e->cells.cellof;
    a.cells.atoms = e->cells.atoms;
    a.cells.scan_tmp = e->cells.scan_tmp;
    a.flags = e->dev.flags;
    /* From pageable memory: the copy has taken the value when it returns. */
    CU(cudaMemcpyAsync(&e->dev.flags->nhome, &e->atoms.nhome, sizeof e->atoms.nhome,
                       cudaMemcpyHostToDevice, e->dev.s_nl),
       "the home atom count");
    HXI_CHECK(hxg_chain_replay(e, &e->rebuild.ch_sort[e->rebuild.sort_par], e->dev.s_nl, sort_chain,
                               &a, sizeof a, "the cell sort"));
    /* The sorted atoms are in the scratch arrays: they become the home
     * arrays, and the old ones the scratch of the next sort (which replays
     * the other chain: the two alternate). Everything queued from here on
     * reads the new arrays; the step's graph is captured anew after the
     * rebuild in any case. */
#define HXG_SWAP(T, a, b)                                                                          \
    do {                                                                                           \
        T t_ = a;                                                                                  \
        a = b;                                                                                     \
        b = t_;                                                                                    \
    } while (0)
    HXG_SWAP(float *, e->atoms.x4, e->atoms.sx4);
    HXG_SWAP(float *, e->atoms.v4, e->atoms.sv4);
    HXG_SWAP(int64_t *, e->atoms.id, e->atoms.sid);
    HXG_SWAP(size_t, e->atoms.b_x4, e->atoms.b_sx4);
    HXG_SWAP(size_t, e->atoms.b_v4, e->atoms.b_sv4);
    HXG_SWAP(size_t, e->atoms.b_id, e->atoms.b_sid);
#undef HXG_SWAP
    e->rebuild.sort_par ^= 1;
    return HX_OK;
}

/* Orders the rebuild after its step's kick-drift. That runs on the local
 * stream (behind the steps queued before it); everything after runs on the
 * non-local one. The host does not drain the streams first: the
 * migration's first kernels queue behind the kick-drift, and its first
 * wait for them (which reports a failed kernel or a timed-out exchange of
 * those steps, like the drain of the host path) holds what the drain did.
 * Agreed. */
static hx_status order_after_step(hx_md_engine *e)
{
    hx_status st = HX_OK;
    if (cudaEventRecord(e->dev.ev_kd, e->dev.s_loc) != cudaSuccess ||
        cudaStreamWaitEvent(e->dev.s_nl, e->dev.ev_kd, 0) != cudaSuccess)
        st = cuda_fail(cudaGetLastError(), "ordering a rebuild after its step");
    return hxi_agree(e->comm, st);
}

/* The migration (phase 1), then the cell sort of the migrated home atoms
 * and the local list behind it (phase 2). Agreed. */
static hx_status migrate_and_sort(hx_md_engine *e, double *tp)
{
    hx_status st = HX_OK;
    int cap = e->atoms.cap_home;
    hx_dfield fields[2] = {{(void **) &e->atoms.v4, 16}, {(void **) &e->atoms.id, sizeof(int64_t)}};
    HXI_CHECK(hx_rebuild_migrate(e->rebuild.rb, &e->atoms.nhome, &cap, &e->atoms.x4, 4, fields, 2));
    if (cap != e->atoms.cap_home) { /* rank-local; agreed after the sort, on every rank */
        e->rebuild.growths++;
        st = hxg_eng_home_grown(e, cap);
    }
    hxg_eng_phase_mark(e->rebuild.dev_phase, phase_names, 1, tp);

    if (st == HX_OK)
        st = hxg_eng_ensure_capacity(e, e->atoms.nhome, e->atoms.nhome);
    /* The plan's first count needs the migrated atoms, not their order: it
     * goes ahead of the sort, so that the plan waits for it alone and its
     * count messages go while the GPU sorts. That pays while the host's
     * waits and messages are most of the rebuild; with four fills of home
     * atoms or more the GPU's work is, and the extra pass over the atoms
     * costs more than the host gains (docs/performance.md, "The plan
     * counted ahead of the sort"; docs/results/plan-ahead-2026-12-04.txt). */
    const int ahead = e->rebuild.plan_ahead == 1 ||
                      (e->rebuild.plan_ahead != 0 && e->atoms.nhome < 4 * e->dev.fill);
    if (st == HX_OK && ahead)
        st = hx_plan_count_device(e->rebuild.rb, e->atoms.nhome, e->atoms.x4, 4);
    if (st == HX_OK)
        st = queue_sort(e);
    /* The local list needs only the sorted home atoms: it builds on the
     * local stream while the plan is made. Its blocks then hold the SMs
     * that the plan's kernels wait for; HALOX_MD_LOCAL_LATE=1 queues it
     * after the forward exchange instead (launch_halves). With 2 processes
     * sharing one GPU that made the lists slower by more than it made the
     * plan faster; on two GPUs, where the plan and the list build of a
     * rank have the GPU to themselves, it is to be measured
     * (docs/performance.md, "Switches for two GPUs").
     * HALOX_MD_LOCAL_LATE=2 queues it once the plan is made, behind the
     * plan's kernels and beside the transport's adoption of the plan. */
    if (st == HX_OK && !e->rebuild.local_late)
        st = hxg_eng_queue_local_list(e);
    HXI_CHECK(hxi_agree(e->comm, st));
    hxg_eng_phase_mark(e->rebuild.dev_phase, phase_names, 2, tp);
    return HX_OK;
}

/* The halo plan of the sorted home atoms, made on the device (phase 3),
 * and the transport's adoption of it (phase 4): it becomes e->xport.plan.
 * Agreed; on a failure the plan is destroyed, once the non-local lists
 * that read its arrays are done. */
static hx_status make_plan(hx_md_engine *e, double *tp)
{
    hx_plan *plan = NULL;
    HXI_CHECK(e->full
                  ? hx_plan_create_device_full(&plan, e->rebuild.rb, e->atoms.nhome, e->atoms.x4, 4)
                  : hx_plan_create_device(&plan, e->rebuild.rb, e->atoms.nhome, e->atoms.x4, 4));
    /* The plan holds the halo's coordinates already: the non-local lists
     * can build from them while the transport adopts the plan. That pays
     * while the local list leaves room on the GPU; with two fills of home
     * atoms or more they would only slow it and the plan's kernels, and
     * wait for the forward exchange (docs/md-gpu.md, "A step": the
     * lists' two halves). */
    e->atoms.nhalo = hx_plan_nhalo(plan);
    e->atoms.ntotal = hx_plan_ntotal(plan);
    hx_status st = hxg_eng_ensure_capacity(e, e->atoms.nhome, e->atoms.ntotal);
    if (st == HX_OK && e->rebuild.local_late == 2)
        st = hxg_eng_queue_local_list(e);
    const int early =
        e->rebuild.nl_early == 1 || (e->rebuild.nl_early != 0 && e->atoms.nhome < 2 * e->dev.fill);
    if (st == HX_OK && early)
        st = hxg_eng_queue_nonlocal_list(e, plan);
    st = hxi_agree(e->comm, st);
    if (st != HX_OK) {
        cudaStreamSynchronize(e->dev.s_b);
        hx_plan_destroy(plan);
        return st;
    }
    hxg_eng_phase_mark(e->rebuild.dev_phase, phase_names, 3, tp);
    st = hxi_agree(e->comm, hx_transport_set_plan(e->xport.t, plan));
    if (st != HX_OK) {
        cudaStreamSynchronize(e->dev.s_b); /* its lists read the plan's arrays */
        hx_plan_destroy(plan);
        return st;
    }
    hx_plan_destroy(e->xport.plan);
    e->xport.plan = plan;
    hxg_eng_phase_mark(e->rebuild.dev_phase, phase_names, 4, tp);
    return HX_OK;
}

/* The sorted home positions become the transport's (the lists read the
 * plan's zones where they are, until the next plan); the transport's own
 * forward exchange then brings the halo (the same values the plan's
 * exchange brought: the same float adds), so that every transport starts
 * the step with its step count and signals where its next step expects
 * them. Rank-local. */
static hx_status adopt_coords(hx_md_engine *e)
{
    hx_status st = HX_OK;
    e->graphs.mg_dirty = 1; /* sizes (and maybe arrays) changed since the capture */
    e->xport.tx = (float *) hx_transport_coords(e->xport.t);
    e->xport.tf = (float *) hx_transport_forces(e->xport.t);
    const int cerr = hxg_copy((void *) e->dev.s_nl, e->xport.tx,
                              hx_plan_device_coords(e->xport.plan), 3LL * e->atoms.nhome);
    if (cerr != 0)
        st = cuda_fail(cerr, "adopting the plan's coordinates");
    if (st == HX_OK)
        st = hxg_eng_forward_rebuild(e);
    return st;
}

/* The lists of the new atoms (st: the outcome of adopt_coords so far), and
 * the forward exchange's end. Agreed. */
static hx_status finish_lists(hx_md_engine *e, hx_status st)
{
    const int room = e->lists.loc.max + e->lists.nl.max;
    if (st == HX_OK)
        st = hxg_eng_build_lists(e);
    if (e->lists.loc.max + e->lists.nl.max != room)
        e->lists.regrowths++;
    if (st == HX_OK)
        st = hx_transport_sync(e->xport.t); /* reports a timed-out forward */
    HXI_CHECK(hxi_agree(e->comm, st));
    if (e->rebuild.check_atoms)
        HXI_CHECK(hxg_eng_census(e));
    return HX_OK;
}

hx_status hxg_eng_rebuild_device(hx_md_engine *e)
{
    double tp = hxi_now();
    long long calls0;
    double calls0_s;
    hxi_comm_tally(&calls0, &calls0_s);
    HXI_CHECK(order_after_step(e));
    hxg_eng_phase_mark(e->rebuild.dev_phase, phase_names, 0, &tp);
    double t0 = tp;
    e->rebuild.early = e->rebuild.early_forces && !e->rebuild.thermo; /* see engine_parts.h */
    e->rebuild.loc_forces = 0;
    e->rebuild.t0 = t0;
    HXI_CHECK(migrate_and_sort(e, &tp));
    HXI_CHECK(make_plan(e, &tp));
    hx_status st = adopt_coords(e);
    /* Rank-local so far: agreed with the lists' outcome. */
    hxg_eng_phase_mark(e->rebuild.dev_phase, phase_names, 5, &tp);
    e->timers.stats.stage[HX_MD_MIGRATE] += tp - t0;
    double t1 = tp;
    HXI_CHECK(finish_lists(e, st));
    hxg_eng_phase_mark(e->rebuild.dev_phase, phase_names, 6, &tp);
    e->timers.stats.stage[HX_MD_NEIGH] += tp - t1;
    e->rebuild.early = 0;
    e->ago = 0;
    e->rebuild.dev_rebuilds++;
    e->rebuild.t1 = hxi_now();
    long long calls1;
    double calls1_s;
    hxi_comm_tally(&calls1, &calls1_s);
    e->rebuild.dev_calls += calls1 - calls0;
    e->rebuild.dev_calls_s += calls1_s - calls0_s;
    return HX_OK;
}
