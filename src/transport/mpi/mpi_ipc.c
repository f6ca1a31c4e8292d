/*
 * mpi_ipc.c - the `mpi` transport's GPU-direct mode for peers on one node
 * when the MPI library is not CUDA-aware: what a CUDA-aware MPI does inside
 * a node, with the CPU still orchestrating and blocking per pulse.
 *
 * Once per plan (and again when a buffer moves) each rank hands the peers
 * of every pulse CUDA IPC handles of the buffers they write into: its
 * coordinate array (the sender of a pulse writes at peer_offset) and its
 * send buffer, which receives the pulse's forces (the receiver of
 * coordinates writes them at the sender's map offset). Per pulse, with S
 * the rank we send coordinates to and R the rank we receive them from:
 *
 *   coordinates: pack kernel, stream sync; "ready" to R (our halo slot is
 *   free: our stream has drained, so nothing of ours still reads it); wait
 *   for S's ready; cudaMemcpyAsync of the packed atoms into S's mapped
 *   array, stream sync; "done" to S; wait for R's done. The next pulse's
 *   pack reads what R copied: R's copy completed before R's done was sent.
 *
 *   forces: stream sync (the later pulses' unpacks are complete); ready to
 *   S (our inbox slot is free); wait for R's ready; copy our halo forces
 *   into R's mapped inbox, stream sync; done to R; wait for S's done;
 *   unpack-add from our inbox.
 *
 * The messages carry the step, so a mismatch is an error, not a wrong
 * answer. No data passes through host memory, and no IPC events are
 * needed: a copy is complete when the stream sync before "done" returns.
 */
#define _POSIX_C_SOURCE 200809L
#include "transport/mpi/mpi_impl.h"
#include "transport/gpu/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG_PROBE 0x49F0
#define TAG_CARD  0x4A00 /* + 2p and + 2p + 1 */
#define TAG_XRDY  0x4A80 /* + p */
#define TAG_XDONE 0x4AA0
#define TAG_FRDY  0x4AC0
#define TAG_FDONE 0x4AE0

/* What one rank tells a peer of a pulse at set_plan. */
typedef struct ipc_card {
    cudaIpcMemHandle_t x; /* coordinate array */
    cudaIpcMemHandle_t f; /* send buffer, the force inbox */
    int32_t x_atoms;      /* atoms the coordinate array holds */
    int32_t f_atoms;      /* atoms the inbox holds */
    int32_t map_offset;   /* where this pulse's forces land in the inbox, atoms */
    int32_t nsend, nrecv, recv_offset;
} ipc_card;

/* Whether our GPU reaches every other GPU of the node that this process
 * sees; sets err (when still empty) if not. Collective over node, whatever
 * happened before on this rank; one small broadcast per rank of the node,
 * so that nothing here can fail on one rank alone. */
static void check_peer_access(mpi_impl *m, MPI_Comm node, int lr, int ln, char *err, size_t errlen)
{
    enum { MAXDEV = 64 };
    struct cudaDeviceProp prop;
    unsigned char mine[16], uuid[16], vis[MAXDEV][16];
    int ndev = 0;
    memset(mine, 0, sizeof mine);
    if (cudaGetDeviceProperties(&prop, m->g.device) == cudaSuccess)
        memcpy(mine, prop.uuid.bytes, 16);
    if (cudaGetDeviceCount(&ndev) != cudaSuccess)
        ndev = 0;
    if (ndev > MAXDEV)
        ndev = MAXDEV;
    for (int d = 0; d < ndev; d++) {
        memset(vis[d], 0, 16);
        if (cudaGetDeviceProperties(&prop, d) == cudaSuccess)
            memcpy(vis[d], prop.uuid.bytes, 16);
    }
    (void) cudaGetLastError();
    for (int i = 0; i < ln; i++) {
        memcpy(uuid, mine, 16);
        MPI_Bcast(uuid, 16, MPI_BYTE, i, node);
        if (i == lr || err[0])
            continue;
        for (int d = 0; d < ndev; d++) {
            if (d == m->g.device || memcmp(vis[d], uuid, 16) != 0)
                continue;
            /* A GPU this process cannot see is left to cudaIpcOpenMemHandle. */
            int can = 0;
            if (cudaDeviceCanAccessPeer(&can, m->g.device, d) != cudaSuccess)
                (void) cudaGetLastError();
            if (!can)
                snprintf(err, errlen,
                         "GPUs %d and %d of rank %d's node have no peer access to each other",
                         m->g.device, d, m->g.rank);
        }
    }
}

