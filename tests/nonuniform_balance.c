/*
 * nonuniform_balance.c - test_nonuniform's balance shift cases: LAMMPS's
 * Balance::shift written out once more, literally (its arrays, its
 * loops), as the reference for hx_balance_shift on synthetic systems.
 */
#include "sysgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void test_balance(hx_comm *comm);

/* Balance::binary. */
static int ref_binary(double value, int n, const double *vec)
{
    int lo = 0, hi = n - 1;
    if (value < vec[lo])
        return lo;
    if (value >= vec[hi])
        return hi;
    int index = (lo + hi) / 2;
    while (lo < hi - 1) {
        if (value < vec[index])
            hi = index;
        else if (value >= vec[index])
            lo = index;
        index = (lo + hi) / 2;
    }
    return index;
}

/* Balance::tally on fractional coordinates f (nf of them). */
static void ref_tally(const double *f, int nf, int np, const double *split, double *onecost,
                      double *sum)
{
    for (int i = 0; i < np; i++)
        onecost[i] = 0.0;
    for (int i = 0; i < nf; i++)
        onecost[ref_binary(f[i], np, split)] += 1.0;
    sum[0] = 0.0;
    for (int i = 1; i < np + 1; i++)
        sum[i] = sum[i - 1] + onecost[i - 1];
}

typedef struct ref_out {
    int niter;
    double max0, max1;
} ref_out;

/* Balance::shift for one dimension (rho = 0), adjust inlined, then the
 * duplicate spreading. */
static ref_out ref_shift(const double *f, int nf, int np, double *split, int nitermax,
                         double stopthresh, int ndim)
{
    double onecost[64], sum[65], target[65], lo[65], hi[65], losum[65], hisum[65];
    double delta = pow(stopthresh, 1.0 / ndim) - 1.0, totalcost = nf;
    ref_out o = {0, 0, 0};
    int i, j, k, m;
    ref_tally(f, nf, np, split, onecost, sum);
    for (i = 0; i < np; i++)
        o.max0 = onecost[i] > o.max0 ? onecost[i] : o.max0;
    for (i = 0; i < np; i++)
        target[i] = totalcost / np * i;
    target[np] = totalcost;
    lo[0] = hi[0] = 0.0;
    lo[np] = hi[np] = 1.0;
    losum[0] = hisum[0] = 0.0;
    losum[np] = hisum[np] = totalcost;
    for (i = 1; i < np; i++) {
        for (j = i; j >= 0; j--)
            if (sum[j] <= target[i]) {
                lo[i] = split[j];
                losum[i] = sum[j];
                break;
            }
        for (j = i; j <= np; j++)
            if (sum[j] >= target[i]) {
                hi[i] = split[j];
                hisum[i] = sum[j];
                break;
            }
    }
    for (m = 0; m < nitermax; m++) {
        int change = 0, doneflag = 1;
        for (i = 1; i < np; i++) {
            if (sum[i] <= target[i]) {
                lo[i] = split[i];
                losum[i] = sum[i];
            }
            if (sum[i] >= target[i]) {
                hi[i] = split[i];
                hisum[i] = sum[i];
            }
        }
        for (i = 1; i < np; i++)
            if (lo[i] < lo[i - 1]) {
                lo[i] = lo[i - 1];
                losum[i] = losum[i - 1];
            }
        for (i = np - 1; i > 0; i--)
            if (hi[i] > hi[i + 1]) {
                hi[i] = hi[i + 1];
                hisum[i] = hisum[i + 1];
            }
        for (i = 1; i < np; i++)
            if (sum[i] != target[i]) {
                change = 1;
                split[i] = 0.5 * (lo[i] + hi[i]);
            }
        ref_tally(f, nf, np, split, onecost, sum);
        o.niter++;
        if (!change)
            break;
        for (i = 1; i < np; i++)
            if (fabs(1.0 * (sum[i] - target[i])) / target[i] > delta)
                doneflag = 0;
        if (doneflag)
            break;
    }
    int duplicate = 0;
    for (i = 1; i < np - 1; i++)
        if (split[i] == split[i + 1])
            duplicate = 1;
    if (duplicate) {
        for (i = 0; i < np; i++)
            lo[i] = 0.5 * (split[i] + split[i + 1]);
        i = 1;
        while (i < np - 1) {
            j = i + 1;
            while (split[j] == split[i])
                j++;
            j--;
            if (j > i) {
                delta = (lo[j] - lo[i - 1]) / (j - i + 2);
                for (k = i; k <= j; k++)
                    split[k] = lo[i - 1] + (k - i + 1) * delta;
            }
            i = j + 1;
        }
    }
    ref_tally(f, nf, np, split, onecost, sum);
    for (i = 0; i < np; i++)
        o.max1 = onecost[i] > o.max1 ? onecost[i] : o.max1;
    return o;
}

