/*
 * test_dplan.c - the halo plan built on the device (hx_plan_create_device)
 * against the host plan (hx_plan_create) on the same coordinates.
 *
 * Each case: a random or fcc-lattice system at density 0.8442 in a box
 * whose domains give 1, 2 or 3 pulses along the decomposed dimensions
 * (grids per rank count below). Coordinates are float values (the host
 * plan gets them widened to double), and atoms within 1e-3 of any pulse's
 * limit (a domain's lower bound plus the cutoff, over the periodic images)
 * are left out: there float and double comparisons may fall either side,
 * which the API allows. Then:
 *  - the same in triclinic boxes (tilts below), larger so that the cutoff
 *    stays under half of every face distance;
 *  - every field of every pulse is equal (counts, ranks, offsets, shift,
 *    dependency and share masks, map offsets, counts per source pulse),
 *    and the maps and zones (downloaded) are equal entry by entry;
 *  - the device plan's halo coordinates are bitwise those a float `cpu`
 *    transport delivers on the host plan;
 *  - every device transport built takes the device plan (no host maps):
 *    its forward gives the same coordinates bitwise, and its reverse of
 *    random forces the same home forces within 1e-6 relative (of
 *    max(|f|, 1)), as the cpu transport on the host plan;
 *  - home coordinates given as 3 and as 4 floats per atom;
 *  - a plan whose first pulse was counted ahead (hx_plan_count_device, on
 *    the home atoms in reverse order) is the same plan, field by field,
 *    map by map and coordinate by coordinate;
 *  - an atom outside its domain is HX_ERR_COORD_OUTSIDE on every rank, also
 *    where the count ahead found it; a plan given another number of atoms
 *    than were counted ahead is HX_ERR_INVALID, and one given other atoms
 *    (same number, another count) is HX_ERR_INVALID at the next wait of
 *    the context (the census).
 * With --full, the same for full-shell plans (hx_plan_create_full against
 * hx_plan_create_device_full; atoms also kept off the upward pulses'
 * limits, a domain's upper bound less the cutoff): structure, maps, zones
 * and coordinates equal, every device transport's forward on the device
 * plan bitwise the cpu transport's on the host plan, and every reverse
 * refused (HX_ERR_STATE); the misuse cases run without --full only.
 * Exits 77 where there is no GPU or no grid for the rank count.
 */
#define _POSIX_C_SOURCE 200809L
#include "gpucases.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RH     2.8
#define MARGIN 1e-3
#define MAXT   16

/* --full: full-shell plans (hx_plan_create_full, _device_full). */
static int full;

static hx_status plan_host(hx_plan **p, hx_comm *comm, const hx_decomp *d, int n, const double *x)
{
    return full ? hx_plan_create_full(p, comm, d, n, x) : hx_plan_create(p, comm, d, n, x);
}

static hx_status plan_device(hx_plan **p, hx_rebuild *rb, int n, const float *x, int xs)
{
    return full ? hx_plan_create_device_full(p, rb, n, x, xs)
                : hx_plan_create_device(p, rb, n, x, xs);
}

/* Box length along a dimension of g domains: width 3.6 (1 pulse) for 2,
 * 2.0 and 1.9 (2 pulses) for 3 and 4, 1.2 (3 pulses) for 8; 8.0 where the
 * dimension is not decomposed. Every length exceeds 2 RH. */
static double box_len_for(int g)
{
    switch (g) {
    case 1:
        return 8.0;
    case 2:
        return 7.2;
    case 3:
        return 6.0;
    case 4:
        return 7.6;
    case 8:
        return 9.6;
    default:
        return 2.8 * g;
    }
}

