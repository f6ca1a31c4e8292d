/*
 * md_cpu.h - internals of the CPU engine: cell bins, neighbour lists and
 * the pair kernel. What the driver shares with the engines (wall
 * clock, thermo table, trajectory writer) is in md/md_driver.h. Not
 * installed.
 */
#ifndef HALOX_MD_CPU_H
#define HALOX_MD_CPU_H

#include "core/hxi.h"
#include "md/md.h"
#include "md/pair/pair_eval.h"

#include <stdint.h>

/* ------------------------------------------------------------ cell bins */

/* Atoms of one rank (home and halo) sorted into bins at least cut / reach
 * wide. Along a dimension with grid 1 the bins tile the periodic box and
 * wrap; with fewer than 2 reach + 1 bins there they collapse into one, so
 * that a stencil never meets the same bin twice. Along a decomposed
 * dimension the bins span the atoms' extent and do not wrap. */
typedef struct hxi_md_cells {
    int nb[3];     /* bins per dimension */
    int wrap[3];   /* 1: periodic along this dimension */
    double lo[3];  /* origin of bin 0 */
    double inv[3]; /* bins per unit length */
    /* Triclinic box: atoms are binned by their heights dot(normal[k], x)
     * (hx_decomp_height), lo and inv are heights, and a wrap along k
     * crosses edge k. Two atoms within r differ by at most r in every
     * height, so the stencil holds every partner as in an orthorhombic box. */
    int tri;
    double normal[3][3];
    int nbins;
    int *start;     /* nbins + 1: atoms of bin b are atoms[start[b] .. start[b+1]) */
    int *atoms;     /* atom indices, bin by bin, ascending within a bin */
    int *bin;       /* bin of each atom */
    int *slot;      /* where each atom is in atoms[] */
    double *xs;     /* coordinates in the order of atoms[], read sequentially */
    uint8_t *zmask; /* zone bits in the order of atoms[] (neighbor.c) */
    int *split;     /* where each bin's home atoms end (neighbor.c) */
    double *cand;   /* one bin's candidates: x, y, z blocks of cap_cand (neighbor.c) */
    int *cand_j;
    uint8_t *cand_zm;
    int cap_bins, cap_atoms, cap_zmask, cap_split, cap_cand;
} hxi_md_cells;

hx_status hxi_md_cells_build(hxi_md_cells *c, const hx_decomp *d, double cut, int reach,
                             const double *x, int n);
void hxi_md_cells_free(hxi_md_cells *c);

/* In a triclinic box (d->triclinic), x[0 .. n) through lamda coordinates
 * and back, wrapped into the box there, as LAMMPS's Domain::pbc at each
 * reneighbouring (remap.c); nothing otherwise. */
void hxi_md_remap_tilted(const hx_decomp *d, double *x, int n);

/* ------------------------------------------------------- neighbour lists */

/* Half list in rows: each pair once, in the row of one of its atoms. Row
 * r holds the partners of atom atom[r], j[start[r] .. start[r+1]); rows
 * come bin by bin, so that atoms near in space are near in the list.
 * Within a row, the pairs whose distance needs no periodic image come
 * first, up to wrap[r]; those that do (across a periodic face along an
 * undecomposed dimension) follow, so that the force loop takes the
 * minimum image only where it can matter. */
typedef struct hxi_md_nlist {
    int rows;
    int *atom;
    int *start;
    int *wrap;
    int *j;
    int cap_rows;
    size_t cap_j;
    int *spill; /* a row's image pairs while the row is built */
    size_t cap_spill;
    /* newton off's non-local list: each pair of a home atom (the row's)
     * and a halo atom, which the halo atom's rank computes too: the force
     * goes to the row's atom alone, half the energy and virial count. */
    int one_sided;
} hxi_md_nlist;