/* A system in a box: the slab (40% of the box along z, from 0.3 to 0.7,
 * and a vapour of 2%) or the droplet-like block (a dense block of a fifth
 * of the box along each dimension off the centre, and a vapour of 5%). */
static double *synthetic(const hx_decomp *d, int kind, int n, uint64_t seed)
{
    hxt_rng r = {seed};
    double *x = hxt_xmalloc((size_t) n * 3 * sizeof(double));
    for (int i = 0; i < n; i++) {
        double s[3], u = hxt_uniform(&r);
        for (int k = 0; k < 3; k++)
            s[k] = hxt_uniform(&r);
        if (kind == 0 && u >= 0.02)
            s[2] = 0.3 + 0.4 * s[2];
        if (kind == 1 && u >= 0.05)
            for (int k = 0; k < 3; k++)
                s[k] = 0.15 + 0.2 * s[k];
        for (int k = 0; k < 3; k++)
            x[3 * i + k] =
                d->box_lo[k] + s[0] * d->edge[0][k] + s[1] * d->edge[1][k] + s[2] * d->edge[2][k];
    }
    return x;
}

/* LAMMPS's lamda along dim: h_inv applied to x - boxlo. */
static double ref_lamda(const hx_decomp *d, int dim, const double *x)
{
    const double h[6] = {d->box_len[0], d->box_len[1], d->box_len[2],
                         d->tilt[2],    d->tilt[1],    d->tilt[0]};
    double h_inv[6], delta[3];
    h_inv[0] = 1.0 / h[0];
    h_inv[1] = 1.0 / h[1];
    h_inv[2] = 1.0 / h[2];
    h_inv[3] = -h[3] / (h[1] * h[2]);
    h_inv[4] = (h[3] * h[5] - h[1] * h[4]) / (h[0] * h[1] * h[2]);
    h_inv[5] = -h[5] / (h[0] * h[1]);
    for (int k = 0; k < 3; k++)
        delta[k] = x[k] - d->box_lo[k];
    if (dim == 0)
        return d->triclinic ? h_inv[0] * delta[0] + h_inv[5] * delta[1] + h_inv[4] * delta[2]
                            : h_inv[0] * delta[0];
    if (dim == 1)
        return d->triclinic ? h_inv[1] * delta[1] + h_inv[3] * delta[2] : h_inv[1] * delta[1];
    return h_inv[2] * delta[2];
}

/* One case: the library over the ranks (each holding every nr-th atom)
 * against the reference over all atoms: cuts bitwise, iterations, loads. */
