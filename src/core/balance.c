/*
 * balance.c - LAMMPS's `balance shift` along one dimension: the cuts move
 * by recursive multisectioning until the slabs between them hold
 * near-equal atom counts (the algorithm of LAMMPS's Balance::shift, tally
 * and adjust, 29 Sep 2021, static and unweighted), and the count of a
 * rank's atoms per slab that feeds it.
 */
#include "core/balance_math.h"
#include "core/hxi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The state of one dimension's balancing; arrays of n + 1 entries. */
typedef struct hxi_shift {
    int n;
    double *cuts, *count, *sum, *target, *lo, *hi, *losum, *hisum;
    hx_balance_count_fn fn;
    void *arg;
} hxi_shift;

/* Counts per slab for the current cuts and their running sums below each
 * cut (LAMMPS's tally). */
static hx_status hxi_tally(hxi_shift *s)
{
    HXI_CHECK(s->fn(s->cuts, s->n, s->count, s->arg));
    s->sum[0] = 0.0;
    for (int i = 1; i <= s->n; i++)
        s->sum[i] = s->sum[i - 1] + s->count[i - 1];
    return HX_OK;
}

/* The largest slab count and max / average (1 when there are no atoms). */
static void hxi_load(const hxi_shift *s, double *max, double *imbalance)
{
    double m = 0.0, total = 0.0;
    for (int i = 0; i < s->n; i++) {
        m = s->count[i] > m ? s->count[i] : m;
        total += s->count[i];
    }
    *max = m;
    *imbalance = m > 0.0 ? m / (total / s->n) : 1.0;
}

/* The targets and the first brackets: lo[i] the nearest cut at or below
 * cut i whose sum is at most target i, hi[i] the nearest at or above whose
 * sum is at least it. */
static void hxi_brackets(hxi_shift *s, double total)
{
    const int n = s->n;
    for (int i = 0; i < n; i++)
        s->target[i] = total / n * i;
    s->target[n] = total;
    s->lo[0] = s->hi[0] = 0.0;
    s->lo[n] = s->hi[n] = 1.0;
    s->losum[0] = s->hisum[0] = 0.0;
    s->losum[n] = s->hisum[n] = total;
    for (int i = 1; i < n; i++) {
        for (int j = i; j >= 0; j--)
            if (s->sum[j] <= s->target[i]) {
                s->lo[i] = s->cuts[j];
                s->losum[i] = s->sum[j];
                break;
            }
        for (int j = i; j <= n; j++)
            if (s->sum[j] >= s->target[i]) {
                s->hi[i] = s->cuts[j];
                s->hisum[i] = s->sum[j];
                break;
            }
    }
}

/* One multisection step (LAMMPS's adjust with rho = 0): tightens the
 * brackets from the current sums (lo increasing, hi decreasing, ties
 * kept) and moves each cut whose sum misses its target to the middle of
 * its bracket. Returns whether any cut moved. */
static int hxi_adjust(hxi_shift *s)
{
    const int n = s->n;
    int change = 0;
    for (int i = 1; i < n; i++) {
        if (s->sum[i] <= s->target[i]) {
            s->lo[i] = s->cuts[i];
            s->losum[i] = s->sum[i];
        }
        if (s->sum[i] >= s->target[i]) {
            s->hi[i] = s->cuts[i];
            s->hisum[i] = s->sum[i];
        }
    }
    for (int i = 1; i < n; i++)
        if (s->lo[i] < s->lo[i - 1]) {
            s->lo[i] = s->lo[i - 1];
            s->losum[i] = s->losum[i - 1];
        }
    for (int i = n - 1; i > 0; i--)
        if (s->hi[i] > s->hi[i + 1]) {
            s->hi[i] = s->hi[i + 1];
            s->hisum[i] = s->hisum[i + 1];
        }
    for (int i = 1; i < n; i++)
        if (s->sum[i] != s->target[i]) {
            change = 1;
            s->cuts[i] = 0.5 * (s->lo[i] + s->hi[i]);
        }
    return change;
}

/* Runs of equal inner cuts (a narrow distribution and few iterations
 * leave them) are spread evenly between the midpoints of the slabs that
 * bound them. Returns whether there were any. */
static int hxi_spread(hxi_shift *s)
{
    const int n = s->n;
    int duplicate = 0;
    for (int i = 1; i < n - 1; i++)
        if (s->cuts[i] == s->cuts[i + 1])
            duplicate = 1;
    if (!duplicate)
        return 0;
    for (int i = 0; i < n; i++)
        s->lo[i] = 0.5 * (s->cuts[i] + s->cuts[i + 1]);
    for (int i = 1; i < n - 1;) {
        int j = i + 1;
        while (s->cuts[j] == s->cuts[i])
            j++;
        j--;
        if (j > i) {
            double step = (s->lo[j] - s->lo[i - 1]) / (j - i + 2);
            for (int k = i; k <= j; k++)
                s->cuts[k] = s->lo[i - 1] + (k - i + 1) * step;
        }
        i = j + 1;
    }
    return 1;
}

