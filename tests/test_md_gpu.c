/*
 * test_md_gpu.c - the GPU engine (float) against the CPU engine (double)
 * and an all-pairs double sum, with every transport built.
 *
 * The system: fcc at 0.8442 with the default velocities, each atom pushed
 * off its site by up to 0.05 in each coordinate (seeded by atom id, so the
 * same on any rank count) so that forces are not zero by symmetry.
 * For each transport (with more than one rank, each device transport; the
 * host-memory `cpu` transport must be refused there):
 *  - step 0: E_pair per atom and pressure equal the all-pairs sum to 1e-5
 *    relative; every force component matches the CPU engine's within
 *        1e-4 * max(|F_i|, F_rms) + K_i * 2 sqrt(3) u
 *    where F_rms is the root mean square force magnitude, u = L 2^-24 bounds
 *    the rounding of a coordinate to float (L the longest box edge) and
 *    K_i = sum over i's pairs within rc of |dF/dr| + |F|/r, the most the
 *    force on i can change per unit of relative displacement: the engine
 *    computes from float positions, so this much is inherent. An atom with a
 *    pair within 1e-5 of rc may also differ by |F(rc)| (float and double may
 *    disagree on which side of rc such a pair lies).
 *  - 100 steps: Temp, E_pair, TotEng and Press within 1e-3 relative of the
 *    CPU run (Press with a floor of 0.1, as it can pass near zero); every
 *    atom still present exactly once; the same rebuild count as the CPU
 *    engine with `every 20 check no` and within one with `every 1 check yes`.
 * With one rank the default transport also runs with host-path rebuilds
 * (HALOX_MD_REBUILD=host) and with steps launched kernel by kernel instead
 * of replayed from CUDA graphs (HALOX_MD_GRAPH_STEPS=0); both must pass the
 * same checks. With several ranks, nvshmem-fused and nvshmem-fused-tma run in
 * graph mode (the steps between rebuild and thermo steps replayed from one
 * CUDA graph): with `every 20` some steps must have been replayed, and with
 * `every 1 check yes` (every step a rebuild candidate, decided by a vote on
 * the device) too, and with every other transport none; nvshmem-fused also
 * runs with HALOX_MD_GRAPH_STEPS=0 (none replayed). All of them pass the same
 * checks.
 *
 * --withhold: instead, graph mode with a failing rank. The last rank skips
 * its coordinate sends in one replayed step (HALOX_TEST_WITHHOLD, a 1 s
 * timeout): every step up to the next rebuild must return HX_OK (errors
 * wait for the check), that step must fail with HX_ERR_TIMEOUT on every
 * rank, and the engine must go away cleanly (a hang is the test's timeout).
 * Then the same with `every 1 check yes`, where the ranks vote on each
 * rebuild on the device: the next vote after the lost exchange stops every
 * rank, so the run must fail with HX_ERR_TIMEOUT within a step of the
 * withheld one, at the same step on every rank.
 *
 * With several ranks the default transport also runs with host-path
 * rebuilds (HALOX_MD_REBUILD=host), the reference of the device rebuild,
 * and every device rebuild checks the atom count and id checksum and its
 * lists, built in two halves, against those of the one-pass build
 * (HALOX_MD_CHECK=all: the local list slot by slot, each non-local list as
 * a set). The device rebuild's three size rules take a large system's
 * choices with `every 20` (HALOX_MD_REBUILD=large: among them, the
 * non-local forces visit only the atoms with a non-local list or a map
 * entry, and the check compares that set with one found on the host) and
 * a small system's with `every 1 check yes` (HALOX_MD_REBUILD=small: among
 * them, the non-local lists built from the plan's arrays and the plan's
 * first count ahead of the cell sort).
 *
 * --compare-rebuilds: instead, device against host-path rebuilds over the
 * whole run (see compare_rebuilds for the bounds); --compare-newton: newton
 * on against newton off over the whole run, by the same bounds. --tight: instead, the
 * default transport with arrays sized without margin (HALOX_MD_TIGHT=1),
 * so that device rebuilds grow them: the run must match the CPU engine and
 * some rank must have grown.
 *
 * Options: --cells N (cubic, default 10), --grid AxBxC, --steps N, --withhold,
 * --build-lanes 1|8 (the list build's lanes per atom, chosen by size otherwise),
 * --ring N (ring slots a lane of the one-thread build fills ahead, HALOX_MD_RING),
 * --compare-rebuilds, --tight, --newton on|off (the GPU engine's runs; the
 * CPU engine runs newton on: newton off's forces against newton on's),
 * --tilt XY,XZ,YZ (a triclinic box, LAMMPS's restricted one, its tilts in
 * lattice cells; the all-pairs sum takes the triclinic minimum image).
 * Exits 77 where no rank sees a GPU. Transports that refuse the setting
 * (nccl with several ranks on one GPU) are reported and skipped.
 */
#define _POSIX_C_SOURCE 200809L

