/*
 * engine_gpu.c - the GPU engine of halox-md (float, device-resident).
 *
 * Positions, velocities and forces live on the GPU between list builds.
 * A step is: kick-drift (with the half-skin check), then forces, then the
 * closing kick. Two ways to rebuild:
 *  - host path (every multi-rank run, and the first build of any run):
 *    download x, v, id; hx_migrate; sort home atoms by cell; new plan;
 *    upload; forward the halo; cell and neighbour lists on the GPU.
 *  - device path (one rank): one cooperative kernel wraps, sorts by cell
 *    and builds the list, and decides by itself whether it must (the
 *    half-skin flag lives in device memory), so a step never waits for
 *    the host.
 * With halo atoms the step overlaps as GROMACS does: the local force kernel
 * runs on the low-priority local stream while the coordinate exchange runs
 * on the high-priority non-local stream (the transport's), followed there by
 * the non-local force kernel and the force exchange; the closing kick waits
 * for an event from the non-local stream.
 * With a transport that can be captured (nvshmem-fused, -tma: graph mode),
 * the steps between rebuild candidates and thermo steps are replayed from
 * one CUDA graph of that whole two-stream step, and errors are agreed over
 * the ranks only at those steps (the device waits are bounded, so no rank
 * can hang in between). docs/md-gpu.md has the details.
 */
#define _POSIX_C_SOURCE 200809L

#include "md/md.h"

#include "core/hxi.h"
#include "md/gpu/md_gpu.h"

#include <cuda_runtime_api.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TM_SLOTS 1024

typedef struct tm_span {
    cudaEvent_t a, b;
    int stage;
    int pending;
    double weight; /* steps this sample stands for */
} tm_span;

struct hx_md_engine {
    hx_md_config cfg;
    hx_comm *comm;
    hx_md_system *sys;
    hx_decomp decomp;
    int rank, nranks;
    int multi;        /* more than one rank: halo exchange, host-path rebuilds */
    int host_rebuild; /* one rank, but rebuild through the host (HALOX_MD_HOST_REBUILD=1) */
    int device, ndevices, local_rank, local_size;
    char device_name[256];
    cudaStream_t s_loc, s_nl;
    cudaEvent_t ev_kd, ev_rev, ev_acc;
    hx_transport *t;
    hx_plan *plan;
    int blocking_transport; /* forward/reverse block the host (mpi, cpu) */

    /* physics */
    hxg_lj lj;
    hxg_geom geom;
    hxg_cellgrid cells;
    float dtf, dt, mass, trig2;
    double rh;
    int tpp, tpp_nl;

    /* sizes */
    int nhome, nhalo, ntotal;
    int cap_home, cap_total;

    /* device arrays */
    float *x4, *v4, *f4, *xold4, *sx4, *sv4;
    int64_t *id, *sid;
    float *tx, *tf; /* the transport's arrays (multi only) */
    uint8_t *zones;
    int32_t *cellof, *cellatoms, *cell_cnt, *cell_start, *scan_tmp;
    hxg_list loc, nl;
    size_t b_x4, b_v4, b_f4, b_xold4, b_sx4, b_sv4, b_id, b_sid, b_zones, b_cellof, b_cellatoms,
        b_locnb, b_loccnt, b_nlnb, b_nlcnt;
    hxg_flags *flags;
    double *acc;
    hxg_report *report; /* mapped host memory */
    hxg_report *report_dev;

    /* host staging (pinned) */
    float *h4, *h3;
    size_t b_h4, b_h3;
    double *fout;
    int fout_cap;
    int32_t *hcell;
    double *htmp;
    int64_t *htmp_id;
    int hsort_cap;

    /* state */
    int64_t step;
    int64_t last_build; /* host's view (host path, or unchecked device path) */
    int64_t host_rebuilds;
    /* Seconds in each phase of the host-path rebuilds (HALOX_LOG=1 prints
     * them per rebuild at the end): see rebuild_phase_names. */
    double rb_phase[9];
    int ago; /* steps since the last build (host path) */
    int acc_valid;
    hx_md_stats stats;
    int timers_on;
    int timers_every; /* time one step in this many (HALOX_MD_TIMERS) */
    int timing_now;   /* this step is timed */
    tm_span *spans;
    int span_next;
    int graphs;                  /* replay device-resident steps from CUDA graphs */
    cudaGraphExec_t gexec[2][2]; /* [candidate step][thermo step] */
    int64_t graph_steps;         /* steps replayed from graphs so far (either path) */

    /* Several ranks, graph mode: the same on every rank (agreed at create),
     * since it decides where the ranks meet in collectives. */
    int mgraph;
    int mg_ok;    /* this rank replays (its capture worked); rank-local */
    int mg_dirty; /* arrays or plan changed since the capture */
    cudaGraphExec_t mg_exec;
    cudaEvent_t ev_gfork, ev_gjoin; /* fork and join inside the capture */
    hx_status pending;              /* first failure since the last check */
    int64_t pending_step;
    char pending_msg[640];
    char desc[1024];
};

/* ---------------------------------------------------------------- errors */

static hx_status cuda_fail(int err, const char *what)
{
    return hxi_error(HX_ERR_CUDA,
                     "GPU engine: %s failed: %s (%s); check the GPU with nvidia-smi, "
                     "or run the CPU engine",
                     what, cudaGetErrorName((cudaError_t) err),
                     cudaGetErrorString((cudaError_t) err));
}

