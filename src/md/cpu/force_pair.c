/*
 * force_pair.c - the pair style's forces over a half list: F(r)/r and the
 * energy of pair_eval.h's formula within rc, the energy less its value at
 * rc when shifted (pair_modify shift yes). Each pair is computed once and
 * its force added to both atoms (halo atoms' forces go back to their
 * owners in the force halo exchange). The virial is sum r.F over pairs, which is what LAMMPS's
 * fdotr sum over owned and ghost atoms amounts to. newton off's non-local
 * list (one_sided) gives each pair's force to the row's home atom alone
 * and counts half its energy and virial, as LAMMPS's ev_tally does for a
 * pair with a ghost atom under newton off: the other half is counted on
 * the halo atom's own rank, which computes the same pair.
 */
#include "md/cpu/md_cpu.h"
#include "md/pair/pair_styles.h"

hx_status hxi_md_pair_init(hxi_md_pair *p, const hx_md_config *cfg)
{
    hxi_pair_types t;
    p->style = cfg->pair_style;
    p->cut2 = cfg->rc * cfg->rc;
    hxi_pair_setup(cfg->pair_style, cfg->pair, cfg->rc, cfg->shift_energy, p->c, &p->offset);
    p->ntypes = cfg->types.ntypes > 1 ? cfg->types.ntypes : 1;
    if (p->ntypes == 1)
        return HX_OK;
    HXI_CHECK(hxi_pair_resolve(cfg, &t, HX_ERR_INVALID, "cpu engine: "));
    for (int i = 0; i < t.n; i++)
        for (int j = 0; j < t.n; j++) {
            hxi_md_pair_ij *q = &p->tab[i * t.n + j];
            q->cut2 = t.rc[i][j] * t.rc[i][j];
            hxi_pair_setup(cfg->pair_style, t.p[i][j], t.rc[i][j], cfg->shift_energy, q->c,
                           &q->offset);
        }
    return HX_OK;
}

/* Pairs are taken in chunks: the distances are gathered (with the minimum
 * image for a row's image pairs), the pair forces fpair(r2) of the whole
 * chunk computed in one loop without branches, which the compiler
 * vectorises for lj/cut (4 divisions per instruction with AVX2; styles
 * that call exp or cos call them pair by pair), then the forces
 * added to both atoms in list order. The arithmetic of each pair and the
 * order of every sum are those of a plain pair-by-pair loop, so the result
 * is the same bit for bit on any x86-64 (no fused multiply-add is used).
 * The style is a constant in each instantiation below (HXI_PAIR_KERNELS),
 * so the formula is inlined into the chunk loop with no test of the style
 * inside it. With several atom types a second instantiation (`typed`)
 * gathers each pair's partner type with its distance and takes the pair's
 * coefficients, cutoff and offset from the table of i's type; with one
 * type the loop is the one-type loop, unchanged. */
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
    int tj[HXI_LJ_CHUNK]; /* typed: the partners' types, 0-based */
} hxi_lj_chunk;

/* F(r)/r and E(r) of the style; `style` is a constant where this is
 * inlined, so the switch folds away. */
HXI_LJ_INLINE double hxi_pair_formula(int style, const double *c, double r2, double *e)
{
    switch (style) {
#define HXI_PAIR_CASE(ID, name)                                                                    \
    case HX_PAIR_##ID:                                                                             \
        return hxp_##name##_d(c, r2, e);
        HX_PAIR_STYLES(HXI_PAIR_CASE)
#undef HXI_PAIR_CASE
    }
    *e = 0.0;
    return 0.0;
}

/* fpair and the pair energy of n pairs; 0 beyond the cutoff. */
HXI_LJ_INLINE void hxi_lj_chunk_eval(int style, const hxi_md_pair *p, hxi_lj_chunk *c, int n,
                                     int energy)
{
    const double cut2 = p->cut2, off = p->offset;
    double k[HX_PAIR_NCOEF];
    for (int i = 0; i < HX_PAIR_NCOEF; i++)
        k[i] = p->c[i];
    for (int q = 0; q < n; q++) {
        const double r2 = c->dx[q] * c->dx[q] + c->dy[q] * c->dy[q] + c->dz[q] * c->dz[q];
        double e;
        c->r2[q] = r2;
        const double fp = hxi_pair_formula(style, k, r2, &e);
        const int in = r2 < cut2;
        c->fp[q] = in ? fp : 0.0;
        if (energy)
            c->en[q] = in ? e - off : 0.0;
    }
}

/* The coefficients each style's formula reads (pair_formulas.h): the
 * typed loop gathers only those. */
HXI_LJ_INLINE int hxi_pair_ncoef(int style)
{
    return style == HX_PAIR_LJ_SMOOTH_LINEAR                   ? 7
           : style == HX_PAIR_LJ_CUT || style == HX_PAIR_MORSE ? 4
                                                               : 2;
}

/* The same with each pair's own coefficients (row: i's type's pairs),
 * gathered by the partners' types first, so that the formula's loop runs
 * over arrays as the one-type loop does and vectorises alike. */
