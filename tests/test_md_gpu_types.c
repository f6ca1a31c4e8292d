/*
 * test_md_gpu_types.c - the GPU engine (float) on decks of several atom
 * types against the CPU engine (double).
 *
 * Each deck given (tests/types_decks/in.*, tests/decks/in.kob_andersen:
 * two types, every pair style, every mixing rule, per-pair cutoffs and
 * shifts, fix nvt) is read as halox-md reads it; its atoms, each pushed off
 * its lattice site by up to 0.05 in each coordinate (seeded by atom id, so
 * the same on any rank count) so that forces are not zero by symmetry,
 * start both engines with the deck's types and masses. Then:
 *  - step 0: E_pair and Press within 2e-5 relative of the CPU engine's
 *    (floors 1 and 0.1), Temp within 1e-6 (each atom's mass by its type);
 *    every force component within 5e-4 max(|F_i|, F_rms) of the CPU
 *    engine's (F_rms the root mean square force; float positions and
 *    arithmetic, and each pair's coefficients, cutoff and offset read from
 *    the table by the two atoms' types), but for atoms with a pair within
 *    1e-5 of that pair's cutoff, which float and double may put on either
 *    side of it;
 *  - thermo rows at steps 25, 50, 75 and 100: Temp, E_pair, TotEng and
 *    Press within 1e-3 relative (Press with a floor of 0.1), the float
 *    bound test_md_gpu holds one type to;
 *  - after the 100 steps (rebuilds and, with several ranks, migrations on
 *    the way), every atom's type equal to the CPU engine's atom by atom,
 *    and the same count of atoms of each type as at step 0.
 * With one rank the default transport also runs with host-path rebuilds
 * (HALOX_MD_REBUILD=host); with several, every device transport built and
 * the host path, under HALOX_MD_CHECK=all (each device rebuild counts the
 * atoms and checks their lists). Exits 77 where no rank sees a GPU.
 *
 * Options: --steps N (default 100), then deck paths.
 */
#define _POSIX_C_SOURCE 200809L

#include "md_gpu_util.h"
#include "md_util.h"

#include "core/hxi.h"
#include "md/deck.h"
#include "md/pair/pair_styles.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AMP   0.05
#define NROWS 4

/* One engine's run: thermo at step 0 and at NROWS steps, the forces at
 * step 0 and the types at step 0 and at the end, all by atom id. */
typedef struct run_t {
    hx_md_thermo th0, rows[NROWS];
    double *f0, *type0, *type1;
    double *x0; /* positions at step 0 by id */
    double len[3];
    int64_t natoms;
} run_t;

static void run_free(run_t *r)
{
    free(r->f0);
    free(r->type0);
    free(r->type1);
    free(r->x0);
    memset(r, 0, sizeof *r);
}

static hx_status setup(hx_comm *comm, const hx_md_config *cfg, hx_md_system *sys)
{
    HXI_CHECK(hxt_md_system(comm, cfg, sys));
    for (int i = 0; i < sys->n; i++) {
        hxt_rng r = {0x5eedull ^ ((uint64_t) sys->id[i] * 0x9e3779b97f4a7c15ull)};
        for (int k = 0; k < 3; k++)
            sys->x[3 * i + k] += AMP * (2.0 * hxt_uniform(&r) - 1.0);
    }
    return HX_OK;
}

/* The types of sys's atoms by id (0 where a rank holds none). */
static hx_status types_by_id(hx_comm *comm, const hx_md_system *sys, double *all)
{
    double *t = malloc(sizeof(double) * (size_t) (sys->n > 0 ? sys->n : 1));
    if (!t)
        return hxi_error(HX_ERR_NOMEM, "types");
    for (int i = 0; i < sys->n; i++)
        t[i] = sys->type ? (double) sys->type[i] : 1.0;
    hx_status st = hxt_md_by_id(comm, sys, t, 1, all);
    free(t);
    return st;
}

/* steps steps of engine ops from the deck's atoms into r: 1 done, 0
 * failed, -1 the engine refused the setting (a transport that cannot run
 * it here, said on rank 0). */
