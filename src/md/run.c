/*
 * run.c - the halox-md driver: configuration, set-up, and the run: step 0's
 * output, then the loop, which hands the engine the steps up to the next
 * event of its schedule (schedule.h) and writes the thermo table, dumps and
 * restart files; the summary is report.c's.
 *
 * Failure rule: every status is agreed over all ranks (hxi_agree) before a
 * rank acts on it, so a bad deck, an impossible box or a failing rank ends
 * the program on every rank with the same exit code and one message, printed
 * by rank 0; nothing waits for a rank that has already left. Engines agree on
 * their own errors inside step(), which is collective.
 */
#define _POSIX_C_SOURCE 200809L

#include "md/balance.h"
#include "md/deck.h"
#include "md/md_driver.h"
#include "md/pair/pair_styles.h"
#include "md/report.h"
#include "md/restart.h"
#include "md/schedule.h"
#include "md/trace.h"

#include <errno.h>
#include <math.h>
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
    HXI_CHECK(
        hxi_agree(comm, hx_decomp_init_tilted(&sys->decomp, h.box_lo, h.box_len, cfg->tilt, cut,
                                              grid, hx_comm_size(comm), hx_comm_rank(comm))));
    HXI_CHECK(hxi_md_restart_read_atoms(comm, cfg->restart_file, &h, sys));
    *first_step = h.step;
    cfg->first_step = h.step;
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
    HXI_CHECK(hxi_agree(comm, hx_decomp_init_tilted(&sys->decomp, lo, len, cfg->tilt,
                                                    hxi_md_list_cutoff(cfg), grid,
                                                    hx_comm_size(comm), hx_comm_rank(comm))));
    double t0 = hxi_now();
    HXI_CHECK(hxi_agree(comm, hx_md_lattice(sys, cfg)));
    double t1 = hxi_now();
    HXI_CHECK(hxi_agree(comm, hx_md_velocities(sys, cfg, comm)));
    double t2 = hxi_now();
    hxi_trace_host("lattice", t0, t1);
    hxi_trace_host("velocities", t1, t2);
    if (hx_comm_rank(comm) == 0)
        hxi_info("set-up on rank 0: lattice %.3f s, velocities %.3f s", t1 - t0, t2 - t1);
    return HX_OK;
}

/* The deck's balance, then fix balance's first rebalancing (LAMMPS's
 * FixBalance::setup_pre_exchange, at the start of the run; the engine's
 * first build migrates to its cuts). */