static int grids_for(int nranks, int grids[][3])
{
    static const int g2[][3] = {{1, 1, 2}, {2, 1, 1}};
    static const int g3[][3] = {{1, 1, 3}, {3, 1, 1}};
    static const int g4[][3] = {{1, 2, 2}, {2, 2, 1}, {1, 1, 4}};
    static const int g8[][3] = {{2, 2, 2}, {1, 1, 8}, {2, 1, 4}};
    const int(*src)[3] = NULL;
    int n = 0;
    if (nranks == 2)
        src = g2, n = 2;
    else if (nranks == 3)
        src = g3, n = 2;
    else if (nranks == 4)
        src = g4, n = 3;
    else if (nranks == 8)
        src = g8, n = 3;
    if (src)
        memcpy(grids, src, (size_t) n * sizeof *src);
    return n;
}

/* fcc sites of lattice constant a filling [0, L) (whole cells that fit). */
static void sys_lattice(hxt_sys *s, const double len[3])
{
    const double a = cbrt(4.0 / 0.8442);
    const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
    int nc[3];
    for (int k = 0; k < 3; k++)
        nc[k] = (int) floor(len[k] / a);
    s->n = 4 * nc[0] * nc[1] * nc[2];
    s->x = malloc((size_t) s->n * 3 * sizeof(double));
    for (int k = 0; k < 3; k++) {
        s->box_lo[k] = 0.0;
        s->box_len[k] = len[k];
    }
    int i = 0;
    for (int z = 0; z < nc[2]; z++)
        for (int y = 0; y < nc[1]; y++)
            for (int x = 0; x < nc[0]; x++)
                for (int b = 0; b < 4; b++) {
                    /* a small offset keeps sites off the box origin */
                    s->x[3 * i] = (x + basis[b][0]) * a + 0.0123;
                    s->x[3 * i + 1] = (y + basis[b][1]) * a + 0.0234;
                    s->x[3 * i + 2] = (z + basis[b][2]) * a + 0.0345;
                    i++;
                }
}

/* Float values, and no atom near a pulse limit of any rank (the same on
 * every rank: the system is global). Limits and distances are heights
 * (hx_decomp_height): coordinates in an orthorhombic box. */
static void sys_prepare(hxt_sys *s, const hx_decomp *d)
{
    int keep = 0;
    for (int i = 0; i < s->n; i++) {
        int near = 0;
        for (int k = 0; k < 3; k++)
            s->x[3 * i + k] = (double) (float) s->x[3 * i + k];
        for (int k = 0; k < 3; k++) {
            double v = hx_decomp_height(d, k, s->x + 3 * i);
            double L = d->height[k], lo = d->face_lo[k];
            for (int c = 0; c < d->grid[k] && d->grid[k] > 1; c++)
                for (int up = 0; up <= full; up++) {
                    /* down: a lower bound plus RH; up: an upper bound less RH */
                    double t = up ? fmod(L * (c + 1) / d->grid[k] - RH + L, L)
                                  : fmod(L * c / d->grid[k] + RH, L);
                    double dist = fabs(v - lo - t);
                    if (dist > L / 2)
                        dist = L - dist;
                    near |= dist < MARGIN;
                }
        }
        if (!near) {
            memmove(s->x + 3 * keep, s->x + 3 * i, 3 * sizeof(double));
            keep++;
        }
    }
    s->n = keep;
}

static int same_pulse(const hx_pulse *a, const hx_pulse *b)
{
    return a->dim == b->dim && a->index == b->index && a->dir == b->dir &&
           a->send_rank == b->send_rank && a->recv_rank == b->recv_rank && a->nsend == b->nsend &&
           a->nsend_home == b->nsend_home && a->nrecv == b->nrecv &&
           a->recv_offset == b->recv_offset && a->peer_offset == b->peer_offset &&
           hxt_same_d(a->shift[0], b->shift[0]) && hxt_same_d(a->shift[1], b->shift[1]) &&
           hxt_same_d(a->shift[2], b->shift[2]) && a->deps == b->deps &&
           a->map_offset == b->map_offset && a->share == b->share;
}

