/*
 * run.c - the halox-md driver: configuration, set-up, the run loop and the
 * output (LAMMPS's thermo table and loop summary, then halox's performance
 * summary).
 *
 * Failure rule: every status is agreed over all ranks (hxi_agree) before a
 * rank acts on it, so a bad deck, an impossible box or a failing rank ends
 * the program on every rank with the same exit code and one message, printed
 * by rank 0; nothing waits for a rank that has already left. Engines agree on
 * their own errors inside step(), which is collective.
 */
#define _POSIX_C_SOURCE 200809L

#include "md/deck.h"
#include "md/md_driver.h"
#include "md/restart.h"
#include "md/trace.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HALOX_MD_GPU_ENGINE
#include <cuda_runtime_api.h>
#endif

/* The most steps the loop hands to an engine's steps() at once. */
#define HXI_MD_BATCH_MAX 64

/* Devices this rank can use for the GPU engine (0 where it is not built). */
static int hxi_gpu_count(void)
{
#ifdef HALOX_MD_GPU_ENGINE
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        return 0;
    return n;
#else
    return 0;
#endif
}

/* The CPU engine moves its halo with the cpu transport whatever
 * --transport says, so the name is checked here, as hx_transport_create
 * checks it for the GPU engine: one this build lacks is refused (with what
 * it needs, where halox knows it), and so is one that moves device memory;
 * cpu and auto (which has only cpu to choose from) pass. */
static hx_status hxi_cpu_transport_ok(const char *tr)
{
    if (!tr[0])
        return HX_OK;
    const unsigned caps = hx_transport_caps_of(tr);
    if (caps & HX_CAP_DEVICE)
        return hxi_error(HX_ERR_UNSUPPORTED,
                         "--transport %s moves device memory, but the run uses the CPU engine, "
                         "which uses the cpu transport: drop --transport, or run the GPU "
                         "engine (--gpu) on a machine with GPUs",
                         tr);
    if (caps)
        return HX_OK;
    char built[256] = "";
    for (int i = 0; i < hx_transport_count(); i++) {
        strncat(built, i ? ", " : "", sizeof built - strlen(built) - 1);
        strncat(built, hx_transport_name_at(i), sizeof built - strlen(built) - 1);
    }
    const char *needs = hx_transport_needs(tr);
    if (needs)
        return hxi_error(HX_ERR_UNSUPPORTED,
                         "--transport %s is not built into this halox-md: it needs %s; this "
                         "build has %s",
                         tr, needs, built);
    return hxi_error(HX_ERR_INVALID, "--transport %s: no such transport; this build has %s", tr,
                     built);
}

static hx_status hxi_choose_engine(hx_comm *comm, const hx_md_config *cfg,
                                   const hx_md_engine_ops **ops)
{
    int lowest = -hxi_gpu_count(), gpus, built = 0;
    const char *tr = cfg->transport;
#ifdef HALOX_MD_GPU_ENGINE
    built = 1;
#endif
    /* The GPU engine runs only if every rank has a device: min over ranks. */
    HXI_CHECK(hxi_allreduce_int(comm, &lowest, 1, 1));
    gpus = -lowest;
    if (cfg->use_gpu == 1) {
        if (!built)
            return hxi_error(HX_ERR_UNSUPPORTED,
                             "--gpu: this halox-md has no GPU engine (built without CUDA or "
                             "without src/md/gpu/engine.c): run with --cpu, or rebuild with "
                             "CUDA (-DHALOX_WITH_CUDA=ON)");
        if (gpus == 0)
            return hxi_error(HX_ERR_UNSUPPORTED,
                             "--gpu: some rank sees no CUDA device: run where every rank has "
                             "a GPU, or use --cpu");
    }
#ifdef HALOX_MD_GPU_ENGINE
    if (cfg->use_gpu == 1 || (cfg->use_gpu < 0 && gpus > 0)) {
        *ops = &hx_md_engine_gpu;
        return HX_OK;
    }
#endif
    HXI_CHECK(hxi_cpu_transport_ok(tr));
    *ops = &hx_md_engine_cpu;
    return HX_OK;
}

/* Every rank must own atoms: an empty domain means the system is too small
 * for the rank count (or the grid), which is a set-up mistake. */
