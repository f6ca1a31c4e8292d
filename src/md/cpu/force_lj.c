/*
 * force_lj.c - Lennard-Jones 12-6 in LJ units over a half list, LAMMPS's
 * lj/cut: F(r) r = 48 eps (s/r)^12 - 24 eps (s/r)^6 within rc, energy
 * 4 eps ((s/r)^12 - (s/r)^6) minus its value at rc when shifted
 * (pair_modify shift yes). Each pair is computed once and its force added
 * to both atoms (halo atoms' forces go back to their owners in the force
 * halo exchange). The virial is sum r.F over pairs, which is what LAMMPS's
 * fdotr sum over owned and ghost atoms amounts to.
 */
#include "md/cpu/md_cpu.h"

void hxi_md_lj_init(hxi_md_lj *p, const hx_md_config *cfg)
{
    double s6 = cfg->sigma * cfg->sigma * cfg->sigma * cfg->sigma * cfg->sigma * cfg->sigma;
    double s12 = s6 * s6;
    p->cut2 = cfg->rc * cfg->rc;
    p->lj1 = 48.0 * cfg->epsilon * s12;
    p->lj2 = 24.0 * cfg->epsilon * s6;
    p->lj3 = 4.0 * cfg->epsilon * s12;
    p->lj4 = 4.0 * cfg->epsilon * s6;
    p->offset = 0.0;
    if (cfg->shift_energy) {
        double r2i = 1.0 / p->cut2, r6i = r2i * r2i * r2i;
        p->offset = r6i * (p->lj3 * r6i - p->lj4);
    }
}

/* The kernel, with the energy sums compiled in or out by a constant. */
static inline void hxi_lj_rows(const hxi_md_lj *p, const hxi_md_pbc *b, const hxi_md_nlist *l,
                               const double *restrict x, double *restrict f, int energy,
                               double *acc)
{
    const double cut2 = p->cut2, lj1 = p->lj1, lj2 = p->lj2, lj3 = p->lj3, lj4 = p->lj4;
    const double off = p->offset;
    const double hx = b->half[0], hy = b->half[1], hz = b->half[2];
    const double lx = b->len[0], ly = b->len[1], lz = b->len[2];
    double e = 0.0, w = 0.0;

    for (int i = 0; i < l->rows; i++) {
        const double xi = x[3 * i + 0], yi = x[3 * i + 1], zi = x[3 * i + 2];
        double fx = 0.0, fy = 0.0, fz = 0.0;
        for (int q = l->start[i]; q < l->start[i + 1]; q++) {
            const int j = l->j[q];
            double dx = xi - x[3 * j + 0], dy = yi - x[3 * j + 1], dz = zi - x[3 * j + 2];
            double r2;
            if (dx > hx)
                dx -= lx;
            else if (dx < -hx)
                dx += lx;
            if (dy > hy)
                dy -= ly;
            else if (dy < -hy)
                dy += ly;
            if (dz > hz)
                dz -= lz;
            else if (dz < -hz)
                dz += lz;
            r2 = dx * dx + dy * dy + dz * dz;
            if (r2 < cut2) {
                const double r2i = 1.0 / r2;
                const double r6i = r2i * r2i * r2i;
                const double fpair = r6i * (lj1 * r6i - lj2) * r2i;
                fx += dx * fpair;
                fy += dy * fpair;
                fz += dz * fpair;
                f[3 * j + 0] -= dx * fpair;
                f[3 * j + 1] -= dy * fpair;
                f[3 * j + 2] -= dz * fpair;
                if (energy) {
                    e += r6i * (lj3 * r6i - lj4) - off;
                    w += r2 * fpair;
                }
            }
        }
        f[3 * i + 0] += fx;
        f[3 * i + 1] += fy;
        f[3 * i + 2] += fz;
    }
    if (energy) {
        acc[0] += e;
        acc[1] += w;
    }
}

void hxi_md_force_lj(const hxi_md_lj *p, const hxi_md_pbc *b, const hxi_md_nlist *l,
                     const double *x, double *f, double *acc)
{
    if (acc)
        hxi_lj_rows(p, b, l, x, f, 1, acc);
    else
        hxi_lj_rows(p, b, l, x, f, 0, NULL);
}
