/*
 * velocity_lammps.c - `velocity all create T SEED ...` as LAMMPS computes it,
 * so that a deck starts from LAMMPS's velocities and gives its thermo rows.
 *
 * The generator is LAMMPS's RanPark: Park-Miller (park_miller.h) with
 *   uniform()  = the next value, in (0, 1);
 *   gaussian() = the polar Box-Muller method on pairs v1, v2 = 2 uniform() - 1
 *                (drawn again until 0 < v1^2 + v2^2 < 1), fac =
 *                sqrt(-2 log(rsq) / rsq); it returns v2 fac and keeps v1 fac
 *                for the next call;
 *   reset(seed, x) = a new state from the Jenkins one-at-a-time hash of the
 *                bytes of the int seed and then of the three doubles of x
 *                (bytes as signed chars, as LAMMPS on x86-64 reads them),
 *                state = hash & 0x7ffffff (27 bits, as LAMMPS's mask), 1 if
 *                that is 0, then 5 uniform() discarded.
 * A raw velocity is (uniform() - 1/2) per component for `dist uniform`, or
 * gaussian() per component for `dist gaussian`, times 1 / sqrt(mass) of
 * the atom's type (with several types: the type of its id and lattice
 * site, hxi_md_type_of, in a sweep; sys->type for loop local).
 *
 * loop all:   one generator seeded with SEED over atom ids 1..N, three
 *             components per id; each rank keeps those of its own atoms.
 *             halox-md's ids are those of a one-process LAMMPS create_atoms
 *             on any rank count, so the velocities are the same for every
 *             rank count and equal LAMMPS's on one process (LAMMPS numbers
 *             atoms by process, so its own loop all changes with P).
 * loop local: a generator per rank seeded with SEED + rank, 100 values
 *             discarded, then this rank's atoms in their order: LAMMPS's
 *             on one process; on more it depends on the decomposition, in
 *             LAMMPS as here.
 * loop geom:  per atom, reset(SEED, x): the same for every rank count and
 *             every decomposition, in LAMMPS as here.
 * Then, as LAMMPS, with each atom's mass m: mom yes subtracts the
 * centre-of-mass velocity (sum m v / sum m); rot yes subtracts omega x (x - xcm) with omega =
 * I^-1 L about the centre of mass (the lattice has no periodic images yet,
 * so x is unwrapped); T is measured with 3N - 3 degrees of freedom,
 * t = sum m v.v * (1 / (3N - 3)), and every velocity is scaled by
 * sqrt(T / t). `sum yes` adds the earlier velocities, which are zero:
 * halox-md reads one velocity command.
 *
 * The sums: for loop all and loop geom every rank sweeps all N atoms in id
 * order (an atom's raw velocity and lattice site need no other rank), as a
 * one-process LAMMPS run sums over its atoms, which are in id order there.
 * The velocities are then bitwise the same on every rank count and bitwise
 * LAMMPS's on one process. The raw velocities of all N atoms are drawn
 * once into memory (24 bytes per atom, 25 with several types, freed at
 * the end), by all the host's threads where that gives the same numbers:
 * loop geom draws each atom from its own reset, and loop all with dist
 * uniform takes exactly 3 values per atom, so a thread starts its block of
 * ids from the seed advanced by 3 x the first id (Park-Miller jumps ahead
 * by a power of the multiplier); loop all with dist gaussian rejects a
 * varying number of values and is drawn by one thread. The sums then run
 * over the stored values, in id order, on one thread, and each rank's own
 * atoms then take their velocities from them on all threads. loop local
 * sums this rank's atoms and adds over ranks, as LAMMPS does.
 */
#include "md/velocity_lammps.h"

#include "core/hxi.h"
#include "md/park_miller.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ran_park {
    int state;
    int save;      /* a second gaussian is kept */
    double second; /* the kept gaussian */
} ran_park;

static void ran_seed(ran_park *r, int seed)
{
    r->state = seed;
    r->save = 0;
    r->second = 0.0;
}

static double ran_uniform(ran_park *r)
{
    return hxi_park_miller(&r->state);
}