static hx_status hxi_setup_balance(hx_comm *comm, hx_md_config *cfg, hx_md_system *sys)
{
    int changed;
    hxi_md_balance_thermo(cfg);
    for (int k = 0; k < cfg->nbalance; k++)
        HXI_CHECK(hxi_agree(comm, hxi_md_balance_setup(comm, &cfg->balance[k], sys)));
    if (cfg->fix_balance.style == HX_MD_BAL_NONE)
        return HX_OK;
    return hxi_agree(comm, hxi_md_balance_fix(comm, &cfg->fix_balance, sys, &changed));
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

/* A run: the engine, the outputs, the schedule, and the loop's state. */
typedef struct hxi_run_state {
    hx_comm *comm;
    const hx_md_config *cfg;
    hx_md_system *sys;
    hxi_md_stop *stop;
    int rank;
    const hx_md_engine_ops *ops;
    hx_md_engine *eng;
    hxi_md_dump *dump;
    hxi_md_gather g;  /* write_restart's file */
    hxi_md_ckpt ckpt; /* the checkpoints */
    hx_md_thermo th;
    hxi_md_sched sched; /* sched.steps: the steps run, once the loop is done */
    hxi_progress prog;
    double t0;       /* the loop's start */
    double out_time; /* in the loop, writing output */
    /* Timed stretches (see hxi_stretch_mode). */
    hxi_md_segments segs;
    int marks;
    double seg_t0;
    int64_t seg_first, seg_rebuilds;
    int seg_clean;
} hxi_run_state;

static void hxi_banner(hx_comm *comm, const hx_md_config *cfg, const hx_md_system *sys,
                       int gpu_engine)
{
    const double *L = sys->decomp.box_len;
    printf("halox-md %d.%d.%d: %lld atoms, fcc density %g, box %g x %g x %g, %d rank(s)\n",
           HX_VERSION_MAJOR, HX_VERSION_MINOR, HX_VERSION_PATCH, (long long) sys->natoms,
           cfg->density, L[0], L[1], L[2], hx_comm_size(comm));
    const hxi_pair_style *ps = hxi_pair_style_of(cfg->pair_style);
    /* newton: as given, else on (the CPU engine, as LAMMPS) or the GPU
     * engine's choice (its description, printed next, says which). */
    const char *newton = (cfg->given & HX_MD_GIVEN_NEWTON) ? (cfg->newton_off ? "off" : "on")
                         : gpu_engine                      ? "chosen by the engine"
                                                           : "on";
    printf("  %s %g%s, skin %g, neigh_modify every %d delay %d check %s, newton %s, dt %g, %s\n",
           ps ? ps->name : "?", cfg->rc, cfg->shift_energy && ps && ps->shifts ? " shifted" : "",
           cfg->skin, cfg->neigh_every, cfg->neigh_delay, cfg->neigh_check ? "yes" : "no", newton,
           cfg->dt, cfg->nve ? "nve" : "no integrator (atoms stay put)");
    fflush(stdout);
}

/* The engine, then the output files: restart files probed, the dump
 * opened. */
static hx_status hxi_run_open(hxi_run_state *r)
{
    hx_comm *comm = r->comm;
    const hx_md_config *cfg = r->cfg;
    HXI_CHECK(hxi_agree(comm, hxi_choose_engine(comm, cfg, &r->ops)));
    if (r->rank == 0)
        hxi_banner(comm, cfg, r->sys, r->ops != &hx_md_engine_cpu && hx_comm_size(comm) > 1);
    const double t = hxi_now();
    const hx_status st = hxi_agree(comm, r->ops->create(&r->eng, comm, cfg, r->sys));
    if (st != HX_OK) {
        r->eng = NULL; /* not destroyed on one rank alone: destroy may be collective */
        return st;
    }
    const double t_end = hxi_now();
    hxi_trace_host("engine set-up", t, t_end);
    if (r->rank == 0) {
        hxi_info("set-up on rank 0: engine %.3f s (arrays, first lists and forces)", t_end - t);
        printf("  %s\n", r->ops->describe(r->eng));
        fflush(stdout);
    }
    if (cfg->checkpoint_file[0])
        HXI_CHECK(hxi_md_restart_probe(comm, cfg->checkpoint_file));
    if (cfg->write_restart_file[0])
        HXI_CHECK(hxi_md_restart_probe(comm, cfg->write_restart_file));
    if (cfg->dump_every > 0 && cfg->dump_file[0])
        HXI_CHECK(hxi_md_dump_open(&r->dump, comm, cfg->dump_file, cfg->dump_style));
    return HX_OK;
}

/* Rank 0 prints the thermo row (after the header where asked); a row that
 * could not be written is an error on every rank. Collective. */
static hx_status hxi_thermo_print(hxi_run_state *r, int header)
{
    hx_status st = HX_OK;
    if (r->rank == 0) {
        hxi_progress_clear(&r->prog);
        if (header)
            hxi_md_thermo_header(stdout, r->cfg);
        hxi_md_thermo_row(stdout, r->cfg, &r->th);
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout))
            st = hxi_error(HX_ERR_IO, "cannot write the thermo output to stdout: %s",
                           errno ? strerror(errno) : "a write error");
    }
    return hxi_agree(r->comm, st);
}

