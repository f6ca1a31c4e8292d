/*
 * test_md_ranks.c - the CPU engine gives the same run on any rank count.
 *
 * 4,000 atoms (10^3 fcc cells, box 16.8, so that 8 ranks still have
 * domains of at least the 2.8 halo cutoff along 2 dimensions or use
 * several pulses along 1), 100 steps, a thermo row every 10 steps, in two
 * settings: the benchmark's lists (every 20, check no) and lists rebuilt
 * on demand (every 2, check yes), which migrates atoms far more often,
 * and the benchmark's lists on a grid of all ranks along x (at 8 ranks:
 * domains 2.1 wide, 2 pulses, forwarding through a neighbour).
 * The run on all ranks of the test is compared with a run on one process
 * done in-process on rank 0 (over MPI_COMM_SELF): every thermo row to 1e-9
 * relative, and every atom's final position to 1e-9 of the box.
 * Summation orders differ between rank counts, so rows agree to rounding
 * amplified by 100 steps of chaos (about 1e-13 here), not bitwise.
 */
#include "md_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifdef HALOX_HAVE_MPI
#include <mpi.h>
#endif

enum { NSTEPS = 100, EVERY = 10, NROWS = NSTEPS / EVERY + 1 };

/* The run: thermo rows and final positions by id (on every rank). */
static hx_status run(hx_comm *comm, const hx_md_config *cfg, hx_md_thermo rows[NROWS],
                     double *xfinal, int64_t *rebuilds)
{
    hx_md_system sys;
    hx_md_engine *eng = NULL;
    hx_status st = hxt_md_setup(comm, cfg, &sys, &eng);
    int r = 0;
    if (st == HX_OK)
        st = hx_md_engine_cpu.thermo(eng, &rows[r++]);
    for (int s = 1; st == HX_OK && s <= NSTEPS; s++) {
        int want = s % EVERY == 0;
        st = hx_md_engine_cpu.step(eng, want);
        if (st == HX_OK && want)
            st = hx_md_engine_cpu.thermo(eng, &rows[r++]);
    }
    if (st == HX_OK)
        st = hx_md_engine_cpu.gather(eng, &sys, NULL);
    if (st == HX_OK)
        st = hxt_md_by_id(comm, &sys, sys.x, 3, xfinal);
    if (st == HX_OK)
        *rebuilds = hx_md_engine_cpu.stats(eng)->rebuilds;
    hxt_md_free(&sys, eng);
    return st;
}

static void compare(const char *what, int size, const hx_md_thermo *a, const hx_md_thermo *b,
                    const double *xa, const double *xb, int64_t n, double L)
{
    double worst = 0;
    for (int r = 0; r < NROWS; r++) {
        const double va[5] = {a[r].temp, a[r].epair, a[r].emol, a[r].etotal, a[r].press};
        const double vb[5] = {b[r].temp, b[r].epair, b[r].emol, b[r].etotal, b[r].press};
        HXT_CHECK(a[r].step == b[r].step, "%s: row %d step %lld vs %lld", what, r,
                  (long long) a[r].step, (long long) b[r].step);
        for (int c = 0; c < 5; c++) {
            double m = fabs(va[c]) > fabs(vb[c]) ? fabs(va[c]) : fabs(vb[c]);
            if (m > 0 && fabs(va[c] - vb[c]) / m > worst)
                worst = fabs(va[c] - vb[c]) / m;
            HXT_CHECK(hxt_md_close(va[c], vb[c], 1e-9, 0),
                      "%s: step %lld column %d: %d ranks %.17g, 1 rank %.17g", what,
                      (long long) a[r].step, c, size, va[c], vb[c]);
        }
    }
    {
        int bad = 0;
        double dmax = 0;
        for (int64_t i = 0; i < 3 * n; i++) {
            double d = fabs(xa[i] - xb[i]);
            d = d > 0.5 * L ? L - d : d; /* one of them may have wrapped */
            dmax = d > dmax ? d : dmax;
            bad += d > 1e-9 * L;
        }
        HXT_CHECK(bad == 0, "%s: %d coordinates differ by more than 1e-9 L (worst %g)", what, bad,
                  dmax);
        printf("%s: %d ranks vs 1: worst thermo difference %.2e relative, worst position "
               "%.2e\n",
               what, size, worst, dmax);
    }
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_md_ranks");
    int rank = hx_comm_rank(comm), size = hx_comm_size(comm);
    hx_md_config base, cfgs[3];
    const char *names[3] = {"every 20 check no", "every 2 check yes", "grid Nx1x1"};
    hx_md_thermo rows[NROWS], ref[NROWS];
    double *xa = NULL, *xb = NULL;
    double lo[3], len[3];
    int64_t n;

    hx_md_config_defaults(&base);
    base.cells[0] = base.cells[1] = base.cells[2] = 10;
    n = 4000;
    if (!HXT_OK(hx_md_box(&base, lo, len)))
        goto done;
    cfgs[0] = cfgs[1] = cfgs[2] = base;
    cfgs[1].neigh_every = 2;
    cfgs[1].neigh_check = 1;
    /* All ranks along x: at 8 ranks domains 2.1 wide, 2 pulses. */
    cfgs[2].grid[0] = size;
    cfgs[2].grid[1] = cfgs[2].grid[2] = 1;
    xa = malloc((size_t) n * 3 * sizeof(double));
    xb = malloc((size_t) n * 3 * sizeof(double));
    if (!xa || !xb) {
        HXT_CHECK(0, "out of memory");
        goto done;
    }

    for (int c = 0; c < 3; c++) {
        int64_t rb_all = 0, rb_one = 0;
        int ok;
        if (!HXT_OK(run(comm, &cfgs[c], rows, xa, &rb_all)))
            goto done;
        HXT_CHECK(rb_all >= (c == 0 ? NSTEPS / 20 : 2), "%s: only %lld rebuilds", names[c],
                  (long long) rb_all);
        if (rank != 0)
            continue;
        {
            hx_comm *self = NULL;
#ifdef HALOX_HAVE_MPI
            MPI_Comm mself = MPI_COMM_SELF;
            ok = HXT_OK(hx_comm_create(&self, &mself));
#else
            ok = HXT_OK(hx_comm_create(&self, NULL));
#endif
            hx_md_config one = cfgs[c];
            memset(one.grid, 0, sizeof one.grid);
            if (ok)
                ok = HXT_OK(run(self, &one, ref, xb, &rb_one));
            hx_comm_destroy(self);
            if (!ok)
                continue;
        }
        compare(names[c], size, rows, ref, xa, xb, n, len[0]);
        if (c != 1)
            HXT_CHECK(rb_all == rb_one, "%s: %lld rebuilds on %d ranks, %lld on one", names[c],
                      (long long) rb_all, size, (long long) rb_one);
    }
done:
    free(xa);
    free(xb);
    return hxt_finish(comm);
}
