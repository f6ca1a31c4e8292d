/*
 * test_newton.c - the CPU engine's newton off against newton on.
 *
 * newton off (the full-shell plan, every pair with a halo atom computed on
 * both of its ranks, half its energy and virial on each, no reverse) must
 * give the sums of newton on in another order. Three systems, each from a
 * deck parsed here: the LJ melt (one type, 8^3 cells), two types with
 * per-pair cutoffs and the energy shift (type/fraction), and a box tilted
 * in xy, xz and yz (region prism). Each runs on the grids of the test's
 * rank count along one, two and three dimensions (at 8 ranks: 8x1x1,
 * 4x2x1, 2x2x2; domains down to 1.7 wide, so several pulses a direction),
 * with lists rebuilt every 5 steps (atoms migrate), for 20 steps, with
 * newton on and off: the force on every atom (by id) at steps 0 and 1,
 * and every thermo row, must agree to 1e-12 relative (a force component:
 * of the larger magnitude, at least 1). At step 20 the forces agree to
 * 1e-10: the two runs' positions part by rounding (each sums in its own
 * order), which the liquid's chaos amplifies (about 1e-12 by then; the
 * thermo averages stay near 1e-14).
 * First the deck's forms: no newton line, newton on|off and newton
 * PAIR BOND set the pair setting alone.
 */
#include "md_util.h"

#include "core/hxi.h"
#include "md/md_driver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NSTEPS = 20, NGRIDS = 3 };
#define TOL       1e-12
#define TOL_LATER 1e-10

/* The decks' shared lines: the lattice before the box, the lists and the
 * integrator after the pairs. */
#define DECK_HEAD "units lj\natom_style atomic\nlattice fcc 0.8442\n"
#define DECK_TAIL "neighbor 0.3 bin\nneigh_modify delay 0 every 5 check no\nfix 1 all nve\nrun 20\n"

static const char *const deck_melt = DECK_HEAD "region box block 0 8 0 8 0 8\n"
                                               "create_box 1 box\n"
                                               "create_atoms 1 box\n"
                                               "mass 1 1.0\n"
                                               "velocity all create 1.44 87287 loop geom\n"
                                               "pair_style lj/cut 2.5\n"
                                               "pair_coeff 1 1 1.0 1.0 2.5\n" DECK_TAIL;

static const char *const deck_types = DECK_HEAD "region box block 0 8 0 7 0 8\n"
                                                "create_box 2 box\n"
                                                "create_atoms 1 box\n"
                                                "set type 1 type/fraction 2 0.3 12345\n"
                                                "mass 1 1.0\n"
                                                "mass 2 2.0\n"
                                                "velocity all create 1.44 87287 loop geom\n"
                                                "pair_style lj/cut 2.5\n"
                                                "pair_coeff 1 1 1.0 1.0\n"
                                                "pair_coeff 2 2 0.5 1.2 2.8\n"
                                                "pair_modify shift yes mix arithmetic\n" DECK_TAIL;

/* Tilted in xy, xz and yz; pairs as the melt's. */
static const char *const deck_tri =
    DECK_HEAD "region box prism 0 8 0 7 0 8 -1 1.5 0.5 units lattice\n"
              "create_box 1 box\n"
              "create_atoms 1 box\n"
              "mass 1 1.0\n"
              "velocity all create 1.44 4711 dist gaussian loop geom\n"
              "pair_style lj/cut 2.5\n"
              "pair_coeff 1 1 1.0 1.0 2.5\n" DECK_TAIL;

/* A run's record: thermo rows of every step, forces by id at steps 0, 1
 * and the last. */
typedef struct run_out {
    hx_md_thermo rows[NSTEPS + 1];
    double *f0, *f1, *fn;
    int64_t natoms;
} run_out;

/* Box, tilted decomposition, lattice (types included) and velocities, as
 * halox-md sets them up. */
static hx_status setup(hx_comm *comm, const hx_md_config *cfg, hx_md_system *sys)
{
    double lo[3], len[3];
    memset(sys, 0, sizeof *sys);
    HXI_CHECK(hx_md_box(cfg, lo, len));
    HXI_CHECK(hx_decomp_init_tilted(&sys->decomp, lo, len, cfg->tilt, hxi_md_list_cutoff(cfg),
                                    cfg->grid, hx_comm_size(comm), hx_comm_rank(comm)));
    HXI_CHECK(hx_md_lattice(sys, cfg));
    return hx_md_velocities(sys, cfg, comm);
}

/* The forces on every atom, by id, into *out (allocated here). */
static hx_status forces_by_id(hx_comm *comm, hx_md_engine *eng, hx_md_system *sys, double **out)
{
    double *f = NULL;
    HXI_CHECK(hx_md_engine_cpu.gather(eng, sys, &f));
    *out = malloc((size_t) sys->natoms * 3 * sizeof(double));
    if (!*out)
        return hxi_error(HX_ERR_NOMEM, "forces by id");
    return hxt_md_by_id(comm, sys, f, 3, *out);
}

static hx_status run(hx_comm *comm, const hx_md_config *cfg, run_out *o)
{
    hx_md_system sys;
    hx_md_engine *eng = NULL;
    hx_status st = setup(comm, cfg, &sys);
    if (st == HX_OK)
        st = hx_md_engine_cpu.create(&eng, comm, cfg, &sys);
    if (st == HX_OK)
        st = hx_md_engine_cpu.thermo(eng, &o->rows[0]);
    if (st == HX_OK)
        st = forces_by_id(comm, eng, &sys, &o->f0);
    for (int s = 1; st == HX_OK && s <= NSTEPS; s++) {
        st = hx_md_engine_cpu.step(eng, 1);
        if (st == HX_OK)
            st = hx_md_engine_cpu.thermo(eng, &o->rows[s]);
        if (st == HX_OK && s == 1)
            st = forces_by_id(comm, eng, &sys, &o->f1);
    }
    if (st == HX_OK)
        st = forces_by_id(comm, eng, &sys, &o->fn);
    o->natoms = sys.natoms;
    free(sys.type);
    hxt_md_free(&sys, eng);
    return st;
}

