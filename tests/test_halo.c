/*
 * test_halo: every rank's halo, as the plan builds it and as the cpu
 * transport forwards double and float data, is exactly what a brute-force
 * walk of the forwarding chain over the whole system says: no atom missing,
 * none extra, none twice, coordinates and zone offsets bitwise. Runs every
 * grid of the list whose product is the rank count, with cutoffs that need
 * 1 to 4 pulses along a dimension, in a non-cubic box with a non-zero origin.
 */
#include "oracle.h"

#include <math.h>
#include <stdlib.h>

/* Lengths exactly representable in float, so that a float shift adds the
 * same value as the double one. */
static const double box_lo[3] = {-3.25, 1.5, 0.0};
static const double box_len[3] = {13.5, 11.25, 12.75};

/* Pulses the cases below must reach along some dimension at each rank
 * count (8x1x1 with 5.5 gives 4; 6x1x1 with 4.6 gives 3). */
static int want_max_pulses(int nranks)
{
    static const int want[] = {0, 0, 1, 2, 2, 3, 3, 4, 4};
    return nranks < 9 ? want[nranks] : 1;
}

/* What the cases share: one pair of transports for all plans (set_plan
 * must adopt plans of every size in turn), and what the cases reached. */
typedef struct {
    hx_transport *td, *tf;
    int maxp;
} halo_ctx;

static void halo_case(hx_comm *comm, const hxt_case *c, void *ctx_)
{
    halo_ctx *ctx = ctx_;
    const int rank = hx_comm_rank(comm);
    const double rh = c->spec.rh;
    const hx_decomp *pd = hx_plan_decomp(c->plan);
    HXT_CHECK(pd->rank == rank && pd->grid[0] == c->grid[0] && pd->grid[1] == c->grid[1] &&
                  pd->grid[2] == c->grid[2] && pd->cutoff == rh,
              "plan decomp differs from the one given");
    HXT_CHECK(hx_plan_nhome(c->plan) == c->l.n, "nhome %d, gave %d", hx_plan_nhome(c->plan),
              c->l.n);
    int nexp = 0;
    int64_t *ids = hxt_check_halo(comm, c->plan, &c->s, c->l.id, ctx->td, ctx->tf, &nexp);
    int decomposed = c->grid[0] * c->grid[1] * c->grid[2] > 1;
    /* The brute force must have found something to compare wherever a halo
     * exists; 2000 atoms fill every face. */
    if (c->spec.natoms >= 1000)
        HXT_CHECK(decomposed ? nexp > 0 : nexp == 0,
                  "grid %s rh %g: brute force expects %d halo atoms", c->gs, rh, nexp);
    for (int k = 0; k < 3; k++)
        if (c->d.npulse[k] > ctx->maxp)
            ctx->maxp = c->d.npulse[k];
    if (rank == 0 && c->spec.natoms >= 1000)
        printf("  grid %-6s rh %-4g pulses %d/%d/%d  rank 0: %d home, %d halo\n", c->gs, rh,
               c->d.npulse[0], c->d.npulse[1], c->d.npulse[2], c->l.n, nexp);
    free(ids);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_halo");
    int nr = hx_comm_size(comm);
    int grids[16][3];
    if (hxt_grids_for(nr, grids, 16) == 0)
        return hxt_skip(comm, "no grid in the test list has this many domains");

    halo_ctx ctx = {hxt_cpu_transport(comm, HX_DOUBLE), hxt_cpu_transport(comm, HX_FLOAT), 0};
    if (!hxt_agree(comm, ctx.td && ctx.tf))
        return hxt_finish(comm);
    /* 2000 atoms at four cutoffs, and a nearly empty system (ranks without
     * atoms, empty pulses) at one. */
    const hxt_spec specs[] = {{1.25, 2000, 0, 0},
                              {2.8, 2000, 0, 0},
                              {2.8, 7, 0, 0},
                              {4.6, 2000, 0, 0},
                              {5.5, 2000, 0, 0}};
    int ncases = hxt_for_each_plan(comm, box_lo, box_len, specs, 5, 1000, halo_case, &ctx);
    HXT_CHECK(ncases > 0, "no case ran");
    HXT_CHECK(ctx.maxp >= want_max_pulses(nr), "largest pulse count %d, the cases should reach %d",
              ctx.maxp, want_max_pulses(nr));
    hx_transport_destroy(ctx.td);
    hx_transport_destroy(ctx.tf);
    return hxt_finish(comm);
}
