/*
 * fix_balance.c - LAMMPS's `fix balance` on the GPU engine: at a
 * rebalancing step the home atoms are counted on the GPU (md_balance.cu:
 * slabs along a dimension, atoms per owner), only the counts come to the
 * host, and src/md/balance.c moves the cuts from them as it does for the
 * CPU engine (the threshold, hx_balance_shift, the dimensions' loop). The
 * new cuts go into the engine's decomposition and the device rebuild's,
 * the cell grid and the halo's reach follow, and that step's rebuild
 * takes the atoms to their new domains and plans the new halo (the pulse
 * count may change: hx_transport_set_plan agrees on it over the ranks).
 */
#include "md/gpu/engine.h"

#include "md/balance.h"

#include <string.h>

/* The count's bins hold any grid a decomposition's cuts may have. */
_Static_assert(HXG_BAL_MAX == HX_MAX_CUT_DOMAINS, "HXG_BAL_MAX is HX_MAX_CUT_DOMAINS");

int hxg_eng_balance_due(const hx_md_engine *e, int64_t step)
{
    return e->multi && hxi_md_balance_due(&e->cfg.fix_balance, e->cfg.first_step + step);
}

void hxg_eng_balance_free(hx_md_engine *e)
{
    struct hxg_bal *b = &e->bal;
    if (b->moved > 0 && e->rank == 0 && hxi_log_level() >= 1)
        hxi_info("GPU engine: fix balance moved the cuts %lld time(s), the atoms through the "
                 "host %lld time(s)",
                 (long long) b->moved, (long long) b->via_host);
    if (b->d_cnt)
        cudaFree(b->d_cnt);
    if (b->h_cnt)
        cudaFreeHost(b->h_cnt);
    memset(b, 0, sizeof *b);
}

/* The box of d as the count reads it. */
static void grid_box(const hx_decomp *d, hxg_bal_grid *g)
{
    memset(g, 0, sizeof *g);
    for (int k = 0; k < 3; k++) {
        g->box_lo[k] = d->box_lo[k];
        g->box_len[k] = d->box_len[k];
        g->tilt[k] = d->tilt[k];
        g->grid[k] = 1;
        g->cut[k][1] = 1.0;
    }
    g->tri = d->triclinic;
}

/* The home atoms per bin of g (ncell bins) into the pinned e->bal.h_cnt.
 * Waits for the local stream, behind the step's kick-drift. Rank-local. */
static hx_status count_bins(hx_md_engine *e, const hxg_bal_grid *g, int ncell)
{
    struct hxg_bal *b = &e->bal;
    HXI_CHECK(hxg_eng_dev_grow(&b->d_cnt, &b->b_cnt, hxg_bal_bytes(ncell), "fix balance's count"));
    if (ncell > b->h_cap) {
        if (b->h_cnt)
            cudaFreeHost(b->h_cnt);
        b->h_cnt = NULL;
        b->h_cap = 0;
        CU(cudaMallocHost((void **) &b->h_cnt, sizeof(int32_t) * (size_t) ncell),
           "pinned memory for fix balance's count");
        b->h_cap = ncell;
    }
    CU(hxg_bal_count((void *) e->dev.s_loc, e->atoms.x4, e->atoms.nhome, g, b->d_cnt),
       "fix balance's count");
    CU(cudaMemcpyAsync(b->h_cnt, b->d_cnt, sizeof(int32_t) * (size_t) ncell, cudaMemcpyDeviceToHost,
                       e->dev.s_loc),
       "fix balance's count read-back");
    CU(cudaStreamSynchronize(e->dev.s_loc), "fix balance's count");
    return HX_OK;
}

/* hxi_md_bal_count's slabs: cuts along dim, one bin along the others. */
static hx_status gpu_slabs(void *arg, const hx_decomp *d, int dim, const double *cuts, int n,
                           double *counts)
{
    hx_md_engine *e = arg;
    hxg_bal_grid g;
    if (n < 1 || n > HXG_BAL_MAX)
        return hxi_error(HX_ERR_INVALID, "fix balance: %d slabs along %c (at most %d)", n,
                         'x' + dim, HXG_BAL_MAX);
    grid_box(d, &g);
    g.grid[dim] = n;
    memcpy(g.cut[dim], cuts, sizeof(double) * (size_t) (n + 1));
    HXI_CHECK(count_bins(e, &g, n));
    for (int i = 0; i < n; i++)
        counts[i] = e->bal.h_cnt[i];
    return HX_OK;
}

