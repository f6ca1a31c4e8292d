/*
 * bench_floor.h - the floor of a step and halox-bench pingpong
 * (bench_floor.c): ping-pongs of ranks 0 and 1 through nvshmem-fused's
 * probe. Without NVSHMEM neither measures anything.
 */
#ifndef HALOX_BENCH_FLOOR_H
#define HALOX_BENCH_FLOOR_H

#include "halox.h"

#include <stddef.h>

/* The floor of a step of t on plan (an nvshmem-fused transport of newton
 * on): 2 x (the one-way time of the plan's halo bytes + a signal per
 * further pulse), into *floor_us, with its line for the table in text
 * (cap bytes). Leaves both as they are with one rank, without NVSHMEM, or
 * where the probe fails (said on stderr). Collective. */
void bench_floor_measure(hx_comm *comm, hx_transport *t, const hx_plan *plan, double *floor_us,
                         char *text, size_t cap);

/* `halox-bench pingpong [--sizes LIST] [--iters N]`: the one-way time of
 * each size; 0 on success, 2 on bad arguments, 1 otherwise. Collective. */
int bench_pingpong(hx_comm *comm, int argc, char **argv);

#endif /* HALOX_BENCH_FLOOR_H */
