/*
 * mpi.c - the `mpi` transport: CPU-orchestrated, one pulse at a time.
 *
 * Per pulse: pack kernel, stream synchronise, MPI_Irecv/MPI_Isend, a bounded
 * wait, unpack. How bytes reach MPI is a "path": device pointers when the
 * MPI library reports CUDA support at run time, pinned host buffers
 * otherwise. A path only says where MPI reads and writes and what to copy
 * around the messages; a later same-node CUDA IPC path (peer copies instead
 * of messages) is a third entry of the same table.
 */
#define _POSIX_C_SOURCE 200809L
#include "transport/mpi/mpi.h"
#include "transport/gpu/gpu.h"
#include "transport/gpu/kernels.h"

#include <mpi.h>
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_X 0x4858 /* + pulse: coordinates */
#define TAG_F 0x4878 /* + pulse: forces */

typedef struct mpi_impl mpi_impl;

/* How data reaches MPI. */
typedef struct mpi_path {
    const char *name;
    int host_staged; /* messages use pinned host buffers */
} mpi_path;

static const mpi_path path_cuda_aware = {"CUDA-aware MPI (device pointers)", 0};
static const mpi_path path_staged = {"staged through pinned host buffers", 1};

struct mpi_impl {
    hxi_gpu g;
    MPI_Comm comm;
    const mpi_path *path;
    int recv_pos[HX_MAX_PULSES]; /* first received atom of pulse p among all received */
    float *d_send;               /* packed coordinates, then received forces: total_send */
    size_t d_send_cap;           /* floats */
    float *h_send, *h_recv;      /* pinned: total_send and total_recv atoms */
    size_t h_send_cap, h_recv_cap;
    hxi_mpi_pulse_times tf[HX_MAX_PULSES], tr[HX_MAX_PULSES];
};

static int cuda_support(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) || defined(OMPI_HAVE_MPI_EXT_CUDA)
    return MPIX_Query_cuda_support() ? 1 : 0;
#else
    return -1; /* this MPI cannot tell */
#endif
}

static hx_status mpi_create(hx_transport *t)
{
    if (t->opts.dtype != HX_FLOAT)
        return hxi_error(HX_ERR_UNSUPPORTED,
                         "transport mpi moves float data only; use dtype HX_FLOAT (or the cpu "
                         "transport for double)");
    MPI_Comm *mc = (MPI_Comm *) hxi_comm_mpi(t->comm);
    if (!mc)
        return hxi_error(HX_ERR_MPI, "transport mpi needs an MPI communicator");
    mpi_impl *m = NULL;
    HXI_CHECK(hxi_alloc((void **) &m, sizeof *m, "the mpi transport"));
    memset(m, 0, sizeof *m);
    m->comm = *mc;
    hx_status st = hxi_gpu_open(&m->g, t, "mpi");
    if (st != HX_OK) {
        free(m);
        return st;
    }
    t->impl = m;

    int cs = cuda_support();
    const char *why;
    switch (t->opts.mpi_mode) {
    case HX_MPI_CUDA_AWARE:
        if (cs == 0) {
            st = hxi_error(HX_ERR_UNSUPPORTED,
                           "transport mpi: HX_MPI_CUDA_AWARE was asked for, but this MPI library "
                           "reports no CUDA support (MPIX_Query_cuda_support() = 0); use "
                           "HX_MPI_STAGED or HX_MPI_AUTO, or an MPI built with CUDA");
            goto fail;
        }
        m->path = &path_cuda_aware;
        why = cs == 1 ? "asked for; MPI reports CUDA support" : "asked for; MPI cannot say";
        break;
    case HX_MPI_STAGED:
        m->path = &path_staged;
        why = "asked for";
        break;
    default:
        m->path = cs == 1 ? &path_cuda_aware : &path_staged;
        why = cs == 1 ? "MPI reports CUDA support"
                      : (cs == 0 ? "MPI library reports no CUDA support"
                                 : "MPI library cannot report CUDA support");
        break;
    }
    snprintf(t->describe, sizeof t->describe,
             "mpi: %s (%s); pack, sync, MPI, unpack per pulse; GPU %d, %d rank(s) on it",
             m->path->name, why, m->g.device, m->g.ranks_on_device);
    static int said;
    if (m->g.rank == 0 && !said) {
        said = 1;
        fprintf(stderr, "halox[0]: transport %s\n", t->describe);
    }
    if (t->opts.capacity > 0) {
        t->capacity = t->opts.capacity;
        HXI_CHECK_GOTO(
            hxi_gpu_malloc(&t->x, (size_t) t->capacity * 3 * sizeof(float), "coordinates"), st,
            fail);
        HXI_CHECK_GOTO(hxi_gpu_malloc(&t->f, (size_t) t->capacity * 3 * sizeof(float), "forces"),
                       st, fail);
    }
    return HX_OK;
fail:
    hxi_gpu_close(&m->g);
    if (t->x)
        cudaFree(t->x);
    if (t->f)
        cudaFree(t->f);
    t->x = t->f = NULL;
    free(m);
    t->impl = NULL;
    return st;
}

