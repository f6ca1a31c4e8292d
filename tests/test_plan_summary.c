/*
 * test_plan_summary: the per-pulse summaries of a host plan, checked by
 * brute force from its maps. For every pulse p: map_offset is the running
 * sum of nsend in pulse order; hx_plan_from_pulse(p, q) (q < p) is the
 * number of map entries of p inside pulse q's receive range, 0 for q >= p;
 * those counts plus nsend_home add up to nsend; deps has bit q set iff
 * from_pulse(p, q) > 0 and no bit at or above p; share has bit r (r > p) set
 * iff the maps of p and r hold a common atom, and no bit at or below p nor
 * at or above the pulse count. Random systems, every grid of the rank
 * count, and per grid cutoffs chosen so that the widest-split dimension
 * needs 1, 2 and 3 pulses where the box allows it (under half the box:
 * 2 pulses need 3 domains or more along a dimension, 3 pulses 5 or more).
 */
#include "sysgen.h"

#include "core/hxi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double box_lo[3] = {-3.25, 1.5, 0.0};
static const double box_len[3] = {13.5, 11.25, 12.75};

/* Largest pulse count along one dimension the cases below must reach:
 * 8 ranks have 8x1x1 (3 pulses), 3 and 4 ranks a dimension of 3 or 4
 * domains (2 pulses), 2 ranks 1 pulse, 1 rank none. */
static int want_max_pulses(int nranks)
{
    return nranks >= 8 ? 3 : nranks >= 3 ? 2 : nranks == 2 ? 1 : 0;
}

typedef struct tally {
    int plans, max_pulses, from_nonzero, share_bits, multidim;
} tally;

