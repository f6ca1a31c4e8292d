/*
 * test_triclinic: halo plans and migration in LAMMPS's restricted
 * triclinic box (hx_decomp_init_tilted), tilts 0, small and at LAMMPS's
 * limits, on every grid of the rank count from a fixed list (1 to 4 pulses
 * along a dimension).
 *
 *  - Pairs: the zone rule (hx_zone_pair) over all ranks computes every pair
 *    within the cutoff exactly once. Distances use the local coordinates as
 *    they are along decomposed dimensions and the minimum image by heights
 *    along dimensions with one domain; the reference is brute force over
 *    the whole system with the minimum image of the triclinic metric. Each
 *    atom's pair count and a sum of hashes of its partners must match.
 *  - Halo: the cpu transport (double) delivers the plan's own coordinates,
 *    bitwise, and each halo atom is its owner's atom moved by a whole
 *    lattice vector.
 *  - Migration: after random displacements (across the tilted faces and
 *    the periodic boundary), every atom is held exactly once, by the rank
 *    that owns it, inside the box, with its payload, at its displaced
 *    position up to a lattice vector; a plan is then built on it.
 *  - An orthorhombic pack leaves the components off its dimension bit for
 *    bit, -0.0 included.
 *  - Bad input: a tilt beyond its limit, a cutoff too large for a tilted
 *    box's face distance: one clear error each. No tilt: hx_decomp_init's
 *    result, bitwise.
 */
#include "zone_check.h"

#include "core/hxi.h"
#include "core/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double box_lo[3] = {0.5, -2.0, 3.0};
static const double box_len[3] = {12.0, 13.25, 11.5};

/* Grids by rank count; 6 and 8 domains along a dimension give 2 to 4
 * pulses there. */
static const int grids_all[][3] = {{1, 1, 1}, {1, 1, 2}, {2, 1, 1}, {3, 1, 1}, {1, 3, 1},
                                   {1, 2, 2}, {4, 1, 1}, {2, 2, 1}, {1, 4, 1}, {6, 1, 1},
                                   {1, 2, 3}, {2, 2, 2}, {8, 1, 1}, {1, 8, 1}, {1, 1, 8}};

typedef struct tri_tilt {
    const char *name;
    double t[3];
} tri_tilt;

static const tri_tilt tilts[] = {
    {"none", {0, 0, 0}},
    {"small", {0.7, -0.4, 0.9}},
    {"limits", {6.0, -6.0, 6.625}},
    {"limits2", {-6.0, 6.0, -6.625}},
};

/* One case: decomposition, plan, pairs and halo images. */
static void pairs_case(hx_comm *comm, const hx_decomp *d, const double *X, int N, double rc,
                       const char *what)
{
    int *hid = NULL;
    double *hx = NULL;
    hx_plan *plan = NULL;
    int nhome = hxt_take_owned(d, X, N, &hid, &hx);
    if (HXT_OK(hxi_agree(comm, hx_plan_create(&plan, comm, d, nhome, hx)))) {
        int *ids = hxt_forward_ids(comm, plan, hid, what, NULL);
        hxt_check_zone_pairs(comm, plan, ids, X, N, rc, what);
        free(ids);
    }
    hx_plan_destroy(plan);
    free(hid);
    free(hx);
}

/* ---------------------------------------------------------- migration */

/* The migrated atoms gathered by id: each once, owned where held, inside
 * the box, payload intact, at its displaced position up to a lattice
 * vector. Returns the number of violations. */
static int check_migrated(hx_comm *comm, const hx_decomp *d, int n, const int64_t *id,
                          const double *x, const double *pay, const double *want, int N)
{
    int nbad = 0, rank = hx_comm_rank(comm);
    for (int i = 0; i < n; i++) {
        double v[3];
        int ok = id[i] >= 0 && id[i] < N && hx_decomp_owner(d, &x[3 * i]) == rank;
        for (int k = 0; k < 3; k++) {
            double h = hx_decomp_height(d, k, &x[3 * i]);
            ok &= h >= d->face_lo[k] && h < d->face_lo[k] + d->height[k];
            ok &= id[i] >= 0 && id[i] < N && pay[3 * i + k] == hxt_payload((int) id[i], k);
            v[k] = id[i] >= 0 && id[i] < N ? x[3 * i + k] - want[3 * id[i] + k] : NAN;
        }
        nbad += !ok || !hxt_is_lattice(d, v, 1e-9);
    }
    return nbad + hxt_ids_once(comm, id, n, N);
}

