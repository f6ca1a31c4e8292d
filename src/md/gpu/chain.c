/*
 * chain.c - a fixed run of launches on one stream, sent as one CUDA graph.
 *
 * A rebuild with several ranks has runs of launches whose sizes and arrays
 * change at every rebuild: the cell sort (7 launches) and the non-local
 * lists (up to 14). A launch costs the host about what updating a whole
 * graph or launching it costs, and capturing a launch a fraction of that
 * (docs/md-gpu-timeline.md, "Launches", has the numbers), so a run costs
 * the host less as one graph than launch by launch. Each run is captured
 * on its stream, the executable of its last run is updated in place where
 * the topology is the same (cudaGraphExecUpdate), else instantiated
 * again, and launched once; the kernels keep their stream's priority. The
 * launches run in the order, on the stream and with the arguments they
 * would have had one by one.
 *
 * A run whose launches read nothing but a block of plain arguments (and
 * counts the kernels read from device memory when they run) goes through
 * hxg_chain_replay: while the arguments are the same bytes as at its last
 * capture, the executable is launched as it is, with no capture at all.
 *
 * Without graphs (HALOX_MD_GRAPH_STEPS=0), or once a capture failed on
 * this rank, the run's launches go one by one; the run is the same.
 */
#include "md/gpu/engine.h"

#include <string.h>

/* What a capture calls: the run's launches on s. */
typedef int (*chain_call)(const void *ctx, cudaStream_t s);

/* Captures call's launches on s into c's executable (updated in place, or
 * instantiated) and launches it; on failure, launches them one by one and
 * turns c off (c->off), as for every later run of c. */
static hx_status chain_capture(hx_md_engine *e, hxg_chain *c, cudaStream_t s, chain_call call,
                               const void *ctx, const char *what)
{
    c->key_bytes = 0;
    cudaGraph_t g = NULL;
    int err = 0;
    cudaError_t ce = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    if (ce == cudaSuccess) {
        err = call(ctx, s);
        ce = cudaStreamEndCapture(s, &g); /* ends the capture even after a failed launch */
    }
    if (ce == cudaSuccess && err == 0 && c->exec) {
        cudaGraphExecUpdateResultInfo info;
        if (cudaGraphExecUpdate(c->exec, g, &info) != cudaSuccess) {
            cudaGetLastError(); /* another topology: instantiated below */
            cudaGraphExecDestroy(c->exec);
            c->exec = NULL;
        }
    }
    if (ce == cudaSuccess && err == 0 && !c->exec) {
        ce = cudaGraphInstantiate(&c->exec, g, cudaGraphInstantiateFlagUseNodePriority);
        if (ce != cudaSuccess)
            c->exec = NULL;
    }
    if (g)
        cudaGraphDestroy(g);
    if (ce == cudaSuccess && err == 0) {
        CU(cudaGraphLaunch(c->exec, s), what);
        return HX_OK;
    }
    /* Not captured: this run and the later ones launch one by one (a
     * failing launch then reports its own error). */
    cudaGetLastError();
    hxg_chain_free(c);
    c->off = 1;
    hxi_warn("GPU engine: rank %d could not send %s as one CUDA graph (%s); launching its "
             "kernels one by one from now on",
             e->rank, what, cudaGetErrorString(ce != cudaSuccess ? ce : (cudaError_t) err));
    CU(call(ctx, s), what);
    return HX_OK;
}

/* hxg_chain_run's closure: the engine, the function and its argument. */
typedef struct run_ctx {
    hx_md_engine *e;
    hxg_chain_fn fn;
    const void *arg;
} run_ctx;

static int run_call(const void *ctx, cudaStream_t s)
{
    const run_ctx *r = ctx;
    return r->fn(r->e, r->arg, s);
}

hx_status hxg_chain_run(hx_md_engine *e, hxg_chain *c, cudaStream_t s, hxg_chain_fn fn,
                        const void *arg, const char *what)
{
    if (!e->graphs.allowed || c->off) {
        CU(fn(e, arg, s), what);
        return HX_OK;
    }
    const run_ctx r = {e, fn, arg};
    return chain_capture(e, c, s, run_call, &r, what);
}

/* hxg_chain_replay's closure: the function and its arguments. */
typedef struct replay_ctx {
    hxg_chain_kfn fn;
    const void *args;
} replay_ctx;

static int replay_call(const void *ctx, cudaStream_t s)
{
    const replay_ctx *r = ctx;
    return r->fn(r->args, s);
}

hx_status hxg_chain_replay(hx_md_engine *e, hxg_chain *c, cudaStream_t s, hxg_chain_kfn fn,
                           const void *args, size_t bytes, const char *what)
{
    if (bytes > sizeof c->key)
        return hxi_error(HX_ERR_STATE,
                         "GPU engine: the arguments of %s (%zu bytes) exceed the "
                         "chain's key (%zu)",
                         what, bytes, sizeof c->key);
    if (!e->graphs.allowed || c->off) {
        CU(fn(args, s), what);
        return HX_OK;
    }
    if (c->exec && c->key_bytes == bytes && memcmp(c->key, args, bytes) == 0) {
        CU(cudaGraphLaunch(c->exec, s), what);
        return HX_OK;
    }
    const replay_ctx r = {fn, args};
    HXI_CHECK(chain_capture(e, c, s, replay_call, &r, what));
    if (!c->off) { /* the executable holds this run */
        memcpy(c->key, args, bytes);
        c->key_bytes = bytes;
    }
    return HX_OK;
}

void hxg_chain_free(hxg_chain *c)
{
    if (c->exec)
        cudaGraphExecDestroy(c->exec);
    c->exec = NULL;
    c->key_bytes = 0;
}