/* Structure, maps and zones of the two plans. */
static void compare_plans(const hx_plan *hp, const hx_plan *dp, const char *label)
{
    HXT_CHECK(hx_plan_on_device(dp) && !hx_plan_on_device(hp) && hx_plan_full_shell(hp) == full &&
                  hx_plan_full_shell(dp) == full,
              "%s: plan kinds", label);
    HXT_CHECK(hx_plan_nhome(hp) == hx_plan_nhome(dp) && hx_plan_ntotal(hp) == hx_plan_ntotal(dp) &&
                  hx_plan_npulses(hp) == hx_plan_npulses(dp) &&
                  hx_plan_max_ntotal(hp) == hx_plan_max_ntotal(dp),
              "%s: sizes: host %d home %d total %d pulses, device %d %d %d", label,
              hx_plan_nhome(hp), hx_plan_ntotal(hp), hx_plan_npulses(hp), hx_plan_nhome(dp),
              hx_plan_ntotal(dp), hx_plan_npulses(dp));
    if (hx_plan_ntotal(hp) != hx_plan_ntotal(dp) || hx_plan_npulses(hp) != hx_plan_npulses(dp))
        return;
    int np = hx_plan_npulses(hp), nt = hx_plan_ntotal(hp), total = 0;
    for (int p = 0; p < np; p++) {
        const hx_pulse *a = hx_plan_pulse(hp, p), *b = hx_plan_pulse(dp, p);
        HXT_CHECK(same_pulse(a, b),
                  "%s: pulse %d differs: host send %d (home %d) recv %d at %d peer %d deps %llx "
                  "share %llx; device send %d (home %d) recv %d at %d peer %d deps %llx share "
                  "%llx",
                  label, p, a->nsend, a->nsend_home, a->nrecv, a->recv_offset, a->peer_offset,
                  (unsigned long long) a->deps, (unsigned long long) a->share, b->nsend,
                  b->nsend_home, b->nrecv, b->recv_offset, b->peer_offset,
                  (unsigned long long) b->deps, (unsigned long long) b->share);
        HXT_CHECK(b->map == NULL, "%s: a device plan has a host map", label);
        for (int q = 0; q < p; q++)
            HXT_CHECK(hx_plan_from_pulse(hp, p, q) == hx_plan_from_pulse(dp, p, q),
                      "%s: pulse %d takes %d atoms from pulse %d on the host, %d on the device",
                      label, p, hx_plan_from_pulse(hp, p, q), q, hx_plan_from_pulse(dp, p, q));
        total += a->nsend;
    }
    int *maps = malloc(((size_t) total + 1) * sizeof(int));
    uint8_t *zones = malloc((size_t) nt * 4 + 4);
    int ok = cudaMemcpy(maps, hx_plan_device_maps(dp), (size_t) total * sizeof(int),
                        cudaMemcpyDeviceToHost) == cudaSuccess &&
             cudaMemcpy(zones, hx_plan_device_zones(dp), (size_t) nt * 4, cudaMemcpyDeviceToHost) ==
                 cudaSuccess;
    HXT_CHECK(ok, "%s: downloading the device plan", label);
    for (int p = 0; ok && p < np; p++) {
        const hx_pulse *a = hx_plan_pulse(hp, p);
        int bad = 0;
        for (int i = 0; i < a->nsend; i++)
            bad += maps[a->map_offset + i] != a->map[i];
        HXT_CHECK(bad == 0, "%s: pulse %d: %d of %d map entries differ", label, p, bad, a->nsend);
    }
    if (ok)
        HXT_CHECK(memcmp(zones, hx_plan_zones(hp), (size_t) nt * 4) == 0, "%s: zones differ",
                  label);
    free(maps);
    free(zones);
}

/* Forward, then reverse on t: coordinates of all atoms into xo, home
 * forces into fo. A full-shell plan's reverse is refused, and fo is then
 * fall's home part. */
