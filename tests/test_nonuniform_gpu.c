/*
 * test_nonuniform_gpu: non-uniform domains (hx_decomp_set_cuts) on the GPU.
 *
 * For each grid (hxt_gpu_setup's, or --grid) and a box with and without
 * tilt, a run through the cuts equal -> thin -> thick -> thin (the pulse
 * count along a dimension of four domains changes in both directions):
 *  - for each cuts, a random system (float values; atoms within 1e-3 of a
 *    pulse limit of any rank, under these cuts or the next step's, left
 *    out, as test_dplan does) and its host plan, set on the same
 *    transports as the plan before: every GPU transport (peer ones with
 *    and without force_put) against a float cpu transport over ten steps
 *    (hxt_gpu_check_plan): symmetric buffers grow or stay as the pulse
 *    count changes, with no hang;
 *  - the device plan (hx_plan_create_device) on the same atoms against the
 *    host plan: pulses, counts, offsets, shifts and maps equal;
 *  - the cuts moved a little (each inner bound by at most a quarter of the
 *    thinner domain beside it): hx_rebuild_set_decomp, hx_rebuild_migrate
 *    of the device atoms with their ids, every atom held once (the census)
 *    by its owner under the new cuts, and the device plan on the result
 *    against the host plan on the same coordinates.
 * Exits 77 where there is no GPU or no grid for the rank count.
 */
#include "gpucases.h"
#include "zone_check.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RH     HXT_GPU_RH
#define MARGIN 1e-3
#define MAXT   16

/* Box length along a dimension of g domains. */
static double len_for(int g)
{
    return g == 1 ? 8.0 : (g * 2.6 > 7.2 ? g * 2.6 : 7.2);
}

/* Cuts of kind 0 (equal), 1 (thin: domains down to a fifth of the cutoff)
 * or 2 (thick) along every decomposed dimension, drawn from r until the
 * library takes them. */
static int set_cuts(hx_decomp *d, int kind, hxt_rng *r)
{
    for (int k = 0; k < 3; k++) {
        const int n = d->grid[k];
        double cuts[HX_MAX_CUT_DOMAINS + 1];
        hx_status st = HX_ERR_CUTOFF_TOO_LARGE;
        if (n == 1)
            continue;
        for (int tries = 0; tries < 50 && st == HX_ERR_CUTOFF_TOO_LARGE; tries++) {
            double w[HX_MAX_CUT_DOMAINS], sum = 0,
                                          wmin = (kind == 1 ? 0.2 : 1.05) * RH / d->height[k];
            if (n * wmin > 0.9)
                wmin = 0.9 / n;
            for (int i = 0; i < n; i++)
                sum += w[i] = kind == 0 ? 1.0 : 0.05 + hxt_uniform(r);
            cuts[0] = 0;
            for (int i = 1; i < n; i++)
                cuts[i] = kind == 0 ? (double) i / n
                                    : cuts[i - 1] + wmin + (1 - n * wmin) * w[i - 1] / sum;
            cuts[n] = 1;
            st = hx_decomp_set_cuts(d, k, cuts);
        }
        if (!HXT_OK(st))
            return 0;
    }
    return 1;
}

/* d's cuts moved a little: each inner bound by up to a quarter of the
 * thinner domain beside it (less where the library finds a domain too
 * thin), so that no atom's owner is more than one domain away. */
static int nudge_cuts(hx_decomp *d, hxt_rng *r)
{
    for (int k = 0; k < 3; k++) {
        const int n = d->grid[k];
        double cuts[HX_MAX_CUT_DOMAINS + 1], old[HX_MAX_CUT_DOMAINS + 1];
        hx_status st = HX_ERR_CUTOFF_TOO_LARGE;
        if (n == 1)
            continue;
        for (int i = 0; i <= n; i++)
            old[i] = i == 0 ? 0 : (i == n ? 1 : d->cut[k][i]);
        for (double scale = 0.25; scale > 1e-3 && st == HX_ERR_CUTOFF_TOO_LARGE; scale /= 2) {
            memcpy(cuts, old, sizeof cuts);
            for (int i = 1; i < n; i++) {
                double w = fmin(old[i] - old[i - 1], old[i + 1] - old[i]);
                cuts[i] += scale * w * (2 * hxt_uniform(r) - 1);
            }
            st = hx_decomp_set_cuts(d, k, cuts);
        }
        if (!HXT_OK(st))
            return 0;
    }
    return 1;
}

