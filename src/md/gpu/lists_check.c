/*
 * lists_check.c - HALOX_MD_CHECK=lists (the tests set it): after each
 * two-half list build of a multi-rank device rebuild, the one-pass build
 * (hxg_build_lists, the host path's) makes lists of its own from the same
 * atoms, and the two are compared on the host: each home atom's local list
 * slot by slot (the same candidates in the same order), each local atom's
 * non-local list as a set (the halves list a halo atom's home partners
 * first). The atoms the non-local forces visit must be those with a
 * non-local list and the targets of the transport's maps, in index order.
 * A difference is an error naming the atom.
 */
#include "md/gpu/engine.h"

#include <stdlib.h>
#include <string.h>

/* One list of the device on the host: counts of n atoms, max slots of
 * stride rows, and each atom's row where the list is compact. */
typedef struct {
    int32_t *cnt, *nb, *row;
    int32_t stride, max;
} host_list;

static hx_status fetch_list(const hxg_list *l, int n, host_list *h)
{
    size_t slots = (size_t) l->max * (size_t) l->stride;
    h->stride = l->stride;
    h->max = l->max;
    h->cnt = malloc(sizeof(int32_t) * (size_t) (n > 0 ? n : 1));
    h->nb = malloc(sizeof(int32_t) * (slots > 0 ? slots : 1));
    h->row = l->row ? malloc(sizeof(int32_t) * (size_t) (n > 0 ? n : 1)) : NULL;
    if (!h->cnt || !h->nb || (l->row && !h->row))
        return hxi_error(HX_ERR_NOMEM, "list check: host copies of the lists");
    if (n > 0)
        CU(cudaMemcpy(h->cnt, l->cnt, sizeof(int32_t) * (size_t) n, cudaMemcpyDeviceToHost),
           "list check copy");
    if (slots > 0)
        CU(cudaMemcpy(h->nb, l->nb, sizeof(int32_t) * slots, cudaMemcpyDeviceToHost),
           "list check copy");
    if (h->row && n > 0)
        CU(cudaMemcpy(h->row, l->row, sizeof(int32_t) * (size_t) n, cudaMemcpyDeviceToHost),
           "list check copy");
    return HX_OK;
}

static void free_host(host_list *h)
{
    free(h->cnt);
    free(h->nb);
    free(h->row);
}

static int cmp_int(const void *a, const void *b)
{
    int32_t x = *(const int32_t *) a, y = *(const int32_t *) b;
    return (x > y) - (x < y);
}

/* Atom i's entries in slot order into out (at most max); -1 for a count
 * without a row (which the build reports before any check). */
static int entries(const host_list *h, int i, int32_t *out)
{
    int c = h->cnt[i] < h->max ? h->cnt[i] : h->max;
    int r = h->row ? h->row[i] : i;
    if (c > 0 && r < 0)
        return -1;
    for (int s = 0; s < c; s++)
        out[s] = h->nb[(size_t) s * (size_t) h->stride + (size_t) r];
    return c;
}

/* The first atom of [0, n) whose lists differ, or -1; sets: compare as
 * sets (sorted first). */
static int first_difference(const host_list *a, const host_list *b, int n, int sets, int32_t *ea,
                            int32_t *eb)
{
    for (int i = 0; i < n; i++) {
        int ca = entries(a, i, ea), cb = entries(b, i, eb);
        if (ca < 0 || cb < 0 || ca != cb)
            return i;
        if (sets) {
            qsort(ea, (size_t) ca, sizeof *ea, cmp_int);
            qsort(eb, (size_t) cb, sizeof *eb, cmp_int);
        }
        if (memcmp(ea, eb, sizeof *ea * (size_t) ca) != 0)
            return i;
    }
    return -1;
}

/* The atoms of the non-local forces (nl_idx) against those with a list
 * (cnt, on the host) and the maps' targets (none on a full-shell plan,
 * which has no reverse exchange). */
static hx_status check_nl_atoms(hx_md_engine *e, const int32_t *cnt)
{
    const hx_plan *p = e->xport.plan;
    const int nmaps = hxg_eng_reverse_entries(e, p), n = e->atoms.ntotal;
    int32_t *maps = malloc(sizeof(int32_t) * (size_t) (nmaps > 0 ? nmaps : 1));
    int32_t *idx = malloc(sizeof(int32_t) * (size_t) (n > 0 ? n : 1));
    char *want = calloc((size_t) (n > 0 ? n : 1), 1);
    hx_status st = HX_OK;
    if (!maps || !idx || !want)
        st = hxi_error(HX_ERR_NOMEM, "list check: the non-local atoms");
    if (st == HX_OK && nmaps > 0 &&
        cudaMemcpy(maps, hx_plan_device_maps(p), sizeof(int32_t) * (size_t) nmaps,
                   cudaMemcpyDeviceToHost) != cudaSuccess)
        st = cuda_fail(cudaGetLastError(), "list check copy");
    if (st == HX_OK && e->lists.nl_atoms > 0 &&
        cudaMemcpy(idx, e->lists.nl_idx, sizeof(int32_t) * (size_t) e->lists.nl_atoms,
                   cudaMemcpyDeviceToHost) != cudaSuccess)
        st = cuda_fail(cudaGetLastError(), "list check copy");
    int count = 0, bad = -1;
    for (int i = 0; st == HX_OK && i < n; i++)
        want[i] = cnt[i] > 0;
    for (int k = 0; st == HX_OK && k < nmaps; k++)
        if (maps[k] >= 0 && maps[k] < n)
            want[maps[k]] = 1;
    for (int i = 0; st == HX_OK && i < n; i++) {
        if (!want[i])
            continue;
        if (bad < 0 && (count >= e->lists.nl_atoms || idx[count] != i))
            bad = i;
        count++;
    }
    if (st == HX_OK && (bad >= 0 || count != e->lists.nl_atoms))
        st = hxi_error(HX_ERR_STATE,
                       "GPU engine: at the rebuild of step %lld on rank %d the non-local forces "
                       "would visit %d atoms where %d have a non-local list or are a map's "
                       "target (first difference at atom %d)",
                       (long long) (e->cfg.first_step + e->step), e->rank, e->lists.nl_atoms, count,
                       bad);
    free(maps);
    free(idx);
    free(want);
    return st;
}

