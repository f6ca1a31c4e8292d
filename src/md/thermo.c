/*
 * thermo.c - thermodynamic output as LAMMPS prints it in lj units:
 * `thermo_style one` (its default: Step Temp E_pair E_mol TotEng Press) or
 * `thermo_style custom` with the keywords of hx_md_thermo_col, and
 * `thermo_modify norm yes|no` (yes by default in lj units).
 *
 * Definitions (LAMMPS compute temp, pe, pressure and Thermo::compute_*):
 *   Temp    = sum m v^2 / (dof k), dof = 3N - 3 (the 3 of zero momentum)
 *   E_pair  = PotEng = pair energy (/ N with norm yes),  E_mol = 0 (no bonds)
 *   KinEng  = Temp dof k / 2 (/ N with norm yes)
 *   TotEng  = KinEng + PotEng
 *   Press   = (dof k Temp + sum r.F) / (3 V), i.e. (sum m v^2 + W) / (3 V)
 *   Volume  = V,  Density = N m / V,  Atoms = N
 * Layout (LAMMPS thermo.cpp, style one and custom alike): the header
 * centres each keyword, {:^11} for the integers (Step, Atoms) and {:^14}
 * for floats, one blank between; rows use "%10d " plus a blank for an
 * integer and "% -14.8g" plus a blank for a float, with the last blank
 * dropped.
 */
#include "md/md_driver.h"

#include <math.h>
#include <string.h>

void hx_md_thermo_from_sums(hx_md_thermo *out, int64_t step, int64_t natoms, double volume,
                            double mv2, double epair, double virial)
{
    double dof = 3.0 * (double) natoms - 3.0;
    double n = natoms > 0 ? (double) natoms : 1.0;
    /* In the order of operations of LAMMPS's computes. */
    double temp = dof > 0 ? mv2 * (1.0 / dof) : 0.0;
    double ke = temp * (0.5 * dof);
    out->step = step;
    out->temp = temp;
    out->epair = epair / n;
    out->emol = 0.0;
    out->etotal = epair / n + ke / n;
    out->press = (dof * temp + virial) / 3.0 * (1.0 / volume);
    out->pe_sum = epair;
    out->ke_sum = ke;
    out->volume = volume;
    out->natoms = natoms;
    out->mass_sum = 0.0;
}

/* LAMMPS's keyword and column name of each hx_md_thermo_col. */
static const char *const keys[HX_MD_TH_NKEYS][2] = {
    [HX_MD_TH_STEP] = {"step", "Step"},
    [HX_MD_TH_TEMP] = {"temp", "Temp"},
    [HX_MD_TH_EPAIR] = {"epair", "E_pair"},
    [HX_MD_TH_EMOL] = {"emol", "E_mol"},
    [HX_MD_TH_PE] = {"pe", "PotEng"},
    [HX_MD_TH_KE] = {"ke", "KinEng"},
    [HX_MD_TH_ETOTAL] = {"etotal", "TotEng"},
    [HX_MD_TH_PRESS] = {"press", "Press"},
    [HX_MD_TH_VOL] = {"vol", "Volume"},
    [HX_MD_TH_DENSITY] = {"density", "Density"},
    [HX_MD_TH_ATOMS] = {"atoms", "Atoms"},
    [HX_MD_TH_XY] = {"xy", "Xy"},
    [HX_MD_TH_XZ] = {"xz", "Xz"},
    [HX_MD_TH_YZ] = {"yz", "Yz"},
    [HX_MD_TH_LX] = {"lx", "Lx"},
    [HX_MD_TH_LY] = {"ly", "Ly"},
    [HX_MD_TH_LZ] = {"lz", "Lz"},
};

void hx_md_config_thermo_one(hx_md_config *c)
{
    static const unsigned char one[] = {HX_MD_TH_STEP, HX_MD_TH_TEMP,   HX_MD_TH_EPAIR,
                                        HX_MD_TH_EMOL, HX_MD_TH_ETOTAL, HX_MD_TH_PRESS};
    memset(c->thermo_cols, 0, sizeof c->thermo_cols);
    memcpy(c->thermo_cols, one, sizeof one);
    c->thermo_ncols = (int) sizeof one;
    c->thermo_norm = 1;
}

int hxi_md_thermo_keyword(const char *word)
{
    for (int k = 0; k < HX_MD_TH_NKEYS; k++)
        if (strcmp(word, keys[k][0]) == 0)
            return k;
    return -1;
}

const char *hxi_md_thermo_keywords(void)
{
    static char names[200];
    if (!names[0])
        for (int k = 0; k < HX_MD_TH_NKEYS; k++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? " " : "",
                     keys[k][0]);
    return names;
}

static int is_int(int col)
{
    return col == HX_MD_TH_STEP || col == HX_MD_TH_ATOMS;
}

/* A keyword centred in width w as fmt's {:^w} does: the odd blank goes right. */
static void hxi_center(FILE *out, const char *word, int w)
{
    int len = (int) strlen(word), pad = w > len ? w - len : 0;
    fprintf(out, "%*s%s%*s", pad / 2, "", word, pad - pad / 2, "");
}

