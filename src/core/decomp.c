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

/* Why a box cannot be, or HX_OK: every length positive and finite. */
static hx_status hxi_check_box(const double box_len[3])
{
    for (int d = 0; d < 3; d++)
        if (!(box_len[d] > 0) || !isfinite(box_len[d]))
            return hxi_error(HX_ERR_BOX,
                             "box length along %c is %g: every box length must be a "
                             "positive finite number",
                             hxi_dim_name[d], box_len[d]);
    return HX_OK;
}

/* Why a cutoff cannot work with these face distances (the box lengths of
 * an orthorhombic box), or HX_OK. */
static hx_status hxi_check_cutoff(const double height[3], double cutoff, int triclinic)
{
    if (!(cutoff > 0) || !isfinite(cutoff))
        return hxi_error(HX_ERR_CUTOFF,
                         "halo cutoff is %g: it must be a positive finite number (pair "
                         "cutoff plus skin)",
                         cutoff);
    for (int d = 0; d < 3; d++)
        if (cutoff >= 0.5 * height[d])
            return hxi_error(
                HX_ERR_CUTOFF_TOO_LARGE,
                "halo cutoff %g is not below half the box %s along %c "
                "(%g / 2 = %g): use a larger box, or a smaller cutoff or skin%s",
                cutoff, triclinic ? "thickness (distance between its faces)" : "length",
                hxi_dim_name[d], height[d], 0.5 * height[d], triclinic ? ", or less tilt" : "");
    return HX_OK;
}

static hx_status hxi_check_box_cutoff(const double box_len[3], double cutoff)
{
    HXI_CHECK(hxi_check_box(box_len));
    return hxi_check_cutoff(box_len, cutoff, 0);
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
 * that is > 0 (0: free). full: for a full-shell plan, whose halo grows by
 * the cutoff towards both neighbours and whose pulses, twice the
 * decomposition's, must fit in HX_MAX_PULSES. */
static hx_status hxi_grid_choose_fixed(int nranks, const double box_len[3], double cutoff,
                                       const int fixed[3], int full, int grid[3])
{
    double best = INFINITY;
    const int max_pulses = full ? HX_MAX_PULSES / 2 : HX_MAX_PULSES;
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
            if (!fits || npulses > max_pulses)
                continue;
            v = hxi_halo_volume(box_len, full ? 2 * cutoff : cutoff, g);
            if (v < best * (1 - 1e-12)) {
                best = v;
                memcpy(grid, g, sizeof g);
                found = 1;
            }
        }
    }
    if (!found)
        return hxi_error(HX_ERR_GRID,
                         "no grid of %d ranks%s keeps the pulse count within %d%s for this "
                         "box and cutoff: use fewer ranks or a larger box",
                         nranks,
                         fixed[0] > 0 || fixed[1] > 0 || fixed[2] > 0
                             ? " with the dimensions given (0 or * for the others)"
                             : "",
                         max_pulses, full ? " per direction (full shell)" : "");
    return HX_OK;
}

hx_status hx_grid_choose(int nranks, const double box_len[3], double cutoff, int grid[3])
{
    const int free3[3] = {0, 0, 0};
    return hxi_grid_choose_fixed(nranks, box_len, cutoff, free3, 0, grid);
}

hx_status hx_grid_choose_full(int nranks, const double box_len[3], double cutoff, int grid[3])
{
    const int free3[3] = {0, 0, 0};
    return hxi_grid_choose_fixed(nranks, box_len, cutoff, free3, 1, grid);
}

int hx_decomp_rank_at(const hx_decomp *d, const int coord[3])
{
    int c[3];
    for (int k = 0; k < 3; k++)
        c[k] = ((coord[k] % d->grid[k]) + d->grid[k]) % d->grid[k];
    return c[0] + d->grid[0] * (c[1] + d->grid[1] * c[2]);
}

double hx_decomp_bound(const hx_decomp *d, int dim, int c)
{
    const int n = d->grid[dim];
    const double lo = d->face_lo[dim], h = d->height[dim];
    if (c <= 0)
        return lo;
    if (c >= n) /* exactly the box face (h * n / n need not round to h) */
        return lo + h;
    return d->cuts_set[dim] ? lo + h * d->cut[dim][c] : lo + h * c / n;
}