static void mpi_destroy(hx_transport *t)
{
    mpi_impl *m = t->impl;
    if (!m)
        return;
    hxi_gpu_close(&m->g);
    if (t->x)
        cudaFree(t->x);
    if (t->f)
        cudaFree(t->f);
    t->x = t->f = NULL;
    if (m->d_send)
        cudaFree(m->d_send);
    if (m->h_send)
        cudaFreeHost(m->h_send);
    if (m->h_recv)
        cudaFreeHost(m->h_recv);
    free(m);
    t->impl = NULL;
}

static hx_status grow_pinned(float **p, size_t *cap, size_t floats, const char *what)
{
    if (*p && *cap >= floats)
        return HX_OK;
    if (*p)
        cudaFreeHost(*p);
    *p = NULL;
    *cap = 0;
    size_t want = floats + floats / 4 + 3072;
    HXI_CHECK(hxi_gpu_host_malloc((void **) p, want * sizeof(float), what));
    *cap = want;
    return HX_OK;
}

static hx_status mpi_set_plan(hx_transport *t)
{
    mpi_impl *m = t->impl;
    HXI_CHECK(hxi_gpu_check_usable(&m->g));
    HXI_CUDA(cudaStreamSynchronize(m->g.stream));
    int grow = 0, cap = 0;
    HXI_CHECK(hxi_transport_fit(t, &grow, &cap));
    if (grow) {
        size_t keep = (size_t) (t->capacity < cap ? t->capacity : cap);
        if (!t->x)
            keep = 0;
        HXI_CHECK(hxi_gpu_regrow(&t->x, (size_t) cap, keep, "coordinates"));
        HXI_CHECK(hxi_gpu_regrow(&t->f, (size_t) cap, keep, "forces"));
        t->capacity = cap;
    }
    HXI_CHECK(hxi_gpu_upload_plan(&m->g, t->plan));
    int pos = 0;
    for (int p = 0; p < m->g.npulses; p++) {
        m->recv_pos[p] = pos;
        pos += m->g.pulse[p].nrecv;
    }
    size_t need = (size_t) m->g.total_send * 3;
    if (!m->d_send || m->d_send_cap < need) {
        if (m->d_send)
            cudaFree(m->d_send);
        m->d_send = NULL;
        m->d_send_cap = need + need / 4 + 3072;
        HXI_CHECK(hxi_gpu_malloc((void **) &m->d_send, m->d_send_cap * sizeof(float),
                                 "the mpi send buffer"));
    }
    if (m->path->host_staged) {
        HXI_CHECK(grow_pinned(&m->h_send, &m->h_send_cap, need, "the mpi host send buffer"));
        HXI_CHECK(grow_pinned(&m->h_recv, &m->h_recv_cap, (size_t) m->g.total_recv * 3,
                              "the mpi host receive buffer"));
    }
    hxi_mpi_times_reset(t);
    return HX_OK;
}

