/*
 * rebuild.c - the GPU engine's host-path rebuild (engine.c says when it
 * runs), its phase times, and the check of what the device path's rebuild
 * kernel reports.
 */
#include "md/gpu/engine.h"
#include "md/trace.h"

#include "md/md_driver.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Orders home atoms by cell (the GPU's cell grid), so that atoms close in
 * space are close in memory: the force kernels' gathers then hit cache. */
static hx_status sort_home_by_cell(hx_md_engine *e)
{
    hx_md_system *s = e->sys;
    int n = s->n, nc = e->cells.grid.ncell;
    if (n <= 1)
        return HX_OK;
    if (n > e->host.hsort_cap) {
        int cap = hxg_eng_cap_for(e, n);
        HXI_CHECK(hxi_grow((void **) &e->host.hcell, sizeof(int32_t) * ((size_t) cap + nc + 1),
                           "cell sort"));
        HXI_CHECK(
            hxi_grow((void **) &e->host.htmp, sizeof(double) * 3 * (size_t) cap, "cell sort"));
        HXI_CHECK(
            hxi_grow((void **) &e->host.htmp_id, sizeof(int64_t) * (size_t) cap, "cell sort"));
        e->host.hsort_cap = cap;
    }
    int32_t *cell = e->host.hcell, *start = e->host.hcell + e->host.hsort_cap;
    memset(start, 0, sizeof(int32_t) * ((size_t) nc + 1));
    for (int i = 0; i < n; i++) {
        int c3[3];
        for (int k = 0; k < 3; k++) {
            int m = e->cells.grid.n[k];
            const double h = hx_decomp_height(&e->decomp, k, s->x + 3 * (size_t) i);
            int q = (int) floor((h - e->cells.grid.lo[k]) * e->cells.grid.inv_w[k]);
            if (e->cells.grid.periodic[k])
                q = ((q % m) + m) % m;
            else
                q = q < 0 ? 0 : (q >= m ? m - 1 : q);
            c3[k] = q;
        }
        cell[i] = (c3[2] * e->cells.grid.n[1] + c3[1]) * e->cells.grid.n[0] + c3[0];
        start[cell[i] + 1]++;
    }
    for (int c = 0; c < nc; c++)
        start[c + 1] += start[c];
    /* Stable counting sort, applied to x, then v, then id. start[c + 1]
     * serves as the running slot of cell c during a pass and ends each pass
     * as the end of cell c, so each pass first shifts it back by one. */
    double *t = e->host.htmp;
    for (int pass = 0; pass < 2; pass++) {
        double *a = pass == 0 ? s->x : s->v;
        for (int c = nc; c > 0; c--)
            start[c] = start[c - 1];
        start[0] = 0;
        for (int i = 0; i < n; i++) {
            int slot = start[cell[i] + 1]++;
            memcpy(t + 3 * (size_t) slot, a + 3 * (size_t) i, 3 * sizeof(double));
        }
        memcpy(a, t, 3 * sizeof(double) * (size_t) n);
    }
    for (int c = nc; c > 0; c--)
        start[c] = start[c - 1];
    start[0] = 0;
    for (int i = 0; i < n; i++)
        e->host.htmp_id[start[cell[i] + 1]++] = s->id[i];
    memcpy(s->id, e->host.htmp_id, sizeof(int64_t) * (size_t) n);
    if (!s->type)
        return HX_OK;
    /* The types likewise, through the positions' scratch (free by now). */
    int32_t *tt = (int32_t *) e->host.htmp;
    for (int c = nc; c > 0; c--)
        start[c] = start[c - 1];
    start[0] = 0;
    for (int i = 0; i < n; i++)
        tt[start[cell[i] + 1]++] = s->type[i];
    memcpy(s->type, tt, sizeof(int32_t) * (size_t) n);
    return HX_OK;
}

hx_status hxg_eng_lists_overflow(void)
{
    return hxi_error(HX_ERR_OVERFLOW,
                     "GPU engine: neighbour lists kept overflowing; set HALOX_MD_NEIGH_MAX "
                     "above the largest neighbour count within rc + skin");
}