/* The cell of height x among set cuts: the last bound at or below x. */
static int hxi_cell_cuts(const hx_decomp *d, int dim, double x)
{
    int a = 0, b = d->grid[dim] - 1;
    while (a < b) {
        int m = (a + b + 1) / 2;
        if (x >= hx_decomp_bound(d, dim, m))
            a = m;
        else
            b = m - 1;
    }
    return a;
}

int hx_decomp_cell(const hx_decomp *d, int dim, double x)
{
    int n = d->grid[dim];
    double lo = d->face_lo[dim], len = d->height[dim];
    double s = (x - lo) / len * n;
    int c;
    if (!(s >= 0)) /* also NaN */
        return 0;
    if (d->cuts_set[dim])
        return hxi_cell_cuts(d, dim, x);
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
        c[k] = hx_decomp_cell(d, k, hx_decomp_height(d, k, x));
    return hx_decomp_rank_at(d, c);
}

/* The box's edge vectors, face normals, face distances and lower face
 * heights. With no tilt they are the unit vectors and the box itself,
 * exactly (no rounding), so that an orthorhombic box decides everything as
 * it always did. Otherwise normal[d] is row d of H^-1 (H's columns the
 * edges a, b, c) normalised, and height[d] is 1 / |row d|. */
static void hxi_box_geometry(hx_decomp *r)
{
    const double lx = r->box_len[0], ly = r->box_len[1], lz = r->box_len[2];
    const double xy = r->tilt[0], xz = r->tilt[1], yz = r->tilt[2];
    const double e[3][3] = {{lx, 0, 0}, {xy, ly, 0}, {xz, yz, lz}};
    memcpy(r->edge, e, sizeof e);
    memset(r->normal, 0, sizeof r->normal);
    if (!r->triclinic) {
        for (int k = 0; k < 3; k++) {
            r->normal[k][k] = 1.0;
            r->height[k] = r->box_len[k];
            r->face_lo[k] = r->box_lo[k];
        }
        return;
    }
    const double row[3][3] = {{1 / lx, -xy / (lx * ly), (xy * yz - ly * xz) / (lx * ly * lz)},
                              {0, 1 / ly, -yz / (ly * lz)},
                              {0, 0, 1 / lz}};
    for (int k = 0; k < 3; k++) {
        double len = sqrt(row[k][0] * row[k][0] + row[k][1] * row[k][1] + row[k][2] * row[k][2]);
        for (int c = 0; c < 3; c++)
            r->normal[k][c] = row[k][c] / len;
        r->height[k] = k == 2 ? lz : 1 / len;
        r->face_lo[k] = hx_decomp_height(r, k, r->box_lo);
    }
}

/* LAMMPS's tilt limits: |xy| and |xz| at most lx / 2, |yz| at most ly / 2. */
static hx_status hxi_check_tilt(const double box_len[3], const double tilt[3])
{
    static const char *name[3] = {"xy", "xz", "yz"};
    const int along[3] = {0, 0, 1};
    for (int k = 0; k < 3; k++) {
        double lim = 0.5 * box_len[along[k]];
        if (!isfinite(tilt[k]) || fabs(tilt[k]) > lim)
            return hxi_error(HX_ERR_BOX,
                             "tilt %s = %g is beyond LAMMPS's limit of half the box length "
                             "along %c (|%s| <= %g): give an equivalent box with less tilt "
                             "(subtract a multiple of l%c)",
                             name[k], tilt[k], hxi_dim_name[along[k]], name[k], lim,
                             hxi_dim_name[along[k]]);
    }
    return HX_OK;
}

/* The grid of r: given whole, or partly or wholly chosen for r's face
 * distances. */
static hx_status hxi_decomp_grid(hx_decomp *r, const int grid[3], int nranks)
{
    for (int k = 0; grid && k < 3; k++)
        if (grid[k] < 0)
            return hxi_error(HX_ERR_GRID,
                             "grid %dx%dx%d has a dimension below 0: give each dimension's "
                             "domains, or 0 to have it chosen",
                             grid[0], grid[1], grid[2]);
    if (!grid || grid[0] == 0 || grid[1] == 0 || grid[2] == 0) {
        const int free3[3] = {0, 0, 0};
        return hxi_grid_choose_fixed(nranks, r->height, r->cutoff, grid ? grid : free3, 0, r->grid);
    }
    if ((long) grid[0] * grid[1] * grid[2] != nranks)
        return hxi_error(HX_ERR_GRID,
                         "grid %dx%dx%d has %ld domains but there are %d ranks: give a "
                         "grid whose product is %d, or none to have one chosen",
                         grid[0], grid[1], grid[2], (long) grid[0] * grid[1] * grid[2], nranks,
                         nranks);
    memcpy(r->grid, grid, sizeof r->grid);
    return HX_OK;
}