/* Random displacements of up to `reach` along each edge (some atoms put on
 * the box's faces and corners), one migration, the checks, then a plan. */
static void migrate_case(hx_comm *comm, const hx_decomp *d, const double *X, int N, double reach,
                         uint64_t seed, const char *what)
{
    int *hid = NULL;
    double *hx = NULL;
    int n = hxt_take_owned(d, X, N, &hid, &hx), cap = n > 0 ? n : 1;
    int64_t *id = hxt_xmalloc((size_t) cap * sizeof(int64_t));
    double *pay = hxt_xmalloc((size_t) cap * 3 * sizeof(double));
    double *want = hxt_xmalloc((size_t) N * 3 * sizeof(double));
    hxt_random_moves(d, X, N, reach, seed, want);
    /* Atoms on the faces and corners: lo + c, lo + a + b + c, lo - tiny. */
    const double s_at[3][3] = {{0, 0, 1}, {1, 1, 1}, {-1e-17, 0.5, -1e-17}};
    for (int e = 0; e < 3 && e < N; e++)
        hxt_frac_to_x(d, s_at[e], &want[3 * e]);
    for (int i = 0; i < n; i++) {
        id[i] = hid[i];
        memcpy(&hx[3 * i], &want[3 * hid[i]], 3 * sizeof(double));
        for (int k = 0; k < 3; k++)
            pay[3 * i + k] = hxt_payload(hid[i], k);
    }
    hx_field f[2] = {{(void **) &id, sizeof(int64_t)}, {(void **) &pay, 3 * sizeof(double)}};
    if (HXT_OK(hx_migrate(comm, d, &n, &cap, &hx, f, 2))) {
        int nbad = check_migrated(comm, d, n, id, hx, pay, want, N);
        HXT_CHECK(nbad == 0, "%s: %d violations after migration", what, nbad);
        hx_plan *plan = NULL;
        HXT_OK(hxi_agree(comm, hx_plan_create(&plan, comm, d, n, hx)));
        hx_plan_destroy(plan);
    }
    free(id);
    free(pay);
    free(want);
    free(hid);
    free(hx);
}

/* The box's geometry against LAMMPS's (face distances 1 / |row d of
 * H^-1|): unit normals, n_e . edge d = h_d when d == e and 0 otherwise,
 * and heights of the corners. */
static void geometry(void)
{
    const double lo[3] = {1, 2, 3}, len[3] = {10, 10, 10}, tilt[3] = {5, 5, 5};
    const double want[3] = {1 / sqrt(0.01 + 0.0025 + 0.000625), 100 / sqrt(125.0), 10};
    const int g[3] = {1, 1, 1};
    hx_decomp d;
    if (!HXT_OK(hx_decomp_init_tilted(&d, lo, len, tilt, 2.0, g, 1, 0)))
        return;
    int bad = 0;
    for (int e = 0; e < 3; e++) {
        const double *n = d.normal[e];
        bad += fabs(n[0] * n[0] + n[1] * n[1] + n[2] * n[2] - 1) > 1e-14;
        bad += fabs(d.height[e] - want[e]) > 1e-12 * want[e];
        for (int k = 0; k < 3; k++) {
            double dot = n[0] * d.edge[k][0] + n[1] * d.edge[k][1] + n[2] * d.edge[k][2];
            bad += fabs(dot - (k == e ? d.height[e] : 0.0)) > 1e-12 * d.height[e];
        }
        bad += fabs(hx_decomp_height(&d, e, lo) - d.face_lo[e]) > 0.0;
    }
    HXT_CHECK(bad == 0, "triclinic geometry: %d values off (h = %.17g %.17g %.17g)", bad,
              d.height[0], d.height[1], d.height[2]);
}

/* An orthorhombic pack is what it was when only the pulse's dimension got
 * its shift: the other components unchanged, bit for bit, -0.0 included;
 * along the dimension, x + 0.0 (so -0.0 becomes +0.0) or x + L. */
