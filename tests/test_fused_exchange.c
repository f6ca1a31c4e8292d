/*
 * test_fused_exchange: nvshmem-fused and nvshmem-fused-tma against the cpu
 * transport (float), every force mode, put path forced and not (see
 * fused_util.h for what must match and how). Per grid, 100
 * consecutive steps: home coordinates move every step and forces are new
 * every step; half-way a re-plan with a new system of three times the
 * atoms (new maps and sizes, buffers grow collectively). Even steps are
 * launched (forward + reverse), odd steps replayed from the transport's
 * graph, so the device step counter must carry across both.
 *
 * Grids per rank count: 2: 1x1x2, 2x1x1 (1 pulse); 4: 2x2x1, 1x1x4 (2
 * pulses along z); 8: 2x2x2, 8x1x1 (3 pulses along x: domains 1.0 wide,
 * cutoff 2.8), 2x1x4 (2 pulses along z). --grid AxBxC (repeatable)
 * replaces them; --steps N sets the steps per grid. --transport NAME tests
 * another transport of the fused design instead (nccl-dev: pull and push);
 * where it is refused (NCCL refuses two ranks on one GPU) the test skips
 * and says why.
 */
#include "fused_util.h"

#include "core/hxi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double rh = 2.8;

/* 6 or more domains: width 1.0 (3 pulses); 3 to 5: width 2.1 (2 pulses);
 * else one pulse in a box of 12. Always rh < half the box. */
static void box_for(const int grid[3], double len[3])
{
    for (int d = 0; d < 3; d++)
        len[d] = grid[d] >= 6 ? 1.0 * grid[d] : grid[d] >= 3 ? 2.1 * grid[d] : 12.0;
}

static int default_grids(int nranks, int grids[][3])
{
    static const int g2[][3] = {{1, 1, 2}, {2, 1, 1}};
    static const int g4[][3] = {{2, 2, 1}, {1, 1, 4}};
    static const int g8[][3] = {{2, 2, 2}, {8, 1, 1}, {2, 1, 4}};
    int n = 0;
    const int(*src)[3] = NULL;
    if (nranks == 2)
        src = g2, n = 2;
    else if (nranks == 4)
        src = g4, n = 2;
    else if (nranks == 8)
        src = g8, n = 3;
    if (!src)
        return hxt_grids_for(nranks, grids, 3);
    memcpy(grids, src, (size_t) n * sizeof *src);
    return n;
}

static hx_plan *make_plan(hx_comm *comm, const hx_decomp *d, int n, uint64_t seed)
{
    hxt_sys s;
    hxt_local l;
    hx_plan *plan = NULL;
    hxt_sys_random(&s, n, d->box_lo, d->box_len, seed);
    hxt_local_take(&l, &s, d);
    int ok = HXT_OK(hx_plan_create(&plan, comm, d, l.n, l.x));
    hxt_local_free(&l);
    hxt_sys_free(&s);
    if (!hxt_agree(comm, ok)) {
        hx_plan_destroy(plan);
        return NULL;
    }
    return plan;
}

