/*
 * neighbor.c - half neighbour lists of one rank, from the cell bins.
 *
 * Each pair is listed once, under one of its two atoms, and only if the zone rule
 * gives it to this rank (hx_zone_pair; docs/design.md "Decomposition and zones"),
 * so that summed over all ranks every pair of the system within the cutoff
 * appears exactly once and Newton's third law applies to home and halo atoms
 * alike. Home-home pairs go to the local list and all others (at least one
 * halo atom) to the non-local list, so the force pass can time them apart
 * (and a GPU engine could overlap the non-local part with the halo exchange).
 *
 * newton off (a full-shell plan): the local list as above; the non-local
 * list holds, in the row of each home atom, every halo atom within the
 * cutoff, searched over the whole stencil (both halves, the second for
 * halo atoms alone); no zones are read and no halo atom has a row. Each
 * pair across a boundary is then listed on both of its ranks.
 *
 * Distances: coordinates as they are along decomposed dimensions (halo
 * atoms arrive shifted into this rank's frame), the minimum image along
 * dimensions with grid 1. With the cutoff under half the box, at most one
 * image of a pair is within it.
 */
#include "md/cpu/md_cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void hxi_md_nlist_free(hxi_md_nlist *l)
{
    free(l->start);
    free(l->atom);
    free(l->wrap);
    free(l->spill);
    free(l->j);
    memset(l, 0, sizeof *l);
}

void hxi_md_pbc_init(hxi_md_pbc *b, const hx_decomp *d)
{
    memset(b, 0, sizeof *b);
    b->tri = d->triclinic;
    memcpy(b->normal, d->normal, sizeof b->normal);
    memcpy(b->edge, d->edge, sizeof b->edge);
    for (int k = 0; k < 3; k++) {
        const double h = d->triclinic ? d->height[k] : d->box_len[k];
        b->len[k] = d->box_len[k];
        b->half[k] = d->grid[k] == 1 ? 0.5 * h : INFINITY;
    }
}

/* Room for `rows` rows, none written yet. */
static hx_status hxi_rows(hxi_md_nlist *l, int rows)
{
    if (rows + 1 > l->cap_rows) {
        int cap = rows + rows / 4 + 16;
        HXI_CHECK(hxi_grow((void **) &l->start, (size_t) cap * sizeof(int), "neighbour rows"));
        HXI_CHECK(hxi_grow((void **) &l->wrap, (size_t) cap * sizeof(int), "neighbour rows"));
        HXI_CHECK(hxi_grow((void **) &l->atom, (size_t) cap * sizeof(int), "neighbour rows"));
        l->cap_rows = cap;
    }
    l->rows = 0;
    l->start[0] = 0;
    return HX_OK;
}

static hx_status hxi_room(hxi_md_nlist *l, size_t need)
{
    size_t cap;
    if (need <= l->cap_j)
        return HX_OK;
    if (need > (size_t) INT32_MAX)
        return hxi_error(HX_ERR_OVERFLOW,
                         "neighbour list of %zu pairs on one rank exceeds 32-bit indices: use "
                         "more ranks",
                         need);
    cap = need + need / 2 + 1024;
    HXI_CHECK(hxi_grow((void **) &l->j, cap * sizeof(int), "neighbour list"));
    l->cap_j = cap;
    return HX_OK;
}

/* Room for one row's image pairs. */
static hx_status hxi_spill_room(hxi_md_nlist *l, size_t need)
{
    if (need <= l->cap_spill)
        return HX_OK;
    HXI_CHECK(hxi_grow((void **) &l->spill, (need + 256) * sizeof(int), "neighbour row"));
    l->cap_spill = need + 256;
    return HX_OK;
}

/* Ends the row of atom i: its image pairs after the others. */
static void hxi_row_end(hxi_md_nlist *l, int i, size_t *n, size_t nspill)
{
    const int r = l->rows++;
    l->atom[r] = i;
    l->wrap[r] = (int) *n;
    /* A row without image pairs (every row, where the cutoff is tiny)
     * may meet a spill and a list never allocated: no copy from NULL. */
    if (nspill > 0)
        memcpy(l->j + *n, l->spill, nspill * sizeof(int));
    *n += nspill;
    l->start[r + 1] = (int) *n;
}

