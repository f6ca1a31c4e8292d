/*
 * engine_cpu.c - the CPU engine: double precision on every MPI rank, the
 * `cpu` transport moving coordinates forward and forces back.
 *
 * Between rebuilds the engine works in place on the transport's arrays: x
 * and f hold the home atoms first and the halo after them, so a step needs
 * no copies (integrate home x, forward fills the halo x, forces on all
 * atoms, reverse folds the halo forces into their owners). v and id stay in
 * the system's arrays, indexed like the home atoms.
 *
 * A step, as LAMMPS's Verlet with fix nve (or fix nvt, whose chain scales
 * the velocities for half a step before the first kick and after the
 * second: thermostat.c):
 *   v += dt/2m f; x += dt v            (home atoms; skipped without nve)
 *   rebuild now?  (neigh_modify every/delay/check, as Neighbor::decide)
 *     yes: migrate (x, v, id), new plan (halo cutoff rc + skin), set it on
 *          the transport, forward, cell and neighbour lists
 *     no:  forward
 *   f = 0; local pairs; non-local pairs; reverse
 *   f += fix langevin's drag and noise (home atoms)
 *   v += dt/2m f
 * newton off (cfg.newton_off, LAMMPS's newton pair setting): the plan is
 * the full shell (hx_plan_create_full), the lists hold every pair of a
 * home atom (neighbor.c), forces are computed on home atoms alone, each
 * pair with a halo atom counting half its energy and virial on each of
 * its two ranks, and no reverse exchange follows.
 * After a migration the home atoms are in a new order; the lists, the
 * saved positions of the distance check and everything else indexed by atom
 * are rebuilt from it, and the forces are recomputed before they are used.
 */
#include "md/cpu/md_cpu.h"
#include "md/balance.h"
#include "md/cpu/thermostat.h"
#include "md/md_driver.h"
#include "md/pair/pair_styles.h"
#include "md/trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hx_md_engine {
    hx_comm *comm;
    hx_md_config cfg;
    hx_md_system *sys;
    hx_transport *t;
    hx_plan *plan;
    double *x, *f; /* the transport's arrays, ntotal * 3 */
    int nhome, ntotal;
    hxi_md_cells cells;
    hxi_md_nlist local, nonlocal;
    hxi_md_pair pair;
    hxi_md_pbc pbc;
    double cutneigh;
    double rc_max; /* the largest pair cutoff (rc with one type) */
    double *xhold; /* home positions at the last rebuild (the distance check,
                    * dangerous builds, restart files) */
    int cap_hold;
    int ago;         /* steps since the last rebuild */
    int64_t *order;  /* sort by id: (id, index) pairs, 2 per atom */
    double *scratch; /* sort by id: one array's worth of values */
    int cap_order;
    double dtf; /* dt / 2m */
    /* Several atom types: every atom's type (home, then halo), the
     * transport's field that brings the halo's, dt / 2m and m by type. */
    int32_t *types;
    int cap_types, type_field;
    double dtf_t[HX_MD_MAX_TYPES], mass_t[HX_MD_MAX_TYPES];
    double acc[2]; /* pair energy and virial of the last force pass */
    int acc_valid;
    int64_t step;
    double volume;
    double *fout;
    int cap_fout;
    hx_md_stats stats;
    /* Lists gone stale: measured at rebuild decisions only (cpu_decide). */
    double moved2;       /* the largest squared move since the last build, all ranks */
    int check_pairs;     /* this rebuild compares the old lists' pairs with the new */
    double pairs_before; /* pairs within rc that the old lists held, this rank's */
    char describe[512];
    hxi_md_nh nh; /* fix nvt's chain (cfg.nvt.on) */
};

static hx_status cpu_forward(hx_md_engine *e)
{
    double t0 = hxi_now();
    hx_status st = hx_transport_forward(e->t);
    hxi_md_stage(&e->stats, HX_MD_HALO_FWD, t0, hxi_now());
    return st;
}

/* The share of the pairs within the pair cutoff that lists may have lost
 * when they are replaced before the run ends. */
#define HXI_MD_MISSED_SHARE 1e-3

/* Pairs within the pair cutoff in this rank's lists, at the current
 * positions (halo included); with newton off a pair with a halo atom
 * counts half, as it is listed on both of its ranks, so that summed over
 * the ranks each pair counts once, whichever ranks own its atoms. */
static double cpu_pairs_within(const hx_md_engine *e)
{
    const double w = e->cfg.newton_off ? 0.5 : 1.0;
    return (double) hxi_md_nlist_within(&e->local, &e->pbc, e->rc_max, e->x) +
           w * (double) hxi_md_nlist_within(&e->nonlocal, &e->pbc, e->rc_max, e->x);
}

