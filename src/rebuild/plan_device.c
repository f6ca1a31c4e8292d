/*
 * plan_device.c - hx_plan_create_device: the halo plan of atoms whose
 * coordinates live on the GPU, by the rules of core/plan.c.
 *
 * The plan runs the coordinate exchange once, pulse by pulse (Z, Y, X):
 * a kernel pass selects the pulse's candidates (home atoms and the halo
 * of earlier pulses, or what the previous pulse of the dimension brought)
 * whose coordinate along the dimension lies below the domain's lower bound
 * plus the halo cutoff, compacts them in order into the map (home atoms
 * first), and packs their records with the shift and zone offset added.
 * The host learns the count, the selected home atoms and the count taken
 * from each earlier pulse (one synchronisation per pulse); counts and
 * offsets go to the neighbours as in core/plan.c; the records cross with
 * the transport's byte exchange and are appended. So planning and the
 * first forward exchange are one pass, and the plan's coordinates are
 * those the transport's forward exchange delivers (the same float adds).
 */
#include "rebuild/context.h"

#include <cuda_runtime_api.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum { HXR_TAG_PCOUNT = 521 }; /* and 522 */
#define HXR_REC 16             /* bytes per atom of a pulse: x, y, z, zone */

/* Grows a device array to `need` bytes, keeping its first `keep` bytes
 * (stream-ordered copy; cudaFree of the old block waits for it). */
static hx_status hxr_grow_keep(void **p, size_t *cap, size_t need, size_t keep, void *stream,
                               const char *what)
{
    if (*p && need <= *cap)
        return HX_OK;
    void *n = NULL;
    size_t ncap = 0;
    HXI_CHECK(hxr_grow(&n, &ncap, need, what));
    if (*p && keep > 0 &&
        cudaMemcpyAsync(n, *p, keep, cudaMemcpyDeviceToDevice, (cudaStream_t) stream) !=
            cudaSuccess) {
        cudaFree(n);
        return hxr_cuda(cudaGetLastError(), "keeping the plan's arrays while they grow");
    }
    if (*p)
        cudaFree(*p);
    *p = n;
    *cap = ncap;
    return HX_OK;
}

/* What a device plan owns: its arrays, and a reference to the context
 * that lent them (device_owner of the plan). */
typedef struct hxr_plan_mem {
    hx_rebuild *r;
    hxr_arrays a;
} hxr_plan_mem;

static void hxr_arrays_free(hxr_arrays *a)
{
    if (a->x)
        cudaFree(a->x);
    if (a->z)
        cudaFree(a->z);
    if (a->maps)
        cudaFree(a->maps);
    memset(a, 0, sizeof *a);
}

/* The free_device hook: the arrays go back to the context for the next
 * plan (two are kept; a plan is made before the last one goes), and the
 * plan lets go of the context. */
static void hxr_plan_free(hx_plan *p)
{
    hxr_plan_mem *m = p->device_owner;
    if (!m)
        return;
    hx_rebuild *r = m->r;
    if (!r->destroyed && r->nspare < 2)
        r->spare[r->nspare++] = m->a;
    else
        hxr_arrays_free(&m->a);
    hxr_unref(r);
    free(m);
    p->device_owner = NULL;
    p->d_x = NULL;
    p->d_zones = NULL;
    p->d_maps = NULL;
}

/* Arrays for a new plan: the largest spare set, grown to the first
 * estimate as needed (contents not kept). */
static hx_status hxr_arrays_take(hx_rebuild *r, hxr_arrays *a, size_t atoms, size_t maps)
{
    memset(a, 0, sizeof *a);
    if (r->nspare > 0)
        *a = r->spare[--r->nspare];
    size_t xcap = a->atoms * 3 * sizeof(float), zcap = a->atoms * 4, mcap = a->maps_cap * 4;
    if (!a->x || !a->z || a->atoms < atoms) {
        HXI_CHECK(hxr_grow((void **) &a->x, &xcap, atoms * 3 * sizeof(float), "plan coordinates"));
        HXI_CHECK(hxr_grow((void **) &a->z, &zcap, atoms * 4, "plan zones"));
        a->atoms = zcap / 4 < xcap / 12 ? zcap / 4 : xcap / 12;
    }
    if (!a->maps || a->maps_cap < maps) {
        HXI_CHECK(hxr_grow((void **) &a->maps, &mcap, maps * 4, "plan maps"));
        a->maps_cap = mcap / 4;
    }
    return HX_OK;
}

