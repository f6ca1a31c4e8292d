/*
 * halox-bench - side-by-side timings of the halo exchange.
 *
 *   halox-bench [exchange] [--atoms N] [--grid NXxNYxNZ] [--transport LIST|all]
 *               [--iters N] [--warmup N] [--cutoff RH] [--density RHO]
 *               [--lattice random|fcc] [--dtype float|double] [--seed S]
 *               [--csv FILE] [--no-put] [--floor] [--tilt T] [--field]
 *               [--newton on|off|on,off]
 *
 * For each transport: a system of N atoms at the given density (LJ units,
 * default 0.8442) in a cubic periodic box, uniform random or an fcc lattice
 * (4 k^3 atoms, k = round((N/4)^(1/3))), one plan with halo cutoff RH
 * (default 2.8), then iterations of forward + reverse. --newton off times
 * LAMMPS's `newton off` instead: the full-shell plan (hx_plan_create_full)
 * and the forward alone per step (nothing goes back); --newton on,off runs
 * both, every transport's rows of each mode in one table (column newton);
 * without --grid such a run takes hx_grid_choose_full's grid for both.
 * Graph rows of newton off replay the forward captured by the bench
 * (hx_transport_step_graph replays a reverse too), where it can be
 * captured (HX_CAP_VOTE: not nccl-dev's); nvshmem-fused's force modes,
 * which change the reverse alone, are listed as skipped there.
 *
 * --tilt T makes the box triclinic (LAMMPS's restricted triclinic: tilts
 * xy = xz = yz = T times the box length, |T| <= 0.5), the same system
 * sheared with it (its fractional coordinates kept), so that it can be
 * timed against T = 0. Each iteration is timed on every rank and the slowest
 * rank's time kept; the table gives the median, minimum and 90th percentile
 * over iterations, then b2b_us: the time per step of as many steps enqueued
 * back to back with one sync at the end (slowest rank), as an MD loop runs
 * them. LIST is comma separated. The nvshmem transports also run with the
 * put path forced (rows "NAME/put") unless --no-put. `mpi` runs once per
 * mode: "mpi (staged)", "mpi (ipc)" and "mpi (cuda-aware)" (a mode the
 * machine cannot run is listed with the reason), each followed after the
 * table by a per-pulse breakdown (pack, sync, MPI, peer copy, unpack; mean
 * over the timed iterations, slowest rank).
 *
 * nvshmem-fused and nvshmem-fused-tma also run whole steps replayed from a
 * CUDA graph (rows "NAME (graph)", opts.graph = 1), and nvshmem-fused runs
 * its two other force modes (rows "nvshmem-fused[push]", ...;
 * HALOX_FUSED_FORCE_MODE) launched and replayed. --floor adds the floor
 * these are compared with: two one-way ping-pong trips (coordinates, then
 * forces) of the largest rank's halo bytes between ranks 0 and 1, plus one
 * signal latency per further pulse of the chain each way.
 *
 *   halox-bench pingpong [--bytes LIST] [--iters N]
 *
 * measures that floor alone: ranks 0 and 1 play ping-pong through NVSHMEM
 * inside one kernel each, every round carrying BYTES one way (stored by the
 * blocks the fused kernels would use, the last block publishing with
 * st.release.sys, the peer acquiring with ld.acquire.sys); it prints half a
 * round trip per size (0: the signal alone).
 *
 * --field adds a table of the same step whose forward carries one 4-byte
 * field per atom with the coordinates (hx_transport_fields_forward of one
 * float field, with_coords 1, then hx_transport_reverse), for every row of
 * a transport that carries fields (graph rows: the two captured in a CUDA
 * graph and replayed; a row whose field call cannot be captured says so):
 * its median, minimum and 90th percentile, and field_x, its median over
 * the row's median above (CSV rows "LABEL +field").
 *
 * All transports are created before the first is timed and destroyed after
 * the last: NVSHMEM can start only once per process.
 */
#define _POSIX_C_SOURCE 200809L
#include "halox.h"
#include "core/hxi.h"
#include "core/outfile.h"
#include "transport/probes.h"
#include "bench_field.h"
#include "bench_floor.h"
#include "bench_options.h"

#if defined(HALOX_HAVE_CUDA) && defined(HALOX_HAVE_MPI)
#define BENCH_MPI_BREAKDOWN 1
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rows of a run: every variant of every transport, per newton mode. */
#define BENCH_MAX_ROWS 80

