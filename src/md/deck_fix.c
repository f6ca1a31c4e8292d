/*
 * deck_fix.c - the deck's fixes and thermo output: `fix ID all nve`,
 * `fix ID all nvt temp ...`, `fix ID all langevin ...`, `thermo N`,
 * `thermo_style one|custom ...` and `thermo_modify norm yes|no`, each as
 * LAMMPS reads it, or refused with the file, the line and the form
 * halox-md reads.
 */
#include "md/deck_internal.h"
#include "md/md_driver.h"

#include <stdio.h>
#include <string.h>

static const char *const fix_names[DECK_FIX_STYLES] = {"nve", "nvt", "langevin"};
static const char *const fix_usage[DECK_FIX_STYLES] = {
    "fix ID all nve", "fix ID all nvt temp TSTART TSTOP TDAMP [tchain N] [tloop N] [drag D]",
    "fix ID all langevin TSTART TSTOP DAMP SEED"};

static hx_status get_positive(deck *d, const char *what, const char *w, double *out)
{
    HXI_CHECK(deck_get_double(d, what, w, out));
    if (!(*out > 0.0))
        return deck_error(d, "fix %s: %s %s must be > 0", d->words[3], what, deck_show(w).s);
    return HX_OK;
}

/* fix ID all nvt temp TSTART TSTOP TDAMP [tchain N] [tloop N] [drag D]. */
static hx_status fix_nvt(deck *d)
{
    hx_md_nvt n = {1, 0, 0, 0, 3, 1, 0.0};
    const char *usage = fix_usage[DECK_FIX_NVT];
    if (d->nwords < 5 || strcmp(d->words[4], "temp") != 0)
        return deck_error(d, "fix nvt needs its target first: write `%s`", usage);
    if (d->nwords < 8)
        return deck_error(d, "fix nvt temp takes TSTART TSTOP TDAMP; write `%s`", usage);
    HXI_CHECK(get_positive(d, "the target temperature TSTART", d->words[5], &n.t_start));
    HXI_CHECK(get_positive(d, "the target temperature TSTOP", d->words[6], &n.t_stop));
    HXI_CHECK(get_positive(d, "the damping TDAMP", d->words[7], &n.t_damp));
    for (int i = 8; i < d->nwords; i += 2) {
        const char *k = d->words[i];
        if (strcmp(k, "tchain") != 0 && strcmp(k, "tloop") != 0 && strcmp(k, "drag") != 0)
            return deck_error(d,
                              "fix nvt keyword '%s' is not supported (tchain, tloop, drag; "
                              "pressure control is fix npt's, which halox-md does not run)",
                              deck_show(k).s);
        if (i + 1 == d->nwords)
            return deck_error(d, "fix nvt %s has no value; write `%s`", k, usage);
        if (strcmp(k, "drag") == 0) {
            HXI_CHECK(deck_get_double(d, "drag", d->words[i + 1], &n.drag));
            if (!(n.drag >= 0.0))
                return deck_error(d, "fix nvt drag %s must be >= 0", deck_show(d->words[i + 1]).s);
        } else if (k[1] == 'c') {
            long long m;
            HXI_CHECK(deck_get_int(d, "tchain", d->words[i + 1], 1, HX_MD_NVT_MAX_CHAIN, &m));
            n.tchain = (int) m;
        } else {
            HXI_CHECK(deck_get_int32(d, k, d->words[i + 1], 1, &n.tloop));
        }
    }
    d->c.nvt = n;
    d->c.nve = 1;
    return HX_OK;
}

/* fix ID all langevin TSTART TSTOP DAMP SEED, with LAMMPS's defaults for
 * its keywords (given as no, they are accepted). */
