/*
 * test_auto.c - the `auto` transport measures what can run, chooses one,
 * and then moves exactly what the `cpu` reference moves.
 *
 * On a machine without a GPU every device transport refuses and `auto`
 * falls back to `cpu`; on a GPU machine it chooses a device transport. In
 * both cases its halo coordinates must equal the reference bitwise and its
 * reverse must equal the reference within 1e-6 relative.
 */
#include "hxtest.h"
#include "sysgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void check_against_cpu(hx_comm *comm, const hx_plan *plan, hx_transport *ta,
                              hx_transport *tc, uint64_t seed)
{
    int nt = hx_plan_ntotal(plan), nh = hx_plan_nhome(plan);
    double *xa = malloc((size_t) (nt + 1) * 3 * sizeof(double));
    double *xc = malloc((size_t) (nt + 1) * 3 * sizeof(double));
    double *f = malloc((size_t) (nt + 1) * 3 * sizeof(double));
    hxt_rng r = {seed + (uint64_t) hx_comm_rank(comm)};

    for (int i = 0; i < nt * 3; i++)
        f[i] = hxt_uniform(&r) - 0.5;
    if (HXT_OK(hx_transport_write(ta, HX_COORDS, 0, nh, hx_plan_coords(plan))) &&
        HXT_OK(hx_transport_write(tc, HX_COORDS, 0, nh, hx_plan_coords(plan))) &&
        HXT_OK(hx_transport_forward(ta)) && HXT_OK(hx_transport_sync(ta)) &&
        HXT_OK(hx_transport_forward(tc)) && HXT_OK(hx_transport_read(ta, HX_COORDS, 0, nt, xa)) &&
        HXT_OK(hx_transport_read(tc, HX_COORDS, 0, nt, xc))) {
        int bad = 0;
        for (int i = 0; i < nt * 3; i++)
            bad += !hxt_same_d(xa[i], xc[i]);
        HXT_CHECK(bad == 0, "%d coordinate components differ from cpu", bad);
    }
    if (HXT_OK(hx_transport_write(ta, HX_FORCES, 0, nt, f)) &&
        HXT_OK(hx_transport_write(tc, HX_FORCES, 0, nt, f)) && HXT_OK(hx_transport_reverse(ta)) &&
        HXT_OK(hx_transport_sync(ta)) && HXT_OK(hx_transport_reverse(tc)) &&
        HXT_OK(hx_transport_read(ta, HX_FORCES, 0, nh, xa)) &&
        HXT_OK(hx_transport_read(tc, HX_FORCES, 0, nh, xc))) {
        int bad = 0;
        for (int i = 0; i < nh * 3; i++)
            bad += fabs(xa[i] - xc[i]) > 1e-6 * (fabs(xc[i]) + 1e-30) + 1e-12;
        HXT_CHECK(bad == 0, "%d force components differ from cpu beyond 1e-6 relative", bad);
    }
    free(xa);
    free(xc);
    free(f);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_auto");
    int size = hx_comm_size(comm), rank = hx_comm_rank(comm);
    hx_transport_opts o;
    hx_transport *ta = NULL, *tc = NULL;

    hx_transport_opts_init(&o);
    o.name = "auto";
    o.dtype = HX_FLOAT;
    if (!HXT_OK(hx_transport_create(&ta, comm, &o)))
        return hxt_finish(comm);
    o.name = "cpu";
    if (!HXT_OK(hx_transport_create(&tc, comm, &o)))
        return hxt_finish(comm);

    /* Two systems: the second one twice as large, so auto measures again. */
    for (int pass = 0; pass < 2; pass++) {
        double lo[3] = {0, 0, 0}, len[3] = {15.0, 13.0 + 4 * pass, 17.0 + 8 * pass};
        hx_decomp d;
        hxt_sys sys;
        hxt_local loc;
        hx_plan *plan = NULL;
        int natoms = 1500 * (pass + 1);
        if (!HXT_OK(hx_decomp_init(&d, lo, len, 2.8, NULL, size, rank)))
            break;
        hxt_sys_random(&sys, natoms, lo, len, 77 + pass);
        hxt_local_take(&loc, &sys, &d);
        if (HXT_OK(hx_plan_create(&plan, comm, &d, loc.n, loc.x)) &&
            HXT_OK(hx_transport_set_plan(ta, plan)) && HXT_OK(hx_transport_set_plan(tc, plan))) {
            const char *how = hx_transport_describe(ta);
            HXT_CHECK(strncmp(how, "auto: ", 6) == 0 && strstr(how, "measured") != NULL,
                      "describe says \"%s\"", how);
            if (rank == 0)
                printf("pass %d: %s\n", pass, how);
            check_against_cpu(comm, plan, ta, tc, 1000 + pass);
        }
        hx_plan_destroy(plan);
        hxt_local_free(&loc);
        hxt_sys_free(&sys);
    }
    hx_transport_destroy(ta);
    hx_transport_destroy(tc);
    return hxt_finish(comm);
}
