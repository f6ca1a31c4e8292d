/*
 * comm.c - the communicator: MPI when built with it, else one process whose
 * messages to itself are copies, so every layer runs the same code path.
 * Also its node map: which ranks share a host, worked out once per
 * communicator, so that the GPU engine and every GPU transport count local
 * ranks (and so pick devices) the same way.
 */
#define _POSIX_C_SOURCE 200809L /* gethostname, nanosleep */

#include "core/hxi.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef HALOX_HAVE_MPI
#include <mpi.h>
#endif

struct hx_comm {
    int rank;
    int size;
#ifdef HALOX_HAVE_MPI
    MPI_Comm mpi;
#endif
    hxi_node_map *node; /* worked out at its first use (hxi_comm_node_map) */
    int broken;         /* a wait for a peer ran out: no collective is safe now */
};

static int hxi_started_mpi = 0;

/* Messages and collectives of this process with other ranks (MPI calls
 * between two or more ranks) and the wall time spent in them: HALOX_LOG's
 * count per rebuild (hxi_comm_tally). */
static long long tally_calls;
static double tally_s;
#define TALLY(call)                                                                                \
    do {                                                                                           \
        const double t_ = hxi_now();                                                               \
        call;                                                                                      \
        tally_calls++;                                                                             \
        tally_s += hxi_now() - t_;                                                                 \
    } while (0)

void hxi_comm_tally(long long *calls, double *seconds)
{
    *calls = tally_calls;
    *seconds = tally_s;
}