/* Lists with room for `need` neighbours per atom and a quarter more. */
static hx_status grow_lists(hx_md_engine *e, int need)
{
    int m = hxg_eng_round_up((long long) need + need / 4 + 8, 8);
    hxi_info("GPU engine: neighbour lists grow to %d per atom (an atom has %d neighbours)", m,
             need);
    if (m > e->lists.loc.max) {
        e->lists.loc.max = m;
        HXI_CHECK(hxg_eng_dev_grow(&e->lists.loc.nb, &e->lists.b_locnb,
                                   4 * (size_t) e->atoms.cap_home * (size_t) m,
                                   "the local neighbour list"));
    }
    if (e->multi && m > e->lists.nl.max) {
        e->lists.nl.max = m;
        HXI_CHECK(hxg_eng_dev_grow(&e->lists.nl.nb, &e->lists.b_nlnb,
                                   4 * (size_t) e->lists.nl.stride * (size_t) m,
                                   "the non-local neighbour list"));
    }
    return HX_OK;
}

/* Rows of the compact non-local list for this build: the halo atoms and
 * the home atoms within reach of a face the halo lies beyond (their share
 * of the domain's thickness along each dimension with pulses), with a
 * quarter more and 1,024, and at least what an overflowing build needed
 * (nl_rows_min). The list is column-major over its rows, so more rows
 * means a new list (its contents are rebuilt anyway). */
static hx_status ensure_nl_rows(hx_md_engine *e)
{
    const hx_decomp *d = &e->decomp;
    double near_frac = 0.0;
    for (int k = 0; k < 3; k++)
        if (d->npulse[k] > 0)
            near_frac += (d->dom_hi[k] - e->lists.near_rows[k]) / (d->dom_hi[k] - d->dom_lo[k]);
    /* A full-shell halo: home atoms near both faces, and no halo atom, take rows. */
    if (e->full)
        near_frac *= 2.0;
    double want = (e->full ? 0.0 : (double) e->atoms.nhalo) +
                  (near_frac < 1.0 ? near_frac : 1.0) * (double) e->atoms.nhome;
    /* HALOX_MD_TIGHT=1: too few, so that the first build overflows them
     * and builds again (tests of that path). */
    long long rows = e->tight ? (long long) (want / 2) + 1 : (long long) (1.25 * want) + 1024;
    if (rows < e->lists.nl_rows_min)
        rows = e->lists.nl_rows_min;
    if (rows > e->atoms.cap_total)
        rows = e->atoms.cap_total;
    if (e->lists.nl.nb && rows <= e->lists.nl.stride)
        return HX_OK;
    e->lists.nl.stride = (int32_t) hxg_eng_round_up(rows, 32);
    return hxg_eng_dev_grow(&e->lists.nl.nb, &e->lists.b_nlnb,
                            4 * (size_t) e->lists.nl.stride * (size_t) e->lists.nl.max,
                            "the non-local neighbour list");
}

static hx_status read_flags(hx_md_engine *e, hxg_flags *fl, cudaStream_t s)
{
    CU(cudaMemcpyAsync(fl, e->dev.flags, sizeof *fl, cudaMemcpyDeviceToHost, s), "flag read-back");
    CU(cudaStreamSynchronize(s), "neighbour-list build");
    e->lists.max_neigh = fl->maxcnt;
    return HX_OK;
}

/* Also after a device rebuild that overflowed (need set, halted): the list
 * grows first, and the halt is lifted. */
hx_status hxg_eng_relist_single(hx_md_engine *e)
{
    hxg_flags fl;
    HXI_CHECK(read_flags(e, &fl, e->dev.s_loc));
    for (int attempt = 0, built = 0; attempt < 4; attempt++) {
        if (fl.need > 0 || fl.halt) {
            if (fl.need > 0)
                HXI_CHECK(grow_lists(e, fl.need));
            fl.need = 0;
            fl.halt = 0;
            CU(cudaMemcpy(e->dev.flags, &fl, sizeof fl, cudaMemcpyHostToDevice), "flag reset");
        } else if (built) {
            return HX_OK;
        }
        CU(hxg_build_sorted((void *) e->dev.s_loc, hxg_eng_atoms_view(e),
                            hxg_eng_cells_view(&e->cells), hxg_eng_lists_view(e), e->dev.flags),
           "neighbour-list build launch");
        HXI_CHECK(read_flags(e, &fl, e->dev.s_loc));
        built = 1;
    }
    return hxg_eng_lists_overflow();
}

