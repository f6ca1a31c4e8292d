/*
 * dmigrate_util.c - the fixture of test_dmigrate (dmigrate_util.h): the
 * context of one grid, device arrays in and out, the host float wrap, the
 * census, and one device migration checked against hx_migrate.
 */
#include "dmigrate_util.h"

#include "core/hxi.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint32_t nan_bits = 0x7fc01234u; /* a NaN with a payload */

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
 * coordinates outside the box are touched. The steps of hxr_wrap
 * (src/rebuild/kernels.cu), written again here on purpose: this is the
 * reference the device is checked against. */
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

int hxt_dm_outside_box(const hxt_dm_ctx *c, int k, float x)
{
    return (double) x < c->d.box_lo[k] || (double) x >= c->d.box_lo[k] + c->d.box_len[k];
}

static int near_bound(const hxt_dm_ctx *c, int k, double v)
{
    for (int b = 0; b <= c->d.grid[k]; b++)
        if (fabs(v - c->bound[k][b]) < HXT_DM_MARGIN)
            return 1;
    return 0;
}

void hxt_dm_settle(const hxt_dm_ctx *c, float *t)
{
    for (int k = 0; k < 3; k++)
        for (int tries = 0; tries < 16; tries++) {
            float w = wrapf(t[k], c->d.box_lo[k], c->d.box_len[k]);
            if (isfinite(w) && !near_bound(c, k, (double) w))
                break;
            t[k] += 3.0f * (float) HXT_DM_MARGIN;
        }
}

static void wrap_all(const hxt_dm_ctx *c, const float *tgt, float *ref)
{
    for (int a = 0; a < c->N; a++)
        for (int k = 0; k < 3; k++)
            ref[3 * a + k] = wrapf(tgt[3 * a + k], c->d.box_lo[k], c->d.box_len[k]);
}

/* Every rank's atom list after a migration: allids, cnt, first, holder.
 * Collective. */
static void refresh(hxt_dm_ctx *c)
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

static void dev_free(hxt_dm_dev *a)
{
    if (a->x)
        cudaFree(a->x);
    if (a->v)
        cudaFree(a->v);
    if (a->id)
        cudaFree(a->id);
    memset(a, 0, sizeof *a);
}

int hxt_dm_cuda_ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 1;
    cudaGetLastError();
    HXT_CHECK(e == cudaSuccess, "%s: %s", what, cudaGetErrorString(e));
    return 0;
}

int hxt_dm_upload(hxt_dm_ctx *c, const float *tgt, int xs, int tight, int full)
{
    hxt_dm_dev *a = &c->a;
    const int n = c->nloc;
    int ok = 1;
    if (tight || a->xs != xs || a->cap < n || (!a->x && n > 0)) {
        int cap = tight ? n : n + n / 2 + 64;
        dev_free(a);
        a->xs = xs;
        a->cap = cap;
        if (cap > 0)
            ok = hxt_dm_cuda_ok(cudaMalloc((void **) &a->x, (size_t) cap * xs * sizeof(float)),
                                "cudaMalloc x") &&
                 hxt_dm_cuda_ok(cudaMalloc((void **) &a->v, (size_t) cap * 4 * sizeof(float)),
                                "cudaMalloc v") &&
                 hxt_dm_cuda_ok(cudaMalloc((void **) &a->id, (size_t) cap * sizeof(int64_t)),
                                "cudaMalloc id");
        full = 1;
    }
    if (!a->fields_ok)
        full = 1;
    a->n = n;
    float *hx = hxt_xmalloc((size_t) n * xs * sizeof(float));
    float *hv = hxt_xmalloc((size_t) n * 4 * sizeof(float));
    for (int i = 0; i < n; i++) {
        int64_t id = c->loc[i];
        for (int k = 0; k < 3; k++)
            hx[(size_t) i * xs + k] = tgt[3 * id + k];
        if (xs == 4)
            hx[(size_t) i * xs + 3] = id == c->nan4 ? nan_word() : code_of(id);
        vel_of(id, &hv[4 * (size_t) i]);
    }
    if (ok && n > 0)
        ok = hxt_dm_cuda_ok(
            cudaMemcpy(a->x, hx, (size_t) n * xs * sizeof(float), cudaMemcpyHostToDevice),
            "upload x");
    if (ok && n > 0 && full)
        ok = hxt_dm_cuda_ok(
                 cudaMemcpy(a->v, hv, (size_t) n * 4 * sizeof(float), cudaMemcpyHostToDevice),
                 "upload v") &&
             hxt_dm_cuda_ok(
                 cudaMemcpy(a->id, c->loc, (size_t) n * sizeof(int64_t), cudaMemcpyHostToDevice),
                 "upload id");
    /* The transport's stream must see the copies done. */
    if (ok)
        ok = hxt_dm_cuda_ok(cudaDeviceSynchronize(), "after the upload");
    free(hx);
    free(hv);
    ok = hxt_agree(c->comm, ok);
    a->fields_ok = ok;
    return ok;
}