/* Room for `atoms` atoms, keeping the first `keep`. */
static hx_status hxr_arrays_atoms(hxr_arrays *a, size_t atoms, size_t keep, void *stream)
{
    if (atoms <= a->atoms)
        return HX_OK;
    size_t xcap = a->atoms * 3 * sizeof(float), zcap = a->atoms * 4;
    size_t want = atoms + atoms / 4 + 64;
    HXI_CHECK(hxr_grow_keep((void **) &a->x, &xcap, want * 3 * sizeof(float),
                            keep * 3 * sizeof(float), stream, "plan coordinates"));
    HXI_CHECK(hxr_grow_keep((void **) &a->z, &zcap, want * 4, keep * 4, stream, "plan zones"));
    a->atoms = zcap / 4 < xcap / 12 ? zcap / 4 : xcap / 12;
    return HX_OK;
}

/* Room for `maps` map entries, keeping the first `keep`. */
static hx_status hxr_arrays_maps(hxr_arrays *a, size_t maps, size_t keep, void *stream)
{
    if (maps <= a->maps_cap)
        return HX_OK;
    size_t mcap = a->maps_cap * 4;
    HXI_CHECK(hxr_grow_keep((void **) &a->maps, &mcap, (maps + maps / 4 + 64) * 4, keep * 4, stream,
                            "plan maps"));
    a->maps_cap = mcap / 4;
    return HX_OK;
}

/* The error for a home atom a check kernel reported in res (rank-local):
 * its position from res->bad_pos (a count taken ahead, whose atoms may have
 * moved since), else read from x. */
static hx_status hxr_bad_home(hx_rebuild *r, const hxr_result *res, const float *x, int xs,
                              int ahead)
{
    const hx_decomp *d = &r->d;
    int i = res->bad_index;
    float p[3] = {0.0f, 0.0f, 0.0f};
    if (ahead)
        memcpy(p, res->bad_pos, sizeof p);
    else if (cudaMemcpy(p, x + (size_t) i * xs, sizeof p, cudaMemcpyDeviceToHost) != cudaSuccess)
        cudaGetLastError();
    if (res->bad_kind == HXR_BAD_NAN)
        return hxi_error(HX_ERR_COORD_NAN,
                         "home atom %d has position (%g, %g, %g): coordinates must be finite "
                         "(check the integrator or the input)",
                         i, p[0], p[1], p[2]);
    double q[3] = {p[0], p[1], p[2]};
    return hxi_error(HX_ERR_COORD_OUTSIDE,
                     "home atom %d at (%g, %g, %g) is outside rank %d's domain [%g, %g) x [%g, "
                     "%g) x [%g, %g)%s (it belongs to rank %d): call hx_rebuild_migrate before "
                     "hx_plan_create_device",
                     i, q[0], q[1], q[2], d->rank, d->dom_lo[0], d->dom_hi[0], d->dom_lo[1],
                     d->dom_hi[1], d->dom_lo[2], d->dom_hi[2],
                     d->triclinic ? " (heights along the face normals)" : "",
                     hx_decomp_owner(d, q));
}

/* The rule of a pulse along dim: a candidate whose height is below the
 * domain's lower face plus the cutoff is sent (hxr_selected). One rule for
 * the pulse and for the count taken ahead of it. */
static hxr_sel hxr_sel_of(const hx_decomp *d, int dim, int dir)
{
    hxr_sel s;
    memset(&s, 0, sizeof s);
    memcpy(s.normal, d->normal[dim], sizeof s.normal);
    s.limit = hxi_pulse_limit(d, dim, dir);
    s.dim = dim;
    s.dir = dir;
    s.tri = d->triclinic;
    return s;
}

