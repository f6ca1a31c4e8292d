/*
 * test_decomp: the pure decomposition layer, seen from every rank of many
 * grids at once (no communication needed): grid text, rank <-> grid
 * position, neighbours, domain bounds that tile the box without gaps, pulse
 * counts, point ownership (also exactly on domain boundaries and outside the
 * box), and the grid choice.
 */
#include "sysgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void check_grid_parse(void)
{
    static const struct {
        const char *text;
        int g[3];
    } good[] = {{"2x2x1", {2, 2, 1}},
                {"1x1x1", {1, 1, 1}},
                {"1x3x1", {1, 3, 1}},
                {"12x1x4", {12, 1, 4}},
                {"4x2x1", {4, 2, 1}}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int g[3] = {-7, -7, -7};
        if (HXT_OK(hx_grid_parse(good[i].text, g)))
            HXT_CHECK(g[0] == good[i].g[0] && g[1] == good[i].g[1] && g[2] == good[i].g[2],
                      "\"%s\" parsed as %dx%dx%d", good[i].text, g[0], g[1], g[2]);
    }
}

/* Checks every rank's view of one decomposition. */
static void check_decomp(const double lo[3], const double len[3], double rh, const int grid[3],
                         hxt_rng *rng)
{
    int nr = grid[0] * grid[1] * grid[2];
    char gs[32];
    hxt_grid_str(grid, gs);
    hx_decomp *all = calloc((size_t) nr, sizeof(hx_decomp));
    int *at = malloc((size_t) nr * sizeof(int));
    for (int r = 0; r < nr; r++)
        at[r] = -1;
    /* Bounds of each grid position along each dimension, for the tiling. */
    double *blo[3], *bhi[3];
    for (int k = 0; k < 3; k++) {
        blo[k] = malloc((size_t) grid[k] * sizeof(double));
        bhi[k] = malloc((size_t) grid[k] * sizeof(double));
    }
    for (int r = 0; r < nr; r++) {
        hx_decomp *d = &all[r];
        if (!HXT_OK(hx_decomp_init(d, lo, len, rh, grid, nr, r)))
            goto done;
        HXT_CHECK(d->rank == r && d->nranks == nr && d->cutoff == rh,
                  "%s rank %d: rank %d nranks %d cutoff %g", gs, r, d->rank, d->nranks, d->cutoff);
        int cin = 1;
        for (int k = 0; k < 3; k++) {
            cin &= d->grid[k] == grid[k] && d->coord[k] >= 0 && d->coord[k] < grid[k] &&
                   d->box_lo[k] == lo[k] && d->box_len[k] == len[k];
        }
        HXT_CHECK(cin, "%s rank %d: grid, coordinates or box wrong", gs, r);
        if (!cin)
            goto done;
        HXT_CHECK(hx_decomp_rank_at(d, d->coord) == r, "%s: rank_at(coord of %d) = %d", gs, r,
                  hx_decomp_rank_at(d, d->coord));
        int lin = d->coord[0] + grid[0] * (d->coord[1] + grid[1] * d->coord[2]);
        HXT_CHECK(at[lin] < 0, "%s: ranks %d and %d share a grid position", gs, at[lin], r);
        at[lin] = r;
        for (int k = 0; k < 3; k++) {
            int c[3] = {d->coord[0], d->coord[1], d->coord[2]};
            c[k] = d->coord[k] + 1;
            int up = hx_decomp_rank_at(d, c);
            c[k] = d->coord[k] - 1;
            int down = hx_decomp_rank_at(d, c);
            HXT_CHECK(d->up[k] == up && d->down[k] == down,
                      "%s rank %d dim %d: up %d down %d, rank_at says %d %d", gs, r, k, d->up[k],
                      d->down[k], up, down);
            if (grid[k] == 1)
                HXT_CHECK(d->up[k] == r && d->down[k] == r, "%s: own neighbour along %d", gs, k);
            /* Coordinates taken modulo the grid. */
            c[k] = d->coord[k] + 3 * grid[k];
            HXT_CHECK(hx_decomp_rank_at(d, c) == r, "%s: rank_at does not wrap +", gs);
            c[k] = d->coord[k] - 2 * grid[k];
            HXT_CHECK(hx_decomp_rank_at(d, c) == r, "%s: rank_at does not wrap -", gs);
            double w = len[k] / grid[k];
            int np = grid[k] == 1 ? 0 : (int) ceil(rh / w);
            HXT_CHECK(d->npulse[k] == np, "%s rh %g dim %d: %d pulses, want %d", gs, rh, k,
                      d->npulse[k], np);
            HXT_CHECK(fabs(d->dom_lo[k] - (lo[k] + w * d->coord[k])) <= 1e-12 * len[k] &&
                          fabs(d->dom_hi[k] - d->dom_lo[k] - w) <= 1e-12 * len[k],
                      "%s rank %d dim %d: domain [%.17g, %.17g)", gs, r, k, d->dom_lo[k],
                      d->dom_hi[k]);
            blo[k][d->coord[k]] = d->dom_lo[k];
            bhi[k][d->coord[k]] = d->dom_hi[k];
        }
    }
    /* The domains tile the box: exact ends, no gap or overlap between
     * neighbours (the same double), and every rank agrees (checked through
     * ranks sharing a coordinate). */
    for (int k = 0; k < 3; k++) {
        HXT_CHECK(blo[k][0] == lo[k], "%s dim %d: first domain starts at %.17g, box at %.17g", gs,
                  k, blo[k][0], lo[k]);
        HXT_CHECK(bhi[k][grid[k] - 1] == lo[k] + len[k],
                  "%s dim %d: last domain ends at %.17g, box at %.17g", gs, k, bhi[k][grid[k] - 1],
                  lo[k] + len[k]);
        for (int c = 0; c + 1 < grid[k]; c++)
            HXT_CHECK(hxt_same_d(bhi[k][c], blo[k][c + 1]),
                      "%s dim %d: domain %d ends at %.17g, %d starts at %.17g", gs, k, c, bhi[k][c],
                      c + 1, blo[k][c + 1]);
        for (int r = 0; r < nr; r++)
            HXT_CHECK(hxt_same_d(all[r].dom_lo[k], blo[k][all[r].coord[k]]) &&
                          hxt_same_d(all[r].dom_hi[k], bhi[k][all[r].coord[k]]),
                      "%s dim %d: ranks disagree on the bounds of %d", gs, k, all[r].coord[k]);
    }
    /* Ownership of random points and of points exactly on boundaries, seen
     * from every rank's decomp (all must agree). */
    int nbad = 0, ncell = 0;
    for (int t = 0; t < 400; t++) {
        double p[3];
        for (int k = 0; k < 3; k++) {
            int c = (int) (hxt_uniform(rng) * grid[k]);
            switch (t % 4) {
            case 0:
                p[k] = lo[k] + len[k] * hxt_uniform(rng);
                break;
            case 1:
                p[k] = blo[k][c];
                break; /* a lower bound */
            case 2:
                p[k] = nextafter(bhi[k][c], -INFINITY);
                break; /* just below an upper */
            default:
                p[k] = t & 8 ? blo[k][c] : lo[k] + len[k] * hxt_uniform(rng);
            }
        }
        int cell[3];
        for (int k = 0; k < 3; k++) {
            cell[k] = hx_decomp_cell(&all[0], k, p[k]);
            if (cell[k] < 0 || cell[k] >= grid[k] ||
                !(blo[k][cell[k]] <= p[k] && p[k] < bhi[k][cell[k]])) {
                if (ncell++ < 3)
                    fprintf(stderr, "%s dim %d: %.17g put in cell %d\n", gs, k, p[k], cell[k]);
                cell[k] = 0;
            }
        }
        int own = hx_decomp_rank_at(&all[0], cell);
        for (int r = 0; r < nr; r++)
            nbad += hx_decomp_owner(&all[r], p) != own;
    }
    HXT_CHECK(ncell == 0, "%s: %d points in a cell whose bounds do not hold them", gs, ncell);
    HXT_CHECK(nbad == 0, "%s: %d ownership answers differ from the cells", gs, nbad);
    /* Points outside the box are clamped into the grid. */
    for (int k = 0; k < 3; k++) {
        HXT_CHECK(hx_decomp_cell(&all[0], k, lo[k] - 0.25 * len[k]) == 0 &&
                      hx_decomp_cell(&all[0], k, lo[k] + len[k]) == grid[k] - 1 &&
                      hx_decomp_cell(&all[0], k, lo[k] + 7 * len[k]) == grid[k] - 1,
                  "%s dim %d: cells outside the box not clamped", gs, k);
    }
done:
    for (int k = 0; k < 3; k++) {
        free(blo[k]);
        free(bhi[k]);
    }
    free(all);
    free(at);
}

