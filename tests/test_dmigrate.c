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
 *     on the first grid 70,000 atoms per rank (more than 256 blocks of 256);
 *  2. in every migration: the same atoms in the same order on each rank as
 *     hx_migrate, every atom inside this rank's domain, its position the
 *     host's float wrap of the displaced one (bitwise where no wrap was
 *     needed, 2 ulp of the box length where it was), its payload with it,
 *     every id once over all ranks, and the census count and checksum
 *     unchanged. Displaced atoms are kept 1e-4 from every domain bound, so
 *     that float (device) and double (host) wrapping agree on the owner;
 *  3. one atom 1.5 domain widths from its domain along a dimension of 4 or
 *     more domains: HX_ERR_COORD_OUTSIDE naming the atom on every rank,
 *     nothing moved or lost, and the next migration works; along one of 3
 *     domains the same move is one domain the other way and must work;
 *  4. a NaN and an infinite coordinate: HX_ERR_COORD_NAN on every rank,
 *     nothing lost; a NaN in the 4th (payload) word is carried, no error;
 *  5. capacity == n on every rank, then half of a neighbour's atoms crowd
 *     into rank 0: its arrays grow, the others' stay where they are;
 *  6. rank 0 sends every atom to its upper neighbour (no other rank receives
 *     anything), then they come back to a rank with no arrays (capacity 0)
 *     and every rank holds what it held before, in the same order;
 *  and the census itself must see a lost and a duplicated id.
 * Without a GPU the test exits 77 (skipped).
 */
#include "gpucases.h"

#include "core/hxi.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARGIN 1e-4  /* displaced atoms stay this far from every domain bound */
#define W_DOM  3.5   /* domain width along decomposed dimensions */
#define L_FREE 9.25  /* box length along undecomposed ones */
#define RH     1.5   /* halo cutoff (the decomposition needs one) */
#define MAXG   8     /* domains along a dimension, at most */
#define NBIG   70000 /* atoms per rank on the first grid: over 256 blocks */
#define NSMALL 800   /* atoms per rank on the others */

static const double box_lo[3] = {-1.5, 0.75, 2.0};
static const uint32_t nan_bits = 0x7fc01234u; /* a NaN with a payload */

/* This rank's atoms on the device. */
typedef struct dev {
    int n, cap, xs;
    float *x;      /* cap * xs */
    float *v;      /* cap * 4 */
    int64_t *id;   /* cap */
    int fields_ok; /* v and id hold the atoms of loc, in its order */
} dev;

typedef struct tcx {
    hx_comm *comm;
    hx_transport *t;
    hx_rebuild *r;
    hx_decomp d;
    int rank, nr, N, gi;
    char gs[32];
    double bound[3][MAXG + 1]; /* domain bounds along each dimension */
    float ulp[3];              /* of each box length, in float */
    float *cur;                /* N * 3: every atom's position, the same on every rank */
    int nloc;
    int64_t *loc;    /* this rank's atoms in array order (as hx_migrate left them) */
    int64_t *allids; /* every rank's loc, in rank order */
    int *cnt, *first, *holder;
    int64_t nan4; /* atom whose 4th word is a NaN (-1: none) */
    dev a;
} tcx;

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "[rank %d] test out of memory (%zu bytes)\n", hxt_rank, bytes);
        exit(1);
    }
    return p;
}

static void vel_of(int64_t id, float v[4])
{
    v[0] = (float) id;
    v[1] = (float) id + 0.5f;
    v[2] = -(float) id;
    v[3] = 7.0f;
}

static float code_of(int64_t id)
{
    return (float) id + 0.25f;
}

static float nan_word(void)
{
    float f;
    memcpy(&f, &nan_bits, sizeof f);
    return f;
}

/* The host's float wrap into [lo, lo + len): x - L floor((x - lo) / L),
 * then an upper-edge result moved down and one below lo set to lo. Only
 * coordinates outside the box are touched. */
static float wrapf(float x, double lo, double len)
{
    if (!((double) x < lo || (double) x >= lo + len))
        return x;
    const float flo = (float) lo, flen = (float) len;
    float t = x - flen * floorf((x - flo) / flen);
    if ((double) t >= lo + len)
        t -= flen;
    if ((double) t < lo) {
        t = flo;
        if ((double) t < lo)
            t = nextafterf(t, INFINITY);
    }
    return t;
}

static int outside_box(const tcx *c, int k, float x)
{
    return (double) x < c->d.box_lo[k] || (double) x >= c->d.box_lo[k] + c->d.box_len[k];
}

static int near_bound(const tcx *c, int k, double v)
{
    for (int b = 0; b <= c->d.grid[k]; b++)
        if (fabs(v - c->bound[k][b]) < MARGIN)
            return 1;
    return 0;
}