static int run_transport(hx_transport *t, const hx_plan *plan, const double *xhome,
                         const double *fall, double *xo, double *fo)
{
    int nh = hx_plan_nhome(plan), nt = hx_plan_ntotal(plan);
    int ok = HXT_OK(hx_transport_set_plan(t, plan)) &&
             HXT_OK(hx_transport_write(t, HX_COORDS, 0, nh, xhome)) &&
             HXT_OK(hx_transport_forward(t)) && HXT_OK(hx_transport_sync(t)) &&
             HXT_OK(hx_transport_read(t, HX_COORDS, 0, nt, xo)) &&
             HXT_OK(hx_transport_write(t, HX_FORCES, 0, nt, fall));
    if (ok && full)
        ok = HXT_FAILS(hx_transport_reverse(t), HX_ERR_STATE, "newton off");
    else if (ok)
        ok = HXT_OK(hx_transport_reverse(t));
    return ok && HXT_OK(hx_transport_sync(t)) && HXT_OK(hx_transport_read(t, HX_FORCES, 0, nh, fo));
}

typedef struct tset {
    hx_transport *t[MAXT];
    char label[MAXT][48];
    int n;
} tset;

/* Every device transport built (peer ones with the put path too). */
static void make_transports(hx_comm *comm, tset *ts)
{
    hxt_tvariant v[MAXT];
    const int nv = hxt_transport_variants(HX_CAP_DEVICE, 0, 1, v, MAXT - 1);
    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.dtype = HX_FLOAT;
    memset(ts, 0, sizeof *ts);
    for (int k = 0; k < nv; k++) {
        hx_transport *t = hxt_transport_try(comm, &o, &v[k]);
        if (!t)
            continue;
        ts->t[ts->n] = t;
        snprintf(ts->label[ts->n], sizeof ts->label[0], "%s", v[k].label);
        ts->n++;
    }
}

/* The plan again with its first pulse counted ahead, on the home atoms
 * in reverse order (hx4, n atoms of xs floats, on the device at dx): against
 * the host plan as the plain device plan dp is, and its coordinates bitwise
 * dp's. */
static void check_ahead(hx_comm *comm, hx_rebuild *rb, const hx_plan *hp, const hx_plan *dp,
                        const float *hx4, const float *dx, int n, int xs, const char *label)
{
    char lab[128];
    snprintf(lab, sizeof lab, "%s, counted ahead", label);
    float *rev = hxt_xmalloc(((size_t) n + 1) * xs * sizeof(float)), *drev = NULL;
    for (int i = 0; i < n; i++)
        memcpy(rev + (size_t) xs * i, hx4 + (size_t) xs * (n - 1 - i), xs * sizeof(float));
    int ok = cudaMalloc((void **) &drev, ((size_t) n + 1) * xs * sizeof(float)) == cudaSuccess &&
             cudaMemcpy(drev, rev, (size_t) n * xs * sizeof(float), cudaMemcpyHostToDevice) ==
                 cudaSuccess;
    HXT_CHECK(ok, "%s: upload", lab);
    hx_plan *ap = NULL;
    ok = hxt_agree(comm, ok) && HXT_OK(hx_plan_count_device(rb, n, drev, xs));
    ok = hxt_agree(comm, ok) && HXT_OK(plan_device(&ap, rb, n, dx, xs));
    if (hxt_agree(comm, ok)) {
        compare_plans(hp, ap, lab);
        int nt = hx_plan_ntotal(dp);
        float *a = hxt_xmalloc(((size_t) nt + 1) * 3 * sizeof(float));
        float *b = hxt_xmalloc(((size_t) nt + 1) * 3 * sizeof(float));
        ok = nt == hx_plan_ntotal(ap) &&
             cudaMemcpy(a, hx_plan_device_coords(ap), (size_t) nt * 3 * sizeof(float),
                        cudaMemcpyDeviceToHost) == cudaSuccess &&
             cudaMemcpy(b, hx_plan_device_coords(dp), (size_t) nt * 3 * sizeof(float),
                        cudaMemcpyDeviceToHost) == cudaSuccess;
        HXT_CHECK(ok && memcmp(a, b, (size_t) nt * 3 * sizeof(float)) == 0,
                  "%s: coordinates differ from the plain device plan's", lab);
        free(a);
        free(b);
    }
    hx_plan_destroy(ap);
    cudaFree(drev);
    free(rev);
}

