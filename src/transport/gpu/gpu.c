/*
 * gpu.c - device plumbing shared by the GPU transports.
 */
#define _POSIX_C_SOURCE 200809L
#include "transport/gpu/gpu.h"

#include <cuda.h> /* CUmoduleLoadingMode; the entry point comes through the runtime */
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HALOX_HAVE_MPI
#include <mpi.h>
#endif

hx_status hxi_cuda_error(int err, const char *what, const char *file, int line)
{
    cudaError_t e = (cudaError_t) err;
    hx_status st = (e == cudaErrorMemoryAllocation) ? HX_ERR_NOMEM : HX_ERR_CUDA;
    return hxi_error(st, "%s failed: %s (%s) at %s:%d", what, cudaGetErrorString(e),
                     cudaGetErrorName(e), file, line);
}

hx_status hxi_gpu_malloc(void **p, size_t bytes, const char *what)
{
    *p = NULL;
    if (bytes == 0)
        bytes = 16;
    cudaError_t e = cudaMalloc(p, bytes);
    if (e != cudaSuccess) {
        (void) cudaGetLastError();
        *p = NULL;
        return hxi_error(
            HX_ERR_NOMEM,
            "cudaMalloc of %zu bytes for %s failed: %s; use fewer atoms per GPU or more GPUs",
            bytes, what, cudaGetErrorString(e));
    }
    return HX_OK;
}

hx_status hxi_gpu_host_malloc(void **p, size_t bytes, const char *what)
{
    *p = NULL;
    if (bytes == 0)
        bytes = 16;
    cudaError_t e = cudaHostAlloc(p, bytes, cudaHostAllocDefault);
    if (e != cudaSuccess) {
        (void) cudaGetLastError();
        *p = NULL;
        return hxi_error(HX_ERR_NOMEM, "cudaHostAlloc of %zu bytes for %s failed: %s", bytes, what,
                         cudaGetErrorString(e));
    }
    return HX_OK;
}

hx_status hxi_gpu_grow(void **p, size_t *cap, size_t need, size_t alloc, const char *what)
{
    if (*p && need <= *cap)
        return HX_OK;
    if (*p)
        cudaFree(*p); /* waits for the device: growth is rare */
    *p = NULL;
    *cap = 0;
    HXI_CHECK(hxi_gpu_malloc(p, alloc > need ? alloc : need, what));
    *cap = alloc > need ? alloc : need;
    return HX_OK;
}

hx_status hxi_gpu_regrow(void **p, size_t atoms, size_t keep, const char *what)
{
    void *n = NULL;
    HXI_CHECK(hxi_gpu_malloc(&n, atoms * 3 * sizeof(float), what));
    if (*p && keep > 0) {
        cudaError_t e = cudaMemcpy(n, *p, keep * 3 * sizeof(float), cudaMemcpyDeviceToDevice);
        if (e != cudaSuccess) {
            cudaFree(n);
            return hxi_cuda_error(e, "cudaMemcpy (keeping data while growing)", __FILE__, __LINE__);
        }
    }
    if (*p)
        cudaFree(*p);
    *p = n;
    return HX_OK;
}

/* An MPS control daemon leaves its pipe here while it runs. */
static int mps_running(void)
{
    const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
    DIR *d = opendir((dir && *dir) ? dir : "/tmp/nvidia-mps");
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL)
        found = strncmp(e->d_name, "control", 7) == 0;
    closedir(d);
    return found;
}

/* 1 when this process loads CUDA kernels lazily (CUDA's default since
 * 12.2), as the driver reports it; without an answer, as the environment
 * says. */
