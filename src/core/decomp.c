/*
 * decomp.c - the periodic box, the rank grid and one rank's view of it.
 * Pure C: no communication.
 */
#include "core/hxi.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char hxi_dim_name[3] = {'x', 'y', 'z'};

hx_status hx_grid_parse(const char *text, int grid[3])
{
    const char *p = text;
    int g[3];
    if (!text)
        return hxi_error(HX_ERR_PARSE, "no grid given: write it as NXxNYxNZ, e.g. 2x2x1");
    for (int d = 0; d < 3; d++) {
        char *end;
        long v;
        if (!isdigit((unsigned char) *p))
            goto bad;
        v = strtol(p, &end, 10);
        if (v < 1 || v > 1 << 20)
            goto bad;
        g[d] = (int) v;
        p = end;
        if (d < 2) {
            if (*p != 'x' && *p != 'X')
                goto bad;
            p++;
        }
    }
    if (*p != '\0')
        goto bad;
    memcpy(grid, g, sizeof g);
    return HX_OK;
bad:
    return hxi_error(HX_ERR_PARSE,
                     "cannot read grid \"%s\": write it as NXxNYxNZ with positive whole "
                     "numbers, e.g. 2x2x1",
                     text);
}

/* Why a cutoff cannot work with this box, or HX_OK. */
static hx_status hxi_check_box_cutoff(const double box_len[3], double cutoff)
{
    for (int d = 0; d < 3; d++)
        if (!(box_len[d] > 0) || !isfinite(box_len[d]))
            return hxi_error(HX_ERR_BOX,
                             "box length along %c is %g: every box length must be a "
                             "positive finite number",
                             hxi_dim_name[d], box_len[d]);
    if (!(cutoff > 0) || !isfinite(cutoff))
        return hxi_error(HX_ERR_CUTOFF,
                         "halo cutoff is %g: it must be a positive finite number (pair "
                         "cutoff plus skin)",
                         cutoff);
    for (int d = 0; d < 3; d++)
        if (cutoff >= 0.5 * box_len[d])
            return hxi_error(HX_ERR_CUTOFF_TOO_LARGE,
                             "halo cutoff %g is not below half the box length along %c "
                             "(%g / 2 = %g): use a larger box, or a smaller cutoff or skin",
                             cutoff, hxi_dim_name[d], box_len[d], 0.5 * box_len[d]);
    return HX_OK;
}

static int hxi_pulses(double len, int n, double cutoff)
{
    return n > 1 ? (int) ceil(cutoff / (len / n)) : 0;
}

/* Volume of the halo a rank holds: its domain grown by the cutoff towards
 * the upper neighbours along each decomposed dimension, less the domain. */
static double hxi_halo_volume(const double box_len[3], double cutoff, const int g[3])
{
    double home = 1, grown = 1;
    for (int d = 0; d < 3; d++) {
        double w = box_len[d] / g[d];
        home *= w;
        grown *= w + (g[d] > 1 ? cutoff : 0);
    }
    return grown - home;
}

/* The smallest-halo grid of nranks whose dimension d is fixed[d] where
 * that is > 0 (0: free). */
static hx_status hxi_grid_choose_fixed(int nranks, const double box_len[3], double cutoff,
                                       const int fixed[3], int grid[3])
{
    double best = INFINITY;
    int found = 0;
    long fixed_product = 1;
    if (nranks < 1)
        return hxi_error(HX_ERR_INVALID, "rank count %d: need at least one rank", nranks);
    HXI_CHECK(hxi_check_box_cutoff(box_len, cutoff));
    for (int d = 0; d < 3; d++)
        fixed_product *= fixed[d] > 0 ? fixed[d] : 1;
    if (nranks % fixed_product != 0)
        return hxi_error(HX_ERR_GRID,
                         "grid %dx%dx%d (0: to be chosen) cannot hold %d ranks: the counts "
                         "given multiply to %ld, which must divide the rank count",
                         fixed[0], fixed[1], fixed[2], nranks, fixed_product);
    for (int nx = 1; nx <= nranks; nx++) {
        if (nranks % nx)
            continue;
        for (int ny = 1; ny <= nranks / nx; ny++) {
            int g[3], npulses = 0, fits = 1;
            double v;
            if ((nranks / nx) % ny)
                continue;
            g[0] = nx;
            g[1] = ny;
            g[2] = nranks / nx / ny;
            for (int d = 0; d < 3; d++) {
                npulses += hxi_pulses(box_len[d], g[d], cutoff);
                fits &= fixed[d] <= 0 || g[d] == fixed[d];
            }
            if (!fits || npulses > HX_MAX_PULSES)
                continue;
            v = hxi_halo_volume(box_len, cutoff, g);
            if (v < best * (1 - 1e-12)) {
                best = v;
                memcpy(grid, g, sizeof g);
                found = 1;
            }
        }
    }
    if (!found)
        return hxi_error(HX_ERR_GRID,
                         "no grid of %d ranks%s keeps the pulse count within %d for this box "
                         "and cutoff: use fewer ranks or a larger box",
                         nranks,
                         fixed[0] > 0 || fixed[1] > 0 || fixed[2] > 0
                             ? " with the dimensions given (0 or * for the others)"
                             : "",
                         HX_MAX_PULSES);
    return HX_OK;
}