typedef struct bench_row {
    const char *name;
    char label[48];
    int force_put;
    hx_mpi_mode mpi_mode; /* `mpi` only */
    int graph;            /* replayed from a CUDA graph (opts.graph) */
    const char *fmode;    /* nvshmem-fused force mode (NULL: default) */
    int newton;           /* 1: eighth-shell plan, forward + reverse; 0: full shell, forward */
    const hx_plan *plan;  /* the plan of its newton mode */
    const char *skip;     /* not run, and why */
    bench_graph fwd;      /* newton off, graph rows: the forward the bench captured */
    hx_transport *t;
    char describe[256];
    double median_us, min_us, p90_us;
    double b2b_us;   /* per step with steps enqueued back to back, one sync */
    long halo_atoms; /* sum over ranks */
    int npulses;
    hx_status status;
    char error[512];
    int field_ran; /* --field: timed (launched rows only) */
    hx_status field_status;
    double field_us[3]; /* median, min, p90 of a step with the field */
    char field_error[256];
} bench_row;

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* fcc cells per side for about `atoms` atoms. */
static int fcc_cells(long atoms)
{
    int k = (int) lround(cbrt((double) atoms / 4.0));
    return k < 1 ? 1 : k;
}

/* This rank's atoms of a seeded uniform random system, or of an fcc
 * lattice (slightly offset so that no atom sits on a domain boundary); the
 * same system on every rank. */
static hx_status make_system(const bench_opts *o, const hx_decomp *d, int *n, double **x)
{
    uint64_t s = o->seed;
    int cap = 1024;
    int k = fcc_cells(o->atoms);
    double a = d->box_len[0] / k;
    static const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
    *n = 0;
    HXI_CHECK(hxi_alloc((void **) x, (size_t) cap * 3 * sizeof(double), "benchmark atoms"));
    for (long i = 0; i < o->atoms; i++) {
        double p[3];
        if (o->fcc) {
            long c = i / 4;
            int ix = (int) (c % k), iy = (int) ((c / k) % k), iz = (int) (c / ((long) k * k));
            int cell[3] = {ix, iy, iz};
            for (int m = 0; m < 3; m++)
                p[m] = d->box_lo[m] + a * (cell[m] + basis[i % 4][m] + 0.125);
        } else {
            for (int m = 0; m < 3; m++)
                p[m] = d->box_lo[m] + d->box_len[m] * ((splitmix(&s) >> 11) * 0x1.0p-53);
        }
        if (d->triclinic) { /* the same fractional coordinates in the tilted box */
            double f[3];
            for (int m = 0; m < 3; m++)
                f[m] = (p[m] - d->box_lo[m]) / d->box_len[m];
            for (int m = 0; m < 3; m++)
                p[m] = d->box_lo[m] + f[0] * d->edge[0][m] + f[1] * d->edge[1][m] +
                       f[2] * d->edge[2][m];
        }
        if (hx_decomp_owner(d, p) != d->rank)
            continue;
        if (*n == cap) {
            cap *= 2;
            HXI_CHECK(hxi_grow((void **) x, (size_t) cap * 3 * sizeof(double), "benchmark atoms"));
        }
        memcpy(*x + 3 * (size_t) *n, p, sizeof p);
        (*n)++;
    }
    return HX_OK;
}

static hx_status forward_enqueue(hx_transport *t, void *ctx)
{
    (void) ctx;
    return hx_transport_forward(t);
}

/* Creates and prepares the row's transport; errors stay in the row. A
 * graph row of newton off gets its forward captured here:
 * hx_transport_step_graph replays forward + reverse, which a full-shell
 * plan refuses. */