/* Moves a target position along each dimension until its wrapped value is
 * MARGIN away from every domain bound. */
static void settle(const tcx *c, float *t)
{
    for (int k = 0; k < 3; k++)
        for (int tries = 0; tries < 16; tries++) {
            float w = wrapf(t[k], c->d.box_lo[k], c->d.box_len[k]);
            if (isfinite(w) && !near_bound(c, k, (double) w))
                break;
            t[k] += 3.0f * (float) MARGIN;
        }
}

static void wrap_all(const tcx *c, const float *tgt, float *ref)
{
    for (int a = 0; a < c->N; a++)
        for (int k = 0; k < 3; k++)
            ref[3 * a + k] = wrapf(tgt[3 * a + k], c->d.box_lo[k], c->d.box_len[k]);
}

/* Every rank's atom list after a migration: allids, cnt, first, holder.
 * Collective. */
static void refresh(tcx *c)
{
    int total = 0;
    free(c->allids);
    free(c->cnt);
    c->allids = hxt_allgatherv(c->comm, c->loc, c->nloc, sizeof(int64_t), &total, &c->cnt);
    int bad = total != c->N;
    for (int a = 0; a < c->N; a++)
        c->holder[a] = -1;
    for (int r = 0, at = 0; r < c->nr; r++) {
        c->first[r] = at;
        for (int i = 0; i < c->cnt[r]; i++, at++) {
            int64_t a = c->allids[at];
            if (a < 0 || a >= c->N || c->holder[a] >= 0)
                bad++;
            else
                c->holder[a] = r;
        }
    }
    HXT_CHECK(bad == 0, "grid %s: the host reference holds %d atoms of %d, %d errors", c->gs, total,
              c->N, bad);
}

static void dev_free(dev *a)
{
    if (a->x)
        cudaFree(a->x);
    if (a->v)
        cudaFree(a->v);
    if (a->id)
        cudaFree(a->id);
    memset(a, 0, sizeof *a);
}

static int cuda_ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 1;
    cudaGetLastError();
    HXT_CHECK(e == cudaSuccess, "%s: %s", what, cudaGetErrorString(e));
    return 0;
}

/* Puts this rank's atoms (loc, positions tgt by id) into the device arrays:
 * every array when `full`, when the fields are not known to be in loc's
 * order, or when the arrays are made anew (stride changed, too small, or
 * `tight`: exactly nloc atoms, none at all for 0); otherwise the position
 * array alone, so that the fields go on from the last migration.
 * Collective: 1 when it worked on every rank. */
static int upload(tcx *c, const float *tgt, int xs, int tight, int full)
{
    dev *a = &c->a;
    const int n = c->nloc;
    int ok = 1;
    if (tight || a->xs != xs || a->cap < n || (!a->x && n > 0)) {
        int cap = tight ? n : n + n / 2 + 64;
        dev_free(a);
        a->xs = xs;
        a->cap = cap;
        if (cap > 0)
            ok = cuda_ok(cudaMalloc((void **) &a->x, (size_t) cap * xs * sizeof(float)),
                         "cudaMalloc x") &&
                 cuda_ok(cudaMalloc((void **) &a->v, (size_t) cap * 4 * sizeof(float)),
                         "cudaMalloc v") &&
                 cuda_ok(cudaMalloc((void **) &a->id, (size_t) cap * sizeof(int64_t)),
                         "cudaMalloc id");
        full = 1;
    }
    if (!a->fields_ok)
        full = 1;
    a->n = n;
    float *hx = xmalloc((size_t) n * xs * sizeof(float));
    float *hv = xmalloc((size_t) n * 4 * sizeof(float));
    for (int i = 0; i < n; i++) {
        int64_t id = c->loc[i];
        for (int k = 0; k < 3; k++)
            hx[(size_t) i * xs + k] = tgt[3 * id + k];
        if (xs == 4)
            hx[(size_t) i * xs + 3] = id == c->nan4 ? nan_word() : code_of(id);
        vel_of(id, &hv[4 * (size_t) i]);
    }
    if (ok && n > 0)
        ok = cuda_ok(cudaMemcpy(a->x, hx, (size_t) n * xs * sizeof(float), cudaMemcpyHostToDevice),
                     "upload x");
    if (ok && n > 0 && full)
        ok =
            cuda_ok(cudaMemcpy(a->v, hv, (size_t) n * 4 * sizeof(float), cudaMemcpyHostToDevice),
                    "upload v") &&
            cuda_ok(cudaMemcpy(a->id, c->loc, (size_t) n * sizeof(int64_t), cudaMemcpyHostToDevice),
                    "upload id");
    /* The transport's stream must see the copies done. */
    if (ok)
        ok = cuda_ok(cudaDeviceSynchronize(), "after the upload");
    free(hx);
    free(hv);
    ok = hxt_agree(c->comm, ok);
    a->fields_ok = ok;
    return ok;
}