static hx_status hxi_check_atoms_per_rank(hx_comm *comm, const hx_md_system *sys)
{
    int size = hx_comm_size(comm), v[1];
    v[0] = sys->n == 0 ? -hx_comm_rank(comm) : -size;
    HXI_CHECK(hxi_allreduce_int(comm, v, 1, 1));
    if (-v[0] < size)
        return hxi_error(HX_ERR_INVALID,
                         "too few atoms per rank: rank %d of %d owns none of the %lld atoms "
                         "(grid %dx%dx%d): use fewer ranks, another --grid, or a larger system",
                         -v[0], size, (long long) sys->natoms, sys->decomp.grid[0],
                         sys->decomp.grid[1], sys->decomp.grid[2]);
    return HX_OK;
}

/* The system from a restart file: its header into cfg (with the checks
 * that the run asks for the same system), the decomposition of its box,
 * then this rank's atoms. */
static hx_status hxi_setup_restart(hx_comm *comm, hx_md_config *cfg, hx_md_system *sys,
                                   int64_t *first_step)
{
    hxi_md_restart h;
    const int *grid = cfg->grid;
    HXI_CHECK(hxi_md_restart_read_header(comm, cfg->restart_file, &h));
    if ((cfg->given & HX_MD_GIVEN_SIZE) &&
        (cfg->cells[0] != h.cells[0] || cfg->cells[1] != h.cells[1] || cfg->cells[2] != h.cells[2]))
        return hxi_error(HX_ERR_INVALID,
                         "restart file %s holds %lld atoms (%dx%dx%d cells), but the run asks "
                         "for %dx%dx%d cells: drop --size/--cells, or start from another file",
                         cfg->restart_file, (long long) h.natoms, h.cells[0], h.cells[1],
                         h.cells[2], cfg->cells[0], cfg->cells[1], cfg->cells[2]);
    if ((cfg->given & HX_MD_GIVEN_DENSITY) && cfg->density != h.density)
        return hxi_error(HX_ERR_INVALID,
                         "restart file %s holds a system at density %g, but the run asks for "
                         "%g: drop --density, or start from another file",
                         cfg->restart_file, h.density, cfg->density);
    hxi_md_restart_apply(&h, cfg);
    HXI_CHECK(hx_md_config_check(cfg));
    const double cut = hxi_md_list_cutoff(cfg);
    HXI_CHECK(hxi_agree(comm, hx_decomp_init(&sys->decomp, h.box_lo, h.box_len, cut, grid,
                                             hx_comm_size(comm), hx_comm_rank(comm))));
    HXI_CHECK(hxi_md_restart_read_atoms(comm, cfg->restart_file, &h, sys));
    HXI_CHECK(hxi_agree(comm, hxi_check_atoms_per_rank(comm, sys)));
    *first_step = h.step;
    if (hx_comm_rank(comm) == 0) {
        printf("halox-md: read restart file %s: step %lld, %lld atoms\n", cfg->restart_file,
               (long long) h.step, (long long) h.natoms);
        fflush(stdout);
    }
    return HX_OK;
}

static hx_status hxi_setup(hx_comm *comm, hx_md_config *cfg, hx_md_system *sys, int64_t *first_step)
{
    double lo[3], len[3];
    const int *grid = cfg->grid;
    *first_step = 0;
    if (cfg->restart_file[0])
        return hxi_setup_restart(comm, cfg, sys, first_step);
    HXI_CHECK(hxi_agree(comm, hx_md_box(cfg, lo, len)));
    HXI_CHECK(hxi_agree(comm, hx_decomp_init(&sys->decomp, lo, len, hxi_md_list_cutoff(cfg), grid,
                                             hx_comm_size(comm), hx_comm_rank(comm))));
    double t0 = hxi_now();
    HXI_CHECK(hxi_agree(comm, hx_md_lattice(sys, cfg)));
    HXI_CHECK(hxi_agree(comm, hxi_check_atoms_per_rank(comm, sys)));
    double t1 = hxi_now();
    HXI_CHECK(hxi_agree(comm, hx_md_velocities(sys, cfg, comm)));
    double t2 = hxi_now();
    hxi_trace_host("lattice", t0, t1);
    hxi_trace_host("velocities", t1, t2);
    if (hx_comm_rank(comm) == 0)
        hxi_info("set-up on rank 0: lattice %.3f s, velocities %.3f s", t1 - t0, t2 - t1);
    return HX_OK;
}