static double ran_gaussian(ran_park *r)
{
    double v1, v2, rsq, fac;
    if (r->save) {
        r->save = 0;
        return r->second;
    }
    do {
        v1 = 2.0 * ran_uniform(r) - 1.0;
        v2 = 2.0 * ran_uniform(r) - 1.0;
        rsq = v1 * v1 + v2 * v2;
    } while (!(rsq < 1.0 && rsq != 0.0));
    fac = sqrt(-2.0 * log(rsq) / rsq);
    r->second = v1 * fac;
    r->save = 1;
    return v2 * fac;
}

static void ran_reset_geom(ran_park *r, int seed, const double x[3])
{
    ran_seed(r, hxi_park_miller_reset(seed, x));
}

static void ran_raw(ran_park *r, int gaussian, double factor, double *v)
{
    for (int k = 0; k < 3; k++)
        v[k] = (gaussian ? ran_gaussian(r) : ran_uniform(r) - 0.5) * factor;
}

/* omega = I^-1 L by the adjugate over the determinant, as LAMMPS's
 * Group::omega for a non-singular I (its EPSILON, 1e-6). An fcc lattice
 * of at least one cell is never singular; say so rather than guess. */
static hx_status solve_omega(const double L[3], double I[3][3], double w[3])
{
    double inv[3][3];
    double det = I[0][0] * I[1][1] * I[2][2] + I[0][1] * I[1][2] * I[2][0] +
                 I[0][2] * I[1][0] * I[2][1] - I[0][0] * I[1][2] * I[2][1] -
                 I[0][1] * I[1][0] * I[2][2] - I[2][0] * I[1][1] * I[0][2];
    if (!(det > 1.0e-6))
        return hxi_error(HX_ERR_INVALID,
                         "velocity ... rot yes: the inertia tensor is singular "
                         "(determinant %g)",
                         det);
    inv[0][0] = I[1][1] * I[2][2] - I[1][2] * I[2][1];
    inv[0][1] = -(I[0][1] * I[2][2] - I[0][2] * I[2][1]);
    inv[0][2] = I[0][1] * I[1][2] - I[0][2] * I[1][1];
    inv[1][0] = -(I[1][0] * I[2][2] - I[1][2] * I[2][0]);
    inv[1][1] = I[0][0] * I[2][2] - I[0][2] * I[2][0];
    inv[1][2] = -(I[0][0] * I[1][2] - I[0][2] * I[1][0]);
    inv[2][0] = I[1][0] * I[2][1] - I[1][1] * I[2][0];
    inv[2][1] = -(I[0][0] * I[2][1] - I[0][1] * I[2][0]);
    inv[2][2] = I[0][0] * I[1][1] - I[0][1] * I[1][0];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            inv[a][b] /= det;
    for (int a = 0; a < 3; a++)
        w[a] = inv[a][0] * L[0] + inv[a][1] * L[1] + inv[a][2] * L[2];
    return HX_OK;
}

/* The atoms the sums run over, one at a time: every atom in id order on
 * every rank (loop all, loop geom), or this rank's atoms (loop local). */
typedef struct vsource {
    const hx_md_config *cfg;
    hx_md_system *sys;
    int sweep;          /* 1: all ids here, no sum over ranks needed */
    int64_t next;       /* sweep: next id; local: next index */
    double *raw;        /* sweep: the raw velocities of ids 0 .. N-1, 3 each */
    unsigned char *tix; /* sweep with several types: each id's type - 1 */
    double a;           /* the lattice constant (hx_md_lattice_constant) */
    int want_x;         /* sweep: positions are needed (rot yes) */
} vsource;

