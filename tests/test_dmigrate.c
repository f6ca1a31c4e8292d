/*
 * test_dmigrate: hx_rebuild_migrate (device arrays) against hx_migrate (the
 * host reference, same float inputs widened to double) and against
 * brute-force invariants, on every grid of the rank count (or --grid AxBxC)
 * with one device transport (--transport NAME, else the first of
 * nvshmem-fused, mpi, nccl that is built and can be created).
 *
 * Each rank holds a random system's atoms: positions (xstride 3 or 4; the
 * 4th word is payload, (float) id + 0.25) and two fields, velocity
 * (id, id + 0.5, -id, 7) and the int64 id. Cases per grid:
 *  1. random displacements, up to 0.9 domain widths along decomposed
 *     dimensions and up to 1.9 box lengths along the others (so that
 *     positions wrap), in five rounds covering xstride 3 and 4 and 0 and 2
 *     fields, one round with the fields going on from the last migration;
 *     on the first grid 70,000 atoms per rank (more than 256 blocks of 256;
 *     --atoms N sets this number: test_dmigrate_big gives 1,100,000, more
 *     blocks than one pass of the class counts' scan takes);
 *  2. in every migration: the same atoms in the same order on each rank as
 *     hx_migrate, every atom inside this rank's domain, its position the
 *     host's float wrap of the displaced one (bitwise where no wrap was
 *     needed, 2 ulp of the box length where it was), its payload with it,
 *     every id once over all ranks, and the census count and checksum
 *     unchanged. Displaced atoms are kept 1e-4 from every domain bound, so
 *     that float (device) and double (host) wrapping agree on the owner;
 *  3. one atom 1.5 domain widths from its domain along a dimension of 4 or
 *     more domains (the lowest such, which the migration handles last),
 *     every atom also displaced up to 0.9 domains along the other
 *     decomposed dimensions where there are any (on 8 ranks: 4x2x1 and
 *     1x2x4): HX_ERR_COORD_OUTSIDE naming the atom on every rank before any
 *     atom moves (the same ids in the same order on every rank, every
 *     position wrapped, the census unchanged), then the same move without
 *     the far atom works and moves atoms; along a dimension of 3 domains
 *     the far move is one domain the other way and must work;
 *  4. a NaN and an infinite coordinate: HX_ERR_COORD_NAN on every rank,
 *     nothing lost; a NaN in the 4th (payload) word is carried, no error;
 *  5. capacity == n on every rank, then half of a neighbour's atoms crowd
 *     into rank 0: its arrays grow, the others' stay where they are;
 *  6. rank 0 sends every atom to its upper neighbour (no other rank receives
 *     anything), then they come back to a rank with no arrays (capacity 0)
 *     and every rank holds what it held before, in the same order;
 *  and the census itself must see a lost and a duplicated id;
 *  7. without order (hx_rebuild_keep_order(r, 0)): three rounds of case 1
 *     (fields fresh, then carried on), case 5 and case 6, each rank's atoms
 *     compared with hx_migrate's as a set of ids, every atom's data with its
 *     id, every id once.
 * Without a GPU the test exits 77 (skipped).
 */
#include "dmigrate_util.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W_DOM  3.5   /* domain width along decomposed dimensions */
#define L_FREE 9.25  /* box length along undecomposed ones */
#define RH     1.5   /* halo cutoff (the decomposition needs one) */
#define NBIG   70000 /* atoms per rank on the first grid: over 256 blocks */
#define NSMALL 800   /* atoms per rank on the others */

static const double box_lo[3] = {-1.5, 0.75, 2.0};

