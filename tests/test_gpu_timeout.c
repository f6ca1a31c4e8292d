/*
 * test_gpu_timeout: a rank that does not send must make its receivers fail
 * with HX_ERR_TIMEOUT and a message, never hang. Rank 1 skips its
 * coordinate sends in step 3 (the library's test hook
 * HALOX_TEST_WITHHOLD=RANK:STEP); with a 0.5 s
 * timeout, every rank that receives coordinates straight from rank 1 must
 * report the timeout by the end of step 3, and every rank must come back.
 * Steps 1 and 2 must succeed everywhere. Every GPU transport built is
 * tried (all created up front: NVSHMEM starts once per process).
 */
#define _POSIX_C_SOURCE 200809L
#include "sysgen.h"

#include "core/hxi.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT          8
#define WITHHOLD_RANK 1
#define WITHHOLD_STEP 3

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_gpu_timeout");
    int nranks = hx_comm_size(comm), rank = hx_comm_rank(comm);
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (!hxt_agree(comm, e == cudaSuccess && ndev > 0))
        return hxt_skip(comm, "no CUDA device visible here (the GPU transports need one)");
    if (nranks < 2)
        return hxt_skip(comm, "needs at least 2 ranks");
    char buf[32];
    snprintf(buf, sizeof buf, "%d:%d", WITHHOLD_RANK, WITHHOLD_STEP);
    if (!HXT_OK(hxi_knobs_set("HALOX_TEST_WITHHOLD", buf)))
        return hxt_finish(comm);

    int grid[8][3];
    if (hxt_grids_for(nranks, grid, 8) < 1)
        return hxt_skip(comm, "no grid for this rank count");
    double lo[3] = {0, 0, 0}, len[3] = {12.0, 12.0, 12.0};
    hx_decomp d;
    if (!hxt_agree(comm, HXT_OK(hx_decomp_init(&d, lo, len, 2.8, grid[0], nranks, rank))))
        return hxt_finish(comm);
    hxt_sys s;
    hxt_local l;
    hxt_sys_random(&s, 1400, lo, len, 4242u);
    hxt_local_take(&l, &s, &d);
    hx_plan *plan = NULL;
    if (!hxt_agree(comm, HXT_OK(hx_plan_create(&plan, comm, &d, l.n, l.x))))
        return hxt_finish(comm);
    int from_w = 0; /* this rank receives coordinates straight from rank 1 */
    for (int p = 0; p < hx_plan_npulses(plan); p++) {
        const hx_pulse *q = hx_plan_pulse(plan, p);
        from_w |= q->recv_rank == WITHHOLD_RANK && q->nrecv > 0;
    }

    hx_transport *ts[MAXT];
    char labels[MAXT][32];
    int nt = 0;
    /* auto times its candidates at set_plan, where the withheld step
     * would fall; each candidate is tested here on its own. */
    hxt_tvariant v[MAXT];
    const int nv = hxt_transport_variants(0, HX_CAP_HOST | HX_CAP_CHOOSES, 0, v, MAXT);
    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.timeout_s = 0.5;
    for (int k = 0; k < nv; k++) {
        hx_transport *t = hxt_transport_try(comm, &o, &v[k]);
        if (!t)
            continue;
        snprintf(labels[nt], sizeof labels[nt], "%s", v[k].label);
        ts[nt++] = t;
    }
    for (int k = 0; k < nt; k++) {
        hx_transport *t = ts[k];
        if (!hxt_agree(comm, HXT_OK(hx_transport_set_plan(t, plan))))
            continue;
        for (int step = 1; step <= WITHHOLD_STEP; step++) {
            HXT_OK(hx_transport_write(t, HX_COORDS, 0, hx_plan_nhome(plan), hx_plan_coords(plan)));
            hx_status st = hx_transport_forward(t);
            hx_status st2 = hx_transport_reverse(t);
            hx_status st3 = hx_transport_sync(t);
            hx_status first = st != HX_OK ? st : st2 != HX_OK ? st2 : st3;
            char msg[512];
            snprintf(msg, sizeof msg, "%s", first != HX_OK ? hx_last_error() : "");
            if (step < WITHHOLD_STEP) {
                HXT_CHECK(first == HX_OK, "%s step %d: %s", labels[k], step, msg);
            } else {
                if (rank == 0 || first != HX_OK)
                    printf("[rank %d] %s step %d: %s %s\n", rank, labels[k], step,
                           hx_status_string(first), msg);
                HXT_CHECK(first == HX_OK || first == HX_ERR_TIMEOUT, "%s: %s: %s", labels[k],
                          hx_status_string(first), msg);
                if (from_w && rank != WITHHOLD_RANK) {
                    HXT_CHECK(first == HX_ERR_TIMEOUT,
                              "%s: rank %d receives from rank %d, which withheld step %d, but "
                              "got %s",
                              labels[k], rank, WITHHOLD_RANK, WITHHOLD_STEP,
                              hx_status_string(first));
                    HXT_CHECK(strstr(msg, "waited") && strstr(msg, "did not send"),
                              "%s: timeout message lacks who waited for what: '%s'", labels[k],
                              msg);
                }
            }
            /* Every rank takes the same path to the next transport. */
            (void) hxi_barrier(comm);
        }
    }
    for (int k = nt - 1; k >= 0; k--)
        hx_transport_destroy(ts[k]);
    hx_plan_destroy(plan);
    hxt_local_free(&l);
    hxt_sys_free(&s);
    return hxt_finish(comm);
}
