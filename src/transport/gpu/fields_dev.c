/*
 * fields_dev.c - per-atom fields through the halo on device arrays, for
 * every GPU transport. Per pulse, in the plan's order (Z, Y, X): one
 * kernel gathers every named array's values by the pulse's map into a
 * device staging buffer (the blocks of the arrays one after another, as
 * the cpu transport lays out its message); the bytes go to the peer
 * through pinned host memory over the transport's communicator, the wait
 * bounded by its timeout; the receiver copies each block into its array's
 * halo range. A reverse runs the pulses in reverse order: each halo range
 * goes back the same way and one kernel adds it into the atoms the map
 * names. A pulse's map holds each atom at most once (core/plan.c sends
 * each candidate once, in index order), so the adds need no atomics, and
 * the pulses run one after another on the stream: the sums are the same
 * at every call. Coordinates (forces) asked in the same call go through
 * the transport's own exchange first, with their shift. The host waits
 * for the stream at each pulse: a field call is CPU-orchestrated and
 * cannot be captured in a CUDA graph.
 */
#include "transport/gpu/fields_dev.h"
#include "transport/gpu/fields_kernels.h"
#include "transport/gpu/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HXI_FDEV_TAG_FWD = 305, HXI_FDEV_TAG_REV = 306 };

_Static_assert(HXI_FDEV_MAX >= HX_MAX_FIELDS, "every field of a call in one launch");

typedef struct hxi_fdev {
    int *d_maps; /* a host plan's maps on the device, pulse p at its map_offset */
    size_t maps_cap;
    void *d_stage; /* a pulse's message on the device */
    size_t stage_cap;
    void *h[2]; /* pinned: what is sent, what is received */
    size_t h_cap;
    unsigned long long exchanges; /* field calls so far: named by a timeout */
} hxi_fdev;

void hxi_fdev_free(hx_transport *t)
{
    hxi_fdev *d = t->fdev;
    if (!d)
        return;
    cudaFree(d->d_maps);
    cudaFree(d->d_stage);
    cudaFreeHost(d->h[0]);
    cudaFreeHost(d->h[1]);
    free(d);
    t->fdev = NULL;
}

/* The arrays' layout for count atoms: a[k] (when a is not NULL) and the
 * message's bytes, each block rounded up to 8 (hxi_field_block). */
static size_t fdev_layout(const hxi_field *f, int n, int count, hxi_fdev_arr *a)
{
    size_t off = 0;
    for (int k = 0; k < n; k++) {
        if (a)
            a[k] = (hxi_fdev_arr){f[k].data, (int32_t) f[k].type, f[k].width, off};
        off += hxi_field_block(&f[k], count);
    }
    return off;
}

/* The maps the kernels read: a device plan's own, else a copy of the
 * host plan's (uploaded at each call: the plan may have changed). */
static hx_status fdev_maps(hx_transport *t, hxi_fdev *d, const int **maps)
{
    const hx_plan *plan = t->plan;
    if (plan->on_device) {
        *maps = plan->d_maps;
        return HX_OK;
    }
    size_t total = 0;
    for (int q = 0; q < plan->npulses; q++)
        total += (size_t) plan->pulse[q].nsend;
    HXI_CHECK(hxi_gpu_grow((void **) &d->d_maps, &d->maps_cap, (total + 1) * sizeof(int),
                           (total + total / 4 + 64) * sizeof(int), "the field exchange's maps"));
    for (int q = 0; q < plan->npulses; q++) {
        const hx_pulse *p = &plan->pulse[q];
        if (p->nsend > 0)
            HXI_CUDA(cudaMemcpyAsync(d->d_maps + p->map_offset, p->map,
                                     (size_t) p->nsend * sizeof(int), cudaMemcpyHostToDevice,
                                     (cudaStream_t) t->stream));
    }
    *maps = d->d_maps;
    return HX_OK;
}

/* Staging room for the largest pulse of any rank (a pulse's nrecv is its
 * sender's nsend). */