#include "md_gpu_faults.h"
#include "md_gpu_util.h"
#include "md_util.h"

#include "core/hxi.h"
#include "md/gpu/md_gpu.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AMP 0.05

static int64_t last_growths; /* of the last run_gpu engine, this rank */
/* --newton on|off: the GPU engine's runs as given (-1: its own choice);
 * the CPU engine, the reference, runs newton on. */
static int newton_arg = -1;
/* --tilt: xy, xz, yz in lattice cells (all 0: an orthorhombic box). */
static double tilt_arg[3];

/* The box of cfg tilted by --tilt (box units: a cell is L / ncells). */
static void with_tilt(hx_md_config *cfg)
{
    double lo[3], L[3];
    if (tilt_arg[0] == 0.0 && tilt_arg[1] == 0.0 && tilt_arg[2] == 0.0)
        return;
    if (hx_md_box(cfg, lo, L) != HX_OK)
        return;
    cfg->triclinic = 1;
    cfg->tilt[0] = tilt_arg[0] * L[0] / cfg->cells[0];
    cfg->tilt[1] = tilt_arg[1] * L[0] / cfg->cells[0];
    cfg->tilt[2] = tilt_arg[2] * L[1] / cfg->cells[1];
}

static void gpu_newton(hx_md_config *cfg)
{
    if (newton_arg < 0)
        return;
    cfg->newton_off = newton_arg;
    cfg->given |= HX_MD_GIVEN_NEWTON;
}

typedef struct ref_t {
    double e, w;   /* pair energy (unshifted) and sum r.F over pairs within rc */
    double npairs; /* pairs within rc */
    double *near;  /* per atom: 1 when it has a pair within 1e-5 of rc */
    double *stiff; /* per atom: sum over its pairs of |dF/dr| + |F|/r */
    double u;      /* bound on the rounding of a coordinate to float */
} ref_t;

static void perturb(hx_md_system *sys)
{
    for (int i = 0; i < sys->n; i++) {
        hxt_rng r = {0x5eedull ^ ((uint64_t) sys->id[i] * 0x9e3779b97f4a7c15ull)};
        for (int k = 0; k < 3; k++)
            sys->x[3 * i + k] += AMP * (2.0 * hxt_uniform(&r) - 1.0);
    }
}

static hx_status setup(hx_comm *comm, const hx_md_config *cfg, hx_md_system *sys)
{
    HXI_CHECK(hxt_md_system(comm, cfg, sys));
    perturb(sys);
    return HX_OK;
}

/* The minimum image of d in the box of edges (L[0], 0, 0), (xy, L[1], 0),
 * (xz, yz, L[2]): along z, then y, then x, as LAMMPS's
 * Domain::minimum_image (exact for pairs within half the box's heights). */
static void min_image(double d[3], const double L[3], const double t[3])
{
    const double mz = nearbyint(d[2] / L[2]);
    d[2] -= mz * L[2];
    d[1] -= mz * t[2];
    d[0] -= mz * t[1];
    const double my = nearbyint(d[1] / L[1]);
    d[1] -= my * L[1];
    d[0] -= my * t[0];
    d[0] -= nearbyint(d[0] / L[0]) * L[0];
}

/* Every pair i < j once, minimum image in every dimension, rows split over
 * the ranks; x is every atom by id. */
static void ref_pairs(const double *x, int64_t n, const double L[3], const hx_md_config *cfg,
                      int rank, int size, ref_t *out)
{
    const double rc2 = cfg->rc * cfg->rc, s2 = cfg->pair[1] * cfg->pair[1], eps = cfg->pair[0];
    double e = 0, w = 0, np = 0;
    for (int64_t i = rank; i < n; i += size) {
        for (int64_t j = i + 1; j < n; j++) {
            double d[3];
            for (int k = 0; k < 3; k++)
                d[k] = x[3 * i + k] - x[3 * j + k];
            min_image(d, L, cfg->tilt);
            const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            if (fabs(sqrt(r2) - cfg->rc) < 1e-5)
                out->near[i] = out->near[j] = 1.0;
            if (r2 < rc2) {
                double q = s2 / r2, q6 = q * q * q, r = sqrt(r2);
                e += 4.0 * eps * (q6 * q6 - q6);
                w += 24.0 * eps * (2.0 * q6 * q6 - q6);
                np += 1;
                /* F(r) = 24 eps (2 q6^2 - q6) / r; dF/dr = 24 eps (7 q6 - 26 q6^2) / r^2 */
                double fr = fabs(24.0 * eps * (2.0 * q6 * q6 - q6) / r);
                double dfdr = fabs(24.0 * eps * (7.0 * q6 - 26.0 * q6 * q6) / r2);
                out->stiff[i] += dfdr + fr / r;
                out->stiff[j] += dfdr + fr / r;
            }
        }
    }
    out->e = e;
    out->w = w;
    out->npairs = np;
}

