/*
 * deck_balance.c - the deck's load balancing: `balance THRESH shift DIMS
 * NITER STOPTHRESH`, `balance THRESH x uniform|FRACS... y ... z ...` and
 * `fix ID all balance NFREQ THRESH shift DIMS NITER STOPTHRESH`, as LAMMPS
 * (29 Sep 2021) reads them; rcb, weight and out are refused with the file,
 * the line and the form halox-md reads. The run does the balancing
 * (balance.c).
 */
#include "md/deck_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const balance_usage =
    "balance THRESH shift DIMS NITER STOPTHRESH, or balance THRESH x uniform|FRACS... "
    "y ... z ...";
static const char *const fix_balance_usage =
    "fix ID all balance NFREQ THRESH shift DIMS NITER STOPTHRESH";

/* A word halox-md does not read at this place of the command. */
static hx_status refuse(deck *d, const char *cmd, const char *w, const char *usage)
{
    if (strcmp(w, "rcb") == 0 || strcmp(w, "weight") == 0 || strcmp(w, "out") == 0)
        return deck_error(d,
                          "%s %s is not supported: halox-md balances bricks by atom counts "
                          "(write `%s`)",
                          cmd, w, usage);
    return deck_error(d, "%s: '%s' is not read here; write `%s`", cmd, deck_show(w).s, usage);
}

static hx_status get_thresh(deck *d, const char *cmd, const char *w, double *out)
{
    HXI_CHECK(deck_get_double(d, "the imbalance threshold THRESH", w, out));
    if (!(*out >= 1.0))
        return deck_error(d, "%s: THRESH %s must be >= 1.0 (an imbalance factor)", cmd,
                          deck_show(w).s);
    return HX_OK;
}

/* shift DIMS NITER STOPTHRESH from word i (which is "shift"). */
static hx_status parse_shift(deck *d, const char *cmd, int i, const char *usage, hx_md_balance *b)
{
    const char *dims;
    if (d->nwords != i + 4)
        return d->nwords > i + 4
                   ? refuse(d, cmd, d->words[i + 4], usage)
                   : deck_error(d, "%s shift takes DIMS NITER STOPTHRESH; write `%s`", cmd, usage);
    dims = d->words[i + 1];
    if (strlen(dims) < 1 || strlen(dims) > 3 || strspn(dims, "xyz") != strlen(dims))
        return deck_error(d, "%s shift: DIMS '%s' must be letters of xyz", cmd, deck_show(dims).s);
    for (size_t k = 1; k < strlen(dims); k++)
        if (memchr(dims, dims[k], k))
            return deck_error(d, "%s shift: DIMS '%s' names %c twice", cmd, dims, dims[k]);
    HXI_CHECK(deck_get_int32(d, "the shift iterations NITER", d->words[i + 2], 1, &b->niter));
    HXI_CHECK(deck_get_double(d, "STOPTHRESH", d->words[i + 3], &b->stopthresh));
    if (!(b->stopthresh >= 1.0))
        return deck_error(d, "%s shift: STOPTHRESH %s must be >= 1.0", cmd,
                          deck_show(d->words[i + 3]).s);
    strcpy(b->dims, dims);
    b->style = HX_MD_BAL_SHIFT;
    return HX_OK;
}

/* x|y|z uniform|FRACS... from word *i; *i moves past them. */
static hx_status parse_user_dim(deck *d, int *i, hx_md_balance *b)
{
    const int dim = d->words[*i][0] - 'x';
    int k = *i + 1;
    if (b->user[dim])
        return deck_error(d, "balance: %s is given twice", d->words[*i]);
    if (k < d->nwords && strcmp(d->words[k], "uniform") == 0) {
        b->user[dim] = 1;
        *i = k + 1;
        return HX_OK;
    }
    for (; k < d->nwords; k++) {
        char *end;
        double f = strtod(d->words[k], &end);
        if (end == d->words[k] || *end)
            break; /* the next style or keyword */
        if (b->nfrac[dim] == HX_MD_BALANCE_MAX - 1)
            return deck_error(d, "balance %s: more than %d fractions", d->words[*i],
                              HX_MD_BALANCE_MAX - 1);
        if (!(f > 0.0 && f < 1.0) || (b->nfrac[dim] && !(f > b->frac[dim][b->nfrac[dim] - 1])))
            return deck_error(d,
                              "balance %s: the cuts must increase strictly between 0 and 1 "
                              "('%s' does not)",
                              d->words[*i], deck_show(d->words[k]).s);
        b->frac[dim][b->nfrac[dim]++] = f;
    }
    b->user[dim] = 2;
    *i = k;
    return HX_OK;
}

/* balance THRESH shift ... | x ... y ... z ...: once, before the run. */
hx_status deck_cmd_balance(deck *d)
{
    hx_md_balance b;
    memset(&b, 0, sizeof b);
    HXI_CHECK(deck_need(d, d->have_atoms || d->restarted, "create_atoms (or read_restart)"));
    if (d->c.nbalance == HX_MD_MAX_BALANCES)
        return deck_error(d, "more than %d balance commands before the run", HX_MD_MAX_BALANCES);
    if (d->nwords < 3)
        return deck_error(d, "balance takes THRESH and a style; write `%s`", balance_usage);
    HXI_CHECK(get_thresh(d, "balance", d->words[1], &b.thresh));
    if (strcmp(d->words[2], "shift") == 0)
        HXI_CHECK(parse_shift(d, "balance", 2, balance_usage, &b));
    else
        for (int i = 2; i < d->nwords;) {
            const char *w = d->words[i];
            if ((strcmp(w, "x") && strcmp(w, "y") && strcmp(w, "z")) || w[1])
                return refuse(d, "balance", w, balance_usage);
            HXI_CHECK(parse_user_dim(d, &i, &b));
            b.style = HX_MD_BAL_USER;
        }
    b.line = d->line;
    d->c.balance[d->c.nbalance++] = b;
    return HX_OK;
}

/* fix ID all balance NFREQ THRESH shift DIMS NITER STOPTHRESH. */
hx_status deck_cmd_fix_balance(deck *d)
{
    hx_md_balance b;
    memset(&b, 0, sizeof b);
    if (strcmp(d->words[2], "all") != 0)
        return deck_error(d, "fix %s: group '%s': halox-md has the group all only; write `%s`",
                          deck_show(d->words[1]).s, deck_show(d->words[2]).s, fix_balance_usage);
    if (d->nwords < 7)
        return deck_error(d, "fix balance takes NFREQ THRESH and a style; write `%s`",
                          fix_balance_usage);
    HXI_CHECK(deck_get_int32(d, "the balance interval NFREQ", d->words[4], 0, &b.nfreq));
    HXI_CHECK(get_thresh(d, "fix balance", d->words[5], &b.thresh));
    if (strcmp(d->words[6], "shift") != 0)
        return refuse(d, "fix balance", d->words[6], fix_balance_usage);
    HXI_CHECK(parse_shift(d, "fix balance", 6, fix_balance_usage, &b));
    b.line = d->line;
    d->c.fix_balance = b;
    return HX_OK;
}
