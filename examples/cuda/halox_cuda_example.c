/*
 * halox_cuda_example.c - any GPU transport of libhalox on device arrays:
 * the halo of a small lattice moves forward and forces come back in GPU
 * memory, as an MD code's kernels would hand them over; one halo atom is
 * checked against the `cpu` transport on the same plan.
 *
 *     mpirun -n 2 ./halox_cuda_example [transport]    (default: auto)
 *
 * Plain C with the CUDA runtime API: the transport's arrays are device
 * pointers (float, 3 per atom), filled and read with cudaMemcpy here.
 */
#include <halox.h>

#include <cuda_runtime_api.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    const char *name = argc > 1 ? argv[1] : "auto";
    if (!(hx_transport_caps_of(name) & (HX_CAP_DEVICE | HX_CAP_CHOOSES))) {
        fprintf(stderr, "%s is not a GPU transport of this build; built: ", name);
        for (int i = 0; i < hx_transport_count(); i++)
            fprintf(stderr, "%s ", hx_transport_name_at(i));
        fprintf(stderr, "\n");
        return 2;
    }

    const double lo[3] = {0, 0, 0}, len[3] = {12, 12, 12}, rh = 2.8;
    hx_decomp d;
    if (hx_decomp_init(&d, lo, len, rh, NULL, nranks, rank) != HX_OK)
        FAIL("decomposition");
    double *x = malloc(12 * 12 * 12 * 3 * sizeof(double));
    int n = 0;
    for (int i = 0; i < 12 * 12 * 12; i++) {
        double p[3] = {i % 12 + 0.5, i / 12 % 12 + 0.5, i / 144 + 0.5};
        if (hx_decomp_owner(&d, p) == rank) {
            memcpy(x + 3 * n, p, sizeof p);
            n++;
        }
    }
    hx_plan *plan;
    if (hx_plan_create(&plan, comm, &d, n, x) != HX_OK)
        FAIL("plan");
    int nhome = hx_plan_nhome(plan), ntotal = hx_plan_ntotal(plan);

    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.name = name;
    o.dtype = HX_FLOAT;
    hx_transport *t, *ref;
    if (hx_transport_create(&t, comm, &o) != HX_OK || hx_transport_set_plan(t, plan) != HX_OK)
        FAIL("transport %s", name);
    if (!hx_transport_on_device(t)) { /* auto, where no GPU transport can run */
        fprintf(stderr, "%s keeps its arrays in host memory here (%s): no GPU to run on?\n", name,
                hx_transport_describe(t));
        return 2;
    }
    o.name = "cpu";
    if (hx_transport_create(&ref, comm, &o) != HX_OK || hx_transport_set_plan(ref, plan) != HX_OK)
        FAIL("cpu transport");

    /* Home coordinates into the device array, as a force kernel's input. */
    float *hx = malloc(((size_t) ntotal + 1) * 3 * sizeof(float));
    for (int i = 0; i < 3 * nhome; i++)
        hx[i] = (float) x[i];
    float *dx = hx_transport_coords(t);
    if (cudaMemcpy(dx, hx, (size_t) nhome * 3 * sizeof(float), cudaMemcpyHostToDevice) !=
        cudaSuccess)
        FAIL("cudaMemcpy to the device");
    memcpy(hx_transport_coords(ref), hx, (size_t) nhome * 3 * sizeof(float));
    if (hx_transport_forward(t) != HX_OK || hx_transport_sync(t) != HX_OK ||
        hx_transport_forward(ref) != HX_OK)
        FAIL("forward");
    if (cudaMemcpy(hx, dx, (size_t) ntotal * 3 * sizeof(float), cudaMemcpyDeviceToHost) !=
        cudaSuccess)
        FAIL("cudaMemcpy from the device");
    const float *rx = hx_transport_coords(ref);
    int ok = 1;
    for (int i = 3 * nhome; i < 3 * ntotal; i++)
        ok &= hx[i] == rx[i];
    if (ntotal > nhome)
        printf("rank %d: %s [%s]: %d halo atoms; halo atom 0 at (%g, %g, %g), as the cpu "
               "transport's: %s\n",
               rank, name, hx_transport_describe(t), ntotal - nhome, hx[3 * nhome],
               hx[3 * nhome + 1], hx[3 * nhome + 2], ok ? "yes" : "NO");
    else
        printf("rank %d: no halo (one rank: nothing decomposed)\n", rank);

    /* Forces back: a unit force on every halo atom. */
    for (int i = 0; i < 3 * ntotal; i++)
        hx[i] = i >= 3 * nhome && i % 3 == 0 ? 1.0f : 0.0f;
    float *df = hx_transport_forces(t);
    if (cudaMemcpy(df, hx, (size_t) ntotal * 3 * sizeof(float), cudaMemcpyHostToDevice) !=
        cudaSuccess)
        FAIL("cudaMemcpy to the device");
    memcpy(hx_transport_forces(ref), hx, (size_t) ntotal * 3 * sizeof(float));
    if (hx_transport_reverse(t) != HX_OK || hx_transport_sync(t) != HX_OK ||
        hx_transport_reverse(ref) != HX_OK)
        FAIL("reverse");
    if (cudaMemcpy(hx, df, (size_t) nhome * 3 * sizeof(float), cudaMemcpyDeviceToHost) !=
        cudaSuccess)
        FAIL("cudaMemcpy from the device");
    const float *rf = hx_transport_forces(ref);
    for (int i = 0; i < 3 * nhome; i++)
        ok &= fabsf(hx[i] - rf[i]) <= 1e-6f * fmaxf(fabsf(rf[i]), 1.0f);
    printf("rank %d: forces back %s\n", rank, ok ? "as the cpu transport's" : "DIFFER");

    hx_transport_destroy(ref);
    hx_transport_destroy(t);
    hx_plan_destroy(plan);
    hx_comm_destroy(comm);
    hx_finalize();
    free(hx);
    free(x);
    return ok ? 0 : 1;
}