#define CU(call, what)                                                                             \
    do {                                                                                           \
        int cu_e_ = (int) (call);                                                                  \
        if (cu_e_ != 0)                                                                            \
            return cuda_fail(cu_e_, what);                                                         \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* --------------------------------------------------------------- memory */

static hx_status dev_grow(void *p, size_t *have, size_t need, const char *what)
{
    void **pp = (void **) p;
    if (*pp && need <= *have)
        return HX_OK;
    if (*pp)
        cudaFree(*pp);
    *pp = NULL;
    *have = 0;
    cudaError_t err = cudaMalloc(pp, need ? need : 16);
    if (err != cudaSuccess) {
        *pp = NULL;
        cudaGetLastError();
        return hxi_error(HX_ERR_NOMEM,
                         "GPU engine: cudaMalloc of %zu bytes for %s failed (%s); use fewer "
                         "atoms per GPU (more ranks or GPUs)",
                         need, what, cudaGetErrorString(err));
    }
    *have = need;
    return HX_OK;
}

static hx_status host_grow(void *p, size_t *have, size_t need, const char *what)
{
    void **pp = (void **) p;
    if (*pp && need <= *have)
        return HX_OK;
    if (*pp)
        cudaFreeHost(*pp);
    *pp = NULL;
    *have = 0;
    cudaError_t err = cudaMallocHost(pp, need ? need : 16);
    if (err != cudaSuccess) {
        *pp = NULL;
        cudaGetLastError();
        return hxi_error(HX_ERR_NOMEM,
                         "GPU engine: pinned host allocation of %zu bytes for %s failed (%s)", need,
                         what, cudaGetErrorString(err));
    }
    *have = need;
    return HX_OK;
}

static int round_up(long long v, int to)
{
    return (int) ((v + to - 1) / to * to);
}

/* Room for `need` atoms with a margin, so that migration rarely reallocates. */
static int cap_for(int need)
{
    return round_up((long long) need + need / 4 + 1024, 32);
}

/* Neighbours within rc + skin an atom may have: the sphere at twice the
 * larger of the system's density and 1/sigma^3 (LJ repulsion keeps liquids
 * and solids well below that), plus room for the cell boundary effects. */
static int neigh_max_for(const hx_md_engine *e, double rho)
{
    int env = hxi_env_int("HALOX_MD_NEIGH_MAX", 0);
    if (env > 0)
        return round_up(env, 8);
    double s3 = e->cfg.sigma * e->cfg.sigma * e->cfg.sigma;
    double dens = fmax(rho, 1.0 / s3) * 2.0;
    double nb = 4.0 / 3.0 * 3.14159265358979323846 * e->rh * e->rh * e->rh * dens + 32.0;
    return round_up((long long) ceil(nb), 8);
}

/* ---------------------------------------------------------------- timers */

/* A stage time is a pair of events around the stage's work on its stream.
 * Spans live in a ring; a slot is read back when it is reused (hundreds of
 * steps later, so the read does not wait) or at a sync point. With
 * HALOX_MD_TIMERS=N one step in N (picked at random) is timed and counts N
 * times: an unbiased estimate that keeps event records off the other steps
 * (and lets those run from CUDA graphs); 0 turns the stage timers off. */
static int tm_open(hx_md_engine *e, int stage, cudaStream_t s);

static void tm_harvest_one(hx_md_engine *e, tm_span *sp)
{
    float ms = 0.0f;
    if (cudaEventSynchronize(sp->b) == cudaSuccess &&
        cudaEventElapsedTime(&ms, sp->a, sp->b) == cudaSuccess)
        e->stats.stage[sp->stage] += 1e-3 * (double) ms * sp->weight;
    cudaGetLastError();
    sp->pending = 0;
}

static void tm_harvest_all(hx_md_engine *e)
{
    if (!e->spans)
        return;
    for (int k = 0; k < TM_SLOTS; k++)
        if (e->spans[k].pending)
            tm_harvest_one(e, &e->spans[k]);
}

static int tm_open(hx_md_engine *e, int stage, cudaStream_t s)
{
    if (!e->timers_on || !e->timing_now)
        return -1;
    int k = e->span_next;
    e->span_next = (k + 1) % TM_SLOTS;
    tm_span *sp = &e->spans[k];
    if (sp->pending)
        tm_harvest_one(e, sp);
    sp->stage = stage;
    sp->weight = (double) e->timers_every;
    if (cudaEventRecord(sp->a, s) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return k;
}

/* Whether to time this step: one step in `every`, picked by a hash of the
 * step number so that the samples do not fall in step with the rebuild
 * period (a fixed stride of 16 against rebuilds every 20 would count
 * every rebuild it hits 16 times and miss the others). */
static int tm_sampled(int64_t step, int every)
{
    if (every <= 1)
        return 1;
    uint64_t z = (uint64_t) step * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % (uint64_t) every == 0;
}

static void tm_close(hx_md_engine *e, int k, cudaStream_t s)
{
    if (k < 0)
        return;
    if (cudaEventRecord(e->spans[k].b, s) == cudaSuccess)
        e->spans[k].pending = 1;
    else
        cudaGetLastError();
}

/* --------------------------------------------------------------- set-up */

/* Rank among the processes of this host, as the GPU transports count it
 * (the launcher's variable where it sets one, else by host name), so that
 * engine and transport pick the same device. */
static hx_status local_rank(hx_md_engine *e)
{
    char name[64];
    memset(name, 0, sizeof name);
    if (gethostname(name, sizeof name - 1) != 0)
        strcpy(name, "?");
    char *all = NULL;
    HXI_CHECK(hxi_alloc((void **) &all, sizeof name * (size_t) e->nranks, "host names"));
    hx_status st = hxi_allgather(e->comm, name, sizeof name, all);
    if (st != HX_OK) {
        free(all);
        return st;
    }
    int local = 0, lsize = 0;
    for (int r = 0; r < e->nranks; r++) {
        if (strncmp(all + (size_t) r * sizeof name, name, sizeof name) == 0) {
            if (r < e->rank)
                local++;
            lsize++;
        }
    }
    free(all);
    const char *env = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!env)
        env = getenv("MPI_LOCALRANKID");
    if (!env)
        env = getenv("SLURM_LOCALID");
    e->local_rank = env && *env ? atoi(env) : local;
    e->local_size = lsize;
    return HX_OK;
}

/* Rank-local: call between collectives, then agree. */
static hx_status choose_device(hx_md_engine *e)
{
    int ndev = 0;
    cudaError_t err = cudaGetDeviceCount(&ndev);
    if (err != cudaSuccess || ndev <= 0) {
        cudaGetLastError();
        return hxi_error(HX_ERR_CUDA,
                         "GPU engine: no CUDA device is visible (%s); run on a machine with a "
                         "GPU, check CUDA_VISIBLE_DEVICES, or use the CPU engine (--cpu)",
                         err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    }
    e->ndevices = ndev;
    e->device = e->local_rank % ndev;
    CU(cudaSetDevice(e->device), "cudaSetDevice");
    struct cudaDeviceProp prop;
    CU(cudaGetDeviceProperties(&prop, e->device), "cudaGetDeviceProperties");
    snprintf(e->device_name, sizeof e->device_name, "%s", prop.name);
    int sms = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
    /* Threads per atom: enough threads to fill the GPU once (1024 per SM),
     * at most 8. HALOX_MD_TPP overrides. */
    int env = hxi_env_int("HALOX_MD_TPP", 0);
    int tpp = 1;
    while (tpp < 8 && (long long) e->sys->n * tpp < (long long) sms * 1024)
        tpp *= 2;
    e->tpp = env == 1 || env == 2 || env == 4 || env == 8 ? env : tpp;
    e->tpp_nl = e->tpp;
    return HX_OK;
}

/* The transport when none is named. With one rank nothing crosses a
 * boundary, so the one cheapest to create (host arrays: no device memory,
 * no NVSHMEM or NCCL start-up) is as fast as any. With several, the first
 * built transport that can be captured in a CUDA graph (nvshmem-fused): it
 * alone lets the whole step replay from one graph, which measured fastest
 * at every size (docs/md-gpu.md); where it cannot run, make_transport falls
 * back to the one that measures the launched ones on the real plan. */
static const char *default_transport(const hx_md_engine *e)
{
    const char *host = NULL, *chooser = NULL;
    for (int i = 0; i < hx_transport_count(); i++) {
        const char *name = hx_transport_name_at(i);
        unsigned caps = hx_transport_caps_of(name);
        if (e->multi && (caps & HX_CAP_DEVICE) && (caps & HX_CAP_GRAPH))
            return name;
        if (!host && (caps & HX_CAP_HOST))
            host = name;
        if (!chooser && (caps & HX_CAP_CHOOSES))
            chooser = name;
    }
    return e->multi && chooser ? chooser : host;
}

/* The transport that measures the others, for the fall-back. */
static const char *choosing_transport(void)
{
    for (int i = 0; i < hx_transport_count(); i++)
        if (hx_transport_caps_of(hx_transport_name_at(i)) & HX_CAP_CHOOSES)
            return hx_transport_name_at(i);
    return NULL;
}

static hx_status make_transport(hx_md_engine *e)
{
    const char *want = e->cfg.transport;
    const char *name = want;
    if (!want[0] || strcmp(want, "default") == 0)
        name = default_transport(e);
    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.name = name;
    o.dtype = HX_FLOAT;
    o.stream = (void *) e->s_nl;
    o.graph = e->mgraph;
    hx_status st = hxi_agree(e->comm, hx_transport_create(&e->t, e->comm, &o));
    const char *fallback = choosing_transport();
    if (st == HX_ERR_UNSUPPORTED && name != want && fallback &&
        !(hx_transport_caps_of(name) & HX_CAP_CHOOSES)) {
        /* The default could not run here (e.g. processes sharing a GPU
         * without MPS): `auto` takes the transports that can. */
        if (e->rank == 0)
            fprintf(stderr, "halox-md: %s cannot run here (%s); using %s\n", name, hx_last_error(),
                    fallback);
        e->mgraph = e->mg_ok = 0;
        o.name = fallback;
        o.graph = 0;
        e->t = NULL;
        st = hxi_agree(e->comm, hx_transport_create(&e->t, e->comm, &o));
    }
    return st;
}

static void setup_physics(hx_md_engine *e)
{
    const hx_md_config *c = &e->cfg;
    const hx_decomp *d = &e->decomp;
    double ext[3];
    double s6 = pow(c->sigma, 6.0), s12 = s6 * s6;
    e->lj.rc2 = (float) (c->rc * c->rc);
    e->lj.rh2 = (float) (e->rh * e->rh);
    e->lj.lj1 = (float) (48.0 * c->epsilon * s12);
    e->lj.lj2 = (float) (24.0 * c->epsilon * s6);
    e->lj.lj3 = (float) (4.0 * c->epsilon * s12);
    e->lj.lj4 = (float) (4.0 * c->epsilon * s6);
    double sr6 = s6 / pow(c->rc, 6.0);
    e->lj.eoff = c->shift_energy ? (float) (4.0 * c->epsilon * (sr6 * sr6 - sr6)) : 0.0f;
    e->dt = (float) c->dt;
    e->mass = (float) c->mass;
    e->dtf = (float) (0.5 * c->dt / c->mass);
    e->trig2 = (float) (0.25 * c->skin * c->skin);
    for (int k = 0; k < 3; k++) {
        int periodic = d->grid[k] == 1;
        e->geom.per_len[k] = periodic ? (float) d->box_len[k] : 0.0f;
        e->geom.per_inv[k] = periodic ? (float) (1.0 / d->box_len[k]) : 0.0f;
        e->geom.box_lo[k] = (float) d->box_lo[k];
        e->geom.box_len[k] = (float) d->box_len[k];
        /* Cells of width a little over (rc + skin) / 2 over home atoms
         * and, along a decomposed dimension, the halo above them (up to
         * the halo cutoff): the list build then looks at rows of 5 cells
         * cut to each atom's reach, a third of the candidates that cells
         * of width rc + skin give (docs/md-gpu.md). */
        ext[k] = periodic ? d->box_len[k] : d->dom_hi[k] - d->dom_lo[k] + d->cutoff;
        int n = (int) floor(ext[k] / (0.5 * e->rh * (1.0 + 1e-5)));
        e->cells.n[k] = n < 1 ? 1 : n;
        e->cells.periodic[k] = periodic;
        e->cells.lo[k] = (float) (periodic ? d->box_lo[k] : d->dom_lo[k]);
    }
    /* Wider cells (still correct, a little slower) where the grid would
     * outgrow the cell scan. */
    while ((long long) e->cells.n[0] * e->cells.n[1] * e->cells.n[2] >
           (long long) HXG_MAX_SCAN_BLOCKS * 4096) {
        int k = e->cells.n[1] > e->cells.n[0] ? 1 : 0;
        k = e->cells.n[2] > e->cells.n[k] ? 2 : k;
        e->cells.n[k] = e->cells.n[k] * 3 / 4;
    }
    for (int k = 0; k < 3; k++)
        e->cells.inv_w[k] = (float) (e->cells.n[k] / ext[k]);
    e->cells.ncell = e->cells.n[0] * e->cells.n[1] * e->cells.n[2];
}

/* Makes room for nhome home and ntotal local atoms. Contents are not kept:
 * this runs only in a host-path rebuild, which uploads everything after. */
static hx_status ensure_capacity(hx_md_engine *e, int nhome, int ntotal)
{
    if (nhome > e->cap_home || !e->x4) {
        e->cap_home = cap_for(nhome);
        size_t h = (size_t) e->cap_home;
        HXI_CHECK(dev_grow(&e->x4, &e->b_x4, 16 * h, "positions"));
        HXI_CHECK(dev_grow(&e->v4, &e->b_v4, 16 * h, "velocities"));
        HXI_CHECK(dev_grow(&e->f4, &e->b_f4, 16 * h, "forces"));
        HXI_CHECK(dev_grow(&e->xold4, &e->b_xold4, 16 * h, "positions at the last build"));
        HXI_CHECK(dev_grow(&e->id, &e->b_id, 8 * h, "atom ids"));
        if (!e->multi) {
            HXI_CHECK(dev_grow(&e->sx4, &e->b_sx4, 16 * h, "sort scratch"));
            HXI_CHECK(dev_grow(&e->sv4, &e->b_sv4, 16 * h, "sort scratch"));
            HXI_CHECK(dev_grow(&e->sid, &e->b_sid, 8 * h, "sort scratch"));
        }
        HXI_CHECK(host_grow(&e->h4, &e->b_h4, 16 * h, "staging"));
        HXI_CHECK(host_grow(&e->h3, &e->b_h3, 12 * h, "staging"));
        e->loc.stride = e->cap_home;
        HXI_CHECK(dev_grow(&e->loc.cnt, &e->b_loccnt, 4 * h, "neighbour counts"));
        HXI_CHECK(dev_grow(&e->loc.nb, &e->b_locnb, 4 * h * (size_t) e->loc.max,
                           "the local neighbour list"));
    }
    if (ntotal > e->cap_total || !e->cellof) {
        e->cap_total = cap_for(ntotal > e->cap_home ? ntotal : e->cap_home);
        size_t t = (size_t) e->cap_total;
        HXI_CHECK(dev_grow(&e->cellof, &e->b_cellof, 4 * t, "cell indices"));
        HXI_CHECK(dev_grow(&e->cellatoms, &e->b_cellatoms, 4 * t, "cell lists"));
        if (e->multi) {
            HXI_CHECK(dev_grow(&e->zones, &e->b_zones, 4 * t, "zones"));
            e->nl.stride = e->cap_total;
            HXI_CHECK(dev_grow(&e->nl.cnt, &e->b_nlcnt, 4 * t, "neighbour counts"));
            HXI_CHECK(dev_grow(&e->nl.nb, &e->b_nlnb, 4 * t * (size_t) e->nl.max,
                               "the non-local neighbour list"));
        }
    }
    return HX_OK;
}

/* Orders home atoms by cell (the GPU's cell grid), so that atoms close in
 * space are close in memory: the force kernels' gathers then hit cache. */
static hx_status sort_home_by_cell(hx_md_engine *e)
{
    hx_md_system *s = e->sys;
    int n = s->n, nc = e->cells.ncell;
    if (n <= 1)
        return HX_OK;
    if (n > e->hsort_cap) {
        int cap = cap_for(n);
        HXI_CHECK(
            hxi_grow((void **) &e->hcell, sizeof(int32_t) * ((size_t) cap + nc + 1), "cell sort"));
        HXI_CHECK(hxi_grow((void **) &e->htmp, sizeof(double) * 3 * (size_t) cap, "cell sort"));
        HXI_CHECK(hxi_grow((void **) &e->htmp_id, sizeof(int64_t) * (size_t) cap, "cell sort"));
        e->hsort_cap = cap;
    }
    int32_t *cell = e->hcell, *start = e->hcell + e->hsort_cap;
    memset(start, 0, sizeof(int32_t) * ((size_t) nc + 1));
    for (int i = 0; i < n; i++) {
        int c3[3];
        for (int k = 0; k < 3; k++) {
            int m = e->cells.n[k];
            int q = (int) floor((s->x[3 * i + k] - e->cells.lo[k]) * e->cells.inv_w[k]);
            if (e->cells.periodic[k])
                q = ((q % m) + m) % m;
            else
                q = q < 0 ? 0 : (q >= m ? m - 1 : q);
            c3[k] = q;
        }
        cell[i] = (c3[2] * e->cells.n[1] + c3[1]) * e->cells.n[0] + c3[0];
        start[cell[i] + 1]++;
    }
    for (int c = 0; c < nc; c++)
        start[c + 1] += start[c];
    /* Stable counting sort, applied to x, then v, then id. start[c + 1]
     * serves as the running slot of cell c during a pass and ends each pass
     * as the end of cell c, so each pass first shifts it back by one. */
    double *t = e->htmp;
    for (int pass = 0; pass < 2; pass++) {
        double *a = pass == 0 ? s->x : s->v;
        for (int c = nc; c > 0; c--)
            start[c] = start[c - 1];
        start[0] = 0;
        for (int i = 0; i < n; i++) {
            int slot = start[cell[i] + 1]++;
            memcpy(t + 3 * (size_t) slot, a + 3 * (size_t) i, 3 * sizeof(double));
        }
        memcpy(a, t, 3 * sizeof(double) * (size_t) n);
    }
    for (int c = nc; c > 0; c--)
        start[c] = start[c - 1];
    start[0] = 0;
    for (int i = 0; i < n; i++)
        e->htmp_id[start[cell[i] + 1]++] = s->id[i];
    memcpy(s->id, e->htmp_id, sizeof(int64_t) * (size_t) n);
    return HX_OK;
}

/* Cell and neighbour lists through the host path's kernels; grows the
 * lists and builds again when an atom had more neighbours than they hold.
 * Rank-local. */
static hx_status build_lists_host_path(hx_md_engine *e)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        const float *x = e->multi ? e->tx : e->x4;
        hxg_list none = {NULL, NULL, 0, 0};
        CU(hxg_build_lists((void *) e->s_nl, e->nhome, e->ntotal, x, e->multi ? 3 : 4,
                           e->multi ? e->zones : NULL, e->cells, e->geom, e->lj.rh2, e->cell_cnt,
                           e->cell_start, e->cellof, e->cellatoms, e->scan_tmp, e->loc,
                           e->multi ? e->nl : none,
                           e->flags),
           "neighbour-list build launch");
        hxg_flags fl;
        CU(cudaMemcpyAsync(&fl, e->flags, sizeof fl, cudaMemcpyDeviceToHost, e->s_nl),
           "flag read-back");
        CU(cudaStreamSynchronize(e->s_nl), "neighbour-list build");
        if (fl.need <= 0) {
            fl.last_build = e->step;
            CU(cudaMemcpy(e->flags, &fl, sizeof fl, cudaMemcpyHostToDevice), "flag update");
            return HX_OK;
        }
        /* An atom had more neighbours than the lists hold: grow and redo. */
        int m = round_up((long long) fl.need + fl.need / 4 + 8, 8);
        hxi_info("GPU engine: neighbour lists grow to %d per atom", m);
        if (m > e->loc.max) {
            e->loc.max = m;
            HXI_CHECK(dev_grow(&e->loc.nb, &e->b_locnb, 4 * (size_t) e->cap_home * (size_t) m,
                               "the local neighbour list"));
        }
        if (e->multi && m > e->nl.max) {
            e->nl.max = m;
            HXI_CHECK(dev_grow(&e->nl.nb, &e->b_nlnb, 4 * (size_t) e->cap_total * (size_t) m,
                               "the non-local neighbour list"));
        }
        fl.need = 0;
        CU(cudaMemcpy(e->flags, &fl, sizeof fl, cudaMemcpyHostToDevice), "flag reset");
    }
    return hxi_error(HX_ERR_OVERFLOW,
                     "GPU engine: neighbour lists kept overflowing; set HALOX_MD_NEIGH_MAX "
                     "above the largest neighbour count within rc + skin");
}