void hxi_md_thermo_header(FILE *out, const hx_md_config *c)
{
    for (int i = 0; i < c->thermo_ncols; i++) {
        const int col = c->thermo_cols[i];
        if (i)
            fputc(' ', out);
        hxi_center(out, col < HX_MD_TH_NKEYS ? keys[col][1] : "?", is_int(col) ? 11 : 14);
    }
    fputc('\n', out);
}

/* The value of a float column, as LAMMPS's Thermo::compute_* works it out. */
static double value(const hx_md_config *c, const hx_md_thermo *t, int col)
{
    const double n = c->thermo_norm && t->natoms > 0 ? (double) t->natoms : 0.0;
    const double pe = n > 0 ? t->pe_sum / n : t->pe_sum;
    const double ke = n > 0 ? t->ke_sum / n : t->ke_sum;
    switch (col) {
    case HX_MD_TH_TEMP:
        return t->temp;
    case HX_MD_TH_EPAIR:
    case HX_MD_TH_PE:
        return pe;
    case HX_MD_TH_KE:
        return ke;
    case HX_MD_TH_ETOTAL:
        return ke + pe;
    case HX_MD_TH_PRESS:
        return t->press;
    case HX_MD_TH_VOL:
        return t->volume;
    case HX_MD_TH_DENSITY:
        return (t->mass_sum > 0.0 ? t->mass_sum : (double) t->natoms * c->mass) / t->volume;
    case HX_MD_TH_XY:
    case HX_MD_TH_XZ:
    case HX_MD_TH_YZ:
        return c->tilt[col - HX_MD_TH_XY];
    case HX_MD_TH_LX:
    case HX_MD_TH_LY:
    case HX_MD_TH_LZ: /* fixed: the lattice's box (hx_md_box, hx_md_lattice_constant) */
        return c->cells[col - HX_MD_TH_LX] * pow(4.0 / c->density, 1.0 / 3.0);
    default: /* E_mol: no bonds */
        return 0.0;
    }
}

void hxi_md_thermo_row(FILE *out, const hx_md_config *c, const hx_md_thermo *t)
{
    for (int i = 0; i < c->thermo_ncols; i++) {
        const int col = c->thermo_cols[i];
        const char *gap = i + 1 < c->thermo_ncols ? " " : "";
        if (is_int(col))
            fprintf(out, "%10lld %s", (long long) (col == HX_MD_TH_STEP ? t->step : t->natoms),
                    gap);
        else
            fprintf(out, "% -14.8g%s", value(c, t, col), gap);
    }
    fputc('\n', out);
}

/* The thermostats a config asks for: what LAMMPS accepts (both engines
 * run them). */
static hx_status thermostat_check(const hx_md_config *c)
{
    const hx_md_nvt *n = &c->nvt;
    const hx_md_langevin *l = &c->langevin;
    if (n->on &&
        (!(n->t_start > 0) || !(n->t_stop > 0) || !isfinite(n->t_start) || !isfinite(n->t_stop)))
        return hxi_error(HX_ERR_INVALID, "fix nvt temp %g %g: target temperatures must be > 0",
                         n->t_start, n->t_stop);
    if (n->on && (!(n->t_damp > 0) || !isfinite(n->t_damp)))
        return hxi_error(HX_ERR_INVALID, "fix nvt temp ... TDAMP %g: the damping must be > 0",
                         n->t_damp);
    if (n->on && (n->tchain < 1 || n->tchain > HX_MD_NVT_MAX_CHAIN || n->tloop < 1 ||
                  !(n->drag >= 0) || !isfinite(n->drag)))
        return hxi_error(HX_ERR_INVALID,
                         "fix nvt: tchain %d must be 1 to 32 and tloop %d >= 1, drag %g "
                         ">= 0",
                         n->tchain, n->tloop, n->drag);
    if (n->on && !c->nve)
        return hxi_error(HX_ERR_INVALID, "fix nvt integrates: nve must be 1 with it");
    if (l->on && (!(l->t_start >= 0) || !(l->t_stop >= 0) || !isfinite(l->t_start) ||
                  !isfinite(l->t_stop) || !(l->damp > 0) || !isfinite(l->damp) || l->seed <= 0))
        return hxi_error(HX_ERR_INVALID,
                         "fix langevin %g %g %g %d: temperatures must be >= 0, the damping > 0 "
                         "and the seed > 0",
                         l->t_start, l->t_stop, l->damp, l->seed);
    return HX_OK;
}

hx_status hxi_md_thermo_config_check(const hx_md_config *c)
{
    if (c->thermo_ncols < 1 || c->thermo_ncols > HX_MD_THERMO_MAX_COLS)
        return hxi_error(HX_ERR_INVALID, "thermo_style: %d columns; 1 to %d are printed",
                         c->thermo_ncols, (int) HX_MD_THERMO_MAX_COLS);
    for (int i = 0; i < c->thermo_ncols; i++)
        if (c->thermo_cols[i] >= HX_MD_TH_NKEYS)
            return hxi_error(HX_ERR_INVALID, "thermo_style: column %d is unknown",
                             (int) c->thermo_cols[i]);
    if (c->thermo_norm != 0 && c->thermo_norm != 1)
        return hxi_error(HX_ERR_INVALID, "thermo_norm must be 0 or 1 (thermo_modify norm)");
    return thermostat_check(c);
}
