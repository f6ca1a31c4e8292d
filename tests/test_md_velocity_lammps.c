/*
 * test_md_velocity_lammps.c - `velocity all create` as LAMMPS computes it.
 *
 * A reference written out again here, differently from velocity_lammps.c:
 * Park-Miller by 64-bit multiply and modulo, the hash over bytes taken by
 * shifts (little-endian, signed as LAMMPS's chars on x86-64), and every
 * atom's velocity kept in an array by id with the sums in separate loops.
 * The Park-Miller stream from seed 1 is checked against the published
 * minimal-standard values (16807, 282475249, 1622650073).
 *
 * loop all and loop geom: every rank's velocities equal the reference bit
 * for bit (halox-md's sums run in id order on every rank count, as a
 * one-process LAMMPS run sums them). loop local on one rank equals the
 * reference; on several, each rank's stream starts from SEED + rank, so
 * the result is checked for its invariants only. Every mode: zero total
 * momentum with mom yes (and not with mom no), zero angular momentum with
 * rot yes, temperature T over 3N-3. dist gaussian gives components with a
 * kurtosis near 3, dist uniform near 1.8 (a swapped or ignored keyword
 * fails). The LAMMPS program itself is compared in lammps_match.py.
 */
#include "md_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int pm(int64_t *x)
{
    *x = *x * 16807 % 2147483647;
    return (int) *x;
}

static double uni(int64_t *x)
{
    return (1.0 / 2147483647) * pm(x);
}

typedef struct gauss {
    int64_t x;
    int have;
    double keep;
} gauss;

static double gau(gauss *g)
{
    double a, b, r;
    if (g->have) {
        g->have = 0;
        return g->keep;
    }
    for (;;) {
        a = 2.0 * uni(&g->x) - 1.0;
        b = 2.0 * uni(&g->x) - 1.0;
        r = a * a + b * b;
        if (r < 1.0 && r != 0.0)
            break;
    }
    g->keep = a * sqrt(-2.0 * log(r) / r);
    g->have = 1;
    return b * sqrt(-2.0 * log(r) / r);
}

static uint32_t mix(uint32_t h, uint64_t bytes, int n)
{
    for (int i = 0; i < n; i++) {
        int b = (int) ((bytes >> (8 * i)) & 0xff);
        h += (uint32_t) (b >= 128 ? b - 256 : b);
        h += h << 10;
        h ^= h >> 6;
    }
    return h;
}

static int64_t geom_seed(int seed, const double x[3])
{
    uint32_t h = mix(0, (uint32_t) seed, 4);
    for (int k = 0; k < 3; k++) {
        uint64_t u;
        memcpy(&u, &x[k], 8);
        h = mix(h, u, 8);
    }
    h += h << 3;
    h ^= h >> 11;
    h += h << 15;
    return (h & 0x7ffffff) ? (h & 0x7ffffff) : 1;
}

