/*
 * gpu.h - device plumbing shared by the GPU transports (mpi, nccl,
 * nvshmem-*): device selection, the device copy of the plan, the bounded
 * wait's timeout record, stream and error helpers. Host side, C.
 */
#ifndef HALOX_GPU_H
#define HALOX_GPU_H

#include "transport/gpu/gpu_types.h"
#include "transport/transport.h"

#include <cuda_runtime_api.h>

/* HXI_CUDA and HXI_CUDA_GOTO: core/checks.h. */

typedef struct hxi_gpu {
    const char *who; /* transport name, for messages */
    int rank, nranks;
    int device;          /* CUDA device this rank uses */
    int local_rank;      /* rank among the processes of this node */
    int ranks_on_device; /* processes of the communicator on this GPU */
    int mps;             /* an MPS control daemon was found */
    int sm_count;
    cudaStream_t stream;
    int own_stream;

    /* The plan on the device: uploaded once per plan. */
    int npulses;
    hxi_gpu_pulse pulse[HX_MAX_PULSES];
    const int *maps; /* all pulses' maps, concatenated, as the kernels read them: a
                        device plan's own (kept by the plan), else d_maps */
    int *d_maps;     /* a copy of a host plan's maps */
    size_t maps_cap; /* ints */
    int total_send, total_recv; /* atoms over all pulses of this rank */

    /* Bounded device waits. */
    double timeout_s;
    uint64_t timeout_ns;
    hxi_gpu_timeout *rec_h; /* mapped pinned host memory */
    hxi_gpu_timeout *rec_d; /* its device address */
    int *d_hit;             /* elects the one writer of rec */
    hx_status failed;       /* sticky: HX_OK until a timeout or abort */
    char fail_msg[320];

    /* Steps so far (forward calls); the signal value of the current step. */
    uint64_t seq;

    /* Test hook: this rank skips its coordinate sends in one step
     * (HALOX_TEST_WITHHOLD=RANK:STEP; rank -1: none). */
    int withhold_rank;
    /* HALOX_PLAN_WAIT (default 1): the host waits for the stream when a
     * device plan is adopted; 0: only where arrays grow (or a captured
     * step holds the old ones), the rest goes in stream order. */
    int plan_wait;
    uint64_t withhold_step;
} hxi_gpu;

/* Selects the device (local rank % device count), learns how many ranks
 * share it, creates or adopts the stream and the timeout record.
 * Collective over t->comm. Refuses nothing: each transport decides what a
 * shared GPU means for it. */
hx_status hxi_gpu_open(hxi_gpu *g, hx_transport *t, const char *who);
void hxi_gpu_close(hxi_gpu *g);

/* Uploads maps and per-pulse data of plan; grows the device map as needed. */
hx_status hxi_gpu_upload_plan(hxi_gpu *g, const hx_plan *plan);

/* Device allocation that records HX_ERR_NOMEM with what it was for. */
hx_status hxi_gpu_malloc(void **p, size_t bytes, const char *what);
hx_status hxi_gpu_host_malloc(void **p, size_t bytes, const char *what);
/* A device array of at least `need` bytes (contents not kept): when *p
 * holds fewer (*cap), it is freed and `alloc` >= need bytes taken. */
hx_status hxi_gpu_grow(void **p, size_t *cap, size_t need, size_t alloc, const char *what);
/* Replaces device array *p by one of `atoms` atoms (3 floats each),
 * keeping its first `keep` atoms. */
hx_status hxi_gpu_regrow(void **p, size_t atoms, size_t keep, const char *what);

/* Starts a step: HX_ERR_* of an earlier failure, else HX_OK and g->seq++. */
hx_status hxi_gpu_begin_forward(hxi_gpu *g);
hx_status hxi_gpu_check_usable(hxi_gpu *g);
/* 1 when the test hook makes this rank skip its sends in this step. */
int hxi_gpu_withhold(const hxi_gpu *g);

/* The description of a wait of pulse p (kind 0 coordinates, 1 forces). */
hxi_gpu_wait_info hxi_gpu_wait_for(const hxi_gpu *g, int p, int kind);

/* Waits for the stream, bounded (a stream that does not drain within the
 * limit is HX_ERR_TIMEOUT), then reports a recorded device-side timeout. */
hx_status hxi_gpu_sync(hxi_gpu *g);
/* Polls the stream until it drains or limit_s passes; *done says which. */
hx_status hxi_gpu_stream_poll(hxi_gpu *g, double limit_s, int *done);
/* Marks the transport failed with status st and the message text. */
hx_status hxi_gpu_fail(hxi_gpu *g, hx_status st, const char *fmt, ...) HXI_PRINTF(3, 4);
/* The standard timeout message, for device and host waits alike. */
hx_status hxi_gpu_timeout_error(hxi_gpu *g, int rank, int pulse, int dim, int kind, uint64_t step,
                                int peer, double waited_s, const char *why);

/* Refusal for several processes on one GPU, naming the fix. */
hx_status hxi_gpu_refuse_shared(const hxi_gpu *g, const char *reason);


#endif /* HALOX_GPU_H */