static int lazy_loading(void)
{
    CUresult (*get)(CUmoduleLoadingMode *) = NULL;
    enum cudaDriverEntryPointQueryResult q;
    CUmoduleLoadingMode mode;
    if (cudaGetDriverEntryPointByVersion("cuModuleGetLoadingMode", (void **) &get, 11070,
                                         cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess && get && get(&mode) == CUDA_SUCCESS)
        return mode == CU_MODULE_LAZY_LOADING;
    (void) cudaGetLastError();
    const char *env = getenv("CUDA_MODULE_LOADING");
    return !(env && strcmp(env, "EAGER") == 0);
}

hx_status hxi_gpu_open(hxi_gpu *g, hx_transport *t, const char *who)
{
    hx_status st = HX_OK;
    memset(g, 0, sizeof *g);
    g->who = who;
    g->failed = HX_OK;
    g->rank = hx_comm_rank(t->comm);
    g->nranks = hx_comm_size(t->comm);

    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev <= 0) {
        (void) cudaGetLastError();
        /* Agree, so that no rank waits in a collective the others skip. */
        int bad = 1;
        HXI_CHECK(hxi_allreduce_int(t->comm, &bad, 1, 1));
        return hxi_error(HX_ERR_UNSUPPORTED,
                         "transport %s: no CUDA device is visible on rank %d (%s); run on a "
                         "machine with a GPU or use the cpu transport",
                         who, g->rank, e == cudaSuccess ? "device count 0" : cudaGetErrorString(e));
    }
    int bad = 0;
    HXI_CHECK(hxi_allreduce_int(t->comm, &bad, 1, 1));
    if (bad)
        return hxi_error(HX_ERR_UNSUPPORTED,
                         "transport %s: another rank sees no CUDA device; every rank needs one",
                         who);

    const hxi_node_map *node = NULL;
    HXI_CHECK(hxi_comm_node_map(t->comm, &node)); /* the GPU engine's count too */
    g->local_rank = node->local_rank;
    g->device = g->local_rank % ndev;
    HXI_CUDA(cudaSetDevice(g->device));
    struct cudaDeviceProp prop;
    HXI_CUDA(cudaGetDeviceProperties(&prop, g->device));
    g->sm_count = prop.multiProcessorCount;

    /* Who shares my GPU: the device UUID is unique across nodes. */
    HXI_CHECK(
        hxi_count_alike(t->comm, prop.uuid.bytes, sizeof prop.uuid.bytes, &g->ranks_on_device));
    g->mps = mps_running();
    /* Processes sharing a GPU and loading kernels lazily can stall each
     * other's exchanges (hx_init in halox.h): say so once, on rank 0. */
    int lazy_shared = g->ranks_on_device > 1 && lazy_loading();
    HXI_CHECK(hxi_allreduce_int(t->comm, &lazy_shared, 1, 1));
    static int warned;
    if (lazy_shared && g->rank == 0 && !warned) {
        warned = 1;
        hxi_warn("transport %s: processes share a GPU and CUDA loads their kernels lazily: a "
                 "kernel's first launch can wait for the kernels already running there, an "
                 "exchange waiting on its peer among them, until that exchange times out; set "
                 "CUDA_MODULE_LOADING=EAGER (hx_init does unless the environment sets it)",
                 who);
    }

    /* > 0 and finite: hx_transport_create saw to it (HALOX_TIMEOUT_S or 5 s
     * where opts left it 0) */
    g->timeout_s = t->opts.timeout_s;
    g->timeout_ns = (uint64_t) (g->timeout_s * 1e9);

    if (t->opts.stream) {
        g->stream = (cudaStream_t) t->opts.stream;
    } else {
        /* A blocking stream: work the caller puts on the legacy default
         * stream (cudaMemcpy into our arrays) is ordered with ours. */
        HXI_CUDA(cudaStreamCreate(&g->stream));
        g->own_stream = 1;
    }
    t->stream = (void *) g->stream;
    HXI_CUDA_GOTO(cudaHostAlloc((void **) &g->rec_h, sizeof *g->rec_h, cudaHostAllocMapped), st,
                  fail);
    memset((void *) g->rec_h, 0, sizeof *g->rec_h);
    HXI_CUDA_GOTO(cudaHostGetDevicePointer((void **) &g->rec_d, g->rec_h, 0), st, fail);
    HXI_CHECK_GOTO(hxi_gpu_malloc((void **) &g->d_hit, sizeof(int), "the timeout flag"), st, fail);
    HXI_CUDA_GOTO(cudaMemset(g->d_hit, 0, sizeof(int)), st, fail);

    g->withhold_rank = hxi_knobs()->test_withhold[0];
    g->plan_wait = hxi_knobs()->plan_wait;
    g->withhold_step = (uint64_t) hxi_knobs()->test_withhold[1];
    return HX_OK;
fail:
    hxi_gpu_close(g);
    return st;
}

void hxi_gpu_close(hxi_gpu *g)
{
    if (g->stream)
        (void) cudaStreamSynchronize(g->stream);
    if (g->own_stream && g->stream)
        cudaStreamDestroy(g->stream);
    g->stream = NULL;
    if (g->rec_h)
        cudaFreeHost(g->rec_h);
    if (g->d_hit)
        cudaFree(g->d_hit);
    if (g->d_maps)
        cudaFree(g->d_maps);
    g->rec_h = NULL;
    g->d_hit = NULL;
    g->d_maps = NULL;
    g->maps = NULL;
}

