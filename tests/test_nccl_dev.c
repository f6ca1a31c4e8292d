/*
 * test_nccl_dev: the nccl-dev transport where its exchange cannot run.
 * Processes sharing a GPU: it must refuse (NCCL would), with
 * HX_ERR_UNSUPPORTED and a message naming the fix, on every rank. One
 * rank: it must start (NCCL communicator, windows), adopt a plan (no
 * pulses on one rank), run empty steps and a step graph, grow its arrays
 * with a second plan, and say that it holds no NCCL window (NCCL 2.28
 * gives a one-rank communicator no symmetric memory, so a one-rank
 * nccl-dev uses device memory of its own). Its own arrays reach
 * themselves through its peer table (hxi_ncd_self_check), the check that
 * with several ranks also shows a window and its LSA mapping alias. Its
 * exchange against `cpu` is test_fused_exchange --transport nccl-dev, on
 * one GPU per rank.
 */
#include "hxtest.h"
#include "sysgen.h"

#include "transport/nccl_dev/ncd.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_nccl_dev");
    int nranks = hx_comm_size(comm), rank = hx_comm_rank(comm);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess)
        ndev = 0;
    if (!hxt_agree(comm, ndev > 0))
        return hxt_skip(comm, "no CUDA device visible here (nccl-dev needs one per rank)");

    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.name = "nccl-dev";
    o.graph = 1;
    o.timeout_s = 5.0;
    hx_transport *t = NULL;
    hx_status st = hx_transport_create(&t, comm, &o);
    /* One node: processes share a GPU where there are more than GPUs. */
    if (nranks > ndev) {
        HXT_CHECK(st == HX_ERR_UNSUPPORTED, "%d ranks on %d GPU(s): create returned %s, not a "
                  "refusal", nranks, ndev, hx_status_string(st));
        HXT_CHECK(strstr(hx_last_error(), "share GPU") && strstr(hx_last_error(), "one process "
                                                                                  "per GPU"),
                  "the refusal does not name the fix: %s", hx_last_error());
        if (rank == 0)
            printf("refused as it must be: %s\n", hx_last_error());
        if (t)
            hx_transport_destroy(t);
        return hxt_finish(comm);
    }
    if (nranks > 1) {
        if (t)
            hx_transport_destroy(t);
        return hxt_skip(comm, "one GPU per rank: test_fused_exchange --transport nccl-dev "
                              "checks the exchange");
    }
    if (!HXT_OK(st))
        return hxt_finish(comm);
    printf("%s\n", hx_transport_describe(t));
    HXT_CHECK(strstr(hx_transport_describe(t), "one rank, nothing to exchange") != NULL,
              "one rank: the description does not say it exchanges nothing: %s",
              hx_transport_describe(t));

    double lo[3] = {0, 0, 0}, len[3] = {8, 8, 8};
    int grid[3] = {1, 1, 1};
    hx_decomp d;
    hx_plan *plan = NULL;
    hxt_sys s;
    hxt_local l;
    if (HXT_OK(hx_decomp_init(&d, lo, len, 2.5, grid, 1, 0))) {
        hxt_sys_random(&s, 400, d.box_lo, d.box_len, 99u);
        hxt_local_take(&l, &s, &d);
        if (HXT_OK(hx_plan_create(&plan, comm, &d, l.n, l.x)) &&
            HXT_OK(hx_transport_set_plan(t, plan))) {
            HXT_CHECK(hx_plan_npulses(plan) == 0, "one rank: %d pulses", hx_plan_npulses(plan));
            HXT_OK(hxi_ncd_self_check(t));
            for (int step = 0; step < 3; step++) {
                HXT_OK(hx_transport_forward(t));
                HXT_OK(hx_transport_reverse(t));
                HXT_OK(hx_transport_sync(t));
            }
            HXT_OK(hx_transport_step_graph(t));
            HXT_OK(hx_transport_sync(t));
            /* A second plan twice the size: the windows grow, keeping nothing wrong. */
            hx_plan *next = NULL;
            hxt_local l2;
            hxt_sys s2;
            hxt_sys_random(&s2, 900, d.box_lo, d.box_len, 7u);
            hxt_local_take(&l2, &s2, &d);
            if (HXT_OK(hx_plan_create(&next, comm, &d, l2.n, l2.x)) &&
                HXT_OK(hx_transport_set_plan(t, next))) {
                HXT_OK(hxi_ncd_self_check(t));
                hx_plan_destroy(plan);
                plan = next;
            } else {
                hx_plan_destroy(next);
            }
            hxt_local_free(&l2);
            hxt_sys_free(&s2);
        }
        hxt_local_free(&l);
        hxt_sys_free(&s);
    }
    hx_transport_destroy(t);
    hx_plan_destroy(plan);
    return hxt_finish(comm);
}
