/*
 * neighbor.c - half neighbour lists of one rank, from the cell bins.
 *
 * Each pair is listed once, under one of its two atoms, and only if the zone rule
 * gives it to this rank (hx_zone_pair; DESIGN.md "Decomposition and zones"),
 * so that summed over all ranks every pair of the system within the cutoff
 * appears exactly once and Newton's third law applies to home and halo atoms
 * alike. Home-home pairs go to the local list and all others (at least one
 * halo atom) to the non-local list, so the force pass can time them apart
 * (and a GPU engine could overlap the non-local part with the halo exchange).
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
    free(l->j);
    memset(l, 0, sizeof *l);
}

void hxi_md_pbc_init(hxi_md_pbc *b, const hx_decomp *d)
{
    for (int k = 0; k < 3; k++) {
        b->len[k] = d->box_len[k];
        b->half[k] = d->grid[k] == 1 ? 0.5 * d->box_len[k] : INFINITY;
    }
}

static hx_status hxi_rows(hxi_md_nlist *l, int rows)
{
    if (rows + 1 > l->cap_rows) {
        int cap = rows + rows / 4 + 16;
        HXI_CHECK(hxi_grow((void **) &l->start, (size_t) cap * sizeof(int), "neighbour rows"));
        l->cap_rows = cap;
    }
    l->rows = rows;
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

/* The 13 offsets (dx, dy, dz) in {-1, 0, 1}^3 that come after (0, 0, 0) in
 * z-major order: with the bin itself, a half stencil. A pair of atoms in
 * different bins is met from the bin whose offset to the other is in this
 * set; in one bin, from the lower index. With at least 3 bins along a
 * wrapping dimension (or no wrap) the offsets name distinct bins, so every
 * pair is met exactly once. */
static const int hxi_half_stencil[13][3] = {
    {1, 0, 0},  {-1, 1, 0}, {0, 1, 0}, {1, 1, 0},  {-1, -1, 1}, {0, -1, 1}, {1, -1, 1},
    {-1, 0, 1}, {0, 0, 1},  {1, 0, 1}, {-1, 1, 1}, {0, 1, 1},   {1, 1, 1}};

/* Bin b + o along one dimension, or -1 when it falls off a non-wrapping edge. */
static int hxi_shift_bin(const hxi_md_cells *c, int k, int b, int o)
{
    int t = b + o, nb = c->nb[k];
    if (c->wrap[k])
        return (t + nb) % nb;
    return t < 0 || t >= nb ? -1 : t;
}

hx_status hxi_md_neigh_build(hxi_md_nlist *local, hxi_md_nlist *nonlocal, hxi_md_cells *cells,
                             const hx_decomp *d, double cut, const double *x, const uint8_t *zones,
                             int nhome, int ntotal)
{
    const double cut2 = cut * cut;
    hxi_md_pbc pbc;
    size_t nl = 0, nn = 0;

    hxi_md_pbc_init(&pbc, d);
    HXI_CHECK(hxi_md_cells_build(cells, d, cut, x, ntotal));
    HXI_CHECK(hxi_rows(local, nhome));
    HXI_CHECK(hxi_rows(nonlocal, ntotal));
    /* A first guess of the list sizes; grown below when it falls short. */
    HXI_CHECK(hxi_room(local, (size_t) nhome * 48 + 64));
    HXI_CHECK(hxi_room(nonlocal, (size_t) (ntotal - nhome) * 48 + 64));

    for (int i = 0; i < ntotal; i++) {
        const double *xi = x + 3 * (size_t) i;
        const uint8_t *zi = zones + 4 * (size_t) i;
        const int b = cells->bin[i];
        const int bxyz[3] = {b % cells->nb[0], (b / cells->nb[0]) % cells->nb[1],
                             b / (cells->nb[0] * cells->nb[1])};
        int bins[14], nbins = 0;
        size_t most = 0;

        bins[nbins++] = b;
        for (int o = 0; o < 13; o++) {
            int t[3], ok = 1;
            for (int k = 0; k < 3 && ok; k++) {
                t[k] = hxi_shift_bin(cells, k, bxyz[k], hxi_half_stencil[o][k]);
                ok = t[k] >= 0;
            }
            if (ok)
                bins[nbins++] = t[0] + cells->nb[0] * (t[1] + cells->nb[1] * t[2]);
        }
        /* Room for every candidate at once, so the loop below only appends. */
        for (int q = 0; q < nbins; q++)
            most += (size_t) (cells->start[bins[q] + 1] - cells->start[bins[q]]);
        HXI_CHECK(hxi_room(local, nl + most));
        HXI_CHECK(hxi_room(nonlocal, nn + most));

        for (int q = 0; q < nbins; q++) {
            for (int p = cells->start[bins[q]]; p < cells->start[bins[q] + 1]; p++) {
                int j = cells->atoms[p];
                const double *xj = cells->xs + 3 * (size_t) p;
                double dx, dy, dz;
                if (q == 0 && j <= i)
                    continue;
                if (i >= nhome && j >= nhome && !hx_zone_pair(zi, zones + 4 * (size_t) j))
                    continue;
                dx = xi[0] - xj[0];
                dy = xi[1] - xj[1];
                dz = xi[2] - xj[2];
                if (dx > pbc.half[0])
                    dx -= pbc.len[0];
                else if (dx < -pbc.half[0])
                    dx += pbc.len[0];
                if (dy > pbc.half[1])
                    dy -= pbc.len[1];
                else if (dy < -pbc.half[1])
                    dy += pbc.len[1];
                if (dz > pbc.half[2])
                    dz -= pbc.len[2];
                else if (dz < -pbc.half[2])
                    dz += pbc.len[2];
                if (dx * dx + dy * dy + dz * dz >= cut2)
                    continue;
                if (i < nhome && j < nhome)
                    local->j[nl++] = j;
                else
                    nonlocal->j[nn++] = j;
            }
        }
        if (i < nhome)
            local->start[i + 1] = (int) nl;
        nonlocal->start[i + 1] = (int) nn;
    }
    return HX_OK;
}