/* 1 when x lies within MARGIN of a pulse limit of some domain of d (its
 * lower bound plus the cutoff, over the periodic images) or of the box's
 * faces (which float rounding could cross). */
static int near_limit(const hx_decomp *d, const double *x)
{
    for (int k = 0; k < 3; k++) {
        const double v = hx_decomp_height(d, k, x), L = d->height[k], lo = d->face_lo[k];
        if (v - lo < MARGIN || lo + L - v < MARGIN)
            return 1;
        for (int c = 0; c < d->grid[k] && d->grid[k] > 1; c++) {
            double t = fmod(hx_decomp_bound(d, k, c) + RH - lo, L), dist = fabs(v - lo - t);
            if (dist > L / 2)
                dist = L - dist;
            if (dist < MARGIN)
                return 1;
        }
    }
    return 0;
}

/* A random system for d at density 0.8442, float values, none near a
 * limit of d or e. Returns the atom count; *X malloc'd. */
static int prepare_system(const hx_decomp *d, const hx_decomp *e, uint64_t seed, double **X)
{
    const int n = (int) (0.8442 * d->box_len[0] * d->box_len[1] * d->box_len[2]);
    double *x = hxt_frac_system(d, n, seed);
    int keep = 0;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++)
            x[3 * i + k] = (double) (float) x[3 * i + k];
        if (!near_limit(d, x + 3 * i) && !near_limit(e, x + 3 * i))
            memmove(x + 3 * keep++, x + 3 * i, 3 * sizeof(double));
    }
    *X = x;
    return keep;
}

/* The device plan against the host plan: pulses and maps. */
static void compare_plans(const hx_plan *hp, const hx_plan *dp, const char *label)
{
    const int np = hx_plan_npulses(hp);
    HXT_CHECK(np == hx_plan_npulses(dp) && hx_plan_ntotal(hp) == hx_plan_ntotal(dp),
              "%s: host plan %d pulses %d atoms, device plan %d pulses %d atoms", label, np,
              hx_plan_ntotal(hp), hx_plan_npulses(dp), hx_plan_ntotal(dp));
    if (np != hx_plan_npulses(dp) || hx_plan_ntotal(hp) != hx_plan_ntotal(dp))
        return;
    int total = 0;
    for (int p = 0; p < np; p++)
        total += hx_plan_pulse(hp, p)->nsend;
    int *maps = malloc(((size_t) total + 1) * sizeof(int));
    int ok = cudaMemcpy(maps, hx_plan_device_maps(dp), (size_t) total * sizeof(int),
                        cudaMemcpyDeviceToHost) == cudaSuccess;
    HXT_CHECK(ok, "%s: downloading the device maps", label);
    for (int p = 0; ok && p < np; p++) {
        const hx_pulse *a = hx_plan_pulse(hp, p), *b = hx_plan_pulse(dp, p);
        int bad = a->nsend != b->nsend || a->nsend_home != b->nsend_home || a->nrecv != b->nrecv ||
                  a->recv_offset != b->recv_offset || a->peer_offset != b->peer_offset ||
                  a->map_offset != b->map_offset || !hxt_same_d(a->shift[0], b->shift[0]) ||
                  !hxt_same_d(a->shift[1], b->shift[1]) || !hxt_same_d(a->shift[2], b->shift[2]);
        for (int i = 0; !bad && i < a->nsend; i++)
            bad += maps[a->map_offset + i] != a->map[i];
        HXT_CHECK(bad == 0, "%s: pulse %d: host send %d recv %d, device send %d recv %d, or maps",
                  label, p, a->nsend, a->nrecv, b->nsend, b->nrecv);
    }
    free(maps);
}

/* Device atoms of this rank: float positions (3 each) and int64 ids. */
typedef struct dev_atoms {
    int n, cap;
    float *x;
    int64_t *id;
} dev_atoms;

static int dev_upload(dev_atoms *a, int n, const int *id, const double *x)
{
    float *hx = malloc(((size_t) n + 1) * 3 * sizeof(float));
    int64_t *hid = malloc(((size_t) n + 1) * sizeof(int64_t));
    for (int i = 0; i < n; i++) {
        hid[i] = id[i];
        for (int k = 0; k < 3; k++)
            hx[3 * i + k] = (float) x[3 * i + k];
    }
    a->n = n;
    a->cap = n + 16;
    int ok =
        cudaMalloc((void **) &a->x, (size_t) a->cap * 3 * sizeof(float)) == cudaSuccess &&
        cudaMalloc((void **) &a->id, (size_t) a->cap * sizeof(int64_t)) == cudaSuccess &&
        cudaMemcpy(a->x, hx, (size_t) n * 3 * sizeof(float), cudaMemcpyHostToDevice) ==
            cudaSuccess &&
        cudaMemcpy(a->id, hid, (size_t) n * sizeof(int64_t), cudaMemcpyHostToDevice) == cudaSuccess;
    free(hx);
    free(hid);
    return ok;
}

