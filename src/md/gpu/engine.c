/*
 * engine.c - the GPU engine of halox-md (float, device-resident): create,
 * destroy, thermo, gather, stats and its table of ops.
 *
 * Positions, velocities and forces live on the GPU between list builds.
 * A step is: kick-drift (with the half-skin check), then forces, then the
 * closing kick. Three ways to rebuild:
 *  - device path, one rank: a sequence of kernels wraps, sorts by cell and
 *    builds the list, each deciding by itself whether it must (the
 *    half-skin flag lives in device memory), so a step never waits for
 *    the host and the steps replay from CUDA graphs.
 *  - device path, several ranks (rebuild_dev.c): migration, cell sort and
 *    halo plan on the GPU (libhalox's hx_rebuild_*), then forward and
 *    lists; the host sees counts and errors only.
 *  - host path (the first build of any run, and HALOX_MD_REBUILD=host,
 *    the reference): download x, v, id; hx_migrate; sort home atoms by
 *    cell; new plan; upload; forward the halo; lists on the GPU.
 * With halo atoms the step overlaps as GROMACS does: the local force kernel
 * runs on the low-priority local stream while the coordinate exchange runs
 * on the high-priority non-local stream (the transport's), followed there by
 * the non-local force kernel and the force exchange; the closing kick waits
 * for an event from the non-local stream.
 * With a transport that can be captured (nvshmem-fused, -tma: graph mode),
 * the steps between rebuild candidates and thermo steps are replayed from
 * one CUDA graph of that whole two-stream step, and errors are agreed over
 * the ranks only at those steps (the device waits are bounded, so no rank
 * can hang in between). With `check yes` checked every step the ranks vote
 * on each rebuild on the device (vote.c), so that those steps replay too.
 * docs/md-gpu.md has the details.
 *
 * The files, one job each: setup.c (device, transport, physics, memory),
 * rebuild.c (the host-path rebuild and the list build), lists_check.c (the
 * two-half lists against the one-pass build), rebuild_dev.c (the device
 * rebuild with several ranks), chain.c (a rebuild's runs of launches as
 * one graph each), step.c (the step schedules and their CUDA graphs),
 * step_single.c (one rank's device-resident step), vote.c (the rebuild
 * decision voted on the device), types.c (atom types: masses, the pairs'
 * table, the halo's types), staging.c (copies through pinned host
 * memory), timers.c (stage timers), stretch.c (the driver's timed
 * stretches), trace_cupti.c (CUPTI's records in the trace), fix_balance.c
 * (fix balance: the atoms counted on the GPU, the cuts moved, the rebuild
 * to them). engine.h is
 * what they share; engine_parts.h the parts of the engine's state, one
 * job each, and which files own them; md_gpu.h with md_kernels.cu, md_small.cu,
 * md_cells.cu, md_lists.cu and md_balance.cu the kernels and their
 * launchers.
 */
#include "md/gpu/engine.h"

#include "md/md_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void gpu_destroy(hx_md_engine *e);
static size_t engine_bytes(const hx_md_engine *e);