/* After a rebuild that followed a move over half the skin: the pairs within
 * rc that the new lists hold against those the replaced lists still held
 * at the same positions (cpu_pairs_before), each summed over the ranks:
 * the local lists are half lists and the non-local lists hold each
 * cross-rank pair on one rank (with newton off on both, each counting
 * half), so each pair counts once. The new lists are
 * complete; more pairs in them means the old lists had lost some, which
 * is counted. A few are the price of a fixed schedule (LAMMPS's own LJ
 * melt, every 20 check no, loses about 1 pair in 8,000 per rebuild, all
 * near the cutoff); more than HXI_MD_MISSED_SHARE of them means the
 * forces since the last build were wrong: the run ends here. Collective. */
static hx_status cpu_check_pairs(hx_md_engine *e)
{
    double n[2];
    double t0 = hxi_now();
    if (!e->check_pairs)
        return HX_OK;
    e->check_pairs = 0;
    n[0] = e->pairs_before;
    n[1] = cpu_pairs_within(e);
    hxi_md_stage(&e->stats, HX_MD_NEIGH, t0, hxi_now());
    HXI_CHECK(hxi_allreduce_double(e->comm, n, 2, 0));
    if (!(n[1] > n[0]))
        return HX_OK;
    e->stats.missed_pairs += (int64_t) (n[1] - n[0]);
    e->stats.missed_share = fmax(e->stats.missed_share, (n[1] - n[0]) / n[1]);
    if (!(n[1] - n[0] > HXI_MD_MISSED_SHARE * n[1]))
        return HX_OK;
    return hxi_error(HX_ERR_STATE,
                     "step %lld: %.0f of the %.0f atom pairs within the cutoff %g were missing "
                     "from the neighbour lists built at step %lld (atoms moved up to %.3g since, "
                     "the skin is %g): rebuild more often (neigh_modify every N, or check yes) "
                     "or take a smaller timestep",
                     (long long) (e->cfg.first_step + e->step + 1), n[1] - n[0], n[1], e->rc_max,
                     (long long) (e->cfg.first_step + e->step + 1 - e->ago), sqrt(e->moved2),
                     e->cfg.skin);
}

static int cpu_by_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

/* a[i] = old a[perm[i]] for 3 doubles an atom; t: room for n atoms. */
static void cpu_permute3(double *a, const int64_t *perm, int n, double *t)
{
    for (int i = 0; i < n; i++)
        memcpy(t + 3 * (size_t) i, a + 3 * (size_t) perm[i], 3 * sizeof(double));
    memcpy(a, t, (size_t) n * 3 * sizeof(double));
}

/* Home atoms in id order after every migration: the order, and with it
 * every sum over atoms, then depends only on which atoms a rank owns, so a
 * run continued from a restart file (atoms read in id order) repeats the
 * original bit for bit. Atoms that stayed keep their (sorted) order and
 * arrivals are appended: only the arrivals are sorted, then merged.
 * carry: one more array of 3 doubles an atom to permute (or NULL). */
static hx_status cpu_sort_by_id(hx_md_engine *e, double *carry)
{
    hx_md_system *s = e->sys;
    const int n = s->n;
    int k = 1, a, b, m;
    int64_t *ord;
    if (n < 2)
        return HX_OK;
    while (k < n && s->id[k - 1] < s->id[k])
        k++;
    if (k == n)
        return HX_OK;
    if (n > e->cap_order) {
        int cap = n + n / 4 + 16;
        HXI_CHECK(hxi_grow((void **) &e->order, (size_t) cap * 4 * sizeof(int64_t), "id order"));
        HXI_CHECK(hxi_grow((void **) &e->scratch, (size_t) cap * 3 * sizeof(double), "id order"));
        e->cap_order = cap;
    }
    /* (id, index) pairs: [0, k) already ascending, [k, n) sorted here,
     * then merged into the second half of e->order. */
    ord = e->order;
    for (int i = 0; i < n; i++) {
        ord[2 * i] = s->id[i];
        ord[2 * i + 1] = i;
    }
    qsort(ord + 2 * k, (size_t) (n - k), 2 * sizeof(int64_t), cpu_by_id);
    a = 0, b = k, m = 0;
    while (a < k || b < n) {
        int from = (b >= n || (a < k && ord[2 * a] < ord[2 * b])) ? a++ : b++;
        ord[2 * (size_t) n + m++] = ord[2 * from + 1];
    }
    /* Apply the permutation (new slot i takes old index perm[i]). */
    {
        const int64_t *perm = ord + 2 * (size_t) n;
        int64_t *t = (int64_t *) e->scratch;
        cpu_permute3(s->x, perm, n, e->scratch);
        cpu_permute3(s->v, perm, n, e->scratch);
        if (carry)
            cpu_permute3(carry, perm, n, e->scratch);
        for (int i = 0; i < n; i++)
            t[i] = s->id[perm[i]];
        memcpy(s->id, t, (size_t) n * sizeof(int64_t));
        if (s->type) {
            int32_t *u = (int32_t *) e->scratch;
            for (int i = 0; i < n; i++)
                u[i] = s->type[perm[i]];
            memcpy(s->type, u, (size_t) n * sizeof(int32_t));
        }
    }
    return HX_OK;
}