/* hxi_md_bal_count's owners: d's cuts along every dimension, each bin
 * the domain of one rank. */
static hx_status gpu_owners(void *arg, const hx_decomp *d, double *count)
{
    hx_md_engine *e = arg;
    hxg_bal_grid g;
    grid_box(d, &g);
    for (int k = 0; k < 3; k++) {
        const int n = d->grid[k];
        if (n > HXG_BAL_MAX)
            return hxi_error(HX_ERR_INVALID, "fix balance: %d domains along %c (at most %d)", n,
                             'x' + k, HXG_BAL_MAX);
        g.grid[k] = n;
        for (int c = 0; c <= n; c++)
            g.cut[k][c] = d->cuts_set[k] ? d->cut[k][c] : (double) c / n;
    }
    const int ncell = d->grid[0] * d->grid[1] * d->grid[2];
    HXI_CHECK(count_bins(e, &g, ncell));
    for (int c = 0; c < ncell; c++) {
        const int at[3] = {c % d->grid[0], c / d->grid[0] % d->grid[1],
                           c / (d->grid[0] * d->grid[1])};
        count[hx_decomp_rank_at(d, at)] += e->bal.h_cnt[c];
    }
    return HX_OK;
}

/* The new cuts d into the engine (and its system, whose decomposition a
 * restart file writes) and into the device rebuild's context: *via_host
 * where that context refuses them (along a dimension of four domains or
 * more a bound moved past an old neighbouring one: an atom would go
 * further than the device migration takes it). Collective. */
static hx_status adopt_cuts(hx_md_engine *e, const hx_decomp *d, int *via_host)
{
    hx_status st = HX_OK;
    int host = 0;
    if (e->rebuild.rb) {
        st = hx_rebuild_set_decomp(e->rebuild.rb, d);
        if (st == HX_ERR_INVALID) {
            host = 1;
            st = HX_OK;
        }
    }
    e->decomp = *d;
    e->sys->decomp = *d;
    if (st == HX_OK)
        st = hxg_eng_domain_changed(e);
    HXI_CHECK(hxi_agree(e->comm, st));
    HXI_CHECK(hxi_allreduce_int(e->comm, &host, 1, 1));
    *via_host = host;
    return HX_OK;
}

/* A rebuild through the host to the new domains, as the set-up's first
 * build (no device rebuild context: the lists build in one pass), then a
 * new context on them for the rebuilds after, and the census where the
 * device rebuilds take one. Collective. */
static hx_status rebuild_via_host(hx_md_engine *e)
{
    hx_rebuild_destroy(e->rebuild.rb);
    e->rebuild.rb = NULL;
    HXI_CHECK(hxg_eng_rebuild_host(e, 0));
    e->bal.via_host++;
    HXI_CHECK(hx_rebuild_create(&e->rebuild.rb, e->xport.t, &e->decomp));
    HXI_CHECK(hxi_agree(e->comm, hx_rebuild_keep_order(e->rebuild.rb, 0)));
    /* Counted as after a device rebuild (HALOX_MD_CHECK=atoms). */
    return e->rebuild.check_atoms ? hxg_eng_census(e) : HX_OK;
}

hx_status hxg_eng_balance_rebuild(hx_md_engine *e)
{
    hxi_md_bal_count c = {e->atoms.nhome, gpu_slabs, gpu_owners, e};
    hx_decomp d = e->decomp;
    int changed = 0, via_host = 0;
    HXI_CHECK(hxi_md_balance_fix_with(e->comm, &e->cfg.fix_balance, &d, &c, &changed));
    if (changed) {
        HXI_CHECK(adopt_cuts(e, &d, &via_host));
        e->bal.moved++;
    }
    if (via_host && e->rebuild.rb)
        return rebuild_via_host(e);
    return e->rebuild.rb ? hxg_eng_rebuild_device(e) : hxg_eng_rebuild_host(e, 0);
}