/* Pulses along dim for set cuts: for each domain, the fewest domains
 * above it whose widths together exceed the cutoff (its halo lies within
 * them), the most over the domains; or -1 - c where domain c's halo
 * reaches round the box into domain c itself. Counted from below, the most
 * is the same (the runs of consecutive domains are the same runs), so a
 * full-shell plan, which imports from both sides, is served by it too
 * (test_nonuniform checks full-shell plans on random cuts). */
static int hxi_pulses_cuts(const hx_decomp *r, int dim)
{
    const int n = r->grid[dim];
    int most = 0;
    for (int c = 0; c < n; c++) {
        const double top = hx_decomp_bound(r, dim, c + 1);
        double reach = 0;
        int m = 0;
        while (!(reach > r->cutoff)) {
            int j = c + 1 + m;
            if (m == n - 1)
                return -1 - c;
            reach = j < n ? hx_decomp_bound(r, dim, j + 1) - top
                          : hx_decomp_bound(r, dim, n) - top + hx_decomp_bound(r, dim, j + 1 - n) -
                                hx_decomp_bound(r, dim, 0);
            m++;
        }
        most = m > most ? m : most;
    }
    return most;
}

/* The domain bounds and pulse counts of r from its grid, coord and cuts;
 * HX_ERR_CUTOFF_TOO_LARGE where set cuts leave a domain too thin. */
static hx_status hxi_decomp_domains(hx_decomp *r)
{
    int npulses = 0;
    for (int k = 0; k < 3; k++) {
        r->dom_lo[k] = hx_decomp_bound(r, k, r->coord[k]);
        r->dom_hi[k] = hx_decomp_bound(r, k, r->coord[k] + 1);
        if (!r->cuts_set[k] || r->grid[k] == 1) {
            r->npulse[k] = hxi_pulses(r->height[k], r->grid[k], r->cutoff);
        } else {
            int m = hxi_pulses_cuts(r, k);
            if (m < 0)
                return hxi_error(
                    HX_ERR_CUTOFF_TOO_LARGE,
                    "cuts along %c leave the domains other than %d (of %d) %g thick together, "
                    "not more than the halo cutoff %g: the halo above domain %d would reach "
                    "round the box into itself; make it thinner or its neighbours thicker",
                    hxi_dim_name[k], -1 - m, r->grid[k],
                    r->height[k] - (hx_decomp_bound(r, k, -m) - hx_decomp_bound(r, k, -1 - m)),
                    r->cutoff, -1 - m);
            r->npulse[k] = m;
        }
        npulses += r->npulse[k];
    }
    if (npulses > HX_MAX_PULSES)
        return hxi_error(r->cuts_set[0] || r->cuts_set[1] || r->cuts_set[2]
                             ? HX_ERR_CUTOFF_TOO_LARGE
                             : HX_ERR_UNSUPPORTED,
                         "grid %dx%dx%d with cutoff %g needs %d pulses (%d, %d, %d along x, y, "
                         "z), more than the %d a plan holds: use fewer domains along the long "
                         "dimension%s",
                         r->grid[0], r->grid[1], r->grid[2], r->cutoff, npulses, r->npulse[0],
                         r->npulse[1], r->npulse[2], HX_MAX_PULSES,
                         r->cuts_set[0] || r->cuts_set[1] || r->cuts_set[2]
                             ? ", or cuts whose thinnest domains are thicker"
                             : "");
    return HX_OK;
}

/* Why cuts cannot be the cuts along dim of d, or HX_OK. */
static hx_status hxi_check_cuts(const hx_decomp *d, int dim, const double *cuts)
{
    const int n = d->grid[dim];
    if (n > HX_MAX_CUT_DOMAINS)
        return hxi_error(HX_ERR_INVALID,
                         "cuts along %c: the grid has %d domains there, more than the %d whose "
                         "cuts can be set; use fewer domains along %c",
                         hxi_dim_name[dim], n, HX_MAX_CUT_DOMAINS, hxi_dim_name[dim]);
    if (cuts[0] != 0.0 || cuts[n] != 1.0)
        return hxi_error(HX_ERR_INVALID,
                         "cuts along %c run from %g to %g: the first must be 0 and the last "
                         "(entry %d) 1",
                         hxi_dim_name[dim], cuts[0], cuts[n], n);
    for (int c = 0; c < n; c++)
        if (!(cuts[c + 1] > cuts[c]) || !isfinite(cuts[c + 1]))
            return hxi_error(HX_ERR_INVALID,
                             "cuts along %c are not increasing: entry %d is %.17g after %.17g; "
                             "give %d + 1 increasing fractions from 0 to 1",
                             hxi_dim_name[dim], c + 1, cuts[c + 1], cuts[c], n);
    return HX_OK;
}

