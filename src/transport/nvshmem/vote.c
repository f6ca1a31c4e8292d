/*
 * vote.c - hx_transport_vote for the nvshmem-* transports: a yes or no of
 * every rank, ORed on the device (vote_kernels.cu says how), so that a
 * decision all ranks must share, such as whether to rebuild, needs neither
 * the host nor MPI. The slots are symmetric, one per rank; the peers'
 * are reached by load/store where nvshmem_ptr gives a pointer (and
 * force_put is not set), else by NVSHMEM's signal operation.
 */
#include "transport/nvshmem/shm.h"
#include "transport/nvshmem/shm_api.h"

#include <stdlib.h>
#include <string.h>

hx_status hxi_shm_vote_open(hxi_shm *s, hx_transport *t)
{
    const int n = s->g.nranks;
    hx_status st = HX_OK;
    uint64_t **peers = NULL;
    HXI_CHECK(hxi_shm_alloc(t->comm, (void **) &s->vslot, (size_t) n * sizeof(uint64_t),
                            "the vote slots"));
    st = hxi_alloc((void **) &peers, (size_t) n * sizeof *peers, "the vote's peer table");
    if (st == HX_OK) {
        for (int q = 0; q < n; q++)
            peers[q] = (s->force_put || q == s->g.rank) ? NULL : hxi_shm_api_ptr(s->vslot, q);
        st = hxi_gpu_malloc((void **) &s->d_vpeer, (size_t) n * sizeof *peers,
                            "the vote's peer table");
    }
    if (st == HX_OK)
        st = hxi_gpu_malloc((void **) &s->d_vseq, sizeof(uint64_t), "the vote counter");
    if (st == HX_OK)
        st = hxi_gpu_malloc((void **) &s->d_order, 2 * sizeof(int32_t), "the ordering vote");
    if (st == HX_OK) {
        cudaError_t e =
            cudaMemcpy(s->d_vpeer, peers, (size_t) n * sizeof *peers, cudaMemcpyHostToDevice);
        if (e == cudaSuccess)
            e = cudaMemset(s->vslot, 0, (size_t) n * sizeof(uint64_t));
        if (e == cudaSuccess)
            e = cudaMemset(s->d_vseq, 0, sizeof(uint64_t));
        if (e == cudaSuccess)
            e = cudaMemset(s->d_order, 0, 2 * sizeof(int32_t));
        if (e != cudaSuccess)
            st = hxi_cuda_error(e, "setting up the vote", __FILE__, __LINE__);
    }
    free(peers);
    return st; /* the caller agrees on it, then frees what is set on failure */
}

void hxi_shm_vote_close(hxi_shm *s)
{
    hxi_shm_free((void **) &s->vslot); /* collective */
    if (s->d_vpeer)
        cudaFree(s->d_vpeer);
    if (s->d_vseq)
        cudaFree(s->d_vseq);
    if (s->d_order)
        cudaFree(s->d_order);
    s->d_vpeer = NULL;
    s->d_vseq = NULL;
    s->d_order = NULL;
}

hx_status hxi_shm_order(hx_transport *t)
{
    hxi_shm *s = t->impl;
    if (!t->plan || !t->plan->full_shell)
        return HX_OK;
    return hxi_shm_vote(t, s->d_order, s->d_order + 1);
}

hx_status hxi_shm_vote(hx_transport *t, const int32_t *in, int32_t *out)
{
    hxi_shm *s = t->impl;
    hxi_gpu *g = &s->g;
    HXI_CHECK(hxi_gpu_check_usable(g));
    hxi_gpu_wait_info w;
    memset(&w, 0, sizeof w);
    w.timeout_ns = g->timeout_ns;
    w.rank = g->rank;
    w.pulse = -1;
    w.dim = -1;
    w.kind = HXI_WAIT_VOTE;
    HXI_CUDA(hxi_shm_vote_launch(g->stream, in, out, s->vslot, s->d_vpeer, s->d_vseq, w, g->nranks,
                                 g->d_hit, g->rec_d));
    return HX_OK;
}