static hx_status fdev_room(hx_transport *t, hxi_fdev *d, const hxi_field *f, int n)
{
    size_t need = fdev_layout(f, n, t->plan->max_nsend + 1, NULL);
    HXI_CHECK(hxi_gpu_grow(&d->d_stage, &d->stage_cap, need, need + need / 4,
                           "the field exchange's staging buffer"));
    if (need <= d->h_cap && d->h[0] && d->h[1])
        return HX_OK;
    need += need / 4;
    for (int b = 0; b < 2; b++) {
        cudaFreeHost(d->h[b]);
        d->h[b] = NULL;
    }
    d->h_cap = 0;
    for (int b = 0; b < 2; b++)
        HXI_CHECK(hxi_gpu_host_malloc(&d->h[b], need, "the field exchange's host buffers"));
    d->h_cap = need;
    return HX_OK;
}

/* Refuses an array the device cannot reach (plain host memory), the same
 * on every rank (all register the same fields) before anything is sent. */
hx_status hxi_fdev_check(const hx_transport *t, const char *call, const hxi_field *f, int n)
{
    for (int k = 0; k < n; k++) {
        struct cudaPointerAttributes at;
        memset(&at, 0, sizeof at);
        if (!f[k].data)
            continue;
        if (cudaPointerGetAttributes(&at, f[k].data) != cudaSuccess ||
            at.type == cudaMemoryTypeUnregistered) {
            (void) cudaGetLastError();
            return hxi_error(HX_ERR_INVALID,
                             "%s on transport '%s': the array at %p (field %d of the call) is "
                             "not device memory: a GPU transport carries fields in device "
                             "arrays (cudaMalloc)",
                             call, t->ops->name, f[k].data, k);
        }
    }
    return HX_OK;
}

/* The checks of a call, before anything (the coordinates or forces
 * included) is queued: no stream capture, device arrays only. */
static hx_status fdev_check_call(hx_transport *t, const char *call, const hxi_field *f, int n)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    HXI_CUDA(cudaStreamIsCapturing((cudaStream_t) t->stream, &cs));
    if (cs != cudaStreamCaptureStatusNone)
        return hxi_error(HX_ERR_STATE,
                         "%s on transport '%s' during stream capture: fields go through host "
                         "memory, pulse by pulse, and cannot be captured in a CUDA graph; "
                         "call it outside the capture",
                         call, t->ops->name);
    return hxi_fdev_check(t, call, f, n);
}

/* Everything a call needs before its first pulse: the state, the room,
 * the maps. */
static hx_status fdev_begin(hx_transport *t, const hxi_field *f, int n, hxi_fdev **out,
                            const int **maps)
{
    if (!t->fdev) {
        HXI_CHECK(hxi_alloc((void **) &t->fdev, sizeof *t->fdev, "device field state"));
        memset(t->fdev, 0, sizeof *t->fdev);
    }
    *out = t->fdev;
    HXI_CHECK(fdev_room(t, *out, f, n));
    HXI_CHECK(fdev_maps(t, *out, maps));
    (*out)->exchanges++;
    return HX_OK;
}

/* A pulse's message through the host, bounded by the transport's timeout;
 * a timeout names the pulse and the exchange. */
static hx_status fdev_sendrecv(hx_transport *t, int q, size_t sbytes, int dest, size_t rbytes,
                               int src, int tag)
{
    const hxi_fdev *d = t->fdev;
    const hx_status st = hxi_sendrecv_within(t->comm, d->h[0], sbytes, dest, d->h[1], rbytes, src,
                                             tag, t->opts.timeout_s);
    if (st != HX_ERR_TIMEOUT)
        return st;
    char why[768];
    snprintf(why, sizeof why, "%s", hx_last_error());
    return hxi_error(st, "transport %s, fields of pulse %d of field exchange %llu: %s",
                     t->ops->name, q, d->exchanges, why);
}

/* Forward of one pulse: gather, send, copy into the halo range. The
 * stream is drained before the message, which also ends the previous
 * pulse's copies out of the receive buffer. */