int hx_have_mpi(void)
{
#ifdef HALOX_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

#ifdef HALOX_HAVE_MPI
hx_status hxi_mpi_error(int rc, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return hxi_error(HX_ERR_MPI, "%s failed: %s", what, text);
}

/* Seconds a wait for a peer spins before it yields the core between
 * tests: longer than a message on its way takes, so that yielding never
 * delays one that is (a yielded core may go to another process). */
#define HXI_WAIT_SPIN_S 2e-3

/* A wait that ran out: what it waited for (a phrase that peer's rank
 * completes, or all others where peer < 0), and the bound. */
static hx_status comm_timed_out(const hx_comm *c, double waited, const char *what, int peer,
                                double limit)
{
    char who[64];
    if (peer >= 0)
        snprintf(who, sizeof who, "rank %d", peer);
    else
        snprintf(who, sizeof who, "with the other %d ranks", c->size - 1);
    return hxi_error(HX_ERR_TIMEOUT,
                     "rank %d waited %.1f s for %s %s: the peer is stopped, gone or stuck; if "
                     "it is only slow, raise the timeout (HALOX_TIMEOUT_S, or a transport's "
                     "opts.timeout_s; now %g s)",
                     c->rank, waited, what, who, limit);
}

/* Waits for n requests, at most limit seconds (HALOX_TIMEOUT_S where
 * limit <= 0): tests once (a peer that is there costs nothing more), then
 * polls, giving the core away after a while. On a timeout the first
 * nrecv requests (receives) are cancelled and the rest freed where there
 * are receives (a point-to-point wait); a collective's requests cannot
 * be, and the communicator is not to be used again. */
static hx_status comm_wait(hx_comm *c, int n, MPI_Request *rq, int nrecv, const char *what,
                           int peer, double limit)
{
    int done = 0;
    HXI_MPI(MPI_Testall(n, rq, &done, MPI_STATUSES_IGNORE));
    if (done)
        return HX_OK;
    const double t0 = hxi_now();
    if (!(limit > 0))
        limit = hxi_knobs()->timeout_s;
    /* Spins as MPI's own wait does; a wait past HXI_WAIT_SPIN_S (a peer
     * late, not a message on its way) yields the core at each test. */
    for (unsigned spins = 1, yield = 0; !done; spins++) {
        if (spins % 16 == 0) {
            const double waited = hxi_now() - t0;
            if (waited > limit)
                break;
            yield = waited > HXI_WAIT_SPIN_S;
        }
        if (yield)
            sched_yield();
        HXI_MPI(MPI_Testall(n, rq, &done, MPI_STATUSES_IGNORE));
    }
    if (done)
        return HX_OK;
    for (int k = 0; nrecv > 0 && k < n; k++) {
        if (rq[k] == MPI_REQUEST_NULL)
            continue;
        if (k < nrecv) {
            MPI_Cancel(&rq[k]);
            MPI_Wait(&rq[k], MPI_STATUS_IGNORE);
        } else {
            MPI_Request_free(&rq[k]);
        }
    }
    c->broken = 1;
    return comm_timed_out(c, hxi_now() - t0, what, peer, limit);
}
#endif

hx_status hx_init(int *argc, char ***argv)
{
#ifdef HALOX_HAVE_CUDA
    /* Before anything starts CUDA (MPI may): with lazy module loading, the
     * first launch of a kernel can wait until the kernels running on the
     * GPU finish, and under MPS that includes the other processes'. One of
     * those may be an exchange spinning on a signal that this process sends
     * only after that launch: the exchange times out. Seen with 2
     * processes sharing a GPU at 2,048,000 atoms (docs/transports.md). A
     * value the user set stays. */
    (void) setenv("CUDA_MODULE_LOADING", "EAGER", 0);
#endif
#ifdef HALOX_HAVE_MPI
    int up = 0, rank = 0;
    MPI_Initialized(&up);
    if (!up) {
        HXI_MPI(MPI_Init(argc, argv));
        hxi_started_mpi = 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    hxi_log_set_rank(rank);
#endif
    return HX_OK;
}

hx_status hx_finalize(void)
{
#ifdef HALOX_HAVE_MPI
    int down = 0;
    MPI_Finalized(&down);
    if (hxi_started_mpi && !down)
        HXI_MPI(MPI_Finalize());
#endif
    hxi_started_mpi = 0;
    return HX_OK;
}

hx_status hx_comm_create(hx_comm **comm, const void *mpi_comm)
{
    hx_comm *c;
    *comm = NULL;
    HXI_CHECK(hxi_alloc((void **) &c, sizeof *c, "a communicator"));
    c->rank = 0;
    c->size = 1;
    c->node = NULL;
    c->broken = 0;
#ifdef HALOX_HAVE_MPI
    {
        int up = 0;
        MPI_Initialized(&up);
        if (!up) {
            free(c);
            return hxi_error(HX_ERR_STATE, "MPI is not initialised: call hx_init (or "
                                           "MPI_Init) before hx_comm_create");
        }
        int rc = MPI_Comm_dup(mpi_comm ? *(const MPI_Comm *) mpi_comm : MPI_COMM_WORLD, &c->mpi);
        if (rc != MPI_SUCCESS) {
            free(c);
            return hxi_mpi_error(rc, "MPI_Comm_dup");
        }
        MPI_Comm_rank(c->mpi, &c->rank);
        MPI_Comm_size(c->mpi, &c->size);
    }
#else
    if (mpi_comm) {
        free(c);
        return hxi_error(HX_ERR_UNSUPPORTED, "an MPI communicator was given but libhalox "
                                             "was built without MPI: rebuild with "
                                             "-DHALOX_WITH_MPI=ON");
    }
#endif
    *comm = c;
    return HX_OK;
}

void hx_comm_destroy(hx_comm *comm)
{
    if (!comm)
        return;
#ifdef HALOX_HAVE_MPI
    int down = 0;
    MPI_Finalized(&down);
    if (!down)
        MPI_Comm_free(&comm->mpi);
#endif
    if (comm->node)
        free(comm->node->node_of);
    free(comm->node);
    free(comm);
}

int hx_comm_rank(const hx_comm *comm)
{
    return comm->rank;
}
int hx_comm_size(const hx_comm *comm)
{
    return comm->size;
}

void *hxi_comm_mpi(hx_comm *c)
{
#ifdef HALOX_HAVE_MPI
    return &c->mpi;
#else
    (void) c;
    return NULL;
#endif
}

hx_status hxi_sendrecv(hx_comm *c, const void *sbuf, size_t sbytes, int dest, void *rbuf,
                       size_t rbytes, int src, int tag)
{
    return hxi_sendrecv_within(c, sbuf, sbytes, dest, rbuf, rbytes, src, tag, 0);
}

hx_status hxi_sendrecv_within(hx_comm *c, const void *sbuf, size_t sbytes, int dest, void *rbuf,
                              size_t rbytes, int src, int tag, double timeout_s)
{
#ifdef HALOX_HAVE_MPI
    if (c->size > 1) {
        if (sbytes > (size_t) INT32_MAX || rbytes > (size_t) INT32_MAX)
            return hxi_error(HX_ERR_OVERFLOW,
                             "message of %zu bytes is too large for one "
                             "MPI call: use more ranks",
                             sbytes > rbytes ? sbytes : rbytes);
        MPI_Request rq[2];
        char what[64];
        hx_status st = HX_OK;
        HXI_MPI(MPI_Irecv(rbuf, (int) rbytes, MPI_BYTE, src, tag, c->mpi, &rq[0]));
        HXI_MPI(MPI_Isend(sbuf, (int) sbytes, MPI_BYTE, dest, tag, c->mpi, &rq[1]));
        snprintf(what, sizeof what, "a message (tag %d) to rank %d and one from", tag, dest);
        TALLY(st = comm_wait(c, 2, rq, 1, what, src, timeout_s));
        return st;
    }
#endif
    (void) tag, (void) timeout_s; /* a copy: nothing to wait for */
    if (dest != c->rank || src != c->rank || sbytes != rbytes)
        return hxi_error(HX_ERR_INVALID,
                         "message to rank %d from rank %d on a one-rank "
                         "communicator",
                         dest, src);
    if (sbytes)
        memmove(rbuf, sbuf, sbytes);
    return HX_OK;
}

hx_status hxi_swap_ints2(hx_comm *c, const int out[2], const int dest[2], int in[2],
                         const int src[2], int tag)
{
#ifdef HALOX_HAVE_MPI
    if (c->size > 1) {
        MPI_Request rq[4];
        for (int k = 0; k < 2; k++)
            HXI_MPI(MPI_Irecv(&in[k], 1, MPI_INT, src[k], tag + k, c->mpi, &rq[k]));
        for (int k = 0; k < 2; k++)
            HXI_MPI(MPI_Isend(&out[k], 1, MPI_INT, dest[k], tag + k, c->mpi, &rq[2 + k]));
        hx_status st = HX_OK;
        TALLY(st = comm_wait(c, 4, rq, 2, "two counts from", src[0], 0));
        return st;
    }
#endif
    for (int k = 0; k < 2; k++)
        HXI_CHECK(
            hxi_sendrecv(c, &out[k], sizeof(int), dest[k], &in[k], sizeof(int), src[k], tag + k));
    return HX_OK;
}

hx_status hxi_allreduce_int(hx_comm *c, int *v, int n, int op_max)
{
#ifdef HALOX_HAVE_MPI
    if (c->size > 1) {
        MPI_Request rq;
        hx_status st = HX_OK;
        HXI_MPI(
            MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_INT, op_max ? MPI_MAX : MPI_SUM, c->mpi, &rq));
        TALLY(st = comm_wait(c, 1, &rq, 0, "an allreduce of integers", -1, 0));
        return st;
    }
#else
    (void) c, (void) v, (void) n, (void) op_max;
#endif
    return HX_OK;
}

hx_status hxi_allreduce_double(hx_comm *c, double *v, int n, int op_max)
{
#ifdef HALOX_HAVE_MPI
    if (c->size > 1) {
        MPI_Request rq;
        hx_status st = HX_OK;
        HXI_MPI(MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, op_max ? MPI_MAX : MPI_SUM, c->mpi,
                               &rq));
        TALLY(st = comm_wait(c, 1, &rq, 0, "an allreduce of reals", -1, 0));
        return st;
    }
#else
    (void) c, (void) v, (void) n, (void) op_max;
#endif
    return HX_OK;
}