hx_status hx_grid_choose(int nranks, const double box_len[3], double cutoff, int grid[3])
{
    const int free3[3] = {0, 0, 0};
    return hxi_grid_choose_fixed(nranks, box_len, cutoff, free3, grid);
}

int hx_decomp_rank_at(const hx_decomp *d, const int coord[3])
{
    int c[3];
    for (int k = 0; k < 3; k++)
        c[k] = ((coord[k] % d->grid[k]) + d->grid[k]) % d->grid[k];
    return c[0] + d->grid[0] * (c[1] + d->grid[1] * c[2]);
}

int hx_decomp_cell(const hx_decomp *d, int dim, double x)
{
    int n = d->grid[dim];
    double lo = d->box_lo[dim], len = d->box_len[dim];
    double s = (x - lo) / len * n;
    int c;
    if (!(s >= 0)) /* also NaN */
        return 0;
    c = s >= n ? n - 1 : (int) floor(s);
    /* The quotient can land one cell off next to a bound; the bounds are
     * what hx_decomp_init computes (lo + len * c / n), so that a point
     * always lies inside the domain of the cell it is given. */
    if (c > 0 && x < lo + len * c / n)
        c--;
    else if (c < n - 1 && x >= lo + len * (c + 1) / n)
        c++;
    return c;
}

int hx_decomp_owner(const hx_decomp *d, const double x[3])
{
    int c[3];
    for (int k = 0; k < 3; k++)
        c[k] = hx_decomp_cell(d, k, x[k]);
    return hx_decomp_rank_at(d, c);
}

hx_status hx_decomp_init(hx_decomp *d, const double box_lo[3], const double box_len[3],
                         double cutoff, const int grid[3], int nranks, int rank)
{
    hx_decomp r;
    int npulses = 0;
    memset(&r, 0, sizeof r);
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return hxi_error(HX_ERR_INVALID, "rank %d of %d: need 0 <= rank < ranks", rank, nranks);
    for (int k = 0; k < 3; k++)
        if (!isfinite(box_lo[k]))
            return hxi_error(HX_ERR_BOX, "box origin along %c is %g: it must be finite",
                             hxi_dim_name[k], box_lo[k]);
    HXI_CHECK(hxi_check_box_cutoff(box_len, cutoff));
    for (int k = 0; grid && k < 3; k++)
        if (grid[k] < 0)
            return hxi_error(HX_ERR_GRID,
                             "grid %dx%dx%d has a dimension below 0: give each dimension's "
                             "domains, or 0 to have it chosen",
                             grid[0], grid[1], grid[2]);
    if (!grid || grid[0] == 0 || grid[1] == 0 || grid[2] == 0) {
        const int free3[3] = {0, 0, 0};
        HXI_CHECK(hxi_grid_choose_fixed(nranks, box_len, cutoff, grid ? grid : free3, r.grid));
    } else {
        if ((long) grid[0] * grid[1] * grid[2] != nranks)
            return hxi_error(HX_ERR_GRID,
                             "grid %dx%dx%d has %ld domains but there are %d ranks: give a "
                             "grid whose product is %d, or none to have one chosen",
                             grid[0], grid[1], grid[2], (long) grid[0] * grid[1] * grid[2], nranks,
                             nranks);
        memcpy(r.grid, grid, sizeof r.grid);
    }
    memcpy(r.box_lo, box_lo, sizeof r.box_lo);
    memcpy(r.box_len, box_len, sizeof r.box_len);
    r.cutoff = cutoff;
    r.nranks = nranks;
    r.rank = rank;
    r.coord[0] = rank % r.grid[0];
    r.coord[1] = (rank / r.grid[0]) % r.grid[1];
    r.coord[2] = rank / (r.grid[0] * r.grid[1]);
    for (int k = 0; k < 3; k++) {
        int c[3];
        r.dom_lo[k] = box_lo[k] + box_len[k] * r.coord[k] / r.grid[k];
        /* The last domain ends exactly at the box edge (len * n / n need
         * not round back to len), so that the bounds tile the box. */
        r.dom_hi[k] = r.coord[k] == r.grid[k] - 1
                          ? box_lo[k] + box_len[k]
                          : box_lo[k] + box_len[k] * (r.coord[k] + 1) / r.grid[k];
        memcpy(c, r.coord, sizeof c);
        c[k] = r.coord[k] + 1;
        r.up[k] = hx_decomp_rank_at(&r, c);
        c[k] = r.coord[k] - 1;
        r.down[k] = hx_decomp_rank_at(&r, c);
        r.npulse[k] = hxi_pulses(box_len[k], r.grid[k], cutoff);
        npulses += r.npulse[k];
    }
    if (npulses > HX_MAX_PULSES)
        return hxi_error(HX_ERR_UNSUPPORTED,
                         "grid %dx%dx%d with cutoff %g needs %d pulses, more than the %d a "
                         "plan holds: use fewer domains along the long dimension",
                         r.grid[0], r.grid[1], r.grid[2], cutoff, npulses, HX_MAX_PULSES);
    *d = r;
    return HX_OK;
}