/* The engine's one-line description (e->desc, ops->describe). */
static void describe(hx_md_engine *e)
{
    const int *g = e->decomp.grid;
    const char *built = e->host_rebuild ? "host-path rebuilds"
                        : e->multi      ? "device rebuilds (migration, sort, plan on the GPU)"
                                        : "device-resident rebuilds";
    const char *how = e->graphs.mgraph ? ", halo on a high-priority stream, steps between rebuild "
                                         "and thermo steps replayed from one CUDA graph (errors "
                                         "agreed at those steps)"
                      : e->multi       ? ", halo on a high-priority stream"
                      : e->graphs.on   ? ", steps replayed from CUDA graphs"
                                       : "";
    /* One rank has no halo: its transport (cpu) never moves anything,
     * and naming it would only puzzle. */
    char halo[700], newton[160] = "";
    if (e->multi)
        snprintf(halo, sizeof halo, "%s [%s]", hx_transport_name(e->xport.t),
                 hx_transport_describe(e->xport.t));
    else
        snprintf(halo, sizeof halo, "one rank, no halo exchange");
    const char *mode = e->full ? "off, a full-shell halo and no force exchange" : "on";
    if (e->multi && e->newton_chosen)
        snprintf(newton, sizeof newton,
                 ", newton %s (chosen: %s %d atoms per rank; newton on|off in a deck decides)",
                 mode, e->full ? "fewer than" : "at least", HXG_FULL_BELOW);
    else if (e->multi)
        snprintf(newton, sizeof newton, ", newton %s", mode);
    snprintf(e->desc, sizeof e->desc,
             "gpu engine (float): %s, grid %dx%dx%d, rank %d on GPU %d of %d (%s, %d "
             "rank(s) on this host)%s, %d thread(s) per atom%s, lists of up to %d, %.0f bytes "
             "per atom on the GPU, %s%s%s%s%s",
             halo, g[0], g[1], g[2], e->rank, e->dev.device, e->dev.ndevices, e->dev.name,
             e->dev.local_size, newton, e->phys.tpp,
             e->phys.room && (e->phys.tpp == 2 || e->phys.tpp == 4)
                 ? " (local forces leave room beside them)"
                 : "",
             e->lists.loc.max,
             e->atoms.nhome > 0 ? (double) engine_bytes(e) / (double) e->atoms.nhome : 0.0, built,
             how, e->rebuild.check_atoms ? ", atoms counted after each rebuild" : "",
             e->vote.on ? ", rebuild decisions voted on the GPU" : "",
             e->sched.kick_fuse ? ", each step's closing kick in the next step's kick-drift "
                                  "(thermo steps close their own)"
                                : "");
    hxg_eng_therm_describe(e, e->desc, sizeof e->desc);
}

/* The checks of each multi-rank device rebuild (HALOX_MD_CHECK; unset:
 * the atoms in debug builds, none otherwise). */
static int checks_asked(const struct hxi_knobs *knobs)
{
    if (knobs->md_check >= 0)
        return knobs->md_check;
#ifdef NDEBUG
    return HXK_CHECK_NONE;
#else
    return HXK_CHECK_ATOMS;
#endif
}