/* The device arrays' first n atoms into host memory (n + 1 allocated). */
static int download(const hxt_dm_ctx *c, int n, float **gx, float **gv, int64_t **gid)
{
    const hxt_dm_dev *a = &c->a;
    *gx = hxt_xmalloc(((size_t) n + 1) * a->xs * sizeof(float));
    *gv = hxt_xmalloc(((size_t) n + 1) * 4 * sizeof(float));
    *gid = hxt_xmalloc(((size_t) n + 1) * sizeof(int64_t));
    if (!hxt_dm_cuda_ok(cudaDeviceSynchronize(), "before the download"))
        return 0;
    if (n == 0)
        return 1;
    return hxt_dm_cuda_ok(
               cudaMemcpy(*gx, a->x, (size_t) n * a->xs * sizeof(float), cudaMemcpyDeviceToHost),
               "download x") &&
           hxt_dm_cuda_ok(
               cudaMemcpy(*gv, a->v, (size_t) n * 4 * sizeof(float), cudaMemcpyDeviceToHost),
               "download v") &&
           hxt_dm_cuda_ok(
               cudaMemcpy(*gid, a->id, (size_t) n * sizeof(int64_t), cudaMemcpyDeviceToHost),
               "download id");
}

void hxt_dm_fields_of(hxt_dm_ctx *c, hx_dfield f[2])
{
    f[0].data = (void **) &c->a.v;
    f[0].size = 4 * sizeof(float);
    f[1].data = (void **) &c->a.id;
    f[1].size = sizeof(int64_t);
}

void hxt_dm_summary(const hxt_dm_ctx *c, int fails0, const char *fmt, ...)
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

void hxt_dm_not_run(const hxt_dm_ctx *c, const char *what)
{
    if (c->rank == 0)
        printf("  grid %-6s %s: not run: %s\n", c->gs, what,
               c->nr == 1 ? "one rank, nothing can move between ranks"
                          : "no dimension with 3 or more domains");
}

int hxt_dm_census(hxt_dm_ctx *c, int n, int64_t *natoms, uint64_t *sum)
{
    *natoms = -1;
    *sum = 0;
    return hxt_agree(c->comm, HXT_OK(hx_rebuild_census(c->r, n, c->a.id, natoms, sum)));
}

/* 1 when p is not the position of atom e wrapped from its target: the
 * host's float wrap (ref) bitwise where the target was inside the box, to
 * 2 ulp of the box length where it was wrapped. */
static int pos_differs(const hxt_dm_ctx *c, const float *tgt, const float *ref, int64_t e,
                       const float *p)
{
    int bad = 0;
    for (int k = 0; k < 3; k++) {
        const float want = ref[3 * e + k];
        if (hxt_dm_outside_box(c, k, tgt[3 * e + k]))
            bad |= !(fabsf(p[k] - want) <= 2.0f * c->ulp[k]);
        else
            bad |= !hxt_same_f(p[k], want);
    }
    return bad;
}