/* One case: plans on the host and the device, compared; every transport
 * on the device plan against the cpu transport on the host plan. */
static void run_case(hx_comm *comm, const int grid[3], const double *tilt_frac, int lattice,
                     int xstride, uint64_t seed, hx_transport *tf, tset *ts, hx_plan **keep_h,
                     hx_plan **keep_d)
{
    int nr = hx_comm_size(comm), rank = hx_comm_rank(comm);
    double lo[3] = {0, 0, 0}, len[3], tilt[3] = {0, 0, 0};
    char gs[32], label[96];
    for (int k = 0; k < 3; k++)
        len[k] = box_len_for(grid[k]) * (tilt_frac ? 1.5 : 1.0);
    if (tilt_frac) {
        tilt[0] = tilt_frac[0] * len[0];
        tilt[1] = tilt_frac[1] * len[0];
        tilt[2] = tilt_frac[2] * len[1];
    }
    hx_decomp d;
    if (!hxt_agree(comm, HXT_OK(hx_decomp_init_tilted(&d, lo, len, tilt, RH, grid, nr, rank))))
        return;
    hxt_sys s;
    if (lattice)
        sys_lattice(&s, len);
    else
        hxt_sys_random(&s, (int) (0.8442 * len[0] * len[1] * len[2]), lo, len, seed);
    hxt_sys_tilt(&s, &d);
    sys_prepare(&s, &d);
    hxt_local l;
    hxt_local_take(&l, &s, &d);
    snprintf(label, sizeof label, "%s %s%s%s, %d pulses, stride %d", hxt_grid_str(grid, gs),
             lattice ? "lattice" : "random", d.triclinic ? " triclinic" : "", full ? " full" : "",
             d.npulse[0] + d.npulse[1] + d.npulse[2], xstride);

    /* The transport the rebuild moves its bytes with: the first one. */
    hx_rebuild *rb = NULL;
    hx_plan *hp = NULL, *dp = NULL;
    float *dx = NULL, *hx4 = malloc(((size_t) l.n + 1) * 4 * sizeof(float));
    for (int i = 0; i < l.n; i++)
        for (int k = 0; k < xstride; k++) /* a fourth float travels unread */
            hx4[xstride * i + k] = k < 3 ? (float) l.x[3 * i + k] : -1.0f;
    int ok = cudaMalloc((void **) &dx, ((size_t) l.n + 1) * 4 * sizeof(float)) == cudaSuccess &&
             cudaMemcpy(dx, hx4, (size_t) l.n * xstride * sizeof(float), cudaMemcpyHostToDevice) ==
                 cudaSuccess;
    HXT_CHECK(ok, "%s: upload", label);
    ok = hxt_agree(comm, ok) && HXT_OK(plan_host(&hp, comm, &d, l.n, l.x));
    ok = hxt_agree(comm, ok) && HXT_OK(hx_rebuild_create(&rb, ts->t[0], &d));
    ok = hxt_agree(comm, ok) && HXT_OK(plan_device(&dp, rb, l.n, dx, xstride));
    if (hxt_agree(comm, ok))
        check_ahead(comm, rb, hp, dp, hx4, dx, l.n, xstride, label);
    if (hxt_agree(comm, ok)) {
        compare_plans(hp, dp, label);
        int nt = hx_plan_ntotal(hp), nh = hx_plan_nhome(hp);
        double *xr = malloc(((size_t) nt + 1) * 3 * sizeof(double));
        double *fr = malloc(((size_t) nh + 1) * 3 * sizeof(double));
        double *xo = malloc(((size_t) nt + 1) * 3 * sizeof(double));
        double *fo = malloc(((size_t) nh + 1) * 3 * sizeof(double));
        double *fall = malloc(((size_t) nt + 1) * 3 * sizeof(double));
        float *dxp = malloc(((size_t) nt + 1) * 3 * sizeof(float));
        hxt_rng rng = {seed * 77 + 5};
        for (int i = 0; i < 3 * nt; i++)
            fall[i] = (float) (2.0 * hxt_uniform(&rng) - 1.0);
        /* The reference: the float cpu transport on the host plan. */
        ok = run_transport(tf, hp, l.x, fall, xr, fr);
        /* The device plan's own coordinates. */
        if (ok && cudaMemcpy(dxp, hx_plan_device_coords(dp), (size_t) nt * 3 * sizeof(float),
                             cudaMemcpyDeviceToHost) == cudaSuccess) {
            int bad = 0;
            for (int i = 0; i < 3 * nt; i++)
                bad += !hxt_same_f(dxp[i], (float) xr[i]);
            HXT_CHECK(bad == 0, "%s: %d plan coordinates differ from the cpu transport's", label,
                      bad);
        }
        for (int k = 0; ok && k < ts->n; k++) {
            if (!hxt_agree(comm, run_transport(ts->t[k], dp, l.x, fall, xo, fo)))
                continue;
            int bad = 0, badf = 0;
            for (int i = 0; i < 3 * nt; i++)
                bad += !hxt_same_f((float) xo[i], (float) xr[i]);
            for (int i = 0; i < 3 * nh; i++)
                badf += fabs(fo[i] - fr[i]) > 1e-6 * fmax(fabs(fr[i]), 1.0);
            HXT_CHECK(bad == 0 && badf == 0,
                      "%s: %s on the device plan: %d coordinates, %d forces differ", label,
                      ts->label[k], bad, badf);
        }
        free(xr);
        free(fr);
        free(xo);
        free(fo);
        free(fall);
        free(dxp);
        if (rank == 0)
            printf("  %-44s %6d atoms, rank 0: %d home %d halo\n", label, s.n, nh, nt - nh);
    }
    /* Transports keep the last plan they adopted: these two live until the
     * next case has replaced them. */
    hx_plan_destroy(*keep_h);
    hx_plan_destroy(*keep_d);
    *keep_h = hp;
    *keep_d = dp;
    hx_rebuild_destroy(rb);
    cudaFree(dx);
    free(hx4);
    hxt_local_free(&l);
    hxt_sys_free(&s);
}

