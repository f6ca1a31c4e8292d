/*
 * deck_pair.c - the deck's pair commands: pair_style, pair_coeff and
 * pair_modify, with the forms and checks of the styles' table
 * (md/pair/pair_styles.c). pair_coeff sets the pairs of types its two
 * ranges name, as LAMMPS's (I <= J of each); the unlike pairs it leaves are
 * mixed at the run (md/pair/pair_mix.c).
 */
#include "md/deck_internal.h"
#include "md/pair/pair_styles.h"

#include <string.h>

/* Parameter k of style s from word w, checked against its rule. */
static hx_status pair_param(deck *d, const hxi_pair_style *s, int k, const char *w,
                            const char *form, double *out)
{
    HXI_CHECK(deck_get_double(d, s->param[k].name, w, out));
    if (!hxi_pair_param_ok(s->param[k].rule, *out))
        return deck_error(d, "%s: %s %s must be %s (%s)", d->words[0], s->param[k].name,
                          deck_show(w).s, hxi_pair_rule_text(s->param[k].rule), form);
    return HX_OK;
}

static hx_status pair_cutoff(deck *d, const char *w, const char *form, double *rc)
{
    HXI_CHECK(deck_get_double(d, "cutoff", w, rc));
    if (*rc <= 0.0)
        return deck_error(d, "%s: cutoff %s must be > 0 (%s)", d->words[0], deck_show(w).s, form);
    return HX_OK;
}

/* `pair_style NAME [GLOBALS...] RC`. A new style forgets the coefficients;
 * the same style again keeps them but, as in LAMMPS, its cutoff replaces
 * pair_coeff's. After read_restart the file's style is not known here, so
 * pair_coeff must follow. */
hx_status deck_pair_style(deck *d)
{
    const hxi_pair_style *s;
    double rc, p[HX_PAIR_NPARAM];
    if (d->nwords < 2)
        return deck_error(d, "pair_style takes a style and its cutoff (pair_style %s)",
                          hxi_pair_names());
    s = hxi_pair_find(d->words[1]);
    if (!s)
        return deck_error(d, "pair_style '%s': halox-md computes %s", deck_show(d->words[1]).s,
                          hxi_pair_names());
    HXI_CHECK(deck_nargs(d, 3 + s->nglobal, 3 + s->nglobal, s->style_form));
    /* A new style starts from its own defaults, not the last style's. */
    memcpy(p, s->id == d->c.pair_style ? d->c.pair : s->defaults, sizeof p);
    for (int k = 0; k < s->nglobal; k++)
        HXI_CHECK(
            pair_param(d, s, s->ncoeff + k, d->words[2 + k], s->style_form, &p[s->ncoeff + k]));
    HXI_CHECK(pair_cutoff(d, d->words[2 + s->nglobal], s->style_form, &rc));
    if (s->id != d->c.pair_style || d->restarted) {
        d->have_pair_coeff = 0;
        memset(d->c.types.set, 0, sizeof d->c.types.set);
    }
    memset(d->c.types.rc, 0, sizeof d->c.types.rc); /* pair_style's cutoff for every pair */
    d->c.types.rc_style = rc;
    memcpy(d->c.pair, p, sizeof p);
    d->c.pair_style = s->id;
    d->rc_global = rc;
    d->rc_coeff = 0.0;
    d->c.given |= HX_MD_GIVEN_RC | HX_MD_GIVEN_PAIR;
    d->have_pair_style = 1;
    d->new_style = 1;
    return HX_OK;
}

/* Pairs i <= j of the ranges, as LAMMPS's coeff(): parameters p
 * (pair_coeff's) and cutoff rc (0: pair_style's). */
static int pair_set(hx_md_types *t, const int *r, const double *p, int np, double rc)
{
    int count = 0;
    for (int i = r[0]; i <= r[1]; i++)
        for (int j = r[2] > i ? r[2] : i; j <= r[3]; j++) {
            memcpy(t->param[i - 1][j - 1], p, (size_t) np * sizeof(double));
            t->rc[i - 1][j - 1] = rc;
            t->set[i - 1][j - 1] = 1;
            count++;
        }
    return count;
}

