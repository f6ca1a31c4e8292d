/*
 * mpi.h - the `mpi` transport's extra, for halox-bench: where the time of
 * each pulse goes (host wall times, summed since the last reset).
 */
#ifndef HALOX_TRANSPORT_MPI_H
#define HALOX_TRANSPORT_MPI_H

#include "halox.h"

typedef struct hxi_mpi_pulse_times {
    double pack;   /* pack kernel launch and device-to-host copy enqueue */
    double sync;   /* cudaStreamSynchronize before MPI */
    double mpi;    /* MPI_Isend/Irecv posted until both completed */
    double unpack; /* host-to-device copy and unpack kernel enqueue */
    long count;
} hxi_mpi_pulse_times;

/* Copies the sums for coordinates (fwd) and forces (rev), npulses each;
 * returns the pulse count, or -1 when t is not the mpi transport. */
int hxi_mpi_times(const hx_transport *t, hxi_mpi_pulse_times *fwd, hxi_mpi_pulse_times *rev);
void hxi_mpi_times_reset(hx_transport *t);

#endif /* HALOX_TRANSPORT_MPI_H */