static void hxi_hms(char *buf, size_t n, double s)
{
    long t = s > 0 && s < 1e9 ? (long) (s + 0.5) : 0;
    snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
}

/* A progress line on stderr, refreshed about once a second. */
typedef struct hxi_progress {
    int on;
    int shown; /* a line is on the terminal: clear it before other output */
    double t0, last;
} hxi_progress;

static void hxi_progress_clear(hxi_progress *p)
{
    if (p->on && p->shown) {
        fprintf(stderr, "\r%78s\r", "");
        fflush(stderr);
        p->shown = 0;
    }
}

static void hxi_progress_tick(hxi_progress *p, int64_t step, int64_t steps, double now)
{
    char eta[32];
    double rate;
    if (!p->on || step >= steps) {
        hxi_progress_clear(p); /* the summary follows */
        return;
    }
    if (now - p->last < 1.0 || now - p->t0 < 2.0)
        return; /* short runs print nothing */
    p->last = now;
    rate = step / (now - p->t0);
    hxi_hms(eta, sizeof eta, rate > 0 ? (double) (steps - step) / rate : 0);
    fprintf(stderr, "\rhalox-md: step %lld/%lld (%3.0f%%), %.1f steps/s, ETA %s   ",
            (long long) step, (long long) steps, 100.0 * (double) step / (double) steps, rate, eta);
    fflush(stderr);
    p->shown = 1;
}

/* Per-step times of the stretches between rebuilds (slowest rank each). */
typedef struct hxi_segments {
    double *us;
    int n, cap;
} hxi_segments;

static hx_status hxi_segments_add(hxi_segments *g, double v)
{
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 64;
        HXI_CHECK(hxi_grow((void **) &g->us, sizeof(double) * (size_t) cap, "stretch timings"));
        g->cap = cap;
    }
    g->us[g->n++] = v;
    return HX_OK;
}

/* With marks (ops->mark), the stretches hold their step counts: each
 * becomes its per-step time, from the engine's device times, the slowest
 * rank's. Collective: every rank timed the same stretches. */
static hx_status hxi_segments_marked(hx_comm *comm, const hx_md_engine_ops *ops, hx_md_engine *eng,
                                     hxi_segments *g)
{
    double *sec = NULL;
    hx_status st = hxi_alloc((void **) &sec, sizeof(double) * (size_t) (g->n + 1), "stretch times");
    if (st == HX_OK)
        st = ops->stretch_seconds(eng, sec, g->n);
    st = hxi_agree(comm, st);
    if (st == HX_OK && g->n > 0)
        st = hxi_allreduce_double(comm, sec, g->n, 1);
    for (int k = 0; st == HX_OK && k < g->n; k++)
        g->us[k] = 1e6 * sec[k] / g->us[k];
    free(sec);
    return st;
}

static int hxi_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* Median of the recorded stretches, or -1 where none was recorded. */
static double hxi_segments_median(hxi_segments *g)
{
    if (g->n == 0)
        return -1;
    qsort(g->us, (size_t) g->n, sizeof(double), hxi_cmp_double);
    return g->n % 2 ? g->us[g->n / 2] : 0.5 * (g->us[g->n / 2 - 1] + g->us[g->n / 2]);
}

/* One CSV row for halox-bench md; the header is written to a new file. */
static void hxi_stats_row(const hx_md_config *cfg, const char *engine, const char *how, int ranks,
                          int64_t natoms, int64_t steps, int64_t rebuilds, double median_us,
                          double mean_us, double tau_day, double aps, const double *stage_avg,
                          double tloop)
{
    FILE *f = fopen(cfg->stats_csv, "a");
    if (!f) {
        fprintf(stderr, "halox-md: warning: cannot append to %s\n", cfg->stats_csv);
        return;
    }
    if (ftell(f) == 0)
        fprintf(f, "engine,transport,ranks,atoms,steps,rebuilds,us_step_median,us_step_mean,"
                   "tau_day,atom_steps_s,local,nonlocal,halo_fwd,halo_rev,neigh,migrate_plan,"
                   "integrate,other,how\n");
    fprintf(f, "%s,%s,%d,%lld,%lld,%lld,%.3f,%.3f,%.1f,%.6g", engine,
            cfg->transport[0] ? cfg->transport : "default", ranks, (long long) natoms,
            (long long) steps, (long long) rebuilds, median_us, mean_us, tau_day, aps);
    for (int k = 0; k < HX_MD_NSTAGES; k++)
        fprintf(f, ",%.4f", tloop > 0 ? stage_avg[k] / tloop : 0.0);
    /* The description may hold commas: quote it. */
    fputs(",\"", f);
    for (const char *c = how; *c; c++)
        fputc(*c == '"' ? '\'' : *c, f);
    fputs("\"\n", f);
    fclose(f);
}