static hx_status fix_langevin(deck *d)
{
    hx_md_langevin l = {1, 0, 0, 0, 0};
    HXI_CHECK(d->nwords < 8 ? deck_error(d, "fix langevin takes TSTART TSTOP DAMP SEED; write `%s`",
                                         fix_usage[DECK_FIX_LANGEVIN])
                            : HX_OK);
    HXI_CHECK(deck_get_double(d, "TSTART", d->words[4], &l.t_start));
    HXI_CHECK(deck_get_double(d, "TSTOP", d->words[5], &l.t_stop));
    if (!(l.t_start >= 0.0) || !(l.t_stop >= 0.0))
        return deck_error(d, "fix langevin %s %s: temperatures must be >= 0",
                          deck_show(d->words[4]).s, deck_show(d->words[5]).s);
    HXI_CHECK(get_positive(d, "the damping DAMP", d->words[6], &l.damp));
    HXI_CHECK(deck_get_int32(d, "the langevin SEED", d->words[7], 1, &l.seed));
    for (int i = 8; i < d->nwords; i += 2) {
        const char *k = d->words[i];
        static const char *const known[] = {"zero", "tally", "gjf", "angmom", "omega", "scale"};
        int ok = 0;
        for (size_t j = 0; j < sizeof known / sizeof known[0]; j++)
            ok |= strcmp(k, known[j]) == 0;
        if (!ok || i + 1 == d->nwords || strcmp(d->words[i + 1], "no") != 0 ||
            strcmp(k, "scale") == 0)
            return deck_error(d,
                              "fix langevin %s%s%s is not supported: halox-md runs LAMMPS's "
                              "defaults (zero no, tally no, gjf no, angmom no, omega no)",
                              deck_show(k).s, i + 1 < d->nwords ? " " : "",
                              i + 1 < d->nwords ? deck_show(d->words[i + 1]).s : "");
    }
    d->c.langevin = l;
    return HX_OK;
}

/* Which fix style a deck's `fix` names, -1 when none halox-md runs. */
static int fix_style(const char *w)
{
    for (int s = 0; s < DECK_FIX_STYLES; s++)
        if (strcmp(w, fix_names[s]) == 0)
            return s;
    return -1;
}

/* One fix of each style, an ID used by one style only (LAMMPS replaces a
 * fix by one of the same style), and one integrator. */
static hx_status fix_ids(deck *d, int style)
{
    const char *id = d->words[1];
    for (int s = 0; s < DECK_FIX_STYLES; s++)
        if (s != style && strcmp(d->fix_ids[s], id) == 0)
            return deck_error(d,
                              "fix %s: it is fix %s already; LAMMPS replaces a fix only by "
                              "one of the same style",
                              deck_show(id).s, fix_names[s]);
    if (d->fix_ids[style][0] && strcmp(d->fix_ids[style], id) != 0)
        return deck_error(d, "fix %s %s: a second fix %s (besides %s)%s", deck_show(id).s,
                          fix_names[style], fix_names[style], d->fix_ids[style],
                          style == DECK_FIX_LANGEVIN ? " is not supported"
                                                     : " would integrate twice");
    if ((style == DECK_FIX_NVE && d->fix_ids[DECK_FIX_NVT][0]) ||
        (style == DECK_FIX_NVT && d->fix_ids[DECK_FIX_NVE][0]))
        return deck_error(d,
                          "fix %s %s with fix %s %s: both integrate, so LAMMPS would move the "
                          "atoms twice a step; fix nvt does fix nve's work: drop fix nve",
                          deck_show(id).s, fix_names[style],
                          d->fix_ids[style == DECK_FIX_NVE ? DECK_FIX_NVT : DECK_FIX_NVE],
                          style == DECK_FIX_NVE ? "nvt" : "nve");
    snprintf(d->fix_ids[style], sizeof d->fix_ids[style], "%s", id);
    return HX_OK;
}