/* `pair_coeff I J PARAMS... [RC]` for the style in force. */
hx_status deck_pair_coeff(deck *d)
{
    const hxi_pair_style *s;
    double rc = 0.0, p[HX_PAIR_NPARAM];
    int r[4];
    HXI_CHECK(deck_need(d, d->have_pair_style, "pair_style"));
    if (d->restarted && !d->new_style)
        return deck_error(d,
                          "pair_coeff after read_restart needs a pair_style before it: the "
                          "file's style is known only when the run starts (pair_style %s)",
                          hxi_pair_names());
    s = hxi_pair_style_of(d->c.pair_style);
    if (!s)
        return deck_error(d, "pair_coeff: pair style %d is unknown", d->c.pair_style);
    HXI_CHECK(deck_nargs(d, 3 + s->ncoeff, 4 + s->ncoeff, s->coeff_form));
    HXI_CHECK(deck_need(d, d->have_box, "create_box"));
    HXI_CHECK(deck_type_range(d, d->words[1], &r[0], &r[1]));
    HXI_CHECK(deck_type_range(d, d->words[2], &r[2], &r[3]));
    memcpy(p, d->c.pair, sizeof p);
    for (int k = 0; k < s->ncoeff; k++)
        HXI_CHECK(pair_param(d, s, k, d->words[3 + k], s->coeff_form, &p[k]));
    if (d->nwords == 4 + s->ncoeff)
        HXI_CHECK(pair_cutoff(d, d->words[3 + s->ncoeff], s->coeff_form, &rc));
    if (pair_set(&d->c.types, r, p, s->ncoeff, rc) == 0)
        return deck_error(d, "pair_coeff %s %s names no pair I <= J (%s)", deck_show(d->words[1]).s,
                          deck_show(d->words[2]).s, s->coeff_form);
    /* Type 1's pair is also the one-type run's (hx_md_config.pair, rc). */
    if (r[0] == 1 && r[2] == 1) {
        memcpy(d->c.pair, p, sizeof p);
        d->rc_coeff = rc;
    }
    d->c.given |= HX_MD_GIVEN_PAIR | (rc > 0.0 ? HX_MD_GIVEN_RC : 0u);
    d->have_pair_coeff = 1;
    return HX_OK;
}

/* `pair_modify shift yes|no` (shift: E(rc) taken off every pair, for the
 * styles whose energy is not 0 at the cutoff already) and `mix geometric|
 * arithmetic|sixthpower`, LAMMPS's rules for the coefficients of the
 * unlike pairs no pair_coeff gave (md/pair/pair_mix.c). */
hx_status deck_pair_modify(deck *d)
{
    static const char form[] = "pair_modify [shift yes|no] [mix geometric|arithmetic|sixthpower]";
    HXI_CHECK(deck_nargs(d, 3, DECK_MAX_WORDS, form));
    HXI_CHECK(deck_need(d, d->have_pair_style, "pair_style"));
    for (int i = 1; i < d->nwords; i += 2) {
        const char *key = d->words[i], *val = i + 1 < d->nwords ? d->words[i + 1] : NULL;
        if (strcmp(key, "shift") != 0 && strcmp(key, "mix") != 0)
            return deck_error(d, "pair_modify keyword '%s' is not supported (%s)", deck_show(key).s,
                              form);
        if (!val)
            return deck_error(d, "pair_modify %s has no value (%s)", key, form);
        if (strcmp(key, "mix") == 0) {
            const int mix = hxi_pair_mix_find(val);
            if (mix < 0)
                return deck_error(d,
                                  "pair_modify mix '%s': the rules are geometric, "
                                  "arithmetic and sixthpower (%s)",
                                  deck_show(val).s, form);
            d->c.types.mix = mix;
            d->c.given |= HX_MD_GIVEN_MIX;
            continue;
        }
        HXI_CHECK(deck_get_yes_no(d, "shift", val, &d->c.shift_energy));
        d->c.given |= HX_MD_GIVEN_SHIFT;
    }
    return HX_OK;
}

/* At the first run: the pair style has its coefficients, every type its
 * mass, and every pair of types its coefficients (given or mixed). */
hx_status deck_pair_ready(deck *d)
{
    const hxi_pair_style *s = hxi_pair_style_of(d->c.pair_style);
    const hx_md_types *t = &d->c.types;
    hxi_pair_types pairs;
    char where[320];
    if (!d->have_pair_coeff)
        return deck_error(d, "run comes before pair_coeff; pair_style %s needs `%s` first",
                          s ? s->name : "?", s ? s->coeff_form : "pair_coeff");
    if (d->restarted)
        return HX_OK; /* the file's types are known when the run starts */
    for (int i = 0; i < t->ntypes; i++)
        if (!(t->mass_given >> i & 1u))
            return deck_error(d,
                              "run: type %d has no mass (Not all per-type masses are set); "
                              "give `mass %d M`",
                              i + 1, i + 1);
    if (t->ntypes == 1)
        return HX_OK;
    hx_md_config c = d->c;
    c.rc = d->rc_global;
    snprintf(where, sizeof where, "%s:%d: %s: ", d->name, d->line, d->words[0]);
    return hxi_pair_resolve(&c, &pairs, HX_ERR_PARSE, where);
}