/* Home atoms from the device into sys (double). Rank-local. */
static hx_status download_home(hx_md_engine *e, hx_md_system *s)
{
    int n = e->nhome;
    if (n > s->capacity || !s->x || !s->v || !s->id) {
        size_t m = (size_t) (n > 0 ? n : 1);
        HXI_CHECK(hxi_grow((void **) &s->x, sizeof(double) * 3 * m, "positions"));
        HXI_CHECK(hxi_grow((void **) &s->v, sizeof(double) * 3 * m, "velocities"));
        HXI_CHECK(hxi_grow((void **) &s->id, sizeof(int64_t) * m, "atom ids"));
        s->capacity = (int) m;
    }
    if (n > 0) {
        CU(cudaMemcpy(e->h4, e->x4, 16 * (size_t) n, cudaMemcpyDeviceToHost), "download x");
        for (int i = 0; i < n; i++)
            for (int k = 0; k < 3; k++)
                s->x[3 * i + k] = (double) e->h4[4 * i + k];
        CU(cudaMemcpy(e->h4, e->v4, 16 * (size_t) n, cudaMemcpyDeviceToHost), "download v");
        for (int i = 0; i < n; i++)
            for (int k = 0; k < 3; k++)
                s->v[3 * i + k] = (double) e->h4[4 * i + k];
        CU(cudaMemcpy(s->id, e->id, 8 * (size_t) n, cudaMemcpyDeviceToHost), "download id");
    }
    s->n = n;
    return HX_OK;
}