/* The CPU engine's run: thermo at step 0 and at the end, forces at step 0. */
typedef struct cpu_run {
    hx_md_thermo th0, th_end;
    double *f0; /* by id */
    double *x0; /* by id */
    double *v0; /* by id */
    int64_t rebuilds;
} cpu_run;

static int run_cpu(hx_comm *comm, const hx_md_config *cfg, int steps, cpu_run *out)
{
    hx_md_system sys;
    hx_md_engine *eng = NULL;
    double *f = NULL;
    int ok = 0;
    int64_t N;
    if (!HXT_OK(setup(comm, cfg, &sys)) || !HXT_OK(hx_md_engine_cpu.create(&eng, comm, cfg, &sys)))
        goto done;
    N = sys.natoms;
    out->f0 = malloc((size_t) N * 3 * sizeof(double));
    out->x0 = malloc((size_t) N * 3 * sizeof(double));
    out->v0 = malloc((size_t) N * 3 * sizeof(double));
    if (!out->f0 || !out->x0 || !out->v0) {
        HXT_CHECK(0, "out of memory");
        goto done;
    }
    if (!HXT_OK(hx_md_engine_cpu.thermo(eng, &out->th0)) ||
        !HXT_OK(hx_md_engine_cpu.gather(eng, &sys, &f)) ||
        !HXT_OK(hxt_md_by_id(comm, &sys, f, 3, out->f0)) ||
        !HXT_OK(hxt_md_by_id(comm, &sys, sys.x, 3, out->x0)) ||
        !HXT_OK(hxt_md_by_id(comm, &sys, sys.v, 3, out->v0)))
        goto done;
    for (int s = 1; s <= steps; s++)
        if (!HXT_OK(hx_md_engine_cpu.step(eng, s == steps || s == steps / 2)))
            goto done;
    if (!HXT_OK(hx_md_engine_cpu.thermo(eng, &out->th_end)))
        goto done;
    out->rebuilds = hx_md_engine_cpu.stats(eng)->rebuilds;
    ok = 1;
done:
    if (eng)
        hx_md_engine_cpu.destroy(eng);
    hxt_md_free(&sys, NULL);
    return ok;
}

static int thermo_close(const hx_md_thermo *a, const hx_md_thermo *b, double rel)
{
    return hxt_md_close(a->temp, b->temp, rel, 0) && hxt_md_close(a->epair, b->epair, rel, 0) &&
           hxt_md_close(a->etotal, b->etotal, rel, 0) && hxt_md_close(a->press, b->press, rel, 0.1);
}

/* One GPU run with transport `name`; compares with the CPU run and the
 * reference (ref == NULL: skip the step-0 comparisons). graphs: 1 when some
 * steps must have been replayed from CUDA graphs, 0 when none may have
 * been, -1 either. */
