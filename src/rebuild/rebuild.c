/*
 * rebuild.c - the device rebuild's context, its byte exchange with the
 * neighbours, migration of device arrays, and the census of atoms.
 *
 * Migration goes dimension by dimension (Z, Y, X, decomposed ones only):
 * a kernel classes every atom (stays, goes down, goes up; the first pass
 * also wraps positions into the box), block counts are scanned, and the
 * host learns three totals. Each atom's record is packed into the buffer
 * of its class at its slot (stable: order kept) by a kernel queued behind
 * the class kernel, before the host waits for the totals: the buffers of
 * leavers keep the room of earlier migrations (at least 1/16 of the atoms),
 * and the rare dimension that sends more grows them and packs again.
 * Counts go to both neighbours, the ranks agree on errors, the leavers'
 * records are exchanged, and stayers then arrivals from below then from
 * above are written back: the order hx_migrate leaves. One host
 * synchronisation per dimension; no per-atom data reaches the host.
 */
#include "rebuild/context.h"
#include "transport/gpu/gpu.h" /* hxi_now */

#include <cuda_runtime_api.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HXR_TAG_COUNT = 501, HXR_TAG_XCHG = 511 };

/* ------------------------------------------------------------- helpers */

hx_status hxr_cuda(int err, const char *what)
{
    cudaError_t e = (cudaError_t) err;
    cudaGetLastError();
    return hxi_error(e == cudaErrorMemoryAllocation ? HX_ERR_NOMEM : HX_ERR_CUDA,
                     "device rebuild: %s failed: %s (%s); use fewer atoms per GPU if memory ran "
                     "out",
                     what, cudaGetErrorString(e), cudaGetErrorName(e));
}

hx_status hxr_grow(void **p, size_t *cap, size_t need, const char *what)
{
    return hxi_gpu_grow(p, cap, need, need + need / 4 + 256, what);
}

static hx_status hxr_host_grow(void **p, size_t *cap, size_t need, const char *what)
{
    if (*p && need <= *cap)
        return HX_OK;
    if (*p)
        cudaFreeHost(*p);
    *p = NULL;
    *cap = 0;
    size_t bytes = need + need / 4 + 256;
    if (cudaHostAlloc(p, bytes, cudaHostAllocDefault) != cudaSuccess) {
        *p = NULL;
        cudaGetLastError();
        return hxi_error(HX_ERR_NOMEM, "device rebuild: pinned allocation of %zu bytes for %s",
                         bytes, what);
    }
    *cap = bytes;
    return HX_OK;
}

hx_status hxr_stream(hx_rebuild *r, void **stream)
{
    hx_transport *a = hxi_transport_actual(r->t);
    if (!a || !a->stream)
        return hxi_error(HX_ERR_STATE,
                         "device rebuild: transport '%s' has no device stream yet (auto chooses "
                         "at its first plan): give it a plan with hx_transport_set_plan first",
                         hx_transport_name(r->t));
    *stream = a->stream;
    return HX_OK;
}

hx_status hxr_begin(hx_rebuild *r, void *stream)
{
    if (r->res_dirty)
        HXR_CU(hxr_reset(stream, r->d_res), "clearing the rebuild's counts");
    r->res_dirty = 1;
    return HX_OK;
}

hx_status hxr_fetch(hx_rebuild *r, void *stream)
{
    HXR_CU(cudaMemcpyAsync(r->h_res, r->d_res, sizeof *r->h_res, cudaMemcpyDeviceToHost,
                           (cudaStream_t) stream),
           "copying the rebuild's counts");
    hx_status st = hxr_await(r, stream);
    r->res_dirty = 1; /* copied, not cleared: hxr_begin clears it before its next use */
    return st;
}

hx_status hxr_await(hx_rebuild *r, void *stream)
{
    double t0 = hxi_now();
    /* The transport's sync is bounded and reports a timed-out wait of the
     * exchange; without device waits it is a plain stream sync. */
    HXI_CHECK(hx_transport_sync(r->t));
    HXR_CU(cudaStreamSynchronize((cudaStream_t) stream), "waiting for the rebuild's kernels");
    r->res_dirty = 0;
    r->t_wait += hxi_now() - t0;
    return hxr_recount_check(r);
}

hx_status hxr_recount_check(hx_rebuild *r)
{
    if (!r->h_recount || !*(volatile int32_t *) r->h_recount)
        return HX_OK;
    *(volatile int32_t *) r->h_recount = 0;
    return hxi_error(HX_ERR_INVALID,
                     "device plan: rank %d's first pulse selected another number of atoms than "
                     "hx_plan_count_device counted: the coordinates given to "
                     "hx_plan_create_device were not the counted atoms (in any order); its plan "
                     "was wrong, make it again",
                     r->d.rank);
}