/* Case 1: random displacements; five rounds of strides and fields. */
static int case_random(hxt_dm_ctx *c, int round, int xs, int nf, int full)
{
    const int N = c->N, fails0 = hxt_failures;
    float *tgt = hxt_xmalloc((size_t) N * 3 * sizeof(float));
    hxt_rng rg = {0x5eed0000u + 97u * (uint64_t) c->gi + (uint64_t) round};
    long wrap_dec = 0, wrap_free = 0;
    int ndec = 0;
    for (int k = 0; k < 3; k++)
        ndec += c->d.grid[k] > 1;
    for (int a = 0; a < N; a++) {
        for (int k = 0; k < 3; k++) {
            double w = c->d.box_len[k] / c->d.grid[k];
            double reach = c->d.grid[k] > 1 ? 0.9 * w : 1.9 * c->d.box_len[k];
            tgt[3 * a + k] =
                (float) ((double) c->cur[3 * a + k] + (2.0 * hxt_uniform(&rg) - 1.0) * reach);
        }
        hxt_dm_settle(c, &tgt[3 * a]);
        for (int k = 0; k < 3; k++)
            if (hxt_dm_outside_box(c, k, tgt[3 * a + k])) {
                if (c->d.grid[k] > 1)
                    wrap_dec++;
                else
                    wrap_free++;
            }
    }
    int moved = 0;
    int ok = hxt_dm_migrate_case(c, tgt, xs, nf, 0, full, &moved);
    /* The round must have exercised what it claims to. */
    if (ok && c->nr > 1)
        HXT_CHECK(moved > 0, "grid %s: no atom changed rank", c->gs);
    if (ndec > 0)
        HXT_CHECK(wrap_dec > 0, "grid %s: no move crossed the box along a decomposed dimension",
                  c->gs);
    if (ndec < 3)
        HXT_CHECK(wrap_free > 0, "grid %s: no move crossed the box along an undecomposed one",
                  c->gs);
    hxt_dm_summary(c, fails0,
                   "case 1 round %d (%d atoms, xstride %d, %d fields%s): %d changed rank, %ld+%ld "
                   "coordinates wrapped",
                   round, N, xs, nf, full ? "" : ", fields from the last migration", moved,
                   wrap_dec, wrap_free);
    free(tgt);
    return ok;
}

/* The first (x, y, z order) or last decomposed dimension; -1 if none. */
static int decomposed_dim(const hxt_dm_ctx *c, int last)
{
    int e = -1;
    for (int k = 0; k < 3; k++)
        if (c->d.grid[k] > 1 && (e < 0 || last))
            e = k;
    return e;
}

static int decomp_of(const hxt_dm_ctx *c, int rank, hx_decomp *o)
{
    return HXT_OK(
        hx_decomp_init(o, c->d.box_lo, c->d.box_len, c->d.cutoff, c->d.grid, c->nr, rank));
}

/* The set-up of cases 5 and 6: a decomposed dimension e (the last or the
 * first, see decomposed_dim), rank 0's upper neighbour along it, the
 * domain width and that neighbour's lower bound. 0 (the case reported as
 * not run) where no dimension is decomposed or on a failure. */
static int toward_rank0(hxt_dm_ctx *c, int last, const char *what, int *e, int *up, double *w,
                        double *lo_up)
{
    *e = decomposed_dim(c, last);
    if (*e < 0) {
        hxt_dm_not_run(c, what);
        return 0;
    }
    hx_decomp d0;
    if (!hxt_agree(c->comm, decomp_of(c, 0, &d0)))
        return 0;
    *up = d0.up[*e];
    *w = c->d.box_len[*e] / c->d.grid[*e];
    *lo_up = c->bound[*e][1];
    return 1;
}

/* Case 5: capacity exactly n everywhere, then the lower part of rank 0's
 * upper neighbour along one dimension moves into rank 0. */