/* LAMMPS's loop line and performance line, then halox's summary. */
static hx_status hxi_summary(hx_comm *comm, const hx_md_engine_ops *ops, hx_md_engine *eng,
                             const hx_md_config *cfg, int64_t natoms, int64_t steps, double loop,
                             double out_time, double setup, hxi_segments *segs)
{
    const hx_md_stats *st = ops->stats(eng);
    int size = hx_comm_size(comm), rank = hx_comm_rank(comm);
    double sum[HX_MD_NSTAGES + 1], max[HX_MD_NSTAGES + 1];
    double tloop, t_step, tau_day, aps;

    for (int k = 0; k < HX_MD_NSTAGES; k++)
        sum[k] = st->stage[k];
    sum[HX_MD_OTHER] += out_time;
    sum[HX_MD_NSTAGES] = loop;
    memcpy(max, sum, sizeof max);
    HXI_CHECK(hxi_allreduce_double(comm, sum, HX_MD_NSTAGES + 1, 0));
    HXI_CHECK(hxi_allreduce_double(comm, max, HX_MD_NSTAGES + 1, 1));
    if (rank != 0)
        return HX_OK;

    tloop = sum[HX_MD_NSTAGES] / size; /* LAMMPS: the average over ranks */
    printf("Loop time of %.6g on %d procs for %lld steps with %lld atoms\n\n", tloop, size,
           (long long) steps, (long long) natoms);
    if (steps <= 0 || tloop <= 0) {
        fflush(stdout);
        return HX_OK;
    }
    t_step = tloop / (double) steps;
    tau_day = 86400.0 / t_step * cfg->dt;
    aps = (double) natoms / t_step;
    printf("Performance: %.3f tau/day, %.3f timesteps/s, %.3f katom-step/s\n\n", tau_day,
           1.0 / t_step, aps * 1e-3);
    double median = hxi_segments_median(segs);

    printf("halox-md performance: %s engine, %d rank(s), %lld neighbour-list rebuilds\n", ops->name,
           size, (long long) st->rebuilds);
    printf("  steps/s       %14.3f\n", 1.0 / t_step);
    printf("  us/step       %14.3f   (mean over all steps, rebuilds included)\n", 1e6 * t_step);
    if (median > 0)
        printf("  us/step       %14.3f   (median of the %d stretches between rebuilds)\n", median,
               segs->n);
    printf("  atom-steps/s  %14.6g\n", aps);
    printf("  set-up (s)    %14.3f   (from the start of the program to the first step)\n", setup);
    printf("  tau/day       %14.3f\n", tau_day);
    printf("  %-18s %10s %10s %8s\n", "stage", "avg (s)", "max (s)", "% loop");
    {
        double tot = 0;
        for (int k = 0; k < HX_MD_NSTAGES; k++) {
            double avg = sum[k] / size;
            tot += avg;
            printf("  %-18s %10.4f %10.4f %8.2f\n", hxi_md_stage_name(k), avg, max[k],
                   100.0 * avg / tloop);
        }
        printf("  %-18s %10.4f %10s %8.2f\n", "total", tot, "", 100.0 * tot / tloop);
    }
    if (cfg->stats_csv[0]) {
        double avg[HX_MD_NSTAGES];
        for (int k = 0; k < HX_MD_NSTAGES; k++)
            avg[k] = sum[k] / size;
        hxi_stats_row(cfg, ops->name, ops->describe(eng), size, natoms, steps, st->rebuilds,
                      median > 0 ? median : 1e6 * t_step, 1e6 * t_step, tau_day, aps, avg, tloop);
    }
    fflush(stdout);
    return HX_OK;
}

