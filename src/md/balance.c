/*
 * balance.c - LAMMPS's `balance` and `fix balance` (29 Sep 2021,
 * Balance::command, Balance::shift, FixBalance::pre_exchange) on
 * halox-md's home atoms: the load is atoms per rank (LAMMPS's default,
 * unweighted); below THRESH nothing is done; else the cuts come from
 * hx_balance_shift dimension by dimension (stopping early when the 3-d
 * imbalance of the new cuts is within STOPTHRESH, as Balance::shift's
 * imbalance_splits test) or from the deck, and the atoms migrate to them.
 */
#include "md/balance.h"

#include "core/hxi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Balance::imbalance_factor: the most atoms on a rank and that over the
 * average (1 with no atoms). */
static hx_status rank_loads(hx_comm *comm, int n, double *max, double *imb)
{
    double v[2] = {n, n};
    HXI_CHECK(hxi_allreduce_double(comm, v, 1, 1));
    HXI_CHECK(hxi_allreduce_double(comm, v + 1, 1, 0));
    *max = v[0];
    *imb = v[1] > 0 ? v[0] / (v[1] / hx_comm_size(comm)) : 1.0;
    return HX_OK;
}

/* Balance::imbalance_splits: the imbalance the cuts of d would give, atoms
 * counted where their owner under d is (before they move). */
static hx_status split_imbalance(hx_comm *comm, const hx_decomp *d, const hxi_md_bal_count *c,
                                 double *imb)
{
    const int np = hx_comm_size(comm);
    double *count = calloc((size_t) np, sizeof *count), max = 0, sum = 0;
    if (!count)
        return hxi_error(HX_ERR_NOMEM, "balance: out of memory for %d ranks' loads", np);
    hx_status st = hxi_agree(comm, c->owners(c->arg, d, count));
    if (st == HX_OK)
        st = hxi_allreduce_double(comm, count, np, 0);
    for (int r = 0; st == HX_OK && r < np; r++) {
        max = fmax(max, count[r]);
        sum += count[r];
    }
    free(count);
    *imb = sum > 0 ? max / (sum / np) : 1.0;
    return st;
}

/* hx_balance_shift's count: this rank's slabs (c->slabs), summed over the
 * ranks (collective, as hx_balance_count). */
typedef struct slab_arg {
    hx_comm *comm;
    const hx_decomp *d;
    int dim;
    const hxi_md_bal_count *c;
} slab_arg;

static hx_status slab_count(const double *cuts, int n, double *counts, void *arg)
{
    const slab_arg *a = arg;
    HXI_CHECK(hxi_agree(a->comm, a->c->slabs(a->c->arg, a->d, a->dim, cuts, n, counts)));
    return hxi_allreduce_double(a->comm, counts, n, 0);
}

/* The host's count: this rank's home atoms in s (positions inside the
 * box), by libhalox's hx_balance_count and hx_decomp_owner. */
static hx_status host_slabs(void *arg, const hx_decomp *d, int dim, const double *cuts, int n,
                            double *counts)
{
    const hx_md_system *s = arg;
    hx_balance_local loc = {NULL, d, dim, s->n, s->x};
    return hx_balance_count(cuts, n, counts, &loc);
}

static hx_status host_owners(void *arg, const hx_decomp *d, double *count)
{
    const hx_md_system *s = arg;
    for (int i = 0; i < s->n; i++)
        count[hx_decomp_owner(d, s->x + 3 * (size_t) i)] += 1.0;
    return HX_OK;
}

static hxi_md_bal_count host_count(hx_md_system *s)
{
    hxi_md_bal_count c = {s->n, host_slabs, host_owners, s};
    return c;
}

/* The fractions cuts[0 .. grid] of d along dim: its own, else equal. */
static void current_cuts(const hx_decomp *d, int dim, double *cuts)
{
    const int n = d->grid[dim];
    for (int c = 0; c <= n; c++)
        cuts[c] = d->cuts_set[dim] ? d->cut[dim][c] : (double) c / n;
}