/* Home atoms of sys onto the device (x4, xold4, v4, id and, with a halo,
 * the transport's coordinates), plus the plan's zones. Rank-local. */
static hx_status upload_home(hx_md_engine *e)
{
    const hx_md_system *s = e->sys;
    int n = e->nhome;
    cudaStream_t q = e->s_nl;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            e->h4[4 * i + k] = (float) s->x[3 * i + k];
            e->h3[3 * i + k] = (float) s->x[3 * i + k];
        }
        e->h4[4 * i + 3] = 0.0f;
    }
    if (n > 0) {
        CU(cudaMemcpyAsync(e->x4, e->h4, 16 * (size_t) n, cudaMemcpyHostToDevice, q), "upload x");
        CU(cudaMemcpyAsync(e->xold4, e->x4, 16 * (size_t) n, cudaMemcpyDeviceToDevice, q),
           "copy x");
        if (e->multi)
            CU(cudaMemcpyAsync(e->tx, e->h3, 12 * (size_t) n, cudaMemcpyHostToDevice, q),
               "upload x to the transport");
    }
    CU(cudaStreamSynchronize(q), "upload");
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++)
            e->h4[4 * i + k] = (float) s->v[3 * i + k];
        e->h4[4 * i + 3] = 0.0f;
    }
    if (n > 0) {
        CU(cudaMemcpyAsync(e->v4, e->h4, 16 * (size_t) n, cudaMemcpyHostToDevice, q), "upload v");
        CU(cudaMemcpyAsync(e->id, s->id, 8 * (size_t) n, cudaMemcpyHostToDevice, q), "upload id");
    }
    if (e->multi && e->ntotal > 0)
        CU(cudaMemcpyAsync(e->zones, hx_plan_zones(e->plan), 4 * (size_t) e->ntotal,
                           cudaMemcpyHostToDevice, q),
           "upload zones");
    CU(cudaStreamSynchronize(q), "upload");
    return HX_OK;
}

/* The host-path rebuild. Collective; every rank-local part is agreed on
 * before the next collective call, so that a failure on one rank ends the
 * rebuild on all. initial: the atoms are in e->sys already. */
static const char *const rebuild_phase_names[9] = {
    "drain", "download", "migrate", "sort", "plan", "set_plan", "upload", "forward", "lists"};

/* Adds the time since *t to phase k and moves *t on. */
static void rebuild_mark(hx_md_engine *e, int k, double *t)
{
    double now = now_s();
    e->rb_phase[k] += now - *t;
    *t = now;
}

static hx_status rebuild_host(hx_md_engine *e, int initial)
{
    hx_md_system *s = e->sys;
    hx_status st = HX_OK;
    double tp = now_s();
    /* The drain waits for steps already queued, whose kernels the stage
     * timers count: it is kept out of "migrate + plan". */
    if (cudaStreamSynchronize(e->s_loc) != cudaSuccess ||
        cudaStreamSynchronize(e->s_nl) != cudaSuccess)
        st = cuda_fail(cudaGetLastError(), "waiting for the step before a rebuild");
    rebuild_mark(e, 0, &tp);
    double t0 = tp;
    if (st == HX_OK && !initial)
        st = download_home(e, s);
    HXI_CHECK(hxi_agree(e->comm, st));
    rebuild_mark(e, 1, &tp);
    hx_field fields[2] = {{(void **) &s->v, 3 * sizeof(double)},
                          {(void **) &s->id, sizeof(int64_t)}};
    HXI_CHECK(hx_migrate(e->comm, &e->decomp, &s->n, &s->capacity, &s->x, fields, 2));
    rebuild_mark(e, 2, &tp);
    HXI_CHECK(hxi_agree(e->comm, sort_home_by_cell(e)));
    rebuild_mark(e, 3, &tp);
    hx_plan *plan = NULL;
    HXI_CHECK(hx_plan_create(&plan, e->comm, &e->decomp, s->n, s->x));
    rebuild_mark(e, 4, &tp);
    st = hxi_agree(e->comm, hx_transport_set_plan(e->t, plan));
    rebuild_mark(e, 5, &tp);
    if (st != HX_OK) {
        hx_plan_destroy(plan);
        return st;
    }
    if (e->plan)
        hx_plan_destroy(e->plan);
    e->plan = plan;
    /* Known only now for `auto`, which chooses at its first plan. */
    if (e->multi && !hx_transport_on_device(e->t))
        return hxi_error(HX_ERR_UNSUPPORTED,
                         "GPU engine: transport '%s' keeps its arrays in host memory; with "
                         "%d ranks the GPU engine needs a device transport (--transport mpi, "
                         "nccl, nvshmem-* or auto), or run the CPU engine (--cpu)",
                         hx_transport_name(e->t), e->nranks);
    e->blocking_transport = (hx_transport_caps(e->t) & HX_CAP_BLOCKS_HOST) != 0;
    e->mg_dirty = 1; /* the captured step holds the old arrays and sizes */
    e->nhome = hx_plan_nhome(plan);
    e->nhalo = hx_plan_nhalo(plan);
    e->ntotal = hx_plan_ntotal(plan);
    if (e->multi) {
        e->tx = (float *) hx_transport_coords(e->t);
        e->tf = (float *) hx_transport_forces(e->t);
    }
    st = ensure_capacity(e, e->nhome, e->ntotal);
    if (st == HX_OK)
        st = upload_home(e);
    HXI_CHECK(hxi_agree(e->comm, st));
    rebuild_mark(e, 6, &tp);
    double t1 = tp;
    e->stats.stage[HX_MD_MIGRATE] += t1 - t0;
    if (e->multi) {
        st = hx_transport_forward(e->t);
        if (st == HX_OK)
            st = hx_transport_sync(e->t);
        HXI_CHECK(hxi_agree(e->comm, st));
    }
    rebuild_mark(e, 7, &tp);
    double t2 = tp;
    e->stats.stage[HX_MD_HALO_FWD] += t2 - t1;
    HXI_CHECK(hxi_agree(e->comm, build_lists_host_path(e)));
    rebuild_mark(e, 8, &tp);
    e->stats.stage[HX_MD_NEIGH] += tp - t2;
    e->last_build = e->step;
    e->ago = 0;
    e->host_rebuilds++;
    return HX_OK;
}

/* Forces (and, with acc, energy and virial) for the current positions,
 * without moving atoms: the first force pass and thermo recomputation.
 * write: forces are stored (f4 ends as the total force on home atoms) and
 * the force halo is exchanged. Rank-local apart from the transport. */
static hx_status force_pass(hx_md_engine *e, int write, double *acc)
{
    if (acc) {
        CU(cudaMemsetAsync(acc, 0, HXG_NACC * sizeof(double), e->s_loc), "clear sums");
        CU(cudaEventRecord(e->ev_acc, e->s_loc), "event");
        CU(cudaStreamWaitEvent(e->s_nl, e->ev_acc, 0), "event wait");
    }
    CU(hxg_force_local((void *) e->s_loc, e->tpp, e->nhome, e->x4, e->loc, e->lj, e->geom,
                       write ? e->f4 : NULL, NULL, 0.0f, e->mass, acc, NULL),
       "local force launch");
    if (e->multi) {
        CU(hxg_force_nonlocal((void *) e->s_nl, e->tpp_nl, e->ntotal, e->tx, e->nl, e->lj, e->geom,
                              write ? e->tf : NULL, acc),
           "non-local force launch");
        if (write)
            HXI_CHECK(hx_transport_reverse(e->t));
        CU(cudaEventRecord(e->ev_rev, e->s_nl), "event");
        CU(cudaStreamWaitEvent(e->s_loc, e->ev_rev, 0), "event wait");
    }
    /* Combine the halo-side forces (multi) and sum m v^2, without a kick. */
    CU(hxg_kick((void *) e->s_loc, e->nhome, e->v4, e->f4, (e->multi && write) ? e->tf : NULL, 0.0f,
                e->mass, acc),
       "kick launch");
    CU(cudaStreamSynchronize(e->s_loc), "force pass");
    if (e->multi)
        HXI_CHECK(hx_transport_sync(e->t));
    return HX_OK;
}

/* Reports what the device path's rebuild kernel published (no sync). */
static hx_status check_report(hx_md_engine *e)
{
    if (!e->report)
        return HX_OK;
    if (e->report->bad)
        return hxi_error(HX_ERR_COORD_NAN,
                         "GPU engine: a coordinate became NaN or infinite by step %lld; the "
                         "system blew up: use a smaller timestep or check the input",
                         (long long) e->step);
    if (e->report->need > 0)
        return hxi_error(HX_ERR_OVERFLOW,
                         "GPU engine: an atom had %d neighbours within rc + skin at the list "
                         "build of step %lld, over the %d the list holds; rerun with "
                         "HALOX_MD_NEIGH_MAX=%d",
                         (int) e->report->need, (long long) e->report->last_build, e->loc.max,
                         round_up((long long) e->report->need * 5 / 4 + 8, 8));
    return HX_OK;
}

