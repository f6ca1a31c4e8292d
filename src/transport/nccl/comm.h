/*
 * comm.h - what the NCCL transports (nccl, nccl-dev) share: the NCCL
 * communicator of a halox communicator, with the refusal of a shared GPU
 * that NCCL would give less clearly.
 */
#ifndef HALOX_NCCL_COMM_H
#define HALOX_NCCL_COMM_H

#include "transport/gpu/gpu.h"

#include <nccl.h>

/* Collective. Refuses (HX_ERR_UNSUPPORTED, naming the fix) where processes
 * share a GPU, which NCCL refuses; else rank 0's unique ID goes to every
 * rank over t->comm and each joins. g: opened by hxi_gpu_open. */
hx_status hxi_nccl_comm_open(hx_transport *t, const hxi_gpu *g, ncclComm_t *out);
/* The NCCL library's version code (major * 10000 + minor * 100 + patch);
 * 0 when it does not answer. */
int hxi_nccl_version_code(void);

#endif /* HALOX_NCCL_COMM_H */
