/*
 * registry.c - the table of built transports (from transports.def) and the
 * public calls on a transport: creation by name, plan hand-over, steps,
 * array reads and writes. What the backends share is in common.c.
 */
#include "transport/transport.h"

#ifdef HALOX_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tables below come from transports.def, the one list of transports:
 * each entry's requirement names the macro that keeps it (this build has
 * it) or drops it. */
#define HXI_BUILT_ALWAYS(x) x,
#if defined(HALOX_HAVE_CUDA) && defined(HALOX_HAVE_MPI)
#define HXI_BUILT_CUDA_MPI(x) x,
#else
#define HXI_BUILT_CUDA_MPI(x)
#endif
#if defined(HALOX_HAVE_CUDA) && defined(HALOX_HAVE_NCCL)
#define HXI_BUILT_CUDA_NCCL(x) x,
#else
#define HXI_BUILT_CUDA_NCCL(x)
#endif
#if defined(HALOX_HAVE_CUDA) && defined(HALOX_HAVE_NCCL_DEVICE)
#define HXI_BUILT_CUDA_NCCL_DEVICE(x) x,
#else
#define HXI_BUILT_CUDA_NCCL_DEVICE(x)
#endif
#if defined(HALOX_HAVE_CUDA) && defined(HALOX_HAVE_NVSHMEM)
#define HXI_BUILT_CUDA_NVSHMEM(x) x,
#else
#define HXI_BUILT_CUDA_NVSHMEM(x)
#endif

/* The transports this build has, in the list's order. */
static const hxi_transport_ops *const hxi_builtin[] = {
#define HX_TRANSPORT(name, ops, requirement, needs, sources)                                       \
    HXI_BUILT_##requirement(&hxi_transport_##ops)
#include "transport/transports.def"
#undef HX_TRANSPORT
};
#define HXI_NBUILTIN ((int) (sizeof hxi_builtin / sizeof hxi_builtin[0]))

/* Every transport halox knows, and what a build needs for it. */
static const struct {
    const char *name;
    const char *needs;
} hxi_known[] = {
#define HX_TRANSPORT(name, ops, requirement, needs, sources) {name, needs},
#include "transport/transports.def"
#undef HX_TRANSPORT
};

int hx_transport_count(void)
{
    return HXI_NBUILTIN;
}

const char *hx_transport_name_at(int i)
{
    return i >= 0 && i < HXI_NBUILTIN ? hxi_builtin[i]->name : NULL;
}

void hx_transport_opts_init(hx_transport_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->name = "cpu";
    opts->dtype = HX_FLOAT;
}

static hx_status hxi_unknown(const char *name)
{
    char list[256] = "";
    for (int i = 0; i < HXI_NBUILTIN; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, hxi_builtin[i]->name, sizeof list - strlen(list) - 1);
    }
    for (size_t k = 0; k < sizeof hxi_known / sizeof hxi_known[0]; k++)
        if (strcmp(name, hxi_known[k].name) == 0)
            return hxi_error(HX_ERR_UNSUPPORTED,
                             "transport '%s' is not built into this libhalox: it needs %s; "
                             "this build has: %s",
                             name, hxi_known[k].needs, list);
    return hxi_error(HX_ERR_INVALID, "unknown transport '%s': choose one of %s", name, list);
}

hx_status hx_transport_create(hx_transport **out, hx_comm *comm, const hx_transport_opts *opts)
{
    const hxi_transport_ops *ops = NULL;
    hx_transport *t = NULL;
    hx_status st;

    *out = NULL;
    if (!comm)
        return hxi_error(HX_ERR_INVALID, "no communicator given");
    if (!opts || !opts->name)
        return hxi_error(HX_ERR_INVALID, "no transport options or name given");
    /* The first entry point that reads the environment: a bad HALOX_*
     * value on any rank stops every rank here. */
    HXI_CHECK(hxi_agree(comm, hxi_knobs_load()));
    for (int i = 0; i < HXI_NBUILTIN; i++)
        if (strcmp(opts->name, hxi_builtin[i]->name) == 0)
            ops = hxi_builtin[i];
    if (!ops)
        return hxi_unknown(opts->name);
    static int noted;
    if (ops->unproven && !noted && hx_comm_rank(comm) == 0) {
        noted = 1;
        hxi_warn("transport %s: %s", ops->name, ops->unproven);
    }
    if (opts->dtype != HX_FLOAT && opts->dtype != HX_DOUBLE)
        return hxi_error(HX_ERR_INVALID, "data type %d: use HX_FLOAT or HX_DOUBLE",
                         (int) opts->dtype);
    if (!(ops->caps & HX_CAP_DOUBLE) && opts->dtype != HX_FLOAT)
        return hxi_error(HX_ERR_UNSUPPORTED,
                         "transport '%s' moves float data only: use HX_FLOAT (the `cpu` "
                         "transport also takes HX_DOUBLE)",
                         ops->name);
    if (opts->capacity < 0)
        return hxi_error(HX_ERR_INVALID, "capacity %d is negative", opts->capacity);
    if (opts->graph && !ops->step_graph)
        return hxi_error(HX_ERR_UNSUPPORTED,
                         "transport '%s' cannot be captured in a CUDA graph (opts.graph = 1): "
                         "use nvshmem-fused or nvshmem-fused-tma, or set opts.graph = 0",
                         ops->name);
    if (!(opts->timeout_s >= 0.0) || isinf(opts->timeout_s))
        return hxi_error(HX_ERR_INVALID,
                         "opts.timeout_s is %g: give the seconds a wait may take (> 0), or 0 "
                         "for HALOX_TIMEOUT_S or 5 s",
                         opts->timeout_s);
    if (opts->gate && !opts->graph)
        return hxi_error(HX_ERR_INVALID,
                         "opts.gate is for graph mode: set opts.graph = 1 as well (nvshmem-fused, "
                         "nvshmem-fused-tma)");
    HXI_CHECK(hxi_alloc((void **) &t, sizeof *t, "a transport"));
    memset(t, 0, sizeof *t);
    t->ops = ops;
    t->comm = comm;
    t->opts = *opts;
    t->opts.name = ops->name;
    if (t->opts.timeout_s <= 0)
        t->opts.timeout_s = hxi_knobs()->timeout_s;
    if (!t->opts.force_put)
        t->opts.force_put = hxi_knobs()->force_put;
    snprintf(t->describe, sizeof t->describe, "%s", ops->name);
    st = ops->create(t);
    if (st != HX_OK) {
        free(t);
        return st;
    }
    *out = t;
    return HX_OK;
}