static void pack_zero(void)
{
    const int map[1] = {0};
    const double x[3] = {-0.0, -0.0, -0.0};
    const float xf[3] = {-0.0f, -0.0f, -0.0f};
    for (int wrap = 0; wrap < 2; wrap++) {
        hx_pulse p;
        double b[3];
        float bf[3];
        memset(&p, 0, sizeof p);
        p.dim = HX_Y;
        p.nsend = 1;
        p.map = map;
        p.shift[1] = wrap ? 13.25 : 0.0;
        hxi_pulse_pack_double(&p, x, b);
        hxi_pulse_pack_float(&p, xf, bf);
        HXT_CHECK(hxt_same_d(b[0], -0.0) && hxt_same_d(b[2], -0.0) &&
                      hxt_same_d(b[1], wrap ? 13.25 : 0.0) && hxt_same_f(bf[0], -0.0f) &&
                      hxt_same_f(bf[2], -0.0f) && hxt_same_f(bf[1], wrap ? 13.25f : 0.0f),
                  "pack of -0.0 (wrap %d): (%g, %g, %g)", wrap, b[0], b[1], b[2]);
    }
}

/* ---------------------------------------------------------- bad input */

static void bad_input(void)
{
    hx_decomp d, o;
    const int g[3] = {1, 1, 1};
    const double beyond[3][3] = {{6.01, 0, 0}, {0, -6.01, 0}, {0, 0, 6.63}};
    for (int k = 0; k < 3; k++)
        HXT_FAILS(hx_decomp_init_tilted(&d, box_lo, box_len, beyond[k], 2.0, g, 1, 0), HX_ERR_BOX,
                  "beyond LAMMPS's limit");
    /* 5.2 is under half of every box length but not of h_x with the tilts
     * at their limits (about 8.9). */
    HXT_FAILS(hx_decomp_init_tilted(&d, box_lo, box_len, tilts[2].t, 5.2, g, 1, 0),
              HX_ERR_CUTOFF_TOO_LARGE, "distance between its faces");
    HXT_OK(hx_decomp_init_tilted(&d, box_lo, box_len, tilts[2].t, 4.0, g, 1, 0));
    /* No tilt: the orthorhombic decomposition, bitwise. */
    const int g8[3] = {2, 2, 2};
    memset(&d, 0, sizeof d);
    memset(&o, 0, sizeof o);
    HXT_OK(hx_decomp_init_tilted(&d, box_lo, box_len, tilts[0].t, 2.8, g8, 8, 5));
    HXT_OK(hx_decomp_init(&o, box_lo, box_len, 2.8, g8, 8, 5));
    HXT_CHECK(memcmp(&d, &o, sizeof d) == 0 && !d.triclinic && d.normal[1][1] == 1.0 &&
                  d.height[2] == box_len[2],
              "no tilt must give hx_decomp_init's decomposition");
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_triclinic");
    const int nr = hx_comm_size(comm);
    const double rhs[2][2] = {{2.8, 2.5}, {4.2, 4.2}}; /* halo cutoff, pair cutoff */
    const int N = 700;
    int ncases = 0;
    uint64_t seed = 4242;
    if (hx_comm_rank(comm) == 0) {
        bad_input();
        geometry();
        pack_zero();
    }
    for (size_t g = 0; g < sizeof grids_all / sizeof grids_all[0]; g++) {
        const int *grid = grids_all[g];
        if (grid[0] * grid[1] * grid[2] != nr)
            continue;
        for (size_t t = 0; t < sizeof tilts / sizeof tilts[0]; t++)
            for (int c = 0; c < 2; c++, seed++) {
                hx_decomp d;
                char what[128], gs[32];
                if (!HXT_OK(hx_decomp_init_tilted(&d, box_lo, box_len, tilts[t].t, rhs[c][0], grid,
                                                  nr, hx_comm_rank(comm))))
                    continue;
                snprintf(what, sizeof what, "grid %s tilt %s rh %g (pulses %d %d %d)",
                         hxt_grid_str(grid, gs), tilts[t].name, rhs[c][0], d.npulse[0], d.npulse[1],
                         d.npulse[2]);
                double *X = hxt_frac_system(&d, N, seed);
                pairs_case(comm, &d, X, N, rhs[c][1], what);
                migrate_case(comm, &d, X, N, c == 0 ? 0.3 : 1.7, seed * 7, what);
                if (hx_comm_rank(comm) == 0)
                    printf("  %s\n", what);
                free(X);
                ncases++;
            }
    }
    HXT_CHECK(ncases > 0, "no case ran");
    return hxt_finish(comm);
}
