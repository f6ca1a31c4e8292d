/*
 * pair_mix.c - the pairs of atom types as a run uses them: each like pair
 * and each unlike pair a pair_coeff gave keeps its parameters and cutoff
 * (pair_style's cutoff where pair_coeff gave none); the other unlike pairs
 * are mixed as LAMMPS's Pair::init_one of the style does it, with the
 * rules of Pair::mix_energy and Pair::mix_distance (pair.cpp):
 *   geometric:  eps = sqrt(eps_i eps_j),  sigma = sqrt(sigma_i sigma_j)
 *   arithmetic: eps = sqrt(eps_i eps_j),  sigma = (sigma_i + sigma_j) / 2
 *   sixthpower: eps = 2 sqrt(eps_i eps_j) sigma_i^3 sigma_j^3 /
 *                     (sigma_i^6 + sigma_j^6),
 *               sigma = ((sigma_i^6 + sigma_j^6) / 2)^(1/6)
 * and the cutoff mixed as a distance by the same rule.
 */
#include "md/pair/pair_styles.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const mix_names[] = {"geometric", "arithmetic", "sixthpower"};

const char *hxi_pair_mix_name(int mix)
{
    return mix >= 0 && mix < 3 ? mix_names[mix] : NULL;
}

int hxi_pair_mix_find(const char *name)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(name, mix_names[i]) == 0)
            return i;
    return -1;
}

/* Pair::mix_energy, as LAMMPS writes it (the same operations, the same bits). */
static double mix_energy(int mix, double eps1, double eps2, double sig1, double sig2)
{
    if (mix == HX_MD_MIX_SIXTHPOWER)
        return (2.0 * sqrt(eps1 * eps2) * pow(sig1, 3.0) * pow(sig2, 3.0) /
                (pow(sig1, 6.0) + pow(sig2, 6.0)));
    return sqrt(eps1 * eps2);
}

/* Pair::mix_distance. */
static double mix_distance(int mix, double sig1, double sig2)
{
    if (mix == HX_MD_MIX_ARITHMETIC)
        return (0.5 * (sig1 + sig2));
    if (mix == HX_MD_MIX_SIXTHPOWER)
        return pow((0.5 * (pow(sig1, 6.0) + pow(sig2, 6.0))), 1.0 / 6.0);
    return sqrt(sig1 * sig2);
}

/* The unlike pair i, j from the like pairs, as the style's init_one. */
static hx_status mix_pair(const hxi_pair_style *s, const hx_md_config *c, hxi_pair_types *t, int i,
                          int j, hx_status code, const char *where)
{
    const double *pi = t->p[i][i], *pj = t->p[j][j];
    double *p = t->p[i][j];
    const int mix = c->types.mix;
    if (s->mixing == HXI_MIX_NONE)
        return hxi_error(code,
                         "%spair_coeff %d %d is not set: pair_style %s does not mix unlike "
                         "types (All pair coeffs are not set); give `pair_coeff %d %d ...`",
                         where, i + 1, j + 1, s->name, i + 1, j + 1);
    if (pi[0] * pj[0] < 0.0)
        return hxi_error(code,
                         "%spair_coeff %d %d is not set, and %s %g of type %d and %g of type %d "
                         "have opposite signs: sqrt(%g x %g) cannot mix them; give `pair_coeff "
                         "%d %d ...`",
                         where, i + 1, j + 1, s->param[0].name, pi[0], i + 1, pj[0], j + 1, pi[0],
                         pj[0], i + 1, j + 1);
    memcpy(p, pi, sizeof t->p[i][j]); /* pair_style's parameters */
    switch (s->mixing) {
    case HXI_MIX_LJ:
        p[0] = mix_energy(mix, pi[0], pj[0], pi[1], pj[1]);
        p[1] = mix_distance(mix, pi[1], pj[1]);
        break;
    case HXI_MIX_ENERGY:
        p[0] = mix_energy(mix, pi[0], pj[0], 1.0, 1.0);
        break;
    default: /* soft: geometric whatever the rule */
        p[0] = sqrt(pi[0] * pj[0]);
        break;
    }
    t->rc[i][j] = mix_distance(mix, t->rc[i][i], t->rc[j][j]);
    return HX_OK;
}

hx_status hxi_pair_resolve(const hx_md_config *c, hxi_pair_types *out, hx_status code,
                           const char *where)
{
    const hx_md_types *ty = &c->types;
    const hxi_pair_style *s = hxi_pair_style_of(c->pair_style);
    const int n = ty->ntypes > 1 ? ty->ntypes : 1;
    memset(out, 0, sizeof *out);
    out->n = n;
    if (!s || n == 1 || ty->ntypes > HX_MD_MAX_TYPES) {
        memcpy(out->p[0][0], c->pair, sizeof out->p[0][0]);
        out->rc[0][0] = c->rc;
        if (ty->ntypes > HX_MD_MAX_TYPES)
            return hxi_error(code, "%s%d atom types: halox-md runs 1 to %d", where, ty->ntypes,
                             HX_MD_MAX_TYPES);
        return hxi_pair_valid(c->pair_style, c->pair, c->rc, code, where);
    }
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j++) {
            if (!ty->set[i][j])
                continue;
            memcpy(out->p[i][j], c->pair, sizeof out->p[i][j]);
            memcpy(out->p[i][j], ty->param[i][j], (size_t) s->ncoeff * sizeof(double));
            out->rc[i][j] = ty->rc[i][j] > 0.0 ? ty->rc[i][j] : c->rc;
        }
    for (int i = 0; i < n; i++)
        if (!ty->set[i][i])
            return hxi_error(code,
                             "%spair_coeff %d %d is not set (All pair coeffs are not set): "
                             "every type needs its like pair (%s)",
                             where, i + 1, i + 1, s->coeff_form);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (!ty->set[i][j])
                HXI_CHECK(mix_pair(s, c, out, i, j, code, where));
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j++) {
            char at[320];
            snprintf(at, sizeof at, "%spair %d %d: ", where, i + 1, j + 1);
            HXI_CHECK(hxi_pair_valid(c->pair_style, out->p[i][j], out->rc[i][j], code, at));
            memcpy(out->p[j][i], out->p[i][j], sizeof out->p[i][j]);
            out->rc[j][i] = out->rc[i][j];
        }
    return HX_OK;
}

double hxi_pair_max_cutoff(const hx_md_config *c)
{
    hxi_pair_types t;
    double m = 0.0;
    if (c->types.ntypes <= 1)
        return c->rc;
    if (hxi_pair_resolve(c, &t, HX_ERR_INVALID, "") != HX_OK)
        return c->rc;
    for (int i = 0; i < t.n; i++)
        for (int j = 0; j < t.n; j++)
            m = fmax(m, t.rc[i][j]);
    return m;
}