hx_status hxr_swap2(hx_rebuild *r, const int out[2], const int dest[2], int in[2], const int src[2],
                    int tag)
{
    double t0 = hxi_now();
    hx_status st = hxi_swap_ints2(r->comm, out, dest, in, src, tag);
    r->t_msg += hxi_now() - t0;
    return st;
}

hx_status hxr_agree_max(hx_rebuild *r, hx_status st, int *v, int n)
{
    int size = hx_comm_size(r->comm), rank = hx_comm_rank(r->comm);
    if (st == HX_OK && r->pending != HX_OK)
        st = hxi_error(r->pending, "%s", r->pending_msg);
    r->pending = HX_OK;
    v[0] = st != HX_OK ? size - rank : 0;
    double t0 = hxi_now();
    hx_status ast = hxi_allreduce_int(r->comm, v, n, 1);
    r->t_msg += hxi_now() - t0;
    HXI_CHECK(ast);
    if (v[0] == 0)
        return HX_OK;
    /* Someone failed: the lowest failing rank's message for everyone. */
    return hxi_agree(r->comm, st);
}

/* Two device arrays of one size, grown together (contents not kept). */
static hx_status hxr_grow_pair(int32_t **a, int32_t **b, size_t *cap, size_t need, const char *what)
{
    if (*a && *b && need <= *cap)
        return HX_OK;
    size_t ca = 0, cb = 0;
    if (*a)
        cudaFree(*a);
    if (*b)
        cudaFree(*b);
    *a = *b = NULL;
    *cap = 0;
    HXI_CHECK(hxr_grow((void **) a, &ca, need, what));
    HXI_CHECK(hxr_grow((void **) b, &cb, need, what));
    *cap = ca < cb ? ca : cb;
    return HX_OK;
}

hx_status hxr_scratch(hx_rebuild *r, int n)
{
    size_t atoms = (size_t) (n > 0 ? n : 1), blocks = (size_t) hxr_blocks(n) * 3;
    HXI_CHECK(hxr_grow_pair(&r->cls, &r->pos, &r->atoms_cap, atoms * sizeof(int32_t),
                            "per-atom classes and slots"));
    return hxr_grow_pair(&r->bcnt, &r->boff, &r->blocks_cap, blocks * sizeof(int32_t),
                         "per-block counts");
}

/* ------------------------------------------------------- byte exchange */

hx_status hxr_reserve(hx_rebuild *r, size_t bytes)
{
    hx_transport *a = hxi_transport_actual(r->t);
    if (a && a->ops->xchg && a->ops->xchg_reserve)
        return a->ops->xchg_reserve(a, bytes);
    return HX_OK; /* the host path grows its buffers per message */
}

/* Through pinned host memory: for transports with no device path, and
 * for MPI without CUDA support. */
static hx_status hxr_xchg_host(hx_rebuild *r, void *stream, int slot, const void *sbuf,
                               size_t sbytes, int dest, size_t rbytes, int src, const void **rbuf)
{
    cudaStream_t s = (cudaStream_t) stream;
    hx_status st = hxr_host_grow(&r->hs[slot], &r->hs_cap[slot], sbytes, "the exchange");
    if (st == HX_OK)
        st = hxr_host_grow(&r->hr[slot], &r->hr_cap[slot], rbytes, "the exchange");
    if (st == HX_OK)
        st = hxr_grow(&r->dr[slot], &r->dr_cap[slot], rbytes, "the exchange");
    if (st == HX_OK && sbytes > 0 &&
        (cudaMemcpyAsync(r->hs[slot], sbuf, sbytes, cudaMemcpyDeviceToHost, s) != cudaSuccess ||
         cudaStreamSynchronize(s) != cudaSuccess))
        st = hxr_cuda(cudaGetLastError(), "copying rebuild bytes to the host");
    /* Agreed before the message (with any failure held since the last
     * agreement), so that no rank posts a message its peer will not match:
     * MPI's sizes must agree, and a blocked peer would wait for good. */
    if (st == HX_OK && r->pending != HX_OK)
        st = hxi_error(r->pending, "%s", r->pending_msg);
    HXI_CHECK(hxi_agree(r->comm, st));
    st = hxi_sendrecv(r->comm, r->hs[slot], sbytes, dest, r->hr[slot], rbytes, src,
                      HXR_TAG_XCHG + slot);
    if (st == HX_OK && rbytes > 0 &&
        cudaMemcpyAsync(r->dr[slot], r->hr[slot], rbytes, cudaMemcpyHostToDevice, s) != cudaSuccess)
        st = hxr_cuda(cudaGetLastError(), "copying rebuild bytes to the device");
    *rbuf = st == HX_OK ? r->dr[slot] : NULL;
    return st;
}