/* The device arrays' first n atoms into host memory (n + 1 allocated). */
static int download(const tcx *c, int n, float **gx, float **gv, int64_t **gid)
{
    const dev *a = &c->a;
    *gx = xmalloc(((size_t) n + 1) * a->xs * sizeof(float));
    *gv = xmalloc(((size_t) n + 1) * 4 * sizeof(float));
    *gid = xmalloc(((size_t) n + 1) * sizeof(int64_t));
    if (!cuda_ok(cudaDeviceSynchronize(), "before the download"))
        return 0;
    if (n == 0)
        return 1;
    return cuda_ok(
               cudaMemcpy(*gx, a->x, (size_t) n * a->xs * sizeof(float), cudaMemcpyDeviceToHost),
               "download x") &&
           cuda_ok(cudaMemcpy(*gv, a->v, (size_t) n * 4 * sizeof(float), cudaMemcpyDeviceToHost),
                   "download v") &&
           cuda_ok(cudaMemcpy(*gid, a->id, (size_t) n * sizeof(int64_t), cudaMemcpyDeviceToHost),
                   "download id");
}

static void fields_of(tcx *c, hx_dfield f[2])
{
    f[0].data = (void **) &c->a.v;
    f[0].size = 4 * sizeof(float);
    f[1].data = (void **) &c->a.id;
    f[1].size = sizeof(int64_t);
}

/* One line on rank 0 per case: its text and whether any rank failed in it
 * (failures since fails0). Collective. */
