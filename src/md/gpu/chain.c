/*
 * chain.c - a fixed run of launches on one stream, sent as one CUDA graph.
 *
 * A kernel launch costs the host about 3.4 us on the GPU machines, where
 * capturing one costs about 0.6 us, updating an executable graph about 3 us
 * and launching it about 3 us (docs/md-gpu.md, "Launches"). A rebuild with
 * several ranks has runs of launches whose sizes and arrays change at every
 * rebuild: the cell sort (9 launches) and the non-local lists (up to 15).
 * Each run is captured on its stream, the executable of its last run is
 * updated in place where the topology is the same (cudaGraphExecUpdate),
 * else instantiated again, and launched once; the kernels keep their
 * stream's priority. The launches run in the order, on the stream and with
 * the arguments they would have had one by one.
 *
 * Without graphs (HALOX_MD_GRAPH=0), or once a capture failed on this rank,
 * the run's launches go one by one; the run is the same.
 */
#include "md/gpu/engine.h"

hx_status hxg_chain_run(hx_md_engine *e, hxg_chain *c, cudaStream_t s, hxg_chain_fn fn,
                        const void *arg, const char *what)
{
    if (!e->graph_allowed || c->off) {
        CU(fn(e, arg, s), what);
        return HX_OK;
    }
    cudaGraph_t g = NULL;
    int err = 0;
    cudaError_t ce = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    if (ce == cudaSuccess) {
        err = fn(e, arg, s);
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
    CU(fn(e, arg, s), what);
    return HX_OK;
}

void hxg_chain_free(hxg_chain *c)
{
    if (c->exec)
        cudaGraphExecDestroy(c->exec);
    c->exec = NULL;
}