void hx_transport_destroy(hx_transport *t)
{
    if (!t)
        return;
    t->ops->destroy(t);
    hxi_fields_free(t);
    free(t);
}

const char *hx_transport_name(const hx_transport *t)
{
    return t->ops->name;
}
const char *hx_transport_describe(const hx_transport *t)
{
    return t->describe;
}
void *hx_transport_coords(hx_transport *t)
{
    return t->x;
}
void *hx_transport_forces(hx_transport *t)
{
    return t->f;
}
int hx_transport_known_count(void)
{
    return (int) (sizeof hxi_known / sizeof hxi_known[0]);
}

const char *hx_transport_known_at(int i)
{
    return i >= 0 && i < hx_transport_known_count() ? hxi_known[i].name : NULL;
}

static const hxi_transport_ops *hxi_built(const char *name)
{
    for (int i = 0; name && i < HXI_NBUILTIN; i++)
        if (strcmp(name, hxi_builtin[i]->name) == 0)
            return hxi_builtin[i];
    return NULL;
}

const char *hx_transport_needs(const char *name)
{
    if (!name || hxi_built(name))
        return NULL;
    for (int k = 0; k < hx_transport_known_count(); k++)
        if (strcmp(name, hxi_known[k].name) == 0)
            return hxi_known[k].needs;
    return NULL;
}

const char *hx_transport_note(const char *name)
{
    const hxi_transport_ops *ops = hxi_built(name);
    return ops ? ops->unproven : NULL;
}

unsigned hx_transport_caps_of(const char *name)
{
    for (int i = 0; name && i < HXI_NBUILTIN; i++)
        if (strcmp(name, hxi_builtin[i]->name) == 0)
            return hxi_builtin[i]->caps;
    return 0;
}

unsigned hx_transport_caps(const hx_transport *t)
{
    if (!(t->ops->caps & HX_CAP_CHOOSES))
        return t->ops->caps;
    const hx_transport *chosen = hxi_auto_chosen(t);
    /* Field calls go to the choice as well (auto/auto.c). */
    return HX_CAP_CHOOSES | (chosen ? hx_transport_caps(chosen) : 0u);
}

hx_transport *hxi_transport_actual(hx_transport *t)
{
    if (t->ops->caps & HX_CAP_CHOOSES)
        return (hx_transport *) hxi_auto_chosen(t);
    return t;
}

int hx_transport_on_device(const hx_transport *t)
{
    return (hx_transport_caps(t) & HX_CAP_DEVICE) != 0;
}

hx_status hx_transport_set_plan(hx_transport *t, const hx_plan *plan)
{
    const hx_plan *old = t->plan;
    hx_status st;
    if (!plan)
        return hxi_error(HX_ERR_INVALID, "no plan given to hx_transport_set_plan");
    if (plan->decomp.nranks != hx_comm_size(t->comm))
        return hxi_error(HX_ERR_INVALID,
                         "plan is for %d ranks but the transport's communicator has %d",
                         plan->decomp.nranks, hx_comm_size(t->comm));
    t->plan = plan;
    st = t->ops->set_plan(t);
    if (st != HX_OK)
        t->plan = old == plan ? NULL : old;
    return st;
}

hx_status hx_transport_forward(hx_transport *t)
{
    if (!t->plan)
        return hxi_error(HX_ERR_STATE, "forward before a plan: call hx_transport_set_plan");
    t->step++;
    return t->ops->forward(t);
}

