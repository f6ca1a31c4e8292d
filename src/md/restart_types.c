/*
 * restart_types.c - the atom types' block of a version 4 restart file
 * (restart_header.c has the layout): after the header where the file has more
 * than one type, HXI_MD_RST_TYPES bytes in the writer's byte order:
 *     0..3     atom types N (int32, 2 to HX_MD_MAX_TYPES)
 *     4..7     pair_modify mix (int32, hx_md_mix)
 *     8..71    the masses of types 1..8 (8 x double; 0 past N)
 *    72..135   pair_coeff given for types i <= j (8 x 8 bytes, 0 or 1)
 *   136..2183  their parameters (8 x 8 x 4 doubles, pair_coeff's)
 *  2184..2695  their cutoffs (8 x 8 doubles; 0: pair_style's)
 */
#include "md/restart.h"

#include <math.h>
#include <string.h>

_Static_assert(HX_MD_MAX_TYPES == 8, "the restart file's types block holds 8 types");

void hxi_md_restart_types_encode(unsigned char *b, const hx_md_types *t)
{
    const int32_t n = t->ntypes, mix = t->mix;
    memset(b, 0, HXI_MD_RST_TYPES);
    memcpy(b, &n, 4);
    memcpy(b + 4, &mix, 4);
    memcpy(b + 8, t->masses, sizeof t->masses);
    memcpy(b + 72, t->set, sizeof t->set);
    memcpy(b + 136, t->param, sizeof t->param);
    memcpy(b + 2184, t->rc, sizeof t->rc);
}

hx_status hxi_md_restart_types_decode(const unsigned char *b, hx_md_types *t, const char *path)
{
    int32_t n, mix;
    memset(t, 0, sizeof *t);
    memcpy(&n, b, 4);
    memcpy(&mix, b + 4, 4);
    memcpy(t->masses, b + 8, sizeof t->masses);
    memcpy(t->set, b + 72, sizeof t->set);
    memcpy(t->param, b + 136, sizeof t->param);
    memcpy(t->rc, b + 2184, sizeof t->rc);
    t->ntypes = n;
    t->mix = mix;
    t->create_type = 1;
    if (n < 2 || n > HX_MD_MAX_TYPES || mix < 0 || mix > HX_MD_MIX_SIXTHPOWER)
        return hxi_error(HX_ERR_PARSE, "restart file %s: %d atom types, mixing rule %d", path, n,
                         mix);
    for (int i = 0; i < n; i++)
        if (!isfinite(t->masses[i]) || !(t->masses[i] > 0))
            return hxi_error(HX_ERR_PARSE, "restart file %s: type %d has mass %g", path, i + 1,
                             t->masses[i]);
    for (int i = 0; i < HX_MD_MAX_TYPES; i++)
        for (int j = 0; j < HX_MD_MAX_TYPES; j++)
            if (t->set[i][j] > 1 || (t->set[i][j] && (i >= n || j >= n || j < i)) ||
                !isfinite(t->rc[i][j]) || t->rc[i][j] < 0)
                return hxi_error(HX_ERR_PARSE, "restart file %s: pair %d %d is malformed", path,
                                 i + 1, j + 1);
    return HX_OK;
}

void hxi_md_restart_types_apply(const hx_md_types *file, hx_md_config *cfg)
{
    hx_md_types *t = &cfg->types;
    const hx_md_types deck = *t;
    if (file->ntypes <= 1) {
        t->ntypes = 1;
        t->nsets = 0;
        return;
    }
    *t = *file;
    if (cfg->given & HX_MD_GIVEN_PAIR) { /* the deck's pair_style and pair_coeff */
        memcpy(t->set, deck.set, sizeof t->set);
        memcpy(t->param, deck.param, sizeof t->param);
        memcpy(t->rc, deck.rc, sizeof t->rc);
        /* The pairs without a cutoff of their own take pair_style's (the
         * deck read the file's types as one, and may have taken pair 1 1's). */
        if (deck.rc_style > 0.0)
            cfg->rc = deck.rc_style;
    }
    t->rc_style = deck.rc_style;
    if (cfg->given & HX_MD_GIVEN_MIX)
        t->mix = deck.mix;
    for (int i = 0; i < t->ntypes; i++)
        if (deck.mass_given >> i & 1u)
            t->masses[i] = deck.masses[i];
    t->mass_given = deck.mass_given;
    cfg->mass = t->masses[0];
}