hx_status hxi_bcast(hx_comm *c, void *buf, size_t bytes, int root)
{
#ifdef HALOX_HAVE_MPI
    if (c->size > 1) {
        MPI_Request rq;
        hx_status st = HX_OK;
        HXI_MPI(MPI_Ibcast(buf, (int) bytes, MPI_BYTE, root, c->mpi, &rq));
        TALLY(st = comm_wait(c, 1, &rq, 0, "a broadcast from", root, 0));
        return st;
    }
#else
    (void) c, (void) buf, (void) bytes, (void) root;
#endif
    return HX_OK;
}

hx_status hxi_allgather(hx_comm *c, const void *sbuf, size_t bytes, void *rbuf)
{
#ifdef HALOX_HAVE_MPI
    if (c->size > 1) {
        MPI_Request rq;
        hx_status st = HX_OK;
        HXI_MPI(
            MPI_Iallgather(sbuf, (int) bytes, MPI_BYTE, rbuf, (int) bytes, MPI_BYTE, c->mpi, &rq));
        TALLY(st = comm_wait(c, 1, &rq, 0, "an allgather", -1, 0));
        return st;
    }
#endif
    memmove(rbuf, sbuf, bytes);
    return HX_OK;
}

hx_status hxi_gatherv(hx_comm *c, const void *sbuf, int scount, void *rbuf, const int *counts,
                      const int *displs, int root, int doubles)
{
#ifdef HALOX_HAVE_MPI
    if (c->size > 1) {
        const MPI_Datatype t = doubles ? MPI_DOUBLE : MPI_BYTE;
        MPI_Request rq;
        hx_status st = HX_OK;
        HXI_MPI(MPI_Igatherv(sbuf, scount, t, rbuf, counts, displs, t, root, c->mpi, &rq));
        TALLY(st = comm_wait(c, 1, &rq, 0, "a gather to", root, 0));
        return st;
    }
#else
    (void) counts, (void) root;
#endif
    if (scount > 0)
        memmove((char *) rbuf + (size_t) displs[0] * (doubles ? sizeof(double) : 1), sbuf,
                (size_t) scount * (doubles ? sizeof(double) : 1));
    return HX_OK;
}

