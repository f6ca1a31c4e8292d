/*
 * types.c - atom types: the checks of a config's types, masses, set
 * commands and pairs, and the type each atom takes where it is created.
 *
 * LAMMPS's Set::setrandom for `set ... type/fraction J FRAC SEED`: for
 * each selected atom, the generator is reset from SEED and the atom's
 * coordinates (RanPark::reset(int, double *)), and the atom takes type J
 * unless the first value is >= FRAC. An atom's type therefore depends on
 * its position and the deck, not on which rank holds it; halox-md applies
 * the deck's set commands to each atom at its lattice site, where LAMMPS's
 * atoms are when the deck's set runs (set comes before velocity and run).
 */
#include "core/hxi.h"
#include "md/md.h"
#include "md/pair/pair_styles.h"
#include "md/park_miller.h"

#include <math.h>
#include <stdlib.h>

static hx_status check_sets(const hx_md_types *t)
{
    if (t->nsets < 0 || t->nsets > HX_MD_MAX_SETS)
        return hxi_error(HX_ERR_INVALID, "%d set commands: halox-md holds 0 to %d", t->nsets,
                         HX_MD_MAX_SETS);
    for (int k = 0; k < t->nsets; k++) {
        const hx_md_type_set *s = &t->sets[k];
        if (s->lo < 1 || s->hi > t->ntypes || s->lo > s->hi || s->to < 1 || s->to > t->ntypes ||
            !(s->fraction >= 0.0 && s->fraction <= 1.0) || s->seed < 0)
            return hxi_error(HX_ERR_INVALID,
                             "set %d: types %d*%d to type %d (fraction %g, seed %d) with %d "
                             "atom types",
                             k + 1, s->lo, s->hi, s->to, s->fraction, s->seed, t->ntypes);
    }
    return HX_OK;
}

hx_status hxi_md_types_check(const hx_md_config *c)
{
    const hx_md_types *t = &c->types;
    hxi_pair_types pairs;
    if (t->ntypes < 1 || t->ntypes > HX_MD_MAX_TYPES)
        return hxi_error(HX_ERR_INVALID, "%d atom types: halox-md runs 1 to %d (create_box N)",
                         t->ntypes, HX_MD_MAX_TYPES);
    if (t->ntypes == 1)
        return HX_OK;
    if (t->create_type < 1 || t->create_type > t->ntypes)
        return hxi_error(HX_ERR_INVALID, "create_atoms type %d: the box has types 1 to %d",
                         t->create_type, t->ntypes);
    for (int i = 0; i < t->ntypes; i++)
        if (!isfinite(t->masses[i]) || t->masses[i] <= 0.0)
            return hxi_error(HX_ERR_INVALID, "mass %g of type %d must be > 0 (mass %d M)",
                             t->masses[i], i + 1, i + 1);
    if (!hxi_pair_mix_name(t->mix))
        return hxi_error(HX_ERR_INVALID, "mixing rule %d is unknown (pair_modify mix %s)", t->mix,
                         "geometric|arithmetic|sixthpower");
    if (c->velocity_mode != HX_MD_VEL_LAMMPS && c->temperature > 0.0)
        return hxi_error(HX_ERR_INVALID,
                         "--velocity halox|minimd draws one mass: with %d atom types, use "
                         "--velocity lammps (LAMMPS's velocity create)",
                         t->ntypes);
    HXI_CHECK(check_sets(t));
    return hxi_pair_resolve(c, &pairs, HX_ERR_INVALID, "");
}

int hxi_md_type_at(const hx_md_config *c, const double x[3])
{
    return hxi_md_type_sets(c, c->types.create_type, x);
}

int hxi_md_type_sets(const hx_md_config *c, int type, const double x[3])
{
    const hx_md_types *t = &c->types;
    for (int k = 0; k < t->nsets; k++) {
        const hx_md_type_set *s = &t->sets[k];
        if (type < s->lo || type > s->hi)
            continue;
        if (s->seed > 0) {
            int state = hxi_park_miller_reset(s->seed, x);
            if (hxi_park_miller(&state) >= s->fraction)
                continue;
        }
        type = s->to;
    }
    return type;
}
