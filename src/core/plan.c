/*
 * plan.c - the halo plan: which atoms each pulse sends, where received atoms
 * land, their shifts and zones, and which earlier pulses each pulse reads.
 *
 * The plan is built by running the coordinate exchange once, in double, in
 * the same pulse order as every transport (Z, then Y, then X): a pulse's
 * candidates are all atoms held so far (first pulse of a dimension) or the
 * atoms the previous pulse of that dimension delivered; a candidate is sent
 * when its height along the dimension (its coordinate there for an
 * orthorhombic box, hx_decomp_height), in the sender's frame, is below the
 * sender's lower domain face plus the halo cutoff. The full-shell plan
 * (plan_full.c) runs the same pulses in both directions, through the same
 * hxi_plan_pulse_run.
 */
#include "core/hxi.h"
#include "core/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { HXI_TAG_COUNT = 101, HXI_TAG_X, HXI_TAG_ZONE, HXI_TAG_OFFSET };

static const char hxi_axis[3] = {'x', 'y', 'z'};

/* Every home coordinate finite, inside the box and in this rank's domain. */
static hx_status hxi_check_home(const hx_decomp *d, int nhome, const double *x)
{
    if (nhome < 0)
        return hxi_error(HX_ERR_INVALID, "home atom count %d is negative", nhome);
    if (nhome > 0 && !x)
        return hxi_error(HX_ERR_INVALID, "%d home atoms but no coordinates", nhome);
    for (int i = 0; i < nhome; i++) {
        const double *p = x + 3 * (size_t) i;
        for (int k = 0; k < 3; k++) {
            double h = hx_decomp_height(d, k, p), hi = d->face_lo[k] + d->height[k];
            if (!isfinite(p[k]))
                return hxi_error(HX_ERR_COORD_NAN,
                                 "home atom %d has coordinate %c = %g: coordinates must be "
                                 "finite (check the integrator or the input)",
                                 i, hxi_axis[k], p[k]);
            if (d->triclinic && (h < d->face_lo[k] || h >= hi))
                return hxi_error(HX_ERR_COORD_OUTSIDE,
                                 "home atom %d at (%.17g, %.17g, %.17g) is outside the "
                                 "triclinic box between its faces along %c (height %.17g "
                                 "not in [%g, %g)): wrap coordinates into the box (hx_migrate "
                                 "does)",
                                 i, p[0], p[1], p[2], hxi_axis[k], h, d->face_lo[k], hi);
            if (h < d->face_lo[k] || h >= hi)
                return hxi_error(HX_ERR_COORD_OUTSIDE,
                                 "home atom %d has %c = %.17g outside the box [%g, %g): wrap "
                                 "coordinates into the box (hx_migrate does)",
                                 i, hxi_axis[k], p[k], d->box_lo[k], hi);
        }
        /* The domain bounds are the ownership rule (hx_decomp_cell). */
        int inside = 1;
        for (int k = 0; k < 3; k++) {
            double h = hx_decomp_height(d, k, p);
            inside &= h >= d->dom_lo[k] && h < d->dom_hi[k];
        }
        if (!inside)
            return hxi_error(HX_ERR_COORD_OUTSIDE,
                             "home atom %d at (%g, %g, %g) belongs to rank %d, not to rank "
                             "%d: call hx_migrate before hx_plan_create",
                             i, p[0], p[1], p[2], hx_decomp_owner(d, p), d->rank);
    }
    return HX_OK;
}

static uint64_t hxi_fnv(uint64_t h, const void *data, size_t bytes)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

hx_status hxi_decomp_agree(hx_comm *comm, const hx_decomp *d)
{
    uint64_t h = 0xcbf29ce484222325ull;
    double v[2];
    h = hxi_fnv(h, d->grid, sizeof d->grid);
    h = hxi_fnv(h, d->box_lo, sizeof d->box_lo);
    h = hxi_fnv(h, d->box_len, sizeof d->box_len);
    h = hxi_fnv(h, d->tilt, sizeof d->tilt);
    h = hxi_fnv(h, &d->cutoff, sizeof d->cutoff);
    h = hxi_fnv(h, d->cuts_set, sizeof d->cuts_set);
    for (int k = 0; k < 3; k++)
        if (d->cuts_set[k])
            h = hxi_fnv(h, d->cut[k], (size_t) (d->grid[k] + 1) * sizeof(double));
    v[0] = (double) (h >> 11); /* exact in a double */
    v[1] = -v[0];
    HXI_CHECK(hxi_allreduce_double(comm, v, 2, 1));
    if (v[0] == -v[1])
        return HX_OK;
    /* Some rank differs: those not holding the largest checksum say so. */
    return hxi_agree(comm, (double) (h >> 11) == v[0]
                               ? HX_OK
                               : hxi_error(HX_ERR_INVALID,
                                           "rank %d holds another decomposition than rank(s) "
                                           "with checksum %.0f (grid, box, cutoff or the cuts "
                                           "of hx_decomp_set_cuts differ): give every rank the "
                                           "same cuts before a plan",
                                           d->rank, v[0]));
}

