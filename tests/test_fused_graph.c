/*
 * test_fused_graph: graph mode as a user would use it. One CUDA graph,
 * captured on the caller's stream (opts.stream), holds a whole MD-like
 * step: hx_transport_forward, a "force kernel" (f = x over all atoms,
 * halo included: a device copy), hx_transport_reverse, and an "update"
 * (home coordinates = home forces). Replayed K times, each replay must be
 * the next step (the step counter lives on the device), and the result
 * after every replay must equal the cpu transport doing the same sequence:
 * bitwise for push and pull, within 1e-5 relative for atomic. Capture
 * itself proves forward and reverse do no host synchronisation.
 *
 * Also: opts.graph is refused by a transport that cannot be captured,
 * hx_transport_step_graph needs opts.graph, and a peer that withholds a
 * step inside a replayed graph (test hook) makes its receivers report
 * HX_ERR_TIMEOUT at hx_transport_sync instead of hanging.
 */
#define _POSIX_C_SOURCE 200809L
#include "fused_util.h"

#include "core/hxi.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPLAYS 6

static const double rh = 2.8;

/* The user-captured step, checked after every replay against the cpu. */
static void user_graph(hx_comm *comm, const hx_plan *plan, const char *name, const char *fmode)
{
    int rank = hx_comm_rank(comm);
    int nh = hx_plan_nhome(plan), nt = hx_plan_ntotal(plan);
    cudaStream_t s = NULL;
    int ok = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess;
    HXT_CHECK(ok, "cudaStreamCreateWithFlags");
    if (!hxt_agree(comm, ok))
        return;
    hxt_fz_var v;
    if (!hxt_fz_create(comm, &v, name, fmode, 0, 10.0, s)) {
        cudaStreamDestroy(s);
        return;
    }
    hx_transport *cpu = hxt_cpu_transport(comm, HX_FLOAT);
    ok = cpu != NULL && HXT_OK(hx_transport_set_plan(cpu, plan));
    ok &= HXT_OK(hx_transport_set_plan(v.t, plan));
    double *got = malloc((size_t) (nt + 1) * 3 * sizeof(double));
    double *zero = calloc((size_t) (nt + 1) * 3, sizeof(double));
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    if (hxt_agree(comm, ok)) {
        float *xc = hx_transport_coords(cpu), *fc = hx_transport_forces(cpu);
        const double *x0 = hx_plan_coords(plan);
        for (int i = 0; i < nh * 3; i++)
            xc[i] = (float) x0[i];
        ok = HXT_OK(hx_transport_write(v.t, HX_COORDS, 0, nh, x0));
        ok &= HXT_OK(hx_transport_write(v.t, HX_COORDS, nh, nt - nh, zero));
        ok &= HXT_OK(hx_transport_write(v.t, HX_FORCES, 0, nt, zero));
        float *x = hx_transport_coords(v.t), *f = hx_transport_forces(v.t);
        cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
        if (e == cudaSuccess) {
            ok &= HXT_OK(hx_transport_forward(v.t));
            e = cudaMemcpyAsync(f, x, (size_t) nt * 3 * sizeof(float), cudaMemcpyDeviceToDevice, s);
            ok &= HXT_OK(hx_transport_reverse(v.t));
            cudaError_t e2 =
                cudaMemcpyAsync(x, f, (size_t) nh * 3 * sizeof(float), cudaMemcpyDeviceToDevice, s);
            cudaError_t e3 = cudaStreamEndCapture(s, &graph);
            e = e != cudaSuccess ? e : e2 != cudaSuccess ? e2 : e3;
        }
        if (e == cudaSuccess)
            e = cudaGraphInstantiate(&exec, graph, 0);
        HXT_CHECK(e == cudaSuccess, "%s: capturing forward, copy, reverse, copy: %s", v.label,
                  cudaGetErrorString(e));
        ok &= e == cudaSuccess;
        ok &= HXT_OK(hxi_barrier(comm));
        for (int k = 0; k < REPLAYS && hxt_agree(comm, ok); k++) {
            /* The cpu does what the graph does. */
            ok &= HXT_OK(hx_transport_forward(cpu));
            memcpy(fc, xc, (size_t) nt * 3 * sizeof(float));
            ok &= HXT_OK(hx_transport_reverse(cpu));
            memcpy(xc, fc, (size_t) nh * 3 * sizeof(float));

            e = cudaGraphLaunch(exec, s);
            HXT_CHECK(e == cudaSuccess, "cudaGraphLaunch: %s", cudaGetErrorString(e));
            ok &= e == cudaSuccess && HXT_OK(hx_transport_sync(v.t));
            for (int which = 0; ok && which < 2; which++) {
                if (!HXT_OK(hx_transport_read(v.t, which ? HX_FORCES : HX_COORDS, 0, nt, got))) {
                    ok = 0;
                    break;
                }
                const float *want = which ? fc : xc;
                int bad = 0, bitwise = strcmp(fmode, "atomic") != 0;
                for (int i = 0; i < nt * 3; i++) {
                    int good = bitwise ? hxt_same_f((float) got[i], want[i])
                                       : fabs(got[i] - want[i]) <= 1e-5 * fabs(want[i]) + 1e-6;
                    if (!good && bad++ < 3)
                        fprintf(stderr, "[rank %d] %s replay %d: %s %d.%d is %.9g, cpu %.9g\n",
                                rank, v.label, k + 1, which ? "force" : "coordinate", i / 3, i % 3,
                                got[i], (double) want[i]);
                }
                HXT_CHECK(bad == 0, "%s replay %d: %d of %d %s differ", v.label, k + 1, bad, nt * 3,
                          which ? "forces" : "coordinates");
                ok &= bad == 0;
            }
        }
        int all = hxt_agree(comm, ok); /* collective: on every rank */
        if (rank == 0)
            printf("%s: user graph of forward + copy + reverse + copy, %d replays: %s\n", v.label,
                   REPLAYS, all ? "ok" : "FAILED");
    }
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    hx_transport_destroy(cpu);
    hx_transport_destroy(v.t);
    cudaStreamDestroy(s);
    free(got);
    free(zero);
}

