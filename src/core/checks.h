/*
 * checks.h - the one place of halox's error checks, a family per kind of
 * call: each macro turns a failed call into an hx_status whose message
 * names the call, and returns it; each _GOTO twin stores it in st and
 * jumps to label, for functions that must undo what they did first.
 *
 *   HXI_CHECK       an hx_status, passed up unchanged
 *   HXI_CUDA        a CUDA runtime call (cudaError_t)  -> HX_ERR_CUDA
 *   HXI_MPI         an MPI call (int)                  -> HX_ERR_MPI
 *   HXI_NCCL        an NCCL call (ncclResult_t)        -> HX_ERR_NCCL
 *   HXI_CUDA_AS     a CUDA call whose failure a layer words itself: fail(err,
 *                   what) makes the status (the MD engine's CU, the device
 *                   rebuild's HXR_CU)
 *
 * The error functions take the library's code as an int, so that this
 * header needs none of the libraries' headers; each is defined where its
 * library is (core/comm.c, transport/gpu/gpu.c, transport/nccl/nccl.c).
 * Included by core/hxi.h.
 */
#ifndef HALOX_CHECKS_H
#define HALOX_CHECKS_H

#include "halox.h"

/* HX_ERR_CUDA (the call's text, file and line) from a cudaError_t. */
hx_status hxi_cuda_error(int err, const char *what, const char *file, int line);
/* HX_ERR_MPI with MPI's text of the error code. */
hx_status hxi_mpi_error(int rc, const char *what);
/* HX_ERR_NCCL with NCCL's text of the result. */
hx_status hxi_nccl_error(int result, const char *what);

/* The shape every family shares: evaluate once, test, make the status. */
#define HXI_CHECK_AS_(type, call, failed, make)                                                    \
    do {                                                                                           \
        type hxi_v_ = (call);                                                                      \
        if (failed)                                                                                \
            return make;                                                                           \
    } while (0)
#define HXI_CHECK_GOTO_AS_(type, call, failed, make, st, label)                                    \
    do {                                                                                           \
        type hxi_v_ = (call);                                                                      \
        if (failed) {                                                                              \
            (st) = make;                                                                           \
            goto label;                                                                            \
        }                                                                                          \
    } while (0)

#define HXI_CHECK(call) HXI_CHECK_AS_(hx_status, call, hxi_v_ != HX_OK, hxi_v_)
/* (st takes the call's status, HX_OK too.) */
#define HXI_CHECK_GOTO(call, st, label)                                                            \
    do {                                                                                           \
        (st) = (call);                                                                             \
        if ((st) != HX_OK)                                                                         \
            goto label;                                                                            \
    } while (0)

#define HXI_CUDA(call)                                                                             \
    HXI_CHECK_AS_(int, (int) (call), hxi_v_ != 0, hxi_cuda_error(hxi_v_, #call, __FILE__, __LINE__))
#define HXI_CUDA_GOTO(call, st, label)                                                             \
    HXI_CHECK_GOTO_AS_(int, (int) (call), hxi_v_ != 0,                                             \
                       hxi_cuda_error(hxi_v_, #call, __FILE__, __LINE__), st, label)

#define HXI_MPI(call) HXI_CHECK_AS_(int, call, hxi_v_ != 0, hxi_mpi_error(hxi_v_, #call))
#define HXI_MPI_GOTO(call, st, label)                                                              \
    HXI_CHECK_GOTO_AS_(int, call, hxi_v_ != 0, hxi_mpi_error(hxi_v_, #call), st, label)

#define HXI_NCCL(call)                                                                             \
    HXI_CHECK_AS_(int, (int) (call), hxi_v_ != 0, hxi_nccl_error(hxi_v_, #call))
#define HXI_NCCL_GOTO(call, st, label)                                                             \
    HXI_CHECK_GOTO_AS_(int, (int) (call), hxi_v_ != 0, hxi_nccl_error(hxi_v_, #call), st, label)

#define HXI_CUDA_AS(call, fail, what)                                                              \
    HXI_CHECK_AS_(int, (int) (call), hxi_v_ != 0, fail(hxi_v_, what))
#define HXI_CUDA_AS_GOTO(call, fail, what, st, label)                                              \
    HXI_CHECK_GOTO_AS_(int, (int) (call), hxi_v_ != 0, fail(hxi_v_, what), st, label)

#endif /* HALOX_CHECKS_H */