static void case_crowd(hxt_dm_ctx *c)
{
    const int fails0 = hxt_failures, N = c->N;
    int e, up;
    double w, lo_up;
    if (!toward_rank0(c, 1, "case 5 (crowded domain)", &e, &up, &w, &lo_up))
        return;
    float *tgt = hxt_xmalloc((size_t) N * 3 * sizeof(float));
    memcpy(tgt, c->cur, (size_t) N * 3 * sizeof(float));
    int nmove = 0;
    for (int a = 0; a < N; a++)
        if (c->holder[a] == up && (double) c->cur[3 * a + e] - lo_up < 0.45 * w) {
            tgt[3 * a + e] = (float) ((double) c->cur[3 * a + e] - 0.5 * w);
            hxt_dm_settle(c, &tgt[3 * a]);
            nmove++;
        }
    const int n0 = c->nloc;
    HXT_CHECK(nmove > 0, "grid %s: rank %d has no atoms to crowd rank 0 with", c->gs, up);
    /* Arrays of exactly n atoms; migrate_case then only rewrites them. */
    hxt_dm_dev *a = &c->a;
    int ok = hxt_dm_upload(c, tgt, 4, 1, 1);
    const void *p0[3] = {a->x, a->v, a->id};
    const int cap0 = a->cap;
    HXT_CHECK(!ok || cap0 == n0, "grid %s: tight capacity %d for %d atoms", c->gs, cap0, n0);
    if (ok)
        ok = hxt_dm_migrate_case(c, tgt, 4, 2, 0, 0, NULL);
    if (ok) {
        if (c->rank == 0) {
            HXT_CHECK(a->n == n0 + nmove && a->cap > cap0 && a->cap >= a->n,
                      "grid %s: rank 0 has %d atoms (want %d) in capacity %d (was %d)", c->gs, a->n,
                      n0 + nmove, a->cap, cap0);
        } else {
            HXT_CHECK(a->cap == cap0 && a->x == p0[0] && a->v == p0[1] && a->id == p0[2],
                      "grid %s: capacity %d (was %d) or arrays moved on a rank that received "
                      "nothing",
                      c->gs, a->cap, cap0);
            HXT_CHECK(a->n == n0 - (c->rank == up ? nmove : 0), "grid %s: %d atoms, had %d", c->gs,
                      a->n, n0);
        }
    }
    hxt_dm_summary(c, fails0, "case 5 (capacity == n, %d atoms of rank %d crowd into rank 0)",
                   nmove, up);
    free(tgt);
}

/* Case 6: rank 0 sends everything to its upper neighbour, then gets it
 * back. */
static void case_all_out(hxt_dm_ctx *c)
{
    const int fails0 = hxt_failures, N = c->N;
    int e, up;
    double w, lo_up;
    if (!toward_rank0(c, 0, "case 6 (a rank sends everything)", &e, &up, &w, &lo_up))
        return;
    float *orig = hxt_xmalloc((size_t) N * 3 * sizeof(float));
    float *tgt = hxt_xmalloc((size_t) N * 3 * sizeof(float));
    char *from0 = calloc((size_t) N, 1);
    int64_t *before = hxt_xmalloc(((size_t) c->nloc + 1) * sizeof(int64_t));
    const int nbefore = c->nloc, n0 = c->cnt[0];
    memcpy(before, c->loc, (size_t) nbefore * sizeof(int64_t));
    memcpy(orig, c->cur, (size_t) N * 3 * sizeof(float));
    memcpy(tgt, c->cur, (size_t) N * 3 * sizeof(float));
    hxt_rng rg = {0xa110u + (uint64_t) c->gi};
    for (int a = 0; a < N; a++) {
        double u = hxt_uniform(&rg);
        if (c->holder[a] != 0)
            continue;
        from0[a] = 1;
        tgt[3 * a + e] = (float) (lo_up + w * (0.05 + 0.9 * u));
        hxt_dm_settle(c, &tgt[3 * a]);
    }
    HXT_CHECK(n0 > 0, "grid %s: rank 0 has no atoms to send", c->gs);
    int ok = hxt_dm_migrate_case(c, tgt, 3, 2, 0, 1, NULL);
    if (ok) {
        int want = c->rank == 0 ? 0 : c->rank == up ? nbefore + n0 : nbefore;
        HXT_CHECK(c->a.n == want, "grid %s: %d atoms after rank 0 sent its %d, want %d", c->gs,
                  c->a.n, n0, want);
    }
    /* Back where they were; rank 0 starts with no arrays at all. */
    memcpy(tgt, c->cur, (size_t) N * 3 * sizeof(float));
    for (int a = 0; a < N; a++)
        if (from0[a])
            memcpy(&tgt[3 * a], &orig[3 * a], 3 * sizeof(float));
    if (ok) {
        ok = hxt_dm_migrate_case(c, tgt, 4, 2, 1, 1, NULL);
        int same = c->nloc == nbefore;
        for (int i = 0; same && i < nbefore; i++)
            same = c->loc[i] == before[i];
        if (c->any_order && c->nloc == nbefore)
            same = hxt_dm_set_differs(c->loc, c->nloc, before, nbefore) == 0;
        HXT_CHECK(!ok || same,
                  "grid %s: after the way back this rank holds %d atoms, not the %d "
                  "it held before%s",
                  c->gs, c->nloc, nbefore, c->any_order ? "" : " in their order");
    }
    hxt_dm_summary(
        c, fails0,
        "case 6 (rank 0 sends all %d atoms to rank %d, no other rank receives; and back into "
        "capacity 0)",
        n0, up);
    free(orig);
    free(tgt);
    free(from0);
    free(before);
}