static void summary(const tcx *c, int fails0, const char *fmt, ...)
{
    int v = hxt_failures - fails0;
    HXT_OK(hxi_allreduce_int(c->comm, &v, 1, 0));
    if (c->rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("  grid %-6s ", c->gs);
    vprintf(fmt, ap);
    va_end(ap);
    printf(": %s\n", v ? "FAILED" : "ok");
    fflush(stdout);
}

/* A case that cannot run on this grid: one line on rank 0. */
static void not_run(const tcx *c, const char *what)
{
    if (c->rank == 0)
        printf("  grid %-6s %s: not run: %s\n", c->gs, what,
               c->nr == 1 ? "one rank, nothing can move between ranks"
                          : "no dimension with 3 or more domains");
}

/* Collective: 1 when the census ran on every rank. */
static int census(tcx *c, int n, int64_t *natoms, uint64_t *sum)
{
    *natoms = -1;
    *sum = 0;
    return hxt_agree(c->comm, HXT_OK(hx_rebuild_census(c->r, n, c->a.id, natoms, sum)));
}

/* One migration from targets tgt (N * 3 by id, the same on every rank):
 * hx_rebuild_migrate on the device and hx_migrate on the host from the same
 * floats, then every check. Afterwards cur holds the wrapped targets and
 * loc hx_migrate's atoms. *moved (may be NULL) gets the atoms that changed
 * rank, over all ranks. Collective: 1 when both migrations ran everywhere. */
static int migrate_case(tcx *c, const float *tgt, int xs, int nf, int tight, int full, int *moved)
{
    dev *a = &c->a;
    const int N = c->N;
    if (moved)
        *moved = 0;
    if (!upload(c, tgt, xs, tight, full))
        return 0;
    float *ref = xmalloc((size_t) N * 3 * sizeof(float));
    wrap_all(c, tgt, ref);
    int64_t na0 = 0, na1 = 0;
    uint64_t cs0 = 0, cs1 = 0;
    if (nf == 2 && census(c, a->n, &na0, &cs0))
        HXT_CHECK(na0 == N, "grid %s: census before gives %lld atoms of %d", c->gs, (long long) na0,
                  N);

    /* The host reference, on the same floats. */
    int nh = c->nloc, caph = nh > 0 ? nh : 1;
    double *xh = xmalloc((size_t) caph * 3 * sizeof(double));
    int64_t *idh = xmalloc((size_t) caph * sizeof(int64_t));
    for (int i = 0; i < nh; i++) {
        idh[i] = c->loc[i];
        for (int k = 0; k < 3; k++)
            xh[3 * i + k] = (double) tgt[3 * idh[i] + k];
    }
    hx_field hf = {(void **) &idh, sizeof(int64_t)};
    int hok = hxt_agree(c->comm, HXT_OK(hx_migrate(c->comm, &c->d, &nh, &caph, &xh, &hf, 1)));

    /* The device. */
    hx_dfield f[2];
    fields_of(c, f);
    const int cap0 = a->cap;
    const void *p0[3] = {a->x, a->v, a->id};
    int dok = HXT_OK(hx_rebuild_migrate(c->r, &a->n, &a->cap, &a->x, xs, nf ? f : NULL, nf));
    dok = hxt_agree(c->comm, dok);
    int fails0 = hxt_failures;
    if (dok && hok) {
        HXT_OK(hx_transport_sync(c->t));
        HXT_CHECK(a->n == nh, "grid %s: %d atoms after the device migrate, hx_migrate has %d",
                  c->gs, a->n, nh);
        HXT_CHECK(a->cap >= a->n && a->cap >= cap0, "grid %s: capacity %d (was %d) for %d atoms",
                  c->gs, a->cap, cap0, a->n);
        if (a->cap == cap0)
            HXT_CHECK(a->x == p0[0] && (nf == 0 || (a->v == p0[1] && a->id == p0[2])),
                      "grid %s: arrays moved though the capacity (%d) stayed", c->gs, cap0);
        float *gx, *gv;
        int64_t *gid;
        const int n = a->n < nh ? a->n : nh;
        int lok = download(c, n, &gx, &gv, &gid);
        int nid = 0, npay = 0, nword = 0, npos = 0, nout = 0, ex_id = -1, ex_pos = -1;
        for (int i = 0; lok && i < n; i++) {
            const int64_t e = idh[i]; /* the atom hx_migrate has here */
            const float *p = &gx[(size_t) i * xs];
            int64_t g = e; /* the atom the device has here, where it says */
            if (nf == 2) {
                g = gid[i];
                if (g != e && nid++ == 0)
                    ex_id = i;
                float v[4];
                vel_of(g, v);
                for (int k = 0; k < 4; k++)
                    npay += !hxt_same_f(gv[4 * (size_t) i + k], v[k]);
            }
            if (xs == 4) {
                float w = g == c->nan4 ? nan_word() : code_of(g);
                nword += !hxt_same_f(p[3], w);
            }
            int bad = 0;
            for (int k = 0; k < 3; k++) {
                const float want = ref[3 * e + k];
                if (outside_box(c, k, tgt[3 * e + k]))
                    bad |= !(fabsf(p[k] - want) <= 2.0f * c->ulp[k]);
                else
                    bad |= !hxt_same_f(p[k], want);
                nout += !((double) p[k] >= c->d.dom_lo[k] && (double) p[k] < c->d.dom_hi[k]);
            }
            if (bad && npos++ == 0)
                ex_pos = i;
        }
        HXT_CHECK(lok, "grid %s: the arrays could not be read back", c->gs);
        if (nid)
            HXT_CHECK(nid == 0,
                      "grid %s: %d atoms differ from hx_migrate's order (first at %d: id %lld, "
                      "hx_migrate has %lld)",
                      c->gs, nid, ex_id, (long long) gid[ex_id], (long long) idh[ex_id]);
        HXT_CHECK(npay == 0, "grid %s: %d velocity words do not belong to their atom's id", c->gs,
                  npay);
        HXT_CHECK(nword == 0, "grid %s: %d 4th position words do not belong to their atom", c->gs,
                  nword);
        if (npos) {
            const float *p = &gx[(size_t) ex_pos * xs];
            const int64_t e = idh[ex_pos];
            HXT_CHECK(npos == 0,
                      "grid %s: %d positions differ from the wrapped targets (first at %d, id "
                      "%lld: %.9g %.9g %.9g, want %.9g %.9g %.9g from %.9g %.9g %.9g)",
                      c->gs, npos, ex_pos, (long long) e, p[0], p[1], p[2], ref[3 * e],
                      ref[3 * e + 1], ref[3 * e + 2], tgt[3 * e], tgt[3 * e + 1], tgt[3 * e + 2]);
        }
        HXT_CHECK(nout == 0, "grid %s: %d coordinates outside this rank's domain", c->gs, nout);

        /* Every atom once over all ranks, by the ids the device holds (by
         * the 4th word, or by position alone, where it holds none). */
        int64_t *mine = xmalloc(((size_t) n + 1) * sizeof(int64_t));
        for (int i = 0; i < n; i++)
            mine[i] = !lok                    ? -1
                      : nf == 2               ? gid[i]
                      : xs == 4 && nword == 0 ? (int64_t) floorf(gx[(size_t) i * xs + 3])
                                              : idh[i];
        int total = 0;
        int64_t *all = hxt_allgatherv(c->comm, mine, n, sizeof(int64_t), &total, NULL);
        if (c->rank == 0) {
            char *seen = calloc((size_t) N, 1);
            int bad = 0;
            for (int i = 0; i < total; i++)
                bad += all[i] < 0 || all[i] >= N || seen[all[i]]++;
            HXT_CHECK(total == N && bad == 0,
                      "grid %s: the ranks hold %d atoms of %d, %d bad or repeated", c->gs, total, N,
                      bad);
            free(seen);
        }
        free(all);
        free(mine);
        if (nf == 2 && census(c, a->n, &na1, &cs1))
            HXT_CHECK(na1 == N && cs1 == cs0,
                      "grid %s: census after gives %lld atoms, checksum %016llx (before %016llx)",
                      c->gs, (long long) na1, (unsigned long long) cs1, (unsigned long long) cs0);
        free(gx);
        free(gv);
        free(gid);
    }
    /* The fields follow loc only after a migration that carried them and
     * passed on every rank. */
    a->fields_ok = hxt_agree(c->comm, dok && nf == 2 && hxt_failures == fails0);

    if (hok) {
        if (moved) {
            char *was = calloc((size_t) N, 1);
            for (int i = 0; i < c->nloc; i++)
                was[c->loc[i]] = 1;
            for (int i = 0; i < nh; i++)
                *moved += !was[idh[i]];
            free(was);
            HXT_OK(hxi_allreduce_int(c->comm, moved, 1, 0));
        }
        memcpy(c->cur, ref, (size_t) N * 3 * sizeof(float));
        free(c->loc);
        c->loc = idh;
        c->nloc = nh;
        idh = NULL;
        refresh(c);
    }
    free(idh);
    free(xh);
    free(ref);
    return dok && hok;
}

/* Case 1: random displacements; five rounds of strides and fields. */
static int case_random(tcx *c, int round, int xs, int nf, int full)
{
    const int N = c->N, fails0 = hxt_failures;
    float *tgt = xmalloc((size_t) N * 3 * sizeof(float));
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
        settle(c, &tgt[3 * a]);
        for (int k = 0; k < 3; k++)
            if (outside_box(c, k, tgt[3 * a + k])) {
                if (c->d.grid[k] > 1)
                    wrap_dec++;
                else
                    wrap_free++;
            }
    }
    int moved = 0;
    int ok = migrate_case(c, tgt, xs, nf, 0, full, &moved);
    /* The round must have exercised what it claims to. */
    if (ok && c->nr > 1)
        HXT_CHECK(moved > 0, "grid %s: no atom changed rank", c->gs);
    if (ndec > 0)
        HXT_CHECK(wrap_dec > 0, "grid %s: no move crossed the box along a decomposed dimension",
                  c->gs);
    if (ndec < 3)
        HXT_CHECK(wrap_free > 0, "grid %s: no move crossed the box along an undecomposed one",
                  c->gs);
    summary(c, fails0,
            "case 1 round %d (%d atoms, xstride %d, %d fields%s): %d changed rank, %ld+%ld "
            "coordinates wrapped",
            round, N, xs, nf, full ? "" : ", fields from the last migration", moved, wrap_dec,
            wrap_free);
    free(tgt);
    return ok;
}