/* Waits for the count taken ahead (bounded as the transport's stream
 * is: every device wait before it is) and copies its result. */
static hx_status hxr_await_ahead(hx_rebuild *r, hxr_result *out)
{
    const hx_transport *a = hxi_transport_actual(r->t);
    const double ts = a && a->opts.timeout_s > 0 ? a->opts.timeout_s : 5.0, limit = 2.0 * ts + 2.0;
    const double t0 = hxi_now();
    cudaError_t e;
    while ((e = cudaEventQuery((cudaEvent_t) r->ev_early)) == cudaErrorNotReady)
        if (hxi_now() - t0 > limit) {
            r->t_wait += hxi_now() - t0;
            return hxi_error(HX_ERR_TIMEOUT,
                             "device plan: rank %d: the first pulse's count did not finish within "
                             "%.1f s; a kernel queued before it on the transport's stream is stuck",
                             r->d.rank, limit);
        }
    r->t_wait += hxi_now() - t0;
    if (e != cudaSuccess)
        return hxr_cuda(e, "the first pulse's count taken ahead");
    memcpy(out, r->h_early, sizeof *out);
    return HX_OK;
}

/* One pulse: select, pack, count; agree; exchange; append. With `ahead`
 * (the first pulse, counted by hx_plan_count_device), the host waits for
 * that count only: the selection is queued behind whatever came after it
 * (a cell sort) and checked against it on the device. */
