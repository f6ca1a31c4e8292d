#include "sysgen.h"

#include "core/hxi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int hxt_same_d(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}
int hxt_same_f(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

int hxt_agree(hx_comm *c, int ok)
{
    int bad = !ok;
    if (hxi_allreduce_int(c, &bad, 1, 1) != HX_OK) {
        fprintf(stderr, "[rank %d] hxi_allreduce_int failed: %s\n", hxt_rank, hx_last_error());
        exit(1);
    }
    return bad == 0;
}

int hxt_transport_variants(unsigned need, unsigned skip, int puts, hxt_tvariant *v, int max)
{
    int n = 0;
    for (int i = 0; i < hx_transport_count(); i++) {
        const char *name = hx_transport_name_at(i);
        const unsigned caps = hx_transport_caps_of(name);
        if ((caps & need) != need || (caps & skip))
            continue;
        for (int put = 0; put < (puts && (caps & HX_CAP_PEER) ? 2 : 1) && n < max; put++) {
            v[n].name = name;
            v[n].put = put;
            snprintf(v[n].label, sizeof v[n].label, "%s%s", name, put ? "(put)" : "");
            n++;
        }
    }
    return n;
}

hx_transport *hxt_transport_try(hx_comm *comm, const hx_transport_opts *o, const hxt_tvariant *v)
{
    hx_transport_opts opts = *o;
    opts.name = v->name;
    opts.force_put = v->put;
    hx_transport *t = NULL;
    const hx_status st = hx_transport_create(&t, comm, &opts);
    if (hxt_agree(comm, st == HX_OK))
        return t;
    HXT_CHECK(st == HX_OK || st == HX_ERR_UNSUPPORTED, "%s: create: %s: %s", v->label,
              hx_status_string(st), hx_last_error());
    if (t)
        hx_transport_destroy(t);
    if (hxt_rank == 0 || st != HX_OK)
        printf("[rank %d] %s: not run: %s\n", hxt_rank, v->label,
               st == HX_OK ? "refused on another rank" : hx_last_error());
    return NULL;
}

/* ------------------------------------------------------------ systems */

void hxt_sys_random(hxt_sys *s, int n, const double lo[3], const double len[3], uint64_t seed)
{
    hxt_rng r = {seed};
    s->n = n;
    for (int d = 0; d < 3; d++) {
        s->box_lo[d] = lo[d];
        s->box_len[d] = len[d];
    }
    s->x = hxt_xmalloc((size_t) n * 3 * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) {
            double v;
            do
                v = lo[d] + len[d] * hxt_uniform(&r);
            while (!(v >= lo[d] && v < lo[d] + len[d]));
            s->x[3 * i + d] = v;
        }
}

void hxt_sys_free(hxt_sys *s)
{
    free(s->x);
    s->x = NULL;
    s->n = 0;
}

void hxt_local_take(hxt_local *l, const hxt_sys *s, const hx_decomp *d)
{
    l->n = 0;
    l->id = hxt_xmalloc((size_t) s->n * sizeof(int64_t));
    l->x = hxt_xmalloc((size_t) s->n * 3 * sizeof(double));
    for (int i = 0; i < s->n; i++)
        if (hx_decomp_owner(d, &s->x[3 * i]) == d->rank) {
            l->id[l->n] = i;
            memcpy(&l->x[3 * l->n], &s->x[3 * i], 3 * sizeof(double));
            l->n++;
        }
}

void hxt_local_free(hxt_local *l)
{
    free(l->id);
    free(l->x);
    l->id = NULL;
    l->x = NULL;
    l->n = 0;
}

/* ----------------------------------------------------------- gathering */

void *hxt_allgatherv(hx_comm *c, const void *buf, int count, size_t elem, int *total, int **counts)
{
    int nr = hx_comm_size(c);
    int *cnt = hxt_xmalloc((size_t) nr * sizeof(int));
    if (hxi_allgather(c, &count, sizeof(int), cnt) != HX_OK) {
        fprintf(stderr, "[rank %d] hxi_allgather failed: %s\n", hxt_rank, hx_last_error());
        exit(1);
    }
    int max = 1, sum = 0;
    for (int r = 0; r < nr; r++) {
        if (cnt[r] > max)
            max = cnt[r];
        sum += cnt[r];
    }
    /* Equal-size blocks padded to the largest count, then compacted. */
    char *pad = hxt_xcalloc((size_t) max, elem);
    if (count > 0)
        memcpy(pad, buf, (size_t) count * elem);
    char *all = hxt_xmalloc((size_t) nr * max * elem);
    if (hxi_allgather(c, pad, (size_t) max * elem, all) != HX_OK) {
        fprintf(stderr, "[rank %d] hxi_allgather failed: %s\n", hxt_rank, hx_last_error());
        exit(1);
    }
    char *out = hxt_xmalloc((size_t) sum * elem);
    size_t at = 0;
    for (int r = 0; r < nr; r++) {
        memcpy(out + at, all + (size_t) r * max * elem, (size_t) cnt[r] * elem);
        at += (size_t) cnt[r] * elem;
    }
    free(pad);
    free(all);
    *total = sum;
    if (counts)
        *counts = cnt;
    else
        free(cnt);
    return out;
}

int hxt_gather(hx_comm *c, int nlocal, const int64_t *id, const double *x, int n,
               const hxt_sys *box_src, hxt_sys *g, int *owner)
{
    int total, *counts;
    int64_t *ids = hxt_allgatherv(c, id, nlocal, sizeof(int64_t), &total, &counts);
    int total2;
    double *xs = hxt_allgatherv(c, x, nlocal, 3 * sizeof(double), &total2, NULL);
    int *held = hxt_xcalloc((size_t) n, sizeof(int));
    int bad = 0;
    g->n = n;
    memcpy(g->box_lo, box_src->box_lo, sizeof g->box_lo);
    memcpy(g->box_len, box_src->box_len, sizeof g->box_len);
    g->x = hxt_xcalloc((size_t) n * 3, sizeof(double));
    int k = 0;
    for (int r = 0; r < hx_comm_size(c); r++)
        for (int i = 0; i < counts[r]; i++, k++) {
            int64_t a = ids[k];
            if (a < 0 || a >= n) {
                if (bad++ < 5)
                    fprintf(stderr, "[rank %d] gather: rank %d holds id %lld out of range\n",
                            hxt_rank, r, (long long) a);
                continue;
            }
            if (held[a]++) {
                if (bad++ < 5)
                    fprintf(stderr, "[rank %d] gather: id %lld held twice (again on rank %d)\n",
                            hxt_rank, (long long) a, r);
                continue;
            }
            memcpy(&g->x[3 * a], &xs[3 * k], 3 * sizeof(double));
            if (owner)
                owner[a] = r;
        }
    int missing = 0;
    for (int a = 0; a < n; a++)
        if (!held[a] && missing++ < 5)
            fprintf(stderr, "[rank %d] gather: id %d held by no rank\n", hxt_rank, a);
    free(held);
    free(ids);
    free(xs);
    free(counts);
    return bad + missing;
}

/* --------------------------------------------------------------- grids */

static const int hxt_all_grids[][3] = {
    {1, 1, 1},                                  /* 1 */
    {2, 1, 1}, {1, 2, 1}, {1, 1, 2},            /* 2 */
    {1, 3, 1}, {3, 1, 1}, {1, 1, 3},            /* 3 */
    {2, 2, 1}, {1, 2, 2}, {4, 1, 1}, {2, 1, 2}, /* 4 */
    {5, 1, 1},                                  /* 5 */
    {1, 2, 3}, {3, 2, 1}, {6, 1, 1}, {1, 1, 6}, /* 6: 6 domains give 3 pulses */
    {1, 7, 1},                                  /* 7 */
    {2, 2, 2}, {4, 2, 1}, {8, 1, 1}, {1, 2, 4}, /* 8 */
};

int hxt_grids_for(int nranks, int grids[][3], int max)
{
    int k = 0;
    for (size_t i = 0; i < sizeof hxt_all_grids / sizeof hxt_all_grids[0]; i++) {
        const int *g = hxt_all_grids[i];
        if (g[0] * g[1] * g[2] == nranks && k < max) {
            grids[k][0] = g[0];
            grids[k][1] = g[1];
            grids[k][2] = g[2];
            k++;
        }
    }
    return k;
}

const char *hxt_grid_str(const int g[3], char buf[32])
{
    snprintf(buf, 32, "%dx%dx%d", g[0], g[1], g[2]);
    return buf;
}

/* ---------------------------------------------------------- transports */

hx_transport *hxt_cpu_transport(hx_comm *c, hx_dtype dtype)
{
    hx_transport_opts o;
    hx_transport *t = NULL;
    hx_transport_opts_init(&o);
    o.name = "cpu";
    o.dtype = dtype;
    if (!HXT_OK(hx_transport_create(&t, c, &o)))
        return NULL;
    return t;
}

void hxt_min_image(const hx_decomp *d, const int mi[3], double v[3])
{
    for (int k = 2; k >= 0; k--) {
        if (!mi[k])
            continue;
        double h = d->normal[k][0] * v[0] + d->normal[k][1] * v[1] + d->normal[k][2] * v[2];
        double n = nearbyint(h / d->height[k]);
        for (int c = 0; c < 3; c++)
            v[c] -= n * d->edge[k][c];
    }
}

int *hxt_forward_ids(hx_comm *comm, const hx_plan *plan, const int *home_id, const char *what,
                     hx_transport **keep)
{
    int ntotal = hx_plan_ntotal(plan), nhome = hx_plan_nhome(plan), id = -1;
    int *ids = hxt_xmalloc((size_t) (ntotal + 1) * sizeof(int));
    hx_transport *t = hxt_cpu_transport(comm, HX_DOUBLE);
    hx_field f = {(void **) &ids, sizeof(int)};
    for (int i = 0; i < ntotal; i++)
        ids[i] = i < nhome ? home_id[i] : -1;
    if (t && HXT_OK(hx_transport_field_add(t, &f, HX_FIELD_INT32, 1, &id)) &&
        HXT_OK(hx_transport_set_plan(t, plan))) {
        double *x = hx_transport_coords(t);
        const double *px = hx_plan_coords(plan);
        memcpy(x, px, (size_t) nhome * 3 * sizeof(double));
        if (HXT_OK(hx_transport_fields_forward(t, &id, 1, 1)) && HXT_OK(hx_transport_sync(t))) {
            int nbad = 0;
            for (size_t i = 3 * (size_t) nhome; i < 3 * (size_t) ntotal; i++)
                nbad += !hxt_same_d(x[i], px[i]);
            HXT_CHECK(nbad == 0,
                      "%s: %d halo coordinates of the cpu transport differ from the "
                      "plan's",
                      what, nbad);
        }
    }
    if (keep && t && id >= 0) /* the field points at a local variable: gone */
        HXT_OK(hx_transport_field_remove(t, id));
    if (keep)
        *keep = t;
    else
        hx_transport_destroy(t);
    return ids;
}

void hxt_sys_tilt(hxt_sys *s, const hx_decomp *d)
{
    if (!d->triclinic)
        return;
    for (int i = 0; i < s->n; i++) {
        double *x = &s->x[3 * (size_t) i], f[3];
        for (int k = 0; k < 3; k++)
            f[k] = (x[k] - d->box_lo[k]) / d->box_len[k];
        for (int k = 0; k < 3; k++)
            x[k] =
                d->box_lo[k] + f[0] * d->edge[0][k] + f[1] * d->edge[1][k] + f[2] * d->edge[2][k];
    }
}

int hxt_is_lattice(const hx_decomp *d, const double v[3], double tol)
{
    double s[3];
    s[2] = v[2] / d->box_len[2];
    s[1] = (v[1] - d->tilt[2] * s[2]) / d->box_len[1];
    s[0] = (v[0] - d->tilt[0] * s[1] - d->tilt[1] * s[2]) / d->box_len[0];
    for (int k = 0; k < 3; k++)
        if (!(fabs(s[k] - nearbyint(s[k])) <= tol))
            return 0;
    return 1;
}

int hxt_ids_once(hx_comm *comm, const int64_t *id, int n, int N)
{
    int tot = 0, *counts = NULL, nbad = 0;
    int64_t *all = hxt_allgatherv(comm, id, n, sizeof(int64_t), &tot, &counts);
    char *seen = hxt_xcalloc((size_t) N, 1);
    for (int i = 0; i < tot; i++)
        if (all[i] >= 0 && all[i] < N && seen[all[i]] < 2)
            seen[all[i]]++;
    for (int a = 0; a < N; a++)
        nbad += seen[a] != 1;
    nbad += tot != N;
    free(all);
    free(counts);
    free(seen);
    return nbad;
}

int hxt_walk_plans(hx_comm *comm, const hxt_walk *w, hxt_case_fn fn, void *ctx, hx_plan **last)
{
    int nr = hx_comm_size(comm), rank = hx_comm_rank(comm), ran = 0;
    int own[16][3];
    const int(*grids)[3] = w->grids;
    int ng = w->ngrids;
    if (!grids) {
        ng = hxt_grids_for(nr, own, 16);
        grids = (const int(*)[3]) own;
    }
    uint64_t seed = w->seed;
    hx_plan *kept = NULL;
    for (int g = 0; g < ng; g++)
        for (int k = 0; k < w->nspecs; k++) {
            hxt_case c;
            double lo[3], len[3];
            memset(&c, 0, sizeof c);
            c.grid = grids[g];
            c.spec = w->specs[k];
            hxt_grid_str(grids[g], c.gs);
            if (w->box_of) {
                w->box_of(grids[g], lo, len);
            } else {
                memcpy(lo, w->box_lo, sizeof lo);
                memcpy(len, w->box_len, sizeof len);
            }
            if (c.spec.natoms == 0)
                c.spec.natoms = (int) (c.spec.density * len[0] * len[1] * len[2]);
            double tilt[3] = {0, 0, 0};
            if (w->tilt_frac) {
                tilt[0] = w->tilt_frac[0] * len[0];
                tilt[1] = w->tilt_frac[1] * len[0];
                tilt[2] = w->tilt_frac[2] * len[1];
            }
            if (!hxt_agree(comm, HXT_OK(hx_decomp_init_tilted(&c.d, lo, len, tilt, c.spec.rh,
                                                              grids[g], nr, rank))))
                continue;
            c.seed = seed++;
            hxt_sys_random(&c.s, c.spec.natoms, lo, len, c.seed);
            hxt_sys_tilt(&c.s, &c.d);
            hxt_local_take(&c.l, &c.s, &c.d);
            int ok = HXT_OK(w->full ? hx_plan_create_full(&c.plan, comm, &c.d, c.l.n, c.l.x)
                                    : hx_plan_create(&c.plan, comm, &c.d, c.l.n, c.l.x));
            if (hxt_agree(comm, ok)) {
                fn(comm, &c, ctx);
                ran++;
                if (w->keep) {
                    if (kept)
                        hx_plan_destroy(kept);
                    kept = c.plan;
                    ok = 0; /* kept: not destroyed below */
                }
            }
            if (ok)
                hx_plan_destroy(c.plan);
            hxt_local_free(&c.l);
            hxt_sys_free(&c.s);
        }
    if (last)
        *last = kept;
    else if (kept)
        hx_plan_destroy(kept);
    return ran;
}

int hxt_for_each_plan(hx_comm *comm, const double box_lo[3], const double box_len[3],
                      const hxt_spec *specs, int nspecs, uint64_t seed, hxt_case_fn fn, void *ctx)
{
    hxt_walk w = {
        .box_lo = box_lo, .box_len = box_len, .specs = specs, .nspecs = nspecs, .seed = seed};
    return hxt_walk_plans(comm, &w, fn, ctx, NULL);
}
