/*
 * test_nonuniform: non-uniform domains (hx_decomp_set_cuts) and LAMMPS's
 * balance shift (hx_balance_shift), on the host.
 *
 *  - Random cuts, the same on every rank, on every grid of the rank count
 *    from a fixed list (decomposed along 1, 2 and 3 dimensions), in an
 *    orthorhombic and a triclinic box: some with the thinnest domains just
 *    above the cutoff (one pulse), some with domains down to a fifth of it
 *    (several pulses, some carrying nothing). Ownership (hx_decomp_cell)
 *    against the bounds; every pair within the cutoff computed exactly
 *    once over the ranks by the zone rule, against brute force; the cpu
 *    transport's halo is the plan's; migration after random moves keeps
 *    every atom exactly once, with its payload, at its owner.
 *  - Full-shell plans (hx_plan_create_full) on the same cuts: each home
 *    atom's partners within the cutoff among its rank's atoms, each once.
 *  - Cuts changed mid-run: the atoms migrate to the new decomposition, a
 *    new plan (with another pulse count) is set on the same transport, and
 *    the checks hold again; then back.
 *  - Ranks holding different cuts: hx_plan_create and hx_migrate fail on
 *    every rank with HX_ERR_INVALID naming the rank, no hang.
 *  - Bad input: cuts not increasing, a domain too thin for the cutoff, too
 *    many pulses: one clear error each. NULL cuts: hx_decomp_init's
 *    decomposition, bitwise.
 *  - Balance shift: a slab of 40% of the box along z and a droplet-like
 *    block, against a direct transcription of LAMMPS's Balance::shift
 *    (cuts, iterations, loads), and the count over ranks
 *    (hx_balance_count) against a serial one.
 */
#include "zone_check.h"

#include "core/hxi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double box_lo[3] = {0.5, -2.0, 3.0};
static const double box_len[3] = {12.0, 13.25, 11.5};
static const double tilt_small[3] = {0.7, -0.4, 0.9};
#define RH 2.8
#define RC 2.5

static const int grids_all[][3] = {{1, 1, 1}, {1, 1, 2}, {2, 1, 1}, {3, 1, 1}, {1, 3, 1},
                                   {1, 2, 2}, {4, 1, 1}, {2, 2, 1}, {1, 4, 1}, {6, 1, 1},
                                   {1, 2, 3}, {2, 2, 2}, {8, 1, 1}, {1, 8, 1}, {1, 1, 8}};

/* Random cuts along dim of d: widths of at least wmin (a fraction of the
 * face distance) and random otherwise; the same on every rank (r is). */
static void random_cuts(hxt_rng *r, int n, double wmin, double *cuts)
{
    double w[HX_MAX_CUT_DOMAINS], sum = 0;
    for (int i = 0; i < n; i++) {
        w[i] = 0.05 + hxt_uniform(r);
        sum += w[i];
    }
    cuts[0] = 0;
    for (int i = 1; i < n; i++)
        cuts[i] = cuts[i - 1] + wmin + (1 - n * wmin) * w[i - 1] / sum;
    cuts[n] = 1;
}

/* Sets random cuts along every decomposed dimension of d: thin 0 keeps
 * every domain above the cutoff where the box allows it, thin 1 goes down
 * to a fifth of it. Draws again where the library finds a domain too thin
 * (the halo reaching round into itself). */
static int set_random_cuts(hx_decomp *d, hxt_rng *r, int thin)
{
    for (int k = 0; k < 3; k++) {
        const int n = d->grid[k];
        if (n == 1)
            continue;
        double cuts[HX_MAX_CUT_DOMAINS + 1], above = 1.02 * RH / d->height[k];
        double wmin = thin ? 0.2 * RH / d->height[k] : above;
        if (n * wmin > 0.9)
            wmin = 0.9 / n;
        hx_status st = HX_ERR_CUTOFF_TOO_LARGE;
        for (int tries = 0; tries < 50 && st == HX_ERR_CUTOFF_TOO_LARGE; tries++) {
            random_cuts(r, n, wmin, cuts);
            st = hx_decomp_set_cuts(d, k, cuts);
        }
        if (!HXT_OK(st))
            return 0;
    }
    return 1;
}

/* Ownership: the cell of random heights lies between its bounds, and the
 * domain bounds are the cells'. */
