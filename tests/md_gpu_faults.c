/*
 * md_gpu_faults.c - the GPU engine's runs that must fail, and how (see
 * md_gpu_faults.h): a rank that withholds an exchange in graph mode, and
 * lists built with a wrong reach of the halo. Part of test_md_gpu.
 */
#define _POSIX_C_SOURCE 200809L

#include "md_gpu_faults.h"
#include "md_gpu_util.h"
#include "md_util.h"

#include "core/hxi.h"
#include "md/gpu/md_gpu.h"

#include <stdio.h>
#include <string.h>

int hxt_md_gpu_withhold(hx_comm *comm, const hx_md_config *base, int steps, hxt_md_setup_fn setup)
{
    const int rank = hx_comm_rank(comm), size = hx_comm_size(comm);
    const int voted = base->neigh_check, every = base->neigh_every, withheld = 8;
    hx_md_config cfg = *base;
    hx_md_system sys;
    hx_md_engine *eng = NULL;
    hx_status st;
    char who[32];

    if (size < 2 || !hxt_have_transport("nvshmem-fused")) {
        if (rank == 0)
            printf("--withhold needs 2 ranks or more and the nvshmem-fused transport\n");
        return 1;
    }
    if (steps < 40)
        steps = 40;
    snprintf(cfg.transport, sizeof cfg.transport, "nvshmem-fused");
    if (!HXT_OK(setup(comm, &cfg, &sys)))
        return 0;
    /* Read when the engine creates its transport. Its step counter is one
     * ahead of the MD step (the set-up's exchange is its step 1), so the
     * transport's step `withheld` is MD step withheld - 1: a replayed one. */
    snprintf(who, sizeof who, "%d:%d", size - 1, withheld);
    hxi_knobs_set("HALOX_TIMEOUT_S", "1");
    hxi_knobs_set("HALOX_TEST_WITHHOLD", who);
    st = hx_md_engine_gpu.create(&eng, comm, &cfg, &sys);
    hxi_knobs_set("HALOX_TEST_WITHHOLD", NULL);
    hxi_knobs_set("HALOX_TIMEOUT_S", NULL);
    if (st == HX_ERR_UNSUPPORTED) {
        if (rank == 0)
            printf("nvshmem-fused refused: %s\n", hx_last_error());
        hxt_md_free(&sys, NULL);
        return 1;
    }
    if (HXT_OK(st)) {
        const char *d = hx_md_engine_gpu.describe(eng);
        int64_t failed_at = -1;
        if (rank == 0)
            printf("  %s\n", d);
        HXT_CHECK(strstr(d, "replayed from one CUDA graph") != NULL, "not in graph mode: %s", d);
        if (voted)
            HXT_CHECK(strstr(d, "voted on the GPU") != NULL, "rebuilds not voted on: %s", d);
        st = HX_OK;
        for (int s = 1; s <= steps && st == HX_OK; s++) {
            st = hx_md_engine_gpu.step(eng, s == steps);
            if (st != HX_OK)
                failed_at = s;
        }
        if (rank == 0)
            printf("  %s: rank %d withheld its step %d: the run stopped at step %lld with %s: "
                   "%s\n",
                   voted ? "every 1 check yes, voted" : "every 20", size - 1, withheld,
                   (long long) failed_at, hx_status_string(st), hx_last_error());
        /* Voted steps: the exchange of MD step withheld - 1 times out, and
         * the next vote, cut short by that timeout, stops every rank. */
        if (voted)
            HXT_CHECK(failed_at >= withheld - 1 && failed_at <= withheld + 1,
                      "the failure came back at step %lld, want one of %d .. %d",
                      (long long) failed_at, withheld - 1, withheld + 1);
        else
            HXT_CHECK(failed_at == every,
                      "the failure came back at step %lld, want the check at %d",
                      (long long) failed_at, every);
        int span[2] = {(int) failed_at, -(int) failed_at};
        HXT_OK(hxi_allreduce_int(comm, span, 2, 1));
        HXT_CHECK(span[0] == -span[1], "the ranks stopped at different steps (%d .. %d)", -span[1],
                  span[0]);
        HXT_CHECK(st == HX_ERR_TIMEOUT, "the check returned %s, want HX_ERR_TIMEOUT (%s)",
                  hx_status_string(st), hx_last_error());
        HXT_CHECK(hxg_engine_graph_steps(eng) > 0, "no step was replayed from a CUDA graph");
    }
    if (eng)
        hx_md_engine_gpu.destroy(eng);
    hxt_md_free(&sys, NULL);
    return 0;
}

void hxt_md_gpu_bad_reach(hx_comm *comm, const hx_md_config *base, hxt_md_setup_fn setup)
{
    const int every = base->neigh_every;
    hx_md_config cfg = *base;
    hx_md_system sys;
    hx_md_engine *eng = NULL;
    if (!HXT_OK(setup(comm, &cfg, &sys)))
        return;
    char shift[32];
    snprintf(shift, sizeof shift, "%g", cfg.rc + cfg.skin);
    hxi_knobs_set("HALOX_MD_CHECK", "bad-reach");
    hx_status st = hx_md_engine_gpu.create(&eng, comm, &cfg, &sys);
    hxi_knobs_set("HALOX_MD_CHECK", "all");
    if (HXT_OK(st)) {
        int64_t failed_at = -1;
        for (int s = 1; s <= every && st == HX_OK; s++) {
            st = hx_md_engine_gpu.step(eng, 0);
            if (st != HX_OK)
                failed_at = s;
        }
        if (hx_comm_rank(comm) == 0)
            printf("  halo reach moved up by %s: step %lld returned %s: %s\n", shift,
                   (long long) failed_at, hx_status_string(st), hx_last_error());
        HXT_CHECK(st == HX_ERR_STATE && failed_at == every &&
                      strstr(hx_last_error(), "list build") != NULL,
                  "the list check did not catch lists built with a wrong reach (%s at step %lld)",
                  hx_status_string(st), (long long) failed_at);
    }
    if (eng)
        hx_md_engine_gpu.destroy(eng);
    hxt_md_free(&sys, NULL);
}
