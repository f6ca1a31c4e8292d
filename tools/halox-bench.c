/*
 * halox-bench - side-by-side timings of the halo exchange.
 *
 *   halox-bench [exchange] [--atoms N] [--grid NXxNYxNZ] [--transport NAME|all]
 *               [--iters N] [--warmup N] [--cutoff RH] [--density RHO]
 *               [--dtype float|double] [--seed S] [--csv FILE]
 *
 * For each transport: a random system of N atoms at the given density (LJ
 * units, default 0.8442) in a cubic periodic box, one plan with halo cutoff
 * RH (default 2.8), then iterations of forward + reverse. Each iteration is
 * timed on every rank and the slowest rank's time kept; the table gives the
 * median, minimum and 90th percentile over iterations.
 */
#define _POSIX_C_SOURCE 200809L
#include "halox.h"
#include "core/hxi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct bench_opts {
    long atoms;
    int grid[3];
    const char *transport;
    int iters, warmup;
    double cutoff, density;
    hx_dtype dtype;
    uint64_t seed;
    const char *csv;
} bench_opts;

typedef struct bench_row {
    const char *name;
    char describe[256];
    double median_us, min_us, p90_us;
    long halo_atoms; /* sum over ranks */
    int npulses;
    hx_status status;
    char error[512];
} bench_row;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void usage(void)
{
    printf("usage: halox-bench [exchange] [--atoms N] [--grid NXxNYxNZ] [--transport NAME|all]\n"
           "                   [--iters N] [--warmup N] [--cutoff RH] [--density RHO]\n"
           "                   [--dtype float|double] [--seed S] [--csv FILE]\n"
           "transports built:");
    for (int i = 0; i < hx_transport_count(); i++)
        printf(" %s", hx_transport_name_at(i));
    printf("\n");
}

static int parse_args(int argc, char **argv, bench_opts *o, int rank)
{
    memset(o, 0, sizeof *o);
    o->atoms = 32000;
    o->transport = "all";
    o->iters = 200;
    o->warmup = 20;
    o->cutoff = 2.8;
    o->density = 0.8442;
    o->dtype = HX_FLOAT;
    o->seed = 12345;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "exchange") == 0)
            continue;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (rank == 0)
                usage();
            return 1;
        }
        if (!v) {
            if (rank == 0)
                fprintf(stderr, "halox-bench: option %s needs a value (see --help)\n", a);
            return 2;
        }
        i++;
        if (strcmp(a, "--atoms") == 0)
            o->atoms = atol(v);
        else if (strcmp(a, "--grid") == 0) {
            if (hx_grid_parse(v, o->grid) != HX_OK) {
                if (rank == 0)
                    fprintf(stderr, "halox-bench: %s\n", hx_last_error());
                return 2;
            }
        } else if (strcmp(a, "--transport") == 0)
            o->transport = v;
        else if (strcmp(a, "--iters") == 0)
            o->iters = atoi(v);
        else if (strcmp(a, "--warmup") == 0)
            o->warmup = atoi(v);
        else if (strcmp(a, "--cutoff") == 0)
            o->cutoff = atof(v);
        else if (strcmp(a, "--density") == 0)
            o->density = atof(v);
        else if (strcmp(a, "--dtype") == 0)
            o->dtype = strcmp(v, "double") == 0 ? HX_DOUBLE : HX_FLOAT;
        else if (strcmp(a, "--seed") == 0)
            o->seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--csv") == 0)
            o->csv = v;
        else {
            if (rank == 0)
                fprintf(stderr, "halox-bench: unknown option %s (see --help)\n", a);
            return 2;
        }
    }
    if (o->atoms < 1 || o->iters < 1 || o->warmup < 0 || !(o->density > 0)) {
        if (rank == 0)
            fprintf(stderr, "halox-bench: need --atoms >= 1, --iters >= 1, --warmup >= 0 and "
                            "--density > 0\n");
        return 2;
    }
    return 0;
}

/* This rank's atoms of a seeded uniform random system (same on every rank). */
static hx_status make_system(const bench_opts *o, const hx_decomp *d, int *n, double **x)
{
    uint64_t s = o->seed;
    int cap = 1024;
    *n = 0;
    HXI_CHECK(hxi_alloc((void **)x, (size_t)cap * 3 * sizeof(double), "benchmark atoms"));
    for (long i = 0; i < o->atoms; i++) {
        double p[3];
        for (int k = 0; k < 3; k++)
            p[k] = d->box_lo[k] + d->box_len[k] * ((splitmix(&s) >> 11) * 0x1.0p-53);
        if (hx_decomp_owner(d, p) != d->rank)
            continue;
        if (*n == cap) {
            cap *= 2;
            HXI_CHECK(hxi_grow((void **)x, (size_t)cap * 3 * sizeof(double), "benchmark atoms"));
        }
        memcpy(*x + 3 * (size_t)*n, p, sizeof p);
        (*n)++;
    }
    return HX_OK;
}

