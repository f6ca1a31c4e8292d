/*
 * bench_field.c - halox-bench --field (bench_field.h): a step whose forward
 * carries one float per atom with the coordinates, to set beside the
 * step with the coordinates alone.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_field.h"

#include "core/hxi.h"
#include "transport/transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HALOX_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* The field's array, ntotal + 1 floats of zero, where t's arrays live. */
static hx_status field_alloc(hx_transport *t, int ntotal, void **a)
{
    const size_t bytes = ((size_t) ntotal + 1) * sizeof(float);
    *a = NULL;
    if (!hx_transport_on_device(t)) {
        *a = calloc(1, bytes);
        return *a ? HX_OK : hxi_error(HX_ERR_NOMEM, "halox-bench --field: %zu bytes", bytes);
    }
#ifdef HALOX_HAVE_CUDA
    if (cudaMalloc(a, bytes) != cudaSuccess || cudaMemset(*a, 0, bytes) != cudaSuccess) {
        (void) cudaGetLastError();
        return hxi_error(HX_ERR_NOMEM, "halox-bench --field: cudaMalloc of %zu bytes", bytes);
    }
    return HX_OK;
#else
    return hxi_error(HX_ERR_UNSUPPORTED, "halox-bench --field: device arrays need CUDA");
#endif
}

static void field_free(hx_transport *t, void *a)
{
    if (!hx_transport_on_device(t))
        free(a);
#ifdef HALOX_HAVE_CUDA
    else
        cudaFree(a);
#endif
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

hx_status bench_graph_launch(hx_transport *t, const bench_graph *g)
{
#ifdef HALOX_HAVE_CUDA
    return cudaGraphLaunch((cudaGraphExec_t) g->exec, (cudaStream_t) t->stream) == cudaSuccess
               ? HX_OK
               : hxi_error(HX_ERR_CUDA, "halox-bench: cudaGraphLaunch failed");
#else
    (void) t, (void) g;
    return hxi_error(HX_ERR_UNSUPPORTED, "halox-bench: graphs need CUDA");
#endif
}

hx_status bench_graph_capture(hx_transport *t, bench_enqueue fn, void *ctx, bench_graph *g)
{
#ifdef HALOX_HAVE_CUDA
    cudaStream_t s = (cudaStream_t) t->stream;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    hx_status st = fn(t, ctx);
    if (st == HX_OK)
        st = hx_transport_sync(t);
    if (st != HX_OK || cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
        return st != HX_OK ? st : hxi_error(HX_ERR_CUDA, "halox-bench: cannot begin a capture");
    st = fn(t, ctx);
    char why[256];
    snprintf(why, sizeof why, "%s", hx_last_error());
    const cudaError_t e = cudaStreamEndCapture(s, &graph);
    g->graph = graph;
    if (st == HX_OK && e == cudaSuccess && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
        g->exec = exec;
        g->on = 1;
    } else if (st == HX_OK) {
        st = hxi_error(HX_ERR_CUDA, "halox-bench: the captured step failed (%s)",
                       cudaGetErrorString(e));
    } else {
        st = hxi_error(st, "not captured: %s", why);
    }
    return st;
#else
    (void) t, (void) fn, (void) ctx, (void) g;
    return hxi_error(HX_ERR_UNSUPPORTED, "halox-bench: graphs need CUDA");
#endif
}

void bench_graph_free(bench_graph *g)
{
#ifdef HALOX_HAVE_CUDA
    if (g->exec)
        cudaGraphExecDestroy((cudaGraphExec_t) g->exec);
    if (g->graph)
        cudaGraphDestroy((cudaGraph_t) g->graph);
#endif
    memset(g, 0, sizeof *g);
}

/* The step with the field: its id, and whether a reverse follows (not on
 * a full-shell plan). */
typedef struct field_ctx {
    int id, reverse;
} field_ctx;

static hx_status field_enqueue(hx_transport *t, void *ctx)
{
    const field_ctx *c = ctx;
    hx_status st = hx_transport_fields_forward(t, &c->id, 1, 1);
    return st == HX_OK && c->reverse ? hx_transport_reverse(t) : st;
}

/* One step from a barrier to the sync: the slowest rank's seconds. */
static hx_status field_step(hx_comm *comm, hx_transport *t, field_ctx *c, const bench_graph *g,
                            double *dt)
{
    hx_status st = hxi_barrier(comm);
    const double t0 = hxi_now();
    if (st == HX_OK)
        st = g->on ? bench_graph_launch(t, g) : field_enqueue(t, c);
    if (st == HX_OK)
        st = hx_transport_sync(t);
    *dt = hxi_now() - t0;
    st = hxi_agree(comm, st);
    return st == HX_OK ? hxi_allreduce_double(comm, dt, 1, 1) : st;
}

hx_status bench_field_time(hx_comm *comm, hx_transport *t, const hx_plan *plan, int graph,
                           int warmup, int iters, double us[3], char *err, size_t errlen)
{
    void *a = NULL;
    double *times = NULL;
    field_ctx c = {-1, !hx_plan_full_shell(plan)};
    bench_graph g;
    memset(&g, 0, sizeof g);
    hx_field f = {&a, sizeof(float)};
    hx_status st = (hx_transport_caps(t) & HX_CAP_FIELDS)
                       ? HX_OK
                       : hxi_error(HX_ERR_UNSUPPORTED, "carries no fields (HX_CAP_FIELDS)");
    if (st == HX_OK)
        st = field_alloc(t, hx_plan_ntotal(plan), &a);
    if (st == HX_OK)
        st = hxi_alloc((void **) &times, (size_t) iters * sizeof(double), "timings");
    if (st == HX_OK)
        st = hx_transport_field_add(t, &f, HX_FIELD_FLOAT, 1, &c.id);
    st = hxi_agree(comm, st);
    if (st == HX_OK && graph)
        st = hxi_agree(comm, bench_graph_capture(t, field_enqueue, &c, &g));
    for (int it = 0; st == HX_OK && it < warmup + iters; it++) {
        double dt = 0.0;
        st = field_step(comm, t, &c, &g, &dt);
        if (it >= warmup)
            times[it - warmup] = dt;
    }
    if (st == HX_OK) {
        qsort(times, (size_t) iters, sizeof(double), cmp_double);
        us[0] =
            1e6 * (iters % 2 ? times[iters / 2] : 0.5 * (times[iters / 2 - 1] + times[iters / 2]));
        us[1] = 1e6 * times[0];
        us[2] = 1e6 * times[(int) (0.9 * (iters - 1))];
    } else {
        snprintf(err, errlen, "%s: %s", hx_status_string(st), hx_last_error());
    }
    bench_graph_free(&g);
    if (c.id >= 0)
        hx_transport_field_remove(t, c.id);
    field_free(t, a);
    free(times);
    return st;
}