void hxr_defer(hx_rebuild *r, hx_status st)
{
    if (r->pending != HX_OK || st == HX_OK)
        return;
    r->pending = st;
    snprintf(r->pending_msg, sizeof r->pending_msg, "%s", hx_last_error());
}

void hxr_xchg(hx_rebuild *r, void *stream, hxi_xchg_msg *m, int n)
{
    hx_transport *a = hxi_transport_actual(r->t);
    hx_status st = HX_OK;
    for (int k = 0; k < n; k++)
        m[k].rbuf = NULL;
    double t0 = hxi_now();
    if (a && a->ops->xchg) {
        /* After a failure this rank stops sending; its peers' waits are
         * bounded, and the failure is agreed at the next agreement. */
        if (r->pending != HX_OK)
            return;
        st = a->ops->xchg(a, m, n);
    } else {
        /* Every rank takes part: this path agrees before each message. */
        for (int k = 0; k < n && st == HX_OK; k++)
            st = hxr_xchg_host(r, stream, m[k].slot, m[k].sbuf, m[k].sbytes, m[k].dest, m[k].rbytes,
                               m[k].src, &m[k].rbuf);
        if (st != HX_OK)
            r->pending = HX_OK; /* agreed already: every rank has it */
    }
    r->t_xchg += hxi_now() - t0;
    if (st != HX_OK)
        for (int k = 0; k < n; k++)
            m[k].rbuf = NULL;
    hxr_defer(r, st);
}

/* ------------------------------------------------------------- context */

hx_status hx_rebuild_create(hx_rebuild **out, hx_transport *t, const hx_decomp *d)
{
    hx_rebuild *r = NULL;
    hx_status st = HX_OK;
    if (!out || !t || !d)
        return hxi_error(HX_ERR_INVALID,
                         "hx_rebuild_create needs a place for the context, a transport and a "
                         "decomposition");
    *out = NULL;
    unsigned caps = hx_transport_caps(t);
    if (!(caps & (HX_CAP_DEVICE | HX_CAP_CHOOSES)))
        st = hxi_error(HX_ERR_UNSUPPORTED,
                       "device rebuild: transport '%s' keeps its arrays in host memory; give it "
                       "a device transport (mpi, nccl, nvshmem-*, auto)",
                       hx_transport_name(t));
    else if (d->nranks != hx_comm_size(t->comm) || d->rank != hx_comm_rank(t->comm))
        st = hxi_error(HX_ERR_INVALID,
                       "device rebuild: the decomposition is for rank %d of %d, the transport's "
                       "communicator has rank %d of %d",
                       d->rank, d->nranks, hx_comm_rank(t->comm), hx_comm_size(t->comm));
    if (st == HX_OK)
        st = hxi_alloc((void **) &r, sizeof *r, "the device rebuild");
    if (st == HX_OK) {
        memset(r, 0, sizeof *r);
        r->comm = t->comm;
        r->t = t;
        r->d = *d;
        r->refs = 1;
        r->res_dirty = 1; /* cleared at its first use */
        r->early_n = -1;
        if (cudaMalloc((void **) &r->d_res, sizeof *r->d_res) != cudaSuccess ||
            cudaMalloc((void **) &r->d_counter, sizeof *r->d_counter) != cudaSuccess ||
            cudaMemset(r->d_counter, 0, sizeof *r->d_counter) != cudaSuccess ||
            cudaHostAlloc((void **) &r->h_res, sizeof *r->h_res, cudaHostAllocMapped) !=
                cudaSuccess ||
            cudaHostGetDevicePointer((void **) &r->h_pub, r->h_res, 0) != cudaSuccess)
            st = hxr_cuda(cudaGetLastError(), "allocating the rebuild's counters");
    }
    st = hxi_agree(t->comm, st);
    if (st != HX_OK) {
        if (r) {
            r->refs = 1;
            hx_rebuild_destroy(r);
        }
        return st;
    }
    *out = r;
    return HX_OK;
}