static hx_status gpu_create(hx_md_engine **out, hx_comm *comm, const hx_md_config *cfg,
                            hx_md_system *sys)
{
    if (!out || !comm || !cfg || !sys)
        return hxi_error(HX_ERR_INVALID, "GPU engine: create needs an engine pointer, a "
                                         "communicator, a config and a system");
    *out = NULL;
    hxg_trace_cupti_start(); /* before the first kernel (HALOX_TRACE only) */
    hx_md_engine *e = calloc(1, sizeof *e);
    HXI_CHECK(
        hxi_agree(comm, e ? HX_OK : hxi_error(HX_ERR_NOMEM, "GPU engine: out of host memory")));
    hx_status st = HX_OK;
    e->cfg = *cfg;
    if (e->cfg.neigh_every < 1)
        e->cfg.neigh_every = 1;
    if (e->cfg.neigh_delay < 0)
        e->cfg.neigh_delay = 0;
    e->comm = comm;
    e->sys = sys;
    e->decomp = sys->decomp;
    e->rank = hx_comm_rank(comm);
    e->nranks = hx_comm_size(comm);
    e->multi = e->nranks > 1;
    hxg_eng_choose_newton(e);
    e->host.serial = e->multi; /* several ranks on a host share its cores */
    const struct hxi_knobs *knobs = hxi_knobs();
    e->host_rebuild = knobs->md_rebuild == HXK_REBUILD_HOST;
    e->tight = knobs->md_tight;
    e->graphs.allowed = knobs->md_graph_steps > 0;
    e->graphs.cond = 1; /* until the conditional node cannot be captured */
    e->graphs.batch_k = knobs->md_graph_steps > 1 ? knobs->md_graph_steps : 1;
    e->phys.rh = hxi_md_list_cutoff(cfg);
    HXI_CHECK_GOTO(hxg_eng_local_rank(e), st, fail);
    {
        /* Graph mode with several ranks: only for a transport that can be
         * captured (named, or the default; `auto` measures launched
         * transports), and only where every rank wants it: it decides at
         * which steps the ranks meet in collectives. */
        const char *tn = cfg->transport[0] && strcmp(cfg->transport, "default") != 0
                             ? cfg->transport
                             : hxg_eng_default_transport(e);
        /* A thermostat's step meets the other ranks (fix nvt's kinetic
         * sum) or reads its step number from the host (fix langevin). */
        const int therm = cfg->nvt.on || cfg->langevin.on;
        int no =
            !(e->multi && (hx_transport_caps_of(tn) & HX_CAP_GRAPH) && e->graphs.allowed && !therm);
        HXI_CHECK_GOTO(hxi_allreduce_int(comm, &no, 1, 1), st, fail);
        e->graphs.mgraph = !no;
        e->graphs.mg_ok = e->graphs.mgraph;
        e->graphs.mg_batch_ok = e->graphs.mgraph && e->graphs.batch_k > 1;
    }
    double tc[5];
    tc[0] = hxi_now();
    HXI_CHECK_GOTO(hxi_agree(comm, hxg_eng_create_local(e)), st, fail);
    HXI_CHECK_GOTO(hxg_eng_choose_tpp(e), st, fail);
    tc[1] = hxi_now();
    st = hxg_eng_make_transport(e);
    HXI_CHECK_GOTO(hxi_agree(comm, st), st, fail);
    HXI_CHECK_GOTO(hxg_eng_types_start(e), st, fail);
    tc[2] = hxi_now();
    e->step = 0;
    HXI_CHECK_GOTO(hxg_eng_rebuild_host(e, 1), st, fail);
    tc[3] = hxi_now();
    HXI_CHECK_GOTO(hxi_agree(comm, hxg_eng_force_pass(e, 1, e->dev.acc)), st, fail);
    tc[4] = hxi_now();
    e->acc_valid = 1;
    HXI_CHECK_GOTO(hxg_eng_therm_setup(e), st, fail);
    if (e->rank == 0 && hxi_log_level() >= 1) {
        hxi_info("GPU engine set-up on rank 0: device and arrays %.3f s, transport %.3f s, first "
                 "build %.3f s, first forces %.3f s",
                 tc[1] - tc[0], tc[2] - tc[1], tc[3] - tc[2], tc[4] - tc[3]);
        hxg_eng_rebuild_log_as(e, "GPU engine set-up's first build", 1);
    }
    HXI_CHECK_GOTO(hxg_eng_vote_setup(e), st, fail);
    e->sched.kick_fuse = e->graphs.mgraph && !e->vote.on;
    if (e->multi && !e->host_rebuild) {
        HXI_CHECK_GOTO(hx_rebuild_create(&e->rebuild.rb, e->xport.t, &e->decomp), st, fail);
        /* The cell sort after each migration sets the order: the migration
         * need not keep one. */
        HXI_CHECK_GOTO(hx_rebuild_keep_order(e->rebuild.rb, 0), st, fail);
        const int check = checks_asked(knobs);
        e->rebuild.check_atoms = check == HXK_CHECK_ATOMS || check >= HXK_CHECK_ALL;
        if (e->rebuild.check_atoms)
            HXI_CHECK_GOTO(hxg_eng_census(e), st, fail);
        e->rebuild.check_lists = check >= HXK_CHECK_LISTS;
    }
    e->rebuild.host_rebuilds = 0; /* count the rebuilds of the run, not the set-up */
    memset(e->rebuild.rb_phase, 0, sizeof e->rebuild.rb_phase);
    memset(&e->timers.stats, 0, sizeof e->timers.stats);
    hxg_eng_capture_ahead(e);
    describe(e);
    *out = e;
    return HX_OK;
fail:
    gpu_destroy(e);
    return st;
}