/* The halo a rank holds (its domain grown by the cutoff towards the upper
 * neighbours along each decomposed dimension, less the domain), computed
 * here for every grid of n ranks: the chosen one must be the smallest. */
static double halo_volume(const double box[3], double rh, const int g[3])
{
    double home = 1, grown = 1;
    for (int k = 0; k < 3; k++) {
        home *= box[k] / g[k];
        grown *= box[k] / g[k] + (g[k] > 1 ? rh : 0);
    }
    return grown - home;
}

static int check_min_volume(int n, const double box[3], double rh, const int g[3])
{
    double best = INFINITY;
    int bg[3] = {0, 0, 0};
    for (int a = 1; a <= n; a++)
        for (int b = 1; a * b <= n; b++) {
            if (n % (a * b))
                continue;
            int t[3] = {a, b, n / (a * b)}, np = 0;
            for (int k = 0; k < 3; k++)
                np += t[k] > 1 ? (int) ceil(rh * t[k] / box[k]) : 0;
            double v = halo_volume(box, rh, t);
            if (np <= HX_MAX_PULSES && v < best) {
                best = v;
                memcpy(bg, t, sizeof bg);
            }
        }
    double v = halo_volume(box, rh, g);
    int ok = v <= best * (1 + 1e-9);
    HXT_CHECK(ok, "%d ranks, box %g %g %g, cutoff %g: chose %dx%dx%d (halo %g), %dx%dx%d has %g", n,
              box[0], box[1], box[2], rh, g[0], g[1], g[2], v, bg[0], bg[1], bg[2], best);
    return ok;
}