hx_status hxi_mpi_ipc_probe(hx_transport *t, mpi_impl *m, int *ok, char *why, size_t whylen)
{
    int n = m->g.nranks, me = m->g.rank;
    MPI_Comm node = MPI_COMM_NULL;
    *ok = 0;
    why[0] = 0;
    if (MPI_Comm_split_type(m->comm, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return hxi_error(HX_ERR_MPI,
                         "transport mpi: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
    int lr = 0, ln = 1;
    MPI_Comm_rank(node, &lr);
    MPI_Comm_size(node, &ln);

    /* Node of every rank: the communicator's node map (host names). */
    const hxi_node_map *map = NULL;
    hx_status st = hxi_comm_node_map(t->comm, &map);
    free(m->ipc.node);
    m->ipc.node = st == HX_OK ? malloc(sizeof(int) * (size_t) n) : NULL;
    if (!m->ipc.node) {
        MPI_Comm_free(&node);
        return st != HX_OK ? st
                           : hxi_error(HX_ERR_NOMEM,
                                       "transport mpi: out of host memory for the node table");
    }
    for (int r = 0; r < n; r++)
        m->ipc.node[r] = map->node_of[r];
    m->ipc.all_on_node = map->nnodes == 1;

    /* A ring inside the node: each rank maps its neighbour's buffer. */
    char err[320] = "";
    void *buf = NULL;
    struct {
        int32_t valid;
        cudaIpcMemHandle_t h;
    } out, in;
    memset(&out, 0, sizeof out);
    memset(&in, 0, sizeof in);
    cudaError_t e = cudaMalloc(&buf, 256);
    if (e == cudaSuccess)
        e = cudaIpcGetMemHandle(&out.h, buf);
    if (e != cudaSuccess) {
        (void) cudaGetLastError();
        snprintf(err, sizeof err, "cudaIpcGetMemHandle failed on rank %d: %s", me,
                 cudaGetErrorString(e));
    } else {
        out.valid = 1;
    }
    if (ln > 1) {
        MPI_Sendrecv(&out, sizeof out, MPI_BYTE, (lr + 1) % ln, TAG_PROBE, &in, sizeof in, MPI_BYTE,
                     (lr + ln - 1) % ln, TAG_PROBE, node, MPI_STATUS_IGNORE);
        if (in.valid && !err[0]) {
            void *p = NULL;
            e = cudaIpcOpenMemHandle(&p, in.h, cudaIpcMemLazyEnablePeerAccess);
            if (e != cudaSuccess) {
                (void) cudaGetLastError();
                snprintf(err, sizeof err,
                         "rank %d cannot map a buffer of another process on its node "
                         "(cudaIpcOpenMemHandle: %s)",
                         me, cudaGetErrorString(e));
            } else {
                cudaIpcCloseMemHandle(p);
            }
        }
        check_peer_access(m, node, lr, ln, err, sizeof err);
    }
    /* Every mapping is closed before any rank frees its probe buffer. */
    MPI_Barrier(node);
    if (buf)
        cudaFree(buf);
    MPI_Comm_free(&node);

    hx_status local = err[0] ? hxi_error(HX_ERR_UNSUPPORTED, "%s", err) : HX_OK;
    st = hxi_agree(t->comm, local);
    if (st != HX_OK)
        snprintf(why, whylen, "%s", hx_last_error());
    *ok = st == HX_OK;
    return HX_OK;
}

void hxi_mpi_ipc_unmap_all(mpi_impl *m)
{
    for (int i = 0; i < m->ipc.nmaps; i++)
        if (m->ipc.maps[i].ptr)
            (void) cudaIpcCloseMemHandle(m->ipc.maps[i].ptr);
    (void) cudaGetLastError();
    m->ipc.nmaps = 0;
    memset(m->ipc.peer_x, 0, sizeof m->ipc.peer_x);
    memset(m->ipc.peer_f, 0, sizeof m->ipc.peer_f);
}

/* The mapping of a peer's buffer: opened once, kept while plans use it. A
 * freed and re-allocated buffer gets a new handle (CUDA guarantees that),
 * so a handle seen before still names the same live buffer. */
static hx_status map_peer(mpi_impl *m, int peer, const cudaIpcMemHandle_t *h, void **ptr)
{
    mpi_ipc *c = &m->ipc;
    for (int i = 0; i < c->nmaps; i++)
        if (c->maps[i].peer == peer && memcmp(&c->maps[i].handle, h, sizeof *h) == 0) {
            c->maps[i].used = 1;
            *ptr = c->maps[i].ptr;
            return HX_OK;
        }
    if (c->nmaps == c->maps_cap) {
        int cap = c->maps_cap ? 2 * c->maps_cap : 8;
        HXI_CHECK(hxi_grow((void **) &c->maps, sizeof *c->maps * (size_t) cap,
                           "the table of CUDA IPC mappings"));
        c->maps_cap = cap;
    }
    void *p = NULL;
    cudaError_t e = cudaIpcOpenMemHandle(&p, *h, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
        (void) cudaGetLastError();
        return hxi_error(HX_ERR_CUDA,
                         "transport mpi (ipc): rank %d cannot map a buffer of rank %d "
                         "(cudaIpcOpenMemHandle: %s); the ipc mode needs both on one node with "
                         "peer access between their GPUs: use HALOX_MPI_MODE=staged",
                         m->g.rank, peer, cudaGetErrorString(e));
    }
    mpi_ipc_map *mp = &c->maps[c->nmaps++];
    memcpy(&mp->handle, h, sizeof *h);
    mp->peer = peer;
    mp->ptr = p;
    mp->used = 1;
    *ptr = p;
    return HX_OK;
}

/* Checks one pulse's cards and maps the two peer buffers it writes into. */
static hx_status adopt_cards(hx_transport *t, mpi_impl *m, int p, const ipc_card *from_s,
                             const ipc_card *from_r)
{
    const hxi_gpu_pulse *q = &m->g.pulse[p];
    int me = m->g.rank;
    void *ptr = NULL;
    if (q->nsend > 0) {
        if (m->ipc.node[q->send_rank] != m->ipc.node[me])
            return hxi_error(HX_ERR_UNSUPPORTED,
                             "transport mpi (ipc): pulse %d sends to rank %d on another node; "
                             "the ipc mode needs every pulse's peers on one node: use the "
                             "staged mode or auto",
                             p, q->send_rank);
        if (from_s->nrecv != q->nsend || from_s->recv_offset != q->peer_offset)
            return hxi_error(HX_ERR_STATE,
                             "transport mpi (ipc): rank %d sends %d atoms to offset %d of rank "
                             "%d in pulse %d, which expects %d at %d; every rank must set a plan "
                             "of the same hx_plan_create call",
                             me, q->nsend, q->peer_offset, q->send_rank, p, from_s->nrecv,
                             from_s->recv_offset);
        if ((long) q->peer_offset + q->nsend > (long) from_s->x_atoms)
            return hxi_error(HX_ERR_OVERFLOW,
                             "transport mpi (ipc): pulse %d would write atoms [%d, %d) into rank "
                             "%d's coordinates of %d atoms",
                             p, q->peer_offset, q->peer_offset + q->nsend, q->send_rank,
                             from_s->x_atoms);
        if (q->send_rank == me)
            ptr = t->x;
        else
            HXI_CHECK(map_peer(m, q->send_rank, &from_s->x, &ptr));
        m->ipc.peer_x[p] = (float *) ptr + (size_t) q->peer_offset * 3;
    }
    if (q->nrecv > 0) {
        if (m->ipc.node[q->recv_rank] != m->ipc.node[me])
            return hxi_error(HX_ERR_UNSUPPORTED,
                             "transport mpi (ipc): pulse %d sends forces to rank %d on another "
                             "node; the ipc mode needs every pulse's peers on one node: use the "
                             "staged mode or auto",
                             p, q->recv_rank);
        if (from_r->nsend != q->nrecv)
            return hxi_error(HX_ERR_STATE,
                             "transport mpi (ipc): rank %d receives %d atoms in pulse %d but "
                             "rank %d sends %d; every rank must set a plan of the same "
                             "hx_plan_create call",
                             me, q->nrecv, p, q->recv_rank, from_r->nsend);
        if ((long) from_r->map_offset + q->nrecv > (long) from_r->f_atoms)
            return hxi_error(HX_ERR_OVERFLOW,
                             "transport mpi (ipc): pulse %d would write forces [%d, %d) into "
                             "rank %d's inbox of %d atoms",
                             p, from_r->map_offset, from_r->map_offset + q->nrecv, q->recv_rank,
                             from_r->f_atoms);
        if (q->recv_rank == me)
            ptr = m->d_send;
        else
            HXI_CHECK(map_peer(m, q->recv_rank, &from_r->f, &ptr));
        m->ipc.peer_f[p] = (float *) ptr + (size_t) from_r->map_offset * 3;
    }
    return HX_OK;
}

hx_status hxi_mpi_ipc_exchange(hx_transport *t, mpi_impl *m)
{
    mpi_ipc *c = &m->ipc;
    ipc_card mine;
    hx_status st = HX_OK;
    memset(&mine, 0, sizeof mine);
    cudaError_t e = cudaIpcGetMemHandle(&mine.x, t->x);
    if (e == cudaSuccess)
        e = cudaIpcGetMemHandle(&mine.f, m->d_send);
    if (e != cudaSuccess) {
        (void) cudaGetLastError();
        st = hxi_error(HX_ERR_CUDA,
                       "transport mpi (ipc): cudaIpcGetMemHandle of rank %d's buffers failed: "
                       "%s; use HALOX_MPI_MODE=staged",
                       m->g.rank, cudaGetErrorString(e));
    }
    HXI_CHECK(hxi_agree(t->comm, st));
    mine.x_atoms = t->capacity;
    mine.f_atoms = (int32_t) (m->d_send_cap / 3);
    c->exported = 1;
    for (int i = 0; i < c->nmaps; i++)
        c->maps[i].used = 0;
    memset(c->peer_x, 0, sizeof c->peer_x);
    memset(c->peer_f, 0, sizeof c->peer_f);
    for (int p = 0; p < m->g.npulses; p++) {
        const hxi_gpu_pulse *q = &m->g.pulse[p];
        ipc_card card = mine, from_s, from_r;
        card.map_offset = q->map_offset;
        card.nsend = q->nsend;
        card.nrecv = q->nrecv;
        card.recv_offset = q->recv_offset;
        memset(&from_s, 0, sizeof from_s);
        memset(&from_r, 0, sizeof from_r);
        /* Our card to both peers; S's tells where our coordinates go, R's
         * where our forces go. Every rank runs every pulse's exchange,
         * also after an error, so that nobody is left waiting. */
        int rc = MPI_Sendrecv(&card, sizeof card, MPI_BYTE, q->recv_rank, TAG_CARD + 2 * p, &from_s,
                              sizeof from_s, MPI_BYTE, q->send_rank, TAG_CARD + 2 * p, m->comm,
                              MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Sendrecv(&card, sizeof card, MPI_BYTE, q->send_rank, TAG_CARD + 2 * p + 1,
                              &from_r, sizeof from_r, MPI_BYTE, q->recv_rank, TAG_CARD + 2 * p + 1,
                              m->comm, MPI_STATUS_IGNORE);
        if (st != HX_OK)
            continue;
        if (rc != MPI_SUCCESS)
            st = hxi_error(HX_ERR_MPI,
                           "transport mpi (ipc): MPI_Sendrecv of pulse %d's handles "
                           "failed",
                           p);
        else
            st = adopt_cards(t, m, p, &from_s, &from_r);
    }
    /* Mappings no pulse of this plan writes through are closed. */
    int k = 0;
    for (int i = 0; i < c->nmaps; i++) {
        if (c->maps[i].used)
            c->maps[k++] = c->maps[i];
        else
            (void) cudaIpcCloseMemHandle(c->maps[i].ptr);
    }
    c->nmaps = k;
    (void) cudaGetLastError();
    return hxi_agree(t->comm, st);
}

/* The step a message carried must be ours: else the ranks run different
 * numbers of forward or reverse calls. */
static hx_status check_step(mpi_impl *m, uint64_t got, int p, int peer, const char *what)
{
    if (got == m->g.seq)
        return HX_OK;
    return hxi_gpu_fail(&m->g, HX_ERR_STATE,
                        "transport mpi (ipc): rank %d in step %llu got rank %d's %s of pulse %d "
                        "for step %llu; every rank must call hx_transport_forward and "
                        "hx_transport_reverse equally often",
                        m->g.rank, (unsigned long long) m->g.seq, peer, what, p,
                        (unsigned long long) got);
}

static hx_status post(int send, void *buf, int peer, int tag, MPI_Request *r, mpi_impl *m, int p)
{
    int rc = send ? MPI_Isend(buf, 1, MPI_UINT64_T, peer, tag, m->comm, r)
                  : MPI_Irecv(buf, 1, MPI_UINT64_T, peer, tag, m->comm, r);
    if (rc != MPI_SUCCESS)
        return hxi_gpu_fail(&m->g, HX_ERR_MPI, "transport mpi (ipc): MPI_%s of pulse %d failed",
                            send ? "Isend" : "Irecv", p);
    return HX_OK;
}

/* After a failure: no receive may land in our memory later, and no send
 * request is left behind. r[0], r[1] are receives, r[2], r[3] sends. */
static void abandon(MPI_Request r[4])
{
    for (int i = 0; i < 4; i++) {
        if (r[i] == MPI_REQUEST_NULL)
            continue;
        if (i < 2) {
            MPI_Cancel(&r[i]);
            MPI_Wait(&r[i], MPI_STATUS_IGNORE);
        } else {
            MPI_Request_free(&r[i]);
        }
    }
}

/* The four messages of one pulse and direction, and the copy between them:
 * ready from the peer we write to (r[0]) and done from the peer that writes
 * to us (r[1]) are received; our ready (r[2]) and done (r[3]) are sent.
 * `to` and `from` are those peers, n_to and n_from the atoms each way. */
typedef struct ipc_step {
    int kind; /* 0 coordinates, 1 forces */
    int to, from;
    int n_to, n_from;
    int tag_ready, tag_done;
    float *dst;       /* mapped peer memory */
    const float *src; /* ours */
    int skip_send;    /* test hook: withhold this step's data */
} ipc_step;

static hx_status ipc_pulse(mpi_impl *m, int p, const ipc_step *s, hxi_mpi_pulse_times *tm)
{
    mpi_ipc *c = &m->ipc;
    MPI_Request r[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int out = s->n_to > 0, in = s->n_from > 0;
    static const char *what_ready[2] = {"coordinate ready message", "force ready message"};
    static const char *what_done[2] = {"coordinates", "forces"};
    hx_status st = HX_OK;
    double t2 = hxi_now();
    c->out = m->g.seq;
    if (out)
        HXI_CHECK_GOTO(post(0, &c->in_ready[p], s->to, s->tag_ready + p, &r[0], m, p), st, fail);
    if (in) {
        HXI_CHECK_GOTO(post(0, &c->in_done[p], s->from, s->tag_done + p, &r[1], m, p), st, fail);
        HXI_CHECK_GOTO(post(1, &c->out, s->from, s->tag_ready + p, &r[2], m, p), st, fail);
    }
    HXI_CHECK_GOTO(hxi_mpi_wait(m, &r[0], 1, 1, p, s->kind, s->to,
                                s->kind == 0 ? "the peer did not say that its halo slot is free"
                                             : "the peer did not say that its force inbox is free"),
                   st, fail);
    if (out)
        HXI_CHECK_GOTO(check_step(m, c->in_ready[p], p, s->to, what_ready[s->kind]), st, fail);
    double t3 = hxi_now();
    if (out && !s->skip_send) {
        HXI_CUDA_GOTO(cudaMemcpyAsync(s->dst, s->src, (size_t) s->n_to * 3 * sizeof(float),
                                      cudaMemcpyDeviceToDevice, m->g.stream),
                      st, fail);
        HXI_CUDA_GOTO(cudaStreamSynchronize(m->g.stream), st, fail);
    }
    double t4 = hxi_now();
    if (out && !s->skip_send)
        HXI_CHECK_GOTO(post(1, &c->out, s->to, s->tag_done + p, &r[3], m, p), st, fail);
    HXI_CHECK_GOTO(hxi_mpi_wait(m, &r[1], 3, 1, p, s->kind, s->from, "the peer did not send"), st,
                   fail);
    if (in)
        HXI_CHECK_GOTO(check_step(m, c->in_done[p], p, s->from, what_done[s->kind]), st, fail);
    double t5 = hxi_now();
    tm->mpi += (t3 - t2) + (t5 - t4);
    tm->copy += t4 - t3;
    return HX_OK;
fail:
    if (m->g.failed == HX_OK) {
        /* A CUDA error: the transport cannot go on either. */
        m->g.failed = st;
        snprintf(m->g.fail_msg, sizeof m->g.fail_msg, "%s", hx_last_error());
    }
    abandon(r);
    return st;
}

hx_status hxi_mpi_ipc_coords(hx_transport *t, mpi_impl *m, int p, int withhold)
{
    const hxi_gpu_pulse *q = &m->g.pulse[p];
    hxi_mpi_pulse_times *tm = &m->tf[p];
    size_t so = (size_t) q->map_offset * 3;
    double t0 = hxi_now();
    HXI_CUDA(hxi_gpu_pack(m->g.stream, m->d_send + so, t->x, m->g.maps + q->map_offset, q->nsend,
                          q->shift, 0));
    double t1 = hxi_now();
    /* Also: nothing of ours still reads our halo slot of this pulse. */
    HXI_CUDA(cudaStreamSynchronize(m->g.stream));
    double t2 = hxi_now();
    ipc_step s = {.kind = 0,
                  .to = q->send_rank,
                  .from = q->recv_rank,
                  .n_to = q->nsend,
                  .n_from = q->nrecv,
                  .tag_ready = TAG_XRDY,
                  .tag_done = TAG_XDONE,
                  .dst = m->ipc.peer_x[p],
                  .src = m->d_send + so,
                  .skip_send = withhold};
    HXI_CHECK(ipc_pulse(m, p, &s, tm));
    tm->pack += t1 - t0;
    tm->sync += t2 - t1;
    tm->count++;
    return HX_OK;
}

hx_status hxi_mpi_ipc_forces(hx_transport *t, mpi_impl *m, int p)
{
    const hxi_gpu_pulse *q = &m->g.pulse[p];
    hxi_mpi_pulse_times *tm = &m->tr[p];
    float *f = t->f;
    size_t so = (size_t) q->map_offset * 3;
    double t1 = hxi_now();
    /* The later pulses' unpacks, which complete our halo forces, are done,
     * and nothing of ours still reads our inbox slot. */
    HXI_CUDA(cudaStreamSynchronize(m->g.stream));
    double t2 = hxi_now();
    ipc_step s = {.kind = 1,
                  .to = q->recv_rank,
                  .from = q->send_rank,
                  .n_to = q->nrecv,
                  .n_from = q->nsend,
                  .tag_ready = TAG_FRDY,
                  .tag_done = TAG_FDONE,
                  .dst = m->ipc.peer_f[p],
                  .src = f + (size_t) q->recv_offset * 3,
                  .skip_send = 0};
    HXI_CHECK(ipc_pulse(m, p, &s, tm));
    double t5 = hxi_now();
    HXI_CUDA(hxi_gpu_unpack_add(m->g.stream, f, m->d_send + so, m->g.maps + q->map_offset,
                                q->nsend, 0));
    double t6 = hxi_now();
    tm->sync += t2 - t1;
    tm->unpack += t6 - t5;
    tm->count++;
    return HX_OK;
}

int hxi_mpi_ipc_close(mpi_impl *m)
{
    hxi_mpi_ipc_unmap_all(m);
    if (!m->ipc.exported || m->comm == MPI_COMM_NULL)
        return 1;
    /* Every peer has unmapped our buffers once it reaches this point. */
    MPI_Request r = MPI_REQUEST_NULL;
    if (MPI_Ibarrier(m->comm, &r) != MPI_SUCCESS)
        return 0;
    double t0 = hxi_now(), limit = m->g.timeout_s > 1.0 ? m->g.timeout_s : 1.0;
    int done = 0;
    while (!done) {
        if (MPI_Test(&r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return 0;
        if (!done && hxi_now() - t0 > limit)
            return 0;
    }
    return 1;
}