/* Every atom still held by exactly one rank, at each thermo row as on the
 * CPU engine: the device census (count and id checksum) where the GPU
 * migrates, the home counts where the host does. One rank never migrates.
 * Collective. */
static hx_status gpu_thermo_atoms(hx_md_engine *e)
{
    if (!e->multi)
        return HX_OK;
    if (e->rebuild.rb)
        return hxg_eng_census(e);
    double n = (double) e->atoms.nhome;
    HXI_CHECK(hxi_allreduce_double(e->comm, &n, 1, 0));
    if ((int64_t) n != e->sys->natoms)
        return hxi_error(HX_ERR_STATE, "Lost atoms at step %lld: original %lld current %lld",
                         (long long) (e->cfg.first_step + e->step), (long long) e->sys->natoms,
                         (long long) n);
    return HX_OK;
}

static hx_status gpu_thermo(hx_md_engine *e, hx_md_thermo *out)
{
    if (!e || !out)
        return hxi_error(HX_ERR_INVALID, "GPU engine: thermo needs an engine and an output");
    double t0 = hxi_now();
    double sums[HXG_NACC] = {0.0, 0.0, 0.0};
    hx_status st = hxg_eng_pending_status(e); /* a check in graph mode */
    if (st == HX_OK)
        st = hxg_eng_close_kick(e); /* m v^2 of whole velocities */
    if (st == HX_OK && (cudaStreamSynchronize(e->dev.s_nl) != cudaSuccess ||
                        cudaStreamSynchronize(e->dev.s_loc) != cudaSuccess))
        st = cuda_fail(cudaGetLastError(), "waiting for the steps");
    /* First: a single-rank list that overflowed is grown and its steps
     * done again (their sums with them). */
    if (st == HX_OK)
        st = hxg_eng_check_report(e);
    if (st == HX_OK && !e->acc_valid)
        st = hxg_eng_force_pass(e, 0, e->dev.acc);
    if (st == HX_OK &&
        (cudaStreamSynchronize(e->dev.s_nl) != cudaSuccess ||
         cudaStreamSynchronize(e->dev.s_loc) != cudaSuccess ||
         cudaMemcpy(sums, e->dev.acc, sizeof sums, cudaMemcpyDeviceToHost) != cudaSuccess))
        st = cuda_fail(cudaGetLastError(), "thermo read-back");
    if (st == HX_OK && e->multi)
        st = hx_transport_sync(e->xport.t);
    HXI_CHECK(hxi_agree(e->comm, st));
    e->acc_valid = 1;
    HXI_CHECK(hxi_allreduce_double(e->comm, sums, HXG_NACC, 0));
    HXI_CHECK(gpu_thermo_atoms(e));
    const double *L = e->decomp.box_len;
    hx_md_thermo_from_sums(out, e->step, e->sys->natoms, L[0] * L[1] * L[2], sums[HXG_ACC_MV2],
                           sums[HXG_ACC_E], sums[HXG_ACC_W]);
    out->mass_sum = e->phys.mass_sum; /* several types: the density's mass (types.c) */
    hxg_eng_tm_harvest_all(&e->timers);
    e->timers.stats.stage[HX_MD_OTHER] += hxi_now() - t0;
    return HX_OK;
}