static hx_status hxr_pulse(hx_rebuild *r, hx_plan *p, hxr_arrays *a, void *stream, int dim, int dir,
                           int index, int lo, int hi, const hxr_home_in *home, int ahead,
                           hx_status st, int *map_total)
{
    const hx_decomp *d = &r->d;
    const int down = dir < 0 ? d->down[dim] : d->up[dim], up = dir < 0 ? d->up[dim] : d->down[dim];
    if (!p || !a) {
        /* This rank failed before its plan had arrays (st says why): it
         * takes part in the pulse's messages up to the agreement, which
         * gives every rank the error. */
        const int out[2] = {0, 0}, to[2] = {down, up};
        const int from[2] = {up, down};
        int in[2], v[2] = {0, 0};
        HXI_CHECK(hxr_swap2(r, out, to, in, from, HXR_TAG_PCOUNT));
        if (st == HX_OK)
            st = hxi_error(HX_ERR_STATE, "device plan: a pulse without the plan's arrays");
        return hxr_agree_max(r, st, v, 2);
    }
    hx_pulse *pu = &p->pulse[p->npulses];
    const int np = p->npulses, ncand = hi - lo;
    const hxr_sel sel = hxr_sel_of(d, dim, dir);
    pu->dim = dim;
    pu->index = index;
    pu->dir = dir;
    pu->send_rank = down;
    pu->recv_rank = up;
    hxi_pulse_shift(d, dim, dir, pu->shift);
    pu->map = NULL;
    pu->map_offset = *map_total;
    hxr_ranges rg;
    memset(&rg, 0, sizeof rg);
    for (int q = 0; q < np; q++) {
        rg.beg[q] = p->pulse[q].recv_offset;
        rg.end[q] = p->pulse[q].recv_offset + p->pulse[q].nrecv;
    }
    /* st: an error of this rank's so far (the first pulse's caller), agreed
     * below like the pulse's own. */
    if (st == HX_OK)
        st = hxr_scratch(r, ncand);
    if (st == HX_OK)
        st = hxr_begin(r, stream); /* clear after an earlier pulse published it */
    if (st == HX_OK)
        st = hxr_arrays_maps(a, (size_t) *map_total + (size_t) ncand, (size_t) *map_total, stream);
    if (st == HX_OK)
        st = hxr_grow(&r->send[0], &r->send_cap[0], (size_t) ncand * HXR_REC, "a pulse's atoms");
    /* The result the host reads: the count taken ahead, or this pulse's. */
    hxr_result res;
    memset(&res, 0, sizeof res);
    res.bad_index = INT_MAX;
    if (st == HX_OK && ahead)
        st = hxr_await_ahead(r, &res);
    const int expect = st == HX_OK && ahead ? res.count[0] : -1;
    if (st == HX_OK && (!ahead || res.bad_index == INT_MAX) &&
        (hxr_select_count(stream, home, a->x, lo, hi, sel, r->bcnt, r->boff, r->d_counter,
                          r->d_res) ||
         hxr_select_place(stream, a->x, a->z, lo, hi, sel, hxi_fshift_of(pu->shift, dim), r->bcnt,
                          r->boff, a->maps + *map_total, r->pos, (float *) r->send[0], p->nhome, np,
                          rg, expect, r->p_recount, r->d_counter, r->d_res, r->h_pub)))
        st = hxr_cuda(cudaGetLastError(), "the pulse's selection kernels");
    if (st == HX_OK && ahead) {
        /* The place kernel publishes and clears the device result in its
         * turn; the home atoms selected are all the selected candidates. */
        r->res_dirty = 0;
        res.nsel_home = res.count[0];
    } else if (st == HX_OK) {
        st = hxr_await(r, stream);
        if (st == HX_OK)
            memcpy(&res, r->h_res, sizeof res);
    }
    if (st == HX_OK && home && res.bad_index != INT_MAX)
        st = hxr_bad_home(r, &res, home->x, home->xs, ahead);
    /* The count to the receiver; and the sender learns once where its
     * atoms land on the receiver: both pairs at once. */
    const int out[2] = {st == HX_OK ? res.count[0] : 0, p->ntotal};
    const int to[2] = {pu->send_rank, pu->recv_rank}, from[2] = {pu->recv_rank, pu->send_rank};
    int in[2] = {0, 0};
    HXI_CHECK(hxr_swap2(r, out, to, in, from, HXR_TAG_PCOUNT));
    const int nsend = out[0], nrecv = in[0];
    if (st == HX_OK && (long long) p->ntotal + nrecv > INT_MAX / 2)
        st = hxi_error(HX_ERR_OVERFLOW, "device plan: %lld local atoms on rank %d: use more ranks",
                       (long long) p->ntotal + nrecv, d->rank);
    if (st == HX_OK)
        st = hxr_arrays_atoms(a, (size_t) p->ntotal + (size_t) nrecv, (size_t) p->ntotal, stream);
    int v[2] = {0, nsend};
    HXI_CHECK(hxr_agree_max(r, st, v, 2));
    HXI_CHECK(hxr_reserve(r, (size_t) v[1] * HXR_REC));
    hxi_xchg_msg msg = hxr_msg(0, r->send[0], (size_t) nsend * HXR_REC, pu->send_rank,
                               (size_t) nrecv * HXR_REC, pu->recv_rank);
    hxr_xchg(r, stream, &msg, 1);
    const void *rb = msg.rbuf;
    /* A failed exchange is agreed at the next pulse or at the end. */
    if (r->pending == HX_OK && hxr_receive(stream, rb, nrecv, p->ntotal, a->x, a->z) != 0)
        hxr_defer(r, hxr_cuda(cudaGetLastError(), "appending a pulse's atoms"));

    pu->nsend = nsend;
    pu->nsend_home = res.nsel_home;
    pu->nrecv = nrecv;
    pu->recv_offset = p->ntotal;
    pu->peer_offset = in[1];
    pu->deps = 0;
    for (int q = 0; q < np; q++) {
        p->from[np][q] = res.from[q];
        if (p->from[np][q] > 0)
            pu->deps |= UINT64_C(1) << q;
    }
    p->ntotal += nrecv;
    p->npulses++;
    *map_total += nsend;
    return HX_OK;
}

/* Every pulse, Z then Y then X, in core/plan.c's order (a full-shell
 * plan: core/plan_full.c's, down and up in turn, each direction's first
 * pulse from the atoms held before the dimension, a later one from what
 * the previous pulse of its direction delivered). The first pulse checks
 * and copies the home atoms (its candidates), and carries this rank's
 * errors so far (st) into its agreement. */