/* One rank's set-up on the device: the uploaded atoms sorted by cell,
 * then their list. */
static hx_status build_single(hx_md_engine *e)
{
    CU(hxg_sort_home((void *) e->dev.s_loc, hxg_eng_atoms_view(e), hxg_eng_cells_view(&e->cells),
                     NULL, 1, e->dev.flags),
       "cell sort launch");
    return hxg_eng_relist_single(e);
}

/* The local list on the local stream, behind what the non-local stream
 * holds (the sort); ev_list then marks its end, which the flags' read-back
 * waits for (launch_halves). With rebuild.early the step's local forces follow
 * it (see engine_parts.h): they read only the home positions and this list, and
 * a build that overflows queues both again. */
hx_status hxg_eng_queue_local_list(hx_md_engine *e)
{
    CU(cudaEventRecord(e->lists.ev_list, e->dev.s_nl), "event");
    CU(cudaStreamWaitEvent(e->dev.s_loc, e->lists.ev_list, 0), "event wait");
    CU(hxg_build_sorted((void *) e->dev.s_loc, hxg_eng_atoms_view(e), hxg_eng_cells_view(&e->cells),
                        hxg_eng_lists_view(e), e->dev.flags),
       "local list build launch");
    CU(cudaEventRecord(e->lists.ev_list, e->dev.s_loc), "event");
    e->lists.loc_queued = 1;
    if (e->rebuild.early) {
        CU(hxg_force_local((void *) e->dev.s_loc, hxg_eng_atoms_view(e), hxg_eng_lists_view(e),
                           hxg_eng_consts(e), NULL, NULL, HXG_FORCE_WRITE),
           "local force launch");
        if (!e->rebuild.loc_forces)
            e->rebuild.early_n++;
        e->rebuild.loc_forces = 1;
    }
    return HX_OK;
}

/* The non-local lists' launches (one chain, see chain.c): cell lists of the
 * halo atoms, the lists, then the atoms the non-local forces visit. */
static int nonlocal_chain(hx_md_engine *e, const void *arg, cudaStream_t s)
{
    const hx_plan *plan = arg;
    hxg_atoms_view a = hxg_eng_atoms_view(e);
    const hxg_cells_view c = hxg_eng_cells_view(&e->cells);
    const hxg_lists_view l = hxg_eng_lists_view(e);
    a.zones = hx_plan_device_zones(plan);
    int err = hxg_build_nonlocal((void *) s, hx_plan_device_coords(plan), a, c, l, e->dev.flags);
    if (err == 0 && e->lists.nl_on)
        err = hxg_nl_atoms((void *) s, a, c, l, hx_plan_device_maps(plan),
                           hxg_eng_reverse_entries(e, plan), e->dev.flags);
    return err;
}

hx_status hxg_eng_queue_nonlocal_list(hx_md_engine *e, const hx_plan *plan)
{
    CU(cudaEventRecord(e->lists.ev_nlq, e->dev.s_nl), "event");
    CU(cudaStreamWaitEvent(e->dev.s_b, e->lists.ev_nlq, 0), "event wait");
    /* The atoms the non-local forces visit (the transport's force array is
     * cleared when the lists are joined, launch_halves). */
    e->lists.nl_on =
        e->rebuild.nl_pick == 1 || (e->rebuild.nl_pick != 0 && e->atoms.ntotal >= e->dev.fill);
    HXI_CHECK(ensure_nl_rows(e));
    HXI_CHECK(hxg_chain_run(e, &e->lists.ch_nl, e->dev.s_b, nonlocal_chain, plan,
                            "the non-local lists' launch"));
    e->lists.nl_queued = 1;
    return HX_OK;
}

