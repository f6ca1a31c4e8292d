/*
 * zone_check.c - plans against brute force in any box and decomposition
 * (zone_check.h).
 */
#include "zone_check.h"

#include "core/hxi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void hxt_frac_to_x(const hx_decomp *d, const double s[3], double x[3])
{
    for (int k = 0; k < 3; k++)
        x[k] = d->box_lo[k] + s[0] * d->edge[0][k] + s[1] * d->edge[1][k] + s[2] * d->edge[2][k];
}

double *hxt_frac_system(const hx_decomp *d, int n, uint64_t seed)
{
    hxt_rng r = {seed};
    double *x = hxt_xmalloc((size_t) n * 3 * sizeof(double));
    for (int i = 0; i < n; i++) {
        double s[3];
        for (int k = 0; k < 3; k++)
            s[k] = 1e-9 + (1 - 2e-9) * hxt_uniform(&r);
        hxt_frac_to_x(d, s, &x[3 * i]);
    }
    return x;
}

int hxt_take_owned(const hx_decomp *d, const double *X, int n, int **id, double **x)
{
    int m = 0;
    *id = hxt_xmalloc((size_t) (n + 1) * sizeof(int));
    *x = hxt_xmalloc((size_t) (n + 1) * 3 * sizeof(double));
    for (int i = 0; i < n; i++)
        if (hx_decomp_owner(d, &X[3 * i]) == d->rank) {
            (*id)[m] = i;
            memcpy(&(*x)[3 * m], &X[3 * i], 3 * sizeof(double));
            m++;
        }
    return m;
}

void hxt_random_moves(const hx_decomp *d, const double *X, int N, double reach, uint64_t seed,
                      double *want)
{
    hxt_rng r = {seed};
    for (int a = 0; a < N; a++) {
        double s[3];
        for (int k = 0; k < 3; k++)
            s[k] = reach * (2 * hxt_uniform(&r) - 1);
        for (int k = 0; k < 3; k++)
            want[3 * a + k] =
                X[3 * a + k] + s[0] * d->edge[0][k] + s[1] * d->edge[1][k] + s[2] * d->edge[2][k];
    }
}

double hxt_payload(int id, int k)
{
    return (double) id * 0.5 + k - 1.25;
}