/* Writes a restart file at absolute step `abs` from the engine's atoms. */
static hx_status hxi_write_restart(hx_comm *comm, const hx_md_engine_ops *ops, hx_md_engine *eng,
                                   hx_md_system *sys, const hx_md_config *cfg, const char *path,
                                   int64_t abs, hxi_md_gather *g)
{
    HXI_CHECK(hxi_agree(comm, ops->gather(eng, sys, NULL)));
    return hxi_md_restart_write(g, comm, path, sys, cfg, abs);
}

/* Step s of this run ends with a restart file written (not counting a
 * stop, which the loop knows about one step ahead). */
static int hxi_writes_after(const hx_md_config *cfg, int64_t first, int64_t s)
{
    return (cfg->checkpoint_every > 0 && (first + s) % cfg->checkpoint_every == 0) ||
           (cfg->write_restart_file[0] && s == cfg->write_restart_after);
}

/* Step s ends with a thermo row: every thermo_every steps, and the last
 * step of the run (its end, or the step a stop request ends it after). */
static int hxi_thermo_after(const hx_md_config *cfg, int64_t first, int64_t s, int64_t steps,
                            int64_t stop_at)
{
    return (cfg->thermo_every > 0 && (first + s) % cfg->thermo_every == 0) || s == steps ||
           s == stop_at;
}

/* With periodic rebuilds, a timed stretch starts before step s (the step
 * after a rebuild step, where a whole stretch of `every` steps is left)... */
static int hxi_stretch_starts(int every, int64_t s, int64_t steps)
{
    return s % every == 1 && s + every - 2 <= steps;
}

/* ... and one may end after step s (the step before the next rebuild). */
static int hxi_stretch_ends(int every, int64_t s)
{
    return (s + 1) % every == 0;
}

/* How many steps from s on (s itself, want-free, counted) the loop can hand
 * to the engine at once: every step but the last of them followed by
 * nothing of the loop's (thermo, dump, restart file, stop check, the end
 * of a timed stretch), and none after the first preceded by anything (a
 * forced rebuild, the start of a timed stretch) or a thermo step. At most
 * `cap`. The loop's own tests, asked for the steps ahead. */
static int64_t hxi_quiet_steps(const hx_md_config *cfg, int64_t first, int64_t s, int64_t steps,
                               int64_t stop_at, int64_t next_check, int dumping, int periodic,
                               int64_t cap)
{
    const int every = cfg->neigh_every;
    int64_t n = 1;
    while (n < cap && s + n <= steps) {
        const int64_t prev = s + n - 1, j = s + n;
        if (dumping && (first + prev) % cfg->dump_every == 0)
            break;
        if (hxi_writes_after(cfg, first, prev) || prev == stop_at || prev == next_check)
            break;
        if (periodic && (hxi_stretch_ends(every, prev) || hxi_stretch_starts(every, j, steps)))
            break;
        if (hxi_thermo_after(cfg, first, j, steps, stop_at) || hxi_writes_after(cfg, first, j))
            break;
        n++;
    }
    return n;
}

