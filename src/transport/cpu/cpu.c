/*
 * cpu.c - the reference transport: host arrays over MPI (or copies on one
 * process), float or double. It runs the exchange in exactly the order and
 * with the dependencies of the GPU transports: coordinates pulse by pulse
 * in plan order (Z, Y, X), each pulse packed with its shift and received
 * straight into its range; forces in reverse pulse order, each pulse's
 * values added into the atoms its map names, so that forwarded atoms have
 * their forces complete before they are sent on. Per-atom fields travel
 * the same way (fields.c checks the call), without the shift.
 */
#include "transport/transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HXI_TAG_FWD = 301, HXI_TAG_REV = 302, HXI_TAG_FFWD = 303, HXI_TAG_FREV = 304 };

typedef struct hxi_cpu {
    size_t elem; /* bytes of one component */
    void *buf;   /* pack buffer, max_nsend * 3 components */
    size_t buf_bytes;
    void *fbuf[2]; /* field exchanges: what is sent, what is received */
    size_t fbuf_bytes[2];
    unsigned long long exchanges; /* forward calls so far: named by a timeout */
} hxi_cpu;

/* A pulse's message, and where it timed out (HALOX_TIMEOUT_S bounds it,
 * in hxi_sendrecv_within, as opts.timeout_s says) the pulse and exchange that waited. */
static hx_status cpu_pulse_sendrecv(hx_transport *t, int q, const char *what, const void *sbuf,
                                    size_t sbytes, int dest, void *rbuf, size_t rbytes, int src,
                                    int tag)
{
    const hxi_cpu *c = t->impl;
    const hx_status st =
        hxi_sendrecv_within(t->comm, sbuf, sbytes, dest, rbuf, rbytes, src, tag, t->opts.timeout_s);
    if (st != HX_ERR_TIMEOUT)
        return st;
    char why[768];
    snprintf(why, sizeof why, "%s", hx_last_error());
    return hxi_error(st, "transport cpu, %s of pulse %d of exchange %llu: %s", what, q,
                     c->exchanges, why);
}

static hx_status cpu_alloc_arrays(hx_transport *t, int capacity)
{
    hxi_cpu *c = t->impl;
    size_t bytes = (size_t) capacity * 3 * c->elem;
    HXI_CHECK(hxi_grow(&t->x, bytes, "cpu transport coordinates"));
    HXI_CHECK(hxi_grow(&t->f, bytes, "cpu transport forces"));
    t->capacity = capacity;
    return HX_OK;
}

static hx_status cpu_create(hx_transport *t)
{
    hxi_cpu *c;
    HXI_CHECK(hxi_alloc((void **) &c, sizeof *c, "cpu transport"));
    memset(c, 0, sizeof *c);
    c->elem = t->opts.dtype == HX_DOUBLE ? sizeof(double) : sizeof(float);
    t->impl = c;
    snprintf(t->describe, sizeof t->describe, "cpu: host %s arrays, %s",
             t->opts.dtype == HX_DOUBLE ? "double" : "float",
             hx_have_mpi() ? "MPI_Isend/Irecv per pulse" : "one process (no MPI)");
    if (t->opts.capacity > 0) {
        hx_status st = cpu_alloc_arrays(t, t->opts.capacity);
        if (st != HX_OK) {
            free(t->x);
            free(t->f);
            free(c);
            return st;
        }
    }
    return HX_OK;
}

static void cpu_destroy(hx_transport *t)
{
    hxi_cpu *c = t->impl;
    free(c->buf);
    free(c->fbuf[0]);
    free(c->fbuf[1]);
    free(c);
    free(t->x);
    free(t->f);
}

static hx_status cpu_set_plan(hx_transport *t)
{
    hxi_cpu *c = t->impl;
    hx_status st;
    int grow, cap;
    size_t need;
    if (hx_plan_on_device(t->plan) && hx_plan_npulses(t->plan) > 0)
        return hxi_agree(t->comm,
                         hxi_error(HX_ERR_UNSUPPORTED,
                                   "the cpu transport moves host arrays and needs a plan with "
                                   "host maps (hx_plan_create), not one built on the device; "
                                   "use a device transport with hx_plan_create_device"));
    HXI_CHECK(hxi_transport_fit(t, &grow, &cap));
    st = grow ? cpu_alloc_arrays(t, cap) : HX_OK;
    need = (size_t) (t->plan->max_nsend + 1) * 3 * c->elem;
    if (st == HX_OK && need > c->buf_bytes) {
        st = hxi_grow(&c->buf, need, "cpu transport pack buffer");
        if (st == HX_OK)
            c->buf_bytes = need;
    }
    return hxi_agree(t->comm, st);
}

/* Adds buf back into the atoms the map names (the force reverse). */
#define HXI_UNPACK_ADD(T)                                                                          \
    static void cpu_unpack_add_##T(T *f, const T *buf, const hx_pulse *p)                          \
    {                                                                                              \
        for (int i = 0; i < p->nsend; i++) {                                                       \
            T *dst = f + 3 * (size_t) p->map[i];                                                   \
            dst[0] += buf[3 * i + 0];                                                              \
            dst[1] += buf[3 * i + 1];                                                              \
            dst[2] += buf[3 * i + 2];                                                              \
        }                                                                                          \
    }
HXI_UNPACK_ADD(float)
HXI_UNPACK_ADD(double)