static hx_status hxr_pulses(hx_rebuild *r, hx_plan *p, hxr_arrays *a, void *stream,
                            const hxr_home_in *home, int ahead, hx_status st, int *map_total)
{
    const int ndir = p && p->full_shell ? 2 : 1;
    for (int dim = HX_Z; dim >= HX_X; dim--) {
        int held = p ? p->ntotal : 0, prev[2] = {0, 0};
        for (int k = 0; k < r->d.npulse[dim]; k++)
            for (int s = 0; s < ndir; s++) {
                int lo = 0, hi = held;
                if (k > 0) { /* p is there: a failed first pulse ends the plan */
                    const hx_pulse *q = &p->pulse[prev[s]];
                    lo = q->recv_offset;
                    hi = q->recv_offset + q->nrecv;
                }
                const int first = p == NULL || p->npulses == 0;
                if (p)
                    prev[s] = p->npulses;
                HXI_CHECK(hxr_pulse(r, p, a, stream, dim, s ? 1 : -1, k, lo, hi,
                                    first ? home : NULL, first && ahead, first ? st : HX_OK,
                                    map_total));
            }
    }
    return HX_OK;
}

/* Pulses whose maps share an atom (bit r of pulse p's mask, r > p): one
 * mask of pulses per atom, then the OR over each map. */
static hx_status hxr_share(hx_rebuild *r, hx_plan *p, hxr_arrays *a, void *stream)
{
    if (p->npulses < 2)
        return HX_OK;
    size_t need = (size_t) p->ntotal * sizeof(unsigned long long);
    hx_status st = hxr_grow((void **) &r->mask, &r->mask_cap, need, "share masks");
    if (st == HX_OK)
        st = hxr_begin(r, stream);
    if (st == HX_OK && cudaMemsetAsync(r->mask, 0, need, (cudaStream_t) stream) != cudaSuccess)
        st = hxr_cuda(cudaGetLastError(), "clearing the share masks");
    for (int q = 0; st == HX_OK && q < p->npulses; q++)
        if (hxr_mask_set(stream, a->maps + p->pulse[q].map_offset, p->pulse[q].nsend, q, r->mask))
            st = hxr_cuda(cudaGetLastError(), "the share masks");
    for (int q = 0; st == HX_OK && q < p->npulses; q++)
        if (hxr_mask_or(stream, a->maps + p->pulse[q].map_offset, p->pulse[q].nsend, q, r->mask,
                        r->d_res))
            st = hxr_cuda(cudaGetLastError(), "the share masks");
    if (st == HX_OK)
        st = hxr_fetch(r, stream);
    for (int q = 0; st == HX_OK && q < p->npulses; q++)
        p->pulse[q].share = r->h_res->share[q] & ~((UINT64_C(2) << q) - 1);
    return st;
}

/* The home atoms as the check kernels see them. */
static hxr_home_in hxr_home_of(const hx_rebuild *r, const float *x, int xstride, uint32_t *pz)
{
    hxr_home_in home;
    memset(&home, 0, sizeof home);
    home.x = x;
    home.xs = xstride;
    home.pz = pz;
    for (int k = 0; k < 3; k++) {
        home.dom.box_lo[k] = r->d.face_lo[k];
        home.dom.box_hi[k] = r->d.face_lo[k] + r->d.height[k];
        home.dom.lo[k] = r->d.dom_lo[k];
        home.dom.hi[k] = r->d.dom_hi[k];
    }
    memcpy(home.dom.normal, r->d.normal, sizeof home.dom.normal);
    home.dom.tri = r->d.triclinic;
    return home;
}

static hx_status hxr_bad_args(int nhome, const float *x, int xstride, const char *who)
{
    if (nhome < 0 || (nhome > 0 && !x) || (xstride != 3 && xstride != 4))
        return hxi_error(HX_ERR_INVALID,
                         "%s: %d home atoms, coordinates %p, stride %d: need nhome >= 0, device "
                         "coordinates and 3 or 4 floats per atom",
                         who, nhome, (const void *) x, xstride);
    return HX_OK;
}

