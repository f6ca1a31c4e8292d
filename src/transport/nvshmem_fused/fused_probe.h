/*
 * fused_probe.h - the floor probe of the fused transports, for halox-bench:
 * a signal ping-pong between ranks 0 and 1 through a live nvshmem-fused(-tma)
 * transport's NVSHMEM, with the publish pattern of one pulse.
 */
#ifndef HALOX_FUSED_PROBE_H
#define HALOX_FUSED_PROBE_H

#include "halox.h"

/* Collective over the transport's communicator. Ranks 0 and 1 play
 * ping-pong `iters` rounds (after a warm-up), each round carrying `bytes`
 * (rounded up to whole floats; 0: the signal alone) one way and back,
 * stored by as many blocks as the fused kernels would use; *oneway_us (rank
 * 0, then broadcast) is half a round: one publish of `bytes` plus the
 * signal's latency. Needs load/store access between ranks 0 and 1. */
hx_status hxi_fused_pingpong(hx_transport *t, long bytes, int iters, double *oneway_us);

/* The force mode used when HALOX_FUSED_FORCE_MODE is not set. */
const char *hxi_fused_default_force_mode(void);

#endif /* HALOX_FUSED_PROBE_H */
