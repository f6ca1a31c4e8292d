/*
 * md_gpu_util.h - what the GPU engine's C tests (test_md_gpu.c,
 * test_md_gpu_types.c) share: whether every rank sees a CUDA device, and
 * the NVSHMEM transport kept alive while their engines come and go.
 * Header only, for tests built with CUDA.
 */
#ifndef HALOX_TESTS_MD_GPU_UTIL_H
#define HALOX_TESTS_MD_GPU_UTIL_H

#include "hxtest.h"

#include "core/hxi.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

/* 0 where every rank sees a CUDA device (the smallest device count over
 * the ranks: the max of the negatives); else the exit code main returns
 * (77, skipped, said on rank 0; or the failure's). Collective. */
static inline int hxt_gpu_unavailable(hx_comm *comm)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess)
        ndev = 0;
    int neg = -ndev;
    if (!HXT_OK(hxi_allreduce_int(comm, &neg, 1, 1)))
        return hxt_finish(comm);
    if (-neg <= 0)
        return hxt_skip(comm, "no CUDA device visible to every rank: the GPU engine needs a GPU");
    return 0;
}

/* NVSHMEM cannot start again in a process once its last transport is
 * gone: a transport of the first peer-to-peer kind built, for the caller
 * to keep while engines come and go (NULL where none starts; rank 0 says
 * why). Collective. */
static inline hx_transport *hxt_gpu_keeper(hx_comm *comm)
{
    hx_transport *keeper = NULL;
    for (int t = 0; t < hx_transport_count(); t++) {
        const char *name = hx_transport_name_at(t);
        if (!(hx_transport_caps_of(name) & HX_CAP_PEER))
            continue;
        hx_transport_opts o;
        hx_transport_opts_init(&o);
        o.name = name;
        if (hx_transport_create(&keeper, comm, &o) != HX_OK) {
            keeper = NULL;
            if (hx_comm_rank(comm) == 0)
                printf("no NVSHMEM transport here: %s\n", hx_last_error());
        }
        break;
    }
    return keeper;
}

/* Whether transport `name` is built. */
static inline int hxt_have_transport(const char *name)
{
    for (int t = 0; t < hx_transport_count(); t++)
        if (strcmp(hx_transport_name_at(t), name) == 0)
            return 1;
    return 0;
}

#endif /* HALOX_TESTS_MD_GPU_UTIL_H */