/* A system that blew up ends in one error that says so, never in rows of
 * nan: a row that is not finite, or atoms so hot that their rms speed
 * (3 T / m in LJ units) carries them farther in one step than both the
 * neighbour-list cutoff (pair cutoff + skin) and the size of an atom
 * (sigma, Morse's r0). The
 * same on every rank (the values are reduced). */
static hx_status hxi_thermo_sane(const hx_md_thermo *th, const hx_md_config *cfg)
{
    const char *why = "non-finite energy/temperature";
    char hot[160];
    if (isfinite(th->temp) && isfinite(th->epair) && isfinite(th->etotal) && isfinite(th->press)) {
        const double hop = sqrt(3.0 * fmax(th->temp, 0.0) / cfg->mass) * cfg->dt;
        const double reach =
            fmax(hxi_md_list_cutoff(cfg), hxi_pair_size(cfg->pair_style, cfg->pair));
        if (!(hop > reach))
            return HX_OK;
        snprintf(hot, sizeof hot,
                 "atoms move %.3g per step (their rms speed), farther than %g (the pair cutoff "
                 "plus the skin, or an atom's size)",
                 hop, reach);
        why = hot;
    }
    return hxi_error(HX_ERR_COORD_NAN,
                     "the system blew up at step %lld: %s (T %g, E_pair %g, TotEng %g, Press %g); "
                     "the timestep may be too large or atoms overlap",
                     (long long) th->step, why, th->temp, th->epair, th->etotal, th->press);
}

/* Step 0's output: the thermo header and row, a dump frame, and
 * write_restart's file where it is written after 0 steps. */
static hx_status hxi_run_step0(hxi_run_state *r, int64_t first)
{
    const hx_md_config *cfg = r->cfg;
    HXI_CHECK(hxi_agree(r->comm, r->ops->thermo(r->eng, &r->th)));
    r->th.step += first;
    HXI_CHECK(hxi_thermo_print(r, 1));
    HXI_CHECK(hxi_thermo_sane(&r->th, cfg));
    if (r->dump) {
        HXI_CHECK(r->ops->gather(r->eng, r->sys, NULL));
        HXI_CHECK(hxi_md_dump_frame(r->dump, r->sys, first, (double) first * cfg->dt));
    }
    if (cfg->write_restart_file[0] && cfg->write_restart_after == 0)
        HXI_CHECK(hxi_md_write_state(r->comm, r->ops, r->eng, r->sys, cfg, cfg->write_restart_file,
                                     first, &r->g));
    return HX_OK;
}

/* With rebuilds on a fixed schedule (check no), the steps between two
 * rebuilds are timed as one stretch, which holds no rebuild and no
 * step with output after it (thermo, dump, restart file). The median of their
 * per-step times is the rebuild-free speed; the loop time gives the
 * mean with rebuilds. Each stretch is synchronised (device and ranks)
 * just after a rebuild step and just before the next, so the
 * synchronisation stays out of it. On one rank, an engine that marks
 * its queued work (ops->mark: the GPU engine) times them on the device
 * instead and nothing waits: the waits would leave the GPU idle twice a
 * rebuild. With several ranks the barrier stays: it starts every rank's
 * stretch together, which keeps the ranks' skew after a rebuild out of
 * the median (docs/performance-2026-11.md and docs/performance.md have
 * the measurements). The slowest rank's time of each marked stretch is
 * agreed after the loop. Returns whether stretches are marked. */
static int hxi_stretch_mode(hx_comm *comm, const hx_md_engine_ops *ops)
{
    return ops->mark && ops->stretch_seconds && hx_comm_size(comm) == 1;
}

/* Before step s: where a timed stretch starts, its mark, or the engine
 * and the ranks synchronised and the clock read. */
