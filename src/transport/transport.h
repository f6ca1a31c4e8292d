/*
 * transport.h - what a backend provides: one const table of operations.
 * Backends see plans and raw arrays, never MD data structures.
 */
#ifndef HALOX_TRANSPORT_H
#define HALOX_TRANSPORT_H

#include "core/hxi.h"
#include "core/plan.h"

enum { HXI_XCHG_SLOTS = 2 };

/* One message of the rebuild's byte exchange (hxi_transport_ops.xchg). */
typedef struct hxi_xchg_msg {
    int slot;         /* 0 .. HXI_XCHG_SLOTS - 1 */
    const void *sbuf; /* device address of the bytes sent */
    size_t sbytes;
    int dest;
    size_t rbytes;
    int src;
    const void *rbuf; /* out: where the received bytes lie */
} hxi_xchg_msg;

/* One array of a field exchange (fields.c): a registered field resolved at
 * the call, or the coordinates or forces themselves (shift set: the
 * coordinates, packed with the pulse's periodic shift). */
typedef struct hxi_field {
    void *data;  /* the array now (*hx_field.data) */
    size_t size; /* bytes per atom */
    hx_ftype type;
    int width;
    int shift; /* 1: coordinates (float or double, width 3) */
} hxi_field;

typedef struct hxi_transport_ops {
    const char *name;
    unsigned caps; /* HX_CAP_* bits (auto: HX_CAP_CHOOSES; the rest is its choice's) */
    /* Non-NULL: not yet run where it can exchange (hx_transport_note says
     * this); `auto` leaves it out until it has. */
    const char *unproven;
    hx_status (*create)(hx_transport *t);
    void (*destroy)(hx_transport *t);
    /* Collective: adopt t->plan (already set), growing buffers as needed. */
    hx_status (*set_plan)(hx_transport *t);
    hx_status (*forward)(hx_transport *t);
    hx_status (*reverse)(hx_transport *t);
    hx_status (*sync)(hx_transport *t); /* may be NULL: nothing to wait for */
    /* Graph mode: one step (forward + reverse) replayed from a CUDA graph.
     * NULL: the transport cannot be captured, and refuses opts.graph. */
    hx_status (*step_graph)(hx_transport *t);
    /* The byte exchange of device rebuilds (src/rebuild/); NULL: the
     * rebuild moves the bytes through pinned host memory over MPI.
     * xchg_reserve, collective: every rank passes the same byte count, the
     * largest message any rank sends in the exchanges that follow.
     * xchg: n messages (1 or 2, on distinct slots; hxi_xchg_msg), each
     * sending sbytes at device address sbuf to rank dest and receiving
     * rbytes from rank src, ordered on t->stream: a later kernel there may
     * read the message's rbuf, valid until the next xchg on its slot.
     * Every rank makes every exchange, with 0 bytes too, with the same
     * messages in the same order. Between two exchanges on one slot the
     * caller drains the stream and swaps a host message with dest and
     * src, so no peer overwrites bytes not yet read. */
    /* hx_transport_vote (HX_CAP_VOTE); NULL: not offered. */
    hx_status (*vote)(hx_transport *t, const int32_t *in, int32_t *out);
    hx_status (*xchg_reserve)(hx_transport *t, size_t bytes);
    hx_status (*xchg)(hx_transport *t, hxi_xchg_msg *m, int n);
    /* Per-atom fields (HX_CAP_FIELDS; NULL where not carried): forward or
     * reverse of the n arrays f, checked and resolved by fields.c; f[0] is
     * the coordinates (forces) when the caller asked for them too. */
    hx_status (*fields_forward)(hx_transport *t, const hxi_field *f, int n);
    hx_status (*fields_reverse)(hx_transport *t, const hxi_field *f, int n);
} hxi_transport_ops;

struct hx_transport {
    const hxi_transport_ops *ops;
    hx_comm *comm;
    hx_transport_opts opts;
    const hx_plan *plan;
    void *x;       /* coordinates, capacity * 3 of opts.dtype */
    void *f;       /* forces, likewise */
    int capacity;  /* atoms the arrays hold */
    uint64_t step; /* forward calls so far: grows, never resets */
    void *stream;  /* cudaStream_t of a device transport (set at create) */
    char describe[512];
    void *impl;                  /* backend state */
    struct hxi_fieldset *fields; /* registered fields (fields.c), NULL until one */
    struct hxi_fdev *fdev;       /* device field exchange state (gpu/fields_dev.c) */
};

/* What the backends share (common.c). Capacity for a plan: what it needs
 * times the margin, at least `floor`. */
int hxi_capacity_for(int need, int floor);
/* The common check before adopting a plan: HX_ERR_OVERFLOW when it does not
 * fit a fixed capacity; otherwise *grow says whether buffers must grow to
 * *new_capacity (agreed over all ranks). Collective. */
hx_status hxi_transport_fit(hx_transport *t, int *grow, int *new_capacity);
/* HX_ERR_STATE naming `call` where the plan is full shell (nothing goes
 * back: hx_plan_create_full), else HX_OK. */
hx_status hxi_transport_no_reverse(const hx_transport *t, const char *call);

/* Fields (fields.c): frees t's registrations (hx_transport_destroy). */
void hxi_fields_free(hx_transport *t);
/* Bytes per atom of all the fields registered on t now. */
size_t hxi_fields_bytes(const hx_transport *t);
/* Host helpers of a field exchange: bytes of n atoms of f, rounded up to 8
 * so that blocks of several arrays in one buffer stay aligned; a pulse's
 * values copied out by its map (coordinates with its shift); a buffer of
 * a pulse's nsend values added into the atoms its map names. */
size_t hxi_field_block(const hxi_field *f, int n);
void hxi_field_pack(const hxi_field *f, const hx_pulse *p, void *buf);
void hxi_field_add(const hxi_field *f, const hx_pulse *p, const void *buf);

/* The ops table of every transport (transports.def, the one list). */
#define HX_TRANSPORT(name, ops, requirement, needs, sources)                                       \
    extern const hxi_transport_ops hxi_transport_##ops;
#include "transport/transports.def"
#undef HX_TRANSPORT
/* The transport `auto` runs now (NULL before its first plan). */
const hx_transport *hxi_auto_chosen(const hx_transport *t);
/* The transport that does the work: auto's choice (NULL before its first
 * plan), else t itself. */
hx_transport *hxi_transport_actual(hx_transport *t);
/* The versions of what a build links, for hx_version_string ("CUDA
 * runtime 13.0, driver 13.0"; "NCCL 2.28.9"). */
#ifdef HALOX_HAVE_CUDA
void hxi_gpu_versions(char *buf, size_t n);
#endif
#ifdef HALOX_HAVE_NCCL
void hxi_nccl_version(char *buf, size_t n);
#endif
#endif /* HALOX_TRANSPORT_H */