/* The device plan on a's atoms against the host plan on the same values. */
static void device_vs_host(hx_comm *comm, hx_rebuild *rb, const hx_decomp *d, const dev_atoms *a,
                           const char *label)
{
    double *x = malloc(((size_t) a->n + 1) * 3 * sizeof(double));
    float *hx = malloc(((size_t) a->n + 1) * 3 * sizeof(float));
    hx_plan *hp = NULL, *dp = NULL;
    int ok = cudaMemcpy(hx, a->x, (size_t) a->n * 3 * sizeof(float), cudaMemcpyDeviceToHost) ==
             cudaSuccess;
    for (int i = 0; i < 3 * a->n; i++)
        x[i] = hx[i];
    ok = hxt_agree(comm, ok) && HXT_OK(hx_plan_create(&hp, comm, d, a->n, x));
    ok = hxt_agree(comm, ok) && HXT_OK(hx_plan_create_device(&dp, rb, a->n, a->x, 3));
    if (hxt_agree(comm, ok))
        compare_plans(hp, dp, label);
    hx_plan_destroy(hp);
    hx_plan_destroy(dp);
    free(x);
    free(hx);
}

/* The cuts nudged, the device atoms migrated to them: every atom once, by
 * its owner; then the device plan against the host plan. */
static void migrate_nudged(hx_comm *comm, hx_rebuild *rb, const hx_decomp *e, dev_atoms *a, int N,
                           const char *label)
{
    hx_dfield f = {(void **) &a->id, sizeof(int64_t)};
    int64_t natoms = 0, before = 0;
    uint64_t sum = 0, sum0 = 0;
    if (!hxt_agree(comm, HXT_OK(hx_rebuild_census(rb, a->n, a->id, &before, &sum0))) ||
        !hxt_agree(comm, HXT_OK(hx_rebuild_set_decomp(rb, e))) ||
        !hxt_agree(comm, HXT_OK(hx_rebuild_migrate(rb, &a->n, &a->cap, &a->x, 3, &f, 1))) ||
        !hxt_agree(comm, HXT_OK(hx_rebuild_census(rb, a->n, a->id, &natoms, &sum))))
        return;
    HXT_CHECK(natoms == N && before == N && sum == sum0,
              "%s: %lld atoms after the migration, %lld before (%d made), ids %s", label,
              (long long) natoms, (long long) before, N, sum == sum0 ? "kept" : "changed");
    float *hx = malloc(((size_t) a->n + 1) * 3 * sizeof(float));
    int nbad = 0;
    if (cudaMemcpy(hx, a->x, (size_t) a->n * 3 * sizeof(float), cudaMemcpyDeviceToHost) ==
        cudaSuccess)
        for (int i = 0; i < a->n; i++) {
            const double p[3] = {hx[3 * i], hx[3 * i + 1], hx[3 * i + 2]};
            nbad += hx_decomp_owner(e, p) != e->rank;
        }
    HXT_CHECK(nbad == 0, "%s: %d atoms on a rank that does not own them", label, nbad);
    free(hx);
    device_vs_host(comm, rb, e, a, label);
}

typedef struct run_ctx {
    hxt_gpu_set set;
    hx_transport *byte_t; /* the rebuild's transport */
    hx_plan *held;        /* the plan the transports hold */
} run_ctx;