hx_status hxi_transport_no_reverse(const hx_transport *t, const char *call)
{
    if (t->plan && t->plan->full_shell)
        return hxi_error(HX_ERR_STATE,
                         "%s on a full-shell plan (hx_plan_create_full, `newton off`): nothing "
                         "goes back, each rank computes the forces on its home atoms itself; "
                         "build the plan with hx_plan_create for a reverse exchange",
                         call);
    return HX_OK;
}

hx_status hx_transport_reverse(hx_transport *t)
{
    if (!t->plan)
        return hxi_error(HX_ERR_STATE, "reverse before a plan: call hx_transport_set_plan");
    HXI_CHECK(hxi_transport_no_reverse(t, "hx_transport_reverse"));
    return t->ops->reverse(t);
}

hx_status hx_transport_sync(hx_transport *t)
{
    return t->ops->sync ? t->ops->sync(t) : HX_OK;
}

hx_status hx_transport_step_graph(hx_transport *t)
{
    if (!t->ops->step_graph || !t->opts.graph)
        return hxi_error(HX_ERR_STATE,
                         "hx_transport_step_graph on transport '%s' created without graph "
                         "mode: create it with opts.graph = 1 (nvshmem-fused, "
                         "nvshmem-fused-tma)",
                         t->ops->name);
    if (!t->plan)
        return hxi_error(HX_ERR_STATE, "step before a plan: call hx_transport_set_plan first");
    HXI_CHECK(hxi_transport_no_reverse(t, "hx_transport_step_graph (forward and reverse)"));
    t->step++;
    return t->ops->step_graph(t);
}

hx_status hx_transport_vote(hx_transport *t, const int32_t *in, int32_t *out)
{
    hx_transport *a = hxi_transport_actual(t);
    if (!a || !a->ops->vote)
        return hxi_error(HX_ERR_UNSUPPORTED,
                         "hx_transport_vote: transport '%s' has no device-side vote "
                         "(HX_CAP_VOTE: the nvshmem-* transports)",
                         a ? a->ops->name : t->ops->name);
    if (!in || !out)
        return hxi_error(HX_ERR_INVALID, "hx_transport_vote: in and out must be device pointers");
    return a->ops->vote(a, in, out);
}

/* Moves bytes between a host buffer and a transport array. */
static hx_status hxi_array_copy(hx_transport *t, void *array, void *host, size_t bytes,
                                int to_array)
{
    if (!hx_transport_on_device(t)) {
        memcpy(to_array ? array : host, to_array ? host : array, bytes);
        return HX_OK;
    }
#ifdef HALOX_HAVE_CUDA
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = cudaMemcpy(to_array ? array : host, to_array ? host : array, bytes,
                       to_array ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
    if (e != cudaSuccess)
        return hxi_error(HX_ERR_CUDA, "copy of %zu bytes %s transport '%s' failed: %s", bytes,
                         to_array ? "into" : "out of", t->ops->name, cudaGetErrorString(e));
    return HX_OK;
#else
    return hxi_error(HX_ERR_UNSUPPORTED, "device arrays in a build without CUDA");
#endif
}

static hx_status hxi_array_io(hx_transport *t, hx_array which, int first, int n, double *host,
                              int to_array)
{
    size_t elem = t->opts.dtype == HX_DOUBLE ? sizeof(double) : sizeof(float);
    char *array = which == HX_FORCES ? t->f : t->x;
    void *tmp = host;
    hx_status st = HX_OK;
    if (which != HX_COORDS && which != HX_FORCES)
        return hxi_error(HX_ERR_INVALID, "array %d: use HX_COORDS or HX_FORCES", (int) which);
    if (first < 0 || n < 0 || (long) first + n > t->capacity)
        return hxi_error(HX_ERR_OVERFLOW,
                         "atoms [%d, %ld) are outside the transport's arrays of %d atoms: set "
                         "a plan first, and stay within it",
                         first, (long) first + n, t->capacity);
    if (n == 0)
        return HX_OK;
    array += (size_t) first * 3 * elem;
    if (elem == sizeof(float))
        HXI_CHECK(hxi_alloc(&tmp, (size_t) n * 3 * sizeof(float), "conversion buffer"));
    if (to_array && tmp != host)
        for (size_t i = 0; i < (size_t) n * 3; i++)
            ((float *) tmp)[i] = (float) host[i];
    st = hxi_array_copy(t, array, tmp, (size_t) n * 3 * elem, to_array);
    if (st == HX_OK && !to_array && tmp != host)
        for (size_t i = 0; i < (size_t) n * 3; i++)
            host[i] = ((float *) tmp)[i];
    if (tmp != host)
        free(tmp);
    return st;
}

hx_status hx_transport_write(hx_transport *t, hx_array which, int first, int n, const double *src)
{
    return hxi_array_io(t, which, first, n, (double *) src, 1);
}

hx_status hx_transport_read(hx_transport *t, hx_array which, int first, int n, double *dst)
{
    return hxi_array_io(t, which, first, n, dst, 0);
}