/* The decomposition of a grid's test box over comm (agreed). */
static int decomp_for(hx_comm *comm, const int grid[3], hx_decomp *d)
{
    double lo[3] = {0, 0, 0}, len[3];
    for (int k = 0; k < 3; k++)
        len[k] = box_len_for(grid[k]);
    return hxt_agree(
        comm, HXT_OK(hx_decomp_init(d, lo, len, RH, grid, hx_comm_size(comm), hx_comm_rank(comm))));
}

/* An atom outside its domain: refused with HX_ERR_COORD_OUTSIDE on every
 * rank, naming it. */
static void run_outside(hx_comm *comm, const int grid[3], hx_transport *t)
{
    int nr = hx_comm_size(comm), rank = hx_comm_rank(comm);
    hx_decomp d;
    if (!decomp_for(comm, grid, &d))
        return;
    float x[8] = {0};
    for (int k = 0; k < 3; k++) {
        x[k] = (float) (0.5 * (d.dom_lo[k] + d.dom_hi[k]));
        x[4 + k] = x[k];
    }
    if (rank == nr - 1) /* the last rank's second atom sits in the next domain */
        for (int k = 0; k < 3; k++)
            if (d.grid[k] > 1)
                x[4 + k] = (float) (d.dom_hi[k] >= d.box_lo[k] + d.box_len[k] ? d.box_lo[k] + 0.1
                                                                              : d.dom_hi[k] + 0.1);
    float *dx = NULL;
    hx_rebuild *rb = NULL;
    hx_plan *dp = NULL;
    int ok = cudaMalloc((void **) &dx, sizeof x) == cudaSuccess &&
             cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice) == cudaSuccess;
    if (hxt_agree(comm, ok) && hxt_agree(comm, HXT_OK(hx_rebuild_create(&rb, t, &d)))) {
        HXT_FAILS(hx_plan_create_device(&dp, rb, 2, dx, 4), HX_ERR_COORD_OUTSIDE, "home atom 1");
        HXT_CHECK(dp == NULL, "a refused plan was returned");
        /* Found by the count ahead, the atom's position still in the
         * message though the atoms were given anew. */
        ok = hxt_agree(comm, HXT_OK(hx_plan_count_device(rb, 2, dx, 4)));
        if (ok) {
            HXT_FAILS(hx_plan_create_device(&dp, rb, 2, dx, 4), HX_ERR_COORD_OUTSIDE,
                      "home atom 1");
            HXT_CHECK(dp == NULL, "a refused plan was returned (counted ahead)");
        }
    }
    hx_plan_destroy(dp);
    hx_rebuild_destroy(rb);
    cudaFree(dx);
}