/* ------------------------------------------------------------ engine ops */

static void gpu_destroy(hx_md_engine *e);
static void capture_ahead(hx_md_engine *e);

/* Rank-local part of create: device, streams, events, physics, memory. */
static hx_status create_local(hx_md_engine *e)
{
    const hx_md_config *cfg = &e->cfg;
    if (!(cfg->rc > 0) || !(cfg->skin >= 0) || !(cfg->dt > 0) || !(cfg->mass > 0) ||
        !(cfg->sigma > 0) || !(cfg->epsilon >= 0))
        return hxi_error(HX_ERR_INVALID,
                         "GPU engine: rc, dt, mass and sigma must be positive and skin, "
                         "epsilon not negative (rc %g skin %g dt %g mass %g sigma %g eps %g)",
                         cfg->rc, cfg->skin, cfg->dt, cfg->mass, cfg->sigma, cfg->epsilon);
    if (e->decomp.nranks != e->nranks)
        return hxi_error(HX_ERR_GRID,
                         "GPU engine: the system's decomposition has %d domains but the "
                         "communicator %d ranks; set sys->decomp for this communicator",
                         e->decomp.nranks, e->nranks);
    if (e->decomp.cutoff < e->rh * (1.0 - 1e-12))
        return hxi_error(HX_ERR_CUTOFF,
                         "GPU engine: the decomposition's halo cutoff %g is below rc + skin = "
                         "%g; initialise sys->decomp with cutoff rc + skin",
                         e->decomp.cutoff, e->rh);
    HXI_CHECK(choose_device(e));
    int least = 0, greatest = 0;
    CU(cudaDeviceGetStreamPriorityRange(&least, &greatest), "stream priorities");
    CU(cudaStreamCreateWithPriority(&e->s_loc, cudaStreamNonBlocking, least), "stream");
    CU(cudaStreamCreateWithPriority(&e->s_nl, cudaStreamNonBlocking, greatest), "stream");
    CU(cudaEventCreateWithFlags(&e->ev_kd, cudaEventDisableTiming), "event");
    CU(cudaEventCreateWithFlags(&e->ev_rev, cudaEventDisableTiming), "event");
    CU(cudaEventCreateWithFlags(&e->ev_acc, cudaEventDisableTiming), "event");
    CU(cudaEventCreateWithFlags(&e->ev_gfork, cudaEventDisableTiming), "event");
    CU(cudaEventCreateWithFlags(&e->ev_gjoin, cudaEventDisableTiming), "event");
    setup_physics(e);
    double vol = e->decomp.box_len[0] * e->decomp.box_len[1] * e->decomp.box_len[2];
    int m = neigh_max_for(e, (double) e->sys->natoms / vol);
    e->loc.max = m;
    e->nl.max = m;
    size_t nc = (size_t) e->cells.ncell;
    HXI_CHECK(dev_grow(&e->flags, &(size_t){0}, sizeof(hxg_flags), "flags"));
    HXI_CHECK(dev_grow(&e->acc, &(size_t){0}, HXG_NACC * sizeof(double), "thermo sums"));
    HXI_CHECK(dev_grow(&e->cell_cnt, &(size_t){0}, sizeof(int32_t) * nc, "cell counts"));
    HXI_CHECK(dev_grow(&e->cell_start, &(size_t){0}, sizeof(int32_t) * (nc + 1), "cell starts"));
    HXI_CHECK(dev_grow(&e->scan_tmp, &(size_t){0}, sizeof(int32_t) * 2 * HXG_MAX_SCAN_BLOCKS,
                       "scan scratch"));
    CU(cudaHostAlloc((void **) &e->report, sizeof(hxg_report), cudaHostAllocMapped),
       "mapped host allocation");
    CU(cudaHostGetDevicePointer((void **) &e->report_dev, e->report, 0), "mapped pointer");
    memset((void *) e->report, 0, sizeof(hxg_report));
    hxg_flags fl;
    memset(&fl, 0, sizeof fl);
    fl.moved_step = -1;
    fl.cur = 1;
    CU(cudaMemcpy(e->flags, &fl, sizeof fl, cudaMemcpyHostToDevice), "flag set-up");
    CU(cudaMemset(e->cell_cnt, 0, sizeof(int32_t) * nc), "cell count set-up");
    e->graphs = !e->multi && !e->host_rebuild && hxi_env_int("HALOX_MD_GRAPH", 1) != 0;
    e->timers_every = hxi_env_int("HALOX_MD_TIMERS", e->graphs || e->mgraph ? 16 : 1);
    e->timers_on = e->timers_every > 0;
    if (e->timers_every < 1)
        e->timers_every = 1;
    if (e->timers_on) {
        HXI_CHECK(hxi_alloc((void **) &e->spans, TM_SLOTS * sizeof(tm_span), "timers"));
        memset(e->spans, 0, TM_SLOTS * sizeof(tm_span));
        for (int k = 0; k < TM_SLOTS; k++) {
            CU(cudaEventCreate(&e->spans[k].a), "timer event");
            CU(cudaEventCreate(&e->spans[k].b), "timer event");
        }
    }
    return HX_OK;
}

static hx_status gpu_create(hx_md_engine **out, hx_comm *comm, const hx_md_config *cfg,
                            hx_md_system *sys)
{
    if (!out || !comm || !cfg || !sys)
        return hxi_error(HX_ERR_INVALID, "GPU engine: create needs an engine pointer, a "
                                         "communicator, a config and a system");
    *out = NULL;
    hx_md_engine *e = calloc(1, sizeof *e);
    HXI_CHECK(
        hxi_agree(comm, e ? HX_OK : hxi_error(HX_ERR_NOMEM, "GPU engine: out of host memory")));
    hx_status st = HX_OK;
    e->cfg = *cfg;
    if (e->cfg.neigh_every < 1)
        e->cfg.neigh_every = 1;
    if (e->cfg.neigh_delay < 0)
        e->cfg.neigh_delay = 0;
    e->comm = comm;
    e->sys = sys;
    e->decomp = sys->decomp;
    e->rank = hx_comm_rank(comm);
    e->nranks = hx_comm_size(comm);
    e->multi = e->nranks > 1;
    e->host_rebuild = hxi_env_int("HALOX_MD_HOST_REBUILD", 0) != 0;
    e->rh = cfg->rc + cfg->skin;
    HXI_CHECK_GOTO(local_rank(e), st, fail);
    {
        /* Graph mode with several ranks: only for a transport that can be
         * captured (named, or the default; `auto` measures launched
         * transports), and only where every rank wants it: it decides at
         * which steps the ranks meet in collectives. */
        const char *tn = cfg->transport[0] && strcmp(cfg->transport, "default") != 0
                             ? cfg->transport
                             : default_transport(e);
        int no = !(e->multi && (hx_transport_caps_of(tn) & HX_CAP_GRAPH) &&
                   hxi_env_int("HALOX_MD_GRAPH", 1) != 0);
        HXI_CHECK_GOTO(hxi_allreduce_int(comm, &no, 1, 1), st, fail);
        e->mgraph = !no;
        e->mg_ok = e->mgraph;
    }
    HXI_CHECK_GOTO(hxi_agree(comm, create_local(e)), st, fail);
    st = make_transport(e);
    HXI_CHECK_GOTO(hxi_agree(comm, st), st, fail);
    e->step = 0;
    HXI_CHECK_GOTO(rebuild_host(e, 1), st, fail);
    HXI_CHECK_GOTO(hxi_agree(comm, force_pass(e, 1, e->acc)), st, fail);
    e->acc_valid = 1;
    e->host_rebuilds = 0; /* count the rebuilds of the run, not the set-up */
    memset(e->rb_phase, 0, sizeof e->rb_phase);
    memset(&e->stats, 0, sizeof e->stats);
    capture_ahead(e);
    {
        const int *g = e->decomp.grid;
        const char *how = e->mgraph  ? "host-path rebuilds, halo on a high-priority stream, steps "
                                       "between rebuild and thermo steps replayed from one CUDA "
                                       "graph (errors agreed at those steps)"
                          : e->multi ? "host-path rebuilds, halo on a high-priority stream"
                          : e->host_rebuild ? "host-path rebuilds"
                          : e->graphs ? "device-resident rebuilds, steps replayed from CUDA graphs"
                                      : "device-resident rebuilds";
        snprintf(e->desc, sizeof e->desc,
                 "gpu engine (float): %s [%s], grid %dx%dx%d, rank %d on GPU %d of %d (%s, %d "
                 "rank(s) on this host), %d thread(s) per atom, lists of up to %d, %s",
                 hx_transport_name(e->t), hx_transport_describe(e->t), g[0], g[1], g[2], e->rank,
                 e->device, e->ndevices, e->device_name, e->local_size, e->tpp, e->loc.max, how);
    }
    *out = e;
    return HX_OK;
fail:
    gpu_destroy(e);
    return st;
}