/* hx_decomp_set_cuts with the command's name before the library's word. */
static hx_status set_cuts(hx_decomp *d, int dim, const double *cuts, const char *cmd)
{
    const hx_status st = hx_decomp_set_cuts(d, dim, cuts);
    if (st != HX_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", hx_last_error());
        return hxi_error(st, "%s: the new cuts along %c cannot be used: %s", cmd, 'x' + dim, why);
    }
    return HX_OK;
}

/* Balance::shift over the dimensions named, into d; *iters summed. */
static hx_status shift_cuts(hx_comm *comm, const hx_md_balance *b, hx_decomp *d,
                            const hxi_md_bal_count *c, const char *cmd, int *iters)
{
    const int ndims = (int) strlen(b->dims);
    double cuts[HX_MAX_CUT_DOMAINS + 1], imb = 0;
    for (int k = 0; k < ndims; k++) {
        const int dim = b->dims[k] - 'x', n = d->grid[dim];
        slab_arg arg = {comm, d, dim, c};
        hx_balance_result res;
        if (n > HX_MAX_CUT_DOMAINS)
            return hxi_error(HX_ERR_INVALID, "%s: %d domains along %c (at most %d)", cmd, n,
                             b->dims[k], HX_MAX_CUT_DOMAINS);
        current_cuts(d, dim, cuts);
        HXI_CHECK(
            hx_balance_shift(n, cuts, slab_count, &arg, b->niter, b->stopthresh, ndims, &res));
        *iters += res.iterations;
        HXI_CHECK(set_cuts(d, dim, cuts, cmd));
        HXI_CHECK(split_imbalance(comm, d, c, &imb));
        if (imb <= b->stopthresh)
            break;
    }
    return HX_OK;
}

/* balance THRESH x|y|z uniform|FRACS...: the deck's cuts into d. */
static hx_status user_cuts(const hx_md_balance *b, hx_decomp *d, const char *cmd)
{
    double cuts[HX_MAX_CUT_DOMAINS + 1];
    for (int dim = 0; dim < 3; dim++) {
        const int n = d->grid[dim];
        if (b->user[dim] == 1)
            HXI_CHECK(set_cuts(d, dim, NULL, cmd));
        if (b->user[dim] != 2)
            continue;
        if (b->nfrac[dim] != n - 1)
            return hxi_error(HX_ERR_INVALID,
                             "%s %c: %d fraction%s for %d domains along %c (the grid is "
                             "%dx%dx%d): give %d",
                             cmd, 'x' + dim, b->nfrac[dim], b->nfrac[dim] == 1 ? "" : "s", n,
                             'x' + dim, d->grid[0], d->grid[1], d->grid[2], n - 1);
        cuts[0] = 0.0;
        cuts[n] = 1.0;
        memcpy(cuts + 1, b->frac[dim], (size_t) (n - 1) * sizeof(double));
        HXI_CHECK(set_cuts(d, dim, cuts, cmd));
    }
    return HX_OK;
}

void hxi_md_balance_wrap(const hx_decomp *d, double *x, int n)
{
    if (d->triclinic)
        return;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            double *p = x + 3 * (size_t) i + k;
            const double lo = d->box_lo[k], len = d->box_len[k];
            if (*p < lo)
                *p += len;
            if (*p >= lo + len)
                *p = fmax(*p - len, lo);
        }
}

/* LAMMPS's report of a balance (Balance::command). */
static void report(const hx_decomp *d, double seconds, int iters, const double before[2],
                   const double after[2])
{
    printf(" rebalancing time: %.3f seconds\n", seconds);
    printf("  iteration count = %d\n", iters);
    printf("  initial/final maximal load/proc = %#.8g %#.8g\n", before[0], after[0]);
    printf("  initial/final imbalance factor  = %#.8g %#.8g\n", before[1], after[1]);
    for (int dim = 0; dim < 3; dim++) {
        double cuts[HX_MAX_CUT_DOMAINS + 1];
        current_cuts(d, dim, cuts);
        printf("  %c cuts:", 'x' + dim);
        for (int c = 0; c <= d->grid[dim]; c++)
            printf(" %#.8g", cuts[c]);
        printf("\n");
    }
    fflush(stdout);
}