/* The first (x, y, z order) or last decomposed dimension; -1 if none. */
static int decomposed_dim(const tcx *c, int last)
{
    int e = -1;
    for (int k = 0; k < 3; k++)
        if (c->d.grid[k] > 1 && (e < 0 || last))
            e = k;
    return e;
}

static int decomp_of(const tcx *c, int rank, hx_decomp *o)
{
    return HXT_OK(
        hx_decomp_init(o, c->d.box_lo, c->d.box_len, c->d.cutoff, c->d.grid, c->nr, rank));
}

/* Case 5: capacity exactly n everywhere, then the lower part of rank 0's
 * upper neighbour along one dimension moves into rank 0. */
static void case_crowd(tcx *c)
{
    const int fails0 = hxt_failures, N = c->N;
    const int e = decomposed_dim(c, 1);
    if (e < 0) {
        not_run(c, "case 5 (crowded domain)");
        return;
    }
    hx_decomp d0;
    if (!hxt_agree(c->comm, decomp_of(c, 0, &d0)))
        return;
    const int up = d0.up[e];
    const double w = c->d.box_len[e] / c->d.grid[e], lo_up = c->bound[e][1];
    float *tgt = xmalloc((size_t) N * 3 * sizeof(float));
    memcpy(tgt, c->cur, (size_t) N * 3 * sizeof(float));
    int nmove = 0;
    for (int a = 0; a < N; a++)
        if (c->holder[a] == up && (double) c->cur[3 * a + e] - lo_up < 0.45 * w) {
            tgt[3 * a + e] = (float) ((double) c->cur[3 * a + e] - 0.5 * w);
            settle(c, &tgt[3 * a]);
            nmove++;
        }
    const int n0 = c->nloc;
    HXT_CHECK(nmove > 0, "grid %s: rank %d has no atoms to crowd rank 0 with", c->gs, up);
    /* Arrays of exactly n atoms; migrate_case then only rewrites them. */
    dev *a = &c->a;
    int ok = upload(c, tgt, 4, 1, 1);
    const void *p0[3] = {a->x, a->v, a->id};
    const int cap0 = a->cap;
    HXT_CHECK(!ok || cap0 == n0, "grid %s: tight capacity %d for %d atoms", c->gs, cap0, n0);
    if (ok)
        ok = migrate_case(c, tgt, 4, 2, 0, 0, NULL);
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
    summary(c, fails0, "case 5 (capacity == n, %d atoms of rank %d crowd into rank 0)", nmove, up);
    free(tgt);
}

