/*
 * mpi.c - the `mpi` transport: CPU-orchestrated, one pulse at a time.
 *
 * Per pulse: pack kernel, stream synchronise, MPI, a bounded wait, unpack.
 * How bytes move is a "path" (mode): device pointers when the MPI library
 * reports CUDA support at run time; on one node without it, GPU-direct
 * peer copies into CUDA IPC mappings of the receiver's arrays, with small
 * MPI messages saying "ready" and "done" (what a CUDA-aware MPI does inside
 * a node; mpi_ipc.c); else pinned host buffers. opts.mpi_mode or
 * HALOX_MPI_MODE forces a mode, so that each can be measured.
 */
#define _POSIX_C_SOURCE 200809L
#include "transport/gpu/fields_dev.h"
#include "transport/mpi/mpi_impl.h"
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

static const mpi_path path_cuda_aware = {"CUDA-aware MPI (device pointers)", HX_MPI_CUDA_AWARE, 0,
                                         0};
static const mpi_path path_staged = {"staged through pinned host buffers", HX_MPI_STAGED, 1, 0};
static const mpi_path path_ipc = {"GPU-direct peer copies through CUDA IPC (same node), MPI "
                                  "for the ready and done messages",
                                  HX_MPI_IPC, 0, 1};

static int cuda_support(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) || defined(OMPI_HAVE_MPI_EXT_CUDA)
    return MPIX_Query_cuda_support() ? 1 : 0;
#else
    return -1; /* this MPI cannot tell */
#endif
}

const char *hxi_mpi_mode_name(int mode)
{
    switch (mode) {
    case HX_MPI_AUTO:
        return "auto";
    case HX_MPI_CUDA_AWARE:
        return "cuda-aware";
    case HX_MPI_IPC:
        return "ipc";
    case HX_MPI_STAGED:
        return "staged";
    default:
        return "?";
    }
}

/* The mode asked for: opts.mpi_mode when set, else HALOX_MPI_MODE, else auto. */
static hx_status requested_mode(const hx_transport *t, hx_mpi_mode *mode, const char **from)
{
    /* By the knob's index (HXK_MPI_MODES). */
    static const hx_mpi_mode by_knob[] = {HX_MPI_AUTO, HX_MPI_CUDA_AWARE, HX_MPI_IPC,
                                          HX_MPI_STAGED};
    hx_mpi_mode o = t->opts.mpi_mode;
    if (o != HX_MPI_AUTO && o != HX_MPI_CUDA_AWARE && o != HX_MPI_IPC && o != HX_MPI_STAGED)
        return hxi_error(HX_ERR_INVALID,
                         "transport mpi: opts.mpi_mode %d is not a mode; use HX_MPI_AUTO, "
                         "HX_MPI_CUDA_AWARE, HX_MPI_IPC or HX_MPI_STAGED",
                         (int) o);
    *mode = o;
    *from = "asked for in opts.mpi_mode";
    if (o != HX_MPI_AUTO)
        return HX_OK;
    *mode = by_knob[hxi_knobs()->mpi_mode];
    *from = *mode == HX_MPI_AUTO ? "auto" : "asked for by HALOX_MPI_MODE";
    return HX_OK;
}

/* Chooses the path; collective (the IPC probe), and the same on every rank. */
static hx_status choose_path(hx_transport *t, mpi_impl *m, hx_mpi_mode mode, const char *from,
                             char *why, size_t whylen)
{
    int cs = cuda_support();
    const char *cs_text = cs == 1   ? "MPI reports CUDA support"
                          : cs == 0 ? "MPI reports no CUDA support"
                                    : "MPI cannot report CUDA support";
    char probe_why[200] = "";
    int ipc_ok = 0;
    switch (mode) {
    case HX_MPI_CUDA_AWARE:
        if (cs == 0)
            return hxi_error(HX_ERR_UNSUPPORTED,
                             "transport mpi: the cuda-aware mode was %s, but this MPI library "
                             "reports no CUDA support (MPIX_Query_cuda_support() = 0): handing "
                             "it device pointers would crash; use the ipc (same node) or staged "
                             "mode, auto, or an MPI built with CUDA",
                             from);
        m->path = &path_cuda_aware;
        snprintf(why, whylen, "%s; %s", from, cs_text);
        return HX_OK;
    case HX_MPI_STAGED:
        m->path = &path_staged;
        snprintf(why, whylen, "%s", from);
        return HX_OK;
    case HX_MPI_IPC:
        HXI_CHECK(hxi_mpi_ipc_probe(t, m, &ipc_ok, probe_why, sizeof probe_why));
        if (!ipc_ok)
            return hxi_error(HX_ERR_UNSUPPORTED,
                             "transport mpi: the ipc mode was %s, but CUDA IPC does not work "
                             "here (%s); use the staged mode or auto",
                             from, probe_why);
        m->path = &path_ipc;
        snprintf(why, whylen, "%s; %s", from, cs_text);
        return HX_OK;
    default:
        break;
    }
    if (cs == 1) {
        m->path = &path_cuda_aware;
        snprintf(why, whylen, "%s", cs_text);
        return HX_OK;
    }
    HXI_CHECK(hxi_mpi_ipc_probe(t, m, &ipc_ok, probe_why, sizeof probe_why));
    if (ipc_ok && m->ipc.all_on_node) {
        m->path = &path_ipc;
        snprintf(why, whylen, "%s, all ranks on one node", cs_text);
    } else {
        m->path = &path_staged;
        snprintf(why, whylen, "%s, %s", cs_text,
                 !m->ipc.all_on_node ? "ranks on several nodes" : probe_why);
    }
    return HX_OK;
}