HXI_LJ_INLINE void hxi_lj_chunk_eval_typed(int style, const hxi_md_pair_ij *row, hxi_lj_chunk *c,
                                           int n, int energy)
{
    const int nc = hxi_pair_ncoef(style);
    double kc[HX_PAIR_NCOEF][HXI_LJ_CHUNK], cut2[HXI_LJ_CHUNK], off[HXI_LJ_CHUNK];
    for (int q = 0; q < n; q++) {
        const hxi_md_pair_ij *t = &row[c->tj[q]];
        for (int i = 0; i < nc; i++)
            kc[i][q] = t->c[i];
        cut2[q] = t->cut2;
        off[q] = t->offset;
    }
    for (int q = 0; q < n; q++) {
        const double r2 = c->dx[q] * c->dx[q] + c->dy[q] * c->dy[q] + c->dz[q] * c->dz[q];
        double e, k[HX_PAIR_NCOEF];
        for (int i = 0; i < nc; i++)
            k[i] = kc[i][q];
        c->r2[q] = r2;
        const double fp = hxi_pair_formula(style, k, r2, &e);
        const int in = r2 < cut2[q];
        c->fp[q] = in ? fp : 0.0;
        if (energy)
            c->en[q] = in ? e - off[q] : 0.0;
    }
}

HXI_LJ_INLINE void hxi_lj_rows(int style, int typed, int one, const hxi_md_pair *p,
                               const hxi_md_pbc *b, const hxi_md_nlist *l, const double *restrict x,
                               const int32_t *restrict type, double *restrict f, int energy,
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
                if (q0 + k >= plain && b->tri) {
                    double rv[3] = {dx, dy, dz};
                    hxi_md_image_tri(b, rv);
                    dx = rv[0], dy = rv[1], dz = rv[2];
                } else if (q0 + k >= plain) {
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
                if (typed)
                    c.tj[k] = type[j] - 1;
            }
            if (typed)
                hxi_lj_chunk_eval_typed(style, p->tab + (type[i] - 1) * p->ntypes, &c, n, energy);
            else
                hxi_lj_chunk_eval(style, p, &c, n, energy);
            for (int k = 0; k < n; k++) {
                const int j = js[q0 + k];
                const double fpair = c.fp[k];
                const double dx = c.dx[k], dy = c.dy[k], dz = c.dz[k];
                fx += dx * fpair;
                fy += dy * fpair;
                fz += dz * fpair;
                if (!one) {
                    f[3 * j + 0] -= dx * fpair;
                    f[3 * j + 1] -= dy * fpair;
                    f[3 * j + 2] -= dz * fpair;
                }
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
    if (energy) { /* halving is exact: the sums are those of newton on */
        acc[0] += one ? 0.5 * e : e;
        acc[1] += one ? 0.5 * w : w;
    }
}

/* With GCC on x86-64, an AVX2 copy of the kernel is chosen at run time
 * where the processor has it (AVX2 only: no FMA, so the same bits). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define HXI_LJ_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define HXI_LJ_CLONES
#endif

/* An energy and a force-only kernel for each style, each cloned, and the
 * same pair for several types (typed); each with both atoms' forces and
 * with the row's atom's alone (newton off's non-local list). */
#define HXI_PAIR_KERNELS(ID, name)                                                                 \
    HXI_LJ_INLINE void hxi_rows_##name(int typed, const hxi_md_pair *p, const hxi_md_pbc *b,       \
                                       const hxi_md_nlist *l, const double *x,                     \
                                       const int32_t *type, double *f, int energy, double *acc)    \
    {                                                                                              \
        if (l->one_sided)                                                                          \
            hxi_lj_rows(HX_PAIR_##ID, typed, 1, p, b, l, x, type, f, energy, acc);                 \
        else                                                                                       \
            hxi_lj_rows(HX_PAIR_##ID, typed, 0, p, b, l, x, type, f, energy, acc);                 \
    }                                                                                              \
    HXI_LJ_CLONES static void hxi_energy_##name(const hxi_md_pair *p, const hxi_md_pbc *b,         \
                                                const hxi_md_nlist *l, const double *x, double *f, \
                                                double *acc)                                       \
    {                                                                                              \
        hxi_rows_##name(0, p, b, l, x, NULL, f, 1, acc);                                           \
    }                                                                                              \
    HXI_LJ_CLONES static void hxi_force_##name(const hxi_md_pair *p, const hxi_md_pbc *b,          \
                                               const hxi_md_nlist *l, const double *x, double *f)  \
    {                                                                                              \
        hxi_rows_##name(0, p, b, l, x, NULL, f, 0, NULL);                                          \
    }                                                                                              \
    HXI_LJ_CLONES static void hxi_typed_##name(const hxi_md_pair *p, const hxi_md_pbc *b,          \
                                               const hxi_md_nlist *l, const double *x,             \
                                               const int32_t *type, double *f, double *acc)        \
    {                                                                                              \
        if (acc)                                                                                   \
            hxi_rows_##name(1, p, b, l, x, type, f, 1, acc);                                       \
        else                                                                                       \
            hxi_rows_##name(1, p, b, l, x, type, f, 0, NULL);                                      \
    }
HX_PAIR_STYLES(HXI_PAIR_KERNELS)
#undef HXI_PAIR_KERNELS

void hxi_md_force_pair(const hxi_md_pair *p, const hxi_md_pbc *b, const hxi_md_nlist *l,
                       const double *x, const int32_t *type, double *f, double *acc)
{
    switch (p->style) {
#define HXI_PAIR_CALL(ID, name)                                                                    \
    case HX_PAIR_##ID:                                                                             \
        if (p->ntypes > 1)                                                                         \
            hxi_typed_##name(p, b, l, x, type, f, acc);                                            \
        else if (acc)                                                                              \
            hxi_energy_##name(p, b, l, x, f, acc);                                                 \
        else                                                                                       \
            hxi_force_##name(p, b, l, x, f);                                                       \
        break;
        HX_PAIR_STYLES(HXI_PAIR_CALL)
#undef HXI_PAIR_CALL
    }
}