static void run_gpu(hx_comm *comm, const hx_md_config *base, const char *name, int steps,
                    const cpu_run *cpu, const ref_t *ref, int exact_rebuilds, int graphs)
{
    int rank = hx_comm_rank(comm), size = hx_comm_size(comm);
    hx_md_config cfg = *base;
    hx_md_system sys;
    hx_md_engine *eng = NULL;
    hx_md_thermo th0, th;
    double *f = NULL, *fall = NULL, *cnt = NULL;
    int64_t N;
    hx_status st;

    snprintf(cfg.transport, sizeof cfg.transport, "%s", name);
    gpu_newton(&cfg);
    if (!HXT_OK(setup(comm, &cfg, &sys)))
        return;
    N = sys.natoms;
    st = hx_md_engine_gpu.create(&eng, comm, &cfg, &sys);
    if (size > 1 && (hx_transport_caps_of(name) & HX_CAP_HOST)) {
        HXT_CHECK(st == HX_ERR_UNSUPPORTED, "transport cpu with %d ranks: %s, want refusal", size,
                  hx_status_string(st));
        goto done;
    }
    if (st == HX_ERR_UNSUPPORTED) {
        if (rank == 0)
            printf("  %-16s skipped: %s\n", name, hx_last_error());
        goto done;
    }
    if (!HXT_OK(st))
        goto done;
    if (rank == 0)
        printf("  %-16s %s\n", name, hx_md_engine_gpu.describe(eng));

    fall = malloc((size_t) N * 3 * sizeof(double));
    cnt = malloc((size_t) N * sizeof(double));
    if (!fall || !cnt) {
        HXT_CHECK(0, "out of memory");
        goto done;
    }
    if (!HXT_OK(hx_md_engine_gpu.thermo(eng, &th0)))
        goto done;
    if (ref) {
        const double *L = sys.decomp.box_len;
        double V = L[0] * L[1] * L[2], mv2 = 0;
        for (int64_t i = 0; i < 3 * N; i++)
            mv2 += cfg.mass * cpu->v0[i] * cpu->v0[i];
        double epair = ref->e / N, press = (mv2 + ref->w) / (3.0 * V);
        if (rank == 0)
            printf("    step 0: E_pair %.10f (all pairs %.10f), Press %.10f (all pairs %.10f)\n",
                   th0.epair, epair, th0.press, press);
        HXT_CHECK(hxt_md_close(th0.epair, epair, 1e-5, 0), "%s: E_pair %.12g, all pairs %.12g",
                  name, th0.epair, epair);
        HXT_CHECK(hxt_md_close(th0.press, press, 1e-5, 0), "%s: Press %.12g, all pairs %.12g", name,
                  th0.press, press);
        HXT_CHECK(hxt_md_close(th0.temp, cpu->th0.temp, 1e-6, 0), "%s: Temp %.12g, cpu %.12g", name,
                  th0.temp, cpu->th0.temp);
        HXT_CHECK(fabs(press) > 0.1, "the reference pressure %g is too small to test", press);
    }
    /* Forces at step 0 against the CPU engine's. */
    if (!HXT_OK(hx_md_engine_gpu.gather(eng, &sys, &f)) ||
        !HXT_OK(hxt_md_by_id(comm, &sys, f, 3, fall)))
        goto done;
    {
        double s2 = 0, worst = 0, fc;
        int64_t bad = 0, worst_id = -1;
        double q = cfg.pair[1] * cfg.pair[1] / (cfg.rc * cfg.rc), q6 = q * q * q;
        fc = fabs(24.0 * cfg.pair[0] * (2.0 * q6 * q6 - q6) / cfg.rc);
        for (int64_t i = 0; i < N; i++)
            for (int k = 0; k < 3; k++)
                s2 += cpu->f0[3 * i + k] * cpu->f0[3 * i + k];
        double frms = sqrt(s2 / (double) N);
        for (int64_t i = 0; i < N; i++) {
            const double *a = fall + 3 * i, *b = cpu->f0 + 3 * i;
            double mag = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
            /* The other styles have no all-pairs oracle to bound the float
             * error of their stiffest pairs (ref->stiff), so their bound is
             * wider: the perturbed lattice's most compressed atom comes to
             * about 1e-4 of its force with lj/smooth/linear. */
            const double rel = cfg.pair_style == HX_PAIR_LJ_CUT ? 1e-4 : 3e-4;
            double tol = rel * (mag > frms ? mag : frms);
            if (ref) {
                tol += ref->stiff[i] * 2.0 * sqrt(3.0) * ref->u;
                if (ref->near[i] > 0)
                    tol += fc;
            }
            for (int k = 0; k < 3; k++) {
                double d = fabs(a[k] - b[k]) / tol;
                if (!(d <= 1.0))
                    bad++;
                if (!(d <= worst)) {
                    worst = d;
                    worst_id = i;
                }
            }
        }
        if (rank == 0)
            printf("    step 0 forces: F_rms %.4g, worst |dF|/tol %.3g (atom %lld)\n", frms, worst,
                   (long long) worst_id);
        HXT_CHECK(bad == 0, "%s: %lld force components off (worst %.3g tolerances, atom %lld)",
                  name, (long long) bad, worst, (long long) worst_id);
        HXT_CHECK(frms > 1.0, "F_rms %g: the perturbed lattice should have real forces", frms);
    }
    for (int s = 1; s <= steps; s++)
        if (!HXT_OK(hx_md_engine_gpu.step(eng, s == steps || s == steps / 2)))
            goto done;
    if (!HXT_OK(hx_md_engine_gpu.thermo(eng, &th)))
        goto done;
    if (rank == 0)
        printf("    step %d: Temp %.8f E_pair %.8f TotEng %.8f Press %.8f (cpu %.8f %.8f %.8f "
               "%.8f)\n",
               steps, th.temp, th.epair, th.etotal, th.press, cpu->th_end.temp, cpu->th_end.epair,
               cpu->th_end.etotal, cpu->th_end.press);
    HXT_CHECK(th.step == steps, "%s: thermo step %lld, want %d", name, (long long) th.step, steps);
    HXT_CHECK(thermo_close(&th, &cpu->th_end, 1e-3),
              "%s: step %d thermo off the CPU run by more than 1e-3", name, steps);
    {
        const hx_md_stats *stt = hx_md_engine_gpu.stats(eng);
        int64_t d = stt->rebuilds - cpu->rebuilds;
        if (rank == 0)
            printf("    rebuilds %lld (cpu %lld), steps %lld\n", (long long) stt->rebuilds,
                   (long long) cpu->rebuilds, (long long) stt->steps);
        HXT_CHECK(exact_rebuilds ? d == 0 : (d >= -1 && d <= 1),
                  "%s: %lld rebuilds, the CPU engine %lld", name, (long long) stt->rebuilds,
                  (long long) cpu->rebuilds);
        HXT_CHECK(stt->steps == steps, "%s: stats count %lld steps", name, (long long) stt->steps);
    }
    {
        long long replayed = (long long) hxg_engine_graph_steps(eng);
        if (rank == 0)
            printf("    %s: steps replayed from CUDA graphs: %lld of %d (rank 0)\n", name, replayed,
                   steps);
        if (graphs >= 0)
            HXT_CHECK(graphs ? replayed > 0 : replayed == 0,
                      "%s: %lld steps replayed from CUDA graphs, want %s", name, replayed,
                      graphs ? "some" : "none");
    }
    /* Every atom still present exactly once. */
    if (!HXT_OK(hx_md_engine_gpu.gather(eng, &sys, NULL)))
        goto done;
    {
        int badid = 0;
        memset(cnt, 0, (size_t) N * sizeof(double));
        for (int i = 0; i < sys.n; i++) {
            if (sys.id[i] < 0 || sys.id[i] >= N)
                badid++;
            else
                cnt[sys.id[i]] += 1.0;
        }
        HXT_CHECK(badid == 0, "%s: %d atom ids out of range", name, badid);
        if (HXT_OK(hxi_allreduce_double(comm, cnt, (int) N, 0))) {
            int64_t off = 0;
            for (int64_t i = 0; i < N; i++)
                off += cnt[i] != 1.0;
            HXT_CHECK(off == 0, "%s: %lld atoms missing or duplicated after %d steps", name,
                      (long long) off, steps);
        }
    }
done:
    if (eng) {
        last_growths = hxg_engine_growths(eng);
        hx_md_engine_gpu.destroy(eng);
    }
    free(fall);
    free(cnt);
    hxt_md_free(&sys, NULL);
}