/* Pinned host memory the device writes to: *h, and the device's view *p. */
static hx_status hxr_mapped(void **h, void **p, size_t bytes)
{
    if (cudaHostAlloc(h, bytes, cudaHostAllocMapped) != cudaSuccess) {
        *h = NULL;
        return hxr_cuda(cudaGetLastError(), "allocating the count taken ahead");
    }
    memset(*h, 0, bytes);
    if (cudaHostGetDevicePointer(p, *h, 0) != cudaSuccess) {
        hx_status st = hxr_cuda(cudaGetLastError(), "mapping the count taken ahead");
        cudaFreeHost(*h);
        *h = NULL;
        return st;
    }
    return HX_OK;
}

hx_status hx_plan_count_device(hx_rebuild *r, int nhome, const float *x, int xstride)
{
    if (!r)
        return hxi_error(HX_ERR_INVALID, "device plan count: no rebuild context");
    r->early_n = -1;
    HXI_CHECK(hxr_bad_args(nhome, x, xstride, "device plan count"));
    int dim = HX_Z;
    while (dim >= HX_X && r->d.npulse[dim] == 0)
        dim--;
    if (dim < HX_X)
        return HX_OK; /* no pulse: the plan only checks the home atoms */
    void *stream = NULL;
    HXI_CHECK(hxr_stream(r, &stream));
    /* First use: what a failed first use left is kept, the rest made. */
    if (!r->d_early) {
        if (cudaMalloc((void **) &r->d_early, sizeof *r->d_early) != cudaSuccess) {
            r->d_early = NULL;
            return hxr_cuda(cudaGetLastError(), "allocating the count taken ahead");
        }
        if (hxr_reset(stream, r->d_early) != 0) {
            hx_status st = hxr_cuda(cudaGetLastError(), "clearing the count taken ahead");
            cudaFree(r->d_early);
            r->d_early = NULL;
            return st;
        }
    }
    if (!r->h_early)
        HXI_CHECK(hxr_mapped((void **) &r->h_early, (void **) &r->p_early, sizeof *r->h_early));
    if (!r->h_recount)
        HXI_CHECK(
            hxr_mapped((void **) &r->h_recount, (void **) &r->p_recount, sizeof *r->h_recount));
    if (!r->ev_early) {
        cudaEvent_t ev = NULL;
        HXR_CU(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "an event");
        r->ev_early = ev;
    }
    const hxr_home_in home = hxr_home_of(r, x, xstride, NULL);
    HXR_CU(hxr_first_count(stream, home, nhome, hxr_sel_of(&r->d, dim, -1), r->d_counter,
                           r->d_early, r->p_early),
           "the first pulse's count");
    HXR_CU(cudaEventRecord((cudaEvent_t) r->ev_early, (cudaStream_t) stream), "an event");
    r->early_n = nhome;
    return HX_OK;
}

