/*
 * bench_field.h - halox-bench --field: the exchange step with one 4-byte
 * per-atom field carried forward together with the coordinates
 * (bench_field.c).
 */
#ifndef HALOX_BENCH_FIELD_H
#define HALOX_BENCH_FIELD_H

#include "halox.h"

/* Times warmup + iters steps of t on plan, each hx_transport_fields_forward
 * of one float field with the coordinates, then hx_transport_reverse (graph:
 * the two captured once in a CUDA graph on the transport's stream and
 * replayed, for a transport in graph mode): the
 * slowest rank per step; us[0], us[1], us[2] get the median, minimum and
 * 90th percentile (microseconds). The field
 * is a device array on a device transport, a host one otherwise, and is
 * registered for the run only. Collective; an error leaves its text in
 * err. */
hx_status bench_field_time(hx_comm *comm, hx_transport *t, const hx_plan *plan, int graph,
                           int warmup, int iters, double us[3], char *err, size_t errlen);

#endif /* HALOX_BENCH_FIELD_H */
