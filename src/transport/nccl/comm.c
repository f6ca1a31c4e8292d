/*
 * comm.c - the NCCL communicator of the NCCL transports (comm.h), and the
 * version NCCL reports.
 */
#include "transport/nccl/comm.h"

#include <stdio.h>
#include <string.h>

/* With NCCL's own last message where it has one ("invalid usage" alone
 * does not say what was invalid). */
hx_status hxi_nccl_error(int result, const char *what)
{
    const char *last = ncclGetLastError(NULL);
    if (last && *last)
        return hxi_error(HX_ERR_NCCL, "%s failed: %s (NCCL's last message: %s)", what,
                         ncclGetErrorString((ncclResult_t) result), last);
    return hxi_error(HX_ERR_NCCL, "%s failed: %s", what,
                     ncclGetErrorString((ncclResult_t) result));
}

int hxi_nccl_version_code(void)
{
    int v = 0;
    if (ncclGetVersion(&v) != ncclSuccess)
        v = 0;
    return v;
}

void hxi_nccl_version(char *buf, size_t n)
{
    int v = hxi_nccl_version_code();
    /* 2.9 on: major * 10000 + minor * 100 + patch */
    snprintf(buf, n, "NCCL %d.%d.%d", v / 10000, v / 100 % 100, v % 100);
}

hx_status hxi_nccl_comm_open(hx_transport *t, const hxi_gpu *g, ncclComm_t *out)
{
    *out = NULL;
    int shared = g->ranks_on_device > 1;
    HXI_CHECK(hxi_allreduce_int(t->comm, &shared, 1, 1));
    if (shared)
        return g->ranks_on_device > 1
                   ? hxi_gpu_refuse_shared(g, "NCCL refuses two ranks on one GPU (with or "
                                              "without MPS)")
                   : hxi_error(HX_ERR_UNSUPPORTED,
                               "transport %s: another rank shares its GPU with other processes, "
                               "which NCCL refuses; run one process per GPU, or use the mpi or "
                               "nvshmem-* transports",
                               g->who);
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    int bad = 0;
    if (g->rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&id);
        bad = r != ncclSuccess;
    }
    HXI_CHECK(hxi_allreduce_int(t->comm, &bad, 1, 1));
    if (bad)
        return hxi_error(HX_ERR_NCCL, "ncclGetUniqueId failed on rank 0");
    HXI_CHECK(hxi_bcast(t->comm, &id, sizeof id, 0));
    ncclComm_t comm = NULL;
    ncclResult_t r = ncclCommInitRank(&comm, g->nranks, id, g->rank);
    bad = r != ncclSuccess;
    HXI_CHECK(hxi_allreduce_int(t->comm, &bad, 1, 1));
    if (bad) {
        if (comm)
            ncclCommDestroy(comm);
        return r != ncclSuccess ? hxi_nccl_error(r, "ncclCommInitRank")
                                : hxi_error(HX_ERR_NCCL, "ncclCommInitRank failed on another rank");
    }
    *out = comm;
    return HX_OK;
}