/* The kernels of one device-resident step on the local stream: kick-drift,
 * the rebuild kernel where one may happen, forces with the closing kick.
 * The step number comes from flags->cur, so that the same launches can be
 * captured once and replayed. */
static hx_status launch_device_step(hx_md_engine *e, int candidate, int want_thermo)
{
    const hx_md_config *c = &e->cfg;
    double *acc = want_thermo ? e->acc : NULL;
    int k = tm_open(e, HX_MD_INTEGRATE, e->s_loc);
    CU(hxg_kickdrift((void *) e->s_loc, e->nhome, e->x4, e->v4, e->f4, e->xold4, NULL,
                     c->nve ? e->dtf : 0.0f, c->nve ? e->dt : 0.0f, c->neigh_check, c->neigh_every,
                     e->trig2, -1, e->flags, acc),
       "kick-drift launch");
    tm_close(e, k, e->s_loc);
    if (candidate) {
        k = tm_open(e, HX_MD_NEIGH, e->s_loc);
        CU(hxg_rebuild_single((void *) e->s_loc, e->nhome, e->x4, e->v4, e->id, e->xold4, e->sx4,
                              e->sv4, e->sid, e->cells, e->geom, e->lj.rh2, e->cell_cnt,
                              e->cell_start, e->cellof, e->cellatoms, e->scan_tmp, e->loc, e->flags,
                              e->report_dev, -1, c->neigh_every, c->neigh_delay, c->neigh_check),
           "device rebuild launch");
        tm_close(e, k, e->s_loc);
    }
    k = tm_open(e, HX_MD_LOCAL, e->s_loc);
    CU(hxg_force_local((void *) e->s_loc, e->tpp, e->nhome, e->x4, e->loc, e->lj, e->geom, e->f4,
                       e->v4, c->nve ? e->dtf : 0.0f, e->mass, acc, &e->flags->cur),
       "force launch");
    tm_close(e, k, e->s_loc);
    return HX_OK;
}

/* Captures one kind of step into a graph. A failure (a driver that will
 * not capture the cooperative launch, say) turns graphs off; the plain
 * launches do the same work. */
