/*
 * context.h - the device rebuild's context (struct hx_rebuild) and the
 * helpers its two host files share: rebuild.c (context, byte exchange,
 * migration, census) and plan_device.c (the plan). Host side, C.
 */
#ifndef HALOX_REBUILD_CONTEXT_H
#define HALOX_REBUILD_CONTEXT_H

#include "core/hxi.h"
#include "core/plan.h"
#include "rebuild/rebuild.h"
#include "transport/transport.h"

#include <stddef.h>
#include <stdint.h>

/* The device arrays of one plan; a freed plan leaves them for the next. */
typedef struct hxr_arrays {
    float *x;    /* atoms * 3 */
    uint32_t *z; /* atoms zone words */
    size_t atoms;
    int32_t *maps; /* all pulses' maps */
    size_t maps_cap;
} hxr_arrays;

struct hx_rebuild {
    hx_comm *comm;
    hx_transport *t;
    hx_decomp d;
    int refs;      /* the owner's, and one per live device plan */
    int destroyed; /* the owner let go */

    /* Scratch, rank-local, grown as needed (contents not kept). */
    int32_t *cls, *pos; /* per atom: class, slot (plan: running count) */
    size_t atoms_cap;
    int32_t *bcnt, *boff; /* per block: counts, offsets (3 classes) */
    size_t blocks_cap;
    void *stay; /* stayers' records (where the order is kept) */
    size_t stay_cap;
    int any_order; /* hx_rebuild_keep_order(r, 0): stayers stay put, r->pos holds the holes */
    void *send[HXI_XCHG_SLOTS]; /* leavers' records / a pulse's records */
    size_t send_cap[HXI_XCHG_SLOTS];
    unsigned long long *mask; /* share masks, per local atom */
    size_t mask_cap;

    /* The exchange through pinned host memory, for transports without a
     * device path: host send and receive buffers and the device copy. */
    void *hs[HXI_XCHG_SLOTS], *hr[HXI_XCHG_SLOTS], *dr[HXI_XCHG_SLOTS];
    size_t hs_cap[HXI_XCHG_SLOTS], hr_cap[HXI_XCHG_SLOTS], dr_cap[HXI_XCHG_SLOTS];

    /* A failed exchange, held for the next agreement (hxr_agree_max): a
     * rank that failed keeps taking part with empty messages until then,
     * so that no neighbour waits for it in a blocking call. */
    hx_status pending;
    char pending_msg[512];

    /* Where the time goes (HALOX_LOG=1 prints it at destroy): waits for
     * the stream, host messages and agreements, the byte exchange; and the
     * calls. */
    double t_wait, t_msg, t_xchg;
    long n_migrate, n_plan;

    hxr_result *d_res; /* device */
    int *d_counter;    /* device, zero: the last-block election of a counting grid */
    hxr_result *h_res; /* pinned host copy, mapped */
    hxr_result *h_pub; /* h_res as the device sees it (where kernels publish) */
    int res_dirty;     /* d_res may hold values: cleared before its next use */

    /* The first pulse's count taken ahead of the plan (hx_plan_count_device):
     * its own result (device, and the pinned host copy its kernel publishes
     * into, with the device's view of it), the event behind that kernel,
     * the home atoms it counted (-1: none since the last migration or
     * plan), and the flag the plan's place kernel sets where it counted
     * otherwise (mapped pinned host memory; hxr_await reports it). */
    hxr_result *d_early, *h_early, *p_early;
    void *ev_early; /* cudaEvent_t */
    int early_n;
    int32_t *h_recount, *p_recount;

    hxr_arrays spare[2]; /* arrays of freed plans, for the next ones */
    int nspare;
};

/* HX_ERR_CUDA (or HX_ERR_NOMEM) from a cudaError_t given as an int. */
hx_status hxr_cuda(int err, const char *what);
#define HXR_CU(call, what) HXI_CUDA_AS(call, hxr_cuda, what)

/* The stream of the transport that does the work now. */
hx_status hxr_stream(hx_rebuild *r, void **stream);
/* Copies the device result to the host and waits for the stream (bounded;
 * a device-side timeout of the exchange is reported). Rank-local. */
hx_status hxr_fetch(hx_rebuild *r, void *stream);
/* Waits as hxr_fetch for a result a kernel published, and cleared
 * (hxr_classify, hxr_select_summary with pub = h_pub). */
hx_status hxr_await(hx_rebuild *r, void *stream);
/* HX_ERR_INVALID where a plan's place kernel found another count than the
 * one taken ahead (hx_plan_count_device) since this was last asked; every
 * hxr_await asks. Rank-local. */
hx_status hxr_recount_check(hx_rebuild *r);
/* Clears the device result if something may have written it since it was
 * last read, and marks it written by what comes next. */
hx_status hxr_begin(hx_rebuild *r, void *stream);
/* A device array of at least `need` bytes; contents are not kept. */
hx_status hxr_grow(void **p, size_t *cap, size_t need, const char *what);
/* Collective: the local status (or an earlier failed exchange) and n - 1
 * integers are reduced by max over the ranks (v[0] is set here); a failure
 * anywhere returns that failure, with its message, on every rank. */
hx_status hxr_agree_max(hx_rebuild *r, hx_status st, int *v, int n);
/* Collective: room for messages of `bytes`, then the exchange of n
 * messages (1 or 2, each on its own slot; see hxi_transport_ops.xchg). A
 * failure of the exchange is kept in r->pending and returned by the next
 * hxr_agree_max on every rank; the caller goes on to that point (nothing
 * received means each message's rbuf is NULL). */
hx_status hxr_reserve(hx_rebuild *r, size_t bytes);
void hxr_xchg(hx_rebuild *r, void *stream, hxi_xchg_msg *m, int n);
/* A message of hxr_xchg: sbytes from device address sbuf to rank dest,
 * rbytes from rank src, on slot. */
static inline hxi_xchg_msg hxr_msg(int slot, const void *sbuf, size_t sbytes, int dest,
                                   size_t rbytes, int src)
{
    hxi_xchg_msg m = {slot, sbuf, sbytes, dest, rbytes, src, NULL};
    return m;
}
/* hxi_swap_ints2, timed: two pairs of one int each way at once (tags tag
 * and tag + 1). */
hx_status hxr_swap2(hx_rebuild *r, const int out[2], const int dest[2], int in[2], const int src[2],
                    int tag);
/* Keeps the first failure in r->pending for the next hxr_agree_max. */
void hxr_defer(hx_rebuild *r, hx_status st);
/* Scratch for n atoms and their blocks. */
hx_status hxr_scratch(hx_rebuild *r, int n);
/* Drops one reference; the last frees the context. */
void hxr_unref(hx_rebuild *r);

#endif /* HALOX_REBUILD_CONTEXT_H */