static void prepare(hx_comm *comm, const bench_opts *o, const double *x, bench_row *row)
{
    const hx_plan *plan = row->plan;
    hx_transport_opts to;
    hx_status st;
    if (row->skip)
        return;
    hx_transport_opts_init(&to);
    to.name = row->name;
    to.dtype = (hx_transport_caps_of(row->name) & HX_CAP_DOUBLE) ? o->dtype : HX_FLOAT;
    to.force_put = row->force_put;
    to.mpi_mode = row->mpi_mode;
    to.graph = row->graph;
    /* The force mode is read at creation; then back to the caller's. */
    st = row->fmode ? hxi_knobs_set("HALOX_FUSED_FORCE_MODE", row->fmode) : HX_OK;
    if (st == HX_OK)
        st = hx_transport_create(&row->t, comm, &to);
    if (row->fmode)
        hxi_knobs_set("HALOX_FUSED_FORCE_MODE", NULL);
    if (st == HX_OK)
        st = hx_transport_set_plan(row->t, plan);
    if (st == HX_OK) {
        snprintf(row->describe, sizeof row->describe, "%s", hx_transport_describe(row->t));
        st = hx_transport_write(row->t, HX_COORDS, 0, hx_plan_nhome(plan), x);
    }
    if (st == HX_OK && row->graph && !row->newton)
        st = bench_graph_capture(row->t, forward_enqueue, NULL, &row->fwd);
    st = hxi_agree(comm, st);
    row->status = st;
    if (st != HX_OK)
        snprintf(row->error, sizeof row->error, "%s: %s", hx_status_string(st), hx_last_error());
}

/* The mpi transport's per-pulse tables, one per mode, printed after the
 * main one. */
static char bench_breakdown[16384];

#ifdef BENCH_MPI_BREAKDOWN
static size_t bench_breakdown_len;

/* Mean per-pulse host times of the mpi transport over the timed iterations,
 * slowest rank per entry (the forces' rows with newton on only). */
static void mpi_breakdown(hx_comm *comm, hx_transport *t, const hx_plan *plan, int iters,
                          const char *label, int newton)
{
    enum { NS = 5 };
    hxi_mpi_pulse_times fwd[HX_MAX_PULSES], rev[HX_MAX_PULSES];
    int np = hxi_mpi_times(t, fwd, rev);
    if (np <= 0)
        return;
    double v[HX_MAX_PULSES * 2 * NS];
    for (int p = 0; p < np; p++) {
        const hxi_mpi_pulse_times *d[2] = {&fwd[p], &rev[p]};
        for (int k = 0; k < 2; k++) {
            double c = d[k]->count > 0 ? (double) d[k]->count : 1.0;
            double *o = v + 2 * NS * p + NS * k;
            o[0] = 1e6 * d[k]->pack / c;
            o[1] = 1e6 * d[k]->sync / c;
            o[2] = 1e6 * d[k]->mpi / c;
            o[3] = 1e6 * d[k]->copy / c;
            o[4] = 1e6 * d[k]->unpack / c;
        }
    }
    hxi_allreduce_double(comm, v, 2 * NS * np, 1);
    if (hx_comm_rank(comm) != 0)
        return;
    static const char dims[3] = {'X', 'Y', 'Z'};
    char *b = bench_breakdown;
    size_t cap = sizeof bench_breakdown, len = bench_breakdown_len;
    if (len < cap)
        len += (size_t) snprintf(b + len, cap - len,
                                 "# %s, newton %s, per pulse (us, mean of %d iterations, slowest "
                                 "rank): host time of each stage\n%-6s %-4s %-6s %10s %10s %10s "
                                 "%10s %10s %10s\n",
                                 label, newton ? "on" : "off", iters, "pulse", "dim", "dir", "pack",
                                 "sync", "mpi", "copy", "unpack", "total");
    for (int p = 0; p < np && len < cap; p++)
        for (int k = 0; k < 1 + newton && len < cap; k++) {
            const double *o = v + 2 * NS * p + NS * k;
            len += (size_t) snprintf(
                b + len, cap - len, "%-6d %-4c %-6s %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n", p,
                dims[hx_plan_pulse(plan, p)->dim], k ? "forces" : "coords", o[0], o[1], o[2], o[3],
                o[4], o[0] + o[1] + o[2] + o[3] + o[4]);
        }
    bench_breakdown_len = len < cap ? len : cap - 1;
}
#endif

/* One exchange step: forward then reverse (newton on), the forward alone
 * (off); a graph row's replayed from the transport's CUDA graph (on) or
 * the bench's (off). */
static hx_status bench_step(const bench_row *r)
{
    if (r->graph)
        return r->newton ? hx_transport_step_graph(r->t) : bench_graph_launch(r->t, &r->fwd);
    hx_status st = hx_transport_forward(r->t);
    return st == HX_OK && r->newton ? hx_transport_reverse(r->t) : st;
}

/* n steps from a barrier to the transport's sync, timed on the host: the
 * slowest rank's seconds into *dt (agreed; every rank returns the same). */