static void hxr_free(hx_rebuild *r)
{
    void *dev[] = {r->cls, r->pos, r->bcnt, r->boff, r->stay, r->mask, r->d_res, r->d_counter};
    for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++)
        if (dev[k])
            cudaFree(dev[k]);
    for (int k = 0; k < HXI_XCHG_SLOTS; k++) {
        if (r->send[k])
            cudaFree(r->send[k]);
        if (r->dr[k])
            cudaFree(r->dr[k]);
        if (r->hs[k])
            cudaFreeHost(r->hs[k]);
        if (r->hr[k])
            cudaFreeHost(r->hr[k]);
    }
    for (int k = 0; k < r->nspare; k++) {
        if (r->spare[k].x)
            cudaFree(r->spare[k].x);
        if (r->spare[k].z)
            cudaFree(r->spare[k].z);
        if (r->spare[k].maps)
            cudaFree(r->spare[k].maps);
    }
    if (r->h_res)
        cudaFreeHost(r->h_res);
    if (r->d_early)
        cudaFree(r->d_early);
    if (r->h_early)
        cudaFreeHost(r->h_early);
    if (r->h_recount)
        cudaFreeHost(r->h_recount);
    if (r->ev_early)
        cudaEventDestroy((cudaEvent_t) r->ev_early);
    cudaGetLastError();
    free(r);
}

void hxr_unref(hx_rebuild *r)
{
    if (r && --r->refs == 0)
        hxr_free(r);
}

void hx_rebuild_destroy(hx_rebuild *r)
{
    if (!r || r->destroyed)
        return;
    long calls = r->n_migrate + r->n_plan;
    if (calls > 0 && hxi_log_level() >= 1 && hx_comm_rank(r->comm) == 0)
        hxi_info("device rebuild, ms per migration + plan on rank 0: stream waits %.3f, host "
                 "messages %.3f, byte exchange %.3f (%ld migrations, %ld plans)",
                 2e3 * r->t_wait / calls, 2e3 * r->t_msg / calls, 2e3 * r->t_xchg / calls,
                 r->n_migrate, r->n_plan);
    r->destroyed = 1;
    hxr_unref(r);
}

static const char hxr_axis[3] = {'x', 'y', 'z'};

/* Why the device migration cannot take atoms from o's domains to d's
 * along dim (an atom's owner further than one domain), or HX_OK. */
static hx_status hxr_cuts_step(const hx_decomp *o, const hx_decomp *d, int dim)
{
    const int g = d->grid[dim];
    if (g < 4)
        return HX_OK;
    for (int k = 0; k < g; k++) {
        double on = hx_decomp_bound(o, dim, k + 1), dn = hx_decomp_bound(d, dim, k + 1);
        if (hx_decomp_bound(d, dim, k) > on || hx_decomp_bound(o, dim, k) > dn)
            return hxi_error(HX_ERR_INVALID,
                             "device rebuild: the new cuts along %c move bound %d or %d past "
                             "an old neighbouring bound, so that some atom's owner would be "
                             "more than one domain away; move the cuts in smaller steps, or "
                             "migrate on the host (hx_migrate)",
                             hxr_axis[dim], k, k + 1);
    }
    return HX_OK;
}

hx_status hx_rebuild_set_decomp(hx_rebuild *r, const hx_decomp *d)
{
    if (!r || !d)
        return hxi_error(HX_ERR_INVALID, "hx_rebuild_set_decomp needs a context and a "
                                         "decomposition");
    if (d->nranks != r->d.nranks || d->rank != r->d.rank ||
        memcmp(d->grid, r->d.grid, sizeof d->grid) != 0)
        return hxi_error(HX_ERR_INVALID,
                         "device rebuild: the new decomposition has grid %dx%dx%d for rank %d "
                         "of %d, the context %dx%dx%d for rank %d of %d: only the cuts (and "
                         "the box) may change; create a new context for another grid",
                         d->grid[0], d->grid[1], d->grid[2], d->rank, d->nranks, r->d.grid[0],
                         r->d.grid[1], r->d.grid[2], r->d.rank, r->d.nranks);
    for (int dim = 0; dim < 3; dim++)
        HXI_CHECK(hxr_cuts_step(&r->d, d, dim));
    r->d = *d;
    r->early_n = -1;
    return HX_OK;
}

/* ------------------------------------------------------------ migration */