static hx_status gpu_gather(hx_md_engine *e, hx_md_system *sys, double **f)
{
    if (!e || !sys)
        return hxi_error(HX_ERR_INVALID, "GPU engine: gather needs an engine and a system");
    HXI_CHECK(hxg_eng_close_kick(e));
    CU(cudaStreamSynchronize(e->dev.s_nl), "non-local stream");
    CU(cudaStreamSynchronize(e->dev.s_loc), "local stream");
    HXI_CHECK(hxg_eng_check_report(e));
    HXI_CHECK(hxg_eng_download_home(e, sys));
    sys->has_ref = 0; /* the lists' positions stay on the GPU */
    HXI_CHECK(hxg_eng_therm_gather(e, sys));
    int n = e->atoms.nhome;
    if (sys != e->sys) {
        sys->decomp = e->decomp;
        sys->natoms = e->sys->natoms;
    }
    if (f) {
        if (n > e->host.fout_cap) {
            HXI_CHECK(hxi_grow((void **) &e->host.fout, sizeof(double) * 3 * (size_t) n, "forces"));
            e->host.fout_cap = n;
        }
        HXI_CHECK(hxg_eng_get(&e->host, e->host.fout, NULL, e->atoms.f4, n, 4, e->dev.s_loc));
        *f = e->host.fout;
    }
    return HX_OK;
}

static const hx_md_stats *gpu_stats(const hx_md_engine *ce)
{
    /* Reading the stage timers waits for the GPU: the engine is not const
     * underneath, and the caller asks for final numbers. */
    hx_md_engine *e = (hx_md_engine *) ce;
    cudaStreamSynchronize(e->dev.s_nl);
    cudaStreamSynchronize(e->dev.s_loc);
    cudaGetLastError();
    hxg_eng_tm_harvest_all(&e->timers);
    e->timers.stats.rebuilds = e->rebuild.host_rebuilds + e->rebuild.dev_rebuilds +
                               (e->dev.report ? e->dev.report->rebuilds : 0);
    return &e->timers.stats;
}

static const char *gpu_describe(const hx_md_engine *e)
{
    return e ? e->desc : "gpu engine";
}

/* Bytes of GPU memory the engine itself holds (not the transport's). */
static size_t engine_bytes(const hx_md_engine *e)
{
    return e->atoms.b_x4 + e->atoms.b_v4 + e->atoms.b_f4 + e->atoms.b_xold4 + e->atoms.b_sx4 +
           e->atoms.b_sv4 + e->atoms.b_id + e->atoms.b_sid + e->atoms.b_zones + e->cells.b_xsort +
           e->cells.b_cellof + e->cells.b_atoms + e->lists.b_locnb + e->lists.b_loccnt +
           e->lists.b_nlnb + e->lists.b_nlcnt + e->lists.b_nlrow + e->lists.b_nlatom +
           e->lists.b_nlidx + e->lists.b_nlpos + e->atoms.b_type +
           sizeof(int32_t) * (2 * (size_t) e->cells.grid.ncell + 1);
}

/* With HALOX_LOG=1 on rank 0: the lists' room against the largest count
 * met, and the engine's memory per atom. */
static void lists_log(const hx_md_engine *e)
{
    if (e->rank != 0 || hxi_log_level() < 1 || e->atoms.nhome <= 0)
        return;
    int most = e->lists.max_neigh;
    if (e->dev.report && e->dev.report->maxcnt > most)
        most = e->dev.report->maxcnt;
    hxi_info("GPU engine: lists of %d slots per atom, largest neighbour count %d, grown %lld "
             "time(s) during the run; %.0f bytes per home atom on the GPU (%.2f GB)",
             e->lists.loc.max, most, (long long) e->lists.regrowths,
             (double) engine_bytes(e) / (double) e->atoms.nhome, (double) engine_bytes(e) / 1e9);
}

