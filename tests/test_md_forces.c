/*
 * test_md_forces.c - the CPU engine against a brute-force all-pairs sum.
 *
 * A cube of 12^3 cells (6,912 atoms, fcc 0.8442, rc 2.5), and a thin box of
 * 4 x 10 x 9 cells (the neighbour search's small-box path): at step 0 the
 * engine's E_pair per atom and pressure must equal an all-pairs double
 * computation done here (every pair i < j, minimum image in every
 * dimension, no cells, no halo, no zones) to 1e-10 relative, with and
 * without the energy shift. The reference positions come from this test's
 * own fcc loop, and the engine's atoms must sit exactly there. After 5
 * steps (atoms off the lattice, halo atoms carrying forces back) the
 * engine's energy, pressure and the force on every atom must match the
 * all-pairs sum over the engine's own positions.
 *
 * The pair loop is split over the ranks by rows and summed, so the cost
 * (2.4e7 pair distances per pass) is shared. The cube is as far from the
 * small-box path as the default 20^3 (14 half-cutoff bins a side, one
 * pulse at 1, 2 and 4 ranks) at a twentieth of the all-pairs cost.
 */
#include "md_util.h"

#include "core/hxi.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct ref_sums {
    double e;      /* unshifted pair energy */
    double w;      /* sum r.F */
    double npairs; /* pairs within rc */
} ref_sums;

/* Positions are first wrapped into [0, L), so one image correction suffices. */
static void ref_pairs(const double *x, int64_t n, const double L[3], const hx_md_config *cfg,
                      int rank, int size, double *f, ref_sums *out)
{
    const double rc2 = cfg->rc * cfg->rc, s2 = cfg->pair[1] * cfg->pair[1], eps = cfg->pair[0];
    double e = 0, w = 0, np = 0;
    for (int64_t i = rank; i < n; i += size) {
        const double *xi = x + 3 * i;
        double fi[3] = {0, 0, 0};
        for (int64_t j = i + 1; j < n; j++) {
            const double *xj = x + 3 * j;
            double d[3], r2 = 0;
            for (int k = 0; k < 3; k++) {
                d[k] = xi[k] - xj[k];
                if (d[k] > 0.5 * L[k])
                    d[k] -= L[k];
                else if (d[k] < -0.5 * L[k])
                    d[k] += L[k];
                r2 += d[k] * d[k];
            }
            if (r2 < rc2) {
                double q = s2 / r2, q6 = q * q * q;
                double fr = 24.0 * eps * (2.0 * q6 * q6 - q6) / r2;
                e += 4.0 * eps * (q6 * q6 - q6);
                w += fr * r2;
                np += 1;
                if (f)
                    for (int k = 0; k < 3; k++) {
                        fi[k] += d[k] * fr;
                        f[3 * j + k] -= d[k] * fr;
                    }
            }
        }
        if (f)
            for (int k = 0; k < 3; k++)
                f[3 * i + k] += fi[k];
    }
    out->e = e;
    out->w = w;
    out->npairs = np;
}

static void wrap_all(double *x, int64_t n, const double L[3])
{
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            double *p = &x[3 * i + k];
            *p -= L[k] * floor(*p / L[k]);
            if (*p >= L[k])
                *p -= L[k];
        }
}

static double lj_offset(const hx_md_config *cfg)
{
    double q = cfg->pair[1] * cfg->pair[1] / (cfg->rc * cfg->rc), q6 = q * q * q;
    return 4.0 * cfg->pair[0] * (q6 * q6 - q6);
}