/* The home atoms' types into the engine's array, which holds the halo's
 * too (the transport's field, filled by the forward exchange). */
static hx_status cpu_place_types(hx_md_engine *e)
{
    if (e->ntotal > e->cap_types) {
        int cap = e->ntotal + e->ntotal / 4 + 16;
        HXI_CHECK(hxi_grow((void **) &e->types, (size_t) cap * sizeof(int32_t), "atom types"));
        e->cap_types = cap;
    }
    if (e->nhome > 0)
        memcpy(e->types, e->sys->type, (size_t) e->nhome * sizeof(int32_t));
    return HX_OK;
}

/* Migrate (positions s->x; carry, 3 doubles an atom, goes along), sort,
 * plan, transport: who owns and who sees which atom. Collective; every
 * failure is agreed on. */
static hx_status cpu_place(hx_md_engine *e, double **carry)
{
    hx_md_system *s = e->sys;
    hx_field fields[4] = {{(void **) &s->v, 3 * sizeof(double)},
                          {(void **) &s->id, sizeof(int64_t)},
                          {(void **) &s->type, sizeof(int32_t)},
                          {(void **) carry, 3 * sizeof(double)}};
    hx_plan *plan = NULL;
    hx_status st;
    int nf = 2;

    if (s->type)
        nf++;
    else
        fields[2] = fields[3];
    if (carry)
        nf++;
    hxi_md_remap_tilted(&s->decomp, s->x, s->n);
    HXI_CHECK(hx_migrate(e->comm, &s->decomp, &s->n, &s->capacity, &s->x, fields, nf));
    HXI_CHECK(hxi_agree(e->comm, cpu_sort_by_id(e, carry ? *carry : NULL)));
    HXI_CHECK(e->cfg.newton_off ? hx_plan_create_full(&plan, e->comm, &s->decomp, s->n, s->x)
                                : hx_plan_create(&plan, e->comm, &s->decomp, s->n, s->x));
    st = hx_transport_set_plan(e->t, plan);
    if (st != HX_OK) {
        hx_plan_destroy(plan);
        return st;
    }
    hx_plan_destroy(e->plan);
    e->plan = plan;
    e->x = hx_transport_coords(e->t);
    e->f = hx_transport_forces(e->t);
    e->nhome = hx_plan_nhome(plan);
    e->ntotal = hx_plan_ntotal(plan);
    if (e->nhome > 0)
        memcpy(e->x, s->x, (size_t) e->nhome * 3 * sizeof(double));
    return s->type ? hxi_agree(e->comm, cpu_place_types(e)) : HX_OK;
}

/* Migrate, plan, transport, halo, lists: everything that depends on where
 * the atoms are, from the positions in s->x (carry as cpu_place). */
static hx_status cpu_build(hx_md_engine *e, double **carry)
{
    double t0 = hxi_now(), t1;
    hx_status st;

    HXI_CHECK(cpu_place(e, carry));
    t1 = hxi_now();
    hxi_md_stage(&e->stats, HX_MD_MIGRATE, t0, t1);

    if (e->types) { /* the halo's types come with its coordinates */
        HXI_CHECK(hx_transport_fields_forward(e->t, &e->type_field, 1, 1));
        hxi_md_stage(&e->stats, HX_MD_HALO_FWD, t1, hxi_now());
    } else {
        HXI_CHECK(cpu_forward(e));
    }

    t0 = hxi_now();
    st = hxi_md_neigh_build(&e->local, &e->nonlocal, &e->cells, &e->sys->decomp, e->cutneigh, e->x,
                            hx_plan_zones(e->plan), e->cfg.newton_off, e->nhome, e->ntotal);
    if (st == HX_OK && e->nhome > e->cap_hold) {
        int cap = e->nhome + e->nhome / 4 + 16;
        st = hxi_grow((void **) &e->xhold, (size_t) cap * 3 * sizeof(double), "saved positions");
        if (st == HX_OK)
            e->cap_hold = cap;
    }
    if (st == HX_OK && e->nhome > 0)
        memcpy(e->xhold, e->x, (size_t) e->nhome * 3 * sizeof(double));
    e->stats.danger = e->cfg.neigh_check ? HX_MD_DANGER_FIRST : HX_MD_DANGER_MOVED;
    t1 = hxi_now();
    hxi_md_stage(&e->stats, HX_MD_NEIGH, t0, t1);
    /* Agreeing is waiting for the slowest rank, as LAMMPS counts it under
     * Comm: it goes with migration and planning, not the list build. */
    st = hxi_agree(e->comm, st);
    hxi_md_stage(&e->stats, HX_MD_MIGRATE, t1, hxi_now());
    HXI_CHECK(st);
    HXI_CHECK(cpu_check_pairs(e));
    e->ago = 0;
    e->stats.rebuilds++;
    return HX_OK;
}

