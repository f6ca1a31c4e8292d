/*
 * gather.c - every rank's atoms on rank 0, placed by global id, for the
 * trajectory and restart writers. A record is x, v and, for a restart
 * file of an engine that keeps them, the positions of the last list build,
 * then, where the atoms have types (several), the atom's type.
 */
#include "md/md_driver.h"

#include <stdlib.h>
#include <string.h>

void hxi_md_gather_free(hxi_md_gather *g)
{
    free(g->all);
    free(g->pack);
    free(g->counts);
    free(g->displs);
    memset(g, 0, sizeof *g);
}

/* Room for this rank's packed atoms, rank 0's frame and the counts. */
static hx_status hxi_gather_room(hxi_md_gather *g, int rank, int size, const hx_md_system *sys,
                                 const char *what)
{
    const size_t w = (size_t) g->width;
    if ((int64_t) (sys->n + 1) * (int64_t) (w + 1) > g->cap_pack) {
        HXI_CHECK(
            hxi_grow((void **) &g->pack, (size_t) (sys->n + 1) * (w + 1) * sizeof(double), what));
        g->cap_pack = (int64_t) (sys->n + 1) * (int64_t) (w + 1);
    }
    if (rank == 0 && sys->natoms * (int64_t) w > g->cap_all) {
        HXI_CHECK(hxi_grow((void **) &g->all, (size_t) sys->natoms * w * sizeof(double), what));
        g->cap_all = sys->natoms * (int64_t) w;
    }
    if (!g->counts) {
        HXI_CHECK(hxi_alloc((void **) &g->counts, (size_t) size * sizeof(int), what));
        HXI_CHECK(hxi_alloc((void **) &g->displs, (size_t) size * sizeof(int), what));
    }
    return HX_OK;
}

/* Rank 0: the packed (id, record) pairs into g->all by id; every id once. */
static hx_status hxi_gather_place(hxi_md_gather *g, const double *recv, int64_t natoms,
                                  const char *what)
{
    const size_t w = (size_t) g->width;
    unsigned char *seen = calloc((size_t) natoms + 1, 1);
    hx_status st = HX_OK;
    if (!seen)
        return hxi_error(HX_ERR_NOMEM, "%s: out of memory for %lld atoms", what,
                         (long long) natoms);
    for (int64_t k = 0; k < natoms && st == HX_OK; k++) {
        const double *p = recv + (w + 1) * (size_t) k;
        int64_t id = (int64_t) p[0];
        if (!(p[0] >= 0) || id >= natoms)
            st = hxi_error(HX_ERR_STATE, "%s: atom id %.0f outside 0..%lld", what, p[0],
                           (long long) natoms - 1);
        else if (seen[id]++)
            st = hxi_error(HX_ERR_STATE, "%s: atom id %lld held twice (and another lost)", what,
                           (long long) id);
        else
            memcpy(g->all + w * (size_t) id, p + 1, w * sizeof(double));
    }
    free(seen);
    return st;
}

/* This rank's (id, record) pairs into g->pack. */
static void hxi_gather_pack(hxi_md_gather *g, const hx_md_system *sys)
{
    const size_t w = (size_t) g->width;
    for (int i = 0; i < sys->n; i++) {
        double *p = g->pack + (w + 1) * (size_t) i;
        p[0] = (double) sys->id[i];
        memcpy(p + 1, sys->x + 3 * (size_t) i, 3 * sizeof(double));
        memcpy(p + 4, sys->v + 3 * (size_t) i, 3 * sizeof(double));
        if (w >= 9)
            memcpy(p + 7, sys->xref + 3 * (size_t) i, 3 * sizeof(double));
        if (g->typed)
            p[w] = (double) sys->type[i];
    }
}

hx_status hxi_md_gather_by_id(hxi_md_gather *g, hx_comm *comm, const hx_md_system *sys,
                              int with_ref, const char *what)
{
    int rank = hx_comm_rank(comm), size = hx_comm_size(comm);
    hx_status st;
    double *recv = NULL;
    int64_t total = 0;

    g->typed = sys->type != NULL;
    g->width = (with_ref && sys->has_ref ? 9 : 6) + g->typed;
    HXI_CHECK(hxi_agree(comm, hxi_gather_room(g, rank, size, sys, what)));
    hxi_gather_pack(g, sys);
    const int rec = g->width + 1;
    {
        int nv = rec * sys->n;
        HXI_CHECK(hxi_allgather(comm, &nv, sizeof nv, g->counts));
    }
    for (int r = 0; r < size; r++) {
        g->displs[r] = (int) total;
        total += g->counts[r];
    }
    if (total != rec * sys->natoms || total > INT32_MAX)
        return hxi_error(HX_ERR_STATE,
                         "%s: the ranks hold %lld values, not %d x %lld atoms: atoms were lost "
                         "(or the system is too large for one gather)",
                         what, (long long) total, rec, (long long) sys->natoms);
    st = rank == 0 ? hxi_alloc((void **) &recv, (size_t) total * sizeof(double) + 1, what) : HX_OK;
    HXI_CHECK(hxi_agree(comm, st));
    st = hxi_gatherv(comm, g->pack, rec * sys->n, recv, g->counts, g->displs, 0, 1);
    if (st != HX_OK) {
        free(recv);
        return st;
    }
    st = rank == 0 ? hxi_gather_place(g, recv, sys->natoms, what) : HX_OK;
    free(recv);
    return hxi_agree(comm, st);
}