/* Every live variant and the reference take the plan. */
static int adopt(hx_comm *comm, hxt_fz_ref *r, hxt_fz_var *v, int nv, const hx_plan *plan)
{
    if (!hxt_fz_ref_plan(comm, r, plan))
        return 0;
    for (int k = 0; k < nv; k++) {
        if (!v[k].alive)
            continue;
        if (!hxt_agree(comm, HXT_OK(hx_transport_set_plan(v[k].t, plan)))) {
            v[k].alive = 0;
            if (hxt_rank == 0)
                fprintf(stderr, "%s: set_plan failed\n", v[k].label);
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_fused_exchange");
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress shows even when a run is cut short */
    int nranks = hx_comm_size(comm), rank = hx_comm_rank(comm);
    int grids[8][3], ngrids = 0, steps = 100;
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--grid") == 0 && i + 1 < argc && ngrids < 8) {
            if (hx_grid_parse(argv[++i], grids[ngrids]) == HX_OK)
                ngrids++;
        } else if (strcmp(argv[i], "--transport") == 0 && i + 1 < argc) {
            name = argv[++i];
        } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            steps = atoi(argv[++i]);
        }
    }
    if (!hxt_fz_have_gpu(comm))
        return hxt_skip(comm, "no CUDA device visible here (the fused transports need one)");
    if (nranks < 2)
        return hxt_skip(comm, "needs 2 ranks or more");
    if (ngrids == 0)
        ngrids = default_grids(nranks, grids);
    for (int g = 0; g < ngrids; g++)
        if (grids[g][0] * grids[g][1] * grids[g][2] != nranks)
            ngrids = 0;
    if (ngrids == 0)
        return hxt_skip(comm, "no grid for this rank count (use 2, 4 or 8, or --grid)");
    if (steps < 2)
        steps = 2;

    hxt_fz_var v[HXT_FZ_MAXV];
    int nv = name ? hxt_fz_create_named(comm, v, name, 10.0) : hxt_fz_create_all(comm, v, 10.0);
    if (name && nv == 0 && hxt_agree(comm, hxt_failures == 0))
        return hxt_skip(comm, "the transport was refused here (the reason is above)");
    HXT_CHECK(nv > 0, "no fused transport could be created");
    for (int k = 0; k < nv && rank == 0; k++)
        printf("%s: %s\n", v[k].label, hx_transport_describe(v[k].t));
    hxt_fz_ref ref;
    if (!hxt_fz_ref_init(comm, &ref))
        nv = 0;

    /* The transports keep the plan by pointer: a plan goes only once the
     * next one has replaced it everywhere. */
    hx_plan *plan = NULL;
    for (int g = 0; g < ngrids && nv > 0; g++) {
        double lo[3] = {0, 0, 0}, len[3];
        box_for(grids[g], len);
        hx_decomp d;
        if (!hxt_agree(comm, HXT_OK(hx_decomp_init(&d, lo, len, rh, grids[g], nranks, rank))))
            continue;
        double vol = len[0] * len[1] * len[2];
        double *cur = NULL, *force = NULL;
        hxt_rng mv = {777u + 31u * (uint64_t) rank + 1000u * (uint64_t) g};
        char gs[32];
        hxt_grid_str(grids[g], gs);
        for (int step = 0; step < steps; step++) {
            if (step == 0 || step == steps / 2) {
                int n = (int) (0.8442 * vol * (step == 0 ? 1.0 : 3.0));
                hx_plan *next = make_plan(comm, &d, n, 4321u + 7u * (uint64_t) g + (uint64_t) step);
                if (!next)
                    break;
                if (!adopt(comm, &ref, v, nv, next)) {
                    /* Some transports may hold either plan now: keep both. */
                    plan = NULL;
                    break;
                }
                hx_plan_destroy(plan);
                plan = next;
                int nh = hx_plan_nhome(plan), nt = hx_plan_ntotal(plan);
                cur = realloc(cur, (size_t) (nh + 1) * 3 * sizeof(double));
                force = realloc(force, (size_t) (nt + 1) * 3 * sizeof(double));
                memcpy(cur, hx_plan_coords(plan), (size_t) nh * 3 * sizeof(double));
                if (rank == 0) {
                    printf("grid %s, %d atoms: %d pulses (", gs, n, hx_plan_npulses(plan));
                    for (int p = 0; p < hx_plan_npulses(plan); p++)
                        printf("%s%c%d", p ? " " : "", "XYZ"[hx_plan_pulse(plan, p)->dim],
                               hx_plan_pulse(plan, p) -> index);
                    printf("), max ntotal %d\n", hx_plan_max_ntotal(plan));
                }
            }
            int nh = hx_plan_nhome(plan), nt = hx_plan_ntotal(plan);
            if (step > 0)
                for (int i = 0; i < nh * 3; i++)
                    cur[i] += 0.02 * (hxt_uniform(&mv) - 0.5);
            hxt_rng fr = {99991u * (uint64_t) (step + 1) + 7919u * (uint64_t) rank + (uint64_t) g};
            hxt_fz_forces(force, nt * 3, &fr);
            if (!hxt_fz_ref_step(comm, &ref, plan, cur, force))
                break;
            char what[96];
            snprintf(what, sizeof what, "grid %s step %d", gs, step);
            for (int k = 0; k < nv; k++) {
                if (!v[k].alive)
                    continue;
                if (!hxt_fz_check(comm, &ref, plan, &v[k], cur, force, step & 1, what)) {
                    v[k].alive = 0;
                    if (rank == 0)
                        fprintf(stderr, "%s: %s failed; dropping this variant\n", v[k].label, what);
                }
            }
        }
        free(cur);
        free(force);
    }
    for (int k = 0; k < nv; k++) {
        if (rank == 0)
            printf("%s: %s\n", v[k].label, v[k].alive ? "ran every step" : "FAILED a step");
        HXT_CHECK(v[k].alive, "%s failed a step (see above)", v[k].label);
    }
    for (int k = nv - 1; k >= 0; k--)
        hx_transport_destroy(v[k].t);
    if (nv > 0)
        hxt_fz_ref_free(&ref);
    hx_plan_destroy(plan);
    return hxt_finish(comm);
}
