/*
 * mpi.h - the `mpi` transport's extras, for halox-bench and the tests:
 * which mode it runs in, and where the time of each pulse goes (host wall
 * times, summed since the last reset).
 */
#ifndef HALOX_TRANSPORT_MPI_H
#define HALOX_TRANSPORT_MPI_H

#include "halox.h"

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

#endif /* HALOX_TRANSPORT_MPI_H */