static hx_status timed_steps(hx_comm *comm, const bench_row *r, int n, double *dt)
{
    hx_status st = hxi_barrier(comm);
    const double t0 = hxi_now();
    for (int it = 0; st == HX_OK && it < n; it++)
        st = bench_step(r);
    if (st == HX_OK)
        st = hx_transport_sync(r->t);
    *dt = hxi_now() - t0;
    st = hxi_agree(comm, st);
    return st == HX_OK ? hxi_allreduce_double(comm, dt, 1, 1) : st;
}

static void run_one(hx_comm *comm, const bench_opts *o, bench_row *row)
{
    hx_transport *t = row->t;
    double *times = NULL;
    hx_status st = row->status;
    if (st != HX_OK || row->skip)
        return;
    st = hxi_alloc((void **) &times, (size_t) o->iters * sizeof(double), "timings");
    for (int it = 0; st == HX_OK && it < o->warmup + o->iters; it++) {
        double dt = 0.0;
#ifdef BENCH_MPI_BREAKDOWN
        if (it == o->warmup)
            hxi_mpi_times_reset(t);
#endif
        st = timed_steps(comm, row, 1, &dt);
        if (it >= o->warmup)
            times[it - o->warmup] = dt;
    }
    row->status = st;
    if (st != HX_OK) {
        snprintf(row->error, sizeof row->error, "%s: %s", hx_status_string(st), hx_last_error());
    } else {
        qsort(times, (size_t) o->iters, sizeof(double), cmp_double);
        row->median_us =
            1e6 * (o->iters % 2 ? times[o->iters / 2]
                                : 0.5 * (times[o->iters / 2 - 1] + times[o->iters / 2]));
        row->min_us = 1e6 * times[0];
        row->p90_us = 1e6 * times[(int) (0.9 * (o->iters - 1))];
#ifdef BENCH_MPI_BREAKDOWN
        if (strcmp(row->name, "mpi") == 0)
            mpi_breakdown(comm, t, row->plan, o->iters, row->label, row->newton);
#endif
        /* Steps back to back, as an MD loop enqueues them: no barrier and
         * no host synchronisation between steps, one sync at the end. */
        double dt = 0.0;
        st = timed_steps(comm, row, o->iters, &dt);
        row->b2b_us = st == HX_OK ? 1e6 * dt / o->iters : 0.0;
        if (st != HX_OK) {
            row->status = st;
            snprintf(row->error, sizeof row->error, "back to back: %s: %s", hx_status_string(st),
                     hx_last_error());
        }
    }
    (void) t;
    free(times);
}

/* --field: the step with one 4-byte field beside each row (a graph row's
 * captured in a graph of its own). */
static void bench_fields(hx_comm *comm, const bench_opts *o, bench_row *rows, int nrows)
{
    for (int i = 0; i < nrows; i++) {
        bench_row *r = &rows[i];
        if (r->status != HX_OK || r->skip)
            continue;
        r->field_ran = 1;
        r->field_status = bench_field_time(comm, r->t, r->plan, r->graph, o->warmup, o->iters,
                                           r->field_us, r->field_error, sizeof r->field_error);
    }
}

static void print_fields(const bench_opts *o, const hx_decomp *d, int size, const bench_row *rows,
                         int nrows, FILE *csv)
{
    printf("# --field: forward of the coordinates with one 4-byte field per atom, then reverse "
           "(newton on); field_x = its median / the median above\n");
    printf("%-30s %-6s %10s %10s %10s %10s\n", "transport", "newton", "field_us", "min_us",
           "p90_us", "field_x");
    for (int i = 0; i < nrows; i++) {
        const bench_row *r = &rows[i];
        const char *nm = r->newton ? "on" : "off";
        if (!r->field_ran)
            continue;
        if (r->field_status == HX_OK)
            printf("%-30s %-6s %10.2f %10.2f %10.2f %10.2f\n", r->label, nm, r->field_us[0],
                   r->field_us[1], r->field_us[2], r->field_us[0] / r->median_us);
        else
            printf("%-30s %-6s %10s %10s %10s %10s  %s\n", r->label, nm, "-", "-", "-", "-",
                   r->field_error);
        if (csv)
            fprintf(csv, "%s +field,%ld,%dx%dx%d,%d,%d,%ld,%.3f,%.3f,%.3f,%s,%.3f,%s\n", r->label,
                    o->atoms, d->grid[0], d->grid[1], d->grid[2], size, r->npulses, r->halo_atoms,
                    r->field_us[0], r->field_us[1], r->field_us[2],
                    hx_status_string(r->field_status), 0.0, nm);
    }
}