/* --compare-rebuilds: the default transport with device rebuilds and with
 * host-path rebuilds (HALOX_MD_REBUILD=host), thermo every 100 steps.
 * The two wrap coordinates differently (float on the device, double on the
 * host), so their trajectories part at rounding level after the first
 * wrap, and the chaos of a liquid grows that: up to step 100 every thermo
 * value agrees to 2e-3 (each is within 1e-3 of the CPU engine there);
 * after, the total energy, which both conserve, to 1e-3, and the
 * fluctuating Temp, E_pair and Press to 5%, 2% and 0.15 (about three
 * standard deviations of the difference of two independent 32,000-atom
 * samples). Both must rebuild equally often and count every atom. */
static void run_series(hx_comm *comm, const hx_md_config *base, int steps, hx_md_thermo *out,
                       int64_t *rebuilds)
{
    hx_md_config cfg = *base;
    hx_md_system sys;
    hx_md_engine *eng = NULL;
    gpu_newton(&cfg);
    if (!HXT_OK(setup(comm, &cfg, &sys)))
        return;
    if (HXT_OK(hx_md_engine_gpu.create(&eng, comm, &cfg, &sys)) &&
        HXT_OK(hx_md_engine_gpu.thermo(eng, &out[0]))) {
        if (hx_comm_rank(comm) == 0)
            printf("  %s\n", hx_md_engine_gpu.describe(eng));
        for (int s = 1; s <= steps; s++) {
            if (!HXT_OK(hx_md_engine_gpu.step(eng, s % 100 == 0)))
                break;
            if (s % 100 == 0 && !HXT_OK(hx_md_engine_gpu.thermo(eng, &out[s / 100])))
                break;
        }
        *rebuilds = hx_md_engine_gpu.stats(eng)->rebuilds;
    }
    if (eng)
        hx_md_engine_gpu.destroy(eng);
    hxt_md_free(&sys, NULL);
}

/* newton: 0 device against host-path rebuilds; 1 (--compare-newton) device
 * rebuilds with newton on against newton off, by the same bounds (the two
 * sum each force in another order: their trajectories part at rounding
 * level from the first step), rebuild counts within 5% (with `check yes`
 * the decisions follow the parted trajectories). */
static void compare_rebuilds(hx_comm *comm, const hx_md_config *cfg, int steps, int newton)
{
    int nk = steps / 100 + 1;
    hx_md_thermo *dev = calloc((size_t) nk, sizeof *dev), *host = calloc((size_t) nk, sizeof *host);
    int64_t rd = -1, rh = -2;
    const char *an = newton ? "newton on" : "device", *bn = newton ? "newton off" : "host";
    const int keep = newton_arg;
    newton_arg = newton ? 0 : keep;
    run_series(comm, cfg, steps, dev, &rd);
    newton_arg = newton ? 1 : keep;
    if (!newton)
        hxi_knobs_set("HALOX_MD_REBUILD", "host");
    run_series(comm, cfg, steps, host, &rh);
    hxi_knobs_set("HALOX_MD_REBUILD", "large");
    newton_arg = keep;
    HXT_CHECK(newton ? llabs(rd - rh) <= rd / 20 : rd == rh, "%s: %lld rebuilds, %s: %lld", an,
              (long long) rd, bn, (long long) rh);
    for (int k = 0; k < nk; k++) {
        const hx_md_thermo *a = &dev[k], *b = &host[k];
        if (hx_comm_rank(comm) == 0)
            printf("    step %5d: %s Temp %.6f E_pair %.6f TotEng %.6f Press %.5f | %s "
                   "%.6f %.6f %.6f %.5f\n",
                   100 * k, an, a->temp, a->epair, a->etotal, a->press, bn, b->temp, b->epair,
                   b->etotal, b->press);
        if (k <= 1)
            HXT_CHECK(thermo_close(a, b, 2e-3), "step %d: %s and %s apart", 100 * k, an, bn);
        HXT_CHECK(hxt_md_close(a->etotal, b->etotal, 1e-3, 0) &&
                      hxt_md_close(a->temp, b->temp, 0.05, 0) &&
                      hxt_md_close(a->epair, b->epair, 0.02, 0) &&
                      fabs(a->press - b->press) <= 0.15,
                  "step %d: %s and %s further apart than the stated bounds", 100 * k, an, bn);
    }
    free(dev);
    free(host);
}