/* The worst relative difference of two force arrays (floor 1). */
static double force_diff(const double *a, const double *b, int64_t n)
{
    double worst = 0;
    for (int64_t k = 0; k < 3 * n; k++) {
        double m = fmax(fmax(fabs(a[k]), fabs(b[k])), 1.0);
        worst = fmax(worst, fabs(a[k] - b[k]) / m);
    }
    return worst;
}

static void compare(const char *what, const run_out *on, const run_out *off, int rank)
{
    double worst = 0, fw0 = force_diff(on->f0, off->f0, on->natoms),
           fw1 = force_diff(on->f1, off->f1, on->natoms),
           fwn = force_diff(on->fn, off->fn, on->natoms);
    for (int r = 0; r <= NSTEPS; r++) {
        const hx_md_thermo *a = &on->rows[r], *b = &off->rows[r];
        const double va[4] = {a->temp, a->epair, a->etotal, a->press};
        const double vb[4] = {b->temp, b->epair, b->etotal, b->press};
        for (int c = 0; c < 4; c++) {
            HXT_CHECK(hxt_md_close(va[c], vb[c], TOL, 0),
                      "%s: step %d column %d: newton on %.17g, off %.17g", what, r, c, va[c],
                      vb[c]);
            worst = fmax(worst, fabs(va[c] - vb[c]) / fmax(fmax(fabs(va[c]), fabs(vb[c])), 1e-300));
        }
    }
    HXT_CHECK(fw0 <= TOL && fw1 <= TOL, "%s: forces differ by %.3g (step 0), %.3g (step 1)", what,
              fw0, fw1);
    HXT_CHECK(fwn <= TOL_LATER, "%s: forces differ by %.3g at step %d", what, fwn, NSTEPS);
    if (rank == 0)
        printf("%s: newton off vs on: thermo %.2e, forces %.2e / %.2e / %.2e relative (steps 0, "
               "1, %d)\n",
               what, worst, fw0, fw1, fwn, NSTEPS);
}

/* The deck's newton line sets hx_md_config.newton_off from its first word. */
static void deck_forms(void)
{
    static const struct {
        const char *line;
        int off;
    } forms[] = {{"", 0},
                 {"newton on\n", 0},
                 {"newton off\n", 1},
                 {"newton off on\n", 1},
                 {"newton on off\n", 0},
                 {"newton off off\n", 1}};
    for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
        char text[2048];
        hx_md_config cfg;
        hx_md_config_defaults(&cfg);
        snprintf(text, sizeof text, "%s%s", forms[k].line, deck_melt);
        if (HXT_OK(hx_md_deck_parse(text, strlen(text), "forms", &cfg, NULL, 0)))
            HXT_CHECK(cfg.newton_off == forms[k].off, "'%s': newton_off %d, want %d", forms[k].line,
                      cfg.newton_off, forms[k].off);
    }
}

/* Grids of `size` ranks along one, two and three dimensions (as many as
 * the count allows; {0,0,0} where it has no such grid). */
static void grids(int size, int g[NGRIDS][3])
{
    memset(g, 0, sizeof(int) * NGRIDS * 3);
    g[0][0] = size, g[0][1] = g[0][2] = 1;
    if (size == 4)
        g[1][0] = g[1][1] = 2, g[1][2] = 1;
    if (size == 8) {
        g[1][0] = 4, g[1][1] = 2, g[1][2] = 1;
        g[2][0] = g[2][1] = g[2][2] = 2;
    }
    if (size == 2 || size == 3) /* along another dimension */
        g[1][2] = size, g[1][0] = g[1][1] = 1;
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_newton");
    const int rank = hx_comm_rank(comm), size = hx_comm_size(comm);
    const char *const decks[3] = {deck_melt, deck_types, deck_tri};
    const char *const names[3] = {"melt", "two types", "triclinic"};
    int g[NGRIDS][3];

    deck_forms();
    grids(size, g);
    for (int d = 0; d < 3; d++) {
        hx_md_config cfg;
        hx_md_config_defaults(&cfg);
        if (!HXT_OK(hx_md_deck_parse(decks[d], strlen(decks[d]), names[d], &cfg, NULL, 0)))
            break;
        for (int k = 0; k < NGRIDS; k++) {
            run_out on, off;
            char what[96];
            if (g[k][0] == 0)
                continue;
            memset(&on, 0, sizeof on);
            memset(&off, 0, sizeof off);
            memcpy(cfg.grid, g[k], sizeof cfg.grid);
            snprintf(what, sizeof what, "%s, grid %dx%dx%d", names[d], g[k][0], g[k][1], g[k][2]);
            cfg.newton_off = 0;
            int ok = HXT_OK(run(comm, &cfg, &on));
            cfg.newton_off = 1;
            ok = ok && HXT_OK(run(comm, &cfg, &off));
            if (ok)
                compare(what, &on, &off, rank);
            free(on.f0), free(on.f1), free(on.fn), free(off.f0), free(off.f1), free(off.fn);
        }
    }
    return hxt_finish(comm);
}