hx_status deck_cmd_fix(deck *d)
{
    int style = d->nwords >= 4 ? fix_style(d->words[3]) : DECK_FIX_NVE;
    if (style < 0 && strcmp(d->words[3], "balance") == 0)
        return deck_cmd_fix_balance(d);
    if (style < 0)
        return deck_error(d, "fix style '%s' is not supported: halox-md reads `%s`, `%s` and `%s`",
                          deck_show(d->words[3]).s, fix_usage[0], fix_usage[1], fix_usage[2]);
    if (d->nwords < 4 || (style == DECK_FIX_NVE && d->nwords > 4))
        return deck_error(d, "fix takes %s arguments; write `%s`", d->nwords < 4 ? "more" : "fewer",
                          fix_usage[style]);
    if (!deck_is_name(d->words[1], strlen(d->words[1])))
        return deck_error(d, "fix ID '%s' must be letters, digits and _", deck_show(d->words[1]).s);
    if (strcmp(d->words[2], "all") != 0)
        return deck_error(d, "fix group '%s': halox-md has the group all only",
                          deck_show(d->words[2]).s);
    if (!d->have_box)
        return deck_error(d, "fix comes before create_box; LAMMPS needs create_box first");
    if (style == DECK_FIX_NVT)
        HXI_CHECK(fix_nvt(d));
    else if (style == DECK_FIX_LANGEVIN)
        HXI_CHECK(fix_langevin(d));
    else
        d->c.nve = 1;
    return fix_ids(d, style);
}

hx_status deck_fix_next_run(deck *d)
{
    if (d->c.nvt.on || d->c.langevin.on)
        return deck_error(d,
                          "a second run with fix %s: LAMMPS starts the thermostat's target "
                          "ramp and its set-up again at each run, halox-md runs one; put the "
                          "steps in one run",
                          d->c.nvt.on ? "nvt" : "langevin");
    return HX_OK;
}

hx_status deck_cmd_thermo(deck *d)
{
    if (d->nwords != 2)
        return deck_error(d, "thermo takes one argument; write `thermo N`");
    return deck_get_int32(d, "the thermo interval", d->words[1], 0, &d->c.thermo_every);
}

/* thermo_style one | custom KEYWORD ...; as in LAMMPS, it resets
 * thermo_modify's settings. */
hx_status deck_cmd_thermo_style(deck *d)
{
    static const char usage[] = "thermo_style one | thermo_style custom KEYWORD ...";
    if (d->nwords == 2 && strcmp(d->words[1], "one") == 0) {
        hx_md_config_thermo_one(&d->c);
        return HX_OK;
    }
    if (d->nwords < 2 || strcmp(d->words[1], "custom") != 0)
        return deck_error(d, "thermo_style %s is not supported; write `%s`",
                          d->nwords < 2 ? "without a style" : deck_show(d->words[1]).s, usage);
    if (d->nwords < 3)
        return deck_error(d, "thermo_style custom takes keywords (%s)", hxi_md_thermo_keywords());
    if (d->nwords - 2 > HX_MD_THERMO_MAX_COLS)
        return deck_error(d, "thermo_style custom: %d keywords; halox-md prints at most %d",
                          d->nwords - 2, (int) HX_MD_THERMO_MAX_COLS);
    hx_md_config_thermo_one(&d->c);
    for (int i = 2; i < d->nwords; i++) {
        const int k = hxi_md_thermo_keyword(d->words[i]);
        if (k < 0)
            return deck_error(d, "thermo_style custom keyword '%s' is not supported (%s)",
                              deck_show(d->words[i]).s, hxi_md_thermo_keywords());
        d->c.thermo_cols[i - 2] = (unsigned char) k;
    }
    d->c.thermo_ncols = d->nwords - 2;
    return HX_OK;
}

/* thermo_modify norm yes|no [flush yes|no]: flush changes nothing here
 * (halox-md flushes every row). */
hx_status deck_cmd_thermo_modify(deck *d)
{
    static const char usage[] = "thermo_modify norm yes|no";
    int unused;
    if (d->nwords < 3 || d->nwords % 2 == 0)
        return deck_error(d, "thermo_modify takes keywords with values; write `%s`", usage);
    for (int i = 1; i < d->nwords; i += 2) {
        if (strcmp(d->words[i], "norm") == 0)
            HXI_CHECK(deck_get_yes_no(d, "norm", d->words[i + 1], &d->c.thermo_norm));
        else if (strcmp(d->words[i], "flush") == 0)
            HXI_CHECK(deck_get_yes_no(d, "flush", d->words[i + 1], &unused));
        else
            return deck_error(d, "thermo_modify keyword '%s' is not supported (norm, flush)",
                              deck_show(d->words[i]).s);
    }
    return HX_OK;
}