static hx_status fdev_forward_pulse(hx_transport *t, int q, const hxi_field *f, int n,
                                    const int *maps)
{
    hxi_fdev *d = t->fdev;
    cudaStream_t s = (cudaStream_t) t->stream;
    const hx_pulse *p = &t->plan->pulse[q];
    hxi_fdev_arr a[HXI_FDEV_MAX];
    const size_t sbytes = fdev_layout(f, n, p->nsend, a);
    HXI_CUDA(hxi_fdev_gather(s, d->d_stage, a, n, maps + p->map_offset, p->nsend));
    if (sbytes > 0)
        HXI_CUDA(cudaMemcpyAsync(d->h[0], d->d_stage, sbytes, cudaMemcpyDeviceToHost, s));
    HXI_CUDA(cudaStreamSynchronize(s));
    HXI_CHECK(fdev_sendrecv(t, q, sbytes, p->send_rank, fdev_layout(f, n, p->nrecv, NULL),
                            p->recv_rank, HXI_FDEV_TAG_FWD));
    size_t off = 0;
    for (int k = 0; k < n && p->nrecv > 0; k++) {
        HXI_CUDA(cudaMemcpyAsync((char *) f[k].data + (size_t) p->recv_offset * f[k].size,
                                 (const char *) d->h[1] + off, (size_t) p->nrecv * f[k].size,
                                 cudaMemcpyHostToDevice, s));
        off += hxi_field_block(&f[k], p->nrecv);
    }
    return HX_OK;
}

/* Reverse of one pulse: the halo range out, the owner's adds by the map. */
static hx_status fdev_reverse_pulse(hx_transport *t, int q, const hxi_field *f, int n,
                                    const int *maps)
{
    hxi_fdev *d = t->fdev;
    cudaStream_t s = (cudaStream_t) t->stream;
    const hx_pulse *p = &t->plan->pulse[q];
    hxi_fdev_arr a[HXI_FDEV_MAX];
    const size_t sbytes = fdev_layout(f, n, p->nrecv, a);
    for (int k = 0; k < n && p->nrecv > 0; k++)
        HXI_CUDA(cudaMemcpyAsync((char *) d->h[0] + a[k].off,
                                 (const char *) f[k].data + (size_t) p->recv_offset * f[k].size,
                                 (size_t) p->nrecv * f[k].size, cudaMemcpyDeviceToHost, s));
    HXI_CUDA(cudaStreamSynchronize(s));
    const size_t rbytes = fdev_layout(f, n, p->nsend, a);
    HXI_CHECK(fdev_sendrecv(t, q, sbytes, p->recv_rank, rbytes, p->send_rank, HXI_FDEV_TAG_REV));
    if (rbytes > 0)
        HXI_CUDA(cudaMemcpyAsync(d->d_stage, d->h[1], rbytes, cudaMemcpyHostToDevice, s));
    HXI_CUDA(hxi_fdev_add(s, d->d_stage, a, n, maps + p->map_offset, p->nsend));
    return HX_OK;
}

/* A field call: its checks, then the transport's own forward (reverse)
 * when f[0] is the coordinates (forces), then the fields pulse by pulse,
 * in plan order (forward) or reversed (reverse). */
static hx_status fdev_run(hx_transport *t, const hxi_field *f, int n, int reverse)
{
    const char *call = reverse ? "hx_transport_fields_reverse" : "hx_transport_fields_forward";
    const int with = n > 0 && (reverse ? f[0].data == t->f && !f[0].shift : f[0].shift);
    if (n > with)
        HXI_CHECK(fdev_check_call(t, call, f + with, n - with));
    if (with) /* fields.c has counted a forward's step */
        HXI_CHECK(reverse ? t->ops->reverse(t) : t->ops->forward(t));
    f += with;
    n -= with;
    if (n == 0)
        return HX_OK;
    hxi_fdev *d = NULL;
    const int *maps = NULL;
    HXI_CHECK(fdev_begin(t, f, n, &d, &maps));
    const int np = t->plan->npulses;
    for (int i = 0; i < np; i++)
        HXI_CHECK(reverse ? fdev_reverse_pulse(t, np - 1 - i, f, n, maps)
                          : fdev_forward_pulse(t, i, f, n, maps));
    HXI_CUDA(cudaStreamSynchronize((cudaStream_t) t->stream));
    return HX_OK;
}

hx_status hxi_fdev_forward(hx_transport *t, const hxi_field *f, int n)
{
    return fdev_run(t, f, n, 0);
}

hx_status hxi_fdev_reverse(hx_transport *t, const hxi_field *f, int n)
{
    return fdev_run(t, f, n, 1);
}
