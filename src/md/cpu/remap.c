/*
 * remap.c - LAMMPS's remap of a triclinic box's atoms into the box at a
 * rebuild: Domain::x2lamda, Domain::pbc in lamda coordinates, then
 * Domain::lamda2x, as LAMMPS's Verlet does at set-up and at every
 * reneighbouring. The round trip through lamda coordinates moves every
 * atom by a rounding, as it moves LAMMPS's, so that positions (and dumps)
 * follow LAMMPS's; hx_migrate then finds every atom inside the box.
 */
#include "md/cpu/md_cpu.h"

#include <math.h>

void hxi_md_remap_tilted(const hx_decomp *d, double *x, int n)
{
    const double *lo = d->box_lo, *L = d->box_len;
    const double xy = d->tilt[0], xz = d->tilt[1], yz = d->tilt[2];
    /* Domain::set_global_box: h = (lx, ly, lz, yz, xz, xy) and h_inv */
    const double h[6] = {L[0], L[1], L[2], yz, xz, xy};
    const double hinv[6] = {1.0 / h[0],
                            1.0 / h[1],
                            1.0 / h[2],
                            -h[3] / (h[1] * h[2]),
                            (h[3] * h[5] - h[1] * h[4]) / (h[0] * h[1] * h[2]),
                            -h[5] / (h[0] * h[1])};
    if (!d->triclinic)
        return;
    for (int i = 0; i < n; i++) {
        double *p = x + 3 * (size_t) i, l[3];
        const double dl[3] = {p[0] - lo[0], p[1] - lo[1], p[2] - lo[2]};
        l[0] = hinv[0] * dl[0] + hinv[5] * dl[1] + hinv[4] * dl[2];
        l[1] = hinv[1] * dl[1] + hinv[3] * dl[2];
        l[2] = hinv[2] * dl[2];
        for (int k = 0; k < 3; k++) { /* Domain::pbc: lo 0, hi 1, period 1 */
            if (l[k] < 0.0)
                l[k] += 1.0;
            if (l[k] >= 1.0)
                l[k] = fmax(l[k] - 1.0, 0.0);
        }
        p[0] = h[0] * l[0] + h[5] * l[1] + h[4] * l[2] + lo[0];
        p[1] = h[1] * l[1] + h[3] * l[2] + lo[1];
        p[2] = h[2] * l[2] + lo[2];
    }
}