static void gpu_destroy(hx_md_engine *e)
{
    if (!e)
        return;
    lists_log(e);
    hxg_eng_rebuild_log(e);
    hxg_eng_rebuild_device_log(e);
    if (e->dev.s_loc)
        cudaStreamSynchronize(e->dev.s_loc);
    if (e->dev.s_nl)
        cudaStreamSynchronize(e->dev.s_nl);
    hxg_eng_drop_step_graphs(&e->graphs);
    if (e->graphs.mg_exec)
        cudaGraphExecDestroy(e->graphs.mg_exec);
    if (e->graphs.mg_batch)
        cudaGraphExecDestroy(e->graphs.mg_batch);
    if (e->graphs.mg_graph)
        cudaGraphDestroy(e->graphs.mg_graph);
    hxg_eng_vote_free(&e->vote);
    hxg_eng_therm_free(&e->therm);
    if (e->dev.s_b)
        cudaStreamSynchronize(e->dev.s_b);
    hxg_chain_free(&e->rebuild.ch_sort[0]);
    hxg_chain_free(&e->rebuild.ch_sort[1]);
    hxg_chain_free(&e->lists.ch_nl);
    if (e->xport.t)
        hx_transport_destroy(e->xport.t);
    if (e->xport.plan)
        hx_plan_destroy(e->xport.plan);
    hx_rebuild_destroy(e->rebuild.rb);
    hxg_eng_types_free(e);
    hxg_eng_balance_free(e);
    void *dev[] = {e->atoms.x4,      e->atoms.v4,         e->atoms.f4,       e->atoms.xold4,
                   e->atoms.sx4,     e->atoms.sv4,        e->atoms.id,       e->atoms.sid,
                   e->atoms.zones,   e->cells.xsort,      e->cells.cellof,   e->cells.atoms,
                   e->cells.cnt,     e->cells.start,      e->cells.scan_tmp, e->lists.loc.nb,
                   e->lists.loc.cnt, e->lists.nl.nb,      e->lists.nl.cnt,   e->dev.flags,
                   e->dev.acc,       e->cells.halo_start, e->lists.nl_idx,   e->lists.nl_pos,
                   e->lists.nl.row,  e->lists.nl_atom};
    for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++)
        if (dev[k])
            cudaFree(dev[k]);
    hxg_eng_stage_destroy(&e->host);
    if (e->dev.report)
        cudaFreeHost(e->dev.report);
    hxg_eng_timers_destroy(&e->timers);
    hxg_eng_stretch_destroy(&e->timers.stretch);
    if (e->dev.ev_kd)
        cudaEventDestroy(e->dev.ev_kd);
    if (e->dev.ev_rev)
        cudaEventDestroy(e->dev.ev_rev);
    if (e->dev.ev_acc)
        cudaEventDestroy(e->dev.ev_acc);
    if (e->graphs.ev_gfork)
        cudaEventDestroy(e->graphs.ev_gfork);
    if (e->graphs.ev_gjoin)
        cudaEventDestroy(e->graphs.ev_gjoin);
    if (e->lists.ev_list)
        cudaEventDestroy(e->lists.ev_list);
    if (e->lists.ev_nlq)
        cudaEventDestroy(e->lists.ev_nlq);
    if (e->dev.s_loc)
        cudaStreamDestroy(e->dev.s_loc);
    if (e->dev.s_nl)
        cudaStreamDestroy(e->dev.s_nl);
    if (e->dev.s_b)
        cudaStreamDestroy(e->dev.s_b);
    cudaGetLastError();
    free(e->host.fout);
    free(e->host.hcell);
    free(e->host.htmp);
    free(e->host.htmp_id);
    free(e);
}

static hx_status gpu_sync(hx_md_engine *e)
{
    CU(cudaStreamSynchronize(e->dev.s_loc), "waiting for the local stream");
    CU(cudaStreamSynchronize(e->dev.s_nl), "waiting for the non-local stream");
    return HX_OK;
}

int64_t hxg_engine_growths(const struct hx_md_engine *e)
{
    return e ? e->rebuild.growths : 0;
}

int64_t hxg_engine_graph_steps(const struct hx_md_engine *e)
{
    return e ? e->graphs.steps : 0;
}

const hx_md_engine_ops hx_md_engine_gpu = {
    .name = "gpu",
    .create = gpu_create,
    .step = hxg_eng_step,
    .steps = hxg_eng_steps,
    .thermo = gpu_thermo,
    .gather = gpu_gather,
    .stats = gpu_stats,
    .sync = gpu_sync,
    .mark = hxg_eng_mark,
    .stretch_seconds = hxg_eng_stretch_seconds,
    .describe = gpu_describe,
    .destroy = gpu_destroy,
};