/* Raw velocities of ids [first, last) into raw (see the header comment). */
static void draw_block(const hx_md_config *cfg, double a, double *raw, unsigned char *tix,
                       int64_t first, int64_t last)
{
    double factor = 1.0 / sqrt(cfg->mass);
    const int seed = (int) cfg->seed;
    ran_park r;
    double x[3];
    if (cfg->velocity_loop == HX_MD_LOOP_ALL)
        ran_seed(&r, hxi_park_miller_jump(seed, 3 * first));
    for (int64_t id = first; id < last; id++) {
        if (cfg->velocity_loop == HX_MD_LOOP_GEOM || tix)
            hx_md_site_at(cfg, a, id, x);
        if (cfg->velocity_loop == HX_MD_LOOP_GEOM)
            ran_reset_geom(&r, seed, x);
        if (tix) { /* LAMMPS: 1 / sqrt(mass[type[m]]) */
            const int t = hxi_md_type_of(cfg, id, x);
            tix[id] = (unsigned char) (t - 1);
            factor = 1.0 / sqrt(hxi_md_mass_of(cfg, t));
        }
        ran_raw(&r, cfg->velocity_gaussian, factor, raw + 3 * (size_t) id);
    }
}

static hx_status draw_all(vsource *s)
{
    const hx_md_config *cfg = s->cfg;
    const int64_t n = s->sys->natoms;
    HXI_CHECK(hxi_alloc((void **) &s->raw, 3 * sizeof(double) * (size_t) (n > 0 ? n : 1),
                        "raw velocities"));
    if (cfg->types.ntypes > 1)
        HXI_CHECK(hxi_alloc((void **) &s->tix, (size_t) (n > 0 ? n : 1), "atom types"));
    if (cfg->velocity_loop == HX_MD_LOOP_ALL && cfg->velocity_gaussian) {
        draw_block(cfg, s->a, s->raw, s->tix, 0, n); /* rejections: one stream, in order */
        return HX_OK;
    }
    const int64_t block = 16384, nblocks = (n + block - 1) / block;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16)
#endif
    for (int64_t b = 0; b < nblocks; b++)
        draw_block(cfg, s->a, s->raw, s->tix, b * block, b + 1 < nblocks ? (b + 1) * block : n);
    return HX_OK;
}

static hx_status source_init(vsource *s, hx_md_system *sys, const hx_md_config *cfg)
{
    memset(s, 0, sizeof *s);
    s->cfg = cfg;
    s->sys = sys;
    s->a = hx_md_lattice_constant(cfg);
    s->sweep = cfg->velocity_loop != HX_MD_LOOP_LOCAL;
    s->want_x = cfg->velocity_rot;
    return s->sweep ? draw_all(s) : HX_OK;
}

static void source_rewind(vsource *s)
{
    s->next = 0;
}

/* The next atom: its position, its raw velocity (times 1/sqrt(mass)), its
 * mass and its index here (loop local; -1 in a sweep, whose sums need no
 * owner). 0 at the end. */
static int source_next(vsource *s, double x[3], double v[3], double *m, int *local)
{
    const hx_md_config *cfg = s->cfg;
    hx_md_system *sys = s->sys;
    if (!s->sweep) {
        if (s->next >= sys->n)
            return 0;
        *local = (int) s->next++;
        *m = sys->type ? hxi_md_mass_of(cfg, sys->type[*local]) : cfg->mass;
        memcpy(x, sys->x + 3 * (size_t) *local, 3 * sizeof(double));
        memcpy(v, sys->v + 3 * (size_t) *local, 3 * sizeof(double));
        return 1;
    }
    if (s->next >= sys->natoms)
        return 0;
    if (s->want_x) /* else no caller reads x (correct() only with rot) */
        hx_md_site_at(cfg, s->a, s->next, x);
    memcpy(v, s->raw + 3 * (size_t) s->next, 3 * sizeof(double));
    *m = s->tix ? hxi_md_mass_of(cfg, s->tix[s->next] + 1) : cfg->mass;
    *local = -1;
    s->next++;
    return 1;
}

/* What mom and rot take off, as far as known. */
typedef struct vcorr {
    int mom, rot;
    double vcm[3], xcm[3], omega[3];
} vcorr;

static void correct(const vcorr *c, const double x[3], double v[3])
{
    if (c->mom)
        for (int k = 0; k < 3; k++)
            v[k] -= c->vcm[k];
    if (c->rot) {
        double dx = x[0] - c->xcm[0], dy = x[1] - c->xcm[1], dz = x[2] - c->xcm[2];
        v[0] -= c->omega[1] * dz - c->omega[2] * dy;
        v[1] -= c->omega[2] * dx - c->omega[0] * dz;
        v[2] -= c->omega[0] * dy - c->omega[1] * dx;
    }
}

