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

/* Pairs are taken in chunks: the distances are gathered (with the minimum
 * image for a row's image pairs), the pair forces fpair(r2) of the whole
 * chunk computed in one loop without branches, which the compiler
 * vectorises (4 divisions per instruction with AVX2), then the forces
 * added to both atoms in list order. The arithmetic of each pair and the
 * order of every sum are those of a plain pair-by-pair loop, so the result
 * is the same bit for bit on any x86-64 (no fused multiply-add is used). */
#define HXI_LJ_CHUNK 64

/* Inlined into each clone below, so that each is compiled for its target. */
#if defined(__GNUC__)
#define HXI_LJ_INLINE static inline __attribute__((always_inline))
#else
#define HXI_LJ_INLINE static inline
#endif

typedef struct hxi_lj_chunk {
    double dx[HXI_LJ_CHUNK], dy[HXI_LJ_CHUNK], dz[HXI_LJ_CHUNK];
    double r2[HXI_LJ_CHUNK], fp[HXI_LJ_CHUNK], en[HXI_LJ_CHUNK];
} hxi_lj_chunk;

/* fpair and the pair energy of n pairs; 0 beyond the cutoff. */
HXI_LJ_INLINE void hxi_lj_chunk_eval(const hxi_md_lj *p, hxi_lj_chunk *c, int n, int energy)
{
    const double cut2 = p->cut2, lj1 = p->lj1, lj2 = p->lj2, lj3 = p->lj3, lj4 = p->lj4;
    const double off = p->offset;
    for (int k = 0; k < n; k++) {
        const double r2 = c->dx[k] * c->dx[k] + c->dy[k] * c->dy[k] + c->dz[k] * c->dz[k];
        c->r2[k] = r2;
        const double r2i = 1.0 / r2;
        const double r6i = r2i * r2i * r2i;
        const int in = r2 < cut2;
        c->fp[k] = in ? r6i * (lj1 * r6i - lj2) * r2i : 0.0;
        if (energy)
            c->en[k] = in ? r6i * (lj3 * r6i - lj4) - off : 0.0;
    }
}

HXI_LJ_INLINE void hxi_lj_rows(const hxi_md_lj *p, const hxi_md_pbc *b, const hxi_md_nlist *l,
                               const double *restrict x, double *restrict f, int energy,
                               double *acc)
{
    double e = 0.0, w = 0.0;
    hxi_lj_chunk c;

    for (int r = 0; r < l->rows; r++) {
        const int i = l->atom[r];
        const double xi = x[3 * i + 0], yi = x[3 * i + 1], zi = x[3 * i + 2];
        const int *restrict js = l->j;
        const int plain = l->wrap[r], end = l->start[r + 1];
        double fx = 0.0, fy = 0.0, fz = 0.0;
        for (int q0 = l->start[r]; q0 < end; q0 += HXI_LJ_CHUNK) {
            const int n = end - q0 < HXI_LJ_CHUNK ? end - q0 : HXI_LJ_CHUNK;
            for (int k = 0; k < n; k++) {
                const int j = js[q0 + k];
                double dx = xi - x[3 * j + 0], dy = yi - x[3 * j + 1], dz = zi - x[3 * j + 2];
                if (q0 + k >= plain) {
                    if (dx > b->half[0])
                        dx -= b->len[0];
                    else if (dx < -b->half[0])
                        dx += b->len[0];
                    if (dy > b->half[1])
                        dy -= b->len[1];
                    else if (dy < -b->half[1])
                        dy += b->len[1];
                    if (dz > b->half[2])
                        dz -= b->len[2];
                    else if (dz < -b->half[2])
                        dz += b->len[2];
                }
                c.dx[k] = dx;
                c.dy[k] = dy;
                c.dz[k] = dz;
            }
            hxi_lj_chunk_eval(p, &c, n, energy);
            for (int k = 0; k < n; k++) {
                const int j = js[q0 + k];
                const double fpair = c.fp[k];
                const double dx = c.dx[k], dy = c.dy[k], dz = c.dz[k];
                fx += dx * fpair;
                fy += dy * fpair;
                fz += dz * fpair;
                f[3 * j + 0] -= dx * fpair;
                f[3 * j + 1] -= dy * fpair;
                f[3 * j + 2] -= dz * fpair;
                if (energy) {
                    e += c.en[k];
                    w += c.r2[k] * fpair;
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

/* With GCC on x86-64, an AVX2 copy of the kernel is chosen at run time
 * where the processor has it (AVX2 only: no FMA, so the same bits). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define HXI_LJ_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define HXI_LJ_CLONES
#endif

HXI_LJ_CLONES static void hxi_lj_energy(const hxi_md_lj *p, const hxi_md_pbc *b,
                                        const hxi_md_nlist *l, const double *x, double *f,
                                        double *acc)
{
    hxi_lj_rows(p, b, l, x, f, 1, acc);
}

HXI_LJ_CLONES static void hxi_lj_force(const hxi_md_lj *p, const hxi_md_pbc *b,
                                       const hxi_md_nlist *l, const double *x, double *f)
{
    hxi_lj_rows(p, b, l, x, f, 0, NULL);
}

void hxi_md_force_lj(const hxi_md_lj *p, const hxi_md_pbc *b, const hxi_md_nlist *l,
                     const double *x, double *f, double *acc)
{
    if (acc)
        hxi_lj_energy(p, b, l, x, f, acc);
    else
        hxi_lj_force(p, b, l, x, f);
}