/* Case 6: rank 0 sends everything to its upper neighbour, then gets it
 * back. */
static void case_all_out(tcx *c)
{
    const int fails0 = hxt_failures, N = c->N;
    const int e = decomposed_dim(c, 0);
    if (e < 0) {
        not_run(c, "case 6 (a rank sends everything)");
        return;
    }
    hx_decomp d0;
    if (!hxt_agree(c->comm, decomp_of(c, 0, &d0)))
        return;
    const int up = d0.up[e];
    const double w = c->d.box_len[e] / c->d.grid[e], lo_up = c->bound[e][1];
    float *orig = xmalloc((size_t) N * 3 * sizeof(float));
    float *tgt = xmalloc((size_t) N * 3 * sizeof(float));
    char *from0 = calloc((size_t) N, 1);
    int64_t *before = xmalloc(((size_t) c->nloc + 1) * sizeof(int64_t));
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
        settle(c, &tgt[3 * a]);
    }
    HXT_CHECK(n0 > 0, "grid %s: rank 0 has no atoms to send", c->gs);
    int ok = migrate_case(c, tgt, 3, 2, 0, 1, NULL);
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
        ok = migrate_case(c, tgt, 4, 2, 1, 1, NULL);
        int same = c->nloc == nbefore;
        for (int i = 0; same && i < nbefore; i++)
            same = c->loc[i] == before[i];
        HXT_CHECK(!ok || same,
                  "grid %s: after the way back this rank holds %d atoms, not the %d "
                  "it held before in their order",
                  c->gs, c->nloc, nbefore);
    }
    summary(c, fails0,
            "case 6 (rank 0 sends all %d atoms to rank %d, no other rank receives; and back into "
            "capacity 0)",
            n0, up);
    free(orig);
    free(tgt);
    free(from0);
    free(before);
}

/* After a migration that must fail: nothing moved, nothing lost (the atom
 * `bad`'s own coordinates excepted, which may have been wrapped). */
static void check_untouched(tcx *c, const float *tgt, int64_t bad, int n0, int64_t na0,
                            uint64_t cs0, const char *what)
{
    dev *a = &c->a;
    HXT_OK(hx_transport_sync(c->t));
    HXT_CHECK(a->n == n0, "grid %s %s: %d atoms after the failed migrate, had %d", c->gs, what,
              a->n, n0);
    float *gx, *gv;
    int64_t *gid;
    const int n = a->n < n0 ? a->n : n0;
    int lok = download(c, n, &gx, &gv, &gid);
    int nid = 0, npos = 0;
    for (int i = 0; lok && i < n; i++) {
        nid += gid[i] != c->loc[i];
        for (int k = 0; k < 3 && c->loc[i] != bad; k++)
            npos += !hxt_same_f(gx[(size_t) i * a->xs + k], tgt[3 * c->loc[i] + k]);
    }
    HXT_CHECK(lok && nid == 0 && npos == 0,
              "grid %s %s: after the failed migrate %d atoms moved and %d positions changed", c->gs,
              what, nid, npos);
    int64_t na1;
    uint64_t cs1;
    if (census(c, a->n, &na1, &cs1))
        HXT_CHECK(na1 == c->N && cs1 == cs0 && na0 == c->N,
                  "grid %s %s: census gives %lld atoms (before %lld, of %d), checksum %016llx "
                  "(before %016llx)",
                  c->gs, what, (long long) na1, (long long) na0, c->N, (unsigned long long) cs1,
                  (unsigned long long) cs0);
    /* The fields are trusted again only where the ids are in place. */
    a->fields_ok = hxt_agree(c->comm, lok && nid == 0 && a->n == n0);
    free(gx);
    free(gv);
    free(gid);
}

/* The highest (or lowest) rank holding atoms; -1 if none. */
static int rank_with_atoms(const tcx *c, int highest)
{
    int f = -1;
    for (int r = 0; r < c->nr; r++)
        if (c->cnt[r] > 0 && (f < 0 || highest))
            f = r;
    return f;
}