static hx_status hxi_shift_check(int n, const double *cuts, hx_balance_count_fn count, int niter,
                                 double stopthresh, int ndims, const hx_balance_result *out)
{
    if (n < 1 || !cuts || !count || !out)
        return hxi_error(HX_ERR_INVALID,
                         "balance shift: give at least one slab, its cuts, a count and a "
                         "place for the result");
    if (niter < 1 || !(stopthresh >= 1.0) || ndims < 1 || ndims > 3)
        return hxi_error(HX_ERR_INVALID,
                         "balance shift: Niter %d, stopthresh %g, %d dimensions: LAMMPS needs "
                         "Niter > 0, stopthresh >= 1 and 1 to 3 dimensions",
                         niter, stopthresh, ndims);
    if (cuts[0] != 0.0 || cuts[n] != 1.0)
        return hxi_error(HX_ERR_INVALID, "balance shift: cuts run from %g to %g, not 0 to 1",
                         cuts[0], cuts[n]);
    for (int i = 0; i < n; i++)
        if (!(cuts[i + 1] > cuts[i]))
            return hxi_error(HX_ERR_INVALID,
                             "balance shift: cuts are not increasing (entry %d is %g after %g)",
                             i + 1, cuts[i + 1], cuts[i]);
    return HX_OK;
}

/* The iterations of one dimension after the first tally. */
static hx_status hxi_shift_iterate(hxi_shift *s, int niter, double delta, int *iterations)
{
    for (int m = 0; m < niter; m++) {
        int change = hxi_adjust(s), done = 1;
        HXI_CHECK(hxi_tally(s));
        ++*iterations;
        if (!change)
            break;
        for (int i = 1; i < s->n; i++)
            if (fabs(1.0 * (s->sum[i] - s->target[i])) / s->target[i] > delta)
                done = 0;
        if (done)
            break;
    }
    return HX_OK;
}

hx_status hx_balance_shift(int n, double *cuts, hx_balance_count_fn count, void *arg, int niter,
                           double stopthresh, int ndims, hx_balance_result *out)
{
    hxi_shift s;
    double *mem = NULL;
    hx_status st;
    HXI_CHECK(hxi_shift_check(n, cuts, count, niter, stopthresh, ndims, out));
    memset(out, 0, sizeof *out);
    HXI_CHECK(hxi_alloc((void **) &mem, 7 * (size_t) (n + 1) * sizeof(double), "balance shift"));
    s.n = n;
    s.fn = count;
    s.arg = arg;
    s.cuts = malloc((size_t) (n + 1) * sizeof(double));
    if (!s.cuts) {
        free(mem);
        return hxi_error(HX_ERR_NOMEM, "balance shift: no memory for %d cuts", n + 1);
    }
    memcpy(s.cuts, cuts, (size_t) (n + 1) * sizeof(double));
    s.count = mem;
    s.sum = mem + (n + 1);
    s.target = mem + 2 * (n + 1);
    s.lo = mem + 3 * (n + 1);
    s.hi = mem + 4 * (n + 1);
    s.losum = mem + 5 * (n + 1);
    s.hisum = mem + 6 * (n + 1);
    st = hxi_tally(&s);
    if (st == HX_OK) {
        hxi_load(&s, &out->max_before, &out->imbalance_before);
        out->max_after = out->max_before;
        out->imbalance_after = out->imbalance_before;
    }
    /* No atoms: nothing to balance (LAMMPS returns before any iteration). */
    if (st == HX_OK && s.sum[n] > 0.0) {
        hxi_brackets(&s, s.sum[n]);
        st = hxi_shift_iterate(&s, niter, pow(stopthresh, 1.0 / ndims) - 1.0, &out->iterations);
        if (st == HX_OK && hxi_spread(&s))
            st = hxi_tally(&s);
        for (int i = 0; st == HX_OK && i < n; i++)
            if (!(s.cuts[i] < s.cuts[i + 1]))
                st = hxi_error(HX_ERR_INVALID,
                               "balance shift produced cuts that do not increase (%g, %g at "
                               "entry %d), as LAMMPS's \"Balance produced bad splits\"",
                               s.cuts[i], s.cuts[i + 1], i);
        if (st == HX_OK) {
            hxi_load(&s, &out->max_after, &out->imbalance_after);
            memcpy(cuts, s.cuts, (size_t) (n + 1) * sizeof(double));
        }
    }
    free(s.cuts);
    free(mem);
    return st;
}

/* Fractional coordinate along dim of x (balance_math.h). */
static double hxi_lamda(const hx_decomp *d, int dim, const double x[3])
{
    double delta[3];
    for (int k = 0; k < 3; k++)
        delta[k] = x[k] - d->box_lo[k];
    return hxi_bal_lamda(d->box_len, d->tilt, d->triclinic, dim, delta);
}

hx_status hx_balance_count(const double *cuts, int n, double *counts, void *arg)
{
    const hx_balance_local *a = arg;
    hx_status st = HX_OK;
    if (!a || !a->d || a->dim < HX_X || a->dim > HX_Z || a->nlocal < 0 || (a->nlocal > 0 && !a->x))
        st = hxi_error(HX_ERR_INVALID,
                       "balance count: give the communicator, the decomposition, a dimension "
                       "0 to 2 and the local atoms");
    for (int i = 0; i < n; i++)
        counts[i] = 0.0;
    for (int i = 0; st == HX_OK && i < a->nlocal; i++)
        counts[hxi_bal_binary(hxi_lamda(a->d, a->dim, a->x + 3 * (size_t) i), n, cuts)] += 1.0;
    if (!a || !a->comm)
        return st;
    HXI_CHECK(hxi_agree(a->comm, st));
    return hxi_allreduce_double(a->comm, counts, n, 0);
}
