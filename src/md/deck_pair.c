/*
 * deck_pair.c - the deck's pair commands: pair_style, pair_coeff and
 * pair_modify, with the forms and checks of the styles' table
 * (md/pair/pair_styles.c). halox-md has one atom type, so pair_coeff sets
 * the one pair of types 1 1 (or * *).
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
    if (s->id != d->c.pair_style || d->restarted)
        d->have_pair_coeff = 0;
    memcpy(d->c.pair, p, sizeof p);
    d->c.pair_style = s->id;
    d->rc_global = rc;
    d->rc_coeff = 0.0;
    d->c.given |= HX_MD_GIVEN_RC | HX_MD_GIVEN_PAIR;
    d->have_pair_style = 1;
    d->new_style = 1;
    return HX_OK;
}

/* `pair_coeff I J PARAMS... [RC]` for the style in force. */
hx_status deck_pair_coeff(deck *d)
{
    const hxi_pair_style *s;
    double rc = 0.0, p[HX_PAIR_NPARAM];
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
    HXI_CHECK(deck_check_type(d, d->words[1]));
    HXI_CHECK(deck_check_type(d, d->words[2]));
    HXI_CHECK(deck_need(d, d->have_box, "create_box"));
    memcpy(p, d->c.pair, sizeof p);
    for (int k = 0; k < s->ncoeff; k++)
        HXI_CHECK(pair_param(d, s, k, d->words[3 + k], s->coeff_form, &p[k]));
    if (d->nwords == 4 + s->ncoeff)
        HXI_CHECK(pair_cutoff(d, d->words[3 + s->ncoeff], s->coeff_form, &rc));
    memcpy(d->c.pair, p, sizeof p);
    d->rc_coeff = rc;
    d->c.given |= HX_MD_GIVEN_PAIR | (rc > 0.0 ? HX_MD_GIVEN_RC : 0u);
    d->have_pair_coeff = 1;
    return HX_OK;
}

/* `pair_modify shift yes|no` (shift: E(rc) taken off, for the styles
 * whose energy is not 0 at the cutoff already) and `mix geometric|
 * arithmetic|sixthpower`, LAMMPS's rules for the coefficients of unlike
 * types: with one type there is no unlike pair, so the rule is checked and
 * changes nothing. */
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
            if (strcmp(val, "geometric") != 0 && strcmp(val, "arithmetic") != 0 &&
                strcmp(val, "sixthpower") != 0)
                return deck_error(d,
                                  "pair_modify mix '%s': the rules are geometric, "
                                  "arithmetic and sixthpower",
                                  deck_show(val).s);
            continue;
        }
        HXI_CHECK(deck_get_yes_no(d, "shift", val, &d->c.shift_energy));
        d->c.given |= HX_MD_GIVEN_SHIFT;
    }
    return HX_OK;
}

hx_status deck_pair_ready(deck *d)
{
    const hxi_pair_style *s = hxi_pair_style_of(d->c.pair_style);
    if (!d->have_pair_coeff)
        return deck_error(d, "run comes before pair_coeff; pair_style %s needs `%s` first",
                          s ? s->name : "?", s ? s->coeff_form : "pair_coeff");
    return HX_OK;
}