double hxt_dist2(const hx_decomp *d, const int mi[3], const double *a, const double *b)
{
    double v[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    for (int k = 2; k >= 0; k--) {
        if (!mi[k])
            continue;
        double h = d->normal[k][0] * v[0] + d->normal[k][1] * v[1] + d->normal[k][2] * v[2];
        double m = nearbyint(h / d->height[k]);
        for (int c = 0; c < 3; c++)
            v[c] -= m * d->edge[k][c];
    }
    return v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
}

int hxt_idt_open(hx_comm *comm, hxt_idt *it)
{
    hx_field f = {(void **) &it->ids, sizeof(int)};
    it->ids = NULL;
    it->fid = -1;
    it->t = hxt_cpu_transport(comm, HX_DOUBLE);
    if (!it->t)
        return 0;
    return hxt_agree(comm, HXT_OK(hx_transport_field_add(it->t, &f, HX_FIELD_INT32, 1, &it->fid)));
}

const int *hxt_idt_run(hxt_idt *it, const hx_plan *plan, const int *home_id, const char *what)
{
    const int ntotal = hx_plan_ntotal(plan), nhome = hx_plan_nhome(plan);
    it->ids = realloc(it->ids, (size_t) (ntotal + 1) * sizeof(int));
    for (int i = 0; i < ntotal; i++)
        it->ids[i] = i < nhome ? home_id[i] : -1;
    if (!HXT_OK(hx_transport_set_plan(it->t, plan)))
        return NULL;
    double *x = hx_transport_coords(it->t);
    const double *px = hx_plan_coords(plan);
    memcpy(x, px, (size_t) nhome * 3 * sizeof(double));
    if (!HXT_OK(hx_transport_fields_forward(it->t, &it->fid, 1, 1)) ||
        !HXT_OK(hx_transport_sync(it->t)))
        return NULL;
    int nbad = 0;
    for (size_t i = 3 * (size_t) nhome; i < 3 * (size_t) ntotal; i++)
        nbad += !hxt_same_d(x[i], px[i]);
    HXT_CHECK(nbad == 0, "%s: %d halo coordinates of the cpu transport differ from the plan's",
              what, nbad);
    return it->ids;
}

void hxt_idt_close(hxt_idt *it)
{
    hx_transport_destroy(it->t);
    free(it->ids);
    it->t = NULL;
    it->ids = NULL;
}

static uint64_t hxt_mix(int64_t id)
{
    hxt_rng r = {(uint64_t) id * 0x2545f4914f6cdd1dull + 17};
    return hxt_next(&r);
}

/* Per atom: this rank's pairs (count and a sum of its partners' hashes). */
static int hxt_local_pairs(const hx_plan *plan, const int *ids, int N, double rc, int *cnt,
                           uint64_t *hs)
{
    const hx_decomp *d = hx_plan_decomp(plan);
    const int mi[3] = {d->grid[0] == 1, d->grid[1] == 1, d->grid[2] == 1};
    const double *X = hx_plan_coords(plan);
    const uint8_t *Z = hx_plan_zones(plan);
    const int ntotal = hx_plan_ntotal(plan);
    int nbad = 0;
    for (int i = 0; i < ntotal; i++)
        for (int j = i + 1; j < ntotal; j++) {
            if (!hx_zone_pair(&Z[4 * i], &Z[4 * j]) ||
                hxt_dist2(d, mi, &X[3 * i], &X[3 * j]) >= rc * rc)
                continue;
            int a = ids[i], b = ids[j];
            if (a < 0 || b < 0 || a >= N || b >= N || a == b) {
                nbad++;
                continue;
            }
            cnt[a]++;
            cnt[b]++;
            hs[a] += hxt_mix(b);
            hs[b] += hxt_mix(a);
        }
    return nbad;
}

/* Rank 0: the counts and hashes summed over the ranks against brute
 * force. */
static void hxt_brute_pairs(const hx_decomp *d, const double *X, int N, double rc,
                            const int *cnt_all, const uint64_t *hs_all, int nr, const char *what)
{
    const int mi[3] = {1, 1, 1};
    long npairs = 0, got = 0;
    int nbad = 0;
    int *bc = hxt_xcalloc((size_t) N, sizeof(int));
    uint64_t *bh = hxt_xcalloc((size_t) N, sizeof(uint64_t));
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            if (hxt_dist2(d, mi, &X[3 * i], &X[3 * j]) < rc * rc) {
                bc[i]++;
                bc[j]++;
                bh[i] += hxt_mix(j);
                bh[j] += hxt_mix(i);
                npairs++;
            }
    for (int a = 0; a < N; a++) {
        int na = 0;
        uint64_t h = 0;
        for (int r = 0; r < nr; r++) {
            na += cnt_all[(size_t) r * N + a];
            h += hs_all[(size_t) r * N + a];
        }
        got += na;
        nbad += na != bc[a] || h != bh[a];
    }
    HXT_CHECK(npairs > 0, "%s: brute force finds no pair", what);
    HXT_CHECK(got == 2 * npairs && nbad == 0,
              "%s: ranks compute %ld pairs, brute force %ld; %d atoms with wrong pairs", what,
              got / 2, npairs, nbad);
    free(bc);
    free(bh);
}

void hxt_check_zone_pairs(hx_comm *comm, const hx_plan *plan, const int *ids, const double *X,
                          int N, double rc, const char *what)
{
    const hx_decomp *d = hx_plan_decomp(plan);
    const double *x = hx_plan_coords(plan);
    const int nr = hx_comm_size(comm);
    int *cnt = hxt_xcalloc((size_t) N, sizeof(int));
    uint64_t *hs = hxt_xcalloc((size_t) N, sizeof(uint64_t));
    int *cnt_all = hxt_xmalloc((size_t) N * nr * sizeof(int));
    uint64_t *hs_all = hxt_xmalloc((size_t) N * nr * sizeof(uint64_t));
    int nbad = hxt_local_pairs(plan, ids, N, rc, cnt, hs), nimg = 0;
    HXT_CHECK(nbad == 0, "%s: %d pairs with an unknown atom or an atom's own image", what, nbad);
    for (int i = hx_plan_nhome(plan); i < hx_plan_ntotal(plan); i++) {
        double v[3];
        if (ids[i] < 0 || ids[i] >= N) {
            nimg++;
            continue;
        }
        for (int k = 0; k < 3; k++)
            v[k] = x[3 * i + k] - X[3 * ids[i] + k];
        nimg += !hxt_is_lattice(d, v, 1e-9);
    }
    HXT_CHECK(nimg == 0, "%s: %d halo atoms are no image of their atom", what, nimg);
    HXT_OK(hxi_allgather(comm, cnt, (size_t) N * sizeof(int), cnt_all));
    HXT_OK(hxi_allgather(comm, hs, (size_t) N * sizeof(uint64_t), hs_all));
    if (hx_comm_rank(comm) == 0)
        hxt_brute_pairs(d, X, N, rc, cnt_all, hs_all, nr, what);
    free(cnt);
    free(hs);
    free(cnt_all);
    free(hs_all);
}