static void check_choose(hxt_rng *rng)
{
    int g[3];
    const double cube[3] = {20.0, 20.0, 20.0};
    /* A cube: the halo volume of 2x2x2 (12.8^3 - 10^3 = 1097) is larger
     * than that of 4x2x1 and its permutations (7.8 * 12.8 * 20 - 10^3 =
     * 997): equal faces, but 2x2x2 has three edges of length 10 where 4x2x1
     * has one of length 20. So the smallest-volume rule gives a 4x2x1 kind,
     * never 8x1x1 (1120) or 2x2x2. */
    if (HXT_OK(hx_grid_choose(8, cube, 2.8, g))) {
        int s[3] = {g[0], g[1], g[2]};
        for (int a = 0; a < 2; a++)
            for (int b = a + 1; b < 3; b++)
                if (s[b] < s[a]) {
                    int t = s[a];
                    s[a] = s[b];
                    s[b] = t;
                }
        HXT_CHECK(s[0] == 1 && s[1] == 2 && s[2] == 4, "cube, 8 ranks: %dx%dx%d", g[0], g[1], g[2]);
        check_min_volume(8, cube, 2.8, g);
    }
    if (HXT_OK(hx_grid_choose(1, cube, 2.8, g)))
        HXT_CHECK(g[0] == 1 && g[1] == 1 && g[2] == 1, "1 rank: %dx%dx%d", g[0], g[1], g[2]);
    /* An elongated box: the long dimension gets the most domains. */
    for (int k = 0; k < 3; k++) {
        double box[3] = {10.0, 10.0, 10.0};
        box[k] = 40.0;
        if (HXT_OK(hx_grid_choose(4, box, 2.0, g)))
            HXT_CHECK(g[k] == 4, "box long along %d, 4 ranks: %dx%dx%d", k, g[0], g[1], g[2]);
        if (HXT_OK(hx_grid_choose(8, box, 2.0, g)))
            HXT_CHECK(g[k] >= 4 && g[0] * g[1] * g[2] == 8, "box long along %d, 8 ranks: %dx%dx%d",
                      k, g[0], g[1], g[2]);
        if (HXT_OK(hx_grid_choose(2, box, 2.0, g)))
            HXT_CHECK(g[k] == 2, "box long along %d, 2 ranks: %dx%dx%d", k, g[0], g[1], g[2]);
    }
    /* Random boxes, cutoffs and rank counts: a chosen grid always has the
     * right product, passes hx_decomp_init (so keeps every cutoff rule), fits
     * the pulse list, and is what hx_decomp_init picks on its own. */
    int nbad = 0, nrun = 0;
    for (int t = 0; t < 300; t++) {
        double box[3];
        for (int k = 0; k < 3; k++)
            box[k] = 6.0 + 30.0 * hxt_uniform(rng);
        double mn = fmin(box[0], fmin(box[1], box[2]));
        double rh = 0.5 + (0.5 * mn - 0.6) * hxt_uniform(rng);
        int n = 1 + (int) (hxt_uniform(rng) * 16);
        if (hx_grid_choose(n, box, rh, g) != HX_OK) {
            if (nbad++ < 3)
                fprintf(stderr, "choose(%d, %g %g %g, %g) failed: %s\n", n, box[0], box[1], box[2],
                        rh, hx_last_error());
            continue;
        }
        nrun++;
        hx_decomp d, d0, dz;
        const double lo[3] = {0, 0, 0};
        const int zero[3] = {0, 0, 0};
        int ok = g[0] >= 1 && g[1] >= 1 && g[2] >= 1 && g[0] * g[1] * g[2] == n &&
                 hx_decomp_init(&d, lo, box, rh, g, n, n - 1) == HX_OK &&
                 d.npulse[0] + d.npulse[1] + d.npulse[2] <= HX_MAX_PULSES &&
                 hx_decomp_init(&d0, lo, box, rh, NULL, n, n - 1) == HX_OK &&
                 hx_decomp_init(&dz, lo, box, rh, zero, n, n - 1) == HX_OK &&
                 memcmp(d0.grid, g, sizeof g) == 0 && memcmp(dz.grid, g, sizeof g) == 0;
        for (int k = 0; k < 3; k++)
            ok &= g[k] == 1 || rh < 0.5 * box[k];
        if (ok)
            ok = check_min_volume(n, box, rh, g);
        if (!ok && nbad++ < 3)
            fprintf(stderr, "choose(%d, %g %g %g, %g) gave %dx%dx%d: not usable (%s)\n", n, box[0],
                    box[1], box[2], rh, g[0], g[1], g[2], hx_last_error());
    }
    HXT_CHECK(nbad == 0, "%d of 300 grid choices failed or were unusable", nbad);
    HXT_CHECK(nrun > 0, "no grid choice ran");
}