static int cmp_id(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

int hxt_dm_set_differs(const int64_t *a, int na, const int64_t *b, int nb)
{
    int64_t *sa = hxt_xmalloc(((size_t) na + 1) * sizeof(int64_t));
    int64_t *sb = hxt_xmalloc(((size_t) nb + 1) * sizeof(int64_t));
    memcpy(sa, a, (size_t) na * sizeof(int64_t));
    memcpy(sb, b, (size_t) nb * sizeof(int64_t));
    qsort(sa, (size_t) na, sizeof(int64_t), cmp_id);
    qsort(sb, (size_t) nb, sizeof(int64_t), cmp_id);
    int d = na > nb ? na - nb : nb - na;
    for (int i = 0; i < na && i < nb; i++)
        d += sa[i] != sb[i];
    free(sa);
    free(sb);
    return d;
}

int hxt_dm_migrate_case(hxt_dm_ctx *c, const float *tgt, int xs, int nf, int tight, int full,
                        int *moved)
{
    if (c->any_order && nf != 2) {
        HXT_CHECK(0, "grid %s: a migration without order is checked by the ids: give two fields",
                  c->gs);
        return 0;
    }
    hxt_dm_dev *a = &c->a;
    const int N = c->N;
    if (moved)
        *moved = 0;
    if (!hxt_dm_upload(c, tgt, xs, tight, full))
        return 0;
    float *ref = hxt_xmalloc((size_t) N * 3 * sizeof(float));
    wrap_all(c, tgt, ref);
    int64_t na0 = 0, na1 = 0;
    uint64_t cs0 = 0, cs1 = 0;
    if (nf == 2 && hxt_dm_census(c, a->n, &na0, &cs0))
        HXT_CHECK(na0 == N, "grid %s: census before gives %lld atoms of %d", c->gs, (long long) na0,
                  N);

    /* The host reference, on the same floats. */
    int nh = c->nloc, caph = nh > 0 ? nh : 1;
    double *xh = hxt_xmalloc((size_t) caph * 3 * sizeof(double));
    int64_t *idh = hxt_xmalloc((size_t) caph * sizeof(int64_t));
    for (int i = 0; i < nh; i++) {
        idh[i] = c->loc[i];
        for (int k = 0; k < 3; k++)
            xh[3 * i + k] = (double) tgt[3 * idh[i] + k];
    }
    hx_field hf = {(void **) &idh, sizeof(int64_t)};
    int hok = hxt_agree(c->comm, HXT_OK(hx_migrate(c->comm, &c->d, &nh, &caph, &xh, &hf, 1)));

    /* The device. */
    hx_dfield f[2];
    hxt_dm_fields_of(c, f);
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
        /* Without order: the same ids as hx_migrate's, as sets; each
         * atom's data are then checked against its own id. */
        if (lok && c->any_order)
            nid = hxt_dm_set_differs(gid, n, idh, nh);
        for (int i = 0; lok && i < n; i++) {
            /* the atom hx_migrate has here (without order: the device's) */
            const int64_t e = c->any_order ? gid[i] : idh[i];
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
            for (int k = 0; k < 3; k++)
                nout += !((double) p[k] >= c->d.dom_lo[k] && (double) p[k] < c->d.dom_hi[k]);
            if (pos_differs(c, tgt, ref, e, p) && npos++ == 0)
                ex_pos = i;
        }
        HXT_CHECK(lok, "grid %s: the arrays could not be read back", c->gs);
        if (nid && c->any_order)
            HXT_CHECK(nid == 0, "grid %s: %d of the device's %d atoms (ids) are not hx_migrate's",
                      c->gs, nid, n);
        else if (nid)
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
        int64_t *mine = hxt_xmalloc(((size_t) n + 1) * sizeof(int64_t));
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
        if (nf == 2 && hxt_dm_census(c, a->n, &na1, &cs1))
            HXT_CHECK(na1 == N && cs1 == cs0,
                      "grid %s: census after gives %lld atoms, checksum %016llx (before %016llx)",
                      c->gs, (long long) na1, (unsigned long long) cs1, (unsigned long long) cs0);
        if (c->any_order && lok && n == nh && nid == 0) /* loc follows the device */
            memcpy(idh, gid, (size_t) n * sizeof(int64_t));
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

void hxt_dm_check_untouched(hxt_dm_ctx *c, const float *tgt, int64_t bad, int n0, int64_t na0,
                            uint64_t cs0, const char *what)
{
    hxt_dm_dev *a = &c->a;
    /* The failed call has wrapped every finite position into the box. */
    float *ref = hxt_xmalloc((size_t) c->N * 3 * sizeof(float));
    wrap_all(c, tgt, ref);
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
        if (c->loc[i] != bad)
            npos += pos_differs(c, tgt, ref, c->loc[i], &gx[(size_t) i * a->xs]);
    }
    HXT_CHECK(lok && nid == 0 && npos == 0,
              "grid %s %s: after the failed migrate %d atoms moved and %d positions changed", c->gs,
              what, nid, npos);
    int64_t na1;
    uint64_t cs1;
    if (hxt_dm_census(c, a->n, &na1, &cs1))
        HXT_CHECK(na1 == c->N && cs1 == cs0 && na0 == c->N,
                  "grid %s %s: census gives %lld atoms (before %lld, of %d), checksum %016llx "
                  "(before %016llx)",
                  c->gs, what, (long long) na1, (long long) na0, c->N, (unsigned long long) cs1,
                  (unsigned long long) cs0);
    /* The fields are trusted again only where the ids are in place. */
    a->fields_ok = hxt_agree(c->comm, lok && nid == 0 && a->n == n0);
    free(ref);
    free(gx);
    free(gv);
    free(gid);
}

int hxt_dm_open(hxt_dm_ctx *c, hx_comm *comm, hx_transport *t, const int grid[3], int gi, int n,
                const double box_lo[3], double w_dom, double l_free, double rh)
{
    memset(c, 0, sizeof *c);
    c->comm = comm;
    c->t = t;
    c->gi = gi;
    c->nan4 = -1;
    c->rank = hx_comm_rank(comm);
    c->nr = hx_comm_size(comm);
    hxt_grid_str(grid, c->gs);
    double len[3];
    for (int k = 0; k < 3; k++)
        len[k] = grid[k] > 1 ? w_dom * grid[k] : l_free;
    if (!hxt_agree(comm, HXT_OK(hx_decomp_init(&c->d, box_lo, len, rh, grid, c->nr, c->rank))))
        return 0;
    for (int k = 0; k < 3; k++) {
        if (grid[k] > HXT_DM_MAXG) {
            HXT_CHECK(grid[k] <= HXT_DM_MAXG, "grid %s: more than %d domains along a dimension",
                      c->gs, HXT_DM_MAXG);
            return 0;
        }
        for (int b = 0; b < grid[k]; b++)
            c->bound[k][b] = box_lo[k] + len[k] * b / grid[k]; /* as hx_decomp_init */
        c->bound[k][grid[k]] = box_lo[k] + len[k];
        float fl = (float) len[k];
        c->ulp[k] = nextafterf(fl, INFINITY) - fl;
    }
    c->N = n * c->nr;
    const int N = c->N;

    /* A random system, every coordinate a float HXT_DM_MARGIN away from every
     * domain bound (so that ownership is the same in float and double). */
    hxt_sys s;
    hxt_sys_random(&s, N, box_lo, len, 777u + (uint64_t) gi);
    for (int a = 0; a < N; a++)
        for (int k = 0; k < 3; k++) {
            double v = s.x[3 * a + k];
            for (int b = 0; b <= grid[k]; b++)
                if (fabs(v - c->bound[k][b]) < 2 * HXT_DM_MARGIN)
                    v = b == grid[k] ? c->bound[k][b] - 3 * HXT_DM_MARGIN
                                     : c->bound[k][b] + 3 * HXT_DM_MARGIN;
            s.x[3 * a + k] = (double) (float) v;
        }
    hxt_local l;
    hxt_local_take(&l, &s, &c->d);
    c->cur = hxt_xmalloc((size_t) N * 3 * sizeof(float));
    for (int i = 0; i < N * 3; i++)
        c->cur[i] = (float) s.x[i];
    c->nloc = l.n;
    c->loc = hxt_xmalloc(((size_t) l.n + 1) * sizeof(int64_t));
    memcpy(c->loc, l.id, (size_t) l.n * sizeof(int64_t));
    hxt_local_free(&l);
    hxt_sys_free(&s);
    c->holder = hxt_xmalloc((size_t) N * sizeof(int));
    c->first = hxt_xmalloc((size_t) c->nr * sizeof(int));
    refresh(c);
    return 1;
}

void hxt_dm_close(hxt_dm_ctx *c)
{
    dev_free(&c->a);
    free(c->cur);
    free(c->loc);
    free(c->allids);
    free(c->cnt);
    free(c->first);
    free(c->holder);
}