static int run_engine(hx_comm *comm, const hx_md_engine_ops *ops, const hx_md_config *cfg,
                      int steps, run_t *r)
{
    hx_md_system sys;
    hx_md_engine *eng = NULL;
    double *f = NULL;
    int ok = 0;
    hx_status st;
    memset(r, 0, sizeof *r);
    if (!HXT_OK(setup(comm, cfg, &sys)))
        goto done;
    r->natoms = sys.natoms;
    r->f0 = malloc((size_t) sys.natoms * 3 * sizeof(double));
    r->type0 = malloc((size_t) sys.natoms * sizeof(double));
    r->type1 = malloc((size_t) sys.natoms * sizeof(double));
    r->x0 = malloc((size_t) sys.natoms * 3 * sizeof(double));
    memcpy(r->len, sys.decomp.box_len, sizeof r->len);
    if (!r->f0 || !r->type0 || !r->type1 || !r->x0) {
        HXT_CHECK(0, "out of memory");
        goto done;
    }
    if (!HXT_OK(types_by_id(comm, &sys, r->type0)) ||
        !HXT_OK(hxt_md_by_id(comm, &sys, sys.x, 3, r->x0)))
        goto done;
    st = ops->create(&eng, comm, cfg, &sys);
    if (st == HX_ERR_UNSUPPORTED) {
        if (hx_comm_rank(comm) == 0)
            printf("  %-16s skipped: %s\n", cfg->transport, hx_last_error());
        ok = -1;
        goto done;
    }
    if (!HXT_OK(st) || !HXT_OK(ops->thermo(eng, &r->th0)) || !HXT_OK(ops->gather(eng, &sys, &f)) ||
        !HXT_OK(hxt_md_by_id(comm, &sys, f, 3, r->f0)))
        goto done;
    for (int s = 1, row = 0; s <= steps; s++) {
        const int want = row < NROWS && s == (row + 1) * steps / NROWS;
        if (!HXT_OK(ops->step(eng, want)))
            goto done;
        if (want && !HXT_OK(ops->thermo(eng, &r->rows[row++])))
            goto done;
    }
    if (!HXT_OK(ops->gather(eng, &sys, NULL)) || !HXT_OK(types_by_id(comm, &sys, r->type1)))
        goto done;
    ok = 1;
done:
    if (eng)
        ops->destroy(eng);
    free(sys.type);
    sys.type = NULL;
    hxt_md_free(&sys, NULL);
    return ok;
}

static void compare_thermo(const char *what, int64_t step, const hx_md_thermo *g,
                           const hx_md_thermo *c, double rel, double efloor)
{
    HXT_CHECK(hxt_md_close(g->temp, c->temp, rel > 1e-6 ? rel : 1e-6, 0),
              "%s step %lld: Temp %.10g, cpu %.10g", what, (long long) step, g->temp, c->temp);
    HXT_CHECK(hxt_md_close(g->epair, c->epair, rel, efloor),
              "%s step %lld: E_pair %.10g, cpu %.10g", what, (long long) step, g->epair, c->epair);
    HXT_CHECK(hxt_md_close(g->etotal, c->etotal, rel, efloor),
              "%s step %lld: TotEng %.10g, cpu %.10g", what, (long long) step, g->etotal,
              c->etotal);
    HXT_CHECK(hxt_md_close(g->press, c->press, rel, 0.1), "%s step %lld: Press %.10g, cpu %.10g",
              what, (long long) step, g->press, c->press);
    HXT_CHECK(hxt_md_close(g->mass_sum, c->mass_sum, 1e-12, 0),
              "%s step %lld: the atoms' mass %.12g, cpu %.12g", what, (long long) step, g->mass_sum,
              c->mass_sum);
}

/* Per atom (by id), 1 where it has a pair within 1e-5 of that pair's
 * cutoff (minimum image): float and double may disagree on which side of
 * the cutoff such a pair lies, and the force differs by F(rc) then. */
static double *near_cutoff(const hx_md_config *cfg, const run_t *r)
{
    hxi_pair_types t;
    const int64_t N = r->natoms;
    double *near = calloc((size_t) N, sizeof(double));
    if (!near || !HXT_OK(hxi_pair_resolve(cfg, &t, HX_ERR_INVALID, "")))
        return near;
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = i + 1; j < N; j++) {
            double r2 = 0.0;
            for (int k = 0; k < 3; k++) {
                double d = r->x0[3 * i + k] - r->x0[3 * j + k];
                d -= r->len[k] * nearbyint(d / r->len[k]);
                r2 += d * d;
            }
            const double rc = t.rc[(int) r->type0[i] - 1][(int) r->type0[j] - 1];
            if (fabs(sqrt(r2) - rc) < 1e-5)
                near[i] = near[j] = 1.0;
        }
    return near;
}

static void compare_forces(const char *what, int64_t N, const double *g, const double *c,
                           const double *near)
{
    double s2 = 0, worst = 0;
    int64_t bad = 0, worst_id = -1;
    for (int64_t i = 0; i < 3 * N; i++)
        s2 += c[i] * c[i];
    const double frms = sqrt(s2 / (double) N);
    for (int64_t i = 0; i < N; i++) {
        const double *a = g + 3 * i, *b = c + 3 * i;
        const double mag = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
        if (near && near[i] > 0)
            continue;
        const double tol = 5e-4 * (mag > frms ? mag : frms);
        for (int k = 0; k < 3; k++) {
            const double d = fabs(a[k] - b[k]) / tol;
            bad += !(d <= 1.0);
            if (!(d <= worst)) {
                worst = d;
                worst_id = i;
            }
        }
    }
    HXT_CHECK(frms > 0.1, "%s: F_rms %g at step 0 is too small to test", what, frms);
    HXT_CHECK(bad == 0, "%s: %lld force components off (worst %.3g tolerances, atom %lld)", what,
              (long long) bad, worst, (long long) worst_id);
}

