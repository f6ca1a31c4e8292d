/*
 * deck_velocity.c - LAMMPS's `velocity` command in the deck subset:
 * `create` (the velocities drawn at the set-up, velocity.c) and `set`
 * (constant components applied after it, in deck order).
 */
#include "md/deck_internal.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* `velocity all create T SEED keyword value ...`, as LAMMPS's Velocity:
 * every keyword of `create` is read and done as LAMMPS does it (velocity.c),
 * or refused. One velocity command per deck: a second would need LAMMPS's
 * `sum` over two creates, which halox-md does not keep. */
static hx_status velocity_create(deck *d)
{
    static const char usage[] = "velocity all create T SEED [dist uniform|gaussian] "
                                "[loop all|local|geom] [mom yes|no] [rot yes|no] [sum no|yes] "
                                "[units box|lattice]";
    double t;
    long long seed;
    hx_md_velocity_loop loop = HX_MD_LOOP_ALL; /* LAMMPS's defaults */
    int gaussian = 0, mom = 1, rot = 0, sum = 0;
    if (d->have_velocity)
        return deck_error(d, "a second velocity create: halox-md reads one `velocity all "
                             "create` per deck");
    if (d->c.nvsets > 0)
        return deck_error(d, "velocity create after velocity set: LAMMPS's create would replace "
                             "(or with sum yes, add to) the set velocities; put create first");
    HXI_CHECK(deck_nargs(d, 5, DECK_MAX_WORDS, usage));
    HXI_CHECK(deck_need(d, d->have_atoms, "create_atoms"));
    HXI_CHECK(deck_need(d, d->have_mass, "mass")); /* LAMMPS: all masses must be set */
    HXI_CHECK(deck_get_double(d, "temperature", d->words[3], &t));
    if (t < 0.0)
        return deck_error(d, "velocity: temperature %s must be >= 0", deck_show(d->words[3]).s);
    /* LAMMPS reads the seed as an int and refuses seeds <= 0. */
    HXI_CHECK(deck_get_int(d, "seed", d->words[4], 1, INT_MAX, &seed));
    for (int i = 5; i < d->nwords; i += 2) {
        const char *k = d->words[i];
        const char *v = i + 1 < d->nwords ? d->words[i + 1] : NULL;
        if (!v)
            return deck_error(d, "velocity keyword '%s' has no value (%s)", deck_show(k).s, usage);
        if (strcmp(k, "dist") == 0) {
            if (strcmp(v, "uniform") != 0 && strcmp(v, "gaussian") != 0)
                return deck_error(d, "velocity: dist must be uniform or gaussian, not '%s'",
                                  deck_show(v).s);
            gaussian = strcmp(v, "gaussian") == 0;
        } else if (strcmp(k, "loop") == 0) {
            if (strcmp(v, "all") == 0)
                loop = HX_MD_LOOP_ALL;
            else if (strcmp(v, "local") == 0)
                loop = HX_MD_LOOP_LOCAL;
            else if (strcmp(v, "geom") == 0)
                loop = HX_MD_LOOP_GEOM;
            else
                return deck_error(d, "velocity: loop must be all, local or geom, not '%s'",
                                  deck_show(v).s);
        } else if (strcmp(k, "mom") == 0) {
            HXI_CHECK(deck_get_yes_no(d, "mom", v, &mom));
        } else if (strcmp(k, "rot") == 0) {
            HXI_CHECK(deck_get_yes_no(d, "rot", v, &rot));
        } else if (strcmp(k, "sum") == 0) {
            /* The velocities before this (the only) create are zero, so
             * adding them changes nothing, as in LAMMPS. */
            HXI_CHECK(deck_get_yes_no(d, "sum", v, &sum));
        } else if (strcmp(k, "units") == 0) {
            /* LAMMPS reads it for every style; create does not use it. */
            if (strcmp(v, "box") != 0 && strcmp(v, "lattice") != 0)
                return deck_error(d, "velocity: units must be box or lattice, not '%s'",
                                  deck_show(v).s);
        } else if (strcmp(k, "temp") == 0 || strcmp(k, "bias") == 0 || strcmp(k, "rigid") == 0) {
            return deck_error(d,
                              "velocity keyword '%s' needs computes or rigid bodies, which "
                              "halox-md does not have (%s)",
                              deck_show(k).s, usage);
        } else {
            return deck_error(d, "velocity keyword '%s' is not one of LAMMPS's (%s)",
                              deck_show(k).s, usage);
        }
    }
    (void) sum;
    d->c.temperature = t;
    d->c.seed = (uint64_t) seed;
    d->c.velocity_loop = loop;
    d->c.velocity_gaussian = gaussian;
    d->c.velocity_mom = mom;
    d->c.velocity_rot = rot;
    d->have_velocity = 1;
    return HX_OK;
}