/* The highest (or lowest) rank holding atoms; -1 if none. */
static int rank_with_atoms(const hxt_dm_ctx *c, int highest)
{
    int f = -1;
    for (int r = 0; r < c->nr; r++)
        if (c->cnt[r] > 0 && (f < 0 || highest))
            f = r;
    return f;
}

/* Case 3: an atom 1.5 domain widths from home. Where another dimension is
 * decomposed too, every atom also moves up to 0.9 domains along it: the
 * first pass must refuse the far atom before any of them moves. */
static void case_far(hxt_dm_ctx *c)
{
    const int fails0 = hxt_failures, N = c->N;
    /* A dimension of 4 or more domains, else one of 3. Of several with 4 or
     * more, the lowest: the migration goes Z, Y, X, so the others' atoms
     * would move before the far one is met. */
    int fd = -1;
    for (int k = 0; k < 3; k++)
        if (c->d.grid[k] >= 4 && fd < 0)
            fd = k;
    for (int k = 2; k >= 0; k--)
        if (c->d.grid[k] == 3 && fd < 0)
            fd = k;
    const int F = rank_with_atoms(c, 1);
    if (fd < 0 || F < 0) {
        hxt_dm_not_run(c, "case 3 (too far)");
        return;
    }
    hx_decomp dF;
    if (!hxt_agree(c->comm, decomp_of(c, F, &dF)))
        return;
    const double w = c->d.box_len[fd] / c->d.grid[fd];
    const int gfd = c->d.grid[fd], axis = "xyz"[fd];
    const int i = c->cnt[F] / 2;
    const int64_t id = c->allids[c->first[F] + i];
    float *tgt = hxt_xmalloc((size_t) N * 3 * sizeof(float));
    memcpy(tgt, c->cur, (size_t) N * 3 * sizeof(float));
    /* The other decomposed dimensions, where fd can refuse (4 or more). */
    char along[4] = "";
    for (int k = 0, m = 0; k < 3 && gfd >= 4; k++)
        if (k != fd && c->d.grid[k] > 1)
            along[m++] = "xyz"[k];
    hxt_rng rg = {0xfa40u + (uint64_t) c->gi};
    for (int a = 0; a < N && along[0]; a++) {
        for (int k = 0; k < 3; k++)
            if (k != fd && c->d.grid[k] > 1) {
                double wk = c->d.box_len[k] / c->d.grid[k];
                tgt[3 * a + k] = (float) ((double) c->cur[3 * a + k] +
                                          (2.0 * hxt_uniform(&rg) - 1.0) * 0.9 * wk);
            }
        hxt_dm_settle(c, &tgt[3 * a]);
    }
    /* 0.75 w into its domain, then 1.5 w up: two domains up. */
    tgt[3 * id + fd] = (float) (dF.dom_lo[fd] + 2.25 * w);
    hxt_dm_settle(c, &tgt[3 * id]);
    if (gfd == 3) {
        /* Two up is one down: allowed, and hx_migrate agrees where it goes. */
        int ok = hxt_dm_migrate_case(c, tgt, 4, 2, 0, 0, NULL);
        HXT_CHECK(!ok || c->holder[id] == dF.down[fd],
                  "grid %s: atom %lld went to rank %d, want rank %d (one domain down)", c->gs,
                  (long long) id, c->holder[id], dF.down[fd]);
        hxt_dm_summary(
            c, fails0,
            "case 3 (3 domains along %c: atom %d of rank %d moves 1.5 domains up, which is "
            "one down)",
            axis, i, F);
        free(tgt);
        return;
    }
    int ok = hxt_dm_upload(c, tgt, 4, 0, 1);
    int64_t na0 = 0;
    uint64_t cs0 = 0;
    int moved = 0;
    char needle[64];
    snprintf(needle, sizeof needle, "atom %d on rank %d", i, F);
    if (ok && hxt_dm_census(c, c->a.n, &na0, &cs0)) {
        hx_dfield f[2];
        hxt_dm_fields_of(c, f);
        const int n0 = c->a.n;
        hx_status st = hx_rebuild_migrate(c->r, &c->a.n, &c->a.cap, &c->a.x, 4, f, 2);
        HXT_FAILS(st, HX_ERR_COORD_OUTSIDE, needle);
        /* Every position wrapped, the far atom's too; no atom moved. */
        hxt_dm_check_untouched(c, tgt, -1, n0, na0, cs0, "too far");
        /* The context goes on: the far atom back home, the others where
         * they were sent, which now moves them. */
        memcpy(&tgt[3 * id], &c->cur[3 * id], 3 * sizeof(float));
        ok = hxt_dm_migrate_case(c, tgt, 4, 2, 0, 0, &moved);
        if (ok && along[0])
            HXT_CHECK(moved > 0, "grid %s: no atom moved along %s changed rank", c->gs, along);
    }
    hxt_dm_summary(
        c, fails0,
        "case 3 (too far: atom %d of rank %d 1.5 domains up along %c, %d domains%s%s): "
        "HX_ERR_COORD_OUTSIDE, nothing moved or lost, then a migration (%d changed rank)",
        i, F, axis, gfd, along[0] ? ", every atom up to 0.9 domains along " : "", along, moved);
    free(tgt);
}