static void one_system(hx_comm *comm, int nx, int ny, int nz)
{
    int rank = hx_comm_rank(comm), size = hx_comm_size(comm);
    hx_md_config cfg, cfg_shift;
    hx_md_system sys, sys2;
    hx_md_engine *eng = NULL, *eng2 = NULL;
    hx_md_thermo th, th2;
    double *xref = NULL, *xall = NULL, *vall = NULL, *fref = NULL, *fall = NULL, *f = NULL;
    double L[3], V, a, mv2, sums[3], offset;
    int64_t N;
    ref_sums rs;

    hx_md_config_defaults(&cfg);
    cfg.cells[0] = nx, cfg.cells[1] = ny, cfg.cells[2] = nz;
    cfg_shift = cfg;
    cfg_shift.shift_energy = 1;
    memset(&sys, 0, sizeof sys);
    memset(&sys2, 0, sizeof sys2);
    if (!HXT_OK(hxt_md_setup(comm, &cfg, &sys, &eng)) ||
        !HXT_OK(hxt_md_setup(comm, &cfg_shift, &sys2, &eng2)))
        goto done;
    N = sys.natoms;
    HXT_CHECK(N == 4LL * nx * ny * nz, "%dx%dx%d cells hold %lld atoms", nx, ny, nz, (long long) N);
    memcpy(L, sys.decomp.box_len, sizeof L);
    V = L[0] * L[1] * L[2];
    a = pow(4.0 / cfg.density, 1.0 / 3.0);
    offset = lj_offset(&cfg);

    xref = malloc((size_t) N * 3 * sizeof(double));
    xall = malloc((size_t) N * 3 * sizeof(double));
    vall = malloc((size_t) N * 3 * sizeof(double));
    fref = malloc((size_t) N * 3 * sizeof(double));
    fall = malloc((size_t) N * 3 * sizeof(double));
    if (!xref || !xall || !vall || !fref || !fall) {
        HXT_CHECK(0, "out of memory");
        goto done;
    }

    /* The lattice, written out independently: z outer, then y, x, basis. */
    {
        static const double b[4][3] = {{0, 0, 0}, {.5, .5, 0}, {.5, 0, .5}, {0, .5, .5}};
        int64_t id = 0;
        for (int k = 0; k < cfg.cells[2]; k++)
            for (int j = 0; j < cfg.cells[1]; j++)
                for (int i = 0; i < cfg.cells[0]; i++)
                    for (int m = 0; m < 4; m++, id++) {
                        xref[3 * id + 0] = (i + b[m][0]) * a;
                        xref[3 * id + 1] = (j + b[m][1]) * a;
                        xref[3 * id + 2] = (k + b[m][2]) * a;
                    }
    }

    /* ---- step 0 */
    if (!HXT_OK(hx_md_engine_cpu.thermo(eng, &th)) ||
        !HXT_OK(hx_md_engine_cpu.thermo(eng2, &th2)) ||
        !HXT_OK(hx_md_engine_cpu.gather(eng, &sys, &f)))
        goto done;
    {
        int bad = 0;
        double fmax = 0;
        for (int i = 0; i < sys.n; i++) {
            const double *p = sys.x + 3 * i, *q = xref + 3 * sys.id[i];
            for (int k = 0; k < 3; k++) {
                bad += fabs(p[k] - q[k]) > 1e-12 * L[k];
                fmax = fmax > fabs(f[3 * i + k]) ? fmax : fabs(f[3 * i + k]);
            }
        }
        HXT_CHECK(bad == 0, "%d coordinates off the fcc lattice", bad);
        /* A perfect crystal: every force cancels by symmetry. */
        HXT_CHECK(fmax < 1e-10, "largest force on the perfect lattice %g", fmax);
    }
    if (!HXT_OK(hxt_md_by_id(comm, &sys, sys.v, 3, vall)))
        goto done;
    mv2 = 0;
    for (int64_t i = 0; i < 3 * N; i++)
        mv2 += cfg.mass * vall[i] * vall[i];

    ref_pairs(xref, N, L, &cfg, rank, size, NULL, &rs);
    sums[0] = rs.e;
    sums[1] = rs.w;
    sums[2] = rs.npairs;
    if (!HXT_OK(hxi_allreduce_double(comm, sums, 3, 0)))
        goto done;
    {
        double epair = sums[0] / N, press = (mv2 + sums[1]) / (3.0 * V);
        double epair_shift = (sums[0] - sums[2] * offset) / N;
        if (rank == 0)
            printf("step 0: E_pair %.12f (ref %.12f), Press %.12f (ref %.12f), %.0f pairs\n",
                   th.epair, epair, th.press, press, sums[2]);
        HXT_CHECK(hxt_md_close(th.epair, epair, 1e-10, 0), "E_pair %.17g, all pairs %.17g",
                  th.epair, epair);
        HXT_CHECK(hxt_md_close(th.press, press, 1e-10, 0), "Press %.17g, all pairs %.17g", th.press,
                  press);
        HXT_CHECK(hxt_md_close(th.temp, cfg.temperature, 1e-12, 0), "Temp %.17g", th.temp);
        HXT_CHECK(hxt_md_close(th2.epair, epair_shift, 1e-10, 0),
                  "shifted E_pair %.17g, all pairs %.17g", th2.epair, epair_shift);
        HXT_CHECK(hxt_md_close(th2.press, press, 1e-10, 0), "shifted Press %.17g, all pairs %.17g",
                  th2.press, press);
        /* Each atom of the fcc lattice at 0.8442 (a = 1.6796) has the shells
         * a/sqrt2, a, a sqrt(3/2), a sqrt2 within 2.5 (the next, a sqrt(5/2)
         * = 2.656, is out): 12 + 6 + 24 + 12 = 54 neighbours, 27 pairs each. */
        HXT_CHECK(sums[2] == 27.0 * N, "%.0f pairs within rc, want %lld", sums[2],
                  (long long) (27 * N));
    }

    /* ---- 5 steps on: atoms off the lattice, forces through the halo */
    for (int s = 1; s <= 5; s++)
        if (!HXT_OK(hx_md_engine_cpu.step(eng, s == 5)))
            goto done;
    if (!HXT_OK(hx_md_engine_cpu.thermo(eng, &th)) ||
        !HXT_OK(hx_md_engine_cpu.gather(eng, &sys, &f)) ||
        !HXT_OK(hxt_md_by_id(comm, &sys, sys.x, 3, xall)) ||
        !HXT_OK(hxt_md_by_id(comm, &sys, sys.v, 3, vall)) ||
        !HXT_OK(hxt_md_by_id(comm, &sys, f, 3, fall)))
        goto done;
    HXT_CHECK(th.step == 5, "thermo step %lld", (long long) th.step);
    wrap_all(xall, N, L);
    memset(fref, 0, (size_t) N * 3 * sizeof(double));
    ref_pairs(xall, N, L, &cfg, rank, size, fref, &rs);
    sums[0] = rs.e;
    sums[1] = rs.w;
    sums[2] = rs.npairs;
    if (!HXT_OK(hxi_allreduce_double(comm, sums, 3, 0)) ||
        !HXT_OK(hxi_allreduce_double(comm, fref, (int) (3 * N), 0)))
        goto done;
    mv2 = 0;
    for (int64_t i = 0; i < 3 * N; i++)
        mv2 += cfg.mass * vall[i] * vall[i];
    {
        double epair = sums[0] / N, press = (mv2 + sums[1]) / (3.0 * V), fscale = 0, worst = 0;
        int64_t worst_id = -1;
        for (int64_t i = 0; i < 3 * N; i++)
            fscale = fscale > fabs(fref[i]) ? fscale : fabs(fref[i]);
        for (int64_t i = 0; i < 3 * N; i++)
            if (fabs(fall[i] - fref[i]) > worst) {
                worst = fabs(fall[i] - fref[i]);
                worst_id = i / 3;
            }
        if (rank == 0)
            printf("step 5: E_pair %.12f (ref %.12f), Press %.12f (ref %.12f), force error "
                   "%.3g of %.3g\n",
                   th.epair, epair, th.press, press, worst, fscale);
        HXT_CHECK(fscale > 1.0, "forces after 5 steps are %g: the atoms did not move", fscale);
        HXT_CHECK(hxt_md_close(th.epair, epair, 1e-10, 0), "step 5 E_pair %.17g, all pairs %.17g",
                  th.epair, epair);
        HXT_CHECK(hxt_md_close(th.press, press, 1e-10, 0), "step 5 Press %.17g, all pairs %.17g",
                  th.press, press);
        HXT_CHECK(worst <= 1e-10 * fscale, "force on atom %lld off by %g (largest force %g)",
                  (long long) worst_id, worst, fscale);
    }

done:
    free(xref);
    free(xall);
    free(vall);
    free(fref);
    free(fall);
    hxt_md_free(&sys, eng);
    hxt_md_free(&sys2, eng2);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_md_forces");
    one_system(comm, 12, 12, 12);
    /* 4 cells (6.7) along x: under five half-cutoff bins, so the neighbour
     * search takes the minimum image pair by pair, with y and z wrapping
     * by bins (each 10 and 9 cells). */
    one_system(comm, 4, 10, 9);
    return hxt_finish(comm);
}