static hx_status cpu_forward(hx_transport *t)
{
    hxi_cpu *c = t->impl;
    const hx_plan *plan = t->plan;
    c->exchanges++;
    for (int q = 0; q < plan->npulses; q++) {
        const hx_pulse *p = &plan->pulse[q];
        if (t->opts.dtype == HX_DOUBLE)
            hxi_pulse_pack_double(p, t->x, c->buf);
        else
            hxi_pulse_pack_float(p, t->x, c->buf);
        HXI_CHECK(cpu_pulse_sendrecv(t, q, "coordinates", c->buf, (size_t) p->nsend * 3 * c->elem,
                                     p->send_rank,
                                     (char *) t->x + (size_t) p->recv_offset * 3 * c->elem,
                                     (size_t) p->nrecv * 3 * c->elem, p->recv_rank, HXI_TAG_FWD));
    }
    return HX_OK;
}

static hx_status cpu_reverse(hx_transport *t)
{
    hxi_cpu *c = t->impl;
    const hx_plan *plan = t->plan;
    for (int q = plan->npulses - 1; q >= 0; q--) {
        const hx_pulse *p = &plan->pulse[q];
        HXI_CHECK(cpu_pulse_sendrecv(t, q, "forces",
                                     (char *) t->f + (size_t) p->recv_offset * 3 * c->elem,
                                     (size_t) p->nrecv * 3 * c->elem, p->recv_rank, c->buf,
                                     (size_t) p->nsend * 3 * c->elem, p->send_rank, HXI_TAG_REV));
        if (t->opts.dtype == HX_DOUBLE)
            cpu_unpack_add_double(t->f, c->buf, p);
        else
            cpu_unpack_add_float(t->f, c->buf, p);
    }
    return HX_OK;
}

/* Bytes of count atoms of the n arrays f, one aligned block after another:
 * the layout of a field message, alike on both sides since the sender's
 * nsend is the receiver's nrecv. */
static size_t cpu_fields_bytes(const hxi_field *f, int n, int count)
{
    size_t bytes = 0;
    for (int k = 0; k < n; k++)
        bytes += hxi_field_block(&f[k], count);
    return bytes;
}

/* Room in both field buffers for the largest pulse of any rank. */
static hx_status cpu_fields_room(hxi_cpu *c, const hx_plan *plan, const hxi_field *f, int n)
{
    size_t need = cpu_fields_bytes(f, n, plan->max_nsend + 1);
    for (int b = 0; b < 2; b++)
        if (need > c->fbuf_bytes[b]) {
            HXI_CHECK(hxi_grow(&c->fbuf[b], need, "cpu transport field buffer"));
            c->fbuf_bytes[b] = need;
        }
    return HX_OK;
}

/* Fields forward (the coordinates first when f[0].shift): per pulse, every
 * array's values of the map's atoms in one message, received straight into
 * a buffer and copied to each array's [recv_offset, recv_offset + nrecv). */
static hx_status cpu_fields_forward(hx_transport *t, const hxi_field *f, int n)
{
    hxi_cpu *c = t->impl;
    const hx_plan *plan = t->plan;
    const char *what = f[0].shift ? "coordinates and fields" : "fields";
    HXI_CHECK(cpu_fields_room(c, plan, f, n));
    c->exchanges++;
    for (int q = 0; q < plan->npulses; q++) {
        const hx_pulse *p = &plan->pulse[q];
        char *sbuf = c->fbuf[0], *rbuf = c->fbuf[1];
        size_t off = 0;
        for (int k = 0; k < n; k++) {
            hxi_field_pack(&f[k], p, sbuf + off);
            off += hxi_field_block(&f[k], p->nsend);
        }
        HXI_CHECK(cpu_pulse_sendrecv(t, q, what, sbuf, off, p->send_rank, rbuf,
                                     cpu_fields_bytes(f, n, p->nrecv), p->recv_rank, HXI_TAG_FFWD));
        off = 0;
        for (int k = 0; k < n; k++) {
            memcpy((char *) f[k].data + (size_t) p->recv_offset * f[k].size, rbuf + off,
                   (size_t) p->nrecv * f[k].size);
            off += hxi_field_block(&f[k], p->nrecv);
        }
    }
    return HX_OK;
}

/* Fields reverse (the forces first when asked): per pulse in reverse
 * order, every array's halo range in one message, added by the map. */
static hx_status cpu_fields_reverse(hx_transport *t, const hxi_field *f, int n)
{
    hxi_cpu *c = t->impl;
    const hx_plan *plan = t->plan;
    const char *what = f[0].data == t->f ? "forces and fields" : "fields";
    HXI_CHECK(cpu_fields_room(c, plan, f, n));
    for (int q = plan->npulses - 1; q >= 0; q--) {
        const hx_pulse *p = &plan->pulse[q];
        char *sbuf = c->fbuf[0], *rbuf = c->fbuf[1];
        size_t off = 0;
        for (int k = 0; k < n; k++) {
            memcpy(sbuf + off, (const char *) f[k].data + (size_t) p->recv_offset * f[k].size,
                   (size_t) p->nrecv * f[k].size);
            off += hxi_field_block(&f[k], p->nrecv);
        }
        HXI_CHECK(cpu_pulse_sendrecv(t, q, what, sbuf, off, p->recv_rank, rbuf,
                                     cpu_fields_bytes(f, n, p->nsend), p->send_rank, HXI_TAG_FREV));
        off = 0;
        for (int k = 0; k < n; k++) {
            hxi_field_add(&f[k], p, rbuf + off);
            off += hxi_field_block(&f[k], p->nsend);
        }
    }
    return HX_OK;
}

const hxi_transport_ops hxi_transport_cpu = {
    .name = "cpu",
    .caps = HX_CAP_HOST | HX_CAP_DOUBLE | HX_CAP_BLOCKS_HOST | HX_CAP_FIELDS,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .set_plan = cpu_set_plan,
    .forward = cpu_forward,
    .reverse = cpu_reverse,
    .sync = NULL,
    .fields_forward = cpu_fields_forward,
    .fields_reverse = cpu_fields_reverse,
};