/* Waits for one pulse's receive (r[0]) and send (r[1]), bounded. */
static hx_status bounded_wait(mpi_impl *m, MPI_Request r[2], int p, int kind)
{
    double t0 = hxi_gpu_now();
    int done = 0;
    for (;;) {
        if (MPI_Testall(2, r, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return hxi_gpu_fail(&m->g, HX_ERR_MPI, "MPI_Testall failed in pulse %d", p);
        if (done)
            return HX_OK;
        if (hxi_gpu_now() - t0 > m->g.timeout_s)
            break;
    }
    int recv_done = r[0] == MPI_REQUEST_NULL;
    if (!recv_done) {
        MPI_Cancel(&r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    }
    if (r[1] != MPI_REQUEST_NULL)
        MPI_Request_free(&r[1]);
    const hxi_gpu_pulse *q = &m->g.pulse[p];
    return hxi_gpu_timeout_error(&m->g, m->g.rank, p, q->dim, kind, m->g.seq,
                                 kind == 0 ? q->recv_rank : q->send_rank, hxi_gpu_now() - t0,
                                 recv_done ? "the peer did not receive what this rank sent"
                                           : "the peer did not send");
}

static hx_status coords_pulse(hx_transport *t, mpi_impl *m, int p, int withhold)
{
    const hxi_gpu_pulse *q = &m->g.pulse[p];
    hxi_mpi_pulse_times *tm = &m->tf[p];
    float *x = t->x;
    int staged = m->path->host_staged;
    size_t so = (size_t) q->map_offset * 3, ro = (size_t) m->recv_pos[p] * 3;
    double t0 = hxi_gpu_now();
    HXI_CUDA(hxi_gpu_pack(m->g.stream, m->d_send + so, x, m->g.d_maps + q->map_offset, q->nsend,
                          q->dim, q->shift, 0));
    if (staged && q->nsend > 0)
        HXI_CUDA(cudaMemcpyAsync(m->h_send + so, m->d_send + so, (size_t) q->nsend * 12,
                                 cudaMemcpyDeviceToHost, m->g.stream));
    double t1 = hxi_gpu_now();
    HXI_CUDA(cudaStreamSynchronize(m->g.stream));
    double t2 = hxi_gpu_now();
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (q->nrecv > 0) {
        float *dst = staged ? m->h_recv + ro : x + (size_t) q->recv_offset * 3;
        if (MPI_Irecv(dst, q->nrecv * 3, MPI_FLOAT, q->recv_rank, TAG_X + p, m->comm, &r[0]) !=
            MPI_SUCCESS)
            return hxi_gpu_fail(&m->g, HX_ERR_MPI, "MPI_Irecv of pulse %d failed", p);
    }
    if (q->nsend > 0 && !withhold) {
        float *src = staged ? m->h_send + so : m->d_send + so;
        if (MPI_Isend(src, q->nsend * 3, MPI_FLOAT, q->send_rank, TAG_X + p, m->comm, &r[1]) !=
            MPI_SUCCESS)
            return hxi_gpu_fail(&m->g, HX_ERR_MPI, "MPI_Isend of pulse %d failed", p);
    }
    HXI_CHECK(bounded_wait(m, r, p, 0));
    double t3 = hxi_gpu_now();
    if (staged && q->nrecv > 0)
        HXI_CUDA(cudaMemcpyAsync(x + (size_t) q->recv_offset * 3, m->h_recv + ro,
                                 (size_t) q->nrecv * 12, cudaMemcpyHostToDevice, m->g.stream));
    double t4 = hxi_gpu_now();
    tm->pack += t1 - t0;
    tm->sync += t2 - t1;
    tm->mpi += t3 - t2;
    tm->unpack += t4 - t3;
    tm->count++;
    return HX_OK;
}

static hx_status forces_pulse(hx_transport *t, mpi_impl *m, int p)
{
    const hxi_gpu_pulse *q = &m->g.pulse[p];
    hxi_mpi_pulse_times *tm = &m->tr[p];
    float *f = t->f;
    int staged = m->path->host_staged;
    size_t so = (size_t) q->map_offset * 3, ro = (size_t) m->recv_pos[p] * 3;
    float *fhalo = f + (size_t) q->recv_offset * 3;
    double t0 = hxi_gpu_now();
    if (staged && q->nrecv > 0)
        HXI_CUDA(cudaMemcpyAsync(m->h_recv + ro, fhalo, (size_t) q->nrecv * 12,
                                 cudaMemcpyDeviceToHost, m->g.stream));
    double t1 = hxi_gpu_now();
    /* Also orders the later pulses' unpacks before these halo forces go. */
    HXI_CUDA(cudaStreamSynchronize(m->g.stream));
    double t2 = hxi_gpu_now();
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (q->nsend > 0) {
        float *dst = staged ? m->h_send + so : m->d_send + so;
        if (MPI_Irecv(dst, q->nsend * 3, MPI_FLOAT, q->send_rank, TAG_F + p, m->comm, &r[0]) !=
            MPI_SUCCESS)
            return hxi_gpu_fail(&m->g, HX_ERR_MPI, "MPI_Irecv of force pulse %d failed", p);
    }
    if (q->nrecv > 0) {
        float *src = staged ? m->h_recv + ro : fhalo;
        if (MPI_Isend(src, q->nrecv * 3, MPI_FLOAT, q->recv_rank, TAG_F + p, m->comm, &r[1]) !=
            MPI_SUCCESS)
            return hxi_gpu_fail(&m->g, HX_ERR_MPI, "MPI_Isend of force pulse %d failed", p);
    }
    HXI_CHECK(bounded_wait(m, r, p, 1));
    double t3 = hxi_gpu_now();
    if (q->nsend > 0) {
        if (staged)
            HXI_CUDA(cudaMemcpyAsync(m->d_send + so, m->h_send + so, (size_t) q->nsend * 12,
                                     cudaMemcpyHostToDevice, m->g.stream));
        HXI_CUDA(hxi_gpu_unpack_add(m->g.stream, f, m->d_send + so, m->g.d_maps + q->map_offset,
                                    q->nsend, 0));
    }
    double t4 = hxi_gpu_now();
    tm->pack += t1 - t0;
    tm->sync += t2 - t1;
    tm->mpi += t3 - t2;
    tm->unpack += t4 - t3;
    tm->count++;
    return HX_OK;
}

static hx_status mpi_forward(hx_transport *t)
{
    mpi_impl *m = t->impl;
    HXI_CHECK(hxi_gpu_begin_forward(&m->g));
    int withhold = hxi_gpu_withhold(&m->g);
    for (int p = 0; p < m->g.npulses; p++)
        HXI_CHECK(coords_pulse(t, m, p, withhold));
    return HX_OK;
}

static hx_status mpi_reverse(hx_transport *t)
{
    mpi_impl *m = t->impl;
    HXI_CHECK(hxi_gpu_check_usable(&m->g));
    for (int p = m->g.npulses - 1; p >= 0; p--)
        HXI_CHECK(forces_pulse(t, m, p));
    return HX_OK;
}

static hx_status mpi_sync(hx_transport *t)
{
    mpi_impl *m = t->impl;
    return hxi_gpu_sync(&m->g);
}

int hxi_mpi_times(const hx_transport *t, hxi_mpi_pulse_times *fwd, hxi_mpi_pulse_times *rev)
{
    if (!t || t->ops != &hxi_transport_mpi || !t->impl)
        return -1;
    const mpi_impl *m = t->impl;
    for (int p = 0; p < m->g.npulses; p++) {
        if (fwd)
            fwd[p] = m->tf[p];
        if (rev)
            rev[p] = m->tr[p];
    }
    return m->g.npulses;
}

void hxi_mpi_times_reset(hx_transport *t)
{
    if (!t || t->ops != &hxi_transport_mpi || !t->impl)
        return;
    mpi_impl *m = t->impl;
    memset(m->tf, 0, sizeof m->tf);
    memset(m->tr, 0, sizeof m->tr);
}

const hxi_transport_ops hxi_transport_mpi = {
    .name = "mpi",
    .on_device = 1,
    .create = mpi_create,
    .destroy = mpi_destroy,
    .set_plan = mpi_set_plan,
    .forward = mpi_forward,
    .reverse = mpi_reverse,
    .sync = mpi_sync,
};