/* Every summary of one plan against its maps; returns the failures seen. */
static int check_plan(const hx_plan *plan, const char *label, tally *ty)
{
    const int fails0 = hxt_failures;
    const int np = hx_plan_npulses(plan), ntotal = hx_plan_ntotal(plan);
    HXT_CHECK(np >= 0 && np <= HX_MAX_PULSES, "%s: %d pulses", label, np);
    if (np < 0 || np > HX_MAX_PULSES)
        return hxt_failures - fails0;
    /* stamp[a] == r + 1: atom a is in the map of pulse r. */
    int *stamp = calloc((size_t) ntotal + 1, sizeof(int));
    int offset = 0;
    for (int p = 0; p < np; p++) {
        const hx_pulse *P = hx_plan_pulse(plan, p);
        HXT_CHECK(P->map_offset == offset, "%s pulse %d: map_offset %d, the maps before hold %d",
                  label, p, P->map_offset, offset);
        offset += P->nsend;

        int sum = 0, bad_entry = 0;
        uint64_t deps = 0;
        for (int i = 0; i < P->nsend; i++)
            bad_entry += P->map[i] < 0 || P->map[i] >= ntotal;
        HXT_CHECK(bad_entry == 0, "%s pulse %d: %d map entries outside [0, %d)", label, p,
                  bad_entry, ntotal);
        for (int q = 0; q < p; q++) {
            const hx_pulse *Q = hx_plan_pulse(plan, q);
            int want = 0;
            for (int i = 0; i < P->nsend; i++)
                want += P->map[i] >= Q->recv_offset && P->map[i] < Q->recv_offset + Q->nrecv;
            int got = hx_plan_from_pulse(plan, p, q);
            HXT_CHECK(got == want, "%s: from_pulse(%d, %d) is %d, the map holds %d of [%d, %d)",
                      label, p, q, got, want, Q->recv_offset, Q->recv_offset + Q->nrecv);
            sum += got;
            if (want > 0) {
                deps |= UINT64_C(1) << q;
                ty->from_nonzero++;
            }
        }
        /* Nothing that arrives at or after pulse p can be in its map. */
        for (int q = p; q < np; q++)
            HXT_CHECK(hx_plan_from_pulse(plan, p, q) == 0, "%s: from_pulse(%d, %d) is %d", label, p,
                      q, hx_plan_from_pulse(plan, p, q));
        HXT_CHECK(sum + P->nsend_home == P->nsend,
                  "%s pulse %d: from earlier pulses %d + home %d != nsend %d", label, p, sum,
                  P->nsend_home, P->nsend);
        HXT_CHECK(P->deps == deps, "%s pulse %d: deps 0x%llx, the map reads 0x%llx", label, p,
                  (unsigned long long) P->deps, (unsigned long long) deps);
    }

    for (int p = 0; p < np; p++) {
        const hx_pulse *P = hx_plan_pulse(plan, p);
        for (int i = 0; i < P->nsend; i++)
            if (P->map[i] >= 0 && P->map[i] < ntotal)
                stamp[P->map[i]] = p + 1;
        uint64_t share = 0;
        for (int r = p + 1; r < np; r++) {
            const hx_pulse *R = hx_plan_pulse(plan, r);
            int common = 0;
            for (int i = 0; i < R->nsend && !common; i++)
                common = R->map[i] >= 0 && R->map[i] < ntotal && stamp[R->map[i]] == p + 1;
            if (common)
                share |= UINT64_C(1) << r;
        }
        HXT_CHECK(P->share == share, "%s pulse %d: share 0x%llx, the maps say 0x%llx", label, p,
                  (unsigned long long) P->share, (unsigned long long) share);
        for (int r = p + 1; r < np; r++)
            ty->share_bits += (int) ((share >> r) & 1u);
    }
    free(stamp);
    ty->plans++;
    if (np > ty->max_pulses)
        ty->max_pulses = np;
    return hxt_failures - fails0;
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_plan_summary");
    int nr = hx_comm_size(comm), rank = hx_comm_rank(comm);
    int grids[16][3];
    int ng = hxt_grids_for(nr, grids, 16);
    if (ng == 0)
        return hxt_skip(comm, "no grid in the test list has this many domains");

    const int natoms[] = {2000, 30};
    tally ty;
    memset(&ty, 0, sizeof ty);
    int maxp_dim = 0; /* largest pulse count along one dimension */
    uint64_t seed = 4242;
    for (int g = 0; g < ng; g++) {
        char gs[32];
        hxt_grid_str(grids[g], gs);
        /* The dimension split the most; its domain width sets the cutoffs. */
        int dmax = 0, ndec = 0;
        for (int k = 0; k < 3; k++) {
            if (grids[g][k] > grids[g][dmax])
                dmax = k;
            ndec += grids[g][k] > 1;
        }
        double w = box_len[dmax] / grids[g][dmax];
        double half = 0.5 * fmin(box_len[0], fmin(box_len[1], box_len[2]));
        for (int want = 1; want <= 3; want++) {
            /* A cutoff in ((want - 1) w, want w), under half the box:
             * want pulses along dmax. */
            double lo = (want - 1) * w, hi = fmin(want * w, half);
            double rh = lo + 0.6 * (hi - lo);
            if (!(hi > lo + 0.05 * w) || (want > 1 && grids[g][dmax] == 1)) {
                if (rank == 0)
                    printf("  grid %-6s %d pulses: not possible under half the box (%.4g)\n", gs,
                           want, half);
                continue;
            }
            for (size_t ni = 0; ni < sizeof natoms / sizeof natoms[0]; ni++) {
                hx_decomp d;
                if (!hxt_agree(comm,
                               HXT_OK(hx_decomp_init(&d, box_lo, box_len, rh, grids[g], nr, rank))))
                    continue;
                if (grids[g][dmax] > 1)
                    HXT_CHECK(d.npulse[dmax] == want, "grid %s rh %g: %d pulses along %d, want %d",
                              gs, rh, d.npulse[dmax], dmax, want);
                for (int k = 0; k < 3; k++)
                    if (d.npulse[k] > maxp_dim)
                        maxp_dim = d.npulse[k];
                hxt_sys s;
                hxt_local l;
                hxt_sys_random(&s, natoms[ni], box_lo, box_len, seed++);
                hxt_local_take(&l, &s, &d);
                hx_plan *plan = NULL;
                int ok = HXT_OK(hx_plan_create(&plan, comm, &d, l.n, l.x));
                if (hxt_agree(comm, ok)) {
                    char label[96];
                    snprintf(label, sizeof label, "grid %s rh %g, %d atoms", gs, rh, natoms[ni]);
                    int before = ty.from_nonzero, sb = ty.share_bits;
                    int bad = check_plan(plan, label, &ty);
                    int v[3] = {bad, ty.from_nonzero - before, ty.share_bits - sb};
                    HXT_OK(hxi_allreduce_int(comm, v, 3, 0));
                    if (ndec > 1)
                        ty.multidim += natoms[ni] >= 1000;
                    if (rank == 0)
                        printf("  %-34s %2d pulses; over the ranks %4d (p, q) with atoms of q "
                               "in p, %3d share bits: %s\n",
                               label, hx_plan_npulses(plan), v[1], v[2], v[0] ? "FAILED" : "ok");
                }
                if (ok)
                    hx_plan_destroy(plan);
                hxt_local_free(&l);
                hxt_sys_free(&s);
            }
        }
    }
    /* The cases must have exercised what they claim to. */
    HXT_CHECK(ty.plans > 0, "no plan was checked");
    HXT_CHECK(maxp_dim >= want_max_pulses(nr),
              "largest pulse count along a dimension %d, the cases should reach %d", maxp_dim,
              want_max_pulses(nr));
    int v[2] = {ty.from_nonzero, ty.share_bits};
    HXT_OK(hxi_allreduce_int(comm, v, 2, 0));
    /* Forwarding (a second pulse, or a second decomposed dimension) reads
     * atoms earlier pulses brought; two decomposed dimensions share home
     * atoms near the edges. */
    if (maxp_dim >= 2 || ty.multidim > 0)
        HXT_CHECK(v[0] > 0, "no pulse read atoms of an earlier pulse: the counts went unchecked");
    if (ty.multidim > 0)
        HXT_CHECK(v[1] > 0, "no two pulses shared an atom: the share masks went unchecked");
    return hxt_finish(comm);
}