/* Bins half the cutoff wide: an atom's partners lie in the 5 x 5 x 5 bins
 * around its own, and the bins checked hold about 15.6 cut^3 of space
 * against 27 cut^3 for bins as wide as the cutoff. */
#define HXI_REACH       2
#define HXI_SPAN        (2 * HXI_REACH + 1)
#define HXI_MAX_STENCIL ((HXI_SPAN * HXI_SPAN * HXI_SPAN - 1) / 2)

/* The half stencil: the offsets in [-R, R]^3 that come after (0, 0, 0) in
 * z-major order, less those whose bins are too far apart to hold a pair
 * within the cutoff. A pair of atoms in different bins is met from the
 * bin whose offset to the other is in this set; in one bin, from the lower
 * index. With at least 2R + 1 bins along a wrapping dimension (or no wrap)
 * the offsets name distinct bins, so every pair is met exactly once. */
static int hxi_stencil(const hxi_md_cells *c, double cut, int off[][3])
{
    int n = 0;
    for (int z = -HXI_REACH; z <= HXI_REACH; z++)
        for (int y = -HXI_REACH; y <= HXI_REACH; y++)
            for (int x = -HXI_REACH; x <= HXI_REACH; x++) {
                const int o[3] = {x, y, z};
                double gap2 = 0.0;
                if (z < 0 || (z == 0 && (y < 0 || (y == 0 && x <= 0))))
                    continue;
                for (int k = 0; k < 3; k++) {
                    int a = o[k] < 0 ? -o[k] : o[k];
                    double g = a > 1 ? (a - 1) / c->inv[k] : 0.0;
                    /* Bins by heights (triclinic): only one gap bounds
                     * the distance. */
                    gap2 = c->tri ? fmax(gap2, g * g) : gap2 + g * g;
                }
                if (gap2 >= cut * cut)
                    continue;
                off[n][0] = x, off[n][1] = y, off[n][2] = z;
                n++;
            }
    return n;
}

/* Zone offsets as 3 bits, one per dimension with a nonzero offset: a
 * pair is this rank's iff the two masks share no bit (hx_zone_pair). */
static unsigned hxi_zone_bits(const uint8_t *z)
{
    return (unsigned) (z[0] != 0) | (unsigned) (z[1] != 0) << 1 | (unsigned) (z[2] != 0) << 2;
}

#define HXI_SEARCH_CHUNK 64

/* The partners among candidates [g0, g1) of the gathered set (coordinates
 * in separate arrays, already moved to their image nearest the bin): the
 * distances a chunk at a time in one loop the compiler vectorises, then
 * the partners within the cutoff (and of this rank by their zones, mi
 * being the atom's zone bits) appended to out[*n ..] without a branch
 * (about one candidate in four is taken, which a branch would mispredict). */
static void hxi_take(const hxi_md_cells *c, int g0, int g1, const double *xi, double cut2,
                     unsigned mi, int *out, size_t *n)
{
    const double *cx = c->cand, *cy = c->cand + c->cap_cand,
                 *cz = c->cand + 2 * (size_t) c->cap_cand;
    double r2[HXI_SEARCH_CHUNK];
    size_t a = *n;
    for (int q0 = g0; q0 < g1; q0 += HXI_SEARCH_CHUNK) {
        const int m = g1 - q0 < HXI_SEARCH_CHUNK ? g1 - q0 : HXI_SEARCH_CHUNK;
        for (int k = 0; k < m; k++) {
            const double dx = xi[0] - cx[q0 + k], dy = xi[1] - cy[q0 + k], dz = xi[2] - cz[q0 + k];
            r2[k] = dx * dx + dy * dy + dz * dz;
        }
        for (int k = 0; k < m; k++) {
            out[a] = c->cand_j[q0 + k];
            a += (size_t) ((r2[k] < cut2) & ((c->cand_zm[q0 + k] & mi) == 0));
        }
    }
    *n = a;
}