static hx_status hxi_stretch_start(hxi_run_state *r, int64_t s)
{
    if (r->marks) {
        HXI_CHECK(r->ops->mark(r->eng, 0));
    } else {
        HXI_CHECK(r->ops->sync ? r->ops->sync(r->eng) : HX_OK);
        HXI_CHECK(hxi_barrier(r->comm));
        r->seg_t0 = hxi_now();
        r->seg_rebuilds = r->ops->stats(r->eng)->rebuilds;
    }
    r->seg_first = s;
    r->seg_clean = 1;
    return HX_OK;
}

/* After step s, the last of a clean stretch: its step count (marked; its
 * time comes after the loop) or its per-step time, the slowest rank's
 * (not where the engine rebuilt inside it). */
static hx_status hxi_stretch_end(hxi_run_state *r, int64_t s)
{
    const double n = (double) (s - r->seg_first + 1);
    r->seg_clean = 0;
    if (r->marks) {
        HXI_CHECK(r->ops->mark(r->eng, 1));
        return hxi_md_segments_add(&r->segs, n);
    }
    HXI_CHECK(r->ops->sync ? r->ops->sync(r->eng) : HX_OK);
    double dt = hxi_now() - r->seg_t0;
    HXI_CHECK(hxi_allreduce_double(r->comm, &dt, 1, 1));
    if (r->ops->stats(r->eng)->rebuilds == r->seg_rebuilds)
        HXI_CHECK(hxi_md_segments_add(&r->segs, 1e6 * dt / n));
    return HX_OK;
}

/* Before step s: the start of a timed stretch. A stretch stays clean
 * while its steps have no output after them (as the first step of each
 * batch tells). */
static hx_status hxi_before_steps(hxi_run_state *r, int64_t s, int want)
{
    const int writes = hxi_md_restart_at(&r->sched, s);
    if (hxi_md_next_stretch_start(&r->sched, s) == s)
        HXI_CHECK(hxi_stretch_start(r, s));
    r->seg_clean &= !want && !writes && !hxi_md_dump_at(&r->sched, s);
    return HX_OK;
}

/* Steps s .. e, in one call where the engine takes several (a trace names
 * each step, so it keeps them apart). */
static hx_status hxi_engine_steps(hxi_run_state *r, int64_t s, int64_t e, int want)
{
    const double t = hxi_trace_on ? hxi_now() : 0.0;
    const hx_status st =
        e > s ? r->ops->steps(r->eng, (int) (e - s + 1)) : r->ops->step(r->eng, want);
    if (hxi_trace_on)
        hxi_trace_host("step", t, hxi_now());
    if (st == HX_ERR_COORD_NAN || st == HX_ERR_COORD_OUTSIDE) {
        /* Coordinates no longer finite, or an atom farther from its domain
         * than a rebuild can take it: a blow-up. Say so and when; the
         * library's words follow. */
        char what[1024];
        snprintf(what, sizeof what, "%s", hx_last_error());
        return hxi_error(st,
                         "the system blew up between steps %lld and %lld: atoms moved too far "
                         "in a step (the timestep may be too large or atoms overlap); %s",
                         (long long) (r->sched.first + s - 1), (long long) (r->sched.first + e),
                         what);
    }
    return st;
}

static hx_status hxi_thermo_out(hxi_run_state *r)
{
    const double t_th = hxi_trace_on ? hxi_now() : 0.0;
    const hx_status st = r->ops->thermo(r->eng, &r->th);
    if (hxi_trace_on)
        hxi_trace_host("thermo", t_th, hxi_now());
    HXI_CHECK(st);
    r->th.step += r->sched.first;
    HXI_CHECK(hxi_thermo_sane(&r->th, r->cfg));
    const double t = hxi_now();
    const hx_status st_out = hxi_thermo_print(r, 0);
    r->out_time += hxi_now() - t;
    return st_out;
}

