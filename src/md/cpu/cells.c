/*
 * cells.c - atoms of one rank sorted into bins for the neighbour search.
 *
 * Bins are at least cut / reach wide, so the (2 reach + 1)^3 bins around
 * an atom's bin hold every partner within the cutoff. Along a dimension
 * with grid 1 the bins tile the periodic box (positions are wrapped there
 * at every rebuild, by hx_migrate); with fewer than 2 reach + 1 bins they
 * collapse into one, since the offsets -reach .. reach would otherwise name
 * the same bin twice. Along a
 * decomposed dimension the bins span the atoms present (home atoms plus the
 * halo above), and an index outside is clamped: with bins at least the
 * cutoff wide a clamped atom still finds its partners in the stencil.
 * In a triclinic box the bins are made along heights (md_cpu.h).
 */
#include "md/cpu/md_cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void hxi_md_cells_free(hxi_md_cells *c)
{
    free(c->start);
    free(c->atoms);
    free(c->bin);
    free(c->slot);
    free(c->zmask);
    free(c->split);
    free(c->cand);
    free(c->cand_j);
    free(c->cand_zm);
    free(c->xs);
    memset(c, 0, sizeof *c);
}

/* The coordinate bins are made along: x[k], or the height along k. */
static double hxi_bin_coord(const hxi_md_cells *c, int k, const double *x)
{
    const double *n = c->normal[k];
    return c->tri ? n[0] * x[0] + n[1] * x[1] + n[2] * x[2] : x[k];
}

static int hxi_bin_index(const hxi_md_cells *c, int k, double x)
{
    int b = (int) floor((x - c->lo[k]) * c->inv[k]);
    /* A triclinic box's heights are computed, not kept: an atom on a face
     * (a lattice site, or a halo atom moved by another dimension's edge)
     * may come out a rounding outside. It stays in the bin at its own side,
     * as its coordinates say, rather than wrapping to the far side. */
    if (c->wrap[k] && !c->tri) {
        b %= c->nb[k];
        if (b < 0)
            b += c->nb[k];
    } else if (b < 0) {
        b = 0;
    } else if (b >= c->nb[k]) {
        b = c->nb[k] - 1;
    }
    return b;
}

/* The bins along each dimension for bins at least `width` wide: c->nb,
 * c->lo, c->inv, c->wrap. Returns their product. */
static int64_t hxi_bin_layout(hxi_md_cells *c, const hx_decomp *d, double width, int reach,
                              const double *x, int n)
{
    int64_t nbins = 1;
    for (int k = 0; k < 3; k++) {
        double lo, len;
        int nb;
        if (d->grid[k] == 1) {
            lo = d->triclinic ? d->face_lo[k] : d->box_lo[k];
            len = d->triclinic ? d->height[k] : d->box_len[k];
            nb = (int) floor(len / width);
            if (nb < 2 * reach + 1)
                nb = 1;
            c->wrap[k] = nb > 1;
        } else {
            double hi = -INFINITY;
            lo = INFINITY;
            for (int i = 0; i < n; i++) {
                double v = hxi_bin_coord(c, k, x + 3 * (size_t) i);
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
            if (n == 0) {
                lo = d->dom_lo[k];
                hi = d->dom_hi[k];
            }
            len = hi - lo;
            nb = len > width ? (int) floor(len / width) : 1;
            if (len <= 0)
                len = 1; /* all atoms on one plane: one bin */
            c->wrap[k] = 0;
        }
        if (nb < 1)
            nb = 1;
        if (nb > 1 << 20)
            nb = 1 << 20;
        c->nb[k] = nb;
        c->lo[k] = lo;
        c->inv[k] = nb / len;
        nbins *= nb;
    }
    return nbins;
}

hx_status hxi_md_cells_build(hxi_md_cells *c, const hx_decomp *d, double cut, int reach,
                             const double *x, int n)
{
    /* Bins are never needed by the billion: a tiny cutoff (lj/cut 1e-5
     * with no skin) would ask for that many over a few atoms. Past 64 a
     * rank's atom (and 2^20) they are made wider, which the stencil
     * allows (wider bins reach farther); the usual ones stay as they are. */
    const int64_t most = 64 * (int64_t) n > (1 << 20) ? 64 * (int64_t) n : (1 << 20);
    const int64_t limit = most < INT32_MAX / 2 ? most : INT32_MAX / 2;
    double width = cut / reach;
    int64_t nbins;
    c->tri = d->triclinic;
    memcpy(c->normal, d->normal, sizeof c->normal);
    nbins = hxi_bin_layout(c, d, width, reach, x, n);
    for (int tries = 0; nbins > limit && tries < 64; tries++) {
        width *= 1.01 * cbrt((double) nbins / (double) limit);
        nbins = hxi_bin_layout(c, d, width, reach, x, n);
    }
    if (nbins > INT32_MAX / 2)
        return hxi_error(HX_ERR_NOMEM,
                         "neighbour search needs %lld bins: the atoms are spread "
                         "too far (check for atoms far outside their domain)",
                         (long long) nbins);
    c->nbins = (int) nbins;
    if (c->nbins + 1 > c->cap_bins) {
        HXI_CHECK(
            hxi_grow((void **) &c->start, (size_t) (c->nbins + 1) * sizeof(int), "neighbour bins"));
        c->cap_bins = c->nbins + 1;
    }
    if (n > c->cap_atoms) {
        int cap = n + n / 4 + 16;
        HXI_CHECK(hxi_grow((void **) &c->atoms, (size_t) cap * sizeof(int), "binned atoms"));
        HXI_CHECK(hxi_grow((void **) &c->bin, (size_t) cap * sizeof(int), "atom bins"));
        HXI_CHECK(hxi_grow((void **) &c->slot, (size_t) cap * sizeof(int), "atom bins"));
        HXI_CHECK(
            hxi_grow((void **) &c->xs, (size_t) cap * 3 * sizeof(double), "binned coordinates"));
        c->cap_atoms = cap;
    }

    /* Counting sort: stable, so atoms of a bin stay in ascending order. */
    memset(c->start, 0, (size_t) (c->nbins + 1) * sizeof(int));
    for (int i = 0; i < n; i++) {
        const double *p = x + 3 * (size_t) i;
        int b = hxi_bin_index(c, 0, hxi_bin_coord(c, 0, p)) +
                c->nb[0] * (hxi_bin_index(c, 1, hxi_bin_coord(c, 1, p)) +
                            c->nb[1] * hxi_bin_index(c, 2, hxi_bin_coord(c, 2, p)));
        c->bin[i] = b;
        c->start[b + 1]++;
    }
    for (int b = 0; b < c->nbins; b++)
        c->start[b + 1] += c->start[b];
    for (int i = 0; i < n; i++) {
        int q = c->start[c->bin[i]]++;
        c->atoms[q] = i;
        c->slot[i] = q;
        memcpy(c->xs + 3 * (size_t) q, x + 3 * (size_t) i, 3 * sizeof(double));
    }
    for (int b = c->nbins; b > 0; b--)
        c->start[b] = c->start[b - 1];
    c->start[0] = 0;
    return HX_OK;
}