/* LAMMPS on one process: velocities by id (x by id given). */
static void reference(const hx_md_config *c, int64_t N, const double *x, double *v)
{
    const double f = 1.0 / sqrt(c->mass);
    gauss g = {(int64_t) c->seed, 0, 0};
    double mt = 0, p[3] = {0}, cm[3] = {0}, L[3] = {0}, I[9] = {0}, w[3] = {0}, t = 0;

    if (c->velocity_loop == HX_MD_LOOP_LOCAL)
        for (int i = 0; i < 100; i++)
            uni(&g.x);
    for (int64_t i = 0; i < N; i++) {
        if (c->velocity_loop == HX_MD_LOOP_GEOM) {
            g.x = geom_seed((int) c->seed, x + 3 * i);
            g.have = 0;
            for (int k = 0; k < 5; k++)
                uni(&g.x);
        }
        for (int k = 0; k < 3; k++)
            v[3 * i + k] = (c->velocity_gaussian ? gau(&g) : uni(&g.x) - 0.5) * f;
    }
    for (int64_t i = 0; i < N; i++)
        mt += c->mass;
    if (c->velocity_mom) {
        for (int64_t i = 0; i < N; i++)
            for (int k = 0; k < 3; k++)
                p[k] += v[3 * i + k] * c->mass;
        for (int64_t i = 0; i < N; i++)
            for (int k = 0; k < 3; k++)
                v[3 * i + k] -= p[k] / mt;
    }
    if (c->velocity_rot) {
        double adj[9], det;
        for (int64_t i = 0; i < N; i++)
            for (int k = 0; k < 3; k++)
                cm[k] += x[3 * i + k] * c->mass;
        for (int k = 0; k < 3; k++)
            cm[k] /= mt;
        for (int64_t i = 0; i < N; i++) {
            const double *r = x + 3 * i, *u = v + 3 * i, m = c->mass;
            double d[3] = {r[0] - cm[0], r[1] - cm[1], r[2] - cm[2]};
            L[0] += m * (d[1] * u[2] - d[2] * u[1]);
            L[1] += m * (d[2] * u[0] - d[0] * u[2]);
            L[2] += m * (d[0] * u[1] - d[1] * u[0]);
            I[0] += m * (d[1] * d[1] + d[2] * d[2]);
            I[4] += m * (d[0] * d[0] + d[2] * d[2]);
            I[8] += m * (d[0] * d[0] + d[1] * d[1]);
            I[1] -= m * d[0] * d[1];
            I[5] -= m * d[1] * d[2];
            I[2] -= m * d[0] * d[2];
        }
        I[3] = I[1], I[7] = I[5], I[6] = I[2];
        det = I[0] * I[4] * I[8] + I[1] * I[5] * I[6] + I[2] * I[3] * I[7] - I[0] * I[5] * I[7] -
              I[1] * I[3] * I[8] - I[6] * I[4] * I[2];
        adj[0] = I[4] * I[8] - I[5] * I[7];
        adj[1] = -(I[1] * I[8] - I[2] * I[7]);
        adj[2] = I[1] * I[5] - I[2] * I[4];
        adj[3] = -(I[3] * I[8] - I[5] * I[6]);
        adj[4] = I[0] * I[8] - I[2] * I[6];
        adj[5] = -(I[0] * I[5] - I[2] * I[3]);
        adj[6] = I[3] * I[7] - I[4] * I[6];
        adj[7] = -(I[0] * I[7] - I[1] * I[6]);
        adj[8] = I[0] * I[4] - I[1] * I[3];
        for (int k = 0; k < 9; k++)
            adj[k] /= det;
        for (int k = 0; k < 3; k++)
            w[k] = adj[3 * k] * L[0] + adj[3 * k + 1] * L[1] + adj[3 * k + 2] * L[2];
        for (int64_t i = 0; i < N; i++) {
            const double *r = x + 3 * i;
            double *u = v + 3 * i, d[3] = {r[0] - cm[0], r[1] - cm[1], r[2] - cm[2]};
            u[0] -= w[1] * d[2] - w[2] * d[1];
            u[1] -= w[2] * d[0] - w[0] * d[2];
            u[2] -= w[0] * d[1] - w[1] * d[0];
        }
    }
    for (int64_t i = 0; i < N; i++)
        t += (v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] + v[3 * i + 2] * v[3 * i + 2]) *
             c->mass;
    t *= 1.0 / (double) (3 * N - 3);
    for (int64_t i = 0; i < 3 * N; i++)
        v[i] *= sqrt(c->temperature / t);
}