/* Grows the per-atom arrays to hold n atoms. */
static hx_status hxi_plan_reserve(hx_plan *p, int n, int *cap)
{
    if (n <= *cap)
        return HX_OK;
    *cap = n > 2 * *cap ? n : 2 * *cap;
    HXI_CHECK(hxi_grow((void **) &p->x, (size_t) *cap * 3 * sizeof(double), "plan coordinates"));
    HXI_CHECK(hxi_grow((void **) &p->zones, (size_t) *cap * 4, "plan zones"));
    return HX_OK;
}

/* Entries of map[from, n) (sorted: the halo part of a pulse's map) that
 * each earlier pulse delivered, into count[0 .. npulses). */
static void hxi_count_sources(const hx_plan *p, int npulses, const int *map, int from, int n,
                              int *count)
{
    int q = 0;
    for (int i = from; i < n; i++) {
        while (q < npulses && map[i] >= p->pulse[q].recv_offset + p->pulse[q].nrecv)
            q++;
        if (q < npulses && map[i] >= p->pulse[q].recv_offset)
            count[q]++;
    }
}

void hxi_plan_summarise(hx_plan *p)
{
    int offset = 0;
    for (int q = 0; q < p->npulses; q++) {
        hx_pulse *pu = &p->pulse[q];
        memset(p->from[q], 0, sizeof p->from[q]);
        hxi_count_sources(p, q, pu->map, pu->nsend_home, pu->nsend, p->from[q]);
        pu->deps = 0;
        for (int r = 0; r < q; r++)
            if (p->from[q][r] > 0)
                pu->deps |= UINT64_C(1) << r;
        pu->map_offset = offset;
        offset += pu->nsend;
    }
    /* Pulses that share atoms: one mask of pulses per atom. They order the
     * reverse's adds; a full-shell plan has no reverse and keeps 0. */
    if (p->full_shell) {
        for (int q = 0; q < p->npulses; q++)
            p->pulse[q].share = 0;
        return;
    }
    uint64_t *mask = calloc((size_t) p->ntotal + 1, sizeof *mask);
    for (int q = 0; q < p->npulses; q++)
        for (int i = 0; mask && i < p->pulse[q].nsend; i++)
            mask[p->pulse[q].map[i]] |= UINT64_C(1) << q;
    for (int q = 0; q < p->npulses; q++) {
        uint64_t m = 0;
        for (int i = 0; mask && i < p->pulse[q].nsend; i++)
            m |= mask[p->pulse[q].map[i]];
        /* Without memory for the masks, every later pulse counts as
         * sharing: a safe order, only less overlap. */
        p->pulse[q].share = (mask ? m : ~UINT64_C(0)) & ~((UINT64_C(2) << q) - 1);
    }
    free(mask);
}

double hxi_pack_shift(const hx_pulse *p, int k)
{
    return p->shift[k] == 0.0 && k != p->dim ? -0.0 : p->shift[k];
}

#define HXI_PULSE_PACK(T)                                                                          \
    void hxi_pulse_pack_##T(const hx_pulse *p, const T *x, T *buf)                                 \
    {                                                                                              \
        const T s0 = (T) hxi_pack_shift(p, 0), s1 = (T) hxi_pack_shift(p, 1);                      \
        const T s2 = (T) hxi_pack_shift(p, 2);                                                     \
        for (int i = 0; i < p->nsend; i++) {                                                       \
            const T *src = x + 3 * (size_t) p->map[i];                                             \
            buf[3 * i + 0] = src[0] + s0;                                                          \
            buf[3 * i + 1] = src[1] + s1;                                                          \
            buf[3 * i + 2] = src[2] + s2;                                                          \
        }                                                                                          \
    }
HXI_PULSE_PACK(double)
HXI_PULSE_PACK(float)
#undef HXI_PULSE_PACK

void hxi_pulse_shift(const hx_decomp *d, int dim, int dir, double shift[3])
{
    const int wraps = dir < 0 ? d->coord[dim] == 0 : d->coord[dim] == d->grid[dim] - 1;
    for (int k = 0; k < 3; k++)
        shift[k] = wraps ? (dir < 0 ? d->edge[dim][k] : -d->edge[dim][k]) : 0.0;
}