/* A rebuild of the run: from the home atoms where they are now. */
static hx_status cpu_rebuild(hx_md_engine *e)
{
    if (e->plan && e->nhome > 0)
        memcpy(e->sys->x, e->x, (size_t) e->nhome * 3 * sizeof(double));
    return cpu_build(e, NULL);
}

/* The first build of a run continued from a restart file that holds the
 * positions of the last list build (sys->xref) and the steps since: the
 * atoms are placed and the lists built from those positions, as the run
 * that wrote the file had them, then the atoms take their current
 * positions and the neighbour schedule goes on where it was. Atoms in id
 * order, the same lists: the continued run repeats that run bit for bit. */
static hx_status cpu_build_from_ref(hx_md_engine *e)
{
    hx_md_system *s = e->sys;
    double *now = s->x;
    s->x = s->xref;
    s->xref = now;
    hx_status st = cpu_build(e, &s->xref);
    now = s->xref; /* migrated and sorted with the atoms */
    s->xref = s->x;
    s->x = now;
    HXI_CHECK(st);
    if (e->nhome > 0)
        memcpy(e->x, s->x, (size_t) e->nhome * 3 * sizeof(double));
    HXI_CHECK(cpu_forward(e));
    e->ago = (int) s->ref_ago;
    s->has_ref = 0;
    return HX_OK;
}

/* Forces on every atom of this rank, then the force halo exchange (with
 * newton off: forces on the home atoms alone, and no exchange). */
static hx_status cpu_forces(hx_md_engine *e, int energy)
{
    double t0 = hxi_now(), t1, t2;
    double *acc = energy ? e->acc : NULL;
    const int newton = !e->cfg.newton_off;
    hx_status st = HX_OK;

    e->acc[0] = e->acc[1] = 0.0;
    memset(e->f, 0, (size_t) (newton ? e->ntotal : e->nhome) * 3 * sizeof(double));
    hxi_md_force_pair(&e->pair, &e->pbc, &e->local, e->x, e->types, e->f, acc);
    t1 = hxi_now();
    hxi_md_force_pair(&e->pair, &e->pbc, &e->nonlocal, e->x, e->types, e->f, acc);
    t2 = hxi_now();
    if (newton)
        st = hx_transport_reverse(e->t);
    hxi_md_stage(&e->stats, HX_MD_LOCAL, t0, t1);
    hxi_md_stage(&e->stats, HX_MD_NONLOCAL, t1, t2);
    hxi_md_stage(&e->stats, HX_MD_HALO_REV, t2, hxi_now());
    e->acc_valid = energy && st == HX_OK;
    return st;
}

/* The largest squared move of an atom since the last list build, over all
 * ranks. Collective. */
static hx_status cpu_moved(hx_md_engine *e, double *moved2)
{
    double m = 0.0;
    for (int i = 0; i < e->nhome; i++) {
        const double dx = e->x[3 * i] - e->xhold[3 * i];
        const double dy = e->x[3 * i + 1] - e->xhold[3 * i + 1];
        const double dz = e->x[3 * i + 2] - e->xhold[3 * i + 2];
        const double r2 = dx * dx + dy * dy + dz * dz;
        m = r2 > m ? r2 : m;
    }
    HXI_CHECK(hxi_allreduce_double(e->comm, &m, 1, 1));
    *moved2 = m;
    return HX_OK;
}

/* Before a rebuild that follows a move over half the skin, while the old
 * lists are still there: the halo brought up to date and the pairs within
 * rc that the lists still hold, for cpu_check_pairs. */
