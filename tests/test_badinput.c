/*
 * test_badinput: every bad input gets its own status and a message that
 * names it, the outputs are left alone, and the library is usable right
 * after (no collective left half done).
 *
 * With --one-bad-rank only the last rank gives bad coordinates to the
 * collective calls (hx_plan_create, hx_migrate): it must get the specific
 * error and every other rank an error too, without a hang. That mode is
 * registered separately with a short timeout.
 */
#include "oracle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double box_lo[3] = {0.0, 1.0, -2.0};
static const double box_len[3] = {10.0, 12.0, 14.0};

static void check_parse(void)
{
    static const char *bad[] = {
        "",     "2x2",  "2x2x2x2", "0x1x1",           "-1x2x1",  "axbxc", "2x2x1junk", "2x2x",
        "x2x2", "2xx2", "2x2x1 2", "99999999999x1x1", "2.5x1x1", "2,2,1", "  "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int g[3] = {5, 6, 7};
        HXT_FAILS(hx_grid_parse(bad[i], g), HX_ERR_PARSE, NULL);
        HXT_CHECK(g[0] == 5 && g[1] == 6 && g[2] == 7, "\"%s\" wrote the grid on failure", bad[i]);
    }
    /* The message quotes what it could not read. */
    int g[3];
    HXT_FAILS(hx_grid_parse("3x4xq", g), HX_ERR_PARSE, "3x4xq");
    HXT_CHECK(hx_grid_parse(NULL, g) != HX_OK, "hx_grid_parse(NULL) succeeded");
}

static void check_decomp(int nr, int rank, const int g0[3])
{
    hx_decomp d;
    /* Grid product different from the rank count. */
    int gbig[3] = {g0[0] * 2, g0[1], g0[2]};
    HXT_FAILS(hx_decomp_init(&d, box_lo, box_len, 2.0, gbig, nr, rank), HX_ERR_GRID, "rank");
    /* A 0 is a count to choose (LAMMPS's `processors * 1 N`), but the counts
     * given must divide the ranks. */
    int gzero[3] = {0, 1, nr}, gwrong[3] = {0, 1, nr + 1};
    if (HXT_OK(hx_decomp_init(&d, box_lo, box_len, 2.0, gzero, nr, rank)))
        HXT_CHECK(d.grid[0] == 1 && d.grid[1] == 1 && d.grid[2] == nr, "0x1x%d: %dx%dx%d", nr,
                  d.grid[0], d.grid[1], d.grid[2]);
    HXT_FAILS(hx_decomp_init(&d, box_lo, box_len, 2.0, gwrong, nr, rank), HX_ERR_GRID,
              "must divide the rank count");
    if (nr > 1) {
        int gneg[3] = {-1, -1, nr}; /* the right product, but negative */
        HXT_FAILS(hx_decomp_init(&d, box_lo, box_len, 2.0, gneg, nr, rank), HX_ERR_GRID, NULL);
    }
    HXT_CHECK(hx_decomp_init(&d, box_lo, box_len, 2.0, g0, nr, nr) != HX_OK,
              "rank == nranks accepted");
    HXT_CHECK(hx_decomp_init(&d, box_lo, box_len, 2.0, g0, nr, -1) != HX_OK, "rank -1 accepted");
    HXT_CHECK(hx_decomp_init(&d, box_lo, box_len, 2.0, g0, 0, 0) != HX_OK, "0 ranks accepted");

    /* Box lengths: zero, negative, NaN, infinite. */
    const double badlen[] = {0.0, -10.0, NAN, INFINITY};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < sizeof badlen / sizeof badlen[0]; i++) {
            double len[3] = {box_len[0], box_len[1], box_len[2]};
            len[k] = badlen[i];
            HXT_FAILS(hx_decomp_init(&d, box_lo, len, 2.0, g0, nr, rank), HX_ERR_BOX, "box");
        }
    double nanlo[3] = {box_lo[0], NAN, box_lo[2]};
    HXT_FAILS(hx_decomp_init(&d, nanlo, box_len, 2.0, g0, nr, rank), HX_ERR_BOX, "box");

    /* Cutoffs: zero, negative, NaN, infinite. */
    const double badcut[] = {0.0, -1.0, NAN, INFINITY};
    for (size_t i = 0; i < sizeof badcut / sizeof badcut[0]; i++)
        HXT_FAILS(hx_decomp_init(&d, box_lo, box_len, badcut[i], g0, nr, rank), HX_ERR_CUTOFF,
                  "cutoff");
    /* At and above half the shortest box length, along a decomposed
     * dimension or not (the minimum image needs it too). */
    HXT_FAILS(hx_decomp_init(&d, box_lo, box_len, 5.0, g0, nr, rank), HX_ERR_CUTOFF_TOO_LARGE,
              "cutoff");
    HXT_FAILS(hx_decomp_init(&d, box_lo, box_len, 6.5, g0, nr, rank), HX_ERR_CUTOFF_TOO_LARGE,
              "cutoff");
    int gz[3] = {1, 1, nr}; /* decomposed along z only; x is the short one */
    HXT_FAILS(hx_decomp_init(&d, box_lo, box_len, 5.0, gz, nr, rank), HX_ERR_CUTOFF_TOO_LARGE,
              "cutoff");
    HXT_OK(hx_decomp_init(&d, box_lo, box_len, nextafter(5.0, 0.0), g0, nr, rank));
    int g[3] = {-3, -3, -3};
    HXT_FAILS(hx_grid_choose(nr, box_len, 5.0, g), HX_ERR_CUTOFF_TOO_LARGE, "cutoff");
    HXT_CHECK(g[0] == -3 && g[1] == -3 && g[2] == -3, "hx_grid_choose wrote the grid on failure");
    HXT_FAILS(hx_grid_choose(nr, box_len, -1.0, g), HX_ERR_CUTOFF, "cutoff");
    double len0[3] = {box_len[0], 0.0, box_len[2]};
    HXT_FAILS(hx_grid_choose(nr, len0, 2.0, g), HX_ERR_BOX, "box");
    HXT_CHECK(hx_grid_choose(0, box_len, 2.0, g) != HX_OK, "hx_grid_choose(0 ranks) succeeded");
    HXT_FAILS(hx_decomp_init(&d, box_lo, box_len, 5.0, NULL, nr, rank), HX_ERR_CUTOFF_TOO_LARGE,
              "cutoff");
}

