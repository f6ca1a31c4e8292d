/*
 * fused_fields.c - fields in the fused kernels (nvshmem-fused,
 * nvshmem-fused-tma): a forward with the coordinates, or a reverse with
 * the forces, in one launch, one signal per pulse covering both. Each
 * field has a block in a symmetric landing buffer, atom i of field k at
 * the same place on every rank (the largest rank's capacity of atoms per
 * field, the fields one after another in the call's order). Forward: the
 * sender stores into the receiver's buffer and the receiving blocks copy
 * it into the caller's array. Reverse: the holder of a pulse's halo
 * copies its halo values into its own buffer, at the places the forward
 * filled, and the pulse's sender reads them there and adds them by its
 * map with the forces, in the same order (fused/fields_dev.cuh). Only
 * where every pulse of every rank stores straight into its peer (NVLink)
 * and, for a reverse, every pulse's forces go by direct push or pull; the
 * put path, the atomic force mode and fields alone go the generic way
 * (gpu/fields_dev.c). As for coordinates, a peer writes the next
 * forward's values only after this rank's reverse has sent its forces, so
 * a forward with fields must be followed by a reverse before the next
 * forward, as in an MD step.
 */
#include "transport/nvshmem_fused/fused_fields.h"
#include "transport/gpu/fields_dev.h"
#include "transport/nvshmem/shm.h"
#include "transport/nvshmem/shm_api.h"

#include <string.h>

_Static_assert(HXI_FZF_PULSES >= HX_MAX_PULSES, "a peer landing pointer for every pulse");
_Static_assert((int) HXI_FZF_FLOAT == (int) HX_FIELD_FLOAT &&
                   (int) HXI_FZF_DOUBLE == (int) HX_FIELD_DOUBLE &&
                   (int) HXI_FZF_INT32 == (int) HX_FIELD_INT32,
               "the kernels' element types are hx_ftype's");

void hxi_fzf_new_plan(hxi_fzf *s, int nxput, int nfoff)
{
    s->nxput = nxput;
    s->nfoff = nfoff;
    s->adopted = 0;
}

/* Collective, at the first fused fields call of a plan: whether every
 * rank's pulses all store straight into their peers (and, for a reverse,
 * send their forces by direct push or pull), and the largest capacity.
 * Left out of set_plan so that a run without fields pays nothing at its
 * rebuilds. */
static hx_status fzf_adopt(hx_transport *t, hxi_fzf *s)
{
    int off[2] = {s->nxput, s->nfoff}, cap = t->capacity;
    HXI_CHECK(hxi_allreduce_int(t->comm, off, 2, 0));
    HXI_CHECK(hxi_allreduce_int(t->comm, &cap, 1, 1));
    s->direct = off[0] == 0;
    s->rdirect = off[0] == 0 && off[1] == 0;
    s->cap = cap;
    s->adopted = 1;
    return HX_OK;
}

void hxi_fzf_close(hxi_fzf *s)
{
    hxi_shm_free(&s->land);
    s->land_cap = 0;
}

/* A landing buffer of at least `need` bytes: grown together on every rank
 * (each makes the same call, with the same agreed capacity), once no peer can
 * still write into or read from the old one. Not during stream capture. */
static hx_status fzf_room(hx_transport *t, hxi_fzf *s, hxi_gpu *g, size_t need, const char *call)
{
    if (s->land && need <= s->land_cap)
        return HX_OK;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    HXI_CUDA(cudaStreamIsCapturing(g->stream, &cs));
    if (cs != cudaStreamCaptureStatusNone)
        return hxi_error(HX_ERR_STATE,
                         "%s: %s needs a larger landing buffer during stream capture: make the "
                         "same call once outside the capture first (after each "
                         "hx_transport_set_plan that grows the arrays)",
                         g->who, call);
    hx_status st = HX_OK;
    if (cudaStreamSynchronize(g->stream) != cudaSuccess)
        st = hxi_cuda_error(cudaGetLastError(), "waiting before the field landing buffer grows",
                            __FILE__, __LINE__);
    HXI_CHECK(hxi_agree(t->comm, st));
    HXI_CHECK(hxi_barrier(t->comm));
    hxi_fzf_close(s);
    HXI_CHECK(hxi_shm_alloc(t->comm, &s->land, need + need / 4, "the field landing buffer"));
    s->land_cap = need + need / 4;
    return HX_OK;
}