static hx_status cpu_pairs_before(hx_md_engine *e)
{
    double t0;
    HXI_CHECK(cpu_forward(e));
    t0 = hxi_now();
    e->pairs_before = cpu_pairs_within(e);
    e->check_pairs = 1;
    hxi_md_stage(&e->stats, HX_MD_NEIGH, t0, hxi_now());
    return HX_OK;
}

/* LAMMPS's Neighbor::decide: every N steps once `delay` steps have passed,
 * and with check yes only when some atom moved more than half the skin
 * since the last build (on any rank). The move is measured at every
 * rebuild (and every step the schedule allows one), never between: with
 * check yes a rebuild on the first step allowed is a dangerous build, as
 * LAMMPS counts them; with check no each rebuild after a move over half the
 * skin is counted; either way such a rebuild checks the old lists' pairs. */
static hx_status cpu_decide(hx_md_engine *e, int *rebuild)
{
    const double half2 = 0.25 * e->cfg.skin * e->cfg.skin;
    const int every = e->cfg.neigh_every > 0 ? e->cfg.neigh_every : 1;
    const int first_allowed = every > e->cfg.neigh_delay ? every : e->cfg.neigh_delay;
    int far;
    *rebuild = 0;
    e->ago++;
    if (!hxi_md_rebuild_candidate(&e->cfg, e->ago))
        return HX_OK;
    HXI_CHECK(cpu_moved(e, &e->moved2));
    far = e->moved2 > half2;
    *rebuild = !e->cfg.neigh_check || far;
    if (!far)
        return HX_OK;
    if (!e->cfg.neigh_check || e->ago == first_allowed)
        e->stats.dangerous++;
    return cpu_pairs_before(e);
}

/* fix balance: at a multiple of NFREQ a rebuild is forced (LAMMPS's
 * FixBalance sets next_reneighbor) and the cuts move before it migrates
 * the atoms and plans the halo again (the pulse count may change). */
static hx_status cpu_balance(hx_md_engine *e, int *rebuild)
{
    hx_md_system *s = e->sys;
    int changed;
    if (!hxi_md_balance_due(&e->cfg.fix_balance, e->cfg.first_step + e->step + 1))
        return HX_OK;
    *rebuild = 1;
    if (e->nhome > 0)
        memcpy(s->x, e->x, (size_t) e->nhome * 3 * sizeof(double));
    hxi_md_remap_tilted(&s->decomp, s->x, s->n);
    hxi_md_balance_wrap(&s->decomp, s->x, s->n);
    return hxi_agree(e->comm, hxi_md_balance_fix(e->comm, &e->cfg.fix_balance, s, &changed));
}

static double cpu_stage_sum(const hx_md_engine *e)
{
    double s = 0;
    for (int k = 0; k < HX_MD_NSTAGES; k++)
        s += e->stats.stage[k];
    return s;
}

static void cpu_kick(hx_md_engine *e)
{
    const double dtf = e->dtf;
    double *v = e->sys->v;
    const double *f = e->f;
    if (e->types) {
        for (int i = 0; i < e->nhome; i++) {
            const double d = e->dtf_t[e->types[i] - 1];
            for (int k = 3 * i; k < 3 * i + 3; k++)
                v[k] += d * f[k];
        }
        return;
    }
    for (int i = 0; i < 3 * e->nhome; i++)
        v[i] += dtf * f[i];
}

/* sum m v.v over the home atoms. */
static double cpu_mv2(const hx_md_engine *e)
{
    const double *v = e->sys->v;
    double mv2 = 0.0;
    if (e->types) {
        for (int i = 0; i < e->nhome; i++)
            mv2 += e->mass_t[e->types[i] - 1] * (v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] +
                                                 v[3 * i + 2] * v[3 * i + 2]);
        return mv2;
    }
    for (int i = 0; i < e->nhome; i++)
        mv2 += e->cfg.mass *
               (v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] + v[3 * i + 2] * v[3 * i + 2]);
    return mv2;
}

/* fix langevin's forces on the home atoms, `done` steps into the run. */
static void cpu_langevin(hx_md_engine *e, int64_t done)
{
    const hx_md_langevin *l = &e->cfg.langevin;
    double t0;
    if (!l->on)
        return;
    t0 = hxi_now();
    hxi_md_langevin_forces(l, e->types ? e->mass_t : &e->cfg.mass, e->types, e->cfg.dt,
                           hxi_md_langevin_target(l, done, e->cfg.steps), e->cfg.first_step + done,
                           e->sys->id, e->sys->v, e->f, e->nhome);
    hxi_md_stage(&e->stats, HX_MD_INTEGRATE, t0, hxi_now());
}