/* The lists of a multi-rank device rebuild in two halves, each queued
 * already as a rule: the local list on the local stream while the plan
 * was made, the non-local ones on their own stream once it was made (see
 * rebuild_dev.c). The non-local stream then waits for both. Where the
 * non-local forces visit only some atoms, the transport's force array is
 * cleared here, after the transport adopted the plan (its arrays may have
 * moved), so that the entries no kernel writes stay zero. */
static hx_status launch_halves(hx_md_engine *e)
{
    if (!e->lists.loc_queued)
        HXI_CHECK(hxg_eng_queue_local_list(e));
    if (!e->lists.nl_queued)
        HXI_CHECK(hxg_eng_queue_nonlocal_list(e, e->xport.plan));
    e->lists.loc_queued = e->lists.nl_queued = 0;
    if (e->lists.nl_on && e->atoms.ntotal > 0)
        CU(hxg_copy((void *) e->dev.s_nl, e->xport.tf, NULL, 3LL * e->atoms.ntotal),
           "clearing the forces");
    CU(cudaStreamWaitEvent(e->dev.s_nl, e->lists.ev_list, 0),
       "event wait"); /* the local list's end */
    CU(cudaEventRecord(e->lists.ev_nlq, e->dev.s_b), "event");
    CU(cudaStreamWaitEvent(e->dev.s_nl, e->lists.ev_nlq, 0), "event wait");
    return HX_OK;
}

/* The lists after a rebuild: in two halves with several ranks and device
 * rebuilds (the home atoms are sorted on the device, their cell starts at
 * hand); otherwise in one pass over the local atoms. */
hx_status hxg_eng_build_lists(hx_md_engine *e)
{
    const int halves = e->multi && !e->host_rebuild && e->rebuild.rb;
    for (int attempt = 0; attempt < 3; attempt++) {
        if (halves) {
            HXI_CHECK(launch_halves(e));
        } else {
            if (e->multi && e->lists.nl.row)
                HXI_CHECK(ensure_nl_rows(e));
            CU(hxg_build_lists((void *) e->dev.s_nl, hxg_eng_atoms_view(e),
                               hxg_eng_cells_view(&e->cells), hxg_eng_lists_view(e), e->dev.flags),
               "neighbour-list build launch");
        }
        hxg_flags fl;
        HXI_CHECK(read_flags(e, &fl, e->dev.s_nl));
        e->lists.nl_on = halves && e->lists.nl_on;
        e->lists.nl_atoms = fl.nl_atoms;
        /* Atoms left without a row for want of rows walked all the same:
         * only without such an overflow is an atom without a row an error. */
        if (fl.need_rows <= 0 && fl.unreached > 0)
            return hxi_error(HX_ERR_STATE,
                             "GPU engine: at the list build of step %lld on rank %d, local atom "
                             "%d has non-local neighbours but lies outside the reach of the "
                             "halo its rows were given for; rerun with HALOX_MD_REBUILD=host "
                             "and report this",
                             (long long) (e->cfg.first_step + e->step), e->rank, fl.unreached - 1);
        if (fl.need <= 0 && fl.need_rows <= 0) {
            if (halves && e->rebuild.check_lists)
                return hxg_eng_check_lists(e);
            /* Only the single-rank device rebuild reads last_build (on the
             * device); it starts from the set-up build at step 0. */
            if (fl.last_build != e->step && !e->multi && !e->host_rebuild) {
                fl.last_build = e->step;
                CU(cudaMemcpy(e->dev.flags, &fl, sizeof fl, cudaMemcpyHostToDevice), "flag update");
            }
            return HX_OK;
        }
        /* An atom had more neighbours than the lists hold, or the compact
         * non-local list too few rows: grow and redo. */
        if (fl.need_rows > 0) {
            long long r = (long long) fl.need_rows + fl.need_rows / 4 + 1024;
            e->lists.nl_rows_min = (int) (r < e->atoms.cap_total ? r : e->atoms.cap_total);
        }
        if (fl.need > 0) {
            /* Early local forces may still read the list that moves. */
            if (e->rebuild.loc_forces)
                CU(cudaStreamSynchronize(e->dev.s_loc), "local forces");
            HXI_CHECK(grow_lists(e, fl.need));
        }
        fl.need = fl.need_rows = fl.unreached = 0;
        CU(cudaMemcpy(e->dev.flags, &fl, sizeof fl, cudaMemcpyHostToDevice), "flag reset");
    }
    return hxg_eng_lists_overflow();
}

