/*
 * test_md_velocity.c - initial velocities.
 *
 * miniMD mode: miniMD's create_atoms/create_velocity is written out again
 * here, differently from velocity.c (its while-loop over blocks as miniMD
 * has it, and Park-Miller by 64-bit multiply and modulo instead of
 * Schrage's method), and every atom's velocity on every rank must equal it
 * bit for bit, as must its position miniMD's 0.5 a (i, j, k). The Park-Miller
 * stream of site 1 (the atom at the origin) is checked against the
 * published minimal-standard sequence from seed 1: its 6th, 12th and 18th
 * values are 470211272, 1115438165 and 16531729. A box of 5 x 6 x 7 cells
 * (10 x 12 x 14 half-lattice sites, two blocks of 8 along each dimension)
 * catches a swapped loop order or a wrong block bound.
 *
 * halox mode: zero total momentum, temperature exactly T over 3N-3, and
 * the velocities on N ranks bitwise equal to those of a one-process set-up
 * done here on rank 0 (over MPI_COMM_SELF); another seed gives others.
 */
#include "md_util.h"

#include "core/hxi.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifdef HALOX_HAVE_MPI
#include <mpi.h>
#endif

static int pm_next(int x)
{
    return (int) ((int64_t) x * 16807 % 2147483647);
}

/* The raw (vx, vy, vz) of half-lattice site (i, j, k), miniMD's way. */
static void pm_site(const int cells[3], int i, int j, int k, int seq[18], double v[3])
{
    int n = k * (2 * cells[1]) * (2 * cells[0]) + j * (2 * cells[0]) + i + 1;
    for (int s = 0; s < 18; s++) {
        n = pm_next(n);
        if (seq)
            seq[s] = n;
        if (s % 6 == 5)
            v[s / 6] = (1.0 / 2147483647) * n;
    }
}

static int64_t site_id(const int cells[3], int i, int j, int k)
{
    int m = (i % 2) == 0 ? ((j % 2) == 0 ? 0 : 3) : ((j % 2) == 1 ? 1 : 2);
    return (((int64_t) (k / 2) * cells[1] + j / 2) * cells[0] + i / 2) * 4 + m;
}

/* miniMD, one process: the velocities and positions by atom id. */
static void minimd_reference(const hx_md_config *cfg, int64_t natoms, double *v, double *x)
{
    const int *c = cfg->cells;
    const int sub = 8, ihi = 2 * c[0] - 1, jhi = 2 * c[1] - 1, khi = 2 * c[2] - 1;
    const double alat = pow(4.0 / cfg->density, 1.0 / 3.0);
    int64_t *order = malloc((size_t) natoms * sizeof(int64_t)), n = 0;
    int sx = 0, sy = 0, sz = 0, ox = 0, oy = 0, oz = 0;
    double vtot[3] = {0, 0, 0}, t = 0, factor;

    while (oz * sub <= khi) {
        int k = oz * sub + sz, j = oy * sub + sy, i = ox * sub + sx;
        if ((i + j + k) % 2 == 0 && i <= ihi && j <= jhi && k <= khi) {
            int64_t id = site_id(c, i, j, k);
            pm_site(c, i, j, k, NULL, v + 3 * id);
            x[3 * id + 0] = 0.5 * alat * i;
            x[3 * id + 1] = 0.5 * alat * j;
            x[3 * id + 2] = 0.5 * alat * k;
            order[n++] = id;
        }
        if (++sx == sub) {
            sx = 0;
            sy++;
        }
        if (sy == sub) {
            sy = 0;
            sz++;
        }
        if (sz == sub) {
            sz = 0;
            ox++;
        }
        if (ox * sub > ihi) {
            ox = 0;
            oy++;
        }
        if (oy * sub > jhi) {
            oy = 0;
            oz++;
        }
    }
    for (int64_t q = 0; q < n; q++)
        for (int d = 0; d < 3; d++)
            vtot[d] += v[3 * order[q] + d];
    for (int d = 0; d < 3; d++)
        vtot[d] = vtot[d] / natoms;
    for (int64_t q = 0; q < n; q++) {
        double *p = v + 3 * order[q];
        for (int d = 0; d < 3; d++)
            p[d] -= vtot[d];
        t += (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) * cfg->mass;
    }
    t = t * (1.0 / (double) (natoms * 3 - 3));
    factor = sqrt(cfg->temperature / t);
    for (int64_t q = 0; q < 3 * n; q++)
        v[q] *= factor;
    free(order);
}

static hx_status make(hx_comm *comm, const hx_md_config *cfg, hx_md_system *sys)
{
    double lo[3], len[3];
    memset(sys, 0, sizeof *sys);
    HXI_CHECK(hx_md_box(cfg, lo, len));
    HXI_CHECK(hx_decomp_init(&sys->decomp, lo, len, cfg->rc + cfg->skin, NULL, hx_comm_size(comm),
                             hx_comm_rank(comm)));
    HXI_CHECK(hx_md_lattice(sys, cfg));
    return hx_md_velocities(sys, cfg, comm);
}