hx_status hxg_eng_check_lists(hx_md_engine *e)
{
    hxg_list loc = e->lists.loc, nl = e->lists.nl;
    hx_status st = HX_OK;
    host_list h[4];
    memset(h, 0, sizeof h);
    int32_t *ea = NULL, *eb = NULL;
    /* The one-pass lists, of the same room and layout, from the zones the
     * non-local half read: the device plan's own. */
    const uint8_t *zones =
        hx_plan_on_device(e->xport.plan) ? hx_plan_device_zones(e->xport.plan) : e->atoms.zones;
    loc.cnt = loc.nb = nl.cnt = nl.nb = NULL;
    nl.row = NULL; /* a row for every local atom */
    nl.stride = e->atoms.cap_total;
    size_t bloc = 4 * (size_t) loc.max * (size_t) loc.stride;
    size_t bnl = 4 * (size_t) nl.max * (size_t) nl.stride;
    if (cudaMalloc((void **) &loc.cnt, 4 * (size_t) e->atoms.cap_home) != cudaSuccess ||
        cudaMalloc((void **) &loc.nb, bloc > 0 ? bloc : 4) != cudaSuccess ||
        cudaMalloc((void **) &nl.cnt, 4 * (size_t) e->atoms.cap_total) != cudaSuccess ||
        cudaMalloc((void **) &nl.nb, bnl > 0 ? bnl : 4) != cudaSuccess)
        st = cuda_fail(cudaGetLastError(), "list check allocation");
    hxg_atoms_view a = hxg_eng_atoms_view(e);
    hxg_lists_view l = hxg_eng_lists_view(e);
    a.zones = zones;
    l.loc = loc;
    l.nl = nl;
    l.pos = NULL;
    if (st == HX_OK && (hxg_build_lists((void *) e->dev.s_nl, a, hxg_eng_cells_view(&e->cells), l,
                                        e->dev.flags) != 0 ||
                        cudaStreamSynchronize(e->dev.s_nl) != cudaSuccess))
        st = cuda_fail(cudaGetLastError(), "the one-pass list build of the list check");
    if (st == HX_OK)
        st = fetch_list(&e->lists.loc, e->atoms.nhome, &h[0]);
    if (st == HX_OK)
        st = fetch_list(&loc, e->atoms.nhome, &h[1]);
    if (st == HX_OK)
        st = fetch_list(&e->lists.nl, e->atoms.ntotal, &h[2]);
    if (st == HX_OK)
        st = fetch_list(&nl, e->atoms.ntotal, &h[3]);
    int most = loc.max > nl.max ? loc.max : nl.max;
    if (st == HX_OK) {
        ea = malloc(sizeof(int32_t) * (size_t) (most > 0 ? most : 1));
        eb = malloc(sizeof(int32_t) * (size_t) (most > 0 ? most : 1));
        if (!ea || !eb)
            st = hxi_error(HX_ERR_NOMEM, "list check: scratch");
    }
    if (st == HX_OK) {
        int i = first_difference(&h[0], &h[1], e->atoms.nhome, 0, ea, eb);
        int k = i < 0 ? first_difference(&h[2], &h[3], e->atoms.ntotal, 1, ea, eb) : -1;
        if (i >= 0 || k >= 0)
            st = hxi_error(HX_ERR_STATE,
                           "GPU engine: at the rebuild of step %lld on rank %d the two-half "
                           "list build and the one-pass build differ in the %s list of %s atom "
                           "%d (%d home, %d local atoms)",
                           (long long) (e->cfg.first_step + e->step), e->rank,
                           i >= 0 ? "local" : "non-local",
                           (i >= 0 || k < e->atoms.nhome) ? "home" : "halo", i >= 0 ? i : k,
                           e->atoms.nhome, e->atoms.ntotal);
    }
    if (st == HX_OK && e->lists.nl_on)
        st = check_nl_atoms(e, h[2].cnt);
    for (int q = 0; q < 4; q++)
        free_host(&h[q]);
    free(ea);
    free(eb);
    cudaFree(loc.cnt);
    cudaFree(loc.nb);
    cudaFree(nl.cnt);
    cudaFree(nl.nb);
    cudaGetLastError();
    return st;
}