static hx_status hxi_dump_out(hxi_run_state *r, int64_t abs)
{
    const double t = hxi_now();
    hx_status st = r->ops->gather(r->eng, r->sys, NULL);
    if (st == HX_OK)
        st = hxi_md_dump_frame(r->dump, r->sys, abs, (double) abs * r->cfg->dt);
    r->out_time += hxi_now() - t;
    hxi_trace_host("dump", t, hxi_now());
    return st;
}

/* After step s: write_restart's file, a checkpoint (on its schedule, or
 * that of a stop). */
static hx_status hxi_restart_out(hxi_run_state *r, int64_t s)
{
    const hx_md_config *cfg = r->cfg;
    const int64_t abs = r->sched.first + s;
    const double t = hxi_now();
    hx_status st = HX_OK;
    if (cfg->write_restart_file[0] && s == cfg->write_restart_after)
        st = hxi_md_write_state(r->comm, r->ops, r->eng, r->sys, cfg, cfg->write_restart_file, abs,
                                &r->g);
    if (st == HX_OK && cfg->checkpoint_file[0] &&
        ((cfg->checkpoint_every > 0 && abs % cfg->checkpoint_every == 0) || s == r->sched.stop_at))
        st = hxi_md_ckpt_write(&r->ckpt, r->comm, r->ops, r->eng, r->sys, cfg, abs,
                               s > 0 ? (t - r->t0) / (double) s : 0.0);
    r->out_time += hxi_now() - t;
    hxi_trace_host("restart file", t, hxi_now());
    return st;
}

/* After step s (not the last): the ranks' look at signals and the time
 * limit, when it is due; a stop ends the run after the next step. */
static hx_status hxi_stop_check(hxi_run_state *r, int64_t s)
{
    HXI_CHECK(hxi_md_stop_poll(r->stop, r->comm, s, hxi_now() - r->t0));
    if (r->stop->reason && r->sched.stop_at < 0)
        r->sched.stop_at = s + 1;
    return HX_OK;
}

/* One pass of the loop: steps s .. e (e the nearest scheduled event, at
 * most HXI_MD_BATCH_MAX on), then what is due after e. *done: the run
 * ends after e. */
static hx_status hxi_run_batch(hxi_run_state *r, int64_t s, int64_t *e_out, int *done)
{
    hxi_md_sched *c = &r->sched;
    const int want = hxi_md_thermo_at(c, s);
    const int64_t e = r->ops->steps && !want && !hxi_trace_on
                          ? hxi_md_sched_next(c, s, r->stop->next_check, HXI_MD_BATCH_MAX)
                          : s;
    *e_out = e;
    HXI_CHECK(hxi_before_steps(r, s, want));
    HXI_CHECK(hxi_engine_steps(r, s, e, want));
    if (r->seg_clean && hxi_md_next_stretch_end(c, e) == e)
        HXI_CHECK(hxi_stretch_end(r, e));
    if (want)
        HXI_CHECK(hxi_thermo_out(r));
    if (r->dump && hxi_md_dump_at(c, e))
        HXI_CHECK(hxi_dump_out(r, c->first + e));
    if (hxi_md_restart_at(c, e))
        HXI_CHECK(hxi_restart_out(r, e));
    if (e == c->stop_at) {
        c->steps = e; /* the summary counts the steps run */
        *done = 1;
        return HX_OK;
    }
    if (e < c->steps)
        HXI_CHECK(hxi_stop_check(r, e));
    if (r->prog.on) {
        const double t = hxi_now();
        hxi_progress_tick(&r->prog, e, c->steps, t);
        r->out_time += hxi_now() - t;
    }
    return HX_OK;
}

/* The loop: batches of steps up to the next event, until the run's end or
 * a stop. */
static hx_status hxi_run_loop(hxi_run_state *r)
{
    int done = 0;
    for (int64_t s = 1, e = 0; s <= r->sched.steps && !done; s = e + 1)
        HXI_CHECK(hxi_run_batch(r, s, &e, &done));
    return HX_OK;
}

