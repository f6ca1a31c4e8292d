/*
 * halox_example.c - libhalox on CPU ranks, in a few lines: decompose a box,
 * plan the halo of a small lattice, move coordinates forward and forces
 * back with the `cpu` transport, and check one halo atom.
 *
 *     mpirun -n 2 ./halox_example      (one process: no halo, nothing to check)
 */
#include <halox.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, ": %s\n", hx_last_error());                                                \
        return 1;                                                                                  \
    } while (0)

int main(int argc, char **argv)
{
    hx_comm *comm;
    if (hx_init(&argc, &argv) != HX_OK || hx_comm_create(&comm, NULL) != HX_OK)
        FAIL("cannot start");
    int rank = hx_comm_rank(comm), nranks = hx_comm_size(comm);

    /* A cubic box of 12, a lattice of spacing 1 (sites at integer + 0.5),
     * a halo cutoff of 2.8 (a pair cutoff of 2.5 plus a skin of 0.3). */
    const double lo[3] = {0, 0, 0}, len[3] = {12, 12, 12}, rh = 2.8;
    hx_decomp d;
    if (hx_decomp_init(&d, lo, len, rh, NULL, nranks, rank) != HX_OK)
        FAIL("decomposition");
    double *x = malloc(12 * 12 * 12 * 3 * sizeof(double));
    int n = 0;
    for (int i = 0; i < 12 * 12 * 12; i++) {
        double p[3] = {i % 12 + 0.5, i / 12 % 12 + 0.5, i / 144 + 0.5};
        if (hx_decomp_owner(&d, p) == rank) {
            for (int k = 0; k < 3; k++)
                x[3 * n + k] = p[k];
            n++;
        }
    }

    hx_plan *plan;
    if (hx_plan_create(&plan, comm, &d, n, x) != HX_OK)
        FAIL("plan");
    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.name = "cpu";
    o.dtype = HX_DOUBLE;
    hx_transport *t;
    if (hx_transport_create(&t, comm, &o) != HX_OK || hx_transport_set_plan(t, plan) != HX_OK)
        FAIL("cpu transport");
    int nhome = hx_plan_nhome(plan), ntotal = hx_plan_ntotal(plan);
    double *tx = hx_transport_coords(t), *tf = hx_transport_forces(t);
    for (int i = 0; i < 3 * nhome; i++)
        tx[i] = x[i];
    if (hx_transport_forward(t) != HX_OK)
        FAIL("forward");

    /* A halo atom is a lattice site (shifted by a box length where it came
     * across the periodic boundary) within the cutoff above this domain. */
    int ok = 1;
    if (ntotal > nhome) {
        const double *h = tx + 3 * (size_t) nhome;
        for (int k = 0; k < 3; k++) {
            double frac = h[k] - floor(h[k]);
            ok &= fabs(frac - 0.5) < 1e-12;
            if (d.grid[k] > 1)
                ok &= h[k] >= d.dom_lo[k] && h[k] < d.dom_hi[k] + rh;
        }
        printf("rank %d: %d home, %d halo atoms; halo atom 0 at (%g, %g, %g): %s\n", rank, nhome,
               ntotal - nhome, h[0], h[1], h[2], ok ? "ok" : "WRONG");
    } else {
        printf("rank %d: %d home atoms, no halo (one rank: nothing decomposed)\n", rank, nhome);
    }

    /* Forces back: a unit force on every halo atom goes to its owner. */
    for (int i = 0; i < 3 * ntotal; i++)
        tf[i] = i >= 3 * nhome && i % 3 == 0 ? 1.0 : 0.0;
    if (hx_transport_reverse(t) != HX_OK)
        FAIL("reverse");
    double back = 0;
    for (int i = 0; i < nhome; i++)
        back += tf[3 * i];
    printf("rank %d: %g units of force came back to its home atoms\n", rank, back);

    hx_transport_destroy(t);
    hx_plan_destroy(plan);
    hx_comm_destroy(comm);
    hx_finalize();
    free(x);
    return ok ? 0 : 1;
}