hx_status hxi_plan_pulse_run(hx_plan *p, hxi_plan_work *w, int dim, int dir, int index, int cand_lo,
                             int cand_hi)
{
    const hx_decomp *d = &p->decomp;
    hx_pulse *pu = &p->pulse[p->npulses];
    double limit = hxi_pulse_limit(d, dim, dir);
    int nsend = 0, nhome = 0, nrecv = 0, offsets[2];
    int *map = NULL;
    hx_status st;

    pu->dim = dim;
    pu->dir = dir;
    pu->index = index;
    pu->send_rank = dir < 0 ? d->down[dim] : d->up[dim];
    pu->recv_rank = dir < 0 ? d->up[dim] : d->down[dim];
    hxi_pulse_shift(d, dim, dir, pu->shift);

    st = hxi_alloc((void **) &map, (size_t) (cand_hi - cand_lo) * sizeof(int), "a pulse map");
    if (st == HX_OK) {
        for (int i = cand_lo; i < cand_hi; i++)
            if (hxi_pulse_selects(dir, hx_decomp_height(d, dim, p->x + 3 * (size_t) i), limit)) {
                map[nsend++] = i;
                nhome += i < p->nhome;
            }
        st = hxi_grow((void **) &w->sbuf, (size_t) (nsend + 1) * 3 * sizeof(double),
                      "plan send buffer");
    }
    if (st == HX_OK)
        st = hxi_grow((void **) &w->zbuf, (size_t) (nsend + 1) * 4, "plan zone buffer");
    st = hxi_agree(w->comm, st);
    if (st != HX_OK) {
        free(map);
        return st;
    }
    p->maps[p->npulses] = map;
    pu->map = map;
    pu->nsend = nsend;
    pu->nsend_home = nhome;
    p->npulses++;

    hxi_pulse_pack_double(pu, p->x, w->sbuf);
    for (int i = 0; i < nsend; i++) {
        memcpy(w->zbuf + 4 * i, p->zones + 4 * (size_t) map[i], 4);
        /* The receiver sees the atom one domain further along -dir. */
        w->zbuf[4 * i + dim] = (uint8_t) (w->zbuf[4 * i + dim] - dir);
    }

    HXI_CHECK(hxi_sendrecv(w->comm, &nsend, sizeof nsend, pu->send_rank, &nrecv, sizeof nrecv,
                           pu->recv_rank, HXI_TAG_COUNT));
    pu->nrecv = nrecv;
    pu->recv_offset = p->ntotal;
    HXI_CHECK(hxi_agree(w->comm, hxi_plan_reserve(p, p->ntotal + nrecv, &w->cap)));
    HXI_CHECK(hxi_sendrecv(w->comm, w->sbuf, (size_t) nsend * 3 * sizeof(double), pu->send_rank,
                           p->x + 3 * (size_t) p->ntotal, (size_t) nrecv * 3 * sizeof(double),
                           pu->recv_rank, HXI_TAG_X));
    HXI_CHECK(hxi_sendrecv(w->comm, w->zbuf, (size_t) nsend * 4, pu->send_rank,
                           p->zones + 4 * (size_t) p->ntotal, (size_t) nrecv * 4, pu->recv_rank,
                           HXI_TAG_ZONE));
    /* The sender learns once where its atoms land on the receiver. */
    offsets[0] = pu->recv_offset;
    HXI_CHECK(hxi_sendrecv(w->comm, &offsets[0], sizeof(int), pu->recv_rank, &offsets[1],
                           sizeof(int), pu->send_rank, HXI_TAG_OFFSET));
    pu->peer_offset = offsets[1];
    p->ntotal += nrecv;
    return HX_OK;
}

/* The eighth shell's pulses: along Z, Y, X, every pulse to the lower
 * neighbour; pulse k > 0 forwards what pulse k - 1 delivered. */
static hx_status hxi_plan_eighth_pulses(hx_plan *p, hxi_plan_work *w)
{
    for (int dim = HX_Z; dim >= HX_X; dim--) {
        for (int k = 0; k < p->decomp.npulse[dim]; k++) {
            int lo = 0, hi = p->ntotal;
            if (k > 0) {
                const hx_pulse *prev = &p->pulse[p->npulses - 1];
                lo = prev->recv_offset;
                hi = prev->recv_offset + prev->nrecv;
            }
            HXI_CHECK(hxi_plan_pulse_run(p, w, dim, -1, k, lo, hi));
        }
    }
    return HX_OK;
}

void hx_plan_destroy(hx_plan *plan)
{
    if (!plan)
        return;
    if (plan->free_device)
        plan->free_device(plan);
    for (int q = 0; q < plan->npulses; q++)
        free(plan->maps[q]);
    free(plan->x);
    free(plan->zones);
    free(plan);
}