static void one_case(hx_comm *comm, int loop, int gaussian, int mom, int rot)
{
    const int size = hx_comm_size(comm);
    hx_md_config c;
    hx_md_system sys;
    hx_md_engine *eng = NULL;
    double *x, *v, *ref, p[3] = {0}, L[3] = {0}, cm[3] = {0}, mv2 = 0, m2 = 0, m4 = 0;
    int64_t N;
    int bad = 0;
    char what[96];

    hx_md_config_defaults(&c);
    c.cells[0] = 5, c.cells[1] = 6, c.cells[2] = 7;
    c.mass = 1.7;
    c.temperature = 0.9;
    c.seed = 4928459;
    c.velocity_loop = (hx_md_velocity_loop) loop;
    c.velocity_gaussian = gaussian;
    c.velocity_mom = mom;
    c.velocity_rot = rot;
    snprintf(what, sizeof what, "loop %s dist %s mom %d rot %d",
             loop == HX_MD_LOOP_ALL     ? "all"
             : loop == HX_MD_LOOP_LOCAL ? "local"
                                        : "geom",
             gaussian ? "gaussian" : "uniform", mom, rot);
    if (!HXT_OK(hxt_md_setup(comm, &c, &sys, &eng)))
        return;
    N = sys.natoms;
    x = malloc((size_t) N * 3 * sizeof(double));
    v = malloc((size_t) N * 3 * sizeof(double));
    ref = malloc((size_t) N * 3 * sizeof(double));
    if (HXT_OK(hxt_md_by_id(comm, &sys, sys.x, 3, x)) &&
        HXT_OK(hxt_md_by_id(comm, &sys, sys.v, 3, v))) {
        if (loop != HX_MD_LOOP_LOCAL || size == 1) {
            reference(&c, N, x, ref);
            for (int64_t i = 0; i < 3 * N; i++)
                bad += v[i] != ref[i];
            HXT_CHECK(bad == 0, "%s: %d of %lld components differ from the reference", what, bad,
                      (long long) (3 * N));
        }
        for (int64_t i = 0; i < N; i++)
            for (int k = 0; k < 3; k++)
                cm[k] += x[3 * i + k] / (double) N;
        for (int64_t i = 0; i < N; i++) {
            const double *r = x + 3 * i, *u = v + 3 * i;
            double d[3] = {r[0] - cm[0], r[1] - cm[1], r[2] - cm[2]};
            for (int k = 0; k < 3; k++) {
                p[k] += c.mass * u[k];
                mv2 += c.mass * u[k] * u[k];
                m2 += u[k] * u[k];
                m4 += u[k] * u[k] * u[k] * u[k];
            }
            L[0] += c.mass * (d[1] * u[2] - d[2] * u[1]);
            L[1] += c.mass * (d[2] * u[0] - d[0] * u[2]);
            L[2] += c.mass * (d[0] * u[1] - d[1] * u[0]);
        }
        HXT_CHECK(hxt_md_close(mv2 / (3 * N - 3), c.temperature, 1e-12, 0), "%s: T %.17g", what,
                  mv2 / (3 * N - 3));
        {
            double pn = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
            double ln = sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2]);
            /* Scales: sqrt(N m T) for momentum, times the box for L. */
            double ps = sqrt(N * c.mass * c.temperature), ls = ps * sys.decomp.box_len[0];
            HXT_CHECK(mom ? pn < 1e-10 * ps : pn > 1e-6 * ps, "%s: |P| %g", what, pn);
            HXT_CHECK(rot ? ln < 1e-10 * ls : ln > 1e-6 * ls, "%s: |L| %g", what, ln);
        }
        {
            double kurt = (m4 / (3.0 * N)) / ((m2 / (3.0 * N)) * (m2 / (3.0 * N)));
            HXT_CHECK(gaussian ? fabs(kurt - 3.0) < 0.4 : fabs(kurt - 1.8) < 0.15,
                      "%s: kurtosis %g", what, kurt);
        }
    }
    free(x);
    free(v);
    free(ref);
    hxt_md_free(&sys, eng);
}

static void test_generator(void)
{
    int64_t x = 1;
    int a = pm(&x), b = pm(&x), c = pm(&x);
    HXT_CHECK(a == 16807 && b == 282475249 && c == 1622650073, "Park-Miller from 1: %d %d %d", a, b,
              c);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_md_velocity_lammps");
    test_generator();
    for (int loop = 0; loop < 3; loop++)
        for (int gaussian = 0; gaussian < 2; gaussian++) {
            one_case(comm, loop, gaussian, 1, 0);
            one_case(comm, loop, gaussian, loop == HX_MD_LOOP_GEOM, 1);
        }
    one_case(comm, HX_MD_LOOP_ALL, 0, 0, 0);
    return hxt_finish(comm);
}
