/*
 * neighbor.c - half neighbour lists of one rank, from the cell bins.
 *
 * Each pair is listed once, under its lower index, and only if the zone rule
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
#include "md/md_cpu.h"

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
        HXI_CHECK(hxi_grow((void **)&l->start, (size_t)cap * sizeof(int), "neighbour rows"));
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
    if (need > (size_t)INT32_MAX)
        return hxi_error(HX_ERR_OVERFLOW,
                         "neighbour list of %zu pairs on one rank exceeds 32-bit indices: use "
                         "more ranks",
                         need);
    cap = need + need / 2 + 1024;
    HXI_CHECK(hxi_grow((void **)&l->j, cap * sizeof(int), "neighbour list"));
    l->cap_j = cap;
    return HX_OK;
}

/* The bins around bin (bx, by, bz) along one dimension: up to 3, distinct. */
static int hxi_stencil_1d(const hxi_md_cells *c, int k, int b, int out[3])
{
    int n = 0, nb = c->nb[k];
    if (nb == 1) {
        out[0] = 0;
        return 1;
    }
    for (int o = -1; o <= 1; o++) {
        int t = b + o;
        if (c->wrap[k])
            t = (t + nb) % nb;
        else if (t < 0 || t >= nb)
            continue;
        out[n++] = t;
    }
    return n;
}

hx_status hxi_md_neigh_build(hxi_md_nlist *local, hxi_md_nlist *nonlocal, hxi_md_cells *cells,
                             const hx_decomp *d, double cut, const double *x,
                             const uint8_t *zones, int nhome, int ntotal)
{
    const double cut2 = cut * cut;
    hxi_md_pbc pbc;
    size_t nl = 0, nn = 0;

    hxi_md_pbc_init(&pbc, d);
    HXI_CHECK(hxi_md_cells_build(cells, d, cut, x, ntotal));
    HXI_CHECK(hxi_rows(local, nhome));
    HXI_CHECK(hxi_rows(nonlocal, ntotal));
    /* A first guess of the list sizes; grown below when it falls short. */
    HXI_CHECK(hxi_room(local, (size_t)nhome * 48 + 64));
    HXI_CHECK(hxi_room(nonlocal, (size_t)(ntotal - nhome) * 48 + 64));

    for (int i = 0; i < ntotal; i++) {
        const double *xi = x + 3 * (size_t)i;
        const uint8_t *zi = zones + 4 * (size_t)i;
        int b = cells->bin[i];
        int bx = b % cells->nb[0], by = (b / cells->nb[0]) % cells->nb[1];
        int bz = b / (cells->nb[0] * cells->nb[1]);
        int sx[3], sy[3], sz[3], nx, ny, nz;
        nx = hxi_stencil_1d(cells, 0, bx, sx);
        ny = hxi_stencil_1d(cells, 1, by, sy);
        nz = hxi_stencil_1d(cells, 2, bz, sz);
        /* At most 27 bins of candidates: make room for all of them once. */
        {
            size_t most = 0;
            for (int c = 0; c < nz; c++)
                for (int bb = 0; bb < ny; bb++)
                    for (int a = 0; a < nx; a++) {
                        int t = sx[a] + cells->nb[0] * (sy[bb] + cells->nb[1] * sz[c]);
                        most += (size_t)(cells->start[t + 1] - cells->start[t]);
                    }
            if (i < nhome)
                HXI_CHECK(hxi_room(local, nl + most));
            HXI_CHECK(hxi_room(nonlocal, nn + most));
        }
        for (int c = 0; c < nz; c++)
            for (int bb = 0; bb < ny; bb++)
                for (int a = 0; a < nx; a++) {
                    int t = sx[a] + cells->nb[0] * (sy[bb] + cells->nb[1] * sz[c]);
                    for (int q = cells->start[t]; q < cells->start[t + 1]; q++) {
                        int j = cells->atoms[q];
                        const double *xj = x + 3 * (size_t)j;
                        double dx, dy, dz;
                        if (j <= i)
                            continue;
                        if (j >= nhome && !hx_zone_pair(zi, zones + 4 * (size_t)j))
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
                        if (j < nhome)
                            local->j[nl++] = j;
                        else
                            nonlocal->j[nn++] = j;
                    }
                }
        if (i < nhome)
            local->start[i + 1] = (int)nl;
        nonlocal->start[i + 1] = (int)nn;
    }
    return HX_OK;
}
