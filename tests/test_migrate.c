/*
 * test_migrate: after random displacements of up to half the skin, hx_migrate
 * leaves every atom exactly once, on the rank that owns its (wrapped)
 * position, with its payload (id, velocity, type) intact and the atoms that
 * stayed in their order; a plan built on the result is again complete (the
 * full halo check). Displacements cross the periodic boundary, and a few
 * atoms are put exactly on the edges: just below the lower box face (where
 * adding the box length rounds to the upper face), exactly on the upper
 * face, and exactly on an inner domain boundary.
 */
#include "oracle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double box_lo[3] = {-1.0, 2.5, 0.25};
static const double box_len[3] = {12.25, 13.0, 11.5};

static void vel_of(int64_t id, double v[3])
{
    v[0] = (double) id * 0.5 + 0.25;
    v[1] = -1.5 * (double) id;
    v[2] = 1.0 / (double) (id + 1);
}

static int type_of(int64_t id)
{
    return (int) (id % 11) - 5;
}

static double wrap1(double v, double lo, double L)
{
    if (v < lo)
        v += L;
    else if (v >= lo + L)
        v -= L;
    return v;
}

/* What the cases share and count. */
typedef struct migrate_ctx {
    hx_transport *td, *tf;
    long crossings, moves;
    int rounds;
} migrate_ctx;

/* One grid: rounds of random displacements (and the edge atoms in round
 * 1), each migrated and checked, then a migration with nothing to move. The
 * walk's plan is not used: each round builds its own on the migrated atoms. */
