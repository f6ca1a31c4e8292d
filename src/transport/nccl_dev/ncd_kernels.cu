/*
 * ncd_kernels.cu - what nccl-dev asks of NCCL's device API (ncd.h): the
 * LSA team's reach and where each LSA peer's window lies. The fused kernels
 * (transport/fused/) then take these pointers as they take NVSHMEM's.
 */
#include "transport/nccl_dev/ncd.h"

#include <nccl_device.h>

#include <cstring>
#include <new>

static __global__ void hxi_k_ncd_bases(ncclWindow_t w, int n, void **out)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        for (int i = 0; i < n; i++)
            out[i] = ncclGetLsaPointer(w, 0, i);
}

extern "C" cudaError_t hxi_ncd_bases(cudaStream_t s, ncclWindow_t w, int n, void **out)
{
    hxi_k_ncd_bases<<<1, 32, 0, s>>>(w, n, out);
    return cudaGetLastError();
}

extern "C" int hxi_ncd_lsa_size(ncclComm_t comm)
{
    return ncclTeamLsa(comm).nRanks;
}

extern "C" int hxi_ncd_lsa_index(ncclComm_t comm, int rank)
{
    const ncclTeam_t lsa = ncclTeamLsa(comm), world = ncclTeamWorld(comm);
    if (rank < 0 || rank >= world.nRanks || !ncclTeamRankIsMember(lsa, world, rank))
        return -1;
    return ncclTeamRankToTeam(lsa, world, rank);
}

extern "C" int hxi_ncd_devcomm_create(ncclComm_t comm, void **out)
{
    *out = NULL;
    ncclDevComm_t *dc = new (std::nothrow) ncclDevComm_t();
    if (!dc)
        return (int) ncclSystemError;
    ncclDevCommRequirements_t reqs;
    memset(&reqs, 0, sizeof reqs);
    ncclResult_t r = ncclDevCommCreate(comm, &reqs, dc);
    if (r != ncclSuccess) {
        delete dc;
        return (int) r;
    }
    *out = dc;
    return (int) ncclSuccess;
}

extern "C" void hxi_ncd_devcomm_destroy(ncclComm_t comm, void *devcomm)
{
    ncclDevComm_t *dc = (ncclDevComm_t *) devcomm;
    if (!dc)
        return;
    (void) ncclDevCommDestroy(comm, dc);
    delete dc;
}
