/*
 * pair_styles.c - the pair styles halox-md reads, with LAMMPS's forms and
 * defaults: the deck's parameters, their checks, and the coefficients the
 * formulas of pair_eval.h take. Adding a style: docs/md-pair.md.
 */
#include "md/pair/pair_styles.h"

#include "md/md_config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* LAMMPS's MY_PI (M_PI is not C11). */
#define HXI_PI 3.14159265358979323846

_Static_assert(HX_PAIR_NPARAM == HX_MD_PAIR_NPARAM, "hx_md_config.pair holds a style's parameters");

static void lj_coef(const double *p, double *c)
{
    const double s6 = p[1] * p[1] * p[1] * p[1] * p[1] * p[1], s12 = s6 * s6;
    c[0] = 48.0 * p[0] * s12;
    c[1] = 24.0 * p[0] * s6;
    c[2] = 4.0 * p[0] * s12;
    c[3] = 4.0 * p[0] * s6;
}

/* epsilon sigma */
static void coef_lj_cut(const double *p, double rc, double *c)
{
    (void) rc;
    lj_coef(p, c);
}

/* D0 alpha r0 */
static void coef_morse(const double *p, double rc, double *c)
{
    (void) rc;
    c[0] = p[0];
    c[1] = p[1];
    c[2] = p[2];
    c[3] = 2.0 * p[0] * p[1];
}

/* A, then pair_style's kappa */
static void coef_yukawa(const double *p, double rc, double *c)
{
    (void) rc;
    c[0] = p[0];
    c[1] = p[1];
}

/* A */
static void coef_soft(const double *p, double rc, double *c)
{
    c[0] = p[0];
    c[1] = HXI_PI / rc;
}

/* epsilon sigma; E and F of lj/cut at rc */
static void coef_lj_smooth_linear(const double *p, double rc, double *c)
{
    const double cut6inv = pow(rc, -6.0), cutinv = 1.0 / rc;
    lj_coef(p, c);
    c[4] = cut6inv * (c[2] * cut6inv - c[3]);
    c[5] = cutinv * cut6inv * (c[0] * cut6inv - c[1]);
    c[6] = rc;
}

static const hxi_pair_style styles[] = {
    {"lj/cut",
     HX_PAIR_LJ_CUT,
     2,
     0,
     {{"epsilon", HXI_PAIR_NONNEG}, {"sigma", HXI_PAIR_POS}},
     {1.0, 1.0},
     1,
     1,
     "pair_style lj/cut RC",
     "pair_coeff * * EPSILON SIGMA [RC]",
     HXI_MIX_LJ,
     coef_lj_cut},
    {"morse",
     HX_PAIR_MORSE,
     3,
     0,
     {{"D0", HXI_PAIR_NONNEG}, {"alpha", HXI_PAIR_POS}, {"r0", HXI_PAIR_NONNEG}},
     {0},
     1,
     2,
     "pair_style morse RC",
     "pair_coeff * * D0 ALPHA R0 [RC]",
     HXI_MIX_NONE,
     coef_morse},
    {"yukawa",
     HX_PAIR_YUKAWA,
     1,
     1,
     {{"A", HXI_PAIR_ANY}, {"kappa", HXI_PAIR_NONNEG}},
     {0},
     1,
     -1,
     "pair_style yukawa KAPPA RC",
     "pair_coeff * * A [RC]",
     HXI_MIX_ENERGY,
     coef_yukawa},
    {"soft",
     HX_PAIR_SOFT,
     1,
     0,
     {{"A", HXI_PAIR_ANY}},
     {0},
     0,
     -1,
     "pair_style soft RC",
     "pair_coeff * * A [RC]",
     HXI_MIX_GEOMETRIC,
     coef_soft},
    {"lj/smooth/linear",
     HX_PAIR_LJ_SMOOTH_LINEAR,
     2,
     0,
     {{"epsilon", HXI_PAIR_NONNEG}, {"sigma", HXI_PAIR_POS}},
     {1.0, 1.0},
     0,
     1,
     "pair_style lj/smooth/linear RC",
     "pair_coeff * * EPSILON SIGMA [RC]",
     HXI_MIX_LJ,
     coef_lj_smooth_linear},
};

enum { NSTYLES = sizeof styles / sizeof styles[0] };

const hxi_pair_style *hxi_pair_find(const char *name)
{
    for (int i = 0; i < NSTYLES; i++)
        if (strcmp(styles[i].name, name) == 0)
            return &styles[i];
    return NULL;
}

const hxi_pair_style *hxi_pair_style_of(int id)
{
    for (int i = 0; i < NSTYLES; i++)
        if (styles[i].id == id)
            return &styles[i];
    return NULL;
}

const char *hxi_pair_names(void)
{
    static char names[256];
    if (!names[0])
        for (int i = 0; i < NSTYLES; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     styles[i].name);
    return names;
}

int hxi_pair_param_ok(hxi_pair_rule rule, double v)
{
    return isfinite(v) && !(rule == HXI_PAIR_NONNEG && v < 0.0) &&
           !(rule == HXI_PAIR_POS && v <= 0.0);
}

int hxi_pair_bad_param(const hxi_pair_style *s, const double *p)
{
    for (int i = 0; i < s->ncoeff + s->nglobal; i++)
        if (!hxi_pair_param_ok(s->param[i].rule, p[i]))
            return i;
    return -1;
}

const char *hxi_pair_rule_text(hxi_pair_rule rule)
{
    return rule == HXI_PAIR_POS ? "> 0" : rule == HXI_PAIR_NONNEG ? ">= 0" : "finite";
}

hx_status hxi_pair_valid(int id, const double *p, double rc, hx_status code, const char *where)
{
    const hxi_pair_style *s = hxi_pair_style_of(id);
    int bad;
    if (!s)
        return hxi_error(code, "%spair style %d is unknown (pair_style %s)", where, id,
                         hxi_pair_names());
    if (!isfinite(rc) || rc <= 0.0)
        return hxi_error(code, "%scutoff %g must be > 0 (%s, --rc)", where, rc, s->style_form);
    bad = hxi_pair_bad_param(s, p);
    if (bad >= 0)
        return hxi_error(code, "%s%s %s %g must be %s (%s; %s)", where, s->name, s->param[bad].name,
                         p[bad], hxi_pair_rule_text(s->param[bad].rule), s->style_form,
                         s->coeff_form);
    return HX_OK;
}

void hxi_pair_setup(int id, const double *p, double rc, int shift, double *c, double *offset)
{
    const hxi_pair_style *s = hxi_pair_style_of(id);
    double e = 0.0;
    memset(c, 0, HX_PAIR_NCOEF * sizeof *c);
    *offset = 0.0;
    if (!s)
        return;
    s->coef(p, rc, c);
    if (!shift || !s->shifts)
        return;
    switch (id) {
#define HX_PAIR_OFFSET(ID, name)                                                                   \
    case HX_PAIR_##ID:                                                                             \
        (void) hxp_##name##_d(c, rc *rc, &e);                                                      \
        break;
        HX_PAIR_STYLES(HX_PAIR_OFFSET)
#undef HX_PAIR_OFFSET
    }
    *offset = e;
}

double hxi_pair_size(int id, const double *p)
{
    const hxi_pair_style *s = hxi_pair_style_of(id);
    return s && s->size >= 0 ? p[s->size] : 0.0;
}