/* 1 when name is in the comma-separated list (or the list is "all"). */
static int wanted(const char *list, const char *name)
{
    if (strcmp(list, "all") == 0)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t) (e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

/* The floor of a step (see the header): through the first live
 * nvshmem-fused row's transport of newton on, with its plan
 * (bench_floor.c). */
static void bench_floor(hx_comm *comm, bench_row *rows, int nrows, double *floor_us, char *text,
                        size_t cap)
{
    for (int i = 0; i < nrows; i++)
        if (rows[i].status == HX_OK && !rows[i].skip && rows[i].newton &&
            (hx_transport_caps_of(rows[i].name) & HX_CAP_GRAPH)) {
            bench_floor_measure(comm, rows[i].t, rows[i].plan, floor_us, text, cap);
            return;
        }
}

/* bench/md_bench.py in the source tree this was built from, else the
 * installed copy beside the program (<prefix>/bin/../share/halox). */
static const char *md_script(void)
{
    static char path[4096 + 128];
    char exe[4096];
    if (access(HALOX_BENCH_MD_SCRIPT, R_OK) == 0)
        return HALOX_BENCH_MD_SCRIPT;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(path, sizeof path, "%s/%s", exe, HALOX_BENCH_MD_SCRIPT_INSTALLED);
            if (access(path, R_OK) == 0)
                return path;
        }
    }
    return HALOX_BENCH_MD_SCRIPT; /* the error names where it was looked for */
}

/* --csv, opened on rank 0 before the minutes of timing: a name that
 * cannot take it says so now (collective). */
static hx_status bench_csv_open(hx_comm *comm, const char *path, hxi_outfile *csv)
{
    const int rank = hx_comm_rank(comm);
    memset(csv, 0, sizeof *csv);
    hx_status st = rank == 0 && path ? hxi_out_open(csv, path, "--csv", HXI_OUT_REPLACE) : HX_OK;
    st = hxi_agree(comm, st);
    if (st != HX_OK && rank == 0)
        fprintf(stderr, "halox-bench: ERROR: %s\n", hx_last_error());
    return st;
}

/* Rank 0, after the tables: the CSV file and stdout written in full, or
 * one error each; 0 or 1. */
static int bench_outputs_done(hxi_outfile *csv)
{
    int rc = 0;
    if (csv->fp && hxi_out_commit(csv) != HX_OK) {
        fprintf(stderr, "halox-bench: ERROR: %s\n", hx_last_error());
        rc = 1;
    }
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "halox-bench: ERROR: cannot write the tables to stdout: %s\n",
                errno ? strerror(errno) : "a write error");
        rc = 1;
    }
    return rc;
}

/* A new row of transport name in newton mode `newton` on plan: its halo
 * atoms summed over ranks (collective); NULL where rows are full. */
static bench_row *new_row(hx_comm *comm, const hx_plan *plan, int newton, const char *name,
                          bench_row *rows, int *nrows)
{
    if (*nrows >= BENCH_MAX_ROWS)
        return NULL;
    bench_row *r = &rows[(*nrows)++];
    memset(r, 0, sizeof *r);
    r->name = name;
    r->newton = newton;
    r->plan = plan;
    r->npulses = hx_plan_npulses(plan);
    int h = hx_plan_nhalo(plan);
    hxi_allreduce_int(comm, &h, 1, 0);
    r->halo_atoms = h;
    return r;
}

/* The fused transports' rows: the put path and, for nvshmem-fused, the
 * other force modes, launched; then all of them replayed from a graph.
 * With newton off the force modes (they differ in the reverse alone) and
 * a forward that cannot be captured are listed, not run. */