hx_status hxg_eng_download_home(hx_md_engine *e, hx_md_system *s)
{
    int n = e->atoms.nhome;
    const int typed = e->phys.ty.n > 1;
    if (n > s->capacity || !s->x || !s->v || !s->id || (typed && !s->type)) {
        size_t m = (size_t) (n > s->capacity ? n : s->capacity);
        m = m > 0 ? m : 1;
        HXI_CHECK(hxi_grow((void **) &s->x, sizeof(double) * 3 * m, "positions"));
        HXI_CHECK(hxi_grow((void **) &s->v, sizeof(double) * 3 * m, "velocities"));
        HXI_CHECK(hxi_grow((void **) &s->id, sizeof(int64_t) * m, "atom ids"));
        if (typed) /* the types travel in the w of the positions */
            HXI_CHECK(hxi_grow((void **) &s->type, sizeof(int32_t) * m, "atom types"));
        s->capacity = (int) m;
    }
    if (n > 0) {
        HXI_CHECK(
            hxg_eng_get(&e->host, s->x, typed ? s->type : NULL, e->atoms.x4, n, 4, e->dev.s_nl));
        HXI_CHECK(hxg_eng_get(&e->host, s->v, NULL, e->atoms.v4, n, 4, e->dev.s_nl));
        CU(cudaMemcpy(s->id, e->atoms.id, 8 * (size_t) n, cudaMemcpyDeviceToHost), "download id");
    }
    s->n = n;
    return HX_OK;
}

/* Home atoms of sys onto the device (x4, xold4, v4, id and, with a halo,
 * the transport's coordinates), plus the plan's zones, through the
 * staging buffer (staging.c). Rank-local. */
static hx_status upload_home(hx_md_engine *e)
{
    const hx_md_system *s = e->sys;
    int n = e->atoms.nhome;
    cudaStream_t q = e->dev.s_nl;
    HXI_CHECK(hxg_eng_put(&e->host, e->atoms.x4, s->x, s->type, n, 4, 0, q));
    if (n > 0)
        CU(cudaMemcpyAsync(e->atoms.xold4, e->atoms.x4, 16 * (size_t) n, cudaMemcpyDeviceToDevice,
                           q),
           "copy x");
    if (e->multi) /* the transport's coordinates: 3 floats per atom */
        HXI_CHECK(hxg_eng_put(&e->host, e->xport.tx, s->x, NULL, n, 3, 0, q));
    HXI_CHECK(hxg_eng_put(&e->host, e->atoms.v4, s->v, NULL, n, 4, 0, q));
    HXI_CHECK(hxg_eng_put(&e->host, e->atoms.id, s->id, NULL, n, 0, sizeof(int64_t), q));
    if (e->multi && e->atoms.ntotal > 0)
        CU(cudaMemcpyAsync(e->atoms.zones, hx_plan_zones(e->xport.plan),
                           4 * (size_t) e->atoms.ntotal, cudaMemcpyHostToDevice, q),
           "upload zones");
    CU(cudaStreamSynchronize(q), "upload");
    return HX_OK;
}

static const char *const rebuild_phase_names[9] = {
    "drain", "download", "migrate", "sort", "plan", "set_plan", "upload", "forward", "lists"};

void hxg_eng_phase_mark(double *phase, const char *const *names, int k, double *t)
{
    double now = hxi_now();
    phase[k] += now - *t;
    hxi_trace_host(names[k], *t, now);
    *t = now;
}

