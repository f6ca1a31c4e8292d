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

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_halo");
    int nr = hx_comm_size(comm), rank = hx_comm_rank(comm);
    int grids[16][3];
    int ng = hxt_grids_for(nr, grids, 16);
    if (ng == 0)
        return hxt_skip(comm, "no grid in the test list has this many domains");

    /* One pair of transports for all plans: set_plan must adopt plans of
     * every size in turn. */
    hx_transport *td = hxt_cpu_transport(comm, HX_DOUBLE);
    hx_transport *tf = hxt_cpu_transport(comm, HX_FLOAT);
    if (!hxt_agree(comm, td && tf))
        return hxt_finish(comm);

    const double rhs[] = {1.25, 2.8, 4.6, 5.5};
    const int natoms[] = {2000, 7};
    int maxp = 0, ncases = 0;
    uint64_t seed = 1000;
    for (int g = 0; g < ng; g++)
        for (size_t ci = 0; ci < sizeof rhs / sizeof rhs[0]; ci++)
            for (size_t ni = 0; ni < sizeof natoms / sizeof natoms[0]; ni++) {
                /* A nearly empty system (ranks without atoms, empty pulses)
                 * at one cutoff only. */
                if (natoms[ni] < 100 && ci != 1)
                    continue;
                double rh = rhs[ci];
                char gs[32];
                hxt_grid_str(grids[g], gs);
                hx_decomp d;
                if (!hxt_agree(comm,
                               HXT_OK(hx_decomp_init(&d, box_lo, box_len, rh, grids[g], nr, rank))))
                    continue;
                hxt_sys s;
                hxt_sys_random(&s, natoms[ni], box_lo, box_len, seed++);
                hxt_local l;
                hxt_local_take(&l, &s, &d);
                hx_plan *plan = NULL;
                int ok = HXT_OK(hx_plan_create(&plan, comm, &d, l.n, l.x));
                if (hxt_agree(comm, ok)) {
                    const hx_decomp *pd = hx_plan_decomp(plan);
                    HXT_CHECK(pd->rank == rank && pd->grid[0] == grids[g][0] &&
                                  pd->grid[1] == grids[g][1] && pd->grid[2] == grids[g][2] &&
                                  pd->cutoff == rh,
                              "plan decomp differs from the one given");
                    HXT_CHECK(hx_plan_nhome(plan) == l.n, "nhome %d, gave %d", hx_plan_nhome(plan),
                              l.n);
                    int nexp = 0;
                    int64_t *ids = hxt_check_halo(comm, plan, &s, l.id, td, tf, &nexp);
                    int decomposed = grids[g][0] * grids[g][1] * grids[g][2] > 1;
                    /* The brute force must have found something to compare
                     * wherever a halo exists; 2000 atoms fill every face. */
                    if (natoms[ni] >= 1000)
                        HXT_CHECK(decomposed ? nexp > 0 : nexp == 0,
                                  "grid %s rh %g: brute force expects %d halo atoms", gs, rh, nexp);
                    for (int k = 0; k < 3; k++)
                        if (d.npulse[k] > maxp)
                            maxp = d.npulse[k];
                    if (rank == 0 && natoms[ni] >= 1000)
                        printf("  grid %-6s rh %-4g pulses %d/%d/%d  rank 0: %d home, %d halo\n",
                               gs, rh, d.npulse[0], d.npulse[1], d.npulse[2], l.n, nexp);
                    ncases++;
                    free(ids);
                }
                if (ok)
                    hx_plan_destroy(plan);
                hxt_local_free(&l);
                hxt_sys_free(&s);
            }
    HXT_CHECK(ncases > 0, "no case ran");
    HXT_CHECK(maxp >= want_max_pulses(nr), "largest pulse count %d, the cases should reach %d",
              maxp, want_max_pulses(nr));
    hx_transport_destroy(td);
    hx_transport_destroy(tf);
    return hxt_finish(comm);
}
