/*
 * bench_field.h - halox-bench --field: the exchange step with one 4-byte
 * per-atom field carried forward together with the coordinates
 * (bench_field.c).
 */
#ifndef HALOX_BENCH_FIELD_H
#define HALOX_BENCH_FIELD_H

#include "halox.h"

/* A step captured once in a CUDA graph on a transport's stream, to be
 * replayed (cudaGraph_t and cudaGraphExec_t where CUDA is). */
typedef struct bench_graph {
    void *graph, *exec;
    int on;
} bench_graph;

/* Enqueues one step of t (ctx: the caller's). */
typedef hx_status (*bench_enqueue)(hx_transport *t, void *ctx);

/* Runs one step of fn launched and waits for it (so that it has sized what
 * it needs), then captures another on t's stream into g. Rank-local; an
 * error says why the step was not captured. */
hx_status bench_graph_capture(hx_transport *t, bench_enqueue fn, void *ctx, bench_graph *g);
/* Enqueues one replay of g on t's stream. */
hx_status bench_graph_launch(hx_transport *t, const bench_graph *g);
void bench_graph_free(bench_graph *g);

/* Times warmup + iters steps of t on plan, each hx_transport_fields_forward
 * of one float field with the coordinates, then hx_transport_reverse unless
 * the plan is full shell (hx_plan_full_shell: nothing goes back) (graph:
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
