/*
 * pair_styles.h - the table of pair styles (pair_styles.c): what the deck
 * reader, the restart files and the engines know of each. The formulas
 * are in pair_eval.h. Not installed.
 */
#ifndef HALOX_MD_PAIR_STYLES_H
#define HALOX_MD_PAIR_STYLES_H

#include "md/pair/pair_eval.h"

#include "core/hxi.h"
#include "md/md_config.h"

/* What a parameter may be: any finite value, >= 0, or > 0. */
typedef enum { HXI_PAIR_ANY, HXI_PAIR_NONNEG, HXI_PAIR_POS } hxi_pair_rule;

/* How a style fills the unlike pairs no pair_coeff gave (LAMMPS's
 * init_one): lj/cut and lj/smooth/linear mix epsilon and sigma by the
 * pair_modify mix rule; yukawa mixes A as an energy of unit sigmas; soft
 * takes sqrt(A_i A_j) whatever the rule; morse does not mix. Every style
 * mixes the cutoff as a distance. */
typedef enum { HXI_MIX_LJ, HXI_MIX_ENERGY, HXI_MIX_GEOMETRIC, HXI_MIX_NONE } hxi_pair_mixing;

typedef struct hxi_pair_param {
    const char *name; /* as messages and forms show it */
    hxi_pair_rule rule;
} hxi_pair_param;

typedef struct hxi_pair_style {
    const char *name;                     /* pair_style NAME */
    int id;                               /* HX_PAIR_* */
    int ncoeff;                           /* pair_coeff's parameters, before its optional cutoff */
    int nglobal;                          /* pair_style's parameters, before its cutoff */
    hxi_pair_param param[HX_PAIR_NPARAM]; /* pair_coeff's, then pair_style's */
    double defaults[HX_PAIR_NPARAM];      /* before any pair_coeff (restart-free runs) */
    int shifts;             /* pair_modify shift yes takes E(rc) off (else E(rc) is 0) */
    int size;               /* the parameter that is an atom's size, or -1 */
    const char *style_form; /* "pair_style morse RC" */
    const char *coeff_form; /* "pair_coeff * * D0 ALPHA R0 [RC]" */
    hxi_pair_mixing mixing;
    /* The formula's coefficients c[HX_PAIR_NCOEF] from the parameters and
     * the cutoff. */
    void (*coef)(const double *p, double rc, double *c);
} hxi_pair_style;

/* The style of that deck name or id, or NULL. */
const hxi_pair_style *hxi_pair_find(const char *name);
const hxi_pair_style *hxi_pair_style_of(int id);
/* "lj/cut, morse, ...": the styles' names, for messages. */
const char *hxi_pair_names(void);
/* The first parameter of p[] that breaks its rule (or is not finite), or
 * -1; hxi_pair_rule_text says what it must be. */
int hxi_pair_param_ok(hxi_pair_rule rule, double v);
int hxi_pair_bad_param(const hxi_pair_style *s, const double *p);
const char *hxi_pair_rule_text(hxi_pair_rule rule);
/* `code` (with `where` before the message: "" or "restart file F: ")
 * unless id is a style, rc > 0 and every parameter keeps its rule. */
hx_status hxi_pair_valid(int id, const double *p, double rc, hx_status code, const char *where);
/* The coefficients of style id with parameters p and cutoff rc, and the
 * energy at the cutoff that pair_modify shift yes takes off (0 with shift
 * 0 or for a style that does not shift). */
void hxi_pair_setup(int id, const double *p, double rc, int shift, double *c, double *offset);
/* An atom's size under the style (sigma, r0), or 0 where it has none. */
double hxi_pair_size(int id, const double *p);

/* ------------------------------------------------- types (pair_mix.c) */

/* Every pair of types as a run uses it: the style's parameters
 * (pair_coeff's, then pair_style's) and the cutoff of types i + 1, j + 1,
 * the unlike pairs no pair_coeff gave mixed as the style does in LAMMPS.
 * With one type, pair 0 0 is hx_md_config's pair and rc. */
typedef struct hxi_pair_types {
    int n;
    double p[HX_MD_MAX_TYPES][HX_MD_MAX_TYPES][HX_PAIR_NPARAM];
    double rc[HX_MD_MAX_TYPES][HX_MD_MAX_TYPES];
} hxi_pair_types;

/* `code` (after `where`) naming the pair where a pair of types has no
 * coefficients (a like pair, or an unlike one of a style that does not
 * mix), where a rule cannot mix them, or where a parameter breaks its rule. */
hx_status hxi_pair_resolve(const hx_md_config *c, hxi_pair_types *out, hx_status code,
                           const char *where);
/* The largest cutoff of any pair of types (rc with one type; rc where
 * the pairs do not resolve, which the config check refuses). */
double hxi_pair_max_cutoff(const hx_md_config *c);
/* "geometric", "arithmetic", "sixthpower", or NULL; and back (-1). */
const char *hxi_pair_mix_name(int mix);
int hxi_pair_mix_find(const char *name);

#endif /* HALOX_MD_PAIR_STYLES_H */