hx_status hxi_plan_build(hx_plan **out, hx_comm *comm, const hx_decomp *d, int nhome,
                         const double *x, int full)
{
    hx_plan *p = NULL;
    hxi_plan_work w = {comm, 0, NULL, NULL};
    int sizes[2];
    hx_status st;

    if (out)
        *out = NULL;
    if (!out)
        st = hxi_error(HX_ERR_INVALID, "no place for the plan: pass the address of an "
                                       "hx_plan pointer");
    else if (!d || hx_comm_size(comm) != d->nranks || hx_comm_rank(comm) != d->rank)
        st =
            hxi_error(HX_ERR_INVALID,
                      "decomposition is for rank %d of %d but the communicator has rank %d "
                      "of %d: initialise it with hx_comm_rank and hx_comm_size",
                      d ? d->rank : -1, d ? d->nranks : -1, hx_comm_rank(comm), hx_comm_size(comm));
    else if (full)
        st = hxi_plan_full_check(d);
    else
        st = HX_OK;
    if (st == HX_OK)
        st = hxi_check_home(d, nhome, x);
    if (st == HX_OK)
        st = hxi_alloc((void **) &p, sizeof *p, "a plan");
    if (st == HX_OK) {
        memset(p, 0, sizeof *p);
        p->decomp = *d;
        p->full_shell = full;
        p->nhome = p->ntotal = nhome;
        /* Room for a halo of half the home atoms at once, so that a usual
         * plan grows its arrays once or not at all. */
        st = hxi_plan_reserve(p, nhome + nhome / 2 + 64, &w.cap);
    }
    HXI_CHECK_GOTO(hxi_agree(comm, st), st, fail);
    HXI_CHECK_GOTO(hxi_decomp_agree(comm, d), st, fail);
    if (nhome)
        memcpy(p->x, x, (size_t) nhome * 3 * sizeof(double));
    memset(p->zones, 0, (size_t) nhome * 4);

    HXI_CHECK_GOTO(full ? hxi_plan_full_pulses(p, &w) : hxi_plan_eighth_pulses(p, &w), st, fail);
    p->nhalo = p->ntotal - p->nhome;
    hxi_plan_summarise(p);
    sizes[0] = p->ntotal;
    sizes[1] = 0;
    for (int q = 0; q < p->npulses; q++)
        if (p->pulse[q].nsend > sizes[1])
            sizes[1] = p->pulse[q].nsend;
    HXI_CHECK_GOTO(hxi_allreduce_int(comm, sizes, 2, 1), st, fail);
    p->max_ntotal = sizes[0];
    p->max_nsend = sizes[1];
    free(w.sbuf);
    free(w.zbuf);
    *out = p;
    return HX_OK;
fail:
    free(w.sbuf);
    free(w.zbuf);
    hx_plan_destroy(p);
    return st;
}

hx_status hx_plan_create(hx_plan **out, hx_comm *comm, const hx_decomp *d, int nhome,
                         const double *x)
{
    return hxi_plan_build(out, comm, d, nhome, x, 0);
}

const hx_decomp *hx_plan_decomp(const hx_plan *plan)
{
    return &plan->decomp;
}
int hx_plan_nhome(const hx_plan *plan)
{
    return plan->nhome;
}
int hx_plan_nhalo(const hx_plan *plan)
{
    return plan->nhalo;
}
int hx_plan_ntotal(const hx_plan *plan)
{
    return plan->ntotal;
}
int hx_plan_max_ntotal(const hx_plan *plan)
{
    return plan->max_ntotal;
}
int hx_plan_npulses(const hx_plan *plan)
{
    return plan->npulses;
}
const double *hx_plan_coords(const hx_plan *plan)
{
    return plan->x;
}
const uint8_t *hx_plan_zones(const hx_plan *plan)
{
    return plan->zones;
}

int hx_plan_from_pulse(const hx_plan *plan, int p, int q)
{
    if (p < 0 || p >= plan->npulses || q < 0 || q >= p)
        return 0;
    return plan->from[p][q];
}

int hx_plan_full_shell(const hx_plan *plan)
{
    return plan->full_shell;
}

int hx_plan_on_device(const hx_plan *plan)
{
    return plan->on_device;
}
const float *hx_plan_device_coords(const hx_plan *plan)
{
    return plan->d_x;
}
const uint8_t *hx_plan_device_zones(const hx_plan *plan)
{
    return plan->d_zones;
}
const int *hx_plan_device_maps(const hx_plan *plan)
{
    return plan->d_maps;
}

const hx_pulse *hx_plan_pulse(const hx_plan *plan, int p)
{
    return p >= 0 && p < plan->npulses ? &plan->pulse[p] : NULL;
}