/* The temperature of all atoms (sum m v^2 / (3N - 3)), as thermo has it
 * and fix nvt's compute temp. Collective. */
static hx_status cpu_temperature(hx_md_engine *e, double *t)
{
    const double dof = 3.0 * (double) e->sys->natoms - 3.0;
    double mv2 = cpu_mv2(e);
    HXI_CHECK(hxi_allreduce_double(e->comm, &mv2, 1, 0));
    *t = dof > 0 ? mv2 * (1.0 / dof) : 0.0;
    return HX_OK;
}

static hx_status cpu_step(hx_md_engine *e, int want_thermo)
{
    double t_start = hxi_now(), before = cpu_stage_sum(e), t0;
    int rebuild = 0;
    hx_status st;

    if (e->cfg.nve) {
        const double dt = e->cfg.dt;
        const double *v = e->sys->v;
        t0 = hxi_now();
        if (e->cfg.nvt.on) {
            hxi_md_nh_target(&e->nh, e->step + 1, e->cfg.steps);
            hxi_md_nh_half(&e->nh, e->sys->v, e->nhome);
        }
        cpu_kick(e);
        for (int i = 0; i < 3 * e->nhome; i++)
            e->x[i] += dt * v[i];
        hxi_md_stage(&e->stats, HX_MD_INTEGRATE, t0, hxi_now());
    }
    st = cpu_decide(e, &rebuild);
    if (st == HX_OK)
        st = cpu_balance(e, &rebuild);
    if (st == HX_OK)
        st = rebuild ? cpu_rebuild(e) : cpu_forward(e);
    if (st == HX_OK)
        st = cpu_forces(e, want_thermo);
    if (st == HX_OK)
        cpu_langevin(e, e->step + 1);
    if (st == HX_OK && e->cfg.nve) {
        t0 = hxi_now();
        cpu_kick(e);
        hxi_md_stage(&e->stats, HX_MD_INTEGRATE, t0, hxi_now());
        if (e->cfg.nvt.on) {
            st = cpu_temperature(e, &e->nh.t_current);
            if (st == HX_OK)
                hxi_md_nh_half(&e->nh, e->sys->v, e->nhome);
        }
    }
    e->step++;
    e->stats.steps++;
    /* Whatever the stages did not claim (decisions, checks, calls). */
    e->stats.stage[HX_MD_OTHER] += (hxi_now() - t_start) - (cpu_stage_sum(e) - before);
    return st;
}

static hx_status cpu_thermo(hx_md_engine *e, hx_md_thermo *out)
{
    double t0 = hxi_now(), sums[5] = {0, 0, 0, 0, 0};
    if (!e->acc_valid)
        return hxi_error(HX_ERR_STATE,
                         "thermo at step %lld, but that step's force pass did "
                         "not sum energies: pass want_thermo to step()",
                         (long long) (e->cfg.first_step + e->step));
    sums[0] = cpu_mv2(e);
    sums[1] = e->acc[0];
    sums[2] = e->acc[1];
    sums[3] = e->nhome; /* the atoms still held, summed with the rest */
    for (int i = 0; e->types && i < e->nhome; i++)
        sums[4] += e->mass_t[e->types[i] - 1];
    HXI_CHECK(hxi_allreduce_double(e->comm, sums, e->types ? 5 : 4, 0));
    if ((long long) sums[3] != (long long) e->sys->natoms)
        return hxi_error(HX_ERR_STATE, "Lost atoms at step %lld: original %lld current %lld",
                         (long long) (e->cfg.first_step + e->step), (long long) e->sys->natoms,
                         (long long) sums[3]);
    hx_md_thermo_from_sums(out, e->step, e->sys->natoms, e->volume, sums[0], sums[1], sums[2]);
    out->mass_sum = sums[4];
    e->stats.stage[HX_MD_OTHER] += hxi_now() - t0;
    return HX_OK;
}