static void migrate_case(hx_comm *comm, const hxt_case *c, void *ctx_)
{
    migrate_ctx *ctx = ctx_;
    const int nr = hx_comm_size(comm), rank = hx_comm_rank(comm);
    const int N = c->spec.natoms, rounds = 4;
    const double rh = c->spec.rh, skin = c->spec.aux, h = 0.5 * skin;
    const char *gs = c->gs;
    const hx_decomp d = c->d;
    const hxt_local *l = &c->l;
    hxt_sys cur = c->s; /* evolves: a copy */
    cur.x = malloc((size_t) N * 3 * sizeof(double));
    memcpy(cur.x, c->s.x, (size_t) N * 3 * sizeof(double));

    int n = l->n, cap = n > 0 ? n : 1; /* tight, so that arrivals must grow it */
    double *x = malloc((size_t) cap * 3 * sizeof(double));
    int64_t *id = malloc((size_t) cap * sizeof(int64_t));
    double *vel = malloc((size_t) cap * 3 * sizeof(double));
    int *type = malloc((size_t) cap * sizeof(int));
    memcpy(x, l->x, (size_t) n * 3 * sizeof(double));
    memcpy(id, l->id, (size_t) n * sizeof(int64_t));
    for (int i = 0; i < n; i++) {
        vel_of(id[i], &vel[3 * i]);
        type[i] = type_of(id[i]);
    }
    hx_field fields[3] = {{(void **) &id, sizeof(int64_t)},
                          {(void **) &vel, 3 * sizeof(double)},
                          {(void **) &type, sizeof(int)}};

    int *owner = malloc((size_t) N * sizeof(int)), *owner_new = malloc((size_t) N * sizeof(int));
    for (int a = 0; a < N; a++)
        owner[a] = hx_decomp_owner(&d, &cur.x[3 * a]);
    double *xu = malloc((size_t) N * 3 * sizeof(double)); /* unwrapped targets */
    double *xw = malloc((size_t) N * 3 * sizeof(double)); /* wrapped */
    int64_t *prev = malloc((size_t) N * sizeof(int64_t));
    char *present = malloc((size_t) N);

    /* An inner domain boundary for the edge atoms: the lower bound of the
     * middle domain along the first decomposed dimension (z, y, x). */
    int bdim = -1, bcell = 0;
    double bval = 0;
    for (int k = 2; k >= 0 && bdim < 0; k--)
        if (d.grid[k] > 1) {
            bdim = k;
            bcell = d.grid[k] / 2;
            for (int r = 0; r < nr; r++) {
                hx_decomp o;
                if (hx_decomp_init(&o, box_lo, box_len, rh, c->grid, nr, r) == HX_OK &&
                    o.coord[k] == bcell)
                    bval = o.dom_lo[k];
            }
        }
    int edge_b = -1;

    for (int round = 0; round < rounds; round++) {
        hxt_rng rg = {c->seed * 131 + (uint64_t) round};
        for (int a = 0; a < N; a++)
            for (int k = 0; k < 3; k++)
                xu[3 * a + k] = cur.x[3 * a + k] + (2.0 * hxt_uniform(&rg) - 1.0) * h;
        if (round == 1) {
            /* Edge atoms, each already within h of its spot. */
            int alo = 0, ahi = 0, ab = -1;
            for (int a = 1; a < N; a++) {
                if (cur.x[3 * a] < cur.x[3 * alo])
                    alo = a;
                if (cur.x[3 * a + 1] > cur.x[3 * ahi + 1])
                    ahi = a;
            }
            if (bdim >= 0)
                for (int a = 0; a < N; a++)
                    if (a != alo && a != ahi &&
                        (ab < 0 ||
                         fabs(cur.x[3 * a + bdim] - bval) < fabs(cur.x[3 * ab + bdim] - bval)))
                        ab = a;
            xu[3 * alo] = nextafter(box_lo[0], -INFINITY);
            xu[3 * ahi + 1] = box_lo[1] + box_len[1];
            if (ab >= 0) {
                xu[3 * ab + bdim] = bval;
                edge_b = ab;
            }
            HXT_CHECK(fabs(cur.x[3 * alo] - box_lo[0]) < h &&
                          fabs(cur.x[3 * ahi + 1] - box_lo[1] - box_len[1]) < h &&
                          (ab < 0 || fabs(cur.x[3 * ab + bdim] - bval) < h),
                      "edge atoms are not near their spots; pick more atoms");
        }
        for (int a = 0; a < N; a++)
            for (int k = 0; k < 3; k++) {
                double v = xu[3 * a + k];
                if (rank == 0 && (v < box_lo[k] || v >= box_lo[k] + box_len[k]))
                    ctx->crossings++;
                xw[3 * a + k] = wrap1(v, box_lo[k], box_len[k]);
            }

        for (int i = 0; i < n; i++) {
            memcpy(&x[3 * i], &xu[3 * id[i]], 3 * sizeof(double));
            prev[i] = id[i];
        }
        int nprev = n;
        int ok = HXT_OK(hx_migrate(comm, &d, &n, &cap, &x, fields, 3));
        if (!hxt_agree(comm, ok))
            break;
        HXT_CHECK(n >= 0 && n <= cap, "n %d, capacity %d", n, cap);

        int nid = 0, nbox = 0, nown = 0, npos = 0, npay = 0;
        int64_t ex_pos = -1;
        memset(present, 0, (size_t) N);
        for (int i = 0; i < n; i++) {
            int64_t a = id[i];
            if (a < 0 || a >= N) {
                nid++;
                continue;
            }
            present[a] = 1;
            for (int k = 0; k < 3; k++) {
                double v = x[3 * i + k];
                nbox += !(v >= box_lo[k] && v < box_lo[k] + box_len[k]);
                double dx = v - xw[3 * a + k];
                dx -= box_len[k] * nearbyint(dx / box_len[k]);
                if (!(fabs(dx) <= 1e-12 * box_len[k]) && npos++ == 0)
                    ex_pos = a;
            }
            nown += hx_decomp_owner(&d, &x[3 * i]) != rank;
            double v[3];
            vel_of(a, v);
            npay += !hxt_same_d(vel[3 * i], v[0]) || !hxt_same_d(vel[3 * i + 1], v[1]) ||
                    !hxt_same_d(vel[3 * i + 2], v[2]) || type[i] != type_of(a);
        }
        HXT_CHECK(nid == 0, "grid %s round %d: %d atoms with a bad id", gs, round, nid);
        HXT_CHECK(nbox == 0, "grid %s round %d: %d coordinates outside the box", gs, round, nbox);
        HXT_CHECK(nown == 0, "grid %s round %d: %d atoms on a rank that does not own them", gs,
                  round, nown);
        HXT_CHECK(npos == 0, "grid %s round %d: %d coordinates moved wrongly (first id %lld)", gs,
                  round, npos, (long long) ex_pos);
        HXT_CHECK(npay == 0, "grid %s round %d: %d payloads damaged", gs, round, npay);
        /* The atoms that stayed come first, in their old order. */
        int nstay = 0, norder = 0;
        for (int i = 0; i < nprev; i++)
            if (present[prev[i]]) {
                if (nstay >= n || id[nstay] != prev[i])
                    norder++;
                nstay++;
            }
        HXT_CHECK(norder == 0, "grid %s round %d: %d staying atoms out of order", gs, round,
                  norder);

        hxt_sys gsys;
        int viol = hxt_gather(comm, n, id, x, N, &cur, &gsys, owner_new);
        HXT_CHECK(viol == 0, "grid %s round %d: %d atoms lost or duplicated", gs, round, viol);
        for (int a = 0; a < N && rank == 0; a++)
            ctx->moves += owner_new[a] != owner[a];
        if (round == 1 && edge_b >= 0) {
            hx_decomp o;
            int r = owner_new[edge_b];
            HXT_CHECK(hx_decomp_init(&o, box_lo, box_len, rh, c->grid, nr, r) == HX_OK &&
                          o.coord[bdim] == bcell,
                      "grid %s: atom on the lower bound of cell %d along %d is on rank %d", gs,
                      bcell, bdim, r);
        }
        memcpy(owner, owner_new, (size_t) N * sizeof(int));

        /* A new plan on the migrated atoms is complete again. */
        hx_plan *plan = NULL;
        int pok = HXT_OK(hx_plan_create(&plan, comm, &d, n, x));
        if (hxt_agree(comm, pok)) {
            int nexp = 0;
            int64_t *ids = hxt_check_halo(comm, plan, &gsys, id, ctx->td, ctx->tf, &nexp);
            if (nr > 1)
                HXT_CHECK(nexp > 0, "grid %s round %d: brute force expects no halo", gs, round);
            free(ids);
        }
        if (pok)
            hx_plan_destroy(plan);
        hxt_sys_free(&cur);
        cur = gsys;
        ctx->rounds++;
    }

    /* Nothing moved: a migrate without fields changes nothing. */
    {
        int n0 = n;
        double *x0 = malloc((size_t) (n > 0 ? n : 1) * 3 * sizeof(double));
        memcpy(x0, x, (size_t) n * 3 * sizeof(double));
        if (HXT_OK(hx_migrate(comm, &d, &n, &cap, &x, NULL, 0))) {
            HXT_CHECK(n == n0, "grid %s: still migrate changed n from %d to %d", gs, n0, n);
            HXT_CHECK(n != n0 || memcmp(x0, x, (size_t) n * 3 * sizeof(double)) == 0,
                      "grid %s: still migrate changed coordinates", gs);
        }
        free(x0);
    }

    free(x);
    free(id);
    free(vel);
    free(type);
    free(owner);
    free(owner_new);
    free(xu);
    free(xw);
    free(prev);
    free(present);
    hxt_sys_free(&cur);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_migrate");
    int nr = hx_comm_size(comm), rank = hx_comm_rank(comm);
    int grids[16][3];
    if (hxt_grids_for(nr, grids, 16) == 0)
        return hxt_skip(comm, "no grid in the test list has this many domains");

    /* 2000 atoms; halo cutoff rc 2.5 + skin 0.3 (aux: the skin). */
    const hxt_spec specs[] = {{2.8, 2000, 0.3, 0}};
    migrate_ctx ctx = {hxt_cpu_transport(comm, HX_DOUBLE), hxt_cpu_transport(comm, HX_FLOAT), 0, 0,
                       0};
    if (!hxt_agree(comm, ctx.td && ctx.tf))
        return hxt_finish(comm);
    int ncases = hxt_for_each_plan(comm, box_lo, box_len, specs, 1, 31337, migrate_case, &ctx);
    HXT_CHECK(ncases > 0 && ctx.rounds > 0, "no case ran");
    if (rank == 0) {
        /* The cases must have exercised what they claim to. */
        HXT_CHECK(ctx.crossings > 0, "no displacement crossed the periodic boundary");
        if (nr > 1)
            HXT_CHECK(ctx.moves > 0, "no atom changed rank");
        printf("  %ld boundary crossings, %ld atoms changed rank\n", ctx.crossings, ctx.moves);
    }
    hx_transport_destroy(ctx.td);
    hx_transport_destroy(ctx.tf);
    return hxt_finish(comm);
}
