/*
 * mpi_impl.h - state of the `mpi` transport shared by its two files:
 * mpi.c (modes, plan hand-over, the host-staged and CUDA-aware pulses) and
 * mpi_ipc.c (the same-node GPU-direct mode over CUDA IPC). Not installed.
 */
#ifndef HALOX_TRANSPORT_MPI_IMPL_H
#define HALOX_TRANSPORT_MPI_IMPL_H

#include "transport/gpu/gpu.h"
#include "transport/probes.h"

#include <mpi.h>

/* How data moves between the ranks of one pulse. */
typedef struct mpi_path {
    const char *name;
    hx_mpi_mode mode;
    int host_staged; /* messages use pinned host buffers */
    int ipc;         /* peer copies into CUDA IPC mappings; MPI carries only ready/done */
} mpi_path;

/* One peer buffer mapped into this process (cudaIpcOpenMemHandle). */
typedef struct mpi_ipc_map {
    cudaIpcMemHandle_t handle;
    int peer;
    void *ptr;
    int used; /* by the current plan */
} mpi_ipc_map;

typedef struct mpi_ipc {
    int *node;       /* node number of each rank (the lowest rank of its node) */
    int all_on_node; /* every rank of the communicator shares one node */
    mpi_ipc_map *maps;
    int nmaps, maps_cap;
    int exported;                 /* our buffers were handed out at least once */
    float *peer_x[HX_MAX_PULSES]; /* send_rank's coordinates at our atoms' offset */
    float *peer_f[HX_MAX_PULSES]; /* recv_rank's force inbox of this pulse */
    /* Message words: the step, sent as "ready" and "done"; what came in. */
    uint64_t out;
    uint64_t in_ready[HX_MAX_PULSES], in_done[HX_MAX_PULSES];
} mpi_ipc;

typedef struct mpi_impl {
    hxi_gpu g;
    MPI_Comm comm; /* a duplicate: this transport's messages match only its own */
    const mpi_path *path;
    int recv_pos[HX_MAX_PULSES]; /* first received atom of pulse p among all received */
    float *d_send;               /* packed coordinates, then received forces: total_send */
    size_t d_send_cap;           /* floats */
    float *h_send, *h_recv;      /* pinned: total_send and total_recv atoms */
    size_t h_send_cap, h_recv_cap;
    mpi_ipc ipc;
    hxi_mpi_pulse_times tf[HX_MAX_PULSES], tr[HX_MAX_PULSES];
} mpi_impl;

/* Waits, bounded by the timeout, for n requests, the first nrecv of them
 * receives. On expiry the receives are cancelled, the sends freed, and the
 * transport fails with the standard timeout message naming peer and why. */
hx_status hxi_mpi_wait(mpi_impl *m, MPI_Request *r, int n, int nrecv, int p, int kind, int peer,
                       const char *why);

/* Collective. Learns which ranks share this node and whether CUDA IPC works
 * between them (a ring of handle openings inside the node, and peer access
 * between the GPUs of the node that this process sees). *ok is the same on
 * every rank; when 0, *why says what failed and where. */
hx_status hxi_mpi_ipc_probe(hx_transport *t, mpi_impl *m, int *ok, char *why, size_t whylen);
/* Closes every mapping of a peer's buffer. Call on every rank, and meet the
 * others, before any of them frees a buffer it handed out. */
void hxi_mpi_ipc_unmap_all(mpi_impl *m);
/* Collective: hands the peers of every pulse the IPC handles of our
 * coordinates and force inbox, maps theirs (keeping mappings that did not
 * change), checks that every write stays inside the peer's buffer, and
 * agrees on the outcome. */
hx_status hxi_mpi_ipc_exchange(hx_transport *t, mpi_impl *m);
/* One pulse of coordinates or forces in the IPC mode. */
hx_status hxi_mpi_ipc_coords(hx_transport *t, mpi_impl *m, int p, int withhold);
hx_status hxi_mpi_ipc_forces(hx_transport *t, mpi_impl *m, int p);
/* At destroy: unmaps, then meets the peers (bounded) so that nobody frees
 * what another process still maps. Returns 0 when the meeting timed out:
 * the caller then leaks its exported buffers rather than free them. */
int hxi_mpi_ipc_close(mpi_impl *m);

#endif /* HALOX_TRANSPORT_MPI_IMPL_H */
