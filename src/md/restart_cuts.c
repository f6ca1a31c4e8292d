/*
 * restart_cuts.c - the decomposition's cuts in a version 6 restart file
 * (restart_header.c has the layout): where some dimension's cuts were set
 * (`balance`, `fix balance`: hx_decomp_set_cuts), the header grows by
 * this block, in the writer's byte order:
 *     0..11    the rank grid (3 x int32)
 *    12..15    which dimensions have cuts (uint32; bit d: along d)
 *    16..      for each such d in order, its grid[d] + 1 cuts (doubles,
 *              fractions of the face distance, 0 first, 1 last)
 *    then      the block's checksum (uint64, FNV-1a over the bytes before)
 * A file read on the same grid by the CPU engine restores them before its
 * atoms go to their ranks; elsewhere (another grid, the GPU engine, which
 * runs uniform domains so far, or cuts too thin for the run's halo
 * cutoff) the domains are uniform and rank 0 says so.
 */
#include "md/restart_header.h"

#include "md/balance.h"
#include "md/md_driver.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifdef HALOX_MD_GPU_ENGINE
#include <cuda_runtime_api.h>
#endif

uint64_t hxi_rst_cuts_bytes(const hxi_md_restart *h)
{
    uint64_t n = 0;
    if (!h->cut_mask)
        return 0;
    for (int d = 0; d < 3; d++)
        if (h->cut_mask & (1u << d))
            n += (uint64_t) h->cut_grid[d] + 1;
    return 16 + 8 * n + 8;
}

void hxi_rst_cuts_from(hxi_md_restart *h, const hx_decomp *d)
{
    h->cut_mask = 0;
    memcpy(h->cut_grid, d->grid, sizeof h->cut_grid);
    for (int k = 0; k < 3; k++)
        if (d->cuts_set[k]) {
            h->cut_mask |= 1u << k;
            memcpy(h->cut[k], d->cut[k], sizeof(double) * (size_t) (d->grid[k] + 1));
        }
}

void hxi_rst_cuts_encode(unsigned char *b, const hxi_md_restart *h)
{
    const uint64_t n = hxi_rst_cuts_bytes(h);
    const uint32_t mask = h->cut_mask;
    size_t at = 16;
    uint64_t sum;
    for (int d = 0; d < 3; d++) {
        const int32_t g = h->cut_grid[d];
        memcpy(b + 4 * (size_t) d, &g, 4);
    }
    memcpy(b + 12, &mask, 4);
    for (int d = 0; d < 3; d++)
        if (mask & (1u << d)) {
            const size_t k = 8 * (size_t) (h->cut_grid[d] + 1);
            memcpy(b + at, h->cut[d], k);
            at += k;
        }
    sum = hxi_rst_fnv(RST_FNV_START, b, (size_t) n - 8);
    memcpy(b + n - 8, &sum, 8);
}

/* Cuts 0 = c[0] < ... < c[n] = 1, each finite. */
static int rst_cuts_ok(const double *c, int n)
{
    if (c[0] != 0.0 || c[n] != 1.0)
        return 0;
    for (int k = 1; k <= n; k++)
        if (!isfinite(c[k]) || !(c[k] > c[k - 1]))
            return 0;
    return 1;
}

hx_status hxi_rst_cuts_decode(const unsigned char *b, uint64_t n, const char *path,
                              hxi_md_restart *h)
{
    int32_t g[3];
    uint32_t mask;
    uint64_t sum;
    size_t at = 16;
    h->cut_mask = 0;
    if (n == 0)
        return HX_OK;
    memcpy(g, b, sizeof g);
    memcpy(&mask, b + 12, 4);
    memcpy(&sum, b + n - 8, 8);
    if (sum != hxi_rst_fnv(RST_FNV_START, b, (size_t) n - 8))
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: the domains' cuts' checksum does not match: the "
                         "file is damaged",
                         path);
    for (int d = 0; d < 3; d++)
        h->cut_grid[d] = g[d];
    h->cut_mask = mask;
    for (int d = 0; d < 3; d++)
        if (g[d] < 1 || g[d] > HX_MAX_CUT_DOMAINS)
            h->cut_mask = 8; /* refused below */
    if (h->cut_mask == 0 || h->cut_mask > 7 || hxi_rst_cuts_bytes(h) != n)
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: a block of domain cuts of %llu bytes that does not "
                         "fit its grid %dx%dx%d: the file is damaged",
                         path, (unsigned long long) n, g[0], g[1], g[2]);
    for (int d = 0; d < 3; d++) {
        if (!(mask & (1u << d)))
            continue;
        memcpy(h->cut[d], b + at, 8 * (size_t) (g[d] + 1));
        at += 8 * (size_t) (g[d] + 1);
        if (!rst_cuts_ok(h->cut[d], g[d]))
            return hxi_error(HX_ERR_PARSE,
                             "restart file %s: the domain cuts along %c are not increasing "
                             "from 0 to 1: the file is damaged",
                             path, 'x' + d);
    }
    return HX_OK;
}

/* Whether the run is on the CPU engine, as run.c chooses it: 1 for
 * --cpu, without a GPU engine built, and left to choose for the deck's
 * own cuts; 0 for --gpu; -1 left to choose
 * otherwise (the CPU engine where some rank sees no device). */
void hxi_rst_cuts_engine(hxi_md_restart *h, const hx_md_config *cfg)
{
#ifdef HALOX_MD_GPU_ENGINE
    if (cfg->use_gpu < 0)
        h->cuts_cpu = hxi_md_cpu_only(cfg) ? 1 : -1;
    else
        h->cuts_cpu = cfg->use_gpu == 0;
#else
    h->cuts_cpu = cfg->use_gpu != 1;
#endif
}

/* Collective: 1 where the run is on the CPU engine (h->cuts_cpu -1: some
 * rank sees no device, the fewest over the ranks as run.c counts them). */
static int rst_on_cpu(hx_comm *comm, const hxi_md_restart *h)
{
    int least = 0;
    if (h->cuts_cpu >= 0)
        return h->cuts_cpu;
#ifdef HALOX_MD_GPU_ENGINE
    if (cudaGetDeviceCount(&least) != cudaSuccess)
        least = 0;
#endif
    least = -least;
    if (hxi_allreduce_int(comm, &least, 1, 1) != HX_OK)
        return 0;
    return least == 0;
}

void hxi_md_restart_cuts_restore(hx_comm *comm, const hxi_md_restart *h, hx_decomp *d,
                                 const char *path)
{
    const char *why = NULL;
    hx_decomp with = *d;
    if (!h->cut_mask)
        return;
    if (memcmp(h->cut_grid, d->grid, sizeof h->cut_grid) != 0)
        why = "another rank grid";
    else if (!rst_on_cpu(comm, h))
        why = "the GPU engine, which runs uniform domains so far (--cpu keeps the cuts),";
    for (int k = 0; !why && k < 3; k++)
        if ((h->cut_mask & (1u << k)) && hx_decomp_set_cuts(&with, k, h->cut[k]) != HX_OK)
            why = "a halo cutoff too large for them";
    if (!why) {
        *d = with;
        return;
    }
    if (d->rank == 0) {
        printf("halox-md: note: restart file %s holds the domains' cuts of grid %dx%dx%d; "
               "with %s (grid %dx%dx%d) the domains are uniform (a balance command sets new "
               "cuts)\n",
               path, h->cut_grid[0], h->cut_grid[1], h->cut_grid[2], why, d->grid[0], d->grid[1],
               d->grid[2]);
        fflush(stdout);
    }
}