/* Case 3: an atom 1.5 domain widths from home. */
static void case_far(tcx *c)
{
    const int fails0 = hxt_failures, N = c->N;
    /* A dimension of 4 or more domains, else one of 3. */
    int fd = -1;
    for (int k = 2; k >= 0; k--)
        if (c->d.grid[k] >= 4 && fd < 0)
            fd = k;
    for (int k = 2; k >= 0; k--)
        if (c->d.grid[k] == 3 && fd < 0)
            fd = k;
    const int F = rank_with_atoms(c, 1);
    if (fd < 0 || F < 0) {
        not_run(c, "case 3 (too far)");
        return;
    }
    hx_decomp dF;
    if (!hxt_agree(c->comm, decomp_of(c, F, &dF)))
        return;
    const double w = c->d.box_len[fd] / c->d.grid[fd];
    const int gfd = c->d.grid[fd], axis = "xyz"[fd];
    const int i = c->cnt[F] / 2;
    const int64_t id = c->allids[c->first[F] + i];
    float *tgt = xmalloc((size_t) N * 3 * sizeof(float));
    memcpy(tgt, c->cur, (size_t) N * 3 * sizeof(float));
    /* 0.75 w into its domain, then 1.5 w up: two domains up. */
    tgt[3 * id + fd] = (float) (dF.dom_lo[fd] + 2.25 * w);
    settle(c, &tgt[3 * id]);
    if (gfd == 3) {
        /* Two up is one down: allowed, and hx_migrate agrees where it goes. */
        int ok = migrate_case(c, tgt, 4, 2, 0, 0, NULL);
        HXT_CHECK(!ok || c->holder[id] == dF.down[fd],
                  "grid %s: atom %lld went to rank %d, want rank %d (one domain down)", c->gs,
                  (long long) id, c->holder[id], dF.down[fd]);
        summary(c, fails0,
                "case 3 (3 domains along %c: atom %d of rank %d moves 1.5 domains up, which is "
                "one down)",
                axis, i, F);
        free(tgt);
        return;
    }
    int ok = upload(c, tgt, 4, 0, 1);
    int64_t na0 = 0;
    uint64_t cs0 = 0;
    char needle[64];
    snprintf(needle, sizeof needle, "atom %d on rank %d", i, F);
    if (ok && census(c, c->a.n, &na0, &cs0)) {
        hx_dfield f[2];
        fields_of(c, f);
        const int n0 = c->a.n;
        hx_status st = hx_rebuild_migrate(c->r, &c->a.n, &c->a.cap, &c->a.x, 4, f, 2);
        HXT_FAILS(st, HX_ERR_COORD_OUTSIDE, needle);
        check_untouched(c, tgt, id, n0, na0, cs0, "too far");
        /* The context goes on: the atom back home, and a plain migration. */
        migrate_case(c, c->cur, 4, 2, 0, 0, NULL);
    }
    summary(c, fails0,
            "case 3 (too far: atom %d of rank %d 1.5 domains up along %c, %d domains): "
            "HX_ERR_COORD_OUTSIDE, nothing lost, then a migration",
            i, F, axis, gfd);
    free(tgt);
}

