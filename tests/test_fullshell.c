/*
 * test_fullshell: the full-shell plan (hx_plan_create_full, `newton off`)
 * on the grids 1x1x1, 1x1x2, 2x1x1, 1x2x2, 2x2x2, three domains along a
 * dimension and more (1 to 4 pulses per direction), orthorhombic and
 * triclinic (a small tilt and LAMMPS's limits).
 *
 *  - Pairs: on each rank, every pair with at least one home atom within
 *    the pair cutoff is present exactly once (home-home and home-halo).
 *    Per home atom, the partners within the cutoff among all local atoms
 *    (coordinates as they are along decomposed dimensions, the minimum
 *    image by heights along the others), counted and hashed, against brute
 *    force over the whole system with the minimum image.
 *  - Halo: the cpu transport (double) delivers the plan's coordinates
 *    bitwise, with the ids as a field; every halo atom is its atom moved by
 *    a whole lattice vector; its zone offsets are the signed grid distance
 *    to its owner, home atoms' all zero.
 *  - Pulses: each dimension's pulses go down, up, down, up...; the maps of
 *    one direction read only earlier dimensions and the previous pulse of
 *    their own direction (deps), never the other direction.
 *  - hx_transport_reverse, fields_reverse: HX_ERR_STATE naming newton off.
 *  - A decomposition whose pulses, doubled, exceed HX_MAX_PULSES: refused.
 *  - hx_grid_choose_full: a grid whose pulses, doubled, fit where
 *    hx_grid_choose's do not; the halo grown towards both neighbours
 *    (a slab where the eighth shell takes a pencil); none that fits:
 *    HX_ERR_GRID, the grid untouched.
 */
#include "sysgen.h"

#include "core/hxi.h"
#include "core/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double box_lo[3] = {0.5, -2.0, 3.0};
static const double box_len[3] = {12.0, 13.25, 11.5};

static const int grids_all[][3] = {{1, 1, 1}, {1, 1, 2}, {2, 1, 1}, {3, 1, 1}, {1, 3, 1},
                                   {1, 1, 3}, {1, 2, 2}, {2, 2, 1}, {4, 1, 1}, {6, 1, 1},
                                   {1, 2, 3}, {2, 2, 2}, {8, 1, 1}, {1, 1, 8}};

/* Halo cutoff, atoms, pair cutoff (aux). */
static const hxt_spec specs[2] = {{2.8, 700, 2.5, 0}, {4.2, 700, 4.0, 0}};

static const double tilt_small[3] = {0.06, -0.03, 0.07};
static const double tilt_limits[3] = {0.5, -0.5, 0.5};

static uint64_t mix(int64_t id)
{
    hxt_rng r = {(uint64_t) id * 0x2545f4914f6cdd1dull + 17};
    return hxt_next(&r);
}

/* a - b at its minimum image along the dimensions with mi[k] set;
 * squared length. */