/* The same for atoms p0 .. p1 of the atom's own bin (no image). */
static void hxi_take_own(const hxi_md_cells *c, const uint8_t *zmask, int p0, int p1,
                         const double *xi, double cut2, unsigned mi, int *out, size_t *n)
{
    size_t a = *n;
    for (int p = p0; p < p1; p++) {
        const double *xj = c->xs + 3 * (size_t) p;
        const double dx = xi[0] - xj[0], dy = xi[1] - xj[1], dz = xi[2] - xj[2];
        out[a] = c->atoms[p];
        a += (size_t) ((dx * dx + dy * dy + dz * dz < cut2) & ((zmask[p] & mi) == 0));
    }
    *n = a;
}

/* Gathers the atoms of bins[1 .. nbins) (bin b's stencil, its own bin
 * left out) into c->cand, each moved by its bin's shift, in six groups:
 * group[g] .. group[g+1] for g = 2 image + halo for the half stencil's
 * bins[1 .. nfwd) (image: the bin wrapped across a periodic face; halo:
 * the atom is not a home atom), and g = 4 + image for the halo atoms of
 * the other half's bins[nfwd .. nbins) (newton off only; none else). */
static hx_status hxi_gather(hxi_md_cells *c, const int *split, const int *bins, double (*shift)[3],
                            int nbins, int nfwd, int group[7])
{
    int count[6] = {0, 0, 0, 0, 0, 0}, pos[6];
    for (int q = 1; q < nbins; q++) {
        const int img = shift[q][0] != 0.0 || shift[q][1] != 0.0 || shift[q][2] != 0.0;
        const int halo = c->start[bins[q] + 1] - split[bins[q]];
        if (q >= nfwd) {
            count[4 + img] += halo;
            continue;
        }
        count[2 * img] += split[bins[q]] - c->start[bins[q]];
        count[2 * img + 1] += halo;
    }
    group[0] = 0;
    for (int g = 0; g < 6; g++)
        group[g + 1] = group[g] + count[g];
    if (group[6] > c->cap_cand) {
        int cap = group[6] + group[6] / 2 + 64;
        HXI_CHECK(hxi_grow((void **) &c->cand, (size_t) cap * 3 * sizeof(double),
                           "neighbour candidates"));
        HXI_CHECK(
            hxi_grow((void **) &c->cand_j, (size_t) cap * sizeof(int), "neighbour candidates"));
        HXI_CHECK(hxi_grow((void **) &c->cand_zm, (size_t) cap, "neighbour candidates"));
        c->cap_cand = cap;
    }
    for (int g = 0; g < 6; g++)
        pos[g] = group[g];
    for (int q = 1; q < nbins; q++) {
        const int img = shift[q][0] != 0.0 || shift[q][1] != 0.0 || shift[q][2] != 0.0;
        const int back = q >= nfwd;
        for (int p = back ? split[bins[q]] : c->start[bins[q]]; p < c->start[bins[q] + 1]; p++) {
            const int g = back ? 4 + img : 2 * img + (p >= split[bins[q]]);
            const double *xj = c->xs + 3 * (size_t) p;
            const int t = pos[g]++;
            c->cand[t] = xj[0] - shift[q][0];
            c->cand[c->cap_cand + t] = xj[1] - shift[q][1];
            c->cand[2 * (size_t) c->cap_cand + t] = xj[2] - shift[q][2];
            c->cand_j[t] = c->atoms[p];
            c->cand_zm[t] = c->zmask[p];
        }
    }
    return HX_OK;
}

/* As hxi_take for a whole stencil bin, with the minimum image taken pair by
 * pair along the periodic dimensions (half[k] is +inf along the others);
 * for boxes whose bins collapsed into one along some periodic dimension. */