static void compare_types(const char *what, int64_t N, int ntypes, const run_t *g, const run_t *c)
{
    int64_t off = 0, first = -1, count0[HX_MD_MAX_TYPES + 1] = {0},
            count1[HX_MD_MAX_TYPES + 1] = {0};
    for (int64_t i = 0; i < N; i++) {
        const int t0 = (int) g->type0[i], t1 = (int) g->type1[i];
        if (t1 != (int) c->type1[i] && off++ == 0)
            first = i;
        if (t0 >= 1 && t0 <= ntypes)
            count0[t0]++;
        if (t1 >= 1 && t1 <= ntypes)
            count1[t1]++;
    }
    HXT_CHECK(off == 0,
              "%s: %lld atoms' types differ from the CPU engine's (first: id %lld, %g "
              "against %g)",
              what, (long long) off, (long long) first, first >= 0 ? g->type1[first] : 0.0,
              first >= 0 ? c->type1[first] : 0.0);
    for (int t = 1; t <= ntypes; t++)
        HXT_CHECK(count0[t] == count1[t] && count0[t] > 0,
                  "%s: %lld atoms of type %d at step 0, %lld at the end", what,
                  (long long) count0[t], t, (long long) count1[t]);
}

/* The GPU engine with transport `name` (and the rebuild path the knobs
 * say) against the CPU run. */
static void run_gpu(hx_comm *comm, const hx_md_config *base, const char *deck, const char *name,
                    int steps, const run_t *cpu, const double *near)
{
    hx_md_config cfg = *base;
    run_t g;
    char what[512];
    snprintf(cfg.transport, sizeof cfg.transport, "%s", name);
    snprintf(what, sizeof what, "%s, %s", deck, name);
    if (hx_comm_size(comm) > 1 && (hx_transport_caps_of(name) & HX_CAP_HOST))
        return; /* test_md_gpu checks the refusal */
    const int ok = run_engine(comm, &hx_md_engine_gpu, &cfg, steps, &g);
    if (ok > 0) {
        const int64_t N = cpu->natoms;
        compare_thermo(what, 0, &g.th0, &cpu->th0, 2e-5, 1.0);
        compare_forces(what, N, g.f0, cpu->f0, near);
        for (int r = 0; r < NROWS; r++)
            compare_thermo(what, g.rows[r].step, &g.rows[r], &cpu->rows[r], 1e-3, 0.0);
        compare_types(what, N, cfg.types.ntypes, &g, cpu);
        if (hx_comm_rank(comm) == 0)
            printf("  %-16s step %d: Temp %.6f E_pair %.6f Press %.6f (cpu %.6f %.6f %.6f)\n", name,
                   steps, g.rows[NROWS - 1].temp, g.rows[NROWS - 1].epair, g.rows[NROWS - 1].press,
                   cpu->rows[NROWS - 1].temp, cpu->rows[NROWS - 1].epair,
                   cpu->rows[NROWS - 1].press);
    }
    run_free(&g);
}

static void run_deck(hx_comm *comm, const char *path, int steps)
{
    hx_md_config cfg;
    run_t cpu;
    hx_md_config_defaults(&cfg);
    if (!HXT_OK(hx_md_deck_read(path, &cfg, NULL, 0)))
        return;
    const char *deck = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    HXT_CHECK(cfg.types.ntypes > 1, "%s: %d atom type(s), want several", deck, cfg.types.ntypes);
    if (run_engine(comm, &hx_md_engine_cpu, &cfg, steps, &cpu) <= 0) {
        run_free(&cpu);
        return;
    }
    if (hx_comm_rank(comm) == 0)
        printf("%s: %lld atoms, %d types, %d steps\n", deck, (long long) cpu.natoms,
               cfg.types.ntypes, steps);
    const int size = hx_comm_size(comm);
    double *near = near_cutoff(&cfg, &cpu);
    for (int t = 0; t < hx_transport_count(); t++) {
        const char *name = hx_transport_name_at(t);
        if (size == 1 ? strcmp(name, "cpu") == 0 : (hx_transport_caps_of(name) & HX_CAP_DEVICE))
            run_gpu(comm, &cfg, deck, name, steps, &cpu, near);
    }
    /* The host-path rebuild, the device rebuild's reference. */
    HXT_OK(hxi_knobs_set("HALOX_MD_REBUILD", "host"));
    run_gpu(comm, &cfg, deck, size == 1 ? "cpu" : "mpi", steps, &cpu, near);
    HXT_OK(hxi_knobs_set("HALOX_MD_REBUILD", "size"));
    free(near);
    run_free(&cpu);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_md_gpu_types");
    hxi_knobs_set("HALOX_MD_CHECK", "all");
    int steps = 100, ndecks = 0;
    hx_transport *keeper = NULL;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--steps") == 0 && a + 1 < argc)
            steps = atoi(argv[++a]);
        else
            ndecks++;
    }
    const int unavailable = hxt_gpu_unavailable(comm);
    if (unavailable)
        return unavailable;
    HXT_CHECK(ndecks > 0, "no deck given");
    keeper = hxt_gpu_keeper(comm); /* kept while the engines come and go */
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--steps") == 0)
            a++;
        else
            run_deck(comm, argv[a], steps);
    }
    if (keeper)
        hx_transport_destroy(keeper);
    return hxt_finish(comm);
}
