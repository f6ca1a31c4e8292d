/*
 * test_triclinic_gpu: migration of device arrays (hx_rebuild_migrate) in
 * triclinic boxes, and the device plan on its result.
 *
 * Each case: a random system at uniform fractional coordinates (float
 * values) in a box with tilts of a fifth of the box and at LAMMPS's limits
 * (mixed signs), each rank holding the atoms it owns; every atom moves by
 * up to a third of a domain along each edge, some across the periodic
 * boundary (through the tilted faces). After hx_rebuild_migrate, every atom
 * is held exactly once over the ranks, by the rank that owns it
 * (hx_decomp_owner of its coordinates widened to double), inside the box,
 * with its fields (its id and a 16-byte payload), at its moved position up
 * to a lattice vector (float rounding); the census agrees; and the device
 * plan (hx_plan_create_device) takes the result, with the pulse counts of
 * the host plan on the same coordinates. Exits 77 without a GPU or a grid
 * for the rank count.
 */
#include "sysgen.h"

#include "core/hxi.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RH 2.8

static const double tilt_frac[2][3] = {{0.2, 0.2, 0.2}, {0.5, -0.5, 0.5}};

static int grids_for(int nranks, int grids[][3])
{
    static const int all[][3] = {{1, 1, 2}, {2, 1, 1}, {1, 2, 2}, {2, 2, 1}, {2, 2, 2}, {1, 1, 1}};
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i][0] * all[i][1] * all[i][2] == nranks)
            memcpy(grids[n++], all[i], sizeof all[i]);
    return n;
}

static void payload_of(int64_t id, float p[4])
{
    for (int k = 0; k < 4; k++)
        p[k] = (float) id * 0.25f + (float) k;
}

/* The migrated atoms (n, x with 4 floats each, ids, payloads) against the
 * targets (N atoms, 3 doubles each): violations. Collective. */
static int check_atoms(hx_comm *comm, const hx_decomp *d, int n, const float *x, const int64_t *id,
                       const float *pay, const double *tgt, int N)
{
    int nbad = 0;
    for (int i = 0; i < n; i++) {
        const double p[3] = {x[4 * i], x[4 * i + 1], x[4 * i + 2]};
        int ok = id[i] >= 0 && id[i] < N && hx_decomp_owner(d, p) == d->rank;
        float want[4];
        payload_of(id[i], want);
        ok &= memcmp(want, &pay[4 * i], sizeof want) == 0;
        for (int k = 0; k < 3; k++) {
            double h = hx_decomp_height(d, k, p);
            ok &= h >= d->face_lo[k] && h < d->face_lo[k] + d->height[k];
        }
        if (ok) {
            const double v[3] = {p[0] - tgt[3 * id[i]], p[1] - tgt[3 * id[i] + 1],
                                 p[2] - tgt[3 * id[i] + 2]};
            ok = hxt_is_lattice(d, v, 1e-5);
        }
        if (!ok && nbad < 3)
            fprintf(stderr, "[rank %d] atom %lld at (%g, %g, %g) is wrong here\n", d->rank,
                    (long long) id[i], p[0], p[1], p[2]);
        nbad += !ok;
    }
    return nbad + hxt_ids_once(comm, id, n, N);
}