static void add_graph_rows(hx_comm *comm, const bench_opts *o, const hx_plan *plan, int newton,
                           const char *name, bench_row *rows, int *nrows)
{
    const char *fmodes[2];
    int nf = 0;
#ifdef HALOX_HAVE_NVSHMEM
    static const char *all_modes[] = {"push", "pull", "atomic"};
    for (int m = 0; m < 3 && strcmp(name, "nvshmem-fused") == 0; m++)
        if (strcmp(all_modes[m], hxi_fused_default_force_mode()) != 0)
            fmodes[nf++] = all_modes[m];
#endif
    for (int graph = 0; graph < 2; graph++)
        for (int v = graph ? 0 : 2; v < 2 + nf; v++) {
            bench_row *r =
                v == 1 && o->no_put ? NULL : new_row(comm, plan, newton, name, rows, nrows);
            if (!r)
                continue;
            r->force_put = v == 1;
            r->graph = graph;
            r->fmode = v >= 2 ? fmodes[v - 2] : NULL;
            if (r->fmode && !newton)
                r->skip = "skipped: a force mode changes the reverse alone, which newton off has "
                          "not";
            else if (graph && !newton && !(hx_transport_caps_of(name) & HX_CAP_VOTE))
                r->skip = "skipped: with no device-side vote (HX_CAP_VOTE) its forward on a "
                          "full-shell plan waits for the host and cannot be captured";
            snprintf(r->label, sizeof r->label, "%s%s%s%s%s", name, v == 1 ? "/put" : "",
                     r->fmode ? "[" : "", r->fmode ? r->fmode : "", r->fmode ? "]" : "");
            if (graph)
                strncat(r->label, " (graph)", sizeof r->label - strlen(r->label) - 1);
        }
}

/* Every wanted transport's rows on plan, of newton mode `newton`. `mpi`
 * runs in each of its modes, side by side. */
static void add_rows(hx_comm *comm, const bench_opts *o, const hx_plan *plan, int newton,
                     bench_row *rows, int *nrows)
{
    static const hx_mpi_mode mpi_modes[] = {HX_MPI_STAGED, HX_MPI_IPC, HX_MPI_CUDA_AWARE};
    static const char *mpi_labels[] = {"mpi (staged)", "mpi (ipc)", "mpi (cuda-aware)"};
    for (int i = 0; i < hx_transport_count(); i++) {
        const char *name = hx_transport_name_at(i);
        if (!wanted(o->transport, name))
            continue;
        int is_mpi = strcmp(name, "mpi") == 0;
        const unsigned caps = hx_transport_caps_of(name);
        int variants = ((caps & HX_CAP_PEER) && !o->no_put) ? 2 : is_mpi ? 3 : 1;
        for (int v = 0; v < variants; v++) {
            bench_row *r = new_row(comm, plan, newton, name, rows, nrows);
            if (!r)
                break;
            r->force_put = is_mpi ? 0 : v;
            r->mpi_mode = is_mpi ? mpi_modes[v] : HX_MPI_AUTO;
            if (is_mpi)
                snprintf(r->label, sizeof r->label, "%s", mpi_labels[v]);
            else
                snprintf(r->label, sizeof r->label, "%s%s", name, v ? "/put" : "");
        }
        if (caps & HX_CAP_GRAPH)
            add_graph_rows(comm, o, plan, newton, name, rows, nrows);
    }
}

/* Rank 0: the table and its CSV rows (csv may be NULL). */
static void print_table(const bench_opts *o, const hx_decomp *d, int size, double len,
                        const hx_plan *const plans[2], const bench_row *rows, int nrows, FILE *csv)
{
    if (d->triclinic)
        printf("# triclinic box: tilts xy = xz = yz = %g (%g of the box length)\n", d->tilt[0],
               o->tilt);
    printf("# halox-bench exchange: %ld atoms (%s), box %.3f^3, halo cutoff %.2f, grid "
           "%dx%dx%d, %d ranks, %d iterations (+%d warm-up), slowest rank per iteration\n",
           o->atoms, o->fcc ? "fcc" : "random", len, o->cutoff, d->grid[0], d->grid[1], d->grid[2],
           size, o->iters, o->warmup);
    for (int m = 1; m >= 0; m--)
        if (plans[m])
            printf("# newton %s: %s, %d pulses, one step = %s\n", m ? "on" : "off",
                   m ? "eighth-shell plan (hx_plan_create)"
                     : "full-shell plan (hx_plan_create_full)",
                   hx_plan_npulses(plans[m]), m ? "forward + reverse" : "forward alone");
    printf("%-30s %-6s %10s %10s %10s %10s %10s  %s\n", "transport", "newton", "median_us",
           "min_us", "p90_us", "b2b_us", "halo_atoms", "how");
    if (csv)
        fprintf(csv, "transport,atoms,grid,ranks,pulses,halo_atoms,median_us,min_us,p90_us,"
                     "status,b2b_us,newton\n");
    for (int i = 0; i < nrows; i++) {
        const bench_row *r = &rows[i];
        const char *nm = r->newton ? "on" : "off";
        if (r->status == HX_OK && !r->skip)
            printf("%-30s %-6s %10.2f %10.2f %10.2f %10.2f %10ld  %s\n", r->label, nm, r->median_us,
                   r->min_us, r->p90_us, r->b2b_us, r->halo_atoms, r->describe);
        else
            printf("%-30s %-6s %10s %10s %10s %10s %10ld  %s\n", r->label, nm, "-", "-", "-", "-",
                   r->halo_atoms, r->skip ? r->skip : r->error);
        if (csv)
            fprintf(csv, "%s,%ld,%dx%dx%d,%d,%d,%ld,%.3f,%.3f,%.3f,%s,%.3f,%s\n", r->label,
                    o->atoms, d->grid[0], d->grid[1], d->grid[2], size, r->npulses, r->halo_atoms,
                    r->median_us, r->min_us, r->p90_us,
                    r->skip ? "skipped" : hx_status_string(r->status), r->b2b_us, nm);
    }
}