/* The error for a bad atom the kernels reported (rank-local). */
static hx_status hxr_bad_atom(hx_rebuild *r, const float *x, int xs)
{
    const hxr_result *res = r->h_res;
    const int dim = res->bad_dim >= 0 && res->bad_dim < 3 ? res->bad_dim : 0;
    const hx_decomp *d = &r->d;
    float p[3] = {0.0f, 0.0f, 0.0f};
    int i = res->bad_index;
    if (cudaMemcpy(p, x + (size_t) i * xs, sizeof p, cudaMemcpyDeviceToHost) != cudaSuccess)
        cudaGetLastError();
    if (res->bad_kind == HXR_BAD_NAN)
        return hxi_error(HX_ERR_COORD_NAN,
                         "atom %d on rank %d has position (%g, %g, %g): coordinates must be "
                         "finite (the time step may be too large)",
                         i, d->rank, p[0], p[1], p[2]);
    /* Too far: the distance to the reach of one hop, [lo - wb, hi + wa)
     * (wb, wa: the lower and upper neighbours' widths), over the periodic
     * images. */
    const double q[3] = {p[0], p[1], p[2]};
    const int g = d->grid[dim], cb = (d->coord[dim] + g - 1) % g, ca = (d->coord[dim] + 1) % g;
    const double wb = hx_decomp_bound(d, dim, cb + 1) - hx_decomp_bound(d, dim, cb);
    const double wa = hx_decomp_bound(d, dim, ca + 1) - hx_decomp_bound(d, dim, ca);
    double v = hx_decomp_height(d, dim, q), beyond = -1.0;
    for (int k = -1; k <= 1; k++) {
        double vv = v + k * d->height[dim], a = d->dom_lo[dim] - wb, b = d->dom_hi[dim] + wa;
        double dd = vv < a ? a - vv : (vv >= b ? vv - b : 0.0);
        if (beyond < 0.0 || dd < beyond)
            beyond = dd;
    }
    int up = (hx_decomp_cell(d, dim, v) - d->coord[dim] + d->grid[dim]) % d->grid[dim];
    int hops = up < d->grid[dim] - up ? up : d->grid[dim] - up;
    return hxi_error(HX_ERR_COORD_OUTSIDE,
                     "atom %d on rank %d is at %s%c = %g, %d domains from its domain [%g, %g), "
                     "%g beyond the one-domain move allowed between two migrations (the "
                     "neighbours' domains are %g and %g wide along %c); nothing was moved: "
                     "migrate more often, or check the time step",
                     i, d->rank, d->triclinic ? "height along " : "", hxr_axis[dim], v, hops,
                     d->dom_lo[dim], d->dom_hi[dim], beyond, wb, wa, hxr_axis[dim]);
}

static hx_status hxr_check_fields(const int *n, const int *capacity, float **x, int xstride,
                                  const hx_dfield *fields, int nfields)
{
    if (!n || !capacity || !x || (nfields > 0 && !fields) || *n < 0 || *n > *capacity ||
        (*n > 0 && !*x))
        return hxi_error(HX_ERR_INVALID,
                         "device migrate: give the atom count, the capacity (n <= capacity) and "
                         "device arrays for them");
    if (xstride != 3 && xstride != 4)
        return hxi_error(HX_ERR_INVALID, "device migrate: xstride %d: use 3 or 4 floats per atom",
                         xstride);
    if (nfields < 0 || nfields > HXR_MAX_FIELDS)
        return hxi_error(HX_ERR_INVALID, "device migrate: %d fields: at most %d", nfields,
                         HXR_MAX_FIELDS);
    for (int f = 0; f < nfields; f++)
        if (!fields[f].data || (*n > 0 && !*fields[f].data) || fields[f].size == 0 ||
            fields[f].size % 4 != 0)
            return hxi_error(HX_ERR_INVALID,
                             "device migrate: field %d has no data or a size (%zu) that is not a "
                             "positive multiple of 4 bytes",
                             f, fields[f].size);
    return HX_OK;
}

static hxr_layout hxr_layout_of(float *x, int xstride, const hx_dfield *fields, int nfields)
{
    hxr_layout L;
    memset(&L, 0, sizeof L);
    L.x = x;
    L.xs = xstride;
    L.nf = nfields;
    L.words = xstride;
    for (int f = 0; f < nfields; f++) {
        L.f[f].data = *fields[f].data;
        L.f[f].words = (int32_t) (fields[f].size / 4);
        L.words += L.f[f].words;
    }
    return L;
}

/* New arrays of `cap` atoms for x and every field (contents not kept: the
 * unpack rewrites every atom). The old ones stay until *old is freed. */
static hx_status hxr_new_arrays(int cap, int xstride, const hx_dfield *fields, int nfields,
                                void *fresh[])
{
    size_t bytes[HXR_MAX_FIELDS + 1];
    bytes[0] = (size_t) cap * (size_t) xstride * sizeof(float);
    for (int f = 0; f < nfields; f++)
        bytes[f + 1] = (size_t) cap * fields[f].size;
    for (int k = 0; k <= nfields; k++) {
        if (cudaMalloc(&fresh[k], bytes[k]) != cudaSuccess) {
            cudaGetLastError();
            for (int j = 0; j < k; j++)
                cudaFree(fresh[j]);
            return hxi_error(HX_ERR_NOMEM,
                             "device migrate: growing the atom arrays to %d atoms (%zu bytes) "
                             "failed; use more GPUs",
                             cap, bytes[k]);
        }
    }
    return HX_OK;
}

/* Leavers' records the buffer of slot k has room for. */
static int hxr_room(const hx_rebuild *r, int k, size_t rec)
{
    size_t m = r->send[k] ? r->send_cap[k] / rec : 0;
    return m > INT_MAX ? INT_MAX : (int) m;
}