hx_status hxi_count_alike(hx_comm *c, const void *key, size_t bytes, int *count)
{
    *count = 1;
    unsigned char *all = NULL;
    hx_status st =
        hxi_agree(c, hxi_alloc((void **) &all, bytes * (size_t) c->size + 1, "the ranks' keys"));
    if (st == HX_OK)
        st = hxi_allgather(c, key, bytes, all);
    if (st == HX_OK) {
        int n = 0;
        for (int r = 0; r < c->size; r++)
            n += memcmp(all + bytes * (size_t) r, key, bytes) == 0;
        *count = n;
    }
    free(all);
    return st;
}

hx_status hxi_barrier(hx_comm *c)
{
#ifdef HALOX_HAVE_MPI
    if (c->size > 1) {
        MPI_Request rq;
        hx_status st = HX_OK;
        HXI_MPI(MPI_Ibarrier(c->mpi, &rq));
        TALLY(st = comm_wait(c, 1, &rq, 0, "a barrier", -1, 0));
        return st;
    }
#else
    (void) c;
#endif
    return HX_OK;
}

int hxi_comm_broken(const hx_comm *c)
{
    return c && c->broken;
}

void hxi_comm_abort(hx_comm *c, int code)
{
    fflush(stdout);
    fflush(stderr);
#ifdef HALOX_HAVE_MPI
    if (c && c->size > 1)
        MPI_Abort(c->mpi, code);
#else
    (void) c;
#endif
    exit(code);
}

/* A tag no other message of halox uses. */
#define HXI_TAG_ROOT_DONE 0x7ead

void hxi_wait_for_root(hx_comm *c, double timeout_s)
{
#ifdef HALOX_HAVE_MPI
    int down = 0;
    MPI_Finalized(&down);
    if (down || c->size < 2)
        return;
    int n = c->rank == 0 ? c->size - 1 : 1, token = 1, done = 0;
    MPI_Request *req = malloc((size_t) n * sizeof *req);
    if (!req)
        return;
    for (int k = 0; k < n; k++)
        if (c->rank == 0)
            MPI_Isend(&token, 1, MPI_INT, k + 1, HXI_TAG_ROOT_DONE, c->mpi, &req[k]);
        else
            MPI_Irecv(&token, 1, MPI_INT, 0, HXI_TAG_ROOT_DONE, c->mpi, &req[k]);
    const double t0 = hxi_now();
    while (!done && hxi_now() - t0 < timeout_s) {
        MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
        if (!done)
            nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 1000000}, NULL);
    }
    for (int k = 0; !done && k < n; k++)
        if (req[k] != MPI_REQUEST_NULL) {
            MPI_Cancel(&req[k]);
            MPI_Request_free(&req[k]);
        }
    free(req);