/* A plan must fail with want on the ranks in bad (or all when bad < 0),
 * and fail on all others; the plan pointer is left NULL. */
static void plan_fails(hx_comm *comm, const hx_decomp *d, int n, const double *x, hx_status want,
                       const char *needle, int bad, const char *what)
{
    hx_plan *plan = NULL;
    hx_status s = hx_plan_create(&plan, comm, d, n, x);
    /* Every rank gets the bad rank's status and message. */
    HXT_FAILS(s, want, needle);
    HXT_CHECK(plan == NULL, "%s: plan set on failure", what);
    if (s == HX_OK && plan)
        hx_plan_destroy(plan);
}

/* After failures, a good plan still builds and is right. */
static void plan_works(hx_comm *comm, const hx_decomp *d, const hxt_sys *s, const hxt_local *l)
{
    hx_plan *plan = NULL;
    int ok = HXT_OK(hx_plan_create(&plan, comm, d, l->n, l->x));
    if (hxt_agree(comm, ok)) {
        int64_t *ids = hxt_check_halo(comm, plan, s, l->id, NULL, NULL, NULL);
        free(ids);
    }
    if (ok)
        hx_plan_destroy(plan);
}

static void check_plan(hx_comm *comm, const hx_decomp *d, const hxt_sys *s, const hxt_local *l,
                       int bad)
{
    int nr = d->nranks, n = l->n;
    double *x = malloc((size_t) (n > 0 ? n : 1) * 3 * sizeof(double));
    int mine = bad < 0 || bad == d->rank;
    struct {
        int comp;
        double v;
        hx_status want;
        const char *needle;
        const char *what;
    } cases[] = {
        {0, NAN, HX_ERR_COORD_NAN, "nan", "NaN"},
        {2, -INFINITY, HX_ERR_COORD_NAN, NULL, "infinite"},
        {1, box_lo[1] + box_len[1] + 0.5, HX_ERR_COORD_OUTSIDE, "outside", "beyond the box"},
        {1, box_lo[1] + box_len[1], HX_ERR_COORD_OUTSIDE, "outside", "on the upper face"},
        {2, box_lo[2] - 1e-9, HX_ERR_COORD_OUTSIDE, "outside", "below the box"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        memcpy(x, l->x, (size_t) n * 3 * sizeof(double));
        if (mine && n > 0)
            x[3 * (n / 2) + cases[c].comp] = cases[c].v;
        plan_fails(comm, d, n, x, cases[c].want, cases[c].needle, bad, cases[c].what);
    }
    /* Inside the box but in another rank's domain. */
    if (nr > 1) {
        memcpy(x, l->x, (size_t) n * 3 * sizeof(double));
        if (mine && n > 0)
            for (int j = 0; j < s->n; j++)
                if (hx_decomp_owner(d, &s->x[3 * j]) != d->rank) {
                    memcpy(&x[3 * (n - 1)], &s->x[3 * j], 3 * sizeof(double));
                    break;
                }
        plan_fails(comm, d, n, x, HX_ERR_COORD_OUTSIDE, "belongs to rank", bad,
                   "another rank's atom");
    }
    if (bad < 0) {
        plan_fails(comm, d, -1, l->x, HX_ERR_INVALID, NULL, -1, "negative count");
        plan_fails(comm, d, 5, NULL, HX_ERR_INVALID, NULL, -1, "NULL coordinates");
        HXT_FAILS(hx_plan_create(NULL, comm, d, n, l->x), HX_ERR_INVALID, NULL);
        /* A decomp for a different rank count than the communicator's. */
        hx_decomp other;
        int g2[3] = {nr + 1, 1, 1};
        if (HXT_OK(hx_decomp_init(&other, box_lo, box_len, 2.0, g2, nr + 1, d->rank)))
            plan_fails(comm, &other, n, l->x, HX_ERR_INVALID, "communicator", -1,
                       "decomp for other size");
    }
    free(x);
    plan_works(comm, d, s, l);
}

static void check_migrate(hx_comm *comm, const hx_decomp *d, const hxt_local *l, int bad)
{
    int n = l->n, cap = n > 0 ? n : 1;
    double *x = malloc((size_t) cap * 3 * sizeof(double));
    memcpy(x, l->x, (size_t) n * 3 * sizeof(double));
    int mine = bad < 0 || bad == d->rank;
    if (mine && n > 0)
        x[3 * (n / 2) + 1] = NAN;
    hx_status s = hx_migrate(comm, d, &n, &cap, &x, NULL, 0);
    /* Every rank gets the bad rank's status and message. */
    HXT_FAILS(s, HX_ERR_COORD_NAN, "nan");
    /* And it works again afterwards. */
    n = l->n;
    memcpy(x, l->x, (size_t) n * 3 * sizeof(double));
    if (HXT_OK(hx_migrate(comm, d, &n, &cap, &x, NULL, 0)))
        HXT_CHECK(n == l->n, "a migrate that moves nothing changed n");
    if (bad < 0) {
        HXT_FAILS(hx_migrate(comm, d, NULL, &cap, &x, NULL, 0), HX_ERR_INVALID, NULL);
        hx_field f = {NULL, 8};
        HXT_FAILS(hx_migrate(comm, d, &n, &cap, &x, &f, 1), HX_ERR_INVALID, NULL);
    }
    free(x);
}

static void check_transport(hx_comm *comm, const hx_decomp *d, const hxt_local *l)
{
    hx_plan *plan = NULL;
    int ok = HXT_OK(hx_plan_create(&plan, comm, d, l->n, l->x));
    if (!hxt_agree(comm, ok)) {
        if (ok)
            hx_plan_destroy(plan);
        return;
    }
    int ntotal = hx_plan_ntotal(plan), maxt = hx_plan_max_ntotal(plan);
    hx_transport_opts o;
    hx_transport *t = NULL;

    /* Out of order: no plan yet. */
    t = hxt_cpu_transport(comm, HX_DOUBLE);
    if (t) {
        HXT_FAILS(hx_transport_forward(t), HX_ERR_STATE, "plan");
        HXT_FAILS(hx_transport_reverse(t), HX_ERR_STATE, "plan");
        hx_transport_destroy(t);
    }

    /* Fixed capacities that cannot hold the plan: on every rank (1), and on
     * the largest rank alone (max_ntotal - 1): every rank must get the
     * error, or the next exchange would hang. */
    const int small[] = {1, maxt - 1};
    for (int i = 0; i < 2; i++) {
        hx_transport_opts_init(&o);
        o.name = "cpu";
        o.dtype = HX_DOUBLE;
        o.capacity = small[i];
        o.fixed_capacity = 1;
        t = NULL;
        if (!HXT_OK(hx_transport_create(&t, comm, &o)))
            continue;
        HXT_FAILS(hx_transport_set_plan(t, plan), HX_ERR_OVERFLOW, "capacity");
        HXT_FAILS(hx_transport_forward(t), HX_ERR_STATE, NULL);
        hx_transport_destroy(t);
    }

    /* Exactly enough, and growable from too small: both work. */
    for (int grow = 0; grow < 2; grow++) {
        hx_transport_opts_init(&o);
        o.name = "cpu";
        o.dtype = HX_DOUBLE;
        o.capacity = grow ? 1 : maxt;
        o.fixed_capacity = !grow;
        t = NULL;
        if (!HXT_OK(hx_transport_create(&t, comm, &o)))
            continue;
        if (HXT_OK(hx_transport_set_plan(t, plan))) {
            double *x = hx_transport_coords(t);
            const double *px = hx_plan_coords(plan);
            for (int i = 0; i < ntotal; i++)
                for (int k = 0; k < 3; k++)
                    x[3 * i + k] = i < l->n ? l->x[3 * i + k] : NAN;
            if (HXT_OK(hx_transport_forward(t)) && HXT_OK(hx_transport_sync(t))) {
                x = hx_transport_coords(t);
                HXT_CHECK(memcmp(x, px, (size_t) ntotal * 3 * sizeof(double)) == 0,
                          "capacity %d %s: forward differs from the plan's coordinates", o.capacity,
                          grow ? "growable" : "fixed");
            }
        }
        hx_transport_destroy(t);
    }

    /* Names: unknown, and known but not built here. */
    hx_transport_opts_init(&o);
    o.name = "no-such-transport";
    t = NULL;
    hx_status s = hx_transport_create(&t, comm, &o);
    HXT_CHECK(s != HX_OK && t == NULL && strstr(hx_last_error(), "no-such-transport"),
              "unknown transport: %s, \"%s\"", hx_status_string(s), hx_last_error());
    static const char *names[] = {"mpi",           "nccl",          "nvshmem-stream",
                                  "nvshmem-pulse", "nvshmem-fused", "nvshmem-fused-tma"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int built = 0;
        for (int j = 0; j < hx_transport_count(); j++)
            built |= strcmp(hx_transport_name_at(j), names[i]) == 0;
        if (built)
            continue;
        o.name = names[i];
        t = NULL;
        HXT_FAILS(hx_transport_create(&t, comm, &o), HX_ERR_UNSUPPORTED, names[i]);
    }
    /* Capabilities: by name before creation, and of a created transport. */
    HXT_CHECK(hx_transport_caps_of("no-such-transport") == 0 && hx_transport_caps_of(NULL) == 0,
              "an unknown name has capabilities %#x", hx_transport_caps_of("no-such-transport"));
    HXT_CHECK(hx_transport_caps_of("cpu") ==
                  (HX_CAP_HOST | HX_CAP_DOUBLE | HX_CAP_BLOCKS_HOST | HX_CAP_FIELDS),
              "cpu capabilities %#x", hx_transport_caps_of("cpu"));
    HXT_CHECK(hx_transport_caps_of("auto") == HX_CAP_CHOOSES, "auto capabilities %#x",
              hx_transport_caps_of("auto"));
    for (int j = 0; j < hx_transport_count(); j++) {
        unsigned c = hx_transport_caps_of(hx_transport_name_at(j));
        HXT_CHECK(!((c & HX_CAP_DEVICE) && (c & HX_CAP_HOST)) &&
                      (!(c & HX_CAP_GRAPH) || (c & HX_CAP_DEVICE)),
                  "%s: capabilities %#x contradict each other", hx_transport_name_at(j), c);
    }
    o.name = "cpu";
    o.dtype = HX_DOUBLE;
    t = NULL;
    if (HXT_OK(hx_transport_create(&t, comm, &o))) {
        HXT_CHECK(hx_transport_caps(t) == hx_transport_caps_of("cpu") && !hx_transport_on_device(t),
                  "cpu transport: capabilities %#x", hx_transport_caps(t));
        hx_transport_destroy(t);
    }
    o.name = "auto";
    o.dtype = HX_FLOAT;
    t = NULL;
    if (HXT_OK(hx_transport_create(&t, comm, &o))) {
        HXT_CHECK(hx_transport_caps(t) == HX_CAP_CHOOSES,
                  "auto before its first plan: capabilities %#x", hx_transport_caps(t));
        hx_transport_destroy(t);
    }
    /* A wait's bound: negative, NaN or infinite refused, 0 the default. */
    const double bad_timeouts[] = {-1.0, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_timeouts / sizeof bad_timeouts[0]; i++) {
        hx_transport_opts_init(&o);
        o.timeout_s = bad_timeouts[i];
        t = NULL;
        HXT_FAILS(hx_transport_create(&t, comm, &o), HX_ERR_INVALID, "opts.timeout_s is");
        HXT_CHECK(t == NULL, "a refused transport was returned");
    }
    o.name = "cpu";
    o.dtype = (hx_dtype) 7;
    t = NULL;
    s = hx_transport_create(&t, comm, &o);
    HXT_CHECK(s != HX_OK && t == NULL, "cpu transport with dtype 7: %s", hx_status_string(s));
    if (s == HX_OK)
        hx_transport_destroy(t);
    hx_plan_destroy(plan);
}

int main(int argc, char **argv)
{
    int one_bad = argc > 1 && strcmp(argv[1], "--one-bad-rank") == 0;
    hx_comm *comm =
        hxt_init(&argc, &argv, one_bad ? "test_badinput(one bad rank)" : "test_badinput");
    int nr = hx_comm_size(comm), rank = hx_comm_rank(comm);
    int grids[16][3];
    if (hxt_grids_for(nr, grids, 16) == 0)
        return hxt_skip(comm, "no grid in the test list has this many domains");

    hx_decomp d;
    if (!hxt_agree(comm, HXT_OK(hx_decomp_init(&d, box_lo, box_len, 2.0, grids[0], nr, rank))))
        return hxt_finish(comm);
    hxt_sys s;
    hxt_sys_random(&s, 600, box_lo, box_len, 99);
    hxt_local l;
    hxt_local_take(&l, &s, &d);
    HXT_CHECK(l.n > 0, "rank has no atoms; the cases need some");

    if (one_bad) {
        check_plan(comm, &d, &s, &l, nr - 1);
        check_migrate(comm, &d, &l, nr - 1);
    } else {
        check_parse();
        check_decomp(nr, rank, grids[0]);
        check_plan(comm, &d, &s, &l, -1);
        check_migrate(comm, &d, &l, -1);
        check_transport(comm, &d, &l);
    }
    hxt_local_free(&l);
    hxt_sys_free(&s);
    return hxt_finish(comm);
}