hx_status hx_decomp_set_cuts(hx_decomp *d, int dim, const double *cuts)
{
    hx_decomp r;
    if (!d || dim < HX_X || dim > HX_Z)
        return hxi_error(HX_ERR_INVALID,
                         "set cuts: give a decomposition and a dimension 0, 1 or 2 (not %d)", dim);
    r = *d;
    if (cuts) {
        HXI_CHECK(hxi_check_cuts(&r, dim, cuts));
        memset(r.cut[dim], 0, sizeof r.cut[dim]);
        memcpy(r.cut[dim], cuts, (size_t) (r.grid[dim] + 1) * sizeof(double));
    } else {
        memset(r.cut[dim], 0, sizeof r.cut[dim]);
    }
    r.cuts_set[dim] = cuts != NULL;
    for (int c = 0; c < r.grid[dim]; c++)
        if (!(hx_decomp_bound(&r, dim, c + 1) > hx_decomp_bound(&r, dim, c)))
            return hxi_error(HX_ERR_CUTOFF_TOO_LARGE,
                             "cuts along %c leave domain %d without thickness (%.17g to %.17g "
                             "of the box rounds to nothing): make it thicker",
                             hxi_dim_name[dim], c, cuts[c], cuts[c + 1]);
    HXI_CHECK(hxi_decomp_domains(&r));
    *d = r;
    return HX_OK;
}

hx_status hx_decomp_init_tilted(hx_decomp *d, const double box_lo[3], const double box_len[3],
                                const double tilt[3], double cutoff, const int grid[3], int nranks,
                                int rank)
{
    hx_decomp r;
    memset(&r, 0, sizeof r);
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return hxi_error(HX_ERR_INVALID, "rank %d of %d: need 0 <= rank < ranks", rank, nranks);
    for (int k = 0; k < 3; k++)
        if (!isfinite(box_lo[k]))
            return hxi_error(HX_ERR_BOX, "box origin along %c is %g: it must be finite",
                             hxi_dim_name[k], box_lo[k]);
    HXI_CHECK(hxi_check_box(box_len));
    if (tilt) {
        HXI_CHECK(hxi_check_tilt(box_len, tilt));
        memcpy(r.tilt, tilt, sizeof r.tilt);
        r.triclinic = tilt[0] != 0 || tilt[1] != 0 || tilt[2] != 0;
    }
    memcpy(r.box_lo, box_lo, sizeof r.box_lo);
    memcpy(r.box_len, box_len, sizeof r.box_len);
    hxi_box_geometry(&r);
    HXI_CHECK(hxi_check_cutoff(r.height, cutoff, r.triclinic));
    r.cutoff = cutoff;
    HXI_CHECK(hxi_decomp_grid(&r, grid, nranks));
    r.nranks = nranks;
    r.rank = rank;
    r.coord[0] = rank % r.grid[0];
    r.coord[1] = (rank / r.grid[0]) % r.grid[1];
    r.coord[2] = rank / (r.grid[0] * r.grid[1]);
    for (int k = 0; k < 3; k++) {
        int c[3];
        memcpy(c, r.coord, sizeof c);
        c[k] = r.coord[k] + 1;
        r.up[k] = hx_decomp_rank_at(&r, c);
        c[k] = r.coord[k] - 1;
        r.down[k] = hx_decomp_rank_at(&r, c);
    }
    HXI_CHECK(hxi_decomp_domains(&r));
    *d = r;
    return HX_OK;
}

hx_status hx_decomp_init(hx_decomp *d, const double box_lo[3], const double box_len[3],
                         double cutoff, const int grid[3], int nranks, int rank)
{
    return hx_decomp_init_tilted(d, box_lo, box_len, NULL, cutoff, grid, nranks, rank);
}