/* New cuts into *dp when the imbalance is at or above THRESH. */
static hx_status rebalance(hx_comm *comm, const hx_md_balance *b, hx_decomp *dp,
                           const hxi_md_bal_count *c, const char *name, double before[2],
                           int *iters, int *changed)
{
    hx_decomp d = *dp;
    char cmd[64];
    snprintf(cmd, sizeof cmd, "%s (deck line %d)", name, b->line);
    *iters = 0;
    *changed = 0;
    HXI_CHECK(rank_loads(comm, c->n, &before[0], &before[1]));
    if (before[1] < b->thresh)
        return HX_OK;
    if (b->style == HX_MD_BAL_SHIFT)
        HXI_CHECK(shift_cuts(comm, b, &d, c, cmd, iters));
    else
        HXI_CHECK(user_cuts(b, &d, cmd));
    *dp = d;
    *changed = 1;
    return HX_OK;
}

hx_status hxi_md_balance_setup(hx_comm *comm, const hx_md_balance *b, hx_md_system *sys)
{
    hx_field fields[3] = {{(void **) &sys->v, 3 * sizeof(double)},
                          {(void **) &sys->id, sizeof(int64_t)}};
    double before[2], after[2];
    const double t0 = hxi_now();
    int nf = 2, iters, changed;
    const int root = hx_comm_rank(comm) == 0;
    if (b->style == HX_MD_BAL_NONE)
        return HX_OK;
    if (root) {
        printf("Balancing ...\n");
        fflush(stdout);
    }
    const hxi_md_bal_count c = host_count(sys);
    HXI_CHECK(rebalance(comm, b, &sys->decomp, &c, "balance", before, &iters, &changed));
    if (!changed)
        return HX_OK;
    if (sys->type)
        fields[nf++] = (hx_field){(void **) &sys->type, sizeof(int32_t)};
    /* A restart file's reference positions go with their atoms (the engine
     * migrates again from them; the capacity is shared). */
    if (sys->has_ref)
        fields[nf++] = (hx_field){(void **) &sys->xref, 3 * sizeof(double)};
    HXI_CHECK(hx_migrate(comm, &sys->decomp, &sys->n, &sys->capacity, &sys->x, fields, nf));
    HXI_CHECK(rank_loads(comm, sys->n, &after[0], &after[1]));
    if (root)
        report(&sys->decomp, hxi_now() - t0, iters, before, after);
    return HX_OK;
}

hx_status hxi_md_balance_fix_with(hx_comm *comm, const hx_md_balance *b, hx_decomp *d,
                                  const hxi_md_bal_count *c, int *changed)
{
    double before[2];
    int iters;
    HXI_CHECK(rebalance(comm, b, d, c, "fix balance", before, &iters, changed));
    if (*changed && hx_comm_rank(comm) == 0)
        hxi_info("fix balance: imbalance %.4f, %d iterations, pulses %d %d %d", before[1], iters,
                 d->npulse[0], d->npulse[1], d->npulse[2]);
    return HX_OK;
}

hx_status hxi_md_balance_fix(hx_comm *comm, const hx_md_balance *b, hx_md_system *sys, int *changed)
{
    const hxi_md_bal_count c = host_count(sys);
    return hxi_md_balance_fix_with(comm, b, &sys->decomp, &c, changed);
}

int hxi_md_balance_due(const hx_md_balance *b, int64_t step)
{
    return b->style == HX_MD_BAL_SHIFT && b->nfreq > 0 && step % b->nfreq == 0;
}

void hxi_md_balance_thermo(hx_md_config *c)
{
    hx_md_config one;
    if (c->fix_balance.style == HX_MD_BAL_NONE)
        return;
    hx_md_config_thermo_one(&one);
    if (c->thermo_ncols == one.thermo_ncols &&
        memcmp(c->thermo_cols, one.thermo_cols, (size_t) one.thermo_ncols) == 0)
        c->thermo_cols[c->thermo_ncols++] = HX_MD_TH_VOL;
}