/* Rank 0: the floor, its CSV row and the rows of newton on against it. */
static void print_floor(const bench_opts *o, const hx_decomp *d, int size, double floor_us,
                        const char *text, const bench_row *rows, int nrows, FILE *csv)
{
    const bench_row *on = rows;
    while (on < rows + nrows - 1 && !on->newton)
        on++;
    printf("%s", text);
    if (csv)
        fprintf(csv, "floor,%ld,%dx%dx%d,%d,%d,%ld,%.3f,%.3f,%.3f,HX_OK,%.3f,on\n", o->atoms,
                d->grid[0], d->grid[1], d->grid[2], size, on->npulses, on->halo_atoms, floor_us,
                floor_us, floor_us, floor_us);
    printf("# (median, back to back) / floor, newton on:");
    for (int i = 0; i < nrows; i++)
        if (rows[i].status == HX_OK && !rows[i].skip && rows[i].newton &&
            strncmp(rows[i].name, "nvshmem", 7) == 0)
            printf(" %s %.2fx %.2fx;", rows[i].label, rows[i].median_us / floor_us,
                   rows[i].b2b_us / floor_us);
    printf("\n");
}

/* The decomposition of the cubic (or sheared) box of side len. Without
 * --grid, where newton off is timed, the grid is hx_grid_choose_full's
 * (valid for both plans; hx_grid_choose's may have too many pulses for
 * the full shell). */
static hx_status bench_decomp(const bench_opts *o, double len, int size, int rank, hx_decomp *d)
{
    const double lo[3] = {0, 0, 0}, box[3] = {len, len, len};
    const double tilt[3] = {o->tilt * len, o->tilt * len, o->tilt * len};
    int grid[3];
    memcpy(grid, o->grid, sizeof grid);
    HXI_CHECK(hx_decomp_init_tilted(d, lo, box, tilt, o->cutoff, grid, size, rank));
    if (grid[0] || grid[1] || grid[2] || !(o->newton[0] == 0 || o->newton[o->nnewton - 1] == 0))
        return HX_OK;
    HXI_CHECK(hx_grid_choose_full(size, d->height, o->cutoff, grid));
    return hx_decomp_init_tilted(d, lo, box, tilt, o->cutoff, grid, size, rank);
}