/* Case 4: non-finite coordinates, and a NaN in the payload word. */
static void case_nan(tcx *c)
{
    const int fails0 = hxt_failures, N = c->N;
    const int lo = rank_with_atoms(c, 0), hi = rank_with_atoms(c, 1);
    if (lo < 0)
        return;
    float *tgt = xmalloc((size_t) N * 3 * sizeof(float));
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
        if (upload(c, tgt, xs, 0, 1) && census(c, c->a.n, &na0, &cs0)) {
            hx_dfield f[2];
            fields_of(c, f);
            const int n0 = c->a.n;
            hx_status st = hx_rebuild_migrate(c->r, &c->a.n, &c->a.cap, &c->a.x, xs, f, 2);
            HXT_FAILS(st, HX_ERR_COORD_NAN, needle);
            check_untouched(c, tgt, id, n0, na0, cs0, what);
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
    settle(c, &tgt[3 * id]);
    migrate_case(c, tgt, 4, 2, 0, 1, NULL);
    c->nan4 = -1;
    summary(c, fails0,
            "case 4 (NaN y on rank %d, infinite z on rank %d: HX_ERR_COORD_NAN, nothing lost; "
            "a NaN 4th word carried)",
            lo, hi);
    free(tgt);
}

/* The census must see a lost and a duplicated atom. */
static void case_census(tcx *c)
{
    const int fails0 = hxt_failures;
    const int B = rank_with_atoms(c, 1);
    int64_t na0 = 0, na1 = 0, na2 = 0;
    uint64_t cs0 = 0, cs1 = 0, cs2 = 0;
    if (B < 0 || !upload(c, c->cur, 4, 0, 1) || !census(c, c->a.n, &na0, &cs0))
        return;
    int n = c->a.n;
    if (census(c, c->rank == B ? n - 1 : n, &na1, &cs1))
        HXT_CHECK(na1 == c->N - 1 && cs1 != cs0,
                  "grid %s: census without one atom gives %lld atoms, checksum %016llx (all: "
                  "%016llx)",
                  c->gs, (long long) na1, (unsigned long long) cs1, (unsigned long long) cs0);
    /* Rank B's last id replaced by its first (where it has two atoms). */
    int dup = c->rank == B && n >= 2;
    int ok = 1;
    if (dup)
        ok = cuda_ok(
                 cudaMemcpy(c->a.id + (n - 1), c->a.id, sizeof(int64_t), cudaMemcpyDeviceToDevice),
                 "duplicating an id") &&
             cuda_ok(cudaDeviceSynchronize(), "duplicating an id");
    int any_dup = c->cnt[B] >= 2;
    if (hxt_agree(c->comm, ok) && any_dup && census(c, n, &na2, &cs2))
        HXT_CHECK(na2 == c->N && cs2 != cs0,
                  "grid %s: census with a duplicated id gives %lld atoms, checksum %016llx (all: "
                  "%016llx)",
                  c->gs, (long long) na2, (unsigned long long) cs2, (unsigned long long) cs0);
    c->a.fields_ok = 0; /* the ids were damaged on purpose */
    summary(c, fails0, "census (one atom left out, one id doubled on rank %d: both seen)", B);
}

static void run_grid(hx_comm *comm, hx_transport *t, const int grid[3], int gi)
{
    tcx c;
    memset(&c, 0, sizeof c);
    c.comm = comm;
    c.t = t;
    c.gi = gi;
    c.nan4 = -1;
    c.rank = hx_comm_rank(comm);
    c.nr = hx_comm_size(comm);
    hxt_grid_str(grid, c.gs);
    double len[3];
    for (int k = 0; k < 3; k++)
        len[k] = grid[k] > 1 ? W_DOM * grid[k] : L_FREE;
    if (!hxt_agree(comm, HXT_OK(hx_decomp_init(&c.d, box_lo, len, RH, grid, c.nr, c.rank))))
        return;
    for (int k = 0; k < 3; k++) {
        if (grid[k] > MAXG) {
            HXT_CHECK(grid[k] <= MAXG, "grid %s: more than %d domains along a dimension", c.gs,
                      MAXG);
            return;
        }
        for (int b = 0; b < grid[k]; b++)
            c.bound[k][b] = box_lo[k] + len[k] * b / grid[k]; /* as hx_decomp_init */
        c.bound[k][grid[k]] = box_lo[k] + len[k];
        float fl = (float) len[k];
        c.ulp[k] = nextafterf(fl, INFINITY) - fl;
    }
    c.N = (gi == 0 ? NBIG : NSMALL) * c.nr;
    const int N = c.N;

    /* A random system, every coordinate a float MARGIN away from every
     * domain bound (so that ownership is the same in float and double). */
    hxt_sys s;
    hxt_sys_random(&s, N, box_lo, len, 777u + (uint64_t) gi);
    for (int a = 0; a < N; a++)
        for (int k = 0; k < 3; k++) {
            double v = s.x[3 * a + k];
            for (int b = 0; b <= grid[k]; b++)
                if (fabs(v - c.bound[k][b]) < 2 * MARGIN)
                    v = b == grid[k] ? c.bound[k][b] - 3 * MARGIN : c.bound[k][b] + 3 * MARGIN;
            s.x[3 * a + k] = (double) (float) v;
        }
    hxt_local l;
    hxt_local_take(&l, &s, &c.d);
    c.cur = xmalloc((size_t) N * 3 * sizeof(float));
    for (int i = 0; i < N * 3; i++)
        c.cur[i] = (float) s.x[i];
    c.nloc = l.n;
    c.loc = xmalloc(((size_t) l.n + 1) * sizeof(int64_t));
    memcpy(c.loc, l.id, (size_t) l.n * sizeof(int64_t));
    hxt_local_free(&l);
    hxt_sys_free(&s);
    c.holder = xmalloc((size_t) N * sizeof(int));
    c.first = xmalloc((size_t) c.nr * sizeof(int));
    refresh(&c);

    if (hxt_agree(comm, HXT_OK(hx_rebuild_create(&c.r, t, &c.d)))) {
        if (c.rank == 0)
            printf("grid %s: %d atoms, box %g x %g x %g\n", c.gs, N, len[0], len[1], len[2]);
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
        dev_free(&c.a);
        hx_rebuild_destroy(c.r);
    }
    free(c.cur);
    free(c.loc);
    free(c.allids);
    free(c.cnt);
    free(c.first);
    free(c.holder);
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
    int given = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--transport") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--grid") == 0)
            given = 1;
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
        run_grid(comm, t, grids[g], g);
    /* Every rebuild context is gone; the transport goes last. */
    hx_transport_destroy(t);
    return hxt_finish(comm);
}