static hx_status hxi_run(hx_comm *comm, const hx_md_config *cfg, hx_md_system *sys, int64_t first,
                         hxi_md_stop *stop)
{
    const hx_md_engine_ops *ops = NULL;
    hx_md_engine *eng = NULL;
    hxi_md_dump *dump = NULL;
    hx_md_thermo th;
    hxi_progress prog;
    hxi_segments segs = {NULL, 0, 0};
    hxi_md_gather g;
    int rank = hx_comm_rank(comm);
    int64_t steps = cfg->steps > 0 ? cfg->steps : 0;
    double t0, loop, out_time = 0, t;
    hx_status st;

    memset(&g, 0, sizeof g);
    HXI_CHECK(hxi_agree(comm, hxi_choose_engine(comm, cfg, &ops)));
    if (rank == 0) {
        const double *L = sys->decomp.box_len;
        printf("halox-md %d.%d.%d: %lld atoms, fcc density %g, box %g x %g x %g, %d rank(s)\n",
               HX_VERSION_MAJOR, HX_VERSION_MINOR, HX_VERSION_PATCH, (long long) sys->natoms,
               cfg->density, L[0], L[1], L[2], hx_comm_size(comm));
        printf("  lj/cut %g%s, skin %g, neigh_modify every %d delay %d check %s, dt %g, %s\n",
               cfg->rc, cfg->shift_energy ? " shifted" : "", cfg->skin, cfg->neigh_every,
               cfg->neigh_delay, cfg->neigh_check ? "yes" : "no", cfg->dt,
               cfg->nve ? "nve" : "no integrator (atoms stay put)");
        fflush(stdout);
    }
    t = hxi_now();
    st = ops->create(&eng, comm, cfg, sys);
    HXI_CHECK(hxi_agree(comm, st));
    {
        const double t_end = hxi_now();
        hxi_trace_host("engine set-up", t, t_end);
        if (rank == 0)
            hxi_info("set-up on rank 0: engine %.3f s (arrays, first lists and forces)", t_end - t);
    }
    if (rank == 0) {
        printf("  %s\n", ops->describe(eng));
        fflush(stdout);
    }
    if (cfg->checkpoint_file[0]) {
        st = hxi_md_restart_probe(comm, cfg->checkpoint_file);
        if (st != HX_OK)
            goto done;
    }
    if (cfg->write_restart_file[0]) {
        st = hxi_md_restart_probe(comm, cfg->write_restart_file);
        if (st != HX_OK)
            goto done;
    }
    if (cfg->dump_every > 0 && cfg->dump_file[0]) {
        st = hxi_md_dump_open(&dump, comm, cfg->dump_file, cfg->dump_style);
        if (st != HX_OK)
            goto done;
    }

    st = hxi_agree(comm, ops->thermo(eng, &th));
    if (st != HX_OK)
        goto done;
    th.step += first;
    if (rank == 0) {
        hxi_md_thermo_header(stdout);
        hxi_md_thermo_row(stdout, &th);
        fflush(stdout);
    }
    if (dump) {
        st = ops->gather(eng, sys, NULL);
        if (st == HX_OK)
            st = hxi_md_dump_frame(dump, sys, first, (double) first * cfg->dt);
        if (st != HX_OK)
            goto done;
    }
    if (cfg->write_restart_file[0] && cfg->write_restart_after == 0) {
        st = hxi_write_restart(comm, ops, eng, sys, cfg, cfg->write_restart_file, first, &g);
        if (st != HX_OK)
            goto done;
    }

    /* Only for a person watching: never into a file, a pipe or a test log. */
    prog.on = rank == 0 && cfg->progress && isatty(2);
    prog.shown = 0;
    hxi_barrier(comm);
    t0 = hxi_now();
    prog.t0 = prog.last = t0;
    /* With rebuilds on a fixed schedule (check no), the steps between two
     * rebuilds are timed as one stretch, which holds no rebuild and no
     * step with output after it (thermo, dump, restart file: the CPU
     * engine also rebuilds before a restart file). The median of their
     * per-step times is the rebuild-free speed; the loop time gives the
     * mean with rebuilds. Each stretch is synchronised (device and ranks)
     * just after a rebuild step and just before the next, so the
     * synchronisation stays out of it. On one rank, an engine that marks
     * its queued work (ops->mark: the GPU engine) times them on the device
     * instead and nothing waits: those waits left the GPU idle twice a
     * rebuild, which made the mean step longer. With several ranks the
     * barrier stays: it starts every rank's stretch together, which keeps
     * the ranks' skew after a rebuild out of the median (marked, the median
     * got worse, and at small sizes the mean too, the early rank's
     * exchange spinning on the GPU the other still rebuilds on;
     * docs/performance.md, "Timed stretches without waiting" has the
     * numbers). The slowest rank's time of each marked stretch is agreed
     * after the loop. */
    int every = cfg->neigh_every, periodic = !cfg->neigh_check && cfg->neigh_every > 1;
    const int marks = ops->mark && ops->stretch_seconds && hx_comm_size(comm) == 1;
    double seg_t0 = 0;
    int64_t seg_first = 0, seg_rebuilds = 0;
    int seg_clean = 0;
    int64_t stop_at = -1; /* the step after which a stop request ends the run */
    for (int64_t s = 1; s <= steps; s++) {
        int64_t abs = first + s;
        int want = hxi_thermo_after(cfg, first, s, steps, stop_at);
        /* A step after which a restart file is written rebuilds, so that
         * the file continues the run exactly. */
        const int writes = hxi_writes_after(cfg, first, s) || s == stop_at;
        if (ops->rebuild_next && writes) {
            st = ops->rebuild_next(eng);
            if (st != HX_OK)
                break;
        }
        if (periodic && hxi_stretch_starts(every, s, steps)) {
            if (marks) {
                st = ops->mark(eng, 0);
            } else {
                st = ops->sync ? ops->sync(eng) : HX_OK;
                if (st == HX_OK)
                    st = hxi_barrier(comm);
                seg_t0 = hxi_now();
                seg_rebuilds = ops->stats(eng)->rebuilds;
            }
            if (st != HX_OK)
                break;
            seg_first = s;
            seg_clean = 1;
        }
        seg_clean &= !want && !writes && !(dump && abs % cfg->dump_every == 0);
        /* Steps with nothing of the loop's between them go to the engine
         * together (a trace names each step, so it keeps them apart). */
        const int64_t batch = ops->steps && !want && !hxi_trace_on
                                  ? hxi_quiet_steps(cfg, first, s, steps, stop_at, stop->next_check,
                                                    dump != NULL, periodic, HXI_MD_BATCH_MAX)
                                  : 1;
        const double t_step = hxi_trace_on ? hxi_now() : 0.0;
        if (batch > 1) {
            st = ops->steps(eng, (int) batch);
            s += batch - 1;
            abs = first + s;
        } else {
            st = ops->step(eng, want);
        }
        if (hxi_trace_on)
            hxi_trace_host("step", t_step, hxi_now());
        if (st != HX_OK)
            break;
        if (seg_clean && hxi_stretch_ends(every, s)) {
            const double n = (double) (s - seg_first + 1);
            seg_clean = 0;
            if (marks) {
                /* Its step count for now; its time comes after the loop. */
                st = ops->mark(eng, 1);
                if (st == HX_OK)
                    st = hxi_segments_add(&segs, n);
            } else {
                st = ops->sync ? ops->sync(eng) : HX_OK;
                double dt = hxi_now() - seg_t0;
                if (st == HX_OK)
                    st = hxi_allreduce_double(comm, &dt, 1, 1);
                /* (Not timed where the engine rebuilt inside it.) */
                if (st == HX_OK && ops->stats(eng)->rebuilds == seg_rebuilds)
                    st = hxi_segments_add(&segs, 1e6 * dt / n);
            }
            if (st != HX_OK)
                break;
        }
        if (want) {
            const double t_th = hxi_trace_on ? hxi_now() : 0.0;
            st = ops->thermo(eng, &th);
            if (hxi_trace_on)
                hxi_trace_host("thermo", t_th, hxi_now());
            if (st != HX_OK)
                break;
            th.step += first;
            t = hxi_now();
            if (rank == 0) {
                hxi_progress_clear(&prog);
                hxi_md_thermo_row(stdout, &th);
                fflush(stdout);
            }
            out_time += hxi_now() - t;
        }
        if (dump && abs % cfg->dump_every == 0) {
            t = hxi_now();
            st = ops->gather(eng, sys, NULL);
            if (st == HX_OK)
                st = hxi_md_dump_frame(dump, sys, abs, (double) abs * cfg->dt);
            out_time += hxi_now() - t;
            hxi_trace_host("dump", t, hxi_now());
            if (st != HX_OK)
                break;
        }
        if (hxi_writes_after(cfg, first, s) || s == stop_at) {
            t = hxi_now();
            if (cfg->write_restart_file[0] && s == cfg->write_restart_after)
                st = hxi_write_restart(comm, ops, eng, sys, cfg, cfg->write_restart_file, abs, &g);
            if (st == HX_OK && cfg->checkpoint_file[0] &&
                ((cfg->checkpoint_every > 0 && abs % cfg->checkpoint_every == 0) || s == stop_at))
                st = hxi_write_restart(comm, ops, eng, sys, cfg, cfg->checkpoint_file, abs, &g);
            out_time += hxi_now() - t;
            hxi_trace_host("restart file", t, hxi_now());
            if (st != HX_OK)
                break;
        }
        if (s == stop_at) {
            steps = s; /* the summary counts the steps run */
            break;
        }
        if (s < steps) {
            st = hxi_md_stop_poll(stop, comm, s, hxi_now() - t0);
            if (st != HX_OK)
                break;
            if (stop->reason && stop_at < 0)
                stop_at = s + 1;
        }
        if (prog.on) {
            t = hxi_now();
            hxi_progress_tick(&prog, s, steps, t);
            out_time += hxi_now() - t;
        }
    }
    hxi_progress_clear(&prog);
    st = hxi_agree(comm, st);
    if (st != HX_OK)
        goto done;
    loop = hxi_now() - t0;
    if (marks)
        HXI_CHECK_GOTO(hxi_segments_marked(comm, ops, eng, &segs), st, done);
    st = hxi_summary(comm, ops, eng, cfg, sys->natoms, steps, loop, out_time, t0 - stop->t_start,
                     &segs);
    /* Before the engine goes: its GPU records are flushed into the trace. */
    if (st == HX_OK)
        st = hxi_trace_close(comm);
    if (st == HX_OK && stop->reason && rank == 0) {
        char why[64];
        if (stop->reason > 0)
            snprintf(why, sizeof why, "stopped by %s",
                     stop->reason == SIGINT    ? "SIGINT"
                     : stop->reason == SIGTERM ? "SIGTERM"
                                               : "a signal");
        else
            snprintf(why, sizeof why, "stopped by --max-hours %g", cfg->max_hours);
        fflush(stdout);
        if (cfg->checkpoint_file[0])
            fprintf(stderr,
                    "halox-md: %s after step %lld; the state is in %s (continue with "
                    "--restart %s, or read_restart %s in a deck)\n",
                    why, (long long) (first + steps), cfg->checkpoint_file, cfg->checkpoint_file,
                    cfg->checkpoint_file);
        else
            fprintf(stderr,
                    "halox-md: %s after step %lld; no checkpoint was configured (--checkpoint "
                    "FILE, or restart N FILE in a deck), so the state is not saved\n",
                    why, (long long) (first + steps));
    }
done:
    hxi_md_gather_free(&g);
    free(segs.us);
    hxi_md_dump_close(dump);
    if (eng)
        ops->destroy(eng);
    return st;
}