/* After the loop: the stretches' times, the summary, the trace, and the
 * word on a stop. */
static hx_status hxi_run_finish(hxi_run_state *r, double loop)
{
    const hxi_md_sched *c = &r->sched;
    if (r->marks)
        HXI_CHECK(hxi_md_segments_marked(r->comm, r->ops, r->eng, &r->segs));
    HXI_CHECK(hxi_md_summary(r->comm, r->ops, r->eng, r->cfg, r->sys->natoms, c->steps, loop,
                             r->out_time, r->t0 - r->stop->t_start, &r->segs));
    /* Before the engine goes: its GPU records are flushed into the trace. */
    HXI_CHECK(hxi_trace_close(r->comm));
    if (r->rank == 0)
        hxi_md_ckpt_summary(&r->ckpt, r->cfg);
    if (r->stop->reason && r->rank == 0)
        hxi_md_stop_message(&r->ckpt, r->cfg, r->stop->reason, c->first + c->steps);
    return HX_OK;
}

/* The run: engine and outputs, step 0's output, the loop, the summary. */
static hx_status hxi_run(hx_comm *comm, const hx_md_config *cfg, hx_md_system *sys, int64_t first,
                         hxi_md_stop *stop)
{
    hxi_run_state r;
    memset(&r, 0, sizeof r);
    r.comm = comm;
    r.cfg = cfg;
    r.sys = sys;
    r.stop = stop;
    r.rank = hx_comm_rank(comm);
    hx_status st = hxi_run_open(&r);
    if (st == HX_OK)
        st = hxi_run_step0(&r, first);
    if (st == HX_OK) {
        hxi_md_sched_init(&r.sched, cfg, first, cfg->steps > 0 ? cfg->steps : 0, r.dump != NULL);
        /* Only for a person watching: never into a file, a pipe or a test log. */
        r.prog.on = r.rank == 0 && cfg->progress && isatty(2);
        hxi_barrier(comm);
        r.t0 = hxi_now();
        r.prog.t0 = r.prog.last = r.t0;
        r.marks = hxi_stretch_mode(comm, r.ops);
        st = hxi_run_loop(&r);
        hxi_progress_clear(&r.prog);
        st = hxi_agree(comm, st);
    }
    if (st == HX_OK)
        st = hxi_run_finish(&r, hxi_now() - r.t0);
    hxi_md_gather_free(&r.g);
    hxi_md_ckpt_free(&r.ckpt);
    free(r.segs.us);
    const hx_status dst = hxi_md_dump_close(r.dump);
    if (st == HX_OK)
        st = dst;
    if (r.eng)
        r.ops->destroy(r.eng);
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
        st = hxi_setup_balance(comm, &cfg, &sys);
    if (st == HX_OK)
        st = hxi_run(comm, &cfg, &sys, first, &stop);
    rc = st == HX_OK ? 0 : 1;
    /* Stopped by a signal: the shell's code for it (128 + signal). */
    if (st == HX_OK && stop.reason > 0)
        rc = 128 + stop.reason;
    if (st != HX_OK) {
        /* A rank whose wait for a peer ran out speaks for itself (rank 0
         * may be the one gone) and ends the job: MPI_Finalize would wait. */
        const int broken = hxi_comm_broken(comm);
        if (rank == 0 || broken) {
            fflush(stdout);
            fprintf(stderr, "halox-md: ERROR: %s (%s)\n", hx_last_error(), hx_status_string(st));
            fflush(stderr);
        }
        if (broken)
            hxi_comm_abort(comm, 1);
        /* The other ranks exit 1 as well: not before rank 0 has said why. */
        hxi_wait_for_root(comm, 5.0);
    }
out:
    free(sys.x);
    free(sys.v);
    free(sys.id);
    free(sys.type);
    free(sys.xref);
    fflush(stdout);
    hx_comm_destroy(comm);
    hx_finalize();
    return rc;
}