static void check_cells(const hx_decomp *d, hxt_rng *r, const char *what)
{
    int nbad = 0;
    for (int k = 0; k < 3; k++) {
        nbad += d->dom_lo[k] != hx_decomp_bound(d, k, d->coord[k]) ||
                d->dom_hi[k] != hx_decomp_bound(d, k, d->coord[k] + 1);
        for (int c = 0; c <= d->grid[k]; c++) {
            double b = hx_decomp_bound(d, k, c);
            nbad += c < d->grid[k] && hx_decomp_cell(d, k, b) != c;
            nbad += c > 0 && hx_decomp_cell(d, k, nextafter(b, -INFINITY)) != c - 1;
        }
        for (int i = 0; i < 1000; i++) {
            double h = d->face_lo[k] + d->height[k] * hxt_uniform(r);
            int c = hx_decomp_cell(d, k, h);
            nbad += !(h >= hx_decomp_bound(d, k, c) && h < hx_decomp_bound(d, k, c + 1));
        }
    }
    HXT_CHECK(nbad == 0, "%s: %d cells or bounds off", what, nbad);
}

/* Random moves of up to `reach` of each edge, one migration to d: every
 * atom held once, by its owner, with its payload, at its moved position up
 * to a lattice vector. On return *n, *id and *x are the migrated atoms
 * (ids as int). Collective. */
static void migrate_to(hx_comm *comm, const hx_decomp *d, int *n, int **id, double **x,
                       double reach, uint64_t seed, const double *X, int N, double *want,
                       const char *what)
{
    int cap = *n > 0 ? *n : 1, nbad = 0;
    int64_t *id64 = hxt_xmalloc((size_t) cap * sizeof(int64_t));
    double *pay = hxt_xmalloc((size_t) cap * 3 * sizeof(double));
    hxt_random_moves(d, X, N, reach, seed, want);
    for (int i = 0; i < *n; i++) {
        id64[i] = (*id)[i];
        memcpy(&(*x)[3 * i], &want[3 * (*id)[i]], 3 * sizeof(double));
        for (int k = 0; k < 3; k++)
            pay[3 * i + k] = hxt_payload((*id)[i], k);
    }
    hx_field f[2] = {{(void **) &id64, sizeof(int64_t)}, {(void **) &pay, 3 * sizeof(double)}};
    if (HXT_OK(hx_migrate(comm, d, n, &cap, x, f, 2))) {
        *id = realloc(*id, (size_t) (*n + 1) * sizeof(int));
        for (int i = 0; i < *n; i++) {
            double v[3];
            int ok = id64[i] >= 0 && id64[i] < N && hx_decomp_owner(d, &(*x)[3 * i]) == d->rank;
            for (int k = 0; k < 3 && ok; k++) {
                ok &= pay[3 * i + k] == hxt_payload((int) id64[i], k);
                v[k] = (*x)[3 * i + k] - want[3 * id64[i] + k];
            }
            nbad += !ok || !hxt_is_lattice(d, v, 1e-9);
            (*id)[i] = (int) id64[i];
        }
        nbad += hxt_ids_once(comm, id64, *n, N);
        HXT_CHECK(nbad == 0, "%s: %d violations after migration", what, nbad);
    }
    free(id64);
    free(pay);
}

static uint64_t id_hash(int id)
{
    uint64_t h = (uint64_t) id * 0x9E3779B97F4A7C15u;
    return h ^ (h >> 29);
}

/* A full-shell plan on the same cuts: each home atom's partners within
 * RC among the local atoms (minimum image only along undecomposed
 * dimensions), each exactly once, against brute force over all N atoms
 * (count and a hash of the ids). Collective. */
static void full_check(hx_comm *comm, hxt_idt *it, const hx_decomp *d, int n, const int *id,
                       const double *x, const double *want, int N, const char *what)
{
    hx_plan *plan = NULL;
    int nbad = 0;
    if (HXT_OK(hxi_agree(comm, hx_plan_create_full(&plan, comm, d, n, x)))) {
        const int *ids = hxt_idt_run(it, plan, id, what);
        if (hxt_agree(comm, ids != NULL)) {
            const double *px = hx_plan_coords(plan);
            const int nt = hx_plan_ntotal(plan), all[3] = {1, 1, 1};
            const int mi[3] = {d->grid[0] == 1, d->grid[1] == 1, d->grid[2] == 1};
            for (int i = 0; i < n; i++) {
                int got = 0, ref = 0;
                uint64_t hg = 0, hr = 0;
                for (int j = 0; j < nt; j++)
                    if (j != i && hxt_dist2(d, mi, px + 3 * i, px + 3 * j) < RC * RC)
                        got++, hg += id_hash(ids[j]);
                for (int j = 0; j < N; j++)
                    if (j != id[i] && hxt_dist2(d, all, want + 3 * (size_t) id[i],
                                                want + 3 * (size_t) j) < RC * RC)
                        ref++, hr += id_hash(j);
                nbad += got != ref || hg != hr;
            }
        }
    }
    HXT_CHECK(nbad == 0, "%s, full shell: %d home atoms with partners missing or twice", what,
              nbad);
    hx_plan_destroy(plan);
}

/* Plan on the atoms held, the cpu transport's halo and the pairs; the
 * same for a full-shell plan. The positions of the atoms (by id) are
 * want. Collective. */