static void hxi_search_min_image(const hxi_md_pbc *pbc, const double half[3], const hxi_md_cells *c,
                                 int p0, int end, const double *xi, double cut2, int i, int pi,
                                 int nhome, const uint8_t *zmask, hxi_md_nlist *local,
                                 hxi_md_nlist *nonlocal, size_t *nl, size_t *nn, size_t *sl,
                                 size_t *sn)
{
    const unsigned mi = zmask[pi];
    for (int p = p0; p < end; p++) {
        const int j = c->atoms[p];
        const double *xj = c->xs + 3 * (size_t) p;
        double d[3] = {xi[0] - xj[0], xi[1] - xj[1], xi[2] - xj[2]};
        int image = 0;
        if (pbc->tri)
            image = hxi_md_image_tri(pbc, d);
        for (int k = 0; k < 3 && !pbc->tri; k++) {
            if (d[k] > half[k])
                d[k] -= pbc->len[k], image = 1;
            else if (d[k] < -half[k])
                d[k] += pbc->len[k], image = 1;
        }
        if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] >= cut2 || (zmask[p] & mi) != 0)
            continue;
        if (i < nhome && j < nhome) {
            if (image)
                local->spill[(*sl)++] = j;
            else
                local->j[(*nl)++] = j;
        } else if (image) {
            nonlocal->spill[(*sn)++] = j;
        } else {
            nonlocal->j[(*nn)++] = j;
        }
    }
}

/* Each atom's zone bits (cells->zmask, in bin order; all 0 for newton
 * off, full, whose halo pairs come by the rows of home atoms alone) and
 * where each bin's home atoms end (cells->split: they come first, as atoms
 * ascend). */
static hx_status hxi_bin_masks(hxi_md_cells *cells, const uint8_t *zones, int full, int nhome,
                               int ntotal)
{
    if (ntotal > cells->cap_zmask) {
        HXI_CHECK(hxi_grow((void **) &cells->zmask, (size_t) cells->cap_atoms, "atom zones"));
        cells->cap_zmask = cells->cap_atoms;
    }
    uint8_t *zmask = cells->zmask;
    for (int p = 0; p < ntotal; p++)
        zmask[p] = full ? 0 : (uint8_t) hxi_zone_bits(zones + 4 * (size_t) cells->atoms[p]);
    if (cells->nbins > cells->cap_split) {
        HXI_CHECK(hxi_grow((void **) &cells->split, (size_t) cells->cap_bins * sizeof(int),
                           "neighbour bins"));
        cells->cap_split = cells->cap_bins;
    }
    int *split = cells->split;
    for (int b = 0; b < cells->nbins; b++) {
        int p = cells->start[b];
        while (p < cells->start[b + 1] && cells->atoms[p] < nhome)
            p++;
        split[b] = p;
    }
    return HX_OK;
}

/* The bins bin b searches, after bins[0 .. nbins) (bins[0] is b itself):
 * those of the stencil offsets that exist, each with the shift that
 * brings its atoms to the image nearest bin b (across a periodic face) and
 * its first atom. Returns how many there are then. */
static int hxi_stencil_bins(const hxi_md_cells *cells, const hxi_md_pbc *pbc, int (*off)[3],
                            int noff, int b, int nbins, int *bins, int *first, double (*shift)[3])
{
    const int bxyz[3] = {b % cells->nb[0], (b / cells->nb[0]) % cells->nb[1],
                         b / (cells->nb[0] * cells->nb[1])};
    for (int o = 0; o < noff; o++) {
        int t[3], ok = 1;
        double w[3] = {0.0, 0.0, 0.0}; /* the edges crossed along each dimension */
        for (int k = 0; k < 3 && ok; k++) {
            t[k] = bxyz[k] + off[o][k];
            if (cells->wrap[k]) {
                if (t[k] < 0) {
                    t[k] += cells->nb[k];
                    w[k] = 1.0;
                } else if (t[k] >= cells->nb[k]) {
                    t[k] -= cells->nb[k];
                    w[k] = -1.0;
                }
            } else {
                ok = t[k] >= 0 && t[k] < cells->nb[k];
            }
        }
        if (!ok)
            continue;
        /* A wrap along k crosses edge k: (len, 0, 0) and its like when
         * orthorhombic, where the sum is exactly the old per-axis shift. */
        for (int k = 0; k < 3; k++)
            shift[nbins][k] =
                pbc->tri ? w[0] * pbc->edge[0][k] + w[1] * pbc->edge[1][k] + w[2] * pbc->edge[2][k]
                         : w[k] * pbc->len[k];
        bins[nbins] = t[0] + cells->nb[0] * (t[1] + cells->nb[1] * t[2]);
        first[nbins] = cells->start[bins[nbins]];
        nbins++;
    }
    return nbins;
}