#else
    (void) c;
    (void) timeout_s;
#endif
}

hx_status hxi_agree(hx_comm *c, hx_status local)
{
    struct {
        int status;
        char msg[1000];
    } e;
    int first[1];
    /* A rank whose wait for a peer ran out does not wait for it again. */
    if (c->size == 1 || c->broken)
        return local;
    /* The lowest failing rank speaks for all. */
    first[0] = local != HX_OK ? -c->rank : -c->size;
    HXI_CHECK(hxi_allreduce_int(c, first, 1, 1));
    first[0] = -first[0];
    if (first[0] == c->size)
        return HX_OK;
    e.status = local;
    snprintf(e.msg, sizeof e.msg, "%s", hx_last_error());
    HXI_CHECK(hxi_bcast(c, &e, sizeof e, first[0]));
    if (c->rank == first[0])
        return local;
    return hxi_error((hx_status) e.status, "rank %d: %s", first[0], e.msg);
}

void hxi_comm_library(char *buf, size_t n)
{
#ifdef HALOX_HAVE_MPI
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(v, &len) == MPI_SUCCESS) {
        v[len < (int) sizeof v ? len : (int) sizeof v - 1] = '\0';
        v[strcspn(v, ",\n")] = '\0'; /* "Open MPI v4.1.6, package: ..." */
        snprintf(buf, n, "%s", v);
        return;
    }
#endif
    snprintf(buf, n, "no MPI");
}

/* ------------------------------------------------------------ node map */

enum { HXI_HOST_NAME = 256 };

/* This process's rank among those of its node as the launcher numbers
 * them, or -1 where no known launcher said. */
static int launcher_local_rank(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"};
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++) {
        const char *v = getenv(vars[k]);
        if (v && *v)
            return atoi(v);
    }
    return -1;
}

hx_status hxi_comm_node_map(hx_comm *c, const hxi_node_map **out)
{
    if (c->node) {
        *out = c->node;
        return HX_OK;
    }
    hxi_node_map *m = NULL;
    char *all = NULL, name[HXI_HOST_NAME];
    memset(name, 0, sizeof name);
    if (gethostname(name, sizeof name - 1) != 0)
        snprintf(name, sizeof name, "?");
    hx_status st = hxi_alloc((void **) &m, sizeof *m, "the node map");
    if (st == HX_OK) {
        memset(m, 0, sizeof *m);
        st = hxi_alloc((void **) &m->node_of, sizeof(int) * (size_t) c->size, "the node map");
    }
    if (st == HX_OK)
        st = hxi_alloc((void **) &all, sizeof name * (size_t) c->size, "the ranks' host names");
    /* Agreed before the collective, so that no rank is left in it. */
    st = hxi_agree(c, st);
    if (st == HX_OK)
        st = hxi_allgather(c, name, sizeof name, all);
    if (st != HX_OK) {
        if (m)
            free(m->node_of);
        free(m);
        free(all);
        return st;
    }
    /* Nodes numbered in the order of their lowest rank. */
    for (int r = 0; r < c->size; r++) {
        const char *h = all + (size_t) r * sizeof name;
        int q = 0;
        while (q < r && strncmp(all + (size_t) q * sizeof name, h, sizeof name) != 0)
            q++;
        m->node_of[r] = q < r ? m->node_of[q] : m->nnodes++;
    }
    free(all);
    m->node = m->node_of[c->rank];
    for (int r = 0; r < c->size; r++)
        if (m->node_of[r] == m->node) {
            if (r < c->rank)
                m->local_rank++;
            m->local_size++;
        }
    int lr = launcher_local_rank();
    if (lr >= 0)
        m->local_rank = lr;
    c->node = m;
    *out = m;
    return HX_OK;
}