static void plan_check(hx_comm *comm, hxt_idt *it, const hx_decomp *d, int n, const int *id,
                       const double *x, const double *want, int N, const char *what)
{
    hx_plan *plan = NULL;
    if (HXT_OK(hxi_agree(comm, hx_plan_create(&plan, comm, d, n, x)))) {
        const int *ids = hxt_idt_run(it, plan, id, what);
        if (hxt_agree(comm, ids != NULL))
            hxt_check_zone_pairs(comm, plan, ids, want, N, RC, what);
    }
    /* The transport keeps no pointer to a plan it no longer runs. */
    hx_plan_destroy(plan);
    full_check(comm, it, d, n, id, x, want, N, what);
}

/* One case: cuts A, plan and checks; migrate to cuts B (another pulse
 * count where the grid allows), plan on the same transport, checks; back
 * to A. */
static void cuts_case(hx_comm *comm, hxt_idt *it, const hx_decomp *da, const hx_decomp *db,
                      uint64_t seed, const char *name)
{
    const int N = 700;
    char what[200];
    double *X = hxt_frac_system(da, N, seed);
    double *want = hxt_xmalloc((size_t) N * 3 * sizeof(double));
    int *id = NULL;
    double *x = NULL;
    int n = hxt_take_owned(da, X, N, &id, &x);
    snprintf(what, sizeof what, "%s, cuts A (pulses %d %d %d)", name, da->npulse[0], da->npulse[1],
             da->npulse[2]);
    plan_check(comm, it, da, n, id, x, X, N, what);
    migrate_to(comm, db, &n, &id, &x, 0.05, seed * 3, X, N, want, what);
    snprintf(what, sizeof what, "%s, cuts B (pulses %d %d %d)", name, db->npulse[0], db->npulse[1],
             db->npulse[2]);
    plan_check(comm, it, db, n, id, x, want, N, what);
    memcpy(X, want, (size_t) N * 3 * sizeof(double));
    migrate_to(comm, da, &n, &id, &x, 0.6, seed * 5, X, N, want, what);
    snprintf(what, sizeof what, "%s, back to cuts A", name);
    plan_check(comm, it, da, n, id, x, want, N, what);
    if (hx_comm_rank(comm) == 0)
        printf("  %s: pulses %d %d %d -> %d %d %d -> back\n", name, da->npulse[0], da->npulse[1],
               da->npulse[2], db->npulse[0], db->npulse[1], db->npulse[2]);
    free(X);
    free(want);
    free(id);
    free(x);
}

/* Every grid of the rank count, orthorhombic and triclinic, cuts thin
 * and not. Returns the cases run. */
static int walk_cuts(hx_comm *comm, hxt_idt *it)
{
    const int nr = hx_comm_size(comm), rank = hx_comm_rank(comm);
    int ncases = 0;
    uint64_t seed = 777;
    for (size_t g = 0; g < sizeof grids_all / sizeof grids_all[0]; g++) {
        const int *grid = grids_all[g];
        if (grid[0] * grid[1] * grid[2] != nr)
            continue;
        for (int tri = 0; tri < 2; tri++)
            for (int thin = 0; thin < 2; thin++, seed += 11) {
                hx_decomp da, db;
                hxt_rng r = {seed};
                char name[128], gs[32];
                if (!HXT_OK(hx_decomp_init_tilted(&da, box_lo, box_len, tri ? tilt_small : NULL, RH,
                                                  grid, nr, rank)))
                    continue;
                db = da;
                if (!set_random_cuts(&da, &r, thin) || !set_random_cuts(&db, &r, !thin))
                    continue;
                snprintf(name, sizeof name, "grid %s %s %s", hxt_grid_str(grid, gs),
                         tri ? "triclinic" : "orthorhombic", thin ? "thin" : "thick");
                check_cells(&da, &r, name);
                check_cells(&db, &r, name);
                cuts_case(comm, it, &da, &db, seed, name);
                ncases++;
            }
    }
    return ncases;
}

/* Ranks holding different cuts: one named error on every rank. */
static void disagree(hx_comm *comm)
{
    const int nr = hx_comm_size(comm);
    const int grid[3] = {1, 1, nr};
    double cuts[HX_MAX_CUT_DOMAINS + 1];
    hx_decomp d;
    hx_plan *plan = NULL;
    if (nr < 2 || !HXT_OK(hx_decomp_init(&d, box_lo, box_len, RH, grid, nr, hx_comm_rank(comm))))
        return;
    for (int i = 0; i <= nr; i++)
        cuts[i] = (double) i / nr;
    /* The last rank moves its first inner cut a little. */
    if (hx_comm_rank(comm) == nr - 1)
        cuts[1] += 0.01 / nr;
    if (!HXT_OK(hx_decomp_set_cuts(&d, HX_Z, cuts)))
        return;
    HXT_FAILS(hx_plan_create(&plan, comm, &d, 0, NULL), HX_ERR_INVALID,
              "holds another decomposition");
    hx_plan_destroy(plan);
    int n = 0, cap = 1;
    double *x = hxt_xmalloc(3 * sizeof(double));
    HXT_FAILS(hx_migrate(comm, &d, &n, &cap, &x, NULL, 0), HX_ERR_INVALID,
              "holds another decomposition");
    free(x);
}