hx_status hxi_gpu_upload_plan(hxi_gpu *g, const hx_plan *plan)
{
    int np = hx_plan_npulses(plan);
    size_t total = 0;
    g->total_send = g->total_recv = 0;
    for (int p = 0; p < np; p++) {
        const hx_pulse *s = hx_plan_pulse(plan, p);
        hxi_gpu_pulse *d = &g->pulse[p];
        memset(d, 0, sizeof *d);
        d->dim = s->dim;
        d->index = s->index;
        d->send_rank = s->send_rank;
        d->recv_rank = s->recv_rank;
        d->nsend = s->nsend;
        d->nsend_home = s->nsend_home;
        d->nrecv = s->nrecv;
        d->recv_offset = s->recv_offset;
        d->peer_offset = s->peer_offset;
        d->map_offset = (int32_t) total;
        d->shift = hxi_fshift_of(s->shift, s->dim);
        d->deps = s->deps;
        total += (size_t) s->nsend;
        g->total_send += s->nsend;
        g->total_recv += s->nrecv;
    }
    g->npulses = np;
    /* A device plan's maps are on the device already, in this layout
     * (pulse p at its map_offset): the kernels read them there, as the plan
     * outlives its use, and the kernels queued before read the old plan's
     * (stream order), so the host need not wait for them; it does unless
     * HALOX_PLAN_WAIT=0 (g->plan_wait). A host plan's are copied into the
     * one array the queued kernels may still read, so after them,
     * synchronously: its host maps may change after this call. */
    if (g->plan_wait || !hx_plan_on_device(plan))
        HXI_CUDA(cudaStreamSynchronize(g->stream));
    if (hx_plan_on_device(plan)) {
        g->maps = hx_plan_device_maps(plan);
        return HX_OK;
    }
    if (total > g->maps_cap || !g->d_maps) {
        if (g->d_maps)
            cudaFree(g->d_maps);
        g->d_maps = NULL;
        g->maps = NULL;
        g->maps_cap = 0;
        size_t cap = total + total / 4 + 1024;
        HXI_CHECK(hxi_gpu_malloc((void **) &g->d_maps, cap * sizeof(int), "the pulse maps"));
        g->maps_cap = cap;
    }
    g->maps = g->d_maps;
    for (int p = 0; p < np; p++) {
        const hx_pulse *s = hx_plan_pulse(plan, p);
        if (s->nsend > 0)
            HXI_CUDA(cudaMemcpy(g->d_maps + g->pulse[p].map_offset, s->map,
                                (size_t) s->nsend * sizeof(int), cudaMemcpyHostToDevice));
    }
    return HX_OK;
}

hx_status hxi_gpu_fail(hxi_gpu *g, hx_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->fail_msg, sizeof g->fail_msg, fmt, ap);
    va_end(ap);
    g->failed = st;
    return hxi_error(st, "%s", g->fail_msg);
}

hx_status hxi_gpu_check_usable(hxi_gpu *g)
{
    if (g->failed != HX_OK)
        return hxi_error(g->failed,
                         "transport %s failed earlier and cannot continue (%s); destroy it and "
                         "create a new one",
                         g->who, g->fail_msg);
    return HX_OK;
}

hx_status hxi_gpu_begin_forward(hxi_gpu *g)
{
    HXI_CHECK(hxi_gpu_check_usable(g));
    g->seq++;
    return HX_OK;
}

int hxi_gpu_withhold(const hxi_gpu *g)
{
    return g->withhold_rank == g->rank && g->seq == g->withhold_step;
}

hxi_gpu_wait_info hxi_gpu_wait_for(const hxi_gpu *g, int p, int kind)
{
    hxi_gpu_wait_info w;
    memset(&w, 0, sizeof w);
    w.step = g->seq;
    w.timeout_ns = g->timeout_ns;
    w.rank = g->rank;
    w.pulse = p;
    w.dim = g->pulse[p].dim;
    w.kind = kind;
    w.peer = kind == 0 ? g->pulse[p].recv_rank : g->pulse[p].send_rank;
    return w;
}