/* Rank 1 withholds its coordinate sends in step 2 of a replayed graph:
 * whoever receives straight from it must get HX_ERR_TIMEOUT from sync. */
static void graph_timeout(hx_comm *comm, const hx_plan *plan)
{
    int rank = hx_comm_rank(comm);
    hxi_knobs_set("HALOX_TEST_WITHHOLD", "1:2");
    hxt_fz_var v;
    int made = hxt_fz_create(comm, &v, "nvshmem-fused", "push", 0, 0.5, NULL);
    hxi_knobs_set("HALOX_TEST_WITHHOLD", "");
    if (!made)
        return;
    int from_w = 0;
    for (int p = 0; p < hx_plan_npulses(plan); p++)
        from_w |= hx_plan_pulse(plan, p)->recv_rank == 1 && hx_plan_pulse(plan, p)->nrecv > 0;
    if (hxt_agree(comm, HXT_OK(hx_transport_set_plan(v.t, plan)))) {
        for (int step = 1; step <= 2; step++) {
            hx_status st = hx_transport_step_graph(v.t);
            if (st == HX_OK)
                st = hx_transport_sync(v.t);
            if (step == 1) {
                HXT_CHECK(st == HX_OK, "graph step 1: %s", hx_last_error());
            } else {
                HXT_CHECK(st == HX_OK || st == HX_ERR_TIMEOUT, "graph step 2: %s: %s",
                          hx_status_string(st), hx_last_error());
                if (from_w && rank != 1)
                    HXT_CHECK(st == HX_ERR_TIMEOUT && strstr(hx_last_error(), "waited"),
                              "rank %d receives from rank 1, which withheld step 2 of a replayed "
                              "graph, but got %s: %s",
                              rank, hx_status_string(st), hx_last_error());
                if (st != HX_OK)
                    printf("[rank %d] withheld graph step: %s\n", rank, hx_last_error());
            }
            (void) hxi_barrier(comm);
        }
    }
    hx_transport_destroy(v.t);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_fused_graph");
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress shows even when a run is cut short */
    int nranks = hx_comm_size(comm), rank = hx_comm_rank(comm);
    if (!hxt_fz_have_gpu(comm))
        return hxt_skip(comm, "no CUDA device visible here (the fused transports need one)");
    if (nranks < 2)
        return hxt_skip(comm, "needs 2 ranks or more");

    /* Refusals: host-side, no collective involved. */
    {
        hx_transport_opts o;
        hx_transport_opts_init(&o);
        o.name = "cpu";
        o.graph = 1;
        hx_transport *t = NULL;
        HXT_FAILS(hx_transport_create(&t, comm, &o), HX_ERR_UNSUPPORTED, "graph");
        HXT_CHECK(t == NULL, "a refused transport was returned");
    }

    /* Grid: the densest pulse structure this rank count allows. */
    int grid[3] = {1, 1, nranks};
    if (nranks == 4)
        grid[0] = grid[1] = 2, grid[2] = 1;
    else if (nranks == 8)
        grid[0] = grid[1] = grid[2] = 2;
    double lo[3] = {0, 0, 0}, len[3];
    for (int d = 0; d < 3; d++)
        len[d] = grid[d] >= 3 ? 2.1 * grid[d] : 12.0;
    hx_decomp d;
    hx_plan *plan = NULL;
    if (hxt_agree(comm, HXT_OK(hx_decomp_init(&d, lo, len, rh, grid, nranks, rank)))) {
        hxt_sys s;
        hxt_local l;
        hxt_sys_random(&s, (int) (0.8442 * len[0] * len[1] * len[2]), lo, len, 5150u);
        hxt_local_take(&l, &s, &d);
        int ok = HXT_OK(hx_plan_create(&plan, comm, &d, l.n, l.x));
        hxt_local_free(&l);
        hxt_sys_free(&s);
        if (!hxt_agree(comm, ok)) {
            hx_plan_destroy(plan);
            plan = NULL;
        }
    }
    if (plan) {
        /* A transport made without graph mode refuses a graph step. It also
         * keeps NVSHMEM alive while the others come and go: NVSHMEM cannot
         * start again in a process once the last user has closed it. */
        hx_transport_opts o;
        hx_transport_opts_init(&o);
        o.name = "nvshmem-fused";
        hx_transport *keeper = NULL;
        hx_status st = hx_transport_create(&keeper, comm, &o);
        if (hxt_agree(comm, st == HX_OK)) {
            if (hxt_agree(comm, HXT_OK(hx_transport_set_plan(keeper, plan))))
                HXT_FAILS(hx_transport_step_graph(keeper), HX_ERR_STATE, "opts.graph");
            user_graph(comm, plan, "nvshmem-fused", "push");
            user_graph(comm, plan, "nvshmem-fused", "pull");
            user_graph(comm, plan, "nvshmem-fused", "atomic");
            user_graph(comm, plan, "nvshmem-fused-tma", "push");
            graph_timeout(comm, plan);
        } else {
            HXT_CHECK(st == HX_OK || st == HX_ERR_UNSUPPORTED, "create: %s", hx_last_error());
            if (rank == 0)
                printf("nvshmem-fused: not run: %s\n", hx_last_error());
        }
        hx_transport_destroy(keeper);
    }
    hx_plan_destroy(plan);
    return hxt_finish(comm);
}