void hxg_eng_phase_log(int rank, const char *what, const char *const *names, const double *phase,
                       int n, int64_t count)
{
    if (count > 0 && rank == 0 && hxi_log_level() >= 1) {
        char line[512];
        int len = snprintf(line, sizeof line, "%s, ms each on rank 0:", what);
        for (int k = 0; k < n && len < (int) sizeof line; k++)
            len += snprintf(line + len, sizeof line - (size_t) len, " %s %.3f", names[k],
                            1e3 * phase[k] / (double) count);
        hxi_info("%s", line);
    }
}

/* With HALOX_LOG=1, the mean time of each phase of the run's host-path
 * rebuilds on rank 0 (called once, at destroy). */
void hxg_eng_rebuild_log(const hx_md_engine *e)
{
    hxg_eng_rebuild_log_as(e, "host-path rebuilds", e->rebuild.host_rebuilds);
}

void hxg_eng_rebuild_log_as(const hx_md_engine *e, const char *what, int64_t count)
{
    hxg_eng_phase_log(e->rank, what, rebuild_phase_names, e->rebuild.rb_phase, 9, count);
}

/* The host-path rebuild. Collective; every rank-local part is agreed on
 * before the next collective call, so that a failure on one rank ends the
 * rebuild on all. initial: the atoms are in e->sys already. */