hx_status hxi_gpu_timeout_error(hxi_gpu *g, int rank, int pulse, int dim, int kind, uint64_t step,
                                int peer, double waited_s, const char *why)
{
    static const char dims[3] = {'X', 'Y', 'Z'};
    if (kind == HXI_WAIT_VOTE)
        return hxi_gpu_fail(g, HX_ERR_TIMEOUT,
                            "rank %d waited %.1f s for vote %llu of rank %d "
                            "(hx_transport_vote): %s; check that every rank makes the same "
                            "votes, or raise the timeout (opts.timeout_s or HALOX_TIMEOUT_S, "
                            "now %.1f s)",
                            rank, waited_s, (unsigned long long) (step >> 1), peer, why,
                            g->timeout_s);
    return hxi_gpu_fail(
        g, HX_ERR_TIMEOUT,
        "rank %d waited %.1f s for pulse %d (%c, %s) of step %llu from rank %d: %s; check that "
        "every rank calls hx_transport_forward and hx_transport_reverse equally often, or "
        "raise the timeout (opts.timeout_s or HALOX_TIMEOUT_S, now %.1f s)",
        rank, waited_s, pulse, (dim >= 0 && dim < 3) ? dims[dim] : '?',
        kind == 0   ? "coordinates"
        : kind == 1 ? "forces"
                    : "rebuild bytes",
        (unsigned long long) step, peer, why, g->timeout_s);
}

hx_status hxi_gpu_stream_poll(hxi_gpu *g, double limit_s, int *done)
{
    double t0 = hxi_now();
    for (;;) {
        cudaError_t e = cudaStreamQuery(g->stream);
        if (e == cudaSuccess) {
            *done = 1;
            return HX_OK;
        }
        if (e != cudaErrorNotReady) {
            *done = 0;
            hx_status st = hxi_cuda_error(e, "cudaStreamQuery", __FILE__, __LINE__);
            g->failed = st;
            snprintf(g->fail_msg, sizeof g->fail_msg, "%s", hx_last_error());
            return st;
        }
        if (hxi_now() - t0 > limit_s) {
            *done = 0;
            return HX_OK;
        }
    }
}

hx_status hxi_gpu_sync(hxi_gpu *g)
{
    if (g->failed != HX_OK)
        return hxi_gpu_check_usable(g);
    /* Every device wait is bounded and the first timeout cuts the others
     * short, so a healthy stream drains well within this. */
    double limit = 2.0 * g->timeout_s + 2.0;
    int done = 0;
    HXI_CHECK(hxi_gpu_stream_poll(g, limit, &done));
    if (g->rec_h->hit) {
        const hxi_gpu_timeout *r = g->rec_h;
        char why[96];
        snprintf(why, sizeof why, "the peer did not send (signal %llu, expected %llu)",
                 (unsigned long long) r->seen, (unsigned long long) r->step);
        return hxi_gpu_timeout_error(g, r->rank, r->pulse, r->dim, r->kind, r->step, r->peer,
                                     1e-9 * (double) r->waited_ns, why);
    }
    if (!done)
        return hxi_gpu_fail(g, HX_ERR_TIMEOUT,
                            "rank %d: the %s transport's GPU stream did not drain within %.1f s "
                            "and no device wait reported a timeout; a kernel is stuck (another "
                            "process hogging the GPU?)",
                            g->rank, g->who, limit);
    return HX_OK;
}

hx_status hxi_gpu_refuse_shared(const hxi_gpu *g, const char *reason)
{
    return hxi_error(HX_ERR_UNSUPPORTED,
                     "transport %s: %d processes share GPU %d on rank %d's node, and %s; run one "
                     "process per GPU (mpirun -n <number of GPUs>), or use the mpi transport",
                     g->who, g->ranks_on_device, g->device, g->rank, reason);
}

void hxi_gpu_versions(char *buf, size_t n)
{
    int rt = 0, drv = 0;
    if (cudaRuntimeGetVersion(&rt) != cudaSuccess)
        rt = 0;
    if (cudaDriverGetVersion(&drv) != cudaSuccess)
        drv = 0;
    (void) cudaGetLastError();
    if (drv > 0)
        snprintf(buf, n, "CUDA runtime %d.%d, driver %d.%d", rt / 1000, rt % 1000 / 10, drv / 1000,
                 drv % 1000 / 10);
    else
        snprintf(buf, n, "CUDA runtime %d.%d, no driver", rt / 1000, rt % 1000 / 10);
}
