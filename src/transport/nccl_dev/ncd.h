/*
 * ncd.h - the nccl-dev transport's C view of NCCL's device API
 * (ncd_kernels.cu, C++ because nccl_device.h is) and its test hook.
 */
#ifndef HALOX_NCD_H
#define HALOX_NCD_H

#include "halox.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Ranks in this rank's LSA team (the ranks it reaches by load/store). */
int hxi_ncd_lsa_size(ncclComm_t comm);
/* The LSA index of world rank `rank`, -1 when it is not in this rank's team. */
int hxi_ncd_lsa_index(ncclComm_t comm, int rank);
/* One thread on stream s writes, for i < n, where LSA peer i's part of
 * window w starts in this process (ncclGetLsaPointer) to out[i] (device). */
cudaError_t hxi_ncd_bases(cudaStream_t s, ncclWindow_t w, int n, void **out);

/* The device communicator NCCL's device API asks for before windows are
 * used from kernels (no barriers or GIN requested): an ncclResult_t, and
 * *out an opaque ncclDevComm on success. Collective over comm. */
int hxi_ncd_devcomm_create(ncclComm_t comm, void **out);
void hxi_ncd_devcomm_destroy(ncclComm_t comm, void *devcomm);

/* Test hook (tests/test_nccl_dev.c): writes a pattern into this rank's own
 * coordinates through its LSA pointer and reads it back through the local
 * one; HX_OK when they agree (the window and its LSA mapping alias). */
hx_status hxi_ncd_self_check(hx_transport *t);

#ifdef __cplusplus
}
#endif

#endif /* HALOX_NCD_H */