static void capture_step(hx_md_engine *e, int candidate, int want_thermo)
{
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    int timing = e->timing_now;
    e->timing_now = 0;
    hx_status st = HX_OK;
    if (cudaStreamBeginCapture(e->s_loc, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        st = HX_ERR_CUDA;
    } else {
        st = launch_device_step(e, candidate, want_thermo);
        if (cudaStreamEndCapture(e->s_loc, &g) != cudaSuccess)
            st = HX_ERR_CUDA;
    }
    if (st == HX_OK && cudaGraphInstantiate(&x, g, 0) != cudaSuccess)
        st = HX_ERR_CUDA;
    if (g)
        cudaGraphDestroy(g);
    cudaGetLastError();
    e->timing_now = timing;
    if (st != HX_OK) {
        hxi_warn("GPU engine: could not capture a step into a CUDA graph; launching kernels "
                 "one by one instead");
        e->graphs = 0;
        return;
    }
    e->gexec[candidate][want_thermo] = x;
}

/* One rank, rebuilds on the device: no host synchronisation in a step. */
static hx_status step_device(hx_md_engine *e, int want_thermo)
{
    const int candidate = e->step % e->cfg.neigh_every == 0;
    if (e->graphs && !e->timing_now) {
        if (!e->gexec[candidate][want_thermo])
            capture_step(e, candidate, want_thermo);
        if (e->graphs) {
            CU(cudaGraphLaunch(e->gexec[candidate][want_thermo], e->s_loc), "graph launch");
            e->graph_steps++;
            return check_report(e);
        }
    }
    HXI_CHECK(launch_device_step(e, candidate, want_thermo));
    return check_report(e);
}

/* ------------------------------------------- several ranks, graph mode */

/* Graph mode (e->mgraph) replays every step that is neither a rebuild
 * candidate nor a thermo step from one CUDA graph of the whole two-stream
 * step, and such steps never synchronise with the host or the other ranks.
 * Where the ranks still meet: candidate steps (the rebuild is collective,
 * and with `check yes` the decision is data-dependent, read back and
 * allreduced), thermo steps and thermo() (collective sums) -- the checks.
 * Which steps those are depends only on the step count, the config and the
 * driver's thermo flag, the same on every rank, so every rank reaches the
 * same collective in the same step.
 *
 * Why nothing in between can hang: a replayed step only enqueues work (a
 * graph launch never waits for another rank), and every device-side wait of
 * the fused transports is bounded by its timeout; the first wait to expire
 * records itself and makes every later wait on that rank return at once,
 * so each rank's streams drain in bounded time whatever its peers do. A
 * failure seen on the host between checks (a launch, a capture) is kept in
 * e->pending, printed at once as a warning, and this rank stops enqueuing
 * (its peers' waits then expire) but keeps stepping until the next check,
 * where the streams are drained, the transport's timeout record is read
 * (hx_transport_sync) and the status is agreed: every rank returns the
 * same error from that step. */

/* Whether the step `ago` steps after the last build may rebuild
 * (LAMMPS's Neighbor::decide without the half-skin test). */
static int rebuild_candidate(const hx_md_engine *e, int ago)
{
    return ago >= e->cfg.neigh_delay && ago % e->cfg.neigh_every == 0;
}

/* The first deferred failure, raised again for the check (HX_OK if none). */
static hx_status pending_status(hx_md_engine *e)
{
    if (e->pending == HX_OK)
        return HX_OK;
    return hxi_error(e->pending, "%s (rank %d, step %lld; reported at the check of step %lld)",
                     e->pending_msg, e->rank, (long long) e->pending_step, (long long) e->step);
}

static void defer(hx_md_engine *e, hx_status st)
{
    if (e->pending != HX_OK || st == HX_OK)
        return;
    e->pending = st;
    e->pending_step = e->step;
    snprintf(e->pending_msg, sizeof e->pending_msg, "%s", hx_last_error());
    hxi_warn("GPU engine: rank %d failed at step %lld: %s; the run stops at the next rebuild or "
             "thermo step, where the ranks agree on errors",
             e->rank, (long long) e->step, e->pending_msg);
}

/* Rank-local part of a check: deferred failures, then drained streams and
 * the transport's timeout record. The caller agrees on the result. */
static hx_status check_local(hx_md_engine *e, hx_status st)
{
    if (st == HX_OK)
        st = pending_status(e);
    if (st == HX_OK && (cudaStreamSynchronize(e->s_loc) != cudaSuccess ||
                        cudaStreamSynchronize(e->s_nl) != cudaSuccess))
        st = cuda_fail(cudaGetLastError(), "waiting for the steps since the last check");
    if (st == HX_OK)
        st = hx_transport_sync(e->t);
    return st;
}

/* One step between checks, on both streams (captured, or launched when the
 * step is timed or capture failed): kick-drift, which also writes the home
 * coordinates into the transport's array; fork to the non-local stream for
 * forward, non-local forces and reverse while the local forces run; join;
 * closing kick. No thermo sums, and no half-skin check: such a step is
 * never a rebuild candidate, so it needs no step number (the transport
 * keeps its own on the device). fork/join: the events that link the
 * streams (capture needs its own pair, see capture_multi). Rank-local. */
static hx_status launch_multi_step(hx_md_engine *e, cudaEvent_t fork, cudaEvent_t join)
{
    const hx_md_config *c = &e->cfg;
    const float dtf = c->nve ? e->dtf : 0.0f;
    int k = tm_open(e, HX_MD_INTEGRATE, e->s_loc);
    CU(hxg_kickdrift((void *) e->s_loc, e->nhome, e->x4, e->v4, e->f4, e->xold4, e->tx, dtf,
                     c->nve ? e->dt : 0.0f, 0, c->neigh_every, e->trig2, 0, e->flags, NULL),
       "kick-drift launch");
    tm_close(e, k, e->s_loc);
    CU(cudaEventRecord(fork, e->s_loc), "event");
    CU(cudaStreamWaitEvent(e->s_nl, fork, 0), "event wait");
    k = tm_open(e, HX_MD_HALO_FWD, e->s_nl);
    HXI_CHECK(hx_transport_forward(e->t));
    tm_close(e, k, e->s_nl);
    k = tm_open(e, HX_MD_LOCAL, e->s_loc);
    CU(hxg_force_local((void *) e->s_loc, e->tpp, e->nhome, e->x4, e->loc, e->lj, e->geom, e->f4,
                       NULL, 0.0f, e->mass, NULL, NULL),
       "local force launch");
    tm_close(e, k, e->s_loc);
    k = tm_open(e, HX_MD_NONLOCAL, e->s_nl);
    CU(hxg_force_nonlocal((void *) e->s_nl, e->tpp_nl, e->ntotal, e->tx, e->nl, e->lj, e->geom,
                          e->tf, NULL),
       "non-local force launch");
    tm_close(e, k, e->s_nl);
    k = tm_open(e, HX_MD_HALO_REV, e->s_nl);
    HXI_CHECK(hx_transport_reverse(e->t));
    tm_close(e, k, e->s_nl);
    CU(cudaEventRecord(join, e->s_nl), "event");
    CU(cudaStreamWaitEvent(e->s_loc, join, 0), "event wait");
    k = tm_open(e, HX_MD_INTEGRATE, e->s_loc);
    CU(hxg_kick((void *) e->s_loc, e->nhome, e->v4, e->f4, e->tf, dtf, e->mass, NULL),
       "kick launch");
    tm_close(e, k, e->s_loc);
    return HX_OK;
}

/* Captures the step above into e->mg_exec: capture begins on the local
 * stream, the non-local stream joins through the fork event and leaves
 * through the join event, so the graph holds both branches and their
 * order. Kernel nodes keep their stream's priority (instantiated with
 * UseNodePriority): the exchange branch stays ahead of the local forces.
 * After a rebuild the existing executable is updated in place where the
 * topology allows (cudaGraphExecUpdate), else instantiated again. Capture
 * makes no CUDA call that waits, so it may run while the GPU is busy. A
 * failure turns replay off on this rank (the same kernels are launched one
 * by one instead; where the ranks meet does not change). */
static void capture_multi(hx_md_engine *e)
{
    cudaGraph_t g = NULL;
    const int timing = e->timing_now;
    hx_status st = HX_OK;
    cudaError_t ce;
    e->timing_now = 0;
    ce = cudaStreamBeginCapture(e->s_loc, cudaStreamCaptureModeThreadLocal);
    if (ce != cudaSuccess) {
        st = cuda_fail(ce, "beginning the capture of a step");
    } else {
        st = launch_multi_step(e, e->ev_gfork, e->ev_gjoin);
        if (st != HX_OK) {
            /* Join the other stream anyway, so that the capture ends. */
            (void) cudaEventRecord(e->ev_gjoin, e->s_nl);
            (void) cudaStreamWaitEvent(e->s_loc, e->ev_gjoin, 0);
        }
        ce = cudaStreamEndCapture(e->s_loc, &g);
        if (st == HX_OK && ce != cudaSuccess)
            st = cuda_fail(ce, "capturing a step");
    }
    if (st == HX_OK && e->mg_exec) {
        cudaGraphExecUpdateResultInfo info;
        if (cudaGraphExecUpdate(e->mg_exec, g, &info) != cudaSuccess) {
            cudaGetLastError();
            cudaGraphExecDestroy(e->mg_exec);
            e->mg_exec = NULL;
        }
    }
    if (st == HX_OK && !e->mg_exec) {
        ce = cudaGraphInstantiate(&e->mg_exec, g, cudaGraphInstantiateFlagUseNodePriority);
        if (ce != cudaSuccess) {
            e->mg_exec = NULL;
            st = cuda_fail(ce, "instantiating the captured step");
        }
    }
    if (st == HX_OK && cudaGraphUpload(e->mg_exec, e->s_loc) != cudaSuccess)
        cudaGetLastError(); /* only saves the first replay some time */
    if (g)
        cudaGraphDestroy(g);
    e->timing_now = timing;
    if (st != HX_OK) {
        cudaGetLastError();
        hxi_warn("GPU engine: rank %d could not capture a step into a CUDA graph (%s); launching "
                 "its kernels one by one instead",
                 e->rank, hx_last_error());
        e->mg_ok = 0;
        return;
    }
    e->mg_dirty = 0;
}

/* Captures now, at the end of a step (outside the stretches the driver
 * times), when the plan changed and the next step will be replayed. */
static void capture_ahead(hx_md_engine *e)
{
    if (e->mgraph && e->mg_ok && e->mg_dirty && e->pending == HX_OK &&
        !rebuild_candidate(e, e->ago + 1))
        capture_multi(e);
}

/* A step between checks: replayed, or launched when timed (or where capture
 * failed). Returns HX_OK even on failure: the failure is deferred to the
 * next check, where every rank meets (see above). */
static hx_status step_replay(hx_md_engine *e)
{
    e->ago++;
    if (e->pending != HX_OK)
        return HX_OK; /* stopped at its failure; peers' waits expire */
    if (e->mg_ok && !e->timing_now) {
        if (e->mg_dirty)
            capture_multi(e);
        if (e->mg_ok) {
            cudaError_t ce = cudaGraphLaunch(e->mg_exec, e->s_loc);
            if (ce == cudaSuccess)
                e->graph_steps++;
            else
                defer(e, cuda_fail(ce, "graph launch"));
            return HX_OK;
        }
    }
    defer(e, launch_multi_step(e, e->ev_kd, e->ev_rev));
    return HX_OK;
}

/* Host-path rebuilds (every multi-rank run). Every return is agreed on by
 * all ranks, so that nobody is left in a collective. */
static hx_status step_host(hx_md_engine *e, int want_thermo, hx_status st)
{
    const hx_md_config *c = &e->cfg;
    const int64_t step = e->step;
    double *acc = want_thermo ? e->acc : NULL;
    int rebuild = 0, k;

    e->ago++;
    if (rebuild_candidate(e, e->ago)) {
        if (e->mgraph)
            st = check_local(e, st); /* agreed below, before any collective */
        if (!c->neigh_check) {
            rebuild = 1;
        } else {
            double t0 = now_s();
            int64_t moved = -1;
            if (st == HX_OK && (cudaMemcpyAsync(&moved, &e->flags->moved_step, sizeof moved,
                                                cudaMemcpyDeviceToHost, e->s_loc) != cudaSuccess ||
                                cudaStreamSynchronize(e->s_loc) != cudaSuccess))
                st = cuda_fail(cudaGetLastError(), "half-skin check");
            HXI_CHECK(hxi_agree(e->comm, st));
            rebuild = moved == step;
            HXI_CHECK(hxi_allreduce_int(e->comm, &rebuild, 1, 1));
            e->stats.stage[HX_MD_OTHER] += now_s() - t0;
        }
        if (rebuild) {
            HXI_CHECK(hxi_agree(e->comm, st));
            HXI_CHECK(rebuild_host(e, 0));
        }
    }
    const float dtf = c->nve ? e->dtf : 0.0f;
    if (st == HX_OK && !e->multi) {
        k = tm_open(e, HX_MD_LOCAL, e->s_loc);
        if (hxg_force_local((void *) e->s_loc, e->tpp, e->nhome, e->x4, e->loc, e->lj, e->geom,
                            e->f4, e->v4, dtf, e->mass, acc, NULL) != 0)
            st = cuda_fail(cudaGetLastError(), "force launch");
        tm_close(e, k, e->s_loc);
        return st;
    }
    if (st == HX_OK && !rebuild) {
        if (cudaEventRecord(e->ev_kd, e->s_loc) != cudaSuccess ||
            cudaStreamWaitEvent(e->s_nl, e->ev_kd, 0) != cudaSuccess)
            st = cuda_fail(cudaGetLastError(), "event");
    }
    /* A transport that blocks the host goes after the local kernel is
     * queued, so that they overlap; otherwise the halo goes first. */
    for (int pass = 0; pass < 2 && st == HX_OK; pass++) {
        if ((pass == 0) == (e->blocking_transport != 0)) {
            k = tm_open(e, HX_MD_LOCAL, e->s_loc);
            if (hxg_force_local((void *) e->s_loc, e->tpp, e->nhome, e->x4, e->loc, e->lj, e->geom,
                                e->f4, NULL, 0.0f, e->mass, acc, NULL) != 0)
                st = cuda_fail(cudaGetLastError(), "local force launch");
            tm_close(e, k, e->s_loc);
        } else if (!rebuild) {
            k = tm_open(e, HX_MD_HALO_FWD, e->s_nl);
            st = hx_transport_forward(e->t);
            tm_close(e, k, e->s_nl);
        }
    }
    if (st == HX_OK) {
        k = tm_open(e, HX_MD_NONLOCAL, e->s_nl);
        if (hxg_force_nonlocal((void *) e->s_nl, e->tpp_nl, e->ntotal, e->tx, e->nl, e->lj, e->geom,
                               e->tf, acc) != 0)
            st = cuda_fail(cudaGetLastError(), "non-local force launch");
        tm_close(e, k, e->s_nl);
    }
    if (st == HX_OK) {
        k = tm_open(e, HX_MD_HALO_REV, e->s_nl);
        st = hx_transport_reverse(e->t);
        tm_close(e, k, e->s_nl);
    }
    if (st == HX_OK && (cudaEventRecord(e->ev_rev, e->s_nl) != cudaSuccess ||
                        cudaStreamWaitEvent(e->s_loc, e->ev_rev, 0) != cudaSuccess))
        st = cuda_fail(cudaGetLastError(), "event");
    if (st == HX_OK) {
        k = tm_open(e, HX_MD_INTEGRATE, e->s_loc);
        if (hxg_kick((void *) e->s_loc, e->nhome, e->v4, e->f4, e->tf, dtf, e->mass, acc) != 0)
            st = cuda_fail(cudaGetLastError(), "kick launch");
        tm_close(e, k, e->s_loc);
    }
    return hxi_agree(e->comm, st);
}

static hx_status gpu_step(hx_md_engine *e, int want_thermo)
{
    const hx_md_config *c = &e->cfg;
    const int64_t step = e->step + 1;
    hx_status st = HX_OK;

    e->step = step;
    e->stats.steps++;
    e->acc_valid = 0;
    e->timing_now = tm_sampled(step, e->timers_every);
    want_thermo = want_thermo != 0;
    if (!e->multi && !e->host_rebuild) {
        st = step_device(e, want_thermo);
    } else if (e->mgraph && !want_thermo && !rebuild_candidate(e, e->ago + 1)) {
        st = step_replay(e);
    } else {
        /* With graph mode this is a check: a deferred failure skips the
         * launches and is agreed in step_host. */
        st = e->mgraph ? pending_status(e) : HX_OK;
        int k = tm_open(e, HX_MD_INTEGRATE, e->s_loc);
        if (st == HX_OK &&
            hxg_kickdrift((void *) e->s_loc, e->nhome, e->x4, e->v4, e->f4, e->xold4,
                          e->multi ? e->tx : NULL, c->nve ? e->dtf : 0.0f, c->nve ? e->dt : 0.0f,
                          c->neigh_check, c->neigh_every, e->trig2, step, e->flags,
                          want_thermo ? e->acc : NULL) != 0)
            st = cuda_fail(cudaGetLastError(), "kick-drift launch");
        tm_close(e, k, e->s_loc);
        st = step_host(e, want_thermo, st);
        if (st == HX_OK)
            capture_ahead(e);
    }
    e->acc_valid = st == HX_OK && want_thermo;
    return st;
}

static hx_status gpu_thermo(hx_md_engine *e, hx_md_thermo *out)
{
    if (!e || !out)
        return hxi_error(HX_ERR_INVALID, "GPU engine: thermo needs an engine and an output");
    double t0 = now_s();
    double sums[HXG_NACC] = {0.0, 0.0, 0.0};
    hx_status st = pending_status(e); /* a check in graph mode */
    if (st == HX_OK && !e->acc_valid)
        st = force_pass(e, 0, e->acc);
    if (st == HX_OK &&
        (cudaStreamSynchronize(e->s_nl) != cudaSuccess ||
         cudaStreamSynchronize(e->s_loc) != cudaSuccess ||
         cudaMemcpy(sums, e->acc, sizeof sums, cudaMemcpyDeviceToHost) != cudaSuccess))
        st = cuda_fail(cudaGetLastError(), "thermo read-back");
    if (st == HX_OK && e->multi)
        st = hx_transport_sync(e->t);
    if (st == HX_OK)
        st = check_report(e);
    HXI_CHECK(hxi_agree(e->comm, st));
    e->acc_valid = 1;
    HXI_CHECK(hxi_allreduce_double(e->comm, sums, HXG_NACC, 0));
    const double *L = e->decomp.box_len;
    hx_md_thermo_from_sums(out, e->step, e->sys->natoms, L[0] * L[1] * L[2], sums[HXG_ACC_MV2],
                           sums[HXG_ACC_E], sums[HXG_ACC_W]);
    tm_harvest_all(e);
    e->stats.stage[HX_MD_OTHER] += now_s() - t0;
    return HX_OK;
}

static hx_status gpu_gather(hx_md_engine *e, hx_md_system *sys, double **f)
{
    if (!e || !sys)
        return hxi_error(HX_ERR_INVALID, "GPU engine: gather needs an engine and a system");
    CU(cudaStreamSynchronize(e->s_nl), "non-local stream");
    CU(cudaStreamSynchronize(e->s_loc), "local stream");
    HXI_CHECK(check_report(e));
    int n = e->nhome;
    if (n > sys->capacity || !sys->x) {
        HXI_CHECK(
            hxi_grow((void **) &sys->x, sizeof(double) * 3 * (size_t) (n ? n : 1), "positions"));
        HXI_CHECK(
            hxi_grow((void **) &sys->v, sizeof(double) * 3 * (size_t) (n ? n : 1), "velocities"));
        HXI_CHECK(hxi_grow((void **) &sys->id, sizeof(int64_t) * (size_t) (n ? n : 1), "atom ids"));
        sys->capacity = n;
    }
    CU(cudaMemcpy(e->h4, e->x4, 16 * (size_t) n, cudaMemcpyDeviceToHost), "download x");
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            sys->x[3 * i + k] = (double) e->h4[4 * i + k];
    CU(cudaMemcpy(e->h4, e->v4, 16 * (size_t) n, cudaMemcpyDeviceToHost), "download v");
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            sys->v[3 * i + k] = (double) e->h4[4 * i + k];
    CU(cudaMemcpy(sys->id, e->id, 8 * (size_t) n, cudaMemcpyDeviceToHost), "download id");
    sys->n = n;
    if (sys != e->sys) {
        sys->decomp = e->decomp;
        sys->natoms = e->sys->natoms;
    }
    if (f) {
        if (n > e->fout_cap) {
            HXI_CHECK(hxi_grow((void **) &e->fout, sizeof(double) * 3 * (size_t) n, "forces"));
            e->fout_cap = n;
        }
        CU(cudaMemcpy(e->h4, e->f4, 16 * (size_t) n, cudaMemcpyDeviceToHost), "download f");
        for (int i = 0; i < n; i++)
            for (int k = 0; k < 3; k++)
                e->fout[3 * i + k] = (double) e->h4[4 * i + k];
        *f = e->fout;
    }
    return HX_OK;
}

static const hx_md_stats *gpu_stats(const hx_md_engine *ce)
{
    /* Reading the stage timers waits for the GPU: the engine is not const
     * underneath, and the caller asks for final numbers. */
    hx_md_engine *e = (hx_md_engine *) ce;
    cudaStreamSynchronize(e->s_nl);
    cudaStreamSynchronize(e->s_loc);
    cudaGetLastError();
    tm_harvest_all(e);
    e->stats.rebuilds = e->host_rebuilds + (e->report ? e->report->rebuilds : 0);
    return &e->stats;
}

static const char *gpu_describe(const hx_md_engine *e)
{
    return e ? e->desc : "gpu engine";
}

static void gpu_destroy(hx_md_engine *e)
{
    if (!e)
        return;
    if (e->host_rebuilds > 0 && e->rank == 0 && hxi_log_level() >= 1) {
        char line[512];
        int len = snprintf(line, sizeof line, "host-path rebuilds, ms each on rank 0:");
        for (int k = 0; k < 9 && len < (int) sizeof line; k++)
            len += snprintf(line + len, sizeof line - (size_t) len, " %s %.3f",
                            rebuild_phase_names[k], 1e3 * e->rb_phase[k] / e->host_rebuilds);
        hxi_info("%s", line);
    }
    if (e->s_loc)
        cudaStreamSynchronize(e->s_loc);
    if (e->s_nl)
        cudaStreamSynchronize(e->s_nl);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            if (e->gexec[a][b])
                cudaGraphExecDestroy(e->gexec[a][b]);
    if (e->mg_exec)
        cudaGraphExecDestroy(e->mg_exec);
    if (e->t)
        hx_transport_destroy(e->t);
    if (e->plan)
        hx_plan_destroy(e->plan);
    void *dev[] = {e->x4,        e->v4,       e->f4,         e->xold4,    e->sx4,
                   e->sv4,       e->id,       e->sid,        e->zones,    e->cellof,
                   e->cellatoms, e->cell_cnt, e->cell_start, e->scan_tmp, e->loc.nb,
                   e->loc.cnt,   e->nl.nb,    e->nl.cnt,     e->flags,    e->acc};
    for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++)
        if (dev[k])
            cudaFree(dev[k]);
    if (e->h4)
        cudaFreeHost(e->h4);
    if (e->h3)
        cudaFreeHost(e->h3);
    if (e->report)
        cudaFreeHost(e->report);
    if (e->spans) {
        for (int k = 0; k < TM_SLOTS; k++) {
            if (e->spans[k].a)
                cudaEventDestroy(e->spans[k].a);
            if (e->spans[k].b)
                cudaEventDestroy(e->spans[k].b);
        }
        free(e->spans);
    }
    if (e->ev_kd)
        cudaEventDestroy(e->ev_kd);
    if (e->ev_rev)
        cudaEventDestroy(e->ev_rev);
    if (e->ev_acc)
        cudaEventDestroy(e->ev_acc);
    if (e->ev_gfork)
        cudaEventDestroy(e->ev_gfork);
    if (e->ev_gjoin)
        cudaEventDestroy(e->ev_gjoin);
    if (e->s_loc)
        cudaStreamDestroy(e->s_loc);
    if (e->s_nl)
        cudaStreamDestroy(e->s_nl);
    cudaGetLastError();
    free(e->fout);
    free(e->hcell);
    free(e->htmp);
    free(e->htmp_id);
    free(e);
}

static hx_status gpu_sync(hx_md_engine *e)
{
    CU(cudaStreamSynchronize(e->s_loc), "waiting for the local stream");
    CU(cudaStreamSynchronize(e->s_nl), "waiting for the non-local stream");
    return HX_OK;
}

int64_t hxg_engine_graph_steps(const struct hx_md_engine *e)
{
    return e ? e->graph_steps : 0;
}

const hx_md_engine_ops hx_md_engine_gpu = {
    .name = "gpu",
    .create = gpu_create,
    .step = gpu_step,
    .thermo = gpu_thermo,
    .gather = gpu_gather,
    .stats = gpu_stats,
    .sync = gpu_sync,
    .describe = gpu_describe,
    .destroy = gpu_destroy,
};