/* One dimension's migration as it goes (hxr_migrate_dim). */
typedef struct hxr_mig {
    hxr_layout L;
    size_t rec;     /* bytes of one atom's record */
    int keep;       /* the stayers keep their order: a stay buffer */
    uint32_t *stay; /* keep: where the stayers are packed */
    int32_t *holes; /* !keep: the leavers' indices (r->pos), for hxr_fill */
    int room[2];    /* leavers' records the send buffers had room for */
    int nstay, nout[2], nin[2];
    long long need; /* atoms after it */
    int grow, newcap;
    void *fresh[HXR_MAX_FIELDS + 1]; /* the grown arrays (grow) */
} hxr_mig;

/* The domain as the class kernel sees it, moving along dim (-1: none). */
static hxr_dom hxr_dom_of(const hx_decomp *d, int dim)
{
    hxr_dom dom;
    memset(&dom, 0, sizeof dom);
    for (int k = 0; k < 3; k++) {
        dom.box_lo[k] = d->face_lo[k];
        dom.box_len[k] = d->height[k];
        dom.lo[k] = d->dom_lo[k];
        dom.hi[k] = d->dom_hi[k];
        dom.below_lo[k] = hx_decomp_bound(d, k, (d->coord[k] + d->grid[k] - 1) % d->grid[k]);
        dom.above_hi[k] = hx_decomp_bound(d, k, (d->coord[k] + 1) % d->grid[k] + 1);
        dom.grid[k] = d->grid[k];
        dom.coord[k] = d->coord[k];
    }
    dom.dim = dim;
    dom.tri = d->triclinic;
    memcpy(dom.normal, d->normal, sizeof dom.normal);
    memcpy(dom.edge, d->edge, sizeof dom.edge);
    return dom;
}

/* Classes every atom (and wraps it), packs the leavers (dim >= 0) and
 * waits for the counts. Rank-local. */
static hx_status hxr_class_pack(hx_rebuild *r, void *stream, hxr_mig *m, int dim, int wrap, int n,
                                const float *x, int xstride)
{
    /* Room for every atom staying, and for the leavers of earlier
     * migrations, so that the pack goes before the wait for the counts. */
    const size_t guess = (size_t) n / 16 + 256;
    const int pack = dim >= 0;
    hx_status st = hxr_scratch(r, n);
    if (st == HX_OK && pack && m->keep)
        st = hxr_grow(&r->stay, &r->stay_cap, (size_t) n * m->rec, "the staying atoms");
    m->stay = m->keep ? r->stay : NULL;
    m->holes = m->keep ? NULL : r->pos;
    for (int k = 0; k < 2 && st == HX_OK && pack; k++)
        st = hxr_grow(&r->send[k], &r->send_cap[k], guess * m->rec, "the leaving atoms");
    if (st == HX_OK)
        st = hxr_begin(r, stream);
    if (st == HX_OK && hxr_classify(stream, m->L, n, hxr_dom_of(&r->d, dim), wrap, r->cls, r->bcnt,
                                    r->boff, r->d_counter, r->d_res, r->h_pub))
        st = hxr_cuda(cudaGetLastError(), "the migration's class kernel");
    m->room[0] = hxr_room(r, 0, m->rec);
    m->room[1] = hxr_room(r, 1, m->rec);
    if (st == HX_OK && pack &&
        hxr_pack(stream, m->L, n, r->cls, r->bcnt, r->boff, m->stay, r->send[0], r->send[1],
                 m->room[0], m->room[1], m->holes))
        st = hxr_cuda(cudaGetLastError(), "packing the leaving atoms");
    if (st == HX_OK)
        st = hxr_await(r, stream);
    if (st == HX_OK && r->h_res->bad_index != INT_MAX)
        st = hxr_bad_atom(r, x, xstride);
    return st;
}

/* Room for what the counts ask: the atom arrays grown (into m->fresh) where
 * the arrivals do not fit, and the send buffers where more atoms leave than
 * the pack had room for (grown, cudaFree waiting for the pack, and packed
 * again). Rank-local; st: this rank's status so far. */