/* `velocity all set VX VY VZ [sum no|yes] [units box|lattice]`, as
 * LAMMPS's Velocity::set with constants: each component given (NULL
 * leaves it) replaces every atom's, or with sum yes is added to it; units
 * lattice (LAMMPS's default) scales it by the lattice spacing, a for fcc. */
static hx_status velocity_set(deck *d)
{
    static const char usage[] = "velocity all set VX|NULL VY|NULL VZ|NULL [sum no|yes] "
                                "[units box|lattice]";
    hx_md_vset s;
    int lattice = 1;
    memset(&s, 0, sizeof s);
    HXI_CHECK(deck_nargs(d, 6, 10, usage));
    HXI_CHECK(deck_need(d, d->have_atoms, "create_atoms"));
    for (int i = 6; i < d->nwords; i += 2) {
        const char *k = d->words[i];
        const char *v = i + 1 < d->nwords ? d->words[i + 1] : NULL;
        if (!v)
            return deck_error(d, "velocity keyword '%s' has no value (%s)", deck_show(k).s, usage);
        if (strcmp(k, "sum") == 0)
            HXI_CHECK(deck_get_yes_no(d, "sum", v, &s.sum));
        else if (strcmp(k, "units") == 0 && (strcmp(v, "box") == 0 || strcmp(v, "lattice") == 0))
            lattice = strcmp(v, "lattice") == 0;
        else if (strcmp(k, "units") == 0)
            return deck_error(d, "velocity: units must be box or lattice, not '%s'",
                              deck_show(v).s);
        else
            return deck_error(d, "velocity set keyword '%s': halox-md reads sum and units (%s)",
                              deck_show(k).s, usage);
    }
    const double scale = lattice ? deck_lattice_a(d) : 1.0;
    for (int k = 0; k < 3; k++) {
        const char *w = d->words[3 + k];
        if (strcmp(w, "NULL") == 0)
            continue;
        if (strncmp(w, "v_", 2) == 0)
            return deck_error(d,
                              "velocity set %s: halox-md sets constant components only (a "
                              "number or NULL), not variables",
                              deck_show(w).s);
        HXI_CHECK(deck_get_double(d, "component", w, &s.v[k]));
        if (!isfinite(s.v[k] * scale))
            return deck_error(d, "velocity set: component %s is not finite", deck_show(w).s);
        s.v[k] *= scale;
        s.has[k] = 1;
    }
    if (d->c.nvsets == HX_MD_MAX_VSETS)
        return deck_error(d, "more than %d velocity set commands", HX_MD_MAX_VSETS);
    d->c.vsets[d->c.nvsets++] = s;
    return HX_OK;
}

hx_status deck_cmd_velocity(deck *d)
{
    HXI_CHECK(deck_not_restarted(d));
    if (d->nwords >= 2 && strcmp(d->words[1], "all") != 0)
        return deck_error(d, "velocity group '%s': halox-md has the group all only",
                          deck_show(d->words[1]).s);
    if (d->nwords >= 3 && strcmp(d->words[2], "set") == 0)
        return velocity_set(d);
    if (d->nwords >= 3 && strcmp(d->words[2], "create") != 0)
        return deck_error(d,
                          "velocity style '%s': halox-md reads `velocity all create` and "
                          "`velocity all set`",
                          deck_show(d->words[2]).s);
    return velocity_create(d);
}