int main(int argc, char **argv)
{
    bench_opts o;
    hx_comm *comm = NULL;
    hx_decomp d;
    hx_plan *plans[2] = {NULL, NULL};
    double *x = NULL, len;
    int n = 0, rank, size, rc;
    static bench_row rows[BENCH_MAX_ROWS];
    int nrows = 0;
    hx_status st;

    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--version") == 0) {
            printf("halox-bench: %s\n", hx_version_string());
            return 0;
        }
    /* Every transport halox knows: built here, or what a build needs. */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--list") == 0) {
            for (int k = 0; k < hx_transport_known_count(); k++) {
                const char *name = hx_transport_known_at(k);
                const char *needs = hx_transport_needs(name);
                const char *note = hx_transport_note(name);
                if (needs)
                    printf("%-18s not built: needs %s\n", name, needs);
                else
                    printf("%-18s built%s%s\n", name, note ? "; " : "", note ? note : "");
            }
            return 0;
        }
    /* `halox-bench md` runs whole MD steps under several process counts,
     * so it is a driver of mpirun and halox-md, written in Python. */
    if (argc > 1 && strcmp(argv[1], "md") == 0) {
        char **args = calloc((size_t) argc + 2, sizeof *args);
        if (!args)
            return 1;
        args[0] = "python3";
        args[1] = (char *) md_script();
        for (int i = 2; i < argc; i++)
            args[i] = argv[i];
        execvp(args[0], args);
        fprintf(stderr, "halox-bench md: cannot run python3 %s: %s\n", args[1], strerror(errno));
        return 1;
    }

    /* The HALOX_* variables, before anything starts. */
    if (hxi_knobs_load() != HX_OK) {
        fprintf(stderr, "halox-bench: ERROR: %s\n", hx_last_error());
        return 2;
    }
    if (hx_init(&argc, &argv) != HX_OK || hx_comm_create(&comm, NULL) != HX_OK) {
        fprintf(stderr, "halox-bench: cannot start: %s\n", hx_last_error());
        return 1;
    }
    rank = hx_comm_rank(comm);
    size = hx_comm_size(comm);
    if (argc > 1 && strcmp(argv[1], "pingpong") == 0) {
        rc = bench_pingpong(comm, argc, argv);
        hx_comm_destroy(comm);
        hx_finalize();
        return rc;
    }
    rc = parse_args(argc, argv, &o, rank);
    if (rc) {
        hx_comm_destroy(comm);
        hx_finalize();
        return rc == 1 ? 0 : 2;
    }
    hxi_outfile csvf;
    if (bench_csv_open(comm, o.csv, &csvf) != HX_OK) {
        hx_comm_destroy(comm);
        hx_finalize();
        return 1;
    }
    if (o.fcc) {
        int k = fcc_cells(o.atoms);
        o.atoms = 4L * k * k * k;
    }
    len = cbrt(o.atoms / o.density);
    st = bench_decomp(&o, len, size, rank, &d);
    if (st == HX_OK)
        st = make_system(&o, &d, &n, &x);
    /* One plan per newton mode: plans[1] eighth shell, plans[0] full shell. */
    for (int m = 0; m < o.nnewton && st == HX_OK; m++)
        st = o.newton[m] ? hx_plan_create(&plans[1], comm, &d, n, x)
                         : hx_plan_create_full(&plans[0], comm, &d, n, x);
    st = hxi_agree(comm, st);
    if (st != HX_OK) {
        if (rank == 0)
            fprintf(stderr, "halox-bench: %s\n", hx_last_error());
        hxi_out_abort(&csvf);
        for (int m = 0; m < 2; m++)
            hx_plan_destroy(plans[m]);
        free(x);
        hx_comm_destroy(comm);
        hx_finalize();
        return 1;
    }
    for (int m = 0; m < o.nnewton; m++)
        add_rows(comm, &o, plans[o.newton[m]], o.newton[m], rows, &nrows);
    for (int i = 0; i < nrows; i++)
        prepare(comm, &o, x, &rows[i]);
    for (int i = 0; i < nrows; i++)
        run_one(comm, &o, &rows[i]);
    if (o.field)
        bench_fields(comm, &o, rows, nrows);
    double floor_us = 0.0;
    char floor_text[256] = "";
    if (o.floor)
        bench_floor(comm, rows, nrows, &floor_us, floor_text, sizeof floor_text);
    if (nrows == 0 && rank == 0)
        fprintf(stderr, "halox-bench: transport '%s' is not built (see --help)\n", o.transport);

    if (rank == 0) {
        print_table(&o, &d, size, len, (const hx_plan *const *) plans, rows, nrows, csvf.fp);
        if (o.field)
            print_fields(&o, &d, size, rows, nrows, csvf.fp);
        if (floor_us > 0.0)
            print_floor(&o, &d, size, floor_us, floor_text, rows, nrows, csvf.fp);
        fputs(bench_breakdown, stdout);
        rc = bench_outputs_done(&csvf);
    }
    for (int i = nrows - 1; i >= 0; i--) {
        bench_graph_free(&rows[i].fwd);
        hx_transport_destroy(rows[i].t);
    }
    for (int m = 0; m < 2; m++)
        hx_plan_destroy(plans[m]);
    free(x);
    hx_comm_destroy(comm);
    hx_finalize();
    return rc;
}