/* Case 4: non-finite coordinates, and a NaN in the payload word. */
static void case_nan(hxt_dm_ctx *c)
{
    const int fails0 = hxt_failures, N = c->N;
    const int lo = rank_with_atoms(c, 0), hi = rank_with_atoms(c, 1);
    if (lo < 0)
        return;
    float *tgt = hxt_xmalloc((size_t) N * 3 * sizeof(float));
    for (int v = 0; v < 2; v++) {
        /* A NaN y on the lowest rank with atoms (stride 3), an infinite z
         * on the highest (stride 4). */
        const int B = v == 0 ? lo : hi, xs = v == 0 ? 3 : 4;
        const int i = v == 0 ? c->cnt[B] / 3 : c->cnt[B] - 1;
        const int64_t id = c->allids[c->first[B] + i];
        memcpy(tgt, c->cur, (size_t) N * 3 * sizeof(float));
        tgt[3 * id + 1 + v] = v == 0 ? NAN : INFINITY;
        char needle[64], what[32];
        snprintf(needle, sizeof needle, "atom %d on rank %d", i, B);
        snprintf(what, sizeof what, "%s coordinate", v == 0 ? "NaN" : "infinite");
        int64_t na0 = 0;
        uint64_t cs0 = 0;
        if (hxt_dm_upload(c, tgt, xs, 0, 1) && hxt_dm_census(c, c->a.n, &na0, &cs0)) {
            hx_dfield f[2];
            hxt_dm_fields_of(c, f);
            const int n0 = c->a.n;
            hx_status st = hx_rebuild_migrate(c->r, &c->a.n, &c->a.cap, &c->a.x, xs, f, 2);
            HXT_FAILS(st, HX_ERR_COORD_NAN, needle);
            hxt_dm_check_untouched(c, tgt, id, n0, na0, cs0, what);
        }
    }
    /* The 4th word is not a coordinate: a NaN there travels, one domain up
     * along a decomposed dimension. */
    const int64_t id = c->allids[c->first[lo]];
    const int e = decomposed_dim(c, 0);
    c->nan4 = id;
    memcpy(tgt, c->cur, (size_t) N * 3 * sizeof(float));
    if (e >= 0)
        tgt[3 * id + e] = (float) ((double) c->cur[3 * id + e] + c->d.box_len[e] / c->d.grid[e]);
    hxt_dm_settle(c, &tgt[3 * id]);
    hxt_dm_migrate_case(c, tgt, 4, 2, 0, 1, NULL);
    c->nan4 = -1;
    hxt_dm_summary(
        c, fails0,
        "case 4 (NaN y on rank %d, infinite z on rank %d: HX_ERR_COORD_NAN, nothing lost; "
        "a NaN 4th word carried)",
        lo, hi);
    free(tgt);
}