/* Sums over all atoms; loop local adds the ranks' partial sums. */
static hx_status reduce(vsource *s, hx_comm *comm, double *v, int n)
{
    return s->sweep ? HX_OK : hxi_allreduce_double(comm, v, n, 0);
}

/* LAMMPS's Group::mass and Group::vcm, then Velocity::zero_momentum. */
static hx_status find_vcm(vsource *s, hx_comm *comm, vcorr *c, double *total)
{
    double x[3] = {0, 0, 0}, v[3], p[3] = {0, 0, 0}, m;
    int local;
    *total = 0.0;
    source_rewind(s);
    while (source_next(s, x, v, &m, &local)) {
        *total += m;
        for (int k = 0; k < 3; k++)
            p[k] += v[k] * m;
    }
    HXI_CHECK(reduce(s, comm, total, 1));
    HXI_CHECK(reduce(s, comm, p, 3));
    for (int k = 0; k < 3; k++)
        c->vcm[k] = p[k] / *total;
    c->mom = 1;
    return HX_OK;
}

/* LAMMPS's Group::xcm, angmom, inertia and omega, then zero_rotation. */
static hx_status find_omega(vsource *s, hx_comm *comm, vcorr *c, double total)
{
    double m, x[3] = {0, 0, 0}, v[3], cm[3] = {0, 0, 0}, L[3] = {0, 0, 0}, I[3][3] = {{0}};
    int local;
    source_rewind(s);
    while (source_next(s, x, v, &m, &local))
        for (int k = 0; k < 3; k++)
            cm[k] += x[k] * m;
    HXI_CHECK(reduce(s, comm, cm, 3));
    for (int k = 0; k < 3; k++)
        c->xcm[k] = cm[k] / total;
    source_rewind(s);
    while (source_next(s, x, v, &m, &local)) {
        double dx = x[0] - c->xcm[0], dy = x[1] - c->xcm[1], dz = x[2] - c->xcm[2];
        correct(c, x, v); /* momentum only: rot is not yet set */
        L[0] += m * (dy * v[2] - dz * v[1]);
        L[1] += m * (dz * v[0] - dx * v[2]);
        L[2] += m * (dx * v[1] - dy * v[0]);
        I[0][0] += m * (dy * dy + dz * dz);
        I[1][1] += m * (dx * dx + dz * dz);
        I[2][2] += m * (dx * dx + dy * dy);
        I[0][1] -= m * dx * dy;
        I[1][2] -= m * dy * dz;
        I[0][2] -= m * dx * dz;
    }
    I[1][0] = I[0][1];
    I[2][1] = I[1][2];
    I[2][0] = I[0][2];
    HXI_CHECK(reduce(s, comm, L, 3));
    HXI_CHECK(reduce(s, comm, &I[0][0], 9));
    HXI_CHECK(solve_omega(L, I, c->omega));
    c->rot = 1;
    return HX_OK;
}

static hx_status draw_local(hx_md_system *sys, const hx_md_config *cfg)
{
    ran_park r;
    const int seed = (int) cfg->seed;
    /* Checked against the last rank so that every rank answers alike. */
    if ((int64_t) seed + sys->decomp.nranks - 1 > INT32_MAX)
        return hxi_error(HX_ERR_INVALID,
                         "velocity ... loop local: seed %d + rank %d is past LAMMPS's int "
                         "seeds; use a smaller seed",
                         seed, sys->decomp.nranks - 1);
    ran_seed(&r, seed + sys->decomp.rank);
    for (int i = 0; i < 100; i++)
        ran_uniform(&r);
    for (int i = 0; i < sys->n; i++)
        ran_raw(&r, cfg->velocity_gaussian,
                1.0 / sqrt(sys->type ? hxi_md_mass_of(cfg, sys->type[i]) : cfg->mass),
                sys->v + 3 * (size_t) i);
    return HX_OK;
}