/* The other half's bins, bins[nfwd .. nbins), for newton off: those with
 * halo atoms alone are kept, each from its first halo atom. Returns how
 * many bins there are then. */
static int hxi_halo_bins(const hxi_md_cells *cells, int nfwd, int nbins, int *bins, int *first,
                         double (*shift)[3])
{
    int n = nfwd;
    for (int q = nfwd; q < nbins; q++) {
        const int b = bins[q];
        if (cells->split[b] == cells->start[b + 1])
            continue;
        bins[n] = b;
        first[n] = cells->split[b];
        memcpy(shift[n], shift[q], sizeof shift[n]);
        n++;
    }
    return n;
}

hx_status hxi_md_neigh_build(hxi_md_nlist *local, hxi_md_nlist *nonlocal, hxi_md_cells *cells,
                             const hx_decomp *d, double cut, const double *x, const uint8_t *zones,
                             int full, int nhome, int ntotal)
{
    const double cut2 = cut * cut;
    hxi_md_pbc pbc;
    size_t nl = 0, nn = 0;
    int off[2 * HXI_MAX_STENCIL][3], noff, per_pair = 0, nfwd;
    int bins[2 * HXI_MAX_STENCIL + 1], first[2 * HXI_MAX_STENCIL + 1], nbins;
    int group[7] = {0, 0, 0, 0, 0, 0, 0};
    double shift[2 * HXI_MAX_STENCIL + 1][3], mi_half[3];
    uint8_t *zmask;
    int *split;

    hxi_md_pbc_init(&pbc, d);
    HXI_CHECK(hxi_md_cells_build(cells, d, cut, HXI_REACH, x, ntotal));
    noff = hxi_stencil(cells, cut, off);
    /* newton off: the other half of the stencil too, searched for halo
     * atoms alone (a home atom's halo partners are all in its own row). */
    for (int o = 0; full && o < noff; o++)
        for (int k = 0; k < 3; k++)
            off[noff + o][k] = -off[o][k];
    HXI_CHECK(hxi_bin_masks(cells, zones, full, nhome, ntotal));
    zmask = cells->zmask;
    split = cells->split;
    /* A periodic dimension whose bins collapsed into one (a box under
     * five half-cutoff bins along it): then the minimum image is taken pair
     * by pair along every periodic dimension, and the bins' shifts are not
     * used; otherwise a bin's wrap gives the image. */
    for (int k = 0; k < 3; k++)
        per_pair |= d->grid[k] == 1 && !cells->wrap[k];
    for (int k = 0; k < 3; k++)
        mi_half[k] = pbc.half[k];
    HXI_CHECK(hxi_rows(local, nhome));
    HXI_CHECK(hxi_rows(nonlocal, ntotal));
    local->one_sided = 0;
    nonlocal->one_sided = full;
    /* A first guess of the list sizes; grown below when it falls short. */
    HXI_CHECK(hxi_room(local, (size_t) nhome * 48 + 64));
    HXI_CHECK(hxi_room(nonlocal, (size_t) (ntotal - nhome) * 48 + 64));

    /* Bin by bin: the bins to search, each with the shift that brings its
     * atoms to the image nearest this bin's, then a row for each atom. */
    for (int b = 0; b < cells->nbins; b++) {
        if (cells->start[b] == cells->start[b + 1])
            continue;
        bins[0] = b;
        shift[0][0] = shift[0][1] = shift[0][2] = 0.0;
        nfwd = hxi_stencil_bins(cells, &pbc, off, noff, b, 1, bins, first, shift);
        nbins = full ? hxi_stencil_bins(cells, &pbc, off + noff, noff, b, nfwd, bins, first, shift)
                     : nfwd;
        nbins = hxi_halo_bins(cells, nfwd, nbins, bins, first, shift);
        if (!per_pair)
            HXI_CHECK(hxi_gather(cells, split, bins, shift, nbins, nfwd, group));
        for (int pi = cells->start[b]; pi < cells->start[b + 1]; pi++) {
            const int i = cells->atoms[pi];
            const double *xi = cells->xs + 3 * (size_t) pi;
            const int own_end = cells->start[b + 1];
            size_t most = 0, sl = 0, sn = 0;
            /* newton off: rows of home atoms alone (they come first). */
            if (full && i >= nhome)
                break;
            first[0] = pi + 1; /* in its own bin, the atoms after it */
            /* Room for every candidate at once, so the search only appends. */
            for (int q = 0; q < nbins; q++)
                most += (size_t) (cells->start[bins[q] + 1] - first[q]);
            HXI_CHECK(hxi_room(local, nl + most));
            HXI_CHECK(hxi_room(nonlocal, nn + most));
            HXI_CHECK(hxi_spill_room(local, most));
            HXI_CHECK(hxi_spill_room(nonlocal, most));
            if (per_pair) {
                for (int q = 0; q < nbins; q++)
                    hxi_search_min_image(&pbc, mi_half, cells, first[q], cells->start[bins[q] + 1],
                                         xi, cut2, i, pi, nhome, zmask, local, nonlocal, &nl, &nn,
                                         &sl, &sn);
            } else if (i < nhome) {
                const int mid = split[b] > pi + 1 ? split[b] : pi + 1;
                hxi_take_own(cells, zmask, pi + 1, mid, xi, cut2, 0u, local->j, &nl);
                hxi_take_own(cells, zmask, mid, own_end, xi, cut2, 0u, nonlocal->j, &nn);
                hxi_take(cells, group[0], group[1], xi, cut2, 0u, local->j, &nl);
                hxi_take(cells, group[1], group[2], xi, cut2, 0u, nonlocal->j, &nn);
                hxi_take(cells, group[4], group[5], xi, cut2, 0u, nonlocal->j, &nn);
                hxi_take(cells, group[2], group[3], xi, cut2, 0u, local->spill, &sl);
                hxi_take(cells, group[3], group[4], xi, cut2, 0u, nonlocal->spill, &sn);
                hxi_take(cells, group[5], group[6], xi, cut2, 0u, nonlocal->spill, &sn);
            } else {
                const unsigned mi = zmask[pi];
                hxi_take_own(cells, zmask, pi + 1, own_end, xi, cut2, mi, nonlocal->j, &nn);
                hxi_take(cells, group[0], group[2], xi, cut2, mi, nonlocal->j, &nn);
                hxi_take(cells, group[2], group[4], xi, cut2, mi, nonlocal->spill, &sn);
            }
            if (i < nhome)
                hxi_row_end(local, i, &nl, sl);
            hxi_row_end(nonlocal, i, &nn, sn);
        }
    }
    return HX_OK;
}

/* The minimum image of d along the dimensions with grid 1 (b->half is +inf
 * along the others), as the force loop takes it for a row's image pairs. */
static double hxi_image(double d, double half, double len)
{
    if (d > half)
        return d - len;
    return d < -half ? d + len : d;
}

int64_t hxi_md_nlist_within(const hxi_md_nlist *l, const hxi_md_pbc *b, double cut, const double *x)
{
    const double cut2 = cut * cut;
    int64_t n = 0;
    for (int r = 0; r < l->rows; r++) {
        const double *xi = x + 3 * (size_t) l->atom[r];
        for (int q = l->start[r]; q < l->start[r + 1]; q++) {
            const double *xj = x + 3 * (size_t) l->j[q];
            double d[3] = {xi[0] - xj[0], xi[1] - xj[1], xi[2] - xj[2]};
            if (q >= l->wrap[r] && b->tri)
                hxi_md_image_tri(b, d);
            else if (q >= l->wrap[r])
                for (int k = 0; k < 3; k++)
                    d[k] = hxi_image(d[k], b->half[k], b->len[k]);
            n += d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < cut2;
        }
    }
    return n;
}