static void run_one(hx_comm *comm, const bench_opts *o, const char *name, const hx_plan *plan,
                    const double *x, bench_row *row)
{
    hx_transport_opts to;
    hx_transport *t = NULL;
    double *times = NULL;
    hx_status st;

    memset(row, 0, sizeof *row);
    row->name = name;
    hx_transport_opts_init(&to);
    to.name = name;
    to.dtype = strcmp(name, "cpu") == 0 ? o->dtype : HX_FLOAT;
    st = hx_transport_create(&t, comm, &to);
    if (st == HX_OK)
        st = hx_transport_set_plan(t, plan);
    if (st == HX_OK) {
        snprintf(row->describe, sizeof row->describe, "%s", hx_transport_describe(t));
        st = hx_transport_write(t, HX_COORDS, 0, hx_plan_nhome(plan), x);
    }
    if (st == HX_OK)
        st = hxi_alloc((void **)&times, (size_t)o->iters * sizeof(double), "timings");
    for (int it = 0; st == HX_OK && it < o->warmup + o->iters; it++) {
        double t0, dt;
        st = hxi_barrier(comm);
        t0 = now_s();
        if (st == HX_OK)
            st = hx_transport_forward(t);
        if (st == HX_OK)
            st = hx_transport_reverse(t);
        if (st == HX_OK)
            st = hx_transport_sync(t);
        dt = now_s() - t0;
        st = hxi_agree(comm, st);
        if (st == HX_OK)
            st = hxi_allreduce_double(comm, &dt, 1, 1);
        if (it >= o->warmup)
            times[it - o->warmup] = dt;
    }
    row->status = st;
    if (st != HX_OK) {
        snprintf(row->error, sizeof row->error, "%s: %s", hx_status_string(st), hx_last_error());
    } else {
        qsort(times, (size_t)o->iters, sizeof(double), cmp_double);
        row->median_us = 1e6 * (o->iters % 2 ? times[o->iters / 2]
                                             : 0.5 * (times[o->iters / 2 - 1] + times[o->iters / 2]));
        row->min_us = 1e6 * times[0];
        row->p90_us = 1e6 * times[(int)(0.9 * (o->iters - 1))];
    }
    free(times);
    hx_transport_destroy(t);
}

int main(int argc, char **argv)
{
    bench_opts o;
    hx_comm *comm = NULL;
    hx_decomp d;
    hx_plan *plan = NULL;
    double *x = NULL, len;
    int n = 0, rank, size, rc;
    bench_row rows[16];
    int nrows = 0;
    hx_status st;

    if (hx_init(&argc, &argv) != HX_OK || hx_comm_create(&comm, NULL) != HX_OK) {
        fprintf(stderr, "halox-bench: cannot start: %s\n", hx_last_error());
        return 1;
    }
    rank = hx_comm_rank(comm);
    size = hx_comm_size(comm);
    rc = parse_args(argc, argv, &o, rank);
    if (rc) {
        hx_comm_destroy(comm);
        hx_finalize();
        return rc == 1 ? 0 : 2;
    }
    len = cbrt(o.atoms / o.density);
    {
        double lo[3] = {0, 0, 0}, box[3] = {len, len, len};
        st = hx_decomp_init(&d, lo, box, o.cutoff, o.grid, size, rank);
    }
    if (st == HX_OK)
        st = make_system(&o, &d, &n, &x);
    if (st == HX_OK)
        st = hx_plan_create(&plan, comm, &d, n, x);
    st = hxi_agree(comm, st);
    if (st != HX_OK) {
        if (rank == 0)
            fprintf(stderr, "halox-bench: %s\n", hx_last_error());
        free(x);
        hx_comm_destroy(comm);
        hx_finalize();
        return 1;
    }

    for (int i = 0; i < hx_transport_count() && nrows < 16; i++) {
        const char *name = hx_transport_name_at(i);
        if (strcmp(o.transport, "all") != 0 && strcmp(o.transport, name) != 0)
            continue;
        run_one(comm, &o, name, plan, x, &rows[nrows]);
        rows[nrows].npulses = hx_plan_npulses(plan);
        {
            int h = hx_plan_nhalo(plan);
            hxi_allreduce_int(comm, &h, 1, 0);
            rows[nrows].halo_atoms = h;
        }
        nrows++;
    }
    if (nrows == 0 && rank == 0)
        fprintf(stderr, "halox-bench: transport '%s' is not built (see --help)\n", o.transport);

    if (rank == 0) {
        FILE *csv = o.csv ? fopen(o.csv, "w") : NULL;
        if (o.csv && !csv)
            fprintf(stderr, "halox-bench: cannot write %s\n", o.csv);
        printf("# halox-bench exchange: %ld atoms, box %.3f^3, halo cutoff %.2f, grid %dx%dx%d, "
               "%d ranks, %d pulses, %d iterations (+%d warm-up), slowest rank per iteration\n",
               o.atoms, len, o.cutoff, d.grid[0], d.grid[1], d.grid[2], size,
               hx_plan_npulses(plan), o.iters, o.warmup);
        printf("%-20s %12s %12s %12s %12s  %s\n", "transport", "median_us", "min_us", "p90_us",
               "halo_atoms", "how");
        if (csv)
            fprintf(csv, "transport,atoms,grid,ranks,pulses,halo_atoms,median_us,min_us,p90_us,"
                         "status\n");
        for (int i = 0; i < nrows; i++) {
            bench_row *r = &rows[i];
            if (r->status == HX_OK)
                printf("%-20s %12.2f %12.2f %12.2f %12ld  %s\n", r->name, r->median_us,
                       r->min_us, r->p90_us, r->halo_atoms, r->describe);
            else
                printf("%-20s %12s %12s %12s %12ld  %s\n", r->name, "-", "-", "-", r->halo_atoms,
                       r->error);
            if (csv)
                fprintf(csv, "%s,%ld,%dx%dx%d,%d,%d,%ld,%.3f,%.3f,%.3f,%s\n", r->name, o.atoms,
                        d.grid[0], d.grid[1], d.grid[2], size, r->npulses, r->halo_atoms,
                        r->median_us, r->min_us, r->p90_us, hx_status_string(r->status));
        }
        if (csv)
            fclose(csv);
    }
    hx_plan_destroy(plan);
    free(x);
    hx_comm_destroy(comm);
    hx_finalize();
    return 0;
}