static hx_status hxr_make_room(hx_rebuild *r, void *stream, hxr_mig *m, hx_status st, int n,
                               int capacity, int xstride, const hx_dfield *fields, int nfields)
{
    if (st == HX_OK && m->need > INT_MAX / 2)
        st = hxi_error(HX_ERR_OVERFLOW, "device migrate: %lld atoms on rank %d: use more ranks",
                       m->need, r->d.rank);
    m->grow = st == HX_OK && m->need > capacity;
    m->newcap = m->grow ? hxi_capacity_for((int) m->need, capacity) : capacity;
    int repack = 0;
    for (int k = 0; k < 2 && st == HX_OK; k++)
        if (m->nout[k] > m->room[k]) {
            st = hxr_grow(&r->send[k], &r->send_cap[k], (size_t) m->nout[k] * m->rec,
                          "the leaving atoms");
            repack = 1;
        }
    if (st == HX_OK && repack &&
        hxr_pack(stream, m->L, n, r->cls, r->bcnt, r->boff, m->stay, r->send[0], r->send[1],
                 hxr_room(r, 0, m->rec), hxr_room(r, 1, m->rec), m->holes))
        st = hxr_cuda(cudaGetLastError(), "packing the leaving atoms");
    if (st == HX_OK && m->grow)
        st = hxr_new_arrays(m->newcap, xstride, fields, nfields, m->fresh);
    return st;
}

/* The grown arrays replace the old ones; without order the stayers are
 * copied into them first (they stay where they are). */
static void hxr_adopt_arrays(hx_rebuild *r, void *stream, hxr_mig *m, int n, int *capacity,
                             float **x, int xstride, const hx_dfield *fields, int nfields)
{
    if (!m->keep && n > 0) {
        cudaError_t ce = cudaMemcpyAsync(m->fresh[0], *x, (size_t) n * (size_t) xstride * 4,
                                         cudaMemcpyDeviceToDevice, (cudaStream_t) stream);
        for (int f = 0; f < nfields && ce == cudaSuccess; f++)
            ce = cudaMemcpyAsync(m->fresh[f + 1], *fields[f].data, (size_t) n * fields[f].size,
                                 cudaMemcpyDeviceToDevice, (cudaStream_t) stream);
        if (ce != cudaSuccess)
            hxr_defer(r, hxr_cuda(ce, "copying the atoms into the grown arrays"));
    }
    /* The pack above read the old arrays (and the copies); cudaFree
     * waits for them. */
    cudaFree(*x);
    *x = m->fresh[0];
    for (int f = 0; f < nfields; f++) {
        cudaFree(*fields[f].data);
        *fields[f].data = m->fresh[f + 1];
    }
    *capacity = m->newcap;
    m->L = hxr_layout_of(*x, xstride, fields, nfields);
}

/* The leavers out and the arrivals in, both directions in one exchange
 * (to below what leaves downwards, from above what leaves theirs; and the
 * reverse), then unpacked: stayers, then arrivals from below, then from
 * above (hx_migrate's order); without order, the arrivals (from below,
 * then above) and the stayers past the new count into the leavers'
 * places. After a failed exchange the atoms are not trusted anyway; the
 * failure is agreed at the end of the migration. */
static void hxr_move(hx_rebuild *r, void *stream, hxr_mig *m, int dim, int n)
{
    const hx_decomp *d = &r->d;
    const size_t rec = m->rec;
    hxi_xchg_msg msg[2] = {hxr_msg(0, r->send[0], (size_t) m->nout[0] * rec, d->down[dim],
                                   (size_t) m->nin[0] * rec, d->up[dim]),
                           hxr_msg(1, r->send[1], (size_t) m->nout[1] * rec, d->up[dim],
                                   (size_t) m->nin[1] * rec, d->down[dim])};
    hxr_xchg(r, stream, msg, 2);
    const void *from_above = msg[0].rbuf, *from_below = msg[1].rbuf;
    if (r->pending == HX_OK && m->keep &&
        hxr_unpack(stream, m->L, m->nstay, r->stay, m->nin[1], from_below, m->nin[0], from_above) !=
            0)
        hxr_defer(r, hxr_cuda(cudaGetLastError(), "unpacking the arrivals"));
    if (r->pending == HX_OK && !m->keep &&
        hxr_fill(stream, m->L, n, (int) m->need, r->cls, m->holes, m->nout[0] + m->nout[1],
                 m->nin[1], from_below, m->nin[0], from_above) != 0)
        hxr_defer(r, hxr_cuda(cudaGetLastError(), "moving the arrivals in"));
}

