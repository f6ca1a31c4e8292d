/*
 * probes.h - what the transports show of themselves to halox-bench and the
 * tests, beyond the public API: the `mpi` transport's mode and where the
 * time of each pulse goes (host wall times, summed since the last reset),
 * and the floor probe of the fused transports (a signal ping-pong between
 * ranks 0 and 1 through a live nvshmem-fused(-tma) transport's NVSHMEM, with
 * the publish pattern of one pulse). Each is defined where its transport
 * is built (mpi/mpi.c, nvshmem_fused/fused.c).
 */
#ifndef HALOX_TRANSPORT_PROBES_H
#define HALOX_TRANSPORT_PROBES_H

#include "halox.h"

/* ------------------------------------------------------------------ mpi */

typedef struct hxi_mpi_pulse_times {
    double pack;   /* pack kernel launch (and device-to-host copy enqueue when staged) */
    double sync;   /* cudaStreamSynchronize before MPI */
    double mpi;    /* MPI: the data messages, or the ready and done messages (ipc) */
    double copy;   /* ipc: peer copy enqueue and its stream sync; 0 otherwise */
    double unpack; /* host-to-device copy and unpack kernel enqueue */
    long count;
} hxi_mpi_pulse_times;

/* Copies the sums for coordinates (fwd) and forces (rev), npulses each;
 * returns the pulse count, or -1 when t is not the mpi transport. */
int hxi_mpi_times(const hx_transport *t, hxi_mpi_pulse_times *fwd, hxi_mpi_pulse_times *rev);
void hxi_mpi_times_reset(hx_transport *t);

/* The mode t runs in (HX_MPI_CUDA_AWARE, HX_MPI_IPC or HX_MPI_STAGED; never
 * HX_MPI_AUTO), or -1 when t is not the mpi transport. */
int hxi_mpi_mode_of(const hx_transport *t);
/* "cuda-aware", "ipc", "staged", "auto" (the names HALOX_MPI_MODE takes). */
const char *hxi_mpi_mode_name(int mode);

/* ------------------------------------------------- nvshmem-fused(-tma) */

/* Collective over the transport's communicator. Ranks 0 and 1 play
 * ping-pong `iters` rounds (after a warm-up), each round carrying `bytes`
 * (rounded up to whole floats; 0: the signal alone) one way and back,
 * stored by as many blocks as the fused kernels would use; *oneway_us (rank
 * 0, then broadcast) is half a round: one publish of `bytes` plus the
 * signal's latency. Needs load/store access between ranks 0 and 1. */
hx_status hxi_fused_pingpong(hx_transport *t, long bytes, int iters, double *oneway_us);

/* The force mode used when HALOX_FUSED_FORCE_MODE is not set. */
const char *hxi_fused_default_force_mode(void);

#endif /* HALOX_TRANSPORT_PROBES_H */