/* Minimum image along the dimensions with grid 1; half is +inf elsewhere,
 * so that the same code leaves decomposed dimensions alone. In a
 * triclinic box (tri) the image is taken by fractional coordinates: the
 * difference's height along d (dot(normal[d], r)) brought within half the
 * face distance by whole edges edge[d], each of which changes that height
 * alone; half[d] is then half the face distance. */
typedef struct hxi_md_pbc {
    double len[3];
    double half[3];
    int tri;
    double normal[3][3], edge[3][3];
} hxi_md_pbc;

void hxi_md_pbc_init(hxi_md_pbc *b, const hx_decomp *d);

/* The minimum image of r in a triclinic box (b->tri); 1 when it moved. */
static inline int hxi_md_image_tri(const hxi_md_pbc *b, double r[3])
{
    int moved = 0;
    for (int k = 2; k >= 0; k--) {
        const double *n = b->normal[k], *e = b->edge[k];
        const double s = n[0] * r[0] + n[1] * r[1] + n[2] * r[2];
        const double w = s > b->half[k] ? -1.0 : s < -b->half[k] ? 1.0 : 0.0;
        if (w != 0.0) {
            r[0] += w * e[0], r[1] += w * e[1], r[2] += w * e[2];
            moved = 1;
        }
    }
    return moved;
}

/* Every pair (i, j) of this rank within `cut` whose zones say the pair is
 * ours (hx_zone_pair), once: home-home pairs into `local` (a row for each
 * home atom), pairs with a halo atom into `nonlocal` (a row for every
 * atom). With full (newton off, a plan of hx_plan_create_full; zones are
 * not read): home-home pairs into `local` as before, and every pair of a
 * home atom and a halo atom into the home atom's row of `nonlocal` (rows
 * for home atoms alone, one_sided); pairs of two halo atoms nowhere. */
hx_status hxi_md_neigh_build(hxi_md_nlist *local, hxi_md_nlist *nonlocal, hxi_md_cells *cells,
                             const hx_decomp *d, double cut, const double *x, const uint8_t *zones,
                             int full, int nhome, int ntotal);
void hxi_md_nlist_free(hxi_md_nlist *l);
/* The list's pairs within `cut` at positions x (halo included), with the
 * minimum image where the force loop takes it: the pairs that the list
 * still holds of those within the pair cutoff. */
int64_t hxi_md_nlist_within(const hxi_md_nlist *l, const hxi_md_pbc *b, double cut,
                            const double *x);

/* ---------------------------------------------------------- pair forces */

/* One pair of types as the force loop takes it. */
typedef struct hxi_md_pair_ij {
    double c[HX_PAIR_NCOEF]; /* the formula's coefficients (md/pair/pair_eval.h) */
    double cut2;
    double offset; /* energy at the cutoff when shifted, else 0 */
} hxi_md_pair_ij;

/* The pair style as the force loop takes it (force_pair.c). With one
 * atom type the loop reads cut2, c and offset, as before types came;
 * with more, the table of every pair of types (ntypes x ntypes). */
typedef struct hxi_md_pair {
    int style; /* HX_PAIR_* */
    double cut2;
    double c[HX_PAIR_NCOEF];
    double offset;
    int ntypes;
    hxi_md_pair_ij tab[HX_MD_MAX_TYPES * HX_MD_MAX_TYPES];
} hxi_md_pair;

/* HX_ERR_INVALID where the pairs of cfg's types do not resolve. */
hx_status hxi_md_pair_init(hxi_md_pair *p, const hx_md_config *cfg);
/* Adds the forces of the list's pairs to f (both atoms of each pair; the
 * row's atom alone where l->one_sided, whose energy and virial then count
 * half). With acc != NULL, adds the pair energy to acc[0] and sum r.F to
 * acc[1].
 * type: every atom's type (home and halo), read where p->ntypes > 1. */
void hxi_md_force_pair(const hxi_md_pair *p, const hxi_md_pbc *b, const hxi_md_nlist *l,
                       const double *x, const int32_t *type, double *f, double *acc);

#endif /* HALOX_MD_CPU_H */