/* The kernels' view of the fields f[0 .. n): their blocks in the landing
 * buffer and every pulse's peer buffer. */
static hx_status fzf_describe(hx_transport *t, hxi_fzf *s, hxi_gpu *g, const hxi_field *f, int n,
                              const char *call, hxi_fz_fields *fld)
{
    memset(fld, 0, sizeof *fld);
    size_t off = 0;
    for (int k = 0; k < n; k++) {
        fld->f[k] = (hxi_fz_field){f[k].data, off, (int32_t) (f[k].size / 4), (int32_t) f[k].type};
        off += ((size_t) s->cap * f[k].size + 7) & ~(size_t) 7;
    }
    /* Room for every field registered, so that a later call naming others
     * (in a graph captured since) finds the buffer large enough. */
    const size_t all = (size_t) s->cap * hxi_fields_bytes(t) + 8 * (size_t) HX_MAX_FIELDS;
    HXI_CHECK(fzf_room(t, s, g, off > all ? off : all, call));
    fld->n = n;
    fld->nhome = t->plan->nhome;
    fld->land = s->land;
    for (int p = 0; p < t->plan->npulses; p++) {
        const hx_pulse *q = &t->plan->pulse[p];
        if (q->nsend == 0)
            continue;
        fld->peer_land[p] = hxi_shm_api_ptr(s->land, q->send_rank);
        if (!fld->peer_land[p])
            return hxi_error(HX_ERR_STATE,
                             "%s: rank %d's field landing buffer is not reachable by stores "
                             "although its coordinates are",
                             g->who, q->send_rank);
    }
    return HX_OK;
}

/* Whether the call of the arrays f[0 .. n) (f[0] the coordinates, for a
 * reverse the forces) runs in a fused kernel: *done 1 and its arguments
 * in *a, else *done 0. The same answer on every rank: the call's fields
 * and the plan's pulses, as agreed. */
static hx_status fzf_prepare(hx_transport *t, hxi_fzf *s, hxi_fz_core *c, hxi_gpu *g,
                             const hxi_field *f, int n, int reverse, hxi_fz_args *a, int *done)
{
    const char *call = reverse ? "hx_transport_fields_reverse" : "hx_transport_fields_forward";
    *done = 0;
    *a = c->args;
    const int with = n > 0 && (reverse ? f[0].data == t->f && !f[0].shift : f[0].shift);
    if (!with || n < 2 || n - 1 > HXI_FZF_MAX || t->plan->npulses > HXI_FZF_PULSES)
        return HX_OK;
    if (!s->adopted)
        HXI_CHECK(fzf_adopt(t, s));
    if (!(reverse ? s->rdirect : s->direct))
        return HX_OK;
    *done = 1;
    /* The arrays are checked outside a capture (the call made there first
     * sized the landing buffer), so that nothing but launches is captured. */
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    HXI_CUDA(cudaStreamIsCapturing(g->stream, &cs));
    if (cs == cudaStreamCaptureStatusNone)
        HXI_CHECK(hxi_fdev_check(t, call, f + 1, n - 1));
    return fzf_describe(t, s, g, f + 1, n - 1, call, &a->fld);
}

hx_status hxi_fzf_forward(hx_transport *t, hxi_fzf *s, hxi_fz_core *c, hxi_gpu *g,
                          const hxi_field *f, int n, int *done)
{
    hxi_fz_args a;
    HXI_CHECK(fzf_prepare(t, s, c, g, f, n, 0, &a, done));
    if (!*done)
        return HX_OK;
    if (!a.order) /* else the kernel orders itself (hxi_k_fz_forward) */
        HXI_CHECK(hxi_shm_order(t));
    HXI_CHECK(hxi_gpu_begin_forward(g));
    if (g->npulses == 0)
        return HX_OK;
    HXI_CUDA(hxi_fz_forward(g->stream, &a, c->bx, c->tma));
    return HX_OK;
}

hx_status hxi_fzf_reverse(hx_transport *t, hxi_fzf *s, hxi_fz_core *c, hxi_gpu *g,
                          const hxi_field *f, int n, int *done)
{
    hxi_fz_args a;
    HXI_CHECK(fzf_prepare(t, s, c, g, f, n, 1, &a, done));
    return *done ? hxi_fz_core_reverse_with(c, g, t, &a) : HX_OK;
}