/* The census must see a lost and a duplicated atom. */
static void case_census(hxt_dm_ctx *c)
{
    const int fails0 = hxt_failures;
    const int B = rank_with_atoms(c, 1);
    int64_t na0 = 0, na1 = 0, na2 = 0;
    uint64_t cs0 = 0, cs1 = 0, cs2 = 0;
    if (B < 0 || !hxt_dm_upload(c, c->cur, 4, 0, 1) || !hxt_dm_census(c, c->a.n, &na0, &cs0))
        return;
    int n = c->a.n;
    if (hxt_dm_census(c, c->rank == B ? n - 1 : n, &na1, &cs1))
        HXT_CHECK(na1 == c->N - 1 && cs1 != cs0,
                  "grid %s: census without one atom gives %lld atoms, checksum %016llx (all: "
                  "%016llx)",
                  c->gs, (long long) na1, (unsigned long long) cs1, (unsigned long long) cs0);
    /* Rank B's last id replaced by its first (where it has two atoms). */
    int dup = c->rank == B && n >= 2;
    int ok = 1;
    if (dup)
        ok = hxt_dm_cuda_ok(
                 cudaMemcpy(c->a.id + (n - 1), c->a.id, sizeof(int64_t), cudaMemcpyDeviceToDevice),
                 "duplicating an id") &&
             hxt_dm_cuda_ok(cudaDeviceSynchronize(), "duplicating an id");
    int any_dup = c->cnt[B] >= 2;
    if (hxt_agree(c->comm, ok) && any_dup && hxt_dm_census(c, n, &na2, &cs2))
        HXT_CHECK(na2 == c->N && cs2 != cs0,
                  "grid %s: census with a duplicated id gives %lld atoms, checksum %016llx (all: "
                  "%016llx)",
                  c->gs, (long long) na2, (unsigned long long) cs2, (unsigned long long) cs0);
    c->a.fields_ok = 0; /* the ids were damaged on purpose */
    hxt_dm_summary(c, fails0,
                   "hxt_dm_census (one atom left out, one id doubled on rank %d: both seen)", B);
}

static void run_grid(hx_comm *comm, hx_transport *t, const int grid[3], int gi, int nbig)
{
    hxt_dm_ctx c;
    if (hxt_dm_open(&c, comm, t, grid, gi, gi == 0 ? nbig : NSMALL, box_lo, W_DOM, L_FREE, RH) &&
        hxt_agree(comm, HXT_OK(hx_rebuild_create(&c.r, t, &c.d)))) {
        const double *len = c.d.box_len;
        if (c.rank == 0)
            printf("grid %s: %d atoms, box %g x %g x %g\n", c.gs, c.N, len[0], len[1], len[2]);
        /* Cases 1 and 2 (and 7: strides 3 and 4, 0 and 2 fields). */
        static const int rounds[5][3] = {{4, 2, 1}, {4, 2, 0}, {3, 2, 1}, {4, 0, 1}, {3, 0, 1}};
        int ok = 1;
        for (int k = 0; k < 5 && ok; k++)
            ok = case_random(&c, k, rounds[k][0], rounds[k][1], rounds[k][2]);
        if (ok) {
            case_crowd(&c);
            case_all_out(&c);
            case_far(&c);
            case_nan(&c);
            case_census(&c);
        }
        /* Case 7: the same moves without order (two fields: checked by id),
         * from fresh fields, then from the last migration's, then growth
         * and a rank that sends everything. */
        ok = ok && hxt_agree(comm, HXT_OK(hx_rebuild_keep_order(c.r, 0)));
        if (ok) {
            c.any_order = 1;
            if (c.rank == 0)
                printf("grid %s: without order\n", c.gs);
            static const int unordered[3][3] = {{4, 2, 1}, {4, 2, 0}, {3, 2, 0}};
            for (int k = 0; k < 3 && ok; k++)
                ok = case_random(&c, 5 + k, unordered[k][0], unordered[k][1], unordered[k][2]);
            if (ok) {
                case_crowd(&c);
                case_all_out(&c);
            }
        }
    }
    /* The device arrays first, then the context. */
    hxt_dm_close(&c);
    if (c.r)
        hx_rebuild_destroy(c.r);
}

