/*
 * test_fused_stress: randomised cases for nvshmem-fused and
 * nvshmem-fused-tma against the cpu transport. Each case draws, from a
 * seeded generator (the same on every rank): a grid whose product is the
 * rank count, a halo cutoff, per dimension a pulse count (1 to 3 where the
 * grid allows) and a box length that gives it, an atom count from none to
 * a few thousand, a transport variant (fused or fused-tma, force mode,
 * put path forced or not) and 2 or 3 steps, each launched or replayed
 * from the graph at random. Every case re-plans the chosen variant (maps,
 * sizes and buffers change case to case). Checks as fused_util.h.
 *
 *   test_fused_stress [--cases N] [--seed S]    (defaults 200, 20261129)
 *
 * A failing case prints the seed and case number (rerun with --seed S
 * --cases N to reach it) and stops the run.
 */
#include "fused_util.h"

#include "core/hxi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Grids whose product is n, all orders. */
static int grids_of(int n, int g[][3], int max)
{
    int k = 0;
    for (int a = 1; a <= n; a++)
        for (int b = 1; a * b <= n; b++)
            if (n % (a * b) == 0 && k < max) {
                g[k][0] = a;
                g[k][1] = b;
                g[k][2] = n / (a * b);
                k++;
            }
    return k;
}

/* A case's decomposition: pulses per dimension chosen among those the
 * grid allows (domain width w = L / g, pulses ceil(rh / w), and rh < L / 2). */