/* One dimension: class and pack, count, agree, exchange, unpack. */
static hx_status hxr_migrate_dim(hx_rebuild *r, void *stream, int dim, int wrap, int *n,
                                 int *capacity, float **x, int xstride, const hx_dfield *fields,
                                 int nfields)
{
    const hx_decomp *d = &r->d;
    hxr_mig m;
    memset(&m, 0, sizeof m);
    m.L = hxr_layout_of(*x, xstride, fields, nfields);
    m.rec = (size_t) m.L.words * 4;
    /* Without order the stayers stay put: no stay buffer, and the pack
     * writes the leavers' indices into r->pos for hxr_fill. */
    m.keep = !r->any_order;
    hx_status st = hxr_class_pack(r, stream, &m, dim, wrap, *n, *x, xstride);
    if (dim < 0) /* wrap only */
        return hxi_agree(r->comm, st);

    m.nstay = r->h_res->count[0];
    m.nout[0] = r->h_res->count[1];
    m.nout[1] = r->h_res->count[2];
    if (st != HX_OK)
        m.nstay = m.nout[0] = m.nout[1] = 0;
    /* nin[0] from above (their down), [1] from below (their up). */
    const int to[2] = {d->down[dim], d->up[dim]}, from[2] = {d->up[dim], d->down[dim]};
    HXI_CHECK(hxr_swap2(r, m.nout, to, m.nin, from, HXR_TAG_COUNT));
    m.need = (long long) m.nstay + m.nin[0] + m.nin[1];
    st = hxr_make_room(r, stream, &m, st, *n, *capacity, xstride, fields, nfields);
    int v[2] = {0, m.nout[0] > m.nout[1] ? m.nout[0] : m.nout[1]};
    st = hxr_agree_max(r, st, v, 2);
    if (st != HX_OK) {
        for (int k = 0; k <= nfields; k++)
            if (m.fresh[k])
                cudaFree(m.fresh[k]);
        return st;
    }
    if (m.grow)
        hxr_adopt_arrays(r, stream, &m, *n, capacity, x, xstride, fields, nfields);
    HXI_CHECK(hxr_reserve(r, (size_t) v[1] * m.rec));
    hxr_move(r, stream, &m, dim, *n);
    *n = (int) m.need;
    return HX_OK;
}

hx_status hx_rebuild_keep_order(hx_rebuild *r, int keep)
{
    if (!r)
        return hxi_error(HX_ERR_INVALID, "hx_rebuild_keep_order: no rebuild context");
    r->any_order = !keep;
    return HX_OK;
}

hx_status hx_rebuild_migrate(hx_rebuild *r, int *n, int *capacity, float **x, int xstride,
                             const hx_dfield *fields, int nfields)
{
    if (!r)
        return hxi_error(HX_ERR_INVALID, "device migrate: no rebuild context");
    void *stream = NULL;
    hx_status st = hxr_check_fields(n, capacity, x, xstride, fields, nfields);
    if (st == HX_OK)
        st = hxr_stream(r, &stream);
    HXI_CHECK(hxi_agree(r->comm, st));
    int wrap = 1;
    r->n_migrate++;
    r->early_n = -1; /* a count taken ahead counted atoms that may move now */
    for (int dim = HX_Z; dim >= HX_X; dim--) {
        if (r->d.grid[dim] == 1)
            continue;
        HXI_CHECK(hxr_migrate_dim(r, stream, dim, wrap, n, capacity, x, xstride, fields, nfields));
        wrap = 0;
    }
    if (wrap) /* nothing decomposed: wrap only */
        HXI_CHECK(hxr_migrate_dim(r, stream, -1, 1, n, capacity, x, xstride, fields, nfields));
    int v[1];
    return hxr_agree_max(r, HX_OK, v, 1); /* the last exchange's outcome */
}

/* --------------------------------------------------------------- census */

hx_status hx_rebuild_census(hx_rebuild *r, int n, const int64_t *ids, int64_t *natoms,
                            uint64_t *checksum)
{
    if (!r || n < 0 || (n > 0 && !ids) || !natoms || !checksum)
        return hxi_error(HX_ERR_INVALID, "census: give the context, n >= 0, the ids and two "
                                         "places for the answers");
    void *stream = NULL;
    hx_status st = hxr_stream(r, &stream);
    if (st == HX_OK)
        st = hxr_begin(r, stream);
    if (st == HX_OK && hxr_census(stream, ids, n, r->d_res))
        st = hxr_cuda(cudaGetLastError(), "the census kernel");
    if (st == HX_OK)
        st = hxr_fetch(r, stream);
    HXI_CHECK(hxi_agree(r->comm, st));
    int size = hx_comm_size(r->comm);
    unsigned long long mine[2] = {r->h_res->census[0], r->h_res->census[1]};
    unsigned long long *all = NULL;
    HXI_CHECK(hxi_agree(r->comm, hxi_alloc((void **) &all, sizeof mine * (size_t) size, "census")));
    st = hxi_allgather(r->comm, mine, sizeof mine, all);
    if (st == HX_OK) {
        unsigned long long total = 0, sum = 0;
        for (int k = 0; k < size; k++) {
            total += all[2 * k];
            sum += all[2 * k + 1];
        }
        *natoms = (int64_t) total;
        *checksum = sum;
    }
    free(all);
    return st;
}