/* hx_plan_create_device (full 0) and hx_plan_create_device_full (1). */
static hx_status hxr_plan_create(hx_plan **out, hx_rebuild *r, int nhome, const float *x,
                                 int xstride, int full)
{
    hx_plan *p = NULL;
    hxr_plan_mem *m = NULL;
    void *stream = NULL;
    hx_status st = HX_OK;
    if (!out || !r)
        return hxi_error(HX_ERR_INVALID, "device plan: give a place for the plan and a context");
    *out = NULL;
    st = hxr_bad_args(nhome, x, xstride, "device plan");
    if (st == HX_OK && full)
        st = hxi_plan_full_check(&r->d);
    if (st == HX_OK)
        st = hxr_stream(r, &stream);
    if (st == HX_OK)
        st = hxi_alloc((void **) &p, sizeof *p, "a device plan");
    r->n_plan++;
    if (st == HX_OK) {
        memset(p, 0, sizeof *p);
        st = hxi_alloc((void **) &m, sizeof *m, "a device plan");
    }
    if (st == HX_OK) {
        memset(m, 0, sizeof *m);
        m->r = r;
        r->refs++;
        p->device_owner = m;
        p->free_device = hxr_plan_free;
        p->on_device = 1;
        p->decomp = r->d;
        p->full_shell = full;
        p->nhome = p->ntotal = nhome;
        /* Room for a halo of half the home atoms at once, as core/plan.c. */
        size_t atoms = (size_t) nhome + (size_t) nhome / 2 + 64;
        st = hxr_arrays_take(r, &m->a, atoms, (size_t) nhome / 2 + 64);
    }
    /* A count taken ahead serves this plan if it counted as many atoms
     * (the same ones, in any order: checked on the device). */
    const int ahead = r->early_n >= 0 && r->early_n == nhome;
    if (st == HX_OK && r->early_n >= 0 && !ahead)
        st = hxi_error(HX_ERR_INVALID,
                       "device plan: hx_plan_count_device counted %d home atoms, "
                       "hx_plan_create_device was given %d: give both the same atoms",
                       r->early_n, nhome);
    r->early_n = -1;
    /* Every rank's decomposition the same (cuts included): collective, so
     * that it is reached whatever this rank's status; a failure travels in
     * the first agreement below. */
    const hx_status same = hxi_decomp_agree(r->comm, &r->d);
    if (st == HX_OK)
        st = same;
    const hxr_home_in home = hxr_home_of(r, x, xstride, m ? m->a.z : NULL);
    int npulses = 0;
    for (int dim = HX_X; dim <= HX_Z; dim++)
        npulses += r->d.npulse[dim];
    if (npulses == 0) {
        /* Only the home atoms' check: no exchange, nothing to agree on yet. */
        if (st == HX_OK)
            st = hxr_begin(r, stream);
        if (st == HX_OK && hxr_home(stream, home, nhome, m->a.x, r->d_res))
            st = hxr_cuda(cudaGetLastError(), "the home atoms' check");
        if (st == HX_OK)
            st = hxr_fetch(r, stream);
        if (st == HX_OK && r->h_res->bad_index != INT_MAX)
            st = hxr_bad_home(r, r->h_res, x, xstride, 0);
        HXI_CHECK_GOTO(hxi_agree(r->comm, st), st, fail);
    }

    int map_total = 0;
    HXI_CHECK_GOTO(hxr_pulses(r, p, m ? &m->a : NULL, stream, &home, ahead, st, &map_total), st,
                   fail);
    /* The share masks order the reverse's adds: a full-shell plan, which
     * has none, keeps the 0 of the plan's memset and spares the host the
     * wait for them. */
    if (st == HX_OK && !p->full_shell)
        st = hxr_share(r, p, &m->a, stream);
    p->nhalo = p->ntotal - p->nhome;
    p->d_x = m->a.x;
    p->d_zones = (uint8_t *) m->a.z;
    p->d_maps = m->a.maps;
    int sizes[3] = {0, p->ntotal, 0};
    for (int q = 0; q < p->npulses; q++)
        if (p->pulse[q].nsend > sizes[2])
            sizes[2] = p->pulse[q].nsend;
    /* Also the agreement on the last pulse's exchange and what followed. */
    HXI_CHECK_GOTO(hxr_agree_max(r, st, sizes, 3), st, fail);
    p->max_ntotal = sizes[1];
    p->max_nsend = sizes[2];
    *out = p;
    return HX_OK;
fail:
    if (p) {
        hx_plan_destroy(p); /* gives m's arrays back, through free_device */
    } else if (m) {
        hxr_arrays_free(&m->a);
        free(m);
    }
    return st;
}

hx_status hx_plan_create_device(hx_plan **out, hx_rebuild *r, int nhome, const float *x,
                                int xstride)
{
    return hxr_plan_create(out, r, nhome, x, xstride, 0);
}

hx_status hx_plan_create_device_full(hx_plan **out, hx_rebuild *r, int nhome, const float *x,
                                     int xstride)
{
    return hxr_plan_create(out, r, nhome, x, xstride, 1);
}