static void balance_case(hx_comm *comm, const hx_decomp *d, const double *x, int n, int dim, int np,
                         int niter, double thresh, const char *what)
{
    const int nr = hx_comm_size(comm), rank = hx_comm_rank(comm);
    double *f = hxt_xmalloc((size_t) n * sizeof(double)), *mine = NULL;
    double want[65], got[65];
    int nmine = 0;
    mine = hxt_xmalloc((size_t) (n / nr + 1) * 3 * sizeof(double));
    for (int i = 0; i < n; i++) {
        f[i] = ref_lamda(d, dim, &x[3 * i]);
        if (i % nr == rank)
            memcpy(&mine[3 * nmine++], &x[3 * i], 3 * sizeof(double));
    }
    for (int i = 0; i <= np; i++)
        want[i] = got[i] = (double) i / np;
    want[np] = got[np] = 1.0;
    ref_out o = ref_shift(f, n, np, want, niter, thresh, 1);
    hx_balance_local loc = {comm, d, dim, nmine, mine};
    hx_balance_result res;
    if (HXT_OK(hx_balance_shift(np, got, hx_balance_count, &loc, niter, thresh, 1, &res))) {
        int nbad = 0;
        for (int i = 0; i <= np; i++)
            nbad += !hxt_same_d(want[i], got[i]) || (i < np && !(got[i] < got[i + 1]));
        HXT_CHECK(nbad == 0 && res.iterations == o.niter && res.max_before == o.max0 &&
                      res.max_after == o.max1,
                  "%s: %d cuts off; iterations %d (LAMMPS %d), max %g -> %g (LAMMPS %g -> %g)",
                  what, nbad, res.iterations, o.niter, res.max_before, res.max_after, o.max0,
                  o.max1);
        /* (LAMMPS's shift may leave a nearly balanced start a little
         * worse: no check that it improves.) */
        HXT_CHECK(fabs(res.imbalance_before - o.max0 * np / n) < 1e-12 &&
                      fabs(res.imbalance_after - o.max1 * np / n) < 1e-12,
                  "%s: imbalance %g -> %g", what, res.imbalance_before, res.imbalance_after);
        if (rank == 0)
            printf("  %s: %d iterations, imbalance %g -> %g\n", what, res.iterations,
                   res.imbalance_before, res.imbalance_after);
    }
    free(f);
    free(mine);
}

void test_balance(hx_comm *comm)
{
    const double lo[3] = {-1.0, 0.0, 2.0}, len[3] = {20.0, 18.0, 30.0};
    const double tilt[3] = {3.0, -2.0, 4.0};
    const int g[3] = {1, 1, 1}, nps[] = {2, 3, 4, 7, 8};
    const int niters[] = {5, 20, 50};
    const double threshs[] = {1.1, 1.0, 1.02};
    const int n = 20000;
    for (int tri = 0; tri < 2; tri++)
        for (int kind = 0; kind < 2; kind++) {
            hx_decomp d;
            if (!HXT_OK(hx_decomp_init_tilted(&d, lo, len, tri ? tilt : NULL, 2.0, g, 1, 0)))
                return;
            double *x = synthetic(&d, kind, n, 99 + 2 * kind + tri);
            for (size_t p = 0; p < sizeof nps / sizeof nps[0]; p++)
                for (int it = 0; it < 3; it++)
                    for (int dim = kind == 0 ? 2 : 0; dim < 3; dim++) {
                        char what[128];
                        snprintf(what, sizeof what, "balance %s%s along %c, %d slabs, %d %g",
                                 kind ? "block" : "slab", tri ? " (triclinic)" : "", "xyz"[dim],
                                 nps[p], niters[it], threshs[it]);
                        balance_case(comm, &d, x, n, dim, nps[p], niters[it], threshs[it], what);
                    }
            free(x);
        }
    /* No atoms: nothing moves, no iteration (LAMMPS returns at once). */
    double cuts[3] = {0, 0.5, 1};
    hx_balance_result res;
    hx_balance_local none = {comm, NULL, 2, 0, NULL};
    hx_decomp d;
    if (HXT_OK(hx_decomp_init(&d, lo, len, 2.0, g, 1, 0))) {
        none.d = &d;
        if (HXT_OK(hx_balance_shift(2, cuts, hx_balance_count, &none, 10, 1.1, 1, &res)))
            HXT_CHECK(res.iterations == 0 && cuts[1] == 0.5 && res.imbalance_before == 1.0,
                      "balance of no atoms: %d iterations, cut %g", res.iterations, cuts[1]);
    }
    HXT_FAILS(hx_balance_shift(2, cuts, hx_balance_count, &none, 0, 1.1, 1, &res), HX_ERR_INVALID,
              "Niter");
    HXT_FAILS(hx_balance_shift(2, cuts, hx_balance_count, &none, 5, 0.9, 1, &res), HX_ERR_INVALID,
              "stopthresh");
}