static hx_status cpu_gather(hx_md_engine *e, hx_md_system *sys, double **f)
{
    hx_md_system *s = e->sys;
    size_t n3 = (size_t) e->nhome * 3;
    if (sys != s) {
        if (e->nhome > sys->capacity) {
            HXI_CHECK(hxi_grow((void **) &sys->x, n3 * sizeof(double), "gathered coordinates"));
            HXI_CHECK(hxi_grow((void **) &sys->v, n3 * sizeof(double), "gathered velocities"));
            HXI_CHECK(
                hxi_grow((void **) &sys->id, (size_t) e->nhome * sizeof(int64_t), "gathered ids"));
            sys->capacity = e->nhome;
        }
        memcpy(sys->v, s->v, n3 * sizeof(double));
        memcpy(sys->id, s->id, (size_t) e->nhome * sizeof(int64_t));
        if (s->type) {
            HXI_CHECK(hxi_grow((void **) &sys->type, (size_t) (sys->capacity + 1) * sizeof(int32_t),
                               "gathered types"));
            memcpy(sys->type, s->type, (size_t) e->nhome * sizeof(int32_t));
        }
        sys->decomp = s->decomp;
        sys->natoms = s->natoms;
    }
    if (n3)
        memcpy(sys->x, e->x, n3 * sizeof(double));
    sys->n = e->nhome;
    /* The lists' positions, for a restart file that continues exactly. */
    HXI_CHECK(hxi_grow((void **) &sys->xref, (size_t) (sys->capacity + 1) * 3 * sizeof(double),
                       "gathered list positions"));
    if (n3)
        memcpy(sys->xref, e->xhold, n3 * sizeof(double));
    sys->ref_ago = e->ago;
    sys->has_ref = 1;
    /* fix nvt's chain, for a restart file that goes on from it. */
    sys->has_nh = e->cfg.nvt.on;
    if (sys->has_nh) {
        const int m = e->nh.mtchain;
        sys->nh_n = m;
        sys->nh_t = e->nh.t_current;
        memcpy(sys->nh, e->nh.eta, (size_t) m * sizeof(double));
        memcpy(sys->nh + m, e->nh.eta_dot, (size_t) m * sizeof(double));
        memcpy(sys->nh + 2 * m, e->nh.eta_dotdot, (size_t) m * sizeof(double));
    }
    if (f) {
        if (e->nhome > e->cap_fout) {
            HXI_CHECK(hxi_grow((void **) &e->fout, (n3 + 3) * sizeof(double), "gathered forces"));
            e->cap_fout = e->nhome;
        }
        if (n3)
            memcpy(e->fout, e->f, n3 * sizeof(double));
        *f = e->fout;
    }
    return HX_OK;
}

static const hx_md_stats *cpu_stats(const hx_md_engine *e)
{
    return &e->stats;
}

static const char *cpu_describe(const hx_md_engine *e)
{
    hx_md_engine *m = (hx_md_engine *) e;
    const hx_decomp *d = &e->sys->decomp;
    snprintf(m->describe, sizeof m->describe,
             "cpu engine (double): grid %dx%dx%d, halo cutoff %g, %d pulses%s; %s", d->grid[0],
             d->grid[1], d->grid[2], d->cutoff, e->plan ? hx_plan_npulses(e->plan) : 0,
             e->cfg.newton_off ? " (newton off: full shell, no force exchange)" : "",
             e->t ? hx_transport_describe(e->t) : "no transport");
    if (e->cfg.nvt.on)
        snprintf(m->describe + strlen(m->describe), sizeof m->describe - strlen(m->describe),
                 "; fix nvt temp %g %g %g (tchain %d, tloop %d, drag %g)", e->cfg.nvt.t_start,
                 e->cfg.nvt.t_stop, e->cfg.nvt.t_damp, e->cfg.nvt.tchain, e->cfg.nvt.tloop,
                 e->cfg.nvt.drag);
    if (e->cfg.langevin.on)
        snprintf(m->describe + strlen(m->describe), sizeof m->describe - strlen(m->describe),
                 "; fix langevin %g %g %g %d (noise by atom id and step)", e->cfg.langevin.t_start,
                 e->cfg.langevin.t_stop, e->cfg.langevin.damp, e->cfg.langevin.seed);
    return e->describe;
}

static void cpu_destroy(hx_md_engine *e)
{
    if (!e)
        return;
    hx_transport_destroy(e->t);
    hx_plan_destroy(e->plan);
    hxi_md_cells_free(&e->cells);
    hxi_md_nlist_free(&e->local);
    hxi_md_nlist_free(&e->nonlocal);
    free(e->xhold);
    free(e->fout);
    free(e->types);
    free(e->order);
    free(e->scratch);
    free(e);
}

/* The thermostats' set-up before the first step, as LAMMPS's fixes'
 * setup(): fix langevin's forces at step 0, fix nvt's chain. */