/* Misuse of the count ahead: a plan of another number of atoms is refused
 * on every rank; one of other atoms (each rank's two atoms counted in its
 * first pulse's slab, then given above it) is HX_ERR_INVALID on every rank
 * at the next wait of the context: the second pulse's, or the census. */
static void run_ahead_misuse(hx_comm *comm, const int grid[3], hx_transport *t)
{
    int nr = hx_comm_size(comm), rank = hx_comm_rank(comm);
    hx_decomp d;
    if (!decomp_for(comm, grid, &d))
        return;
    int dim = HX_Z;
    while (dim > HX_X && d.npulse[dim] == 0)
        dim--;
    /* Two atoms inside the first pulse's slab (x), the same two just
     * above it (y): both inside the domain, which is wider than RH. */
    float x[8] = {0}, y[8] = {0};
    for (int a = 0; a < 2; a++)
        for (int k = 0; k < 3; k++) {
            double c = 0.5 * (d.dom_lo[k] + d.dom_hi[k]) + 0.01 * a;
            x[4 * a + k] = (float) (k == dim ? d.dom_lo[dim] + 0.5 * RH + 0.01 * a : c);
            y[4 * a + k] = (float) (k == dim ? d.dom_lo[dim] + RH + 0.2 + 0.01 * a : c);
        }
    int64_t ids[2] = {2 * rank, 2 * rank + 1};
    float *dx = NULL, *dy = NULL;
    int64_t *did = NULL;
    hx_rebuild *rb = NULL;
    hx_plan *dp = NULL;
    int ok = cudaMalloc((void **) &dx, sizeof x) == cudaSuccess &&
             cudaMalloc((void **) &dy, sizeof y) == cudaSuccess &&
             cudaMalloc((void **) &did, sizeof ids) == cudaSuccess &&
             cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemcpy(dy, y, sizeof y, cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemcpy(did, ids, sizeof ids, cudaMemcpyHostToDevice) == cudaSuccess;
    HXT_CHECK(ok, "count ahead misuse: set-up");
    if (hxt_agree(comm, ok) && hxt_agree(comm, HXT_OK(hx_rebuild_create(&rb, t, &d)))) {
        ok = hxt_agree(comm, HXT_OK(hx_plan_count_device(rb, 2, dx, 4)));
        if (ok) {
            HXT_FAILS(hx_plan_create_device(&dp, rb, 1, dx, 4), HX_ERR_INVALID,
                      "counted 2 home atoms");
            HXT_CHECK(dp == NULL, "a refused plan was returned (count ahead misuse)");
        }
        /* The refusal used the count up: a plan now is a plain one. */
        ok = hxt_agree(comm, ok) && HXT_OK(hx_plan_create_device(&dp, rb, 2, dx, 4));
        HXT_CHECK(ok && hx_plan_pulse(dp, 0)->nsend == 2,
                  "count ahead misuse: the plain plan after a refusal");
        hx_plan_destroy(dp);
        dp = NULL;
        /* Other atoms: only where the domain is wider than the slab can
         * an atom of it be outside (the same on every rank). */
        const int other = d.dom_hi[dim] - d.dom_lo[dim] > RH + 0.3;
        ok = hxt_agree(comm, ok) && other && HXT_OK(hx_plan_count_device(rb, 2, dx, 4));
        int64_t natoms = 0;
        uint64_t sum = 0;
        if (hxt_agree(comm, ok)) {
            char msg[512] = "";
            hx_status st = hx_plan_create_device(&dp, rb, 2, dy, 4);
            if (st == HX_OK) { /* one pulse: no wait of the plan after the first count */
                hx_plan_destroy(dp);
                st = hx_rebuild_census(rb, 2, did, &natoms, &sum);
            }
            if (st != HX_OK)
                snprintf(msg, sizeof msg, "%s", hx_last_error());
            HXT_CHECK(st == HX_ERR_INVALID && strstr(msg, "not the counted atoms"),
                      "count ahead misuse: other atoms gave %s (%s)", hx_status_string(st), msg);
            /* Reported once: the context is usable again. */
            HXT_CHECK(HXT_OK(hx_rebuild_census(rb, 2, did, &natoms, &sum)) && natoms == 2 * nr,
                      "count ahead misuse: the census after the report");
        } else if (rank == 0 && !other) {
            printf("  count ahead of other atoms: not run on this grid (domains thinner than the "
                   "halo)\n");
        }
    }
    hx_rebuild_destroy(rb);
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(did);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_dplan");
    for (int i = 1; i < argc; i++)
        full |= strcmp(argv[i], "--full") == 0;
    int grids[8][3], ngrids = 0, ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (!hxt_agree(comm, e == cudaSuccess && ndev > 0))
        return hxt_skip(comm, "no CUDA device visible here (the device plan needs one)");
    ngrids = grids_for(hx_comm_size(comm), grids);
    if (ngrids == 0)
        return hxt_skip(comm, "no test grid for this rank count (use 2, 3, 4 or 8 ranks)");
    hx_transport *tf = hxt_cpu_transport(comm, HX_FLOAT);
    tset ts;
    make_transports(comm, &ts);
    if (!hxt_agree(comm, tf != NULL && ts.n > 0)) {
        for (int k = 0; k < ts.n; k++)
            hx_transport_destroy(ts.t[k]);
        hx_transport_destroy(tf);
        return hxt_skip(comm, "no device transport can run here");
    }
    hx_plan *keep_h = NULL, *keep_d = NULL;
    uint64_t seed = 2026;
    for (int t = -1; t < HXT_GPU_NTILTS; t++)
        for (int g = 0; g < ngrids; g++)
            for (int lattice = 0; lattice < 2; lattice++)
                run_case(comm, grids[g], t < 0 ? NULL : hxt_gpu_tilts[t], lattice, lattice ? 3 : 4,
                         seed++, tf, &ts, &keep_h, &keep_d);
    if (!full) {
        run_outside(comm, grids[0], ts.t[0]);
        run_ahead_misuse(comm, grids[0], ts.t[0]);
    }
    for (int k = 0; k < ts.n; k++)
        hx_transport_destroy(ts.t[k]);
    hx_transport_destroy(tf);
    hx_plan_destroy(keep_h);
    hx_plan_destroy(keep_d);
    return hxt_finish(comm);
}