int hx_md_main(int argc, char **argv)
{
    hx_comm *comm = NULL;
    hx_md_config cfg;
    hx_md_cli cli;
    hx_md_system sys;
    hxi_md_stop stop;
    hx_status st;
    int64_t first = 0;
    int rank = 0, rc = 1;
    double t_start = hxi_now();

    /* Before MPI starts: a version query needs no ranks. */
    for (int i = 1; i < argc; i++)
        if (argv[i] && strcmp(argv[i], "--version") == 0) {
            printf("halox-md: %s\n", hx_version_string());
            return 0;
        }
    if (hx_init(&argc, &argv) != HX_OK || hx_comm_create(&comm, NULL) != HX_OK) {
        fprintf(stderr, "halox-md: ERROR: cannot start: %s\n", hx_last_error());
        hx_finalize();
        return 1;
    }
    rank = hx_comm_rank(comm);
    memset(&sys, 0, sizeof sys);
    memset(&cli, 0, sizeof cli);
    hx_md_config_defaults(&cfg);

    st = hxi_agree(comm, hx_md_config_apply_args(&cfg, argc, argv, &cli));
    if (st == HX_OK && cli.help) {
        if (rank == 0)
            hx_md_config_usage(stdout, argc > 0 ? argv[0] : "halox-md");
        rc = 0;
        goto out;
    }
    hxi_md_stop_init(&stop, cfg.max_hours, t_start);
    hxi_md_stop_install();
    if (st == HX_OK)
        st = hxi_trace_open(comm);
    if (st == HX_OK)
        st = hxi_setup(comm, &cfg, &sys, &first);
    if (st == HX_OK)
        st = hxi_run(comm, &cfg, &sys, first, &stop);
    rc = st == HX_OK ? 0 : 1;
    /* Stopped by a signal: the shell's code for it (128 + signal). */
    if (st == HX_OK && stop.reason > 0)
        rc = 128 + stop.reason;
    if (st != HX_OK) {
        if (rank == 0) {
            fflush(stdout);
            fprintf(stderr, "halox-md: ERROR: %s (%s)\n", hx_last_error(), hx_status_string(st));
            fflush(stderr);
        }
        /* The other ranks exit 1 as well: not before rank 0 has said why. */
        hxi_wait_for_root(comm, 5.0);
    }
out:
    free(sys.x);
    free(sys.v);
    free(sys.id);
    fflush(stdout);
    hx_comm_destroy(comm);
    hx_finalize();
    return rc;
}