/* The default system of ncells^3 cells on grid, lists rebuilt every
 * `every` steps without the half-skin check. */
static void every_config(hx_md_config *cfg, int ncells, const int grid[3], int every)
{
    hx_md_config_defaults(cfg);
    cfg->cells[0] = cfg->cells[1] = cfg->cells[2] = ncells;
    memcpy(cfg->grid, grid, sizeof cfg->grid);
    cfg->neigh_every = every;
    cfg->neigh_delay = 0;
    cfg->neigh_check = 0;
    gpu_newton(cfg); /* GPU runs only */
}

/* --withhold (md_gpu_faults.c): `every 20`, or voted, `every 1 check yes`. */
static int run_withhold_every(hx_comm *comm, int ncells, const int grid[3], int steps, int voted)
{
    hx_md_config cfg;
    every_config(&cfg, ncells, grid, voted ? 1 : 20);
    cfg.neigh_check = voted;
    return hxt_md_gpu_withhold(comm, &cfg, steps, setup);
}

/* The pair styles besides lj/cut (tests/decks/in.pair_*'s parameters):
 * forces at step 0 and the thermo after 20 steps against the CPU
 * engine's, with the engine's default transport. */
static void run_styles(hx_comm *comm, int ncells, const int grid[3])
{
    static const struct {
        const char *name;
        int style;
        double p[4], rc;
        int shift;
    } styles[] = {
        {"morse", HX_PAIR_MORSE, {1.0, 4.0, 1.1, 0.0}, 2.5, 1},
        {"yukawa", HX_PAIR_YUKAWA, {20.0, 2.0, 0.0, 0.0}, 2.2, 0},
        {"soft", HX_PAIR_SOFT, {5.0, 0.0, 0.0, 0.0}, 1.5, 0},
        {"lj/smooth/linear", HX_PAIR_LJ_SMOOTH_LINEAR, {1.0, 1.0, 0.0, 0.0}, 2.5, 0},
    };
    for (size_t i = 0; i < sizeof styles / sizeof styles[0]; i++) {
        hx_md_config cfg;
        cpu_run cpu;
        hx_md_config_defaults(&cfg);
        cfg.cells[0] = cfg.cells[1] = cfg.cells[2] = ncells;
        memcpy(cfg.grid, grid, sizeof cfg.grid);
        cfg.pair_style = styles[i].style;
        memcpy(cfg.pair, styles[i].p, sizeof cfg.pair);
        cfg.rc = styles[i].rc;
        cfg.shift_energy = styles[i].shift;
        cfg.neigh_every = 1;
        cfg.neigh_check = 1;
        if (hx_comm_rank(comm) == 0)
            printf("pair_style %s, %d^3 cells, 20 steps\n", styles[i].name, ncells);
        memset(&cpu, 0, sizeof cpu);
        if (run_cpu(comm, &cfg, 20, &cpu))
            run_gpu(comm, &cfg, "", 20, &cpu, NULL, 0, -1);
        free(cpu.f0);
        free(cpu.x0);
        free(cpu.v0);
    }
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_md_gpu");
    /* Every device rebuild counts the atoms and checks their ids, and its
     * two-half list build against the one-pass build. */
    hxi_knobs_set("HALOX_MD_CHECK", "all");
    /* A large system's choices (these systems are small): among them, the
     * non-local forces visit only the atoms that need them. */
    hxi_knobs_set("HALOX_MD_REBUILD", "large");
    int rank = hx_comm_rank(comm), size = hx_comm_size(comm);
    int ncells = 10, steps = 100, grid[3] = {0, 0, 0}, withhold = 0, compare = 0, tight = 0;
    cpu_run cpu;
    ref_t ref;
    hx_transport *keeper = NULL;

    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--cells") == 0 && a + 1 < argc)
            ncells = atoi(argv[++a]);
        else if (strcmp(argv[a], "--steps") == 0 && a + 1 < argc)
            steps = atoi(argv[++a]);
        else if (strcmp(argv[a], "--withhold") == 0)
            withhold = 1;
        else if (strcmp(argv[a], "--build-lanes") == 0 && a + 1 < argc) {
            char lanes[32]; /* read at the first list build */
            snprintf(lanes, sizeof lanes, "0,0,%s", argv[++a]);
            if (!HXT_OK(hxi_knobs_set("HALOX_MD_LANES", lanes)))
                return hxt_finish(comm);
        } else if (strcmp(argv[a], "--ring") == 0 && a + 1 < argc) {
            if (!HXT_OK(hxi_knobs_set("HALOX_MD_RING", argv[++a]))) /* read at each set-up */
                return hxt_finish(comm);
        } else if (strcmp(argv[a], "--compare-rebuilds") == 0)
            compare = 1;
        else if (strcmp(argv[a], "--compare-newton") == 0)
            compare = 2;
        else if (strcmp(argv[a], "--tight") == 0)
            tight = 1;
        else if (strcmp(argv[a], "--newton") == 0 && a + 1 < argc)
            newton_arg = strcmp(argv[++a], "off") == 0;
        else if (strcmp(argv[a], "--tilt") == 0 && a + 1 < argc) {
            if (sscanf(argv[++a], "%lf,%lf,%lf", &tilt_arg[0], &tilt_arg[1], &tilt_arg[2]) != 3)
                return hxt_skip(comm, "bad --tilt");
        }
        else if (strcmp(argv[a], "--grid") == 0 && a + 1 < argc) {
            if (hx_grid_parse(argv[++a], grid) != HX_OK)
                return hxt_skip(comm, "bad --grid");
        }
    }
    const int unavailable = hxt_gpu_unavailable(comm);
    if (unavailable)
        return unavailable;
    memset(&ref, 0, sizeof ref);
    keeper = hxt_gpu_keeper(comm); /* kept while the engines come and go */

    if (compare) {
        hx_md_config cfg;
        hx_md_config_defaults(&cfg);
        cfg.cells[0] = cfg.cells[1] = cfg.cells[2] = ncells;
        memcpy(cfg.grid, grid, sizeof grid);
        with_tilt(&cfg);
        if (rank == 0)
            printf("%d ranks, %d^3 cells, %s, %d steps\n", size, ncells,
                   compare == 2 ? "newton on against newton off"
                                : "device against host-path rebuilds",
                   steps);
        compare_rebuilds(comm, &cfg, steps, compare == 2);
        if (keeper)
            hx_transport_destroy(keeper);
        return hxt_finish(comm);
    }
    if (tight) {
        /* Arrays without margin: a rebuild that brings a rank more atoms
         * grows them (and moves what the captured step uses); the run
         * must still match the CPU engine. */
        hx_md_config cfg;
        hx_md_config_defaults(&cfg);
        cfg.cells[0] = cfg.cells[1] = cfg.cells[2] = ncells;
        memcpy(cfg.grid, grid, sizeof grid);
        with_tilt(&cfg);
        hxi_knobs_set("HALOX_MD_TIGHT", "1");
        memset(&cpu, 0, sizeof cpu);
        if (run_cpu(comm, &cfg, steps, &cpu)) {
            if (rank == 0)
                printf("%d ranks, %d^3 cells, arrays without margin, %d steps\n", size, ncells,
                       steps);
            run_gpu(comm, &cfg, "", steps, &cpu, NULL, 1, -1);
            int g = (int) last_growths;
            if (HXT_OK(hxi_allreduce_int(comm, &g, 1, 1)))
                HXT_CHECK(g > 0, "no rank grew its arrays: the growth path was not taken");
            if (rank == 0)
                printf("  growths: up to %d on a rank\n", g);
        }
        hxi_knobs_set("HALOX_MD_TIGHT", NULL);
        free(cpu.f0);
        free(cpu.x0);
        free(cpu.v0);
        if (keeper)
            hx_transport_destroy(keeper);
        return hxt_finish(comm);
    }
    if (withhold) {
        int could_not = keeper ? run_withhold_every(comm, ncells, grid, steps, 0) : 1;
        /* The voted run needs what the plain one needed: it must run too. */
        if (!could_not)
            HXT_CHECK(run_withhold_every(comm, ncells, grid, steps, 1) == 0,
                      "the voted run could not start where the plain one ran");
        if (keeper)
            hx_transport_destroy(keeper);
        return could_not ? hxt_skip(comm, "graph mode needs the nvshmem-fused transport and 2 "
                                          "ranks or more")
                         : hxt_finish(comm);
    }
    for (int variant = 0; variant < 2; variant++) {
        /* The device rebuild's size rules: a large system's choices with
         * `every 20`, a small one's with `every 1 check yes`. */
        const char *paths = variant == 0 ? "large" : "small";
        hx_md_config cfg;
        hxi_knobs_set("HALOX_MD_REBUILD", paths);
        hx_md_config_defaults(&cfg);
        cfg.cells[0] = cfg.cells[1] = cfg.cells[2] = ncells;
        memcpy(cfg.grid, grid, sizeof grid);
        with_tilt(&cfg);
        if (variant == 1) {
            cfg.neigh_every = 1;
            cfg.neigh_delay = 0;
            cfg.neigh_check = 1;
        }
        if (rank == 0)
            printf("%d ranks, %d^3 cells, neigh_modify every %d delay %d check %s, %d steps, "
                   "a %s system's rebuild\n",
                   size, ncells, cfg.neigh_every, cfg.neigh_delay, cfg.neigh_check ? "yes" : "no",
                   steps, paths);
        memset(&cpu, 0, sizeof cpu);
        if (!run_cpu(comm, &cfg, steps, &cpu))
            goto next;
        if (variant == 0) {
            /* The same positions serve both neighbour settings. */
            int64_t N = (int64_t) 4 * ncells * ncells * ncells;
            double L[3], lo[3], sums[3];
            ref.near = calloc((size_t) N, sizeof(double));
            ref.stiff = calloc((size_t) N, sizeof(double));
            if (!ref.near || !ref.stiff || !HXT_OK(hx_md_box(&cfg, lo, L)))
                goto next;
            ref_pairs(cpu.x0, N, L, &cfg, rank, size, &ref);
            sums[0] = ref.e;
            sums[1] = ref.w;
            sums[2] = ref.npairs;
            if (!HXT_OK(hxi_allreduce_double(comm, sums, 3, 0)) ||
                !HXT_OK(hxi_allreduce_double(comm, ref.near, (int) N, 0)) ||
                !HXT_OK(hxi_allreduce_double(comm, ref.stiff, (int) N, 0)))
                goto next;
            ref.e = sums[0];
            ref.w = sums[1];
            ref.npairs = sums[2];
            /* The largest coordinate's magnitude (a tilt widens the box). */
            const double wide = L[0] + fabs(cfg.tilt[0]) + fabs(cfg.tilt[1]);
            ref.u = fmax(wide, fmax(L[1] + fabs(cfg.tilt[2]), L[2])) * 0x1p-24;
            /* The CPU engine against the same sums, as a check of the check. */
            double V = L[0] * L[1] * L[2], mv2 = 0;
            for (int64_t i = 0; i < 3 * N; i++)
                mv2 += cfg.mass * cpu.v0[i] * cpu.v0[i];
            HXT_CHECK(hxt_md_close(cpu.th0.epair, ref.e / N, 1e-9, 0),
                      "cpu E_pair %.12g, all pairs %.12g", cpu.th0.epair, ref.e / N);
            HXT_CHECK(hxt_md_close(cpu.th0.press, (mv2 + ref.w) / (3 * V), 1e-9, 0),
                      "cpu Press %.12g, all pairs %.12g", cpu.th0.press, (mv2 + ref.w) / (3 * V));
        }
        for (int t = 0; t < hx_transport_count(); t++) {
            const char *name = hx_transport_name_at(t);
            /* Several ranks: graph mode for the capturable transports,
             * where some steps are neither rebuild candidates nor thermo
             * steps (every 20), or where the ranks vote on each rebuild on
             * the device (every 1 check yes, a transport with the vote). */
            int graphs = -1;
            if (size > 1) {
                const unsigned caps = hx_transport_caps_of(name);
                graphs = (caps & HX_CAP_GRAPH) && (variant == 0 || (caps & HX_CAP_VOTE));
            }
            run_gpu(comm, &cfg, name, steps, &cpu, &ref, variant == 0, graphs);
        }
        /* The host path, the reference of the device rebuild. */
        hxi_knobs_set("HALOX_MD_REBUILD", "host");
        if (rank == 0)
            printf("  host-path rebuilds:\n");
        run_gpu(comm, &cfg, "", steps, &cpu, &ref, variant == 0,
                size == 1 ? 0 : (hxt_have_transport("nvshmem-fused") && variant == 0 ? 1 : -1));
        hxi_knobs_set("HALOX_MD_REBUILD", paths);
        if (size == 1 || hxt_have_transport("nvshmem-fused")) {
            hxi_knobs_set("HALOX_MD_GRAPH_STEPS", "0");
            if (rank == 0)
                printf("  steps launched kernel by kernel:\n");
            run_gpu(comm, &cfg, size == 1 ? "" : "nvshmem-fused", steps, &cpu, &ref, variant == 0,
                    0);
            hxi_knobs_set("HALOX_MD_GRAPH_STEPS", NULL);
        }
    next:
        free(cpu.f0);
        free(cpu.x0);
        free(cpu.v0);
    }
    hxi_knobs_set("HALOX_MD_REBUILD", "large");
    run_styles(comm, ncells, grid);
    if (size > 1) {
        hx_md_config cfg;
        every_config(&cfg, ncells, grid, 20);
        hxt_md_gpu_bad_reach(comm, &cfg, setup);
    }
    free(ref.near);
    free(ref.stiff);
    if (keeper)
        hx_transport_destroy(keeper);
    return hxt_finish(comm);
}