static hx_status cpu_thermostats_setup(hx_md_engine *e)
{
    double t_now;
    cpu_langevin(e, 0);
    if (!e->cfg.nvt.on)
        return HX_OK;
    HXI_CHECK(cpu_temperature(e, &t_now));
    hxi_md_nh_setup(&e->nh, &e->cfg, 3.0 * (double) e->sys->natoms - 3.0, t_now);
    /* A restart file's chain of the same length goes on where it was (as
     * LAMMPS's fix nvt reads its state back); another length starts anew. */
    const hx_md_system *s = e->sys;
    if (s->has_nh && s->nh_n == e->nh.mtchain) {
        const int m = s->nh_n;
        memcpy(e->nh.eta, s->nh, (size_t) m * sizeof(double));
        memcpy(e->nh.eta_dot, s->nh + m, (size_t) m * sizeof(double));
        memcpy(e->nh.eta_dotdot, s->nh + 2 * m, (size_t) m * sizeof(double));
        e->nh.t_current = s->nh_t;
    }
    return HX_OK;
}

static hx_status cpu_create(hx_md_engine **out, hx_comm *comm, const hx_md_config *cfg,
                            hx_md_system *sys)
{
    hx_md_engine *e = NULL;
    hx_transport_opts o;
    hx_status st = HX_OK;

    *out = NULL;
    if (!(cfg->rc > 0) || !(cfg->skin >= 0) || !(cfg->dt > 0) || !(cfg->mass > 0))
        st = hxi_error(HX_ERR_INVALID,
                       "cpu engine: cutoff %g, skin %g, timestep %g, mass %g: need rc > 0, "
                       "skin >= 0, dt > 0 and mass > 0",
                       cfg->rc, cfg->skin, cfg->dt, cfg->mass);
    else if (sys->decomp.cutoff < hxi_md_list_cutoff(cfg) * (1 - 1e-12))
        st = hxi_error(HX_ERR_CUTOFF,
                       "cpu engine: the decomposition's halo cutoff %g is below rc + skin = %g: "
                       "initialise it with the pair cutoff plus the skin",
                       sys->decomp.cutoff, hxi_md_list_cutoff(cfg));
    if (st == HX_OK)
        st = hxi_alloc((void **) &e, sizeof *e, "the cpu engine");
    HXI_CHECK(hxi_agree(comm, st));
    memset(e, 0, sizeof *e);
    e->comm = comm;
    e->cfg = *cfg;
    e->sys = sys;
    e->cutneigh = hxi_md_list_cutoff(cfg);
    e->rc_max = cfg->types.ntypes > 1 ? hxi_pair_max_cutoff(cfg) : cfg->rc;
    e->dtf = 0.5 * cfg->dt / cfg->mass;
    e->volume = sys->decomp.box_len[0] * sys->decomp.box_len[1] * sys->decomp.box_len[2];
    for (int t = 0; t < HX_MD_MAX_TYPES; t++) {
        e->mass_t[t] = t < cfg->types.ntypes ? hxi_md_mass_of(cfg, t + 1) : 1.0;
        e->dtf_t[t] = 0.5 * cfg->dt / e->mass_t[t];
    }
    hxi_md_pbc_init(&e->pbc, &sys->decomp);

    hx_transport_opts_init(&o);
    o.name = "cpu";
    o.dtype = HX_DOUBLE;
    st = hxi_md_pair_init(&e->pair, cfg);
    if (st == HX_OK && (cfg->types.ntypes > 1) != (sys->type != NULL))
        st = hxi_error(HX_ERR_STATE, "cpu engine: %d atom types, but the atoms %s types",
                       cfg->types.ntypes, sys->type ? "have" : "lack");
    if (st == HX_OK)
        st = hx_transport_create(&e->t, comm, &o);
    if (st == HX_OK && sys->type) {
        const hx_field tf = {(void **) &e->types, sizeof(int32_t)};
        st = hxi_grow((void **) &e->types, sizeof(int32_t), "atom types");
        if (st == HX_OK)
            st = hx_transport_field_add(e->t, &tf, HX_FIELD_INT32, 1, &e->type_field);
    }
    if (st == HX_OK)
        st = sys->has_ref && sys->xref && sys->ref_ago >= 0 ? cpu_build_from_ref(e)
                                                            : cpu_build(e, NULL);
    if (st == HX_OK)
        st = cpu_forces(e, 1);
    if (st == HX_OK)
        st = cpu_thermostats_setup(e);
    if (st != HX_OK) {
        cpu_destroy(e);
        return st;
    }
    e->stats.rebuilds = 0; /* count the rebuilds of the run, not the set-up */
    memset(e->stats.stage, 0, sizeof e->stats.stage);
    *out = e;
    return HX_OK;
}

const hx_md_engine_ops hx_md_engine_cpu = {
    .name = "cpu",
    .create = cpu_create,
    .step = cpu_step,
    .thermo = cpu_thermo,
    .gather = cpu_gather,
    .stats = cpu_stats,
    .describe = cpu_describe,
    .destroy = cpu_destroy,
};