/* One step of the run: cuts d (and their nudge e). */
static void step(hx_comm *comm, run_ctx *rc, const hx_decomp *d, const hx_decomp *e, uint64_t seed,
                 const char *name)
{
    hxt_case c;
    double *X = NULL;
    int *id = NULL;
    double *x = NULL;
    const int N = prepare_system(d, e, seed, &X);
    const int n = hxt_take_owned(d, X, N, &id, &x);
    memset(&c, 0, sizeof c);
    c.grid = d->grid;
    c.d = *d;
    c.seed = seed;
    c.spec.natoms = N;
    hxt_grid_str(d->grid, c.gs);
    if (hx_comm_rank(comm) == 0)
        printf("%s\n", name);
    if (hxt_agree(comm, HXT_OK(hx_plan_create(&c.plan, comm, d, n, x)))) {
        /* Every transport takes the new plan; the one they held may go. */
        hxt_gpu_check_plan(comm, &c, &rc->set);
        hx_plan_destroy(rc->held);
        rc->held = c.plan;
    }
    hx_rebuild *rb = NULL;
    dev_atoms a = {0, 0, NULL, NULL};
    if (hxt_agree(comm, dev_upload(&a, n, id, x)) &&
        hxt_agree(comm, HXT_OK(hx_rebuild_create(&rb, rc->byte_t, d)))) {
        char label[160];
        snprintf(label, sizeof label, "%s: device plan", name);
        device_vs_host(comm, rb, d, &a, label);
        snprintf(label, sizeof label, "%s: nudged cuts", name);
        migrate_nudged(comm, rb, e, &a, N, label);
    }
    hx_rebuild_destroy(rb);
    cudaFree(a.x);
    cudaFree(a.id);
    free(X);
    free(id);
    free(x);
}

/* equal -> thin -> thick -> thin on one grid and box. */
static void run_grid(hx_comm *comm, run_ctx *rc, const int grid[3], const double *tilt_frac,
                     uint64_t seed)
{
    const int kinds[4] = {0, 1, 2, 1};
    double lo[3] = {0, 0, 0}, len[3], tilt[3] = {0, 0, 0};
    hxt_rng r = {seed};
    char gs[32];
    for (int k = 0; k < 3; k++)
        len[k] = len_for(grid[k]) * (tilt_frac ? 1.5 : 1.0);
    if (tilt_frac) {
        tilt[0] = tilt_frac[0] * len[0];
        tilt[1] = tilt_frac[1] * len[0];
        tilt[2] = tilt_frac[2] * len[1];
    }
    hx_decomp base;
    if (!hxt_agree(comm, HXT_OK(hx_decomp_init_tilted(&base, lo, len, tilt, RH, grid,
                                                      hx_comm_size(comm), hx_comm_rank(comm)))))
        return;
    for (int s = 0; s < 4; s++) {
        hx_decomp d = base, e;
        char name[96];
        if (!hxt_agree(comm, set_cuts(&d, kinds[s], &r)))
            return;
        e = d;
        if (!hxt_agree(comm, nudge_cuts(&e, &r)))
            return;
        snprintf(name, sizeof name, "%s%s %s (pulses %d %d %d)", hxt_grid_str(grid, gs),
                 tilt_frac ? " triclinic" : "",
                 kinds[s] == 0 ? "equal" : (kinds[s] == 1 ? "thin" : "thick"), d.npulse[0],
                 d.npulse[1], d.npulse[2]);
        step(comm, rc, &d, &e, seed * 31 + (uint64_t) s, name);
    }
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_nonuniform_gpu");
    int grids[8][3], ngrids = 0, rank = hx_comm_rank(comm);
    int skip = hxt_gpu_setup(comm, argc, argv, grids, &ngrids);
    if (skip)
        return skip;
    hxt_gpu_entry gt[MAXT];
    hxt_tvariant v[MAXT];
    int ngt = 0;
    memset(gt, 0, sizeof gt);
    const int nv = hxt_transport_variants(0, HX_CAP_HOST, 1, v, MAXT - 1);
    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.dtype = HX_FLOAT;
    for (int k = 0; k < nv; k++) {
        hx_transport *t = hxt_transport_try(comm, &o, &v[k]);
        if (!t)
            continue;
        snprintf(gt[ngt].label, sizeof gt[ngt].label, "%s", v[k].label);
        gt[ngt].t = t;
        gt[ngt].alive = 1;
        ngt++;
    }
    HXT_CHECK(ngt > 0, "no GPU transport could be created");
    run_ctx rc = {{gt, ngt}, ngt > 0 ? gt[0].t : NULL, NULL};
    for (int g = 0; ngt > 0 && g < ngrids; g++) {
        run_grid(comm, &rc, grids[g], NULL, 900u + (uint64_t) g);
        run_grid(comm, &rc, grids[g], hxt_gpu_tilts[0], 950u + (uint64_t) g);
    }
    for (int k = 0; k < ngt; k++) {
        if (rank == 0)
            printf("%s: %s\n", gt[k].label, gt[k].alive ? "ran every case" : "FAILED a case");
        HXT_CHECK(gt[k].alive, "%s failed a case (see above)", gt[k].label);
    }
    for (int k = ngt - 1; k >= 0; k--)
        hx_transport_destroy(gt[k].t);
    hx_plan_destroy(rc.held);
    return hxt_finish(comm);
}