static double dist2(const hx_decomp *d, const int mi[3], const double *a, const double *b)
{
    double v[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    hxt_min_image(d, mi, v);
    return v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
}

/* Every local atom's id, forwarded with the coordinates through the cpu
 * transport, which must give the plan's coordinates, by a plain forward
 * as well; the reverse calls refused. */
static int *halo_ids(hx_comm *comm, const hxt_case *c, const char *what)
{
    const hx_plan *plan = c->plan;
    int nhome = hx_plan_nhome(plan), ntotal = hx_plan_ntotal(plan);
    int *home = hxt_xmalloc((size_t) (nhome + 1) * sizeof(int)), nbad = 0;
    hx_transport *t = NULL;
    for (int i = 0; i < nhome; i++)
        home[i] = (int) c->l.id[i];
    int *ids = hxt_forward_ids(comm, plan, home, what, &t);
    free(home);
    if (!t)
        return ids;
    double *x = hx_transport_coords(t);
    const double *px = hx_plan_coords(plan);
    for (size_t i = 3 * (size_t) nhome; i < 3 * (size_t) ntotal; i++)
        x[i] = NAN;
    if (HXT_OK(hx_transport_forward(t)))
        for (size_t i = 3 * (size_t) nhome; i < 3 * (size_t) ntotal; i++)
            nbad += !hxt_same_d(x[i], px[i]);
    HXT_CHECK(nbad == 0, "%s: %d halo coordinates of the forward differ", what, nbad);
    HXT_FAILS(hx_transport_reverse(t), HX_ERR_STATE, "newton off");
    HXT_FAILS(hx_transport_fields_reverse(t, NULL, 0, 1), HX_ERR_STATE, "newton off");
    hx_transport_destroy(t);
    return ids;
}

/* Each halo atom is an image of its atom, with zone offsets that are the
 * signed grid distance to its owner; home atoms have zero offsets. */
static void check_halo(const hxt_case *c, const int *ids, const char *what)
{
    const hx_decomp *d = &c->d;
    const hx_plan *plan = c->plan;
    const double *x = hx_plan_coords(plan);
    const uint8_t *z = hx_plan_zones(plan);
    int nbad = 0, nzone = 0;
    for (int i = 0; i < hx_plan_ntotal(plan); i++) {
        int a = ids[i];
        double v[3];
        int nonzero = 0;
        if (a < 0 || a >= c->s.n) {
            nbad++;
            continue;
        }
        for (int k = 0; k < 3; k++)
            v[k] = x[3 * i + k] - c->s.x[3 * a + k];
        nbad += !hxt_is_lattice(d, v, 1e-9);
        int owner = hx_decomp_owner(d, &c->s.x[3 * a]);
        int oc[3] = {owner % d->grid[0], (owner / d->grid[0]) % d->grid[1],
                     owner / (d->grid[0] * d->grid[1])};
        for (int k = 0; k < 3; k++) {
            int off = (int8_t) z[4 * i + k];
            nonzero |= off != 0;
            int g = d->grid[k];
            nzone += ((d->coord[k] + off) % g + g) % g != oc[k] || (g == 1 && off != 0);
        }
        nzone += (i < hx_plan_nhome(plan)) == nonzero || z[4 * i + 3] != 0;
    }
    HXT_CHECK(nbad == 0, "%s: %d halo atoms are no image of their atom", what, nbad);
    HXT_CHECK(nzone == 0, "%s: %d atoms with wrong zone offsets", what, nzone);
}

/* Down, up, down, up... per dimension; deps only on earlier dimensions
 * and the previous pulse of the same direction. */
static void check_pulses(const hx_plan *plan, const char *what)
{
    const hx_decomp *d = hx_plan_decomp(plan);
    int p = 0, nbad = 0;
    for (int dim = HX_Z; dim >= HX_X; dim--) {
        int first = p;
        for (int k = 0; k < d->npulse[dim]; k++)
            for (int s = 0; s < 2; s++, p++) {
                const hx_pulse *q = hx_plan_pulse(plan, p);
                uint64_t allowed = (UINT64_C(1) << first) - 1;
                if (k > 0)
                    allowed = UINT64_C(1) << (p - 2);
                nbad += !q || q->dim != dim || q->index != k || q->dir != (s ? 1 : -1);
                nbad += q && (q->deps & ~allowed) != 0;
                nbad += q && q->send_rank != (s ? d->up[dim] : d->down[dim]);
            }
    }
    HXT_CHECK(nbad == 0 && p == hx_plan_npulses(plan),
              "%s: %d pulses out of order or reading the other direction (%d of %d)", what, nbad, p,
              hx_plan_npulses(plan));
    HXT_CHECK(hx_plan_full_shell(plan) == 1, "%s: hx_plan_full_shell is not 1", what);
}

/* Per home atom: partners among all local atoms within rc. */
static void local_pairs(const hxt_case *c, const int *ids, int *cnt, uint64_t *hs)
{
    const hx_decomp *d = &c->d;
    const int mi[3] = {d->grid[0] == 1, d->grid[1] == 1, d->grid[2] == 1};
    const double *X = hx_plan_coords(c->plan), rc = c->spec.aux;
    int ntotal = hx_plan_ntotal(c->plan), nhome = hx_plan_nhome(c->plan);
    for (int i = 0; i < nhome; i++)
        for (int j = 0; j < ntotal; j++) {
            if (j == i || dist2(d, mi, &X[3 * i], &X[3 * j]) >= rc * rc)
                continue;
            cnt[ids[i]]++;
            hs[ids[i]] += ids[j] >= 0 ? mix(ids[j]) : 1;
        }
}

/* Rank 0: the summed counts and hashes against brute force. */
static void check_pairs(const hxt_case *c, const int *cnt, const uint64_t *hs_all, int nr,
                        const char *what)
{
    const int mi[3] = {1, 1, 1}, N = c->s.n;
    const double *X = c->s.x, rc = c->spec.aux;
    long npairs = 0;
    int nbad = 0;
    for (int a = 0; a < N; a++) {
        int na = 0;
        uint64_t h = 0, want = 0;
        for (int b = 0; b < N; b++)
            if (b != a && dist2(&c->d, mi, &X[3 * a], &X[3 * b]) < rc * rc) {
                na++;
                want += mix(b);
            }
        for (int r = 0; r < nr; r++)
            h += hs_all[(size_t) r * N + a];
        npairs += na;
        nbad += na != cnt[a] || h != want;
    }
    HXT_CHECK(npairs > 0, "%s: brute force finds no pair", what);
    HXT_CHECK(nbad == 0, "%s: %d atoms with wrong partners (of %ld pairs)", what, nbad, npairs / 2);
}

static void full_case(hx_comm *comm, const hxt_case *c, void *ctx)
{
    const int nr = hx_comm_size(comm), N = c->s.n;
    char what[128];
    (void) ctx;
    snprintf(what, sizeof what, "grid %s%s rh %g (pulses %d %d %d)", c->gs,
             c->d.triclinic ? " triclinic" : "", c->spec.rh, c->d.npulse[0], c->d.npulse[1],
             c->d.npulse[2]);
    int *ids = halo_ids(comm, c, what);
    int *cnt = hxt_xcalloc((size_t) N, sizeof(int));
    uint64_t *hs = hxt_xcalloc((size_t) N, sizeof(uint64_t));
    uint64_t *hs_all = hxt_xmalloc((size_t) N * nr * sizeof(uint64_t));
    check_halo(c, ids, what);
    check_pulses(c->plan, what);
    local_pairs(c, ids, cnt, hs);
    HXT_OK(hxi_allreduce_int(comm, cnt, N, 0));
    HXT_OK(hxi_allgather(comm, hs, (size_t) N * sizeof(uint64_t), hs_all));
    if (hx_comm_rank(comm) == 0) {
        check_pairs(c, cnt, hs_all, nr, what);
        printf("  %s: %d pulses\n", what, hx_plan_npulses(c->plan));
    }
    free(ids);
    free(cnt);
    free(hs);
    free(hs_all);
}

/* The grid of hx_grid_choose_full and its pulses against the full
 * shell's limit (rank-local). */
static void grid_choose_full(void)
{
    const double cube[3] = {10, 10, 10}, lo[3] = {0, 0, 0};
    int g[3], e[3];
    hx_decomp d;
    /* 34 ranks, rc 4.9: the eighth shell's 1x1x34 has 17 pulses, 34 in
     * full shell; 1x2x17 has 10. */
    HXT_OK(hx_grid_choose(34, cube, 4.9, e));
    HXT_OK(hx_decomp_init(&d, lo, cube, 4.9, e, 34, 0));
    HXT_CHECK(e[0] == 1 && e[1] == 1 && e[2] == 34, "hx_grid_choose(34): %dx%dx%d", e[0], e[1],
              e[2]);
    HXT_FAILS(hxi_plan_full_check(&d), HX_ERR_INVALID, "hx_grid_choose_full");
    HXT_OK(hx_grid_choose_full(34, cube, 4.9, g));
    HXT_CHECK(g[0] == 1 && g[1] == 2 && g[2] == 17, "hx_grid_choose_full(34): %dx%dx%d", g[0], g[1],
              g[2]);
    HXT_OK(hx_decomp_init(&d, lo, cube, 4.9, g, 34, 0));
    HXT_OK(hxi_plan_full_check(&d));
    /* 12 ranks, rc 2.5: the halo grown by rc both ways prefers the slab. */
    HXT_OK(hx_grid_choose(12, cube, 2.5, e));
    HXT_OK(hx_grid_choose_full(12, cube, 2.5, g));
    HXT_CHECK(e[0] == 1 && e[1] == 3 && e[2] == 4 && g[0] == 1 && g[1] == 1 && g[2] == 12,
              "12 ranks: eighth %dx%dx%d, full %dx%dx%d", e[0], e[1], e[2], g[0], g[1], g[2]);
    /* 37 ranks: 1x1x37 alone, 19 pulses, too many for the full shell. */
    g[0] = g[1] = g[2] = -3;
    HXT_OK(hx_grid_choose(37, cube, 4.9, e));
    HXT_FAILS(hx_grid_choose_full(37, cube, 4.9, g), HX_ERR_GRID, "per direction (full shell)");
    HXT_CHECK(g[0] == -3 && g[1] == -3 && g[2] == -3, "hx_grid_choose_full wrote on failure");
    HXT_FAILS(hx_grid_choose_full(8, cube, 5.0, g), HX_ERR_CUTOFF_TOO_LARGE, "half the box");
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_fullshell");
    const int nr = hx_comm_size(comm);
    const double *tilts[3] = {NULL, tilt_small, tilt_limits};
    int grids[16][3], ng = 0, ncases = 0;
    for (size_t g = 0; g < sizeof grids_all / sizeof grids_all[0]; g++)
        if (grids_all[g][0] * grids_all[g][1] * grids_all[g][2] == nr)
            memcpy(grids[ng++], grids_all[g], sizeof grids[0]);
    if (hx_comm_rank(comm) == 0) {
        hx_decomp d;
        memset(&d, 0, sizeof d);
        d.npulse[0] = 6, d.npulse[1] = 6, d.npulse[2] = 5;
        HXT_FAILS(hxi_plan_full_check(&d), HX_ERR_INVALID, "full-shell plan needs 34 pulses");
        grid_choose_full();
    }
    if (ng == 0)
        return hxt_skip(comm, "no full-shell grid for this rank count");
    for (int t = 0; t < 3; t++) {
        hxt_walk w = {.grids = (const int(*)[3]) grids,
                      .ngrids = ng,
                      .box_lo = box_lo,
                      .box_len = box_len,
                      .specs = specs,
                      .nspecs = 2,
                      .seed = 5150 + 100 * (uint64_t) t,
                      .tilt_frac = tilts[t],
                      .full = 1};
        ncases += hxt_walk_plans(comm, &w, full_case, NULL, NULL);
    }
    HXT_CHECK(ncases > 0, "no case ran");
    return hxt_finish(comm);
}