/* The transport: --transport NAME, else the first of these that is built
 * with device arrays and can be created here. NULL (reason in why) if
 * none. Collective. */
static hx_transport *make_transport(hx_comm *comm, const char *only, char *why, size_t whylen)
{
    static const char *const pref[] = {"nvshmem-fused", "mpi", "nccl"};
    const char *names[3];
    int nn = 0;
    if (only)
        names[nn++] = only;
    else
        for (int k = 0; k < 3; k++)
            names[nn++] = pref[k];
    size_t at = 0;
    why[0] = '\0';
    for (int k = 0; k < nn; k++) {
        if (!(hx_transport_caps_of(names[k]) & HX_CAP_DEVICE)) {
            if (at < whylen)
                at += (size_t) snprintf(why + at, whylen - at,
                                        "%s%s: not built here with device arrays", at ? "; " : "",
                                        names[k]);
            continue;
        }
        hx_transport_opts o;
        hx_transport_opts_init(&o);
        o.name = names[k];
        o.dtype = HX_FLOAT;
        hx_transport *t = NULL;
        hx_status st = hx_transport_create(&t, comm, &o);
        if (hxt_agree(comm, st == HX_OK))
            return t;
        if (t)
            hx_transport_destroy(t);
        if (at < whylen)
            at += (size_t) snprintf(why + at, whylen - at, "%s%s: %s", at ? "; " : "", names[k],
                                    st == HX_OK ? "refused on another rank" : hx_last_error());
    }
    return NULL;
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_dmigrate");
    const int nr = hx_comm_size(comm), rank = hx_comm_rank(comm);
    const char *only = NULL;
    int given = 0, nbig = NBIG;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--transport") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--grid") == 0)
            given = 1;
        else if (strcmp(argv[i], "--atoms") == 0 && i + 1 < argc)
            nbig = atoi(argv[++i]);
    }
    if (nbig < 1 || nbig > 4000000) {
        HXT_CHECK(0, "--atoms takes 1 to 4,000,000 atoms per rank, not %d", nbig);
        return hxt_finish(comm);
    }
    int grids[8][3], ng = 0;
    int skip = hxt_gpu_setup(comm, argc, argv, grids, &ng);
    if (skip)
        return skip;
    if (!given)
        ng = hxt_grids_for(nr, grids, 8);
    if (ng == 0)
        return hxt_skip(comm, "no grid in the test list has this many domains");

    char why[1024];
    hx_transport *t = make_transport(comm, only, why, sizeof why);
    if (!t) {
        char msg[1200];
        snprintf(msg, sizeof msg, "no device transport could be created here: %s", why);
        return hxt_skip(comm, msg);
    }
    if (rank == 0)
        printf("transport %s: %s\n", hx_transport_name(t), hx_transport_describe(t));
    for (int g = 0; g < ng; g++)
        run_grid(comm, t, grids[g], g, nbig);
    /* Every rebuild context is gone; the transport goes last. */
    hx_transport_destroy(t);
    return hxt_finish(comm);
}