/* Grids with some counts given and the others 0 (LAMMPS's `processors
 * * * 2`): the given ones kept, the rest chosen as the smallest halo among
 * the grids that keep them; counts that cannot multiply to the ranks, and a
 * negative count, refused. */
static void check_partial_grids(void)
{
    const double lo[3] = {0, 0, 0}, box[3] = {40.0, 10.0, 10.0};
    static const struct {
        int given[3], n, want[3];
    } ok[] = {
        {{0, 0, 2}, 4, {2, 1, 2}}, /* x is long: the free ranks go there */
        {{0, 2, 0}, 8, {4, 2, 1}},
        {{1, 0, 0}, 4, {1, 1, 4}}, /* slabs along z: a smaller halo than 2x2 */
        {{3, 0, 1}, 6, {3, 2, 1}},
        {{2, 2, 2}, 8, {2, 2, 2}},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        hx_decomp d;
        if (HXT_OK(hx_decomp_init(&d, lo, box, 2.0, ok[i].given, ok[i].n, 0)))
            HXT_CHECK(memcmp(d.grid, ok[i].want, sizeof d.grid) == 0,
                      "grid %dx%dx%d of %d ranks: %dx%dx%d, want %dx%dx%d", ok[i].given[0],
                      ok[i].given[1], ok[i].given[2], ok[i].n, d.grid[0], d.grid[1], d.grid[2],
                      ok[i].want[0], ok[i].want[1], ok[i].want[2]);
    }
    hx_decomp d;
    const int two_z[3] = {0, 0, 2}, negative[3] = {-1, 0, 1};
    HXT_FAILS(hx_decomp_init(&d, lo, box, 2.0, two_z, 3, 0), HX_ERR_GRID,
              "multiply to 2, which must divide the rank count");
    HXT_FAILS(hx_decomp_init(&d, lo, box, 2.0, negative, 2, 0), HX_ERR_GRID, "below 0");
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_decomp");
    check_partial_grids();
    hxt_rng rng = {12345};
    check_grid_parse();

    static const double boxes[][2][3] = {
        {{0.0, 0.0, 0.0}, {13.5, 11.25, 12.75}},
        {{-3.7, 1.1, 1e3}, {10.3, 17.9, 12.1}}, /* lengths not exact in binary */
        {{5.0, -5.0, 0.1}, {30.0, 9.0, 9.5}},
    };
    static const int grids[][3] = {{1, 1, 1}, {2, 1, 1}, {1, 3, 1}, {2, 2, 1}, {1, 2, 3}, {2, 2, 2},
                                   {4, 2, 1}, {6, 1, 1}, {1, 1, 8}, {3, 5, 2}, {7, 1, 3}};
    static const double rhs[] = {0.7, 2.8, 4.3};
    for (size_t b = 0; b < sizeof boxes / sizeof boxes[0]; b++)
        for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++)
            for (size_t ri = 0; ri < sizeof rhs / sizeof rhs[0]; ri++)
                check_decomp(boxes[b][0], boxes[b][1], rhs[ri], grids[gi], &rng);
    check_choose(&rng);
    return hxt_finish(comm);
}
