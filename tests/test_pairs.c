/*
 * test_pairs: the zone rule (hx_zone_pair) over all ranks computes every
 * pair of the periodic system within the cutoff exactly once. Distances use
 * coordinates as they are along decomposed dimensions and the minimum image
 * along dimensions with one domain; the reference is brute force over all
 * pairs of the gathered system with the minimum image everywhere.
 *
 * Each atom gets, summed over all ranks, the number of pairs it is in and a
 * sum of hashes of its partners' ids; both must equal the brute force, so a
 * pair missing, extra or counted twice shows at its two atoms.
 */
#include "oracle.h"

#include "core/hxi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double box_lo[3] = {0.5, -2.0, 3.0};
static const double box_len[3] = {12.0, 13.25, 11.5};

static uint64_t mix(int64_t id)
{
    hxt_rng r = {(uint64_t) id * 0x2545f4914f6cdd1dull + 17};
    return hxt_next(&r);
}

static void pairs_case(hx_comm *comm, const hxt_case *c, void *ctx)
{
    (void) ctx;
    const int nr = hx_comm_size(comm), rank = hx_comm_rank(comm), N = c->spec.natoms;
    const double rh = c->spec.rh, rc = c->spec.aux;
    int64_t *ids = hxt_check_halo(comm, c->plan, &c->s, c->l.id, NULL, NULL, NULL);
    int ntotal = hx_plan_ntotal(c->plan);
    const double *X = hx_plan_coords(c->plan);
    const uint8_t *Z = hx_plan_zones(c->plan);

    int *cnt = calloc((size_t) N, sizeof(int));
    uint64_t *hs = calloc((size_t) N, sizeof(uint64_t));
    int nself = 0, nunknown = 0;
    for (int i = 0; i < ntotal; i++)
        for (int j = i + 1; j < ntotal; j++) {
            if (!hx_zone_pair(&Z[4 * i], &Z[4 * j]))
                continue;
            double r2 = 0;
            for (int k = 0; k < 3; k++) {
                double dx = X[3 * i + k] - X[3 * j + k];
                if (c->d.grid[k] == 1)
                    dx -= c->d.box_len[k] * nearbyint(dx / c->d.box_len[k]);
                r2 += dx * dx;
            }
            if (r2 >= rc * rc)
                continue;
            int64_t a = ids[i], b = ids[j];
            if (a < 0 || b < 0 || a >= N || b >= N) {
                nunknown++;
                continue;
            }
            if (a == b) {
                nself++;
                continue;
            }
            cnt[a]++;
            cnt[b]++;
            hs[a] += mix(b);
            hs[b] += mix(a);
        }
    HXT_CHECK(nself == 0, "grid %s rh %g: %d pairs of an atom with its own image", c->gs, rh,
              nself);
    HXT_CHECK(nunknown == 0, "grid %s rh %g: %d pairs with an unidentified atom", c->gs, rh,
              nunknown);

    int *cnt_all = malloc((size_t) N * nr * sizeof(int));
    uint64_t *hs_all = malloc((size_t) N * nr * sizeof(uint64_t));
    HXT_OK(hxi_allgather(comm, cnt, (size_t) N * sizeof(int), cnt_all));
    HXT_OK(hxi_allgather(comm, hs, (size_t) N * sizeof(uint64_t), hs_all));
    if (rank == 0) {
        int *bc = calloc((size_t) N, sizeof(int));
        uint64_t *bh = calloc((size_t) N, sizeof(uint64_t));
        long npairs = 0;
        for (int i = 0; i < N; i++)
            for (int j = i + 1; j < N; j++) {
                double r2 = 0;
                for (int k = 0; k < 3; k++) {
                    double dx = c->s.x[3 * i + k] - c->s.x[3 * j + k];
                    dx -= box_len[k] * nearbyint(dx / box_len[k]);
                    r2 += dx * dx;
                }
                if (r2 < rc * rc) {
                    bc[i]++;
                    bc[j]++;
                    bh[i] += mix(j);
                    bh[j] += mix(i);
                    npairs++;
                }
            }
        int nbad = 0, first = -1, gotc = 0;
        long got = 0;
        for (int a = 0; a < N; a++) {
            int na = 0;
            uint64_t h = 0;
            for (int r = 0; r < nr; r++) {
                na += cnt_all[(size_t) r * N + a];
                h += hs_all[(size_t) r * N + a];
            }
            got += na;
            if (na != bc[a] || h != bh[a]) {
                if (nbad++ == 0) {
                    first = a;
                    gotc = na;
                }
            }
        }
        HXT_CHECK(npairs > 0, "grid %s rc %g: brute force finds no pair", c->gs, rc);
        HXT_CHECK(got == 2 * npairs,
                  "grid %s rh %g rc %g: ranks compute %ld pairs, brute force %ld", c->gs, rh, rc,
                  got / 2, npairs);
        HXT_CHECK(nbad == 0,
                  "grid %s rh %g rc %g: %d atoms with wrong pairs (first id %d: %d pairs, "
                  "want %d)",
                  c->gs, rh, rc, nbad, first, gotc, first >= 0 ? bc[first] : 0);
        printf("  grid %-6s rh %-4g rc %-4g pairs %ld\n", c->gs, rh, rc, npairs);
        free(bc);
        free(bh);
    }
    free(cnt_all);
    free(hs_all);
    free(cnt);
    free(hs);
    free(ids);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_pairs");
    int grids[16][3];
    if (hxt_grids_for(hx_comm_size(comm), grids, 16) == 0)
        return hxt_skip(comm, "no grid in the test list has this many domains");

    /* 1500 atoms; (halo cutoff, pair cutoff): the usual skin, and pairs
     * right up to the halo cutoff. 5.5 needs 3 or more pulses on 6 and 8
     * domains. */
    const hxt_spec specs[] = {{2.8, 1500, 2.5, 0}, {5.5, 1500, 5.2, 0}, {4.1, 1500, 4.1, 0}};
    int ncases = hxt_for_each_plan(comm, box_lo, box_len, specs, 3, 77, pairs_case, NULL);
    HXT_CHECK(ncases > 0, "no case ran");
    return hxt_finish(comm);
}