hx_status hxg_eng_rebuild_host(hx_md_engine *e, int initial)
{
    hx_md_system *s = e->sys;
    hx_status st = HX_OK;
    double tp = hxi_now();
    /* The drain waits for steps already queued, whose kernels the stage
     * timers count: it is kept out of "migrate + plan". */
    if (cudaStreamSynchronize(e->dev.s_loc) != cudaSuccess ||
        cudaStreamSynchronize(e->dev.s_nl) != cudaSuccess)
        st = cuda_fail(cudaGetLastError(), "waiting for the step before a rebuild");
    hxg_eng_phase_mark(e->rebuild.rb_phase, rebuild_phase_names, 0, &tp);
    double t0 = tp;
    if (st == HX_OK && !initial)
        st = hxg_eng_download_home(e, s);
    HXI_CHECK(hxi_agree(e->comm, st));
    hxg_eng_phase_mark(e->rebuild.rb_phase, rebuild_phase_names, 1, &tp);
    /* The types (several of them) travel with the atoms. */
    hx_field fields[3] = {{(void **) &s->v, 3 * sizeof(double)},
                          {(void **) &s->id, sizeof(int64_t)},
                          {(void **) &s->type, sizeof(int32_t)}};
    HXI_CHECK(hx_migrate(e->comm, &e->decomp, &s->n, &s->capacity, &s->x, fields,
                         e->phys.ty.n > 1 ? 3 : 2));
    hxg_eng_phase_mark(e->rebuild.rb_phase, rebuild_phase_names, 2, &tp);
    /* One rank with device rebuilds sorts on the device (build_single). */
    const int single = !e->multi && !e->host_rebuild;
    if (!single)
        HXI_CHECK(hxi_agree(e->comm, sort_home_by_cell(e)));
    hxg_eng_phase_mark(e->rebuild.rb_phase, rebuild_phase_names, 3, &tp);
    if (single) {
        /* One rank on the device path has no halo and never exchanges, so
         * it needs no plan: a host plan would copy every coordinate, most
         * of the first build of a large system (docs/performance-2026-11.md,
         * "Size on one GPU"). */
        e->atoms.nhome = e->atoms.ntotal = s->n;
        e->atoms.nhalo = 0;
        hxg_eng_phase_mark(e->rebuild.rb_phase, rebuild_phase_names, 4, &tp);
        hxg_eng_phase_mark(e->rebuild.rb_phase, rebuild_phase_names, 5, &tp);
    } else {
        hx_plan *plan = NULL;
        HXI_CHECK(e->full ? hx_plan_create_full(&plan, e->comm, &e->decomp, s->n, s->x)
                          : hx_plan_create(&plan, e->comm, &e->decomp, s->n, s->x));
        hxg_eng_phase_mark(e->rebuild.rb_phase, rebuild_phase_names, 4, &tp);
        st = hxi_agree(e->comm, hx_transport_set_plan(e->xport.t, plan));
        hxg_eng_phase_mark(e->rebuild.rb_phase, rebuild_phase_names, 5, &tp);
        if (st != HX_OK) {
            hx_plan_destroy(plan);
            return st;
        }
        if (e->xport.plan)
            hx_plan_destroy(e->xport.plan);
        e->xport.plan = plan;
        /* Known only now for `auto`, which chooses at its first plan. */
        if (e->multi && !hx_transport_on_device(e->xport.t))
            return hxi_error(HX_ERR_UNSUPPORTED,
                             "GPU engine: transport '%s' keeps its arrays in host memory; with "
                             "%d ranks the GPU engine needs a device transport (--transport "
                             "mpi, nccl, nvshmem-* or auto), or run the CPU engine (--cpu)",
                             hx_transport_name(e->xport.t), e->nranks);
        e->atoms.nhome = hx_plan_nhome(plan);
        e->atoms.nhalo = hx_plan_nhalo(plan);
        e->atoms.ntotal = hx_plan_ntotal(plan);
    }
    e->xport.blocking = (hx_transport_caps(e->xport.t) & HX_CAP_BLOCKS_HOST) != 0;
    e->graphs.mg_dirty = 1; /* the captured step holds the old arrays and sizes */
    if (e->multi) {
        e->xport.tx = (float *) hx_transport_coords(e->xport.t);
        e->xport.tf = (float *) hx_transport_forces(e->xport.t);
    }
    st = hxg_eng_ensure_capacity(e, e->atoms.nhome, e->atoms.ntotal);
    if (st == HX_OK)
        st = upload_home(e);
    HXI_CHECK(hxi_agree(e->comm, st));
    hxg_eng_phase_mark(e->rebuild.rb_phase, rebuild_phase_names, 6, &tp);
    double t1 = tp;
    e->timers.stats.stage[HX_MD_MIGRATE] += t1 - t0;
    if (e->multi) {
        st = hxg_eng_forward_rebuild(e);
        if (st == HX_OK)
            st = hx_transport_sync(e->xport.t);
        HXI_CHECK(hxi_agree(e->comm, st));
    }
    hxg_eng_phase_mark(e->rebuild.rb_phase, rebuild_phase_names, 7, &tp);
    double t2 = tp;
    e->timers.stats.stage[HX_MD_HALO_FWD] += t2 - t1;
    const int room = e->lists.loc.max + e->lists.nl.max;
    HXI_CHECK(hxi_agree(e->comm, single ? build_single(e) : hxg_eng_build_lists(e)));
    if (!initial && e->lists.loc.max + e->lists.nl.max != room)
        e->lists.regrowths++;
    hxg_eng_phase_mark(e->rebuild.rb_phase, rebuild_phase_names, 8, &tp);
    e->timers.stats.stage[HX_MD_NEIGH] += tp - t2;
    e->ago = 0;
    e->rebuild.host_rebuilds++;
    return HX_OK;
}

/* Reports what the device path's rebuild kernel published (no sync). */
hx_status hxg_eng_check_report(hx_md_engine *e)
{
    if (!e->dev.report)
        return HX_OK;
    if (e->dev.report->bad)
        return hxi_error(HX_ERR_COORD_NAN,
                         "GPU engine: a coordinate became NaN or infinite by step %lld; the "
                         "system blew up: use a smaller timestep or check the input",
                         (long long) (e->cfg.first_step + e->step));
    if (e->dev.report->need > 0 && !e->multi && !e->host_rebuild)
        return hxg_eng_recover_single(e);
    if (e->dev.report->need > 0)
        return hxi_error(HX_ERR_OVERFLOW,
                         "GPU engine: an atom had %d neighbours within rc + skin at the list "
                         "build of step %lld, over the %d the list holds; rerun with "
                         "HALOX_MD_NEIGH_MAX=%d",
                         (int) e->dev.report->need, (long long) e->dev.report->last_build,
                         e->lists.loc.max,
                         hxg_eng_round_up((long long) e->dev.report->need * 5 / 4 + 8, 8));
    return HX_OK;
}