/* The device plan on the migrated atoms, against the host plan's counts. */
static void check_plans(hx_comm *comm, const hx_decomp *d, hx_rebuild *rb, int n, const float *dx,
                        const float *x, const char *what)
{
    double *xd = hxt_xmalloc(((size_t) n + 1) * 3 * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            xd[3 * i + k] = x[4 * i + k];
    hx_plan *hp = NULL, *dp = NULL;
    int ok = hxt_agree(comm, HXT_OK(hx_plan_create(&hp, comm, d, n, xd)));
    ok = ok && hxt_agree(comm, HXT_OK(hx_plan_create_device(&dp, rb, n, dx, 4)));
    if (ok) {
        int bad = hx_plan_npulses(hp) != hx_plan_npulses(dp);
        for (int p = 0; !bad && p < hx_plan_npulses(hp); p++) {
            const hx_pulse *a = hx_plan_pulse(hp, p), *b = hx_plan_pulse(dp, p);
            bad += a->nsend_home != b->nsend_home;
            for (int k = 0; k < 3; k++)
                bad += !hxt_same_d(a->shift[k], b->shift[k]);
        }
        HXT_CHECK(bad == 0, "%s: the device plan's pulses differ from the host plan's", what);
    }
    hx_plan_destroy(dp);
    hx_plan_destroy(hp);
    free(xd);
}

static void run_case(hx_comm *comm, hx_transport *t, const int grid[3], const double frac[3],
                     uint64_t seed)
{
    const int nr = hx_comm_size(comm), rank = hx_comm_rank(comm), N = 600 * nr;
    const double lo[3] = {-1.0, 0.5, 2.0}, len[3] = {12.0, 12.5, 11.0};
    const double tilt[3] = {frac[0] * len[0], frac[1] * len[0], frac[2] * len[1]};
    char gs[32], what[96];
    hx_decomp d;
    if (!hxt_agree(comm, HXT_OK(hx_decomp_init_tilted(&d, lo, len, tilt, RH, grid, nr, rank))))
        return;
    snprintf(what, sizeof what, "grid %s tilt (%g, %g, %g)", hxt_grid_str(grid, gs), tilt[0],
             tilt[1], tilt[2]);
    /* Every rank draws every atom: its start (float values) and its move. */
    hxt_rng r = {seed};
    double *x0 = hxt_xmalloc((size_t) N * 3 * sizeof(double));
    double *tgt = hxt_xmalloc((size_t) N * 3 * sizeof(double));
    for (int a = 0; a < N; a++) {
        double s[3], m[3];
        for (int k = 0; k < 3; k++) {
            s[k] = 0.001 + 0.998 * hxt_uniform(&r);
            m[k] = (2 * hxt_uniform(&r) - 1) / (3.0 * grid[k]);
        }
        for (int k = 0; k < 3; k++) {
            x0[3 * a + k] = (float) (d.box_lo[k] + s[0] * d.edge[0][k] + s[1] * d.edge[1][k] +
                                     s[2] * d.edge[2][k]);
            tgt[3 * a + k] = (float) (x0[3 * a + k] + m[0] * d.edge[0][k] + m[1] * d.edge[1][k] +
                                      m[2] * d.edge[2][k]);
        }
    }
    int n = 0, cap = N / nr + N / 4 + 16;
    float *hx = hxt_xcalloc((size_t) N * 4, sizeof(float)), *pay = hxt_xmalloc((size_t) N * 16);
    int64_t *id = hxt_xmalloc((size_t) N * sizeof(int64_t));
    for (int a = 0; a < N; a++)
        if (hx_decomp_owner(&d, &x0[3 * a]) == rank) {
            for (int k = 0; k < 3; k++)
                hx[4 * n + k] = (float) tgt[3 * a + k];
            id[n] = a;
            payload_of(a, &pay[4 * n]);
            n++;
        }
    float *dx = NULL, *dpay = NULL;
    int64_t *did = NULL;
    int ok = cudaMalloc((void **) &dx, (size_t) cap * 16) == cudaSuccess &&
             cudaMalloc((void **) &dpay, (size_t) cap * 16) == cudaSuccess &&
             cudaMalloc((void **) &did, (size_t) cap * 8) == cudaSuccess &&
             cudaMemcpy(dx, hx, (size_t) n * 16, cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemcpy(dpay, pay, (size_t) n * 16, cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemcpy(did, id, (size_t) n * 8, cudaMemcpyHostToDevice) == cudaSuccess;
    HXT_CHECK(ok, "%s: upload", what);
    hx_rebuild *rb = NULL;
    hx_dfield f[2] = {{(void **) &did, 8}, {(void **) &dpay, 16}};
    ok = hxt_agree(comm, ok) && HXT_OK(hx_rebuild_create(&rb, t, &d));
    ok = hxt_agree(comm, ok) && HXT_OK(hx_rebuild_migrate(rb, &n, &cap, &dx, 4, f, 2)) &&
         HXT_OK(hx_transport_sync(t));
    if (hxt_agree(comm, ok && n <= N)) {
        ok = cudaMemcpy(hx, dx, (size_t) n * 16, cudaMemcpyDeviceToHost) == cudaSuccess &&
             cudaMemcpy(pay, dpay, (size_t) n * 16, cudaMemcpyDeviceToHost) == cudaSuccess &&
             cudaMemcpy(id, did, (size_t) n * 8, cudaMemcpyDeviceToHost) == cudaSuccess;
        HXT_CHECK(ok, "%s: download", what);
        int nbad = check_atoms(comm, &d, ok ? n : 0, hx, id, pay, tgt, N);
        HXT_CHECK(nbad == 0, "%s: %d violations after the device migration", what, nbad);
        int64_t natoms = 0;
        uint64_t sum = 0;
        HXT_CHECK(HXT_OK(hx_rebuild_census(rb, n, did, &natoms, &sum)) && natoms == N,
                  "%s: census %lld atoms of %d", what, (long long) natoms, N);
        if (hxt_agree(comm, nbad == 0))
            check_plans(comm, &d, rb, n, dx, hx, what);
        if (rank == 0)
            printf("  %s: %d atoms, pulses %d %d %d\n", what, N, d.npulse[0], d.npulse[1],
                   d.npulse[2]);
    }
    hx_rebuild_destroy(rb);
    cudaFree(dx);
    cudaFree(dpay);
    cudaFree(did);
    free(hx);
    free(pay);
    free(id);
    free(x0);
    free(tgt);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_triclinic_gpu");
    int grids[8][3], ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (!hxt_agree(comm, e == cudaSuccess && ndev > 0))
        return hxt_skip(comm, "no CUDA device visible here (the device rebuild needs one)");
    int ng = grids_for(hx_comm_size(comm), grids);
    if (ng == 0)
        return hxt_skip(comm, "no test grid for this rank count (use 1, 2, 4 or 8 ranks)");
    hxt_tvariant v[16];
    const int nv = hxt_transport_variants(HX_CAP_DEVICE, 0, 0, v, 16);
    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.dtype = HX_FLOAT;
    hx_transport *t = NULL;
    for (int k = 0; k < nv && !t; k++)
        t = hxt_transport_try(comm, &o, &v[k]);
    if (!t)
        return hxt_skip(comm, "no device transport can run here");
    if (hx_comm_rank(comm) == 0)
        printf("transport %s\n", hx_transport_name(t));
    uint64_t seed = 99;
    for (int g = 0; g < ng; g++)
        for (int k = 0; k < 2; k++)
            run_case(comm, t, grids[g], tilt_frac[k], seed++);
    hx_transport_destroy(t);
    return hxt_finish(comm);
}