static void draw_box(hxt_rng *r, const int grid[3], double rh, double len[3])
{
    for (int d = 0; d < 3; d++) {
        int g = grid[d];
        if (g == 1) {
            len[d] = rh * (2.05 + 1.5 * hxt_uniform(r));
            continue;
        }
        /* np pulses: w in [rh / np, rh / (np - 1)), and w > 2 rh / g. */
        double wlo[3], whi[3];
        int ok[3], nok = 0;
        for (int np = 1; np <= 3; np++) {
            wlo[np - 1] = fmax(rh / np, 2.0 * rh / g) * 1.02;
            whi[np - 1] = np == 1 ? 1.8 * rh : rh / (np - 1) * 0.98;
            ok[np - 1] = wlo[np - 1] < whi[np - 1];
            nok += ok[np - 1];
        }
        int pick = (int) (hxt_uniform(r) * nok), np = 0;
        for (int k = 0; k < 3; k++)
            if (ok[k] && pick-- == 0)
                np = k;
        double w = wlo[np] + (whi[np] - wlo[np]) * hxt_uniform(r);
        len[d] = w * g;
    }
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_fused_stress");
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress shows even when a run is cut short */
    int nranks = hx_comm_size(comm), rank = hx_comm_rank(comm);
    int ncases = 200;
    uint64_t seed = 20261129u;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cases") == 0 && i + 1 < argc)
            ncases = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
    }
    if (!hxt_fz_have_gpu(comm))
        return hxt_skip(comm, "no CUDA device visible here (the fused transports need one)");
    if (nranks < 2)
        return hxt_skip(comm, "needs 2 ranks or more");

    hxt_fz_var v[HXT_FZ_MAXV];
    int nv = hxt_fz_create_all(comm, v, 10.0);
    HXT_CHECK(nv > 0, "no fused transport could be created");
    hxt_fz_ref ref;
    if (!hxt_fz_ref_init(comm, &ref))
        nv = 0;
    int grids[64][3];
    int ng = grids_of(nranks, grids, 64);
    /* Plans stay alive while any transport may hold them: all until the end. */
    hx_plan **plans = calloc((size_t) ncases + 1, sizeof *plans);
    int done = 0, failed = 0, launched = 0, replayed = 0;
    int used[HXT_FZ_MAXV] = {0};

    for (int c = 0; c < ncases && nv > 0 && !failed; c++) {
        hxt_rng r = {seed * 1000003u + (uint64_t) c};
        const int *grid = grids[(int) (hxt_uniform(&r) * ng)];
        double rh = 0.8 + 2.2 * hxt_uniform(&r);
        double lo[3], len[3];
        draw_box(&r, grid, rh, len);
        for (int d = 0; d < 3; d++)
            lo[d] = 10.0 * (hxt_uniform(&r) - 0.5);
        double vol = len[0] * len[1] * len[2];
        double u = hxt_uniform(&r);
        int n = u < 0.1 ? (int) (8 * hxt_uniform(&r))
                        : (int) fmin(3000.0, vol * (0.05 + 0.9 * hxt_uniform(&r)));
        int k = (int) (hxt_uniform(&r) * nv);
        int nsteps = 2 + (hxt_uniform(&r) < 0.5);
        uint64_t sysseed = hxt_next(&r);
        char what[200], gs[32];
        snprintf(what, sizeof what,
                 "seed %llu case %d (grid %s, box %.3f x %.3f x %.3f, cutoff %.3f, %d atoms)",
                 (unsigned long long) seed, c, hxt_grid_str(grid, gs), len[0], len[1], len[2], rh,
                 n);

        hx_decomp d;
        if (!hxt_agree(comm, HXT_OK(hx_decomp_init(&d, lo, len, rh, grid, nranks, rank)))) {
            failed = 1;
            break;
        }
        hxt_sys s;
        hxt_local l;
        hxt_sys_random(&s, n, lo, len, sysseed);
        hxt_local_take(&l, &s, &d);
        hx_plan *plan = NULL;
        int ok = HXT_OK(hx_plan_create(&plan, comm, &d, l.n, l.x));
        hxt_sys_free(&s);
        if (!hxt_agree(comm, ok)) {
            hxt_local_free(&l);
            failed = 1;
            break;
        }
        plans[c] = plan;
        ok = hxt_fz_ref_plan(comm, &ref, plan) &&
             hxt_agree(comm, HXT_OK(hx_transport_set_plan(v[k].t, plan)));
        int nh = hx_plan_nhome(plan), nt = hx_plan_ntotal(plan);
        double *cur = malloc((size_t) (nh + 1) * 3 * sizeof(double));
        double *force = malloc((size_t) (nt + 1) * 3 * sizeof(double));
        memcpy(cur, l.x, (size_t) nh * 3 * sizeof(double));
        hxt_local_free(&l);
        hxt_rng mv = {hxt_next(&r) + (uint64_t) rank};
        for (int step = 0; ok && step < nsteps; step++) {
            int graph = hxt_uniform(&r) < 0.5;
            for (int i = 0; step > 0 && i < nh * 3; i++)
                cur[i] += 0.05 * (hxt_uniform(&mv) - 0.5);
            hxt_fz_forces(force, nt * 3, &mv);
            char w2[240];
            snprintf(w2, sizeof w2, "%s step %d, %d pulses", what, step, hx_plan_npulses(plan));
            ok = hxt_fz_ref_step(comm, &ref, plan, cur, force) &&
                 hxt_fz_check(comm, &ref, plan, &v[k], cur, force, graph, w2);
            launched += !graph;
            replayed += graph;
        }
        free(cur);
        free(force);
        used[k]++;
        if (!ok) {
            failed = 1;
            if (rank == 0)
                fprintf(stderr, "FAILED: %s with %s; rerun: --seed %llu --cases %d\n", what,
                        v[k].label, (unsigned long long) seed, c + 1);
            HXT_CHECK(0, "case %d failed", c);
            break;
        }
        done++;
    }
    if (rank == 0) {
        printf("%d of %d cases clean (seed %llu), %d steps launched, %d replayed; per variant:",
               done, ncases, (unsigned long long) seed, launched, replayed);
        for (int k = 0; k < nv; k++)
            printf(" %s %d", v[k].label, used[k]);
        printf("\n");
    }
    HXT_CHECK(done == ncases || nv == 0, "only %d of %d cases ran clean", done, ncases);
    for (int k = nv - 1; k >= 0; k--)
        hx_transport_destroy(v[k].t);
    if (nv > 0)
        hxt_fz_ref_free(&ref);
    for (int c = 0; c < ncases; c++)
        hx_plan_destroy(plans[c]);
    free(plans);
    return hxt_finish(comm);
}