static void mpi_free_buffers(hx_transport *t, mpi_impl *m)
{
    if (t->x)
        cudaFree(t->x);
    if (t->f)
        cudaFree(t->f);
    t->x = t->f = NULL;
    if (m->d_send)
        cudaFree(m->d_send);
    m->d_send = NULL;
    if (m->h_send)
        cudaFreeHost(m->h_send);
    if (m->h_recv)
        cudaFreeHost(m->h_recv);
    m->h_send = m->h_recv = NULL;
}

/* The host side, last: the communicator, the node map's arrays and the
 * state itself. */
static void mpi_free_impl(hx_transport *t, mpi_impl *m)
{
    if (m->comm != MPI_COMM_NULL)
        MPI_Comm_free(&m->comm);
    free(m->ipc.node);
    free(m->ipc.maps);
    free(m);
    t->impl = NULL;
}

static hx_status mpi_create(hx_transport *t)
{
    MPI_Comm *mc = (MPI_Comm *) hxi_comm_mpi(t->comm);
    if (!mc)
        return hxi_error(HX_ERR_MPI, "transport mpi needs an MPI communicator");
    mpi_impl *m = NULL;
    HXI_CHECK(hxi_alloc((void **) &m, sizeof *m, "the mpi transport"));
    memset(m, 0, sizeof *m);
    m->comm = MPI_COMM_NULL;
    hx_status st = hxi_gpu_open(&m->g, t, "mpi");
    if (st != HX_OK) {
        free(m);
        return st;
    }
    t->impl = m;
    if (MPI_Comm_dup(*mc, &m->comm) != MPI_SUCCESS) {
        st = hxi_error(HX_ERR_MPI, "transport mpi: MPI_Comm_dup failed");
        goto fail;
    }

    /* Every rank must run the same mode: agree on what was asked for first,
     * so that a bad HALOX_MPI_MODE on one rank fails create everywhere. */
    hx_mpi_mode mode = HX_MPI_AUTO;
    const char *from = "auto";
    HXI_CHECK_GOTO(hxi_agree(t->comm, requested_mode(t, &mode, &from)), st, fail);
    int lohi[2] = {-(int) mode, (int) mode};
    HXI_CHECK_GOTO(hxi_allreduce_int(t->comm, lohi, 2, 1), st, fail);
    if (-lohi[0] != lohi[1]) {
        st = hxi_error(HX_ERR_INVALID,
                       "transport mpi: the ranks asked for different modes (%s on rank %d); "
                       "set HALOX_MPI_MODE (or opts.mpi_mode) alike on every rank",
                       hxi_mpi_mode_name(mode), m->g.rank);
        goto fail;
    }
    char why[256];
    HXI_CHECK_GOTO(choose_path(t, m, mode, from, why, sizeof why), st, fail);

    snprintf(t->describe, sizeof t->describe,
             "mpi: %s mode, %s (%s); %s per pulse; GPU %d, %d rank(s) on it%s",
             hxi_mpi_mode_name(m->path->mode), m->path->name, why,
             m->path->ipc ? "pack, sync, ready, peer copy, sync, done, unpack"
                          : "pack, sync, MPI, unpack",
             m->g.device, m->g.ranks_on_device, m->g.mps ? ", MPS" : "");
    static int said[4];
    if (m->g.rank == 0 && !said[m->path->mode]) {
        said[m->path->mode] = 1;
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
    mpi_free_buffers(t, m);
    mpi_free_impl(t, m);
    return st;
}

static void mpi_destroy(hx_transport *t)
{
    mpi_impl *m = t->impl;
    if (!m)
        return;
    if (m->g.stream)
        (void) cudaStreamSynchronize(m->g.stream);
    int may_free = 1;
    if (m->path && m->path->ipc)
        may_free = hxi_mpi_ipc_close(m);
    hxi_gpu_close(&m->g);
    if (may_free) {
        mpi_free_buffers(t, m);
    } else {
        /* A peer may still map them: leaking is safe, freeing is not. */
        hxi_warn("transport mpi: peers did not meet at destroy within %.1f s; leaving %d atoms "
                 "of device buffers allocated, since a peer may still map them",
                 m->g.timeout_s, t->capacity);
        if (m->h_send)
            cudaFreeHost(m->h_send);
        if (m->h_recv)
            cudaFreeHost(m->h_recv);
        t->x = t->f = NULL;
    }
    mpi_free_impl(t, m);
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

/* Grows the arrays and the send buffer for the plan in t->plan (uploaded). */
static hx_status grow_buffers(hx_transport *t, mpi_impl *m, int grow, int cap)
{
    if (grow) {
        size_t keep = (size_t) (t->capacity < cap ? t->capacity : cap);
        if (!t->x)
            keep = 0;
        HXI_CHECK(hxi_gpu_regrow(&t->x, (size_t) cap, keep, "coordinates"));
        HXI_CHECK(hxi_gpu_regrow(&t->f, (size_t) cap, keep, "forces"));
        t->capacity = cap;
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
    return HX_OK;
}

static hx_status mpi_set_plan(hx_transport *t)
{
    mpi_impl *m = t->impl;
    int grow = 0, cap = 0;
    hx_status st = hxi_gpu_check_usable(&m->g);
    if (st == HX_OK) {
        cudaError_t e = cudaStreamSynchronize(m->g.stream);
        if (e != cudaSuccess)
            st = hxi_cuda_error(e, "cudaStreamSynchronize", __FILE__, __LINE__);
    }
    if (st == HX_OK)
        st = hxi_transport_fit(t, &grow, &cap);
    if (st == HX_OK)
        st = hxi_gpu_upload_plan(&m->g, t->plan);
    if (m->path->ipc) {
        /* Peers map our arrays: every rank must agree to go on, and nobody
         * may free a buffer a peer still maps. So when any rank's buffers
         * move, all unmap first and meet before the frees. */
        HXI_CHECK(hxi_agree(t->comm, st));
        int moving = grow || !m->d_send || m->d_send_cap < (size_t) m->g.total_send * 3;
        HXI_CHECK(hxi_allreduce_int(t->comm, &moving, 1, 1));
        if (moving) {
            hxi_mpi_ipc_unmap_all(m);
            HXI_CHECK(hxi_barrier(t->comm));
        }
        HXI_CHECK(hxi_agree(t->comm, grow_buffers(t, m, grow, cap)));
    } else {
        HXI_CHECK(st);
        HXI_CHECK(grow_buffers(t, m, grow, cap));
    }
    int pos = 0;
    for (int p = 0; p < m->g.npulses; p++) {
        m->recv_pos[p] = pos;
        pos += m->g.pulse[p].nrecv;
    }
    if (m->path->ipc)
        HXI_CHECK(hxi_mpi_ipc_exchange(t, m));
    hxi_mpi_times_reset(t);
    return HX_OK;
}

hx_status hxi_mpi_wait(mpi_impl *m, MPI_Request *r, int n, int nrecv, int p, int kind, int peer,
                       const char *why)
{
    double t0 = hxi_now();
    int done = 0;
    for (;;) {
        if (MPI_Testall(n, r, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return hxi_gpu_fail(&m->g, HX_ERR_MPI, "MPI_Testall failed in pulse %d", p);
        if (done)
            return HX_OK;
        if (hxi_now() - t0 > m->g.timeout_s)
            break;
    }
    int recv_done = 1;
    for (int i = 0; i < n; i++) {
        if (r[i] == MPI_REQUEST_NULL)
            continue;
        if (i < nrecv) {
            recv_done = 0;
            MPI_Cancel(&r[i]);
            MPI_Wait(&r[i], MPI_STATUS_IGNORE);
        } else {
            MPI_Request_free(&r[i]);
        }
    }
    const hxi_gpu_pulse *q = &m->g.pulse[p];
    return hxi_gpu_timeout_error(&m->g, m->g.rank, p, q->dim, kind, m->g.seq, peer, hxi_now() - t0,
                                 recv_done ? "the peer did not receive what this rank sent" : why);
}

/* Waits for one pulse's receive (r[0]) and send (r[1]), bounded. */
static hx_status bounded_wait(mpi_impl *m, MPI_Request r[2], int p, int kind)
{
    const hxi_gpu_pulse *q = &m->g.pulse[p];
    return hxi_mpi_wait(m, r, 2, 1, p, kind, kind == 0 ? q->recv_rank : q->send_rank,
                        "the peer did not send");
}

/* A pulse's host times: t0 its start, t1 its pack and copies queued, t2
 * the stream drained, t3 the messages done, t4 the unpack queued. */
static void add_times(hxi_mpi_pulse_times *tm, double t0, double t1, double t2, double t3,
                      double t4)
{
    tm->pack += t1 - t0;
    tm->sync += t2 - t1;
    tm->mpi += t3 - t2;
    tm->unpack += t4 - t3;
    tm->count++;
}

static hx_status coords_pulse(hx_transport *t, mpi_impl *m, int p, int withhold)
{
    const hxi_gpu_pulse *q = &m->g.pulse[p];
    hxi_mpi_pulse_times *tm = &m->tf[p];
    float *x = t->x;
    int staged = m->path->host_staged;
    size_t so = (size_t) q->map_offset * 3, ro = (size_t) m->recv_pos[p] * 3;
    double t0 = hxi_now();
    HXI_CUDA(hxi_gpu_pack(m->g.stream, m->d_send + so, x, m->g.maps + q->map_offset, q->nsend,
                          q->shift, 0));
    if (staged && q->nsend > 0)
        HXI_CUDA(cudaMemcpyAsync(m->h_send + so, m->d_send + so, (size_t) q->nsend * 12,
                                 cudaMemcpyDeviceToHost, m->g.stream));
    double t1 = hxi_now();
    HXI_CUDA(cudaStreamSynchronize(m->g.stream));
    double t2 = hxi_now();
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
    double t3 = hxi_now();
    if (staged && q->nrecv > 0)
        HXI_CUDA(cudaMemcpyAsync(x + (size_t) q->recv_offset * 3, m->h_recv + ro,
                                 (size_t) q->nrecv * 12, cudaMemcpyHostToDevice, m->g.stream));
    double t4 = hxi_now();
    add_times(tm, t0, t1, t2, t3, t4);
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
    double t0 = hxi_now();
    if (staged && q->nrecv > 0)
        HXI_CUDA(cudaMemcpyAsync(m->h_recv + ro, fhalo, (size_t) q->nrecv * 12,
                                 cudaMemcpyDeviceToHost, m->g.stream));
    double t1 = hxi_now();
    /* Also orders the later pulses' unpacks before these halo forces go. */
    HXI_CUDA(cudaStreamSynchronize(m->g.stream));
    double t2 = hxi_now();
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
    double t3 = hxi_now();
    if (q->nsend > 0) {
        if (staged)
            HXI_CUDA(cudaMemcpyAsync(m->d_send + so, m->h_send + so, (size_t) q->nsend * 12,
                                     cudaMemcpyHostToDevice, m->g.stream));
        HXI_CUDA(hxi_gpu_unpack_add(m->g.stream, f, m->d_send + so, m->g.maps + q->map_offset,
                                    q->nsend, 0));
    }
    double t4 = hxi_now();
    add_times(tm, t0, t1, t2, t3, t4);
    return HX_OK;
}

static hx_status mpi_forward(hx_transport *t)
{
    mpi_impl *m = t->impl;
    HXI_CHECK(hxi_gpu_begin_forward(&m->g));
    int withhold = hxi_gpu_withhold(&m->g);
    for (int p = 0; p < m->g.npulses; p++)
        HXI_CHECK(m->path->ipc ? hxi_mpi_ipc_coords(t, m, p, withhold)
                               : coords_pulse(t, m, p, withhold));
    return HX_OK;
}

static hx_status mpi_reverse(hx_transport *t)
{
    mpi_impl *m = t->impl;
    HXI_CHECK(hxi_gpu_check_usable(&m->g));
    for (int p = m->g.npulses - 1; p >= 0; p--)
        HXI_CHECK(m->path->ipc ? hxi_mpi_ipc_forces(t, m, p) : forces_pulse(t, m, p));
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

int hxi_mpi_mode_of(const hx_transport *t)
{
    if (!t || t->ops != &hxi_transport_mpi || !t->impl)
        return -1;
    const mpi_impl *m = t->impl;
    return (int) m->path->mode;
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
    .caps = HX_CAP_DEVICE | HX_CAP_FIELDS | HX_CAP_BLOCKS_HOST,
    .create = mpi_create,
    .destroy = mpi_destroy,
    .set_plan = mpi_set_plan,
    .forward = mpi_forward,
    .reverse = mpi_reverse,
    .sync = mpi_sync,
    .fields_forward = hxi_fdev_forward,
    .fields_reverse = hxi_fdev_reverse,
};
