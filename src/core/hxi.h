/*
 * hxi.h - internals shared by every layer of libhalox: errors, logging and
 * the communicator wrapper. Not installed.
 */
#ifndef HALOX_HXI_H
#define HALOX_HXI_H

#include "halox.h"

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __GNUC__
#define HXI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define HXI_PRINTF(a, b)
#endif

/* Records the detailed message of an error for hx_last_error() and returns
 * status, so that `return hxi_error(HX_ERR_BOX, "...", ...);` reads as one
 * statement. The message names the problem and the fix. */
hx_status hxi_error(hx_status status, const char *fmt, ...) HXI_PRINTF(2, 3);

/* The checks of calls (HXI_CHECK, HXI_CUDA, HXI_MPI, HXI_NCCL and their
 * _GOTO twins): one header. */
#include "core/checks.h"

/* The environment variables (HALOX_*): hxi_knobs() and its table. */
#include "core/knobs.h"

/* Logging to stderr, prefixed with "halox[rank]". Level from HALOX_LOG
 * (0 quiet, 1 info, 2 debug); warnings always. */
void hxi_log_set_rank(int rank);
int hxi_log_level(void);
void hxi_info(const char *fmt, ...) HXI_PRINTF(1, 2);
void hxi_debug(const char *fmt, ...) HXI_PRINTF(1, 2);
void hxi_warn(const char *fmt, ...) HXI_PRINTF(1, 2);

/* malloc/realloc that record HX_ERR_NOMEM with what was being allocated. */
hx_status hxi_alloc(void **p, size_t bytes, const char *what);
hx_status hxi_grow(void **p, size_t bytes, const char *what);

/* Seconds from a monotonic clock (arbitrary origin): the one clock every
 * timer, log and trace of halox reads. */
double hxi_now(void);

/* Text that must be all of one number (a program's option, say): HX_OK
 * with *out, or HX_ERR_INVALID with a message naming `what` and the text
 * ("--steps: 'x' is not a whole number", "--steps: -1 must be between 0
 * and 2147483647"). */
hx_status hxi_parse_long(const char *what, const char *text, long lo, long hi, long *out);
hx_status hxi_parse_double(const char *what, const char *text, double *out);

/* --------------------------------------------------------------- comm */

/* Point-to-point and collective operations on an hx_comm. Without MPI the
 * communicator has one rank, and messages to self are copies. */
hx_status hxi_sendrecv(hx_comm *c, const void *sbuf, size_t sbytes, int dest, void *rbuf,
                       size_t rbytes, int src, int tag);
/* The same, its wait bounded by timeout_s (a transport's opts.timeout_s;
 * <= 0: HALOX_TIMEOUT_S). */
hx_status hxi_sendrecv_within(hx_comm *c, const void *sbuf, size_t sbytes, int dest, void *rbuf,
                              size_t rbytes, int src, int tag, double timeout_s);
/* Two exchanges of one int each at once (one wait for both): out[k] to
 * dest[k] and in[k] from src[k], pair k with tag + k. */
hx_status hxi_swap_ints2(hx_comm *c, const int out[2], const int dest[2], int in[2],
                         const int src[2], int tag);
/* Exchanges sizes first, then data of unknown size into a buffer grown as needed. */
hx_status hxi_allreduce_int(hx_comm *c, int *v, int n, int op_max);
hx_status hxi_allreduce_double(hx_comm *c, double *v, int n, int op_max);
hx_status hxi_bcast(hx_comm *c, void *buf, size_t bytes, int root);
hx_status hxi_allgather(hx_comm *c, const void *sbuf, size_t bytes, void *rbuf);
/* Collective: every rank's scount values (doubles, or bytes) into root's
 * rbuf at displs[r] (counts[r] of them from rank r; counts and displs are
 * read on root only), within the bounded wait. */
hx_status hxi_gatherv(hx_comm *c, const void *sbuf, int scount, void *rbuf, const int *counts,
                      const int *displs, int root, int doubles);
/* Collective: how many ranks (this one included) hold the same `bytes`
 * bytes at `key` as this rank, e.g. the UUID of the GPU each one uses. */
hx_status hxi_count_alike(hx_comm *c, const void *key, size_t bytes, int *count);
hx_status hxi_barrier(hx_comm *c);
/* Calls with other ranks so far in this process and seconds spent in them. */
void hxi_comm_tally(long long *calls, double *seconds);
/* Rank 0 tells every other rank that it is done with something (printed an
 * error, say), and they wait for that, at most timeout_s seconds: a
 * launcher that ends the job at the first non-zero exit then cannot cut
 * rank 0 short. Bounded where a rank is gone or stuck; never fails.
 * Collective. */
void hxi_wait_for_root(hx_comm *c, double timeout_s);
/* Whether a wait of this communicator for a peer ran out (HX_ERR_TIMEOUT
 * from a host-side wait): its collectives are no longer safe, and
 * hxi_agree returns the local status without meeting the others. A
 * device-side timeout leaves it whole: that error is agreed as any other. */
int hxi_comm_broken(const hx_comm *c);
/* Ends the whole job with `code` where a peer is gone (hxi_comm_broken,
 * when even MPI_Finalize would wait for it): MPI_Abort on several ranks,
 * else exit. Does not return. */
void hxi_comm_abort(hx_comm *c, int code);
/* Collective: every rank passes its local status; all return the status of
 * the lowest failing rank (HX_OK if none), with that rank's message prefixed
 * by its number, so that one bad rank fails a collective call everywhere
 * instead of leaving the others waiting. */
hx_status hxi_agree(hx_comm *c, hx_status local);
/* Collective (core/plan.c): HX_OK on every rank when every rank of comm
 * holds the same decomposition (grid, box, cutoff and cuts, compared by a
 * checksum), else HX_ERR_INVALID on every rank naming the lowest rank that
 * differs. */
hx_status hxi_decomp_agree(hx_comm *comm, const hx_decomp *d);
/* 1 where a full-shell plan of d fits: twice d's pulses within
 * HX_MAX_PULSES (core/plan_full.c; hxi_plan_full_check says why not). */
int hxi_plan_full_fits(const hx_decomp *d);
/* Every wait above for another rank is bounded by HALOX_TIMEOUT_S: one
 * that runs out is HX_ERR_TIMEOUT naming what it waited for and from
 * whom; the communicator is then not to be used again (hxi_agree returns
 * a timeout at once, without waiting for the others). */
/* Which ranks of a communicator share a node (a host name). */
typedef struct hxi_node_map {
    int local_rank; /* this rank among its node's: the launcher's local rank where it
                       sets one (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
                       SLURM_LOCALID), else its place in rank order */
    int local_size; /* ranks of the communicator on this node */
    int node;       /* this rank's node; nodes are numbered in the order of their lowest rank */
    int nnodes;
    int *node_of; /* the node of every rank */
} hxi_node_map;
/* The communicator's node map: collective at its first call (every rank
 * must make it at the same point), then kept with the communicator. */
hx_status hxi_comm_node_map(hx_comm *c, const hxi_node_map **out);
/* Pointer to the MPI_Comm inside (NULL without MPI). */
void *hxi_comm_mpi(hx_comm *c);
/* The MPI library's name and version ("Open MPI v4.1.6"), or "no MPI". */
void hxi_comm_library(char *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* HALOX_HXI_H */
