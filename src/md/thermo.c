/*
 * thermo.c - thermodynamic output as LAMMPS prints it for `thermo_style one`
 * (its default) in lj units: Step Temp E_pair E_mol TotEng Press.
 *
 * Definitions (LAMMPS compute temp, pe, pressure; thermo normalises
 * energies by the atom count in lj units):
 *   Temp   = sum m v^2 / (dof k), dof = 3N - 3 (the 3 of zero momentum)
 *   E_pair = pair energy / N,  E_mol = 0 (no bonds)
 *   TotEng = (pair energy + sum m v^2 / 2) / N
 *   Press  = (dof k Temp + sum r.F) / (3 V), i.e. (sum m v^2 + W) / (3 V)
 * Layout (LAMMPS thermo.cpp): the header centres each keyword, {:^11} for
 * the step and {:^14} for floats, one blank between; rows use "%10d " plus a
 * blank for the step and "% -14.8g" plus a blank for each float, with the
 * last blank dropped.
 */
#include "md/md_driver.h"

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
}

/* A keyword centred in width w as fmt's {:^w} does: the odd blank goes right. */
static void hxi_center(FILE *out, const char *word, int w)
{
    int len = (int) strlen(word), pad = w > len ? w - len : 0;
    fprintf(out, "%*s%s%*s", pad / 2, "", word, pad - pad / 2, "");
}

void hxi_md_thermo_header(FILE *out)
{
    static const char *const floats[] = {"Temp", "E_pair", "E_mol", "TotEng", "Press"};
    hxi_center(out, "Step", 11);
    for (int i = 0; i < 5; i++) {
        fputc(' ', out);
        hxi_center(out, floats[i], 14);
    }
    fputc('\n', out);
}

void hxi_md_thermo_row(FILE *out, const hx_md_thermo *t)
{
    fprintf(out, "%10lld  % -14.8g % -14.8g % -14.8g % -14.8g % -14.8g\n", (long long) t->step,
            t->temp, t->epair, t->emol, t->etotal, t->press);
}