static hx_status check_args(const hx_md_system *sys, const hx_md_config *cfg)
{
    if (cfg->seed < 1 || cfg->seed > INT32_MAX)
        return hxi_error(HX_ERR_INVALID, "velocity seed %llu: LAMMPS's seeds are 1 to %d",
                         (unsigned long long) cfg->seed, INT32_MAX);
    if (cfg->velocity_loop != HX_MD_LOOP_ALL && cfg->velocity_loop != HX_MD_LOOP_LOCAL &&
        cfg->velocity_loop != HX_MD_LOOP_GEOM)
        return hxi_error(HX_ERR_INVALID, "velocity loop %d is unknown", (int) cfg->velocity_loop);
    if (cfg->velocity_loop == HX_MD_LOOP_ALL && sys->natoms > INT32_MAX)
        return hxi_error(HX_ERR_INVALID,
                         "velocity ... loop all: %lld atoms are more than LAMMPS's int ids "
                         "allow; use loop geom",
                         (long long) sys->natoms);
    return HX_OK;
}

hx_status hx_md_velocities_lammps(hx_md_system *sys, const hx_md_config *cfg, hx_comm *comm)
{
    vsource src;
    vcorr corr;
    double x[3] = {0, 0, 0}, v[3], total = 0.0, t = 0.0, scale, m;
    int local;
    hx_status st = check_args(sys, cfg);

    memset(&corr, 0, sizeof corr);
    memset(&src, 0, sizeof src);
    if (st == HX_OK)
        st = source_init(&src, sys, cfg);
    if (st == HX_OK && cfg->velocity_loop == HX_MD_LOOP_LOCAL)
        st = draw_local(sys, cfg);
    /* The sums below may be collective: no rank may enter them alone. */
    st = hxi_agree(comm, st);
    if (st != HX_OK)
        goto done;
    if (cfg->velocity_mom && (st = find_vcm(&src, comm, &corr, &total)) != HX_OK)
        goto done;
    if (cfg->velocity_rot) {
        if (!cfg->velocity_mom) {
            /* Group::mass alone: the momentum stays. */
            if ((st = find_vcm(&src, comm, &corr, &total)) != HX_OK)
                goto done;
            corr.mom = 0;
        }
        if ((st = find_omega(&src, comm, &corr, total)) != HX_OK)
            goto done;
    }
    source_rewind(&src);
    while (source_next(&src, x, v, &m, &local)) {
        correct(&corr, x, v);
        t += (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) * m;
    }
    if ((st = reduce(&src, comm, &t, 1)) != HX_OK)
        goto done;
    t *= 1.0 / (double) (3 * sys->natoms - 3);
    if (!(t > 0.0)) {
        st = hxi_error(HX_ERR_INVALID,
                       "velocity create: the drawn velocities have temperature %g; cannot "
                       "scale it to %g",
                       t, cfg->temperature);
        goto done;
    }
    scale = sqrt(cfg->temperature / t);
    for (int i = 0; src.sweep && i < sys->n; i++)
        if (sys->id[i] < 0 || sys->id[i] >= sys->natoms) {
            st = hxi_error(HX_ERR_STATE, "velocity create: atom %d has id %lld, outside 0..%lld", i,
                           (long long) sys->id[i], (long long) sys->natoms - 1);
            goto done;
        }
    if (src.sweep) {
        /* No sum: this rank's atoms each on their own, on all threads. */
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
        for (int i = 0; i < sys->n; i++) {
            double xi[3] = {0, 0, 0}, vi[3];
            const int64_t id = sys->id[i];
            if (corr.rot)
                hx_md_site_at(cfg, src.a, id, xi);
            memcpy(vi, src.raw + 3 * (size_t) id, sizeof vi);
            correct(&corr, xi, vi);
            for (int k = 0; k < 3; k++)
                sys->v[3 * (size_t) i + k] = vi[k] * scale;
        }
        goto done;
    }
    source_rewind(&src);
    while (source_next(&src, x, v, &m, &local)) {
        correct(&corr, x, v);
        for (int k = 0; k < 3; k++)
            sys->v[3 * (size_t) local + k] = v[k] * scale;
    }
done:
    free(src.raw);
    free(src.tix);
    return st;
}