static void test_minimd(hx_comm *comm)
{
    hx_md_config cfg;
    hx_md_system sys;
    double *vref, *xref;
    int64_t N;
    int seq[18], bad_v = 0, bad_x = 0, count[1];
    double raw[3];
    static const int published[3] = {470211272, 1115438165, 16531729};

    hx_md_config_defaults(&cfg);
    cfg.cells[0] = 5;
    cfg.cells[1] = 6;
    cfg.cells[2] = 7;
    cfg.velocity_mode = HX_MD_VEL_MINIMD;
    if (!HXT_OK(make(comm, &cfg, &sys)))
        return;
    N = sys.natoms;

    /* Site (0, 0, 0) seeds with n = 1: the minimal-standard stream. */
    pm_site(cfg.cells, 0, 0, 0, seq, raw);
    for (int d = 0; d < 3; d++)
        HXT_CHECK(seq[6 * d + 5] == published[d], "Park-Miller value %d is %d, want %d", 6 * d + 6,
                  seq[6 * d + 5], published[d]);

    vref = malloc((size_t) N * 3 * sizeof(double));
    xref = malloc((size_t) N * 3 * sizeof(double));
    minimd_reference(&cfg, N, vref, xref);
    for (int i = 0; i < sys.n; i++)
        for (int d = 0; d < 3; d++) {
            bad_v += sys.v[3 * i + d] != vref[3 * sys.id[i] + d];
            bad_x += sys.x[3 * i + d] != xref[3 * sys.id[i] + d];
        }
    HXT_CHECK(bad_v == 0, "miniMD mode: %d velocity components differ from miniMD's", bad_v);
    HXT_CHECK(bad_x == 0, "miniMD mode: %d coordinates differ from miniMD's", bad_x);
    /* The atom at the origin, by hand: (raw - vtot) * factor, so its
     * velocity is an affine image of the published stream. */
    for (int i = 0; i < sys.n; i++)
        if (sys.id[i] == 0) {
            double u = (1.0 / 2147483647) * published[0];
            HXT_CHECK(sys.v[3 * i] == vref[0], "origin atom vx %.17g vs %.17g", sys.v[3 * i],
                      vref[0]);
            HXT_CHECK(fabs(raw[0] - u) == 0, "origin raw vx %.17g vs %.17g", raw[0], u);
        }
    count[0] = sys.n;
    HXT_OK(hxi_allreduce_int(comm, count, 1, 0));
    HXT_CHECK(count[0] == N, "%d atoms on all ranks, want %lld", count[0], (long long) N);
    free(vref);
    free(xref);
    hxt_md_free(&sys, NULL);
}

static void test_halox(hx_comm *comm)
{
    int rank = hx_comm_rank(comm);
    hx_md_config cfg, cfg2;
    hx_md_system sys, one, other;
    double *v = NULL, p[3] = {0, 0, 0}, mv2 = 0, vmax = 0;
    int64_t N;

    hx_md_config_defaults(&cfg);
    cfg.velocity_mode = HX_MD_VEL_HALOX;
    cfg.cells[0] = 6;
    cfg.cells[1] = 7;
    cfg.cells[2] = 8;
    memset(&one, 0, sizeof one);
    if (!HXT_OK(make(comm, &cfg, &sys)))
        return;
    N = sys.natoms;
    v = malloc((size_t) N * 3 * sizeof(double));
    if (!HXT_OK(hxt_md_by_id(comm, &sys, sys.v, 3, v)))
        goto done;
    for (int64_t i = 0; i < N; i++)
        for (int d = 0; d < 3; d++) {
            p[d] += cfg.mass * v[3 * i + d];
            mv2 += cfg.mass * v[3 * i + d] * v[3 * i + d];
            vmax = fabs(v[3 * i + d]) > vmax ? fabs(v[3 * i + d]) : vmax;
        }
    for (int d = 0; d < 3; d++)
        HXT_CHECK(fabs(p[d]) < 1e-12 * N, "total momentum along %c is %g", "xyz"[d], p[d]);
    HXT_CHECK(hxt_md_close(mv2 / (3 * N - 3), cfg.temperature, 1e-13, 0),
              "temperature %.17g, want %g", mv2 / (3 * N - 3), cfg.temperature);
    /* Uniform components of width 1, scaled: |v| stays below the scale's
     * half width (sqrt(T / (1/12)) / 2 = 2.08 at T 1.44) plus the mean. */
    HXT_CHECK(vmax < 2.2 && vmax > 1.5, "largest velocity component %g", vmax);

    /* Against one process, bit for bit. */
    if (rank == 0) {
        hx_comm *self = NULL;
        int ok, bad = 0;
#ifdef HALOX_HAVE_MPI
        MPI_Comm mself = MPI_COMM_SELF;
        ok = HXT_OK(hx_comm_create(&self, &mself));
#else
        ok = HXT_OK(hx_comm_create(&self, NULL));
#endif
        if (ok && HXT_OK(make(self, &cfg, &one))) {
            for (int i = 0; i < one.n; i++)
                for (int d = 0; d < 3; d++)
                    bad += one.v[3 * i + d] != v[3 * one.id[i] + d];
            HXT_CHECK(one.n == N, "one process holds %d atoms", one.n);
            HXT_CHECK(bad == 0, "%d velocity components differ from the one-process set-up", bad);
        }
        hx_comm_destroy(self);
    }

    /* Another seed, other velocities; temperature 0, none. */
    cfg2 = cfg;
    cfg2.seed = cfg.seed + 1;
    if (HXT_OK(make(comm, &cfg2, &other))) {
        int same = 0;
        for (int i = 0; i < other.n; i++)
            same += other.v[3 * i] == v[3 * other.id[i]];
        HXT_CHECK(same == 0 || other.n == 0, "%d of %d velocities ignore the seed", same, other.n);
        hxt_md_free(&other, NULL);
    }
    cfg2.temperature = 0;
    if (HXT_OK(make(comm, &cfg2, &other))) {
        int moving = 0;
        for (int i = 0; i < 3 * other.n; i++)
            moving += other.v[i] != 0;
        HXT_CHECK(moving == 0, "%d components nonzero at T = 0", moving);
        hxt_md_free(&other, NULL);
    }
done:
    free(v);
    hxt_md_free(&sys, NULL);
    hxt_md_free(&one, NULL);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_md_velocity");
    test_minimd(comm);
    test_halox(comm);
    return hxt_finish(comm);
}