static void bad_input(void)
{
    const int g[3] = {1, 1, 4};
    hx_decomp d, o;
    if (!HXT_OK(hx_decomp_init(&d, box_lo, box_len, RH, g, 4, 1)))
        return;
    o = d;
    const double flat[5] = {0, 0.3, 0.3, 0.7, 1}, down[5] = {0, 0.5, 0.4, 0.7, 1};
    const double ends[5] = {0.1, 0.3, 0.5, 0.7, 1}, nan[5] = {0, 0.3, NAN, 0.7, 1};
    HXT_FAILS(hx_decomp_set_cuts(&d, HX_Z, flat), HX_ERR_INVALID, "not increasing");
    HXT_FAILS(hx_decomp_set_cuts(&d, HX_Z, down), HX_ERR_INVALID, "not increasing");
    HXT_FAILS(hx_decomp_set_cuts(&d, HX_Z, ends), HX_ERR_INVALID, "first must be 0");
    HXT_FAILS(hx_decomp_set_cuts(&d, HX_Z, nan), HX_ERR_INVALID, "not increasing");
    HXT_FAILS(hx_decomp_set_cuts(&d, 3, flat), HX_ERR_INVALID, "dimension");
    /* One domain of 0.85 of lz = 11.5: the other three 1.725 together,
     * under the cutoff 2.8: the halo above the big one reaches itself. */
    const double big[5] = {0, 0.05, 0.1, 0.15, 1};
    HXT_FAILS(hx_decomp_set_cuts(&d, HX_Z, big), HX_ERR_CUTOFF_TOO_LARGE, "into itself");
    HXT_CHECK(memcmp(&d, &o, sizeof d) == 0,
              "a refused cut must leave the decomposition as it was");
    /* 34 slivers of 0.002 of lz and 6 domains sharing the rest: the halo
     * above the last one spans 35 domains, more pulses than a plan holds. */
    const int g40[3] = {1, 1, 40};
    double sliver[41];
    hx_decomp d40;
    for (int i = 0; i <= 34; i++)
        sliver[i] = 0.002 * i;
    for (int i = 35; i <= 40; i++)
        sliver[i] = 0.068 + (1 - 0.068) * (i - 34) / 6.0;
    sliver[40] = 1;
    if (HXT_OK(hx_decomp_init(&d40, box_lo, box_len, RH, g40, 40, 0)))
        HXT_FAILS(hx_decomp_set_cuts(&d40, HX_Z, sliver), HX_ERR_CUTOFF_TOO_LARGE, "pulses");
    /* More domains than cuts can be set for (equal ones are fine). */
    const int gbig[3] = {1, 1, HX_MAX_CUT_DOMAINS + 1};
    const double tall[3] = {12.0, 13.25, 1000.0};
    double many[HX_MAX_CUT_DOMAINS + 2];
    for (int i = 0; i <= HX_MAX_CUT_DOMAINS + 1; i++)
        many[i] = (double) i / (HX_MAX_CUT_DOMAINS + 1);
    if (HXT_OK(hx_decomp_init(&d40, box_lo, tall, RH, gbig, HX_MAX_CUT_DOMAINS + 1, 0)))
        HXT_FAILS(hx_decomp_set_cuts(&d40, HX_Z, many), HX_ERR_INVALID, "whose cuts can be set");
    /* Equal cuts set and then reset: hx_decomp_init's decomposition. */
    const double equal[5] = {0, 0.25, 0.5, 0.75, 1};
    if (HXT_OK(hx_decomp_set_cuts(&d, HX_Z, equal)) && HXT_OK(hx_decomp_set_cuts(&d, HX_Z, NULL)))
        HXT_CHECK(memcmp(&d, &o, sizeof d) == 0, "NULL cuts must give equal domains back, bitwise");
}

void test_balance(hx_comm *comm);

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_nonuniform");
    hxt_idt it;
    int ncases = 0;
    if (hx_comm_rank(comm) == 0)
        bad_input();
    disagree(comm);
    if (hxt_idt_open(comm, &it)) {
        ncases = walk_cuts(comm, &it);
        hxt_idt_close(&it);
    }
    HXT_CHECK(ncases > 0, "no case ran");
    test_balance(comm);
    return hxt_finish(comm);
}
