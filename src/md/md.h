/*
 * md.h - the Lennard-Jones engine of halox-md: the system, the thermo
 * quantities, the stage timers, and the table of operations that the CPU
 * engine (double, MPI ranks) and the GPU engine (float, device arrays)
 * each provide. The driver (run.c) owns set-up and output; engines own
 * the step.
 */
#ifndef HALOX_MD_H
#define HALOX_MD_H

#include "halox.h"
#include "md/md_config.h"

#include <stdint.h>

/* Home atoms of one rank, in host memory, malloc'd (hx_migrate may grow them). */
typedef struct hx_md_system {
    hx_decomp decomp;
    int64_t natoms; /* over all ranks */
    int n;          /* home atoms here */
    int capacity;   /* atoms the arrays hold */
    double *x;      /* 3 per atom */
    double *v;      /* 3 per atom */
    int64_t *id;    /* global atom id, 0-based, in lattice order */
    int32_t *type;  /* atom type, 1 .. ntypes; NULL with one type (all 1) */
    /* Where has_ref: the positions of the last neighbour-list build (3 per
     * atom, `capacity` of them) and the steps since it, so that a restart
     * file continues the run without a rebuild of its own (engine gather,
     * restart read; the CPU engine builds its first lists from them). */
    double *xref;
    int64_t ref_ago;
    int has_ref;
    /* Where has_nh: fix nvt's chain, the same on every rank: eta, eta_dot
     * and eta_dotdot, nh_n each, and the temperature it last saw (engine
     * gather, restart read; the CPU engine goes on from it). */
    double nh[3 * HX_MD_NVT_MAX_CHAIN];
    double nh_t;
    int nh_n, has_nh;
} hx_md_system;

/* One thermo row, LAMMPS's definitions: temperature over 3N-3 degrees of
 * freedom, energies per atom, pressure from that temperature and the virial;
 * the totals and the box for thermo_style custom (and norm no). */
typedef struct hx_md_thermo {
    int64_t step;
    double temp;
    double epair;
    double emol;
    double etotal;
    double press;
    double pe_sum; /* the pair energy over all atoms */
    double ke_sum; /* the kinetic energy over all atoms, from temp */
    double volume;
    int64_t natoms;
    double mass_sum; /* the mass of all atoms (0: natoms times type 1's) */
} hx_md_thermo;

/* Where the time goes, in seconds, summed over the run on this rank. */
typedef enum hx_md_stage {
    HX_MD_LOCAL = 0, /* home-home pairs */
    HX_MD_NONLOCAL,  /* pairs with halo atoms */
    HX_MD_HALO_FWD,  /* coordinate halo exchange */
    HX_MD_HALO_REV,  /* force halo exchange */
    HX_MD_NEIGH,     /* cell and neighbour lists */
    HX_MD_MIGRATE,   /* migrate and new plan */
    HX_MD_INTEGRATE, /* velocity Verlet */
    HX_MD_OTHER,     /* thermo reductions, checks, everything else */
    HX_MD_NSTAGES
} hx_md_stage;

/* What hx_md_stats.dangerous counts. */
typedef enum hx_md_danger {
    HX_MD_DANGER_NONE = 0, /* not counted by this engine */
    /* check yes, as LAMMPS: rebuilds on the first step the schedule allowed
     * one (ago == max(every, delay)), when the lists may have gone stale
     * before the check saw it */
    HX_MD_DANGER_FIRST,
    /* check no: rebuilds at which some atom had moved more than half the
     * skin since the last build (the lists may have missed pairs) */
    HX_MD_DANGER_MOVED
} hx_md_danger;

typedef struct hx_md_stats {
    double stage[HX_MD_NSTAGES];
    int64_t steps;
    int64_t rebuilds;
    int64_t dangerous;   /* the same on every rank */
    hx_md_danger danger; /* what `dangerous` counts */
    /* Pairs within the pair cutoff that the lists had lost, found at the
     * rebuilds after a move over half the skin, and the largest share of
     * the pairs within the cutoff lost at one rebuild (all ranks). */
    int64_t missed_pairs;
    double missed_share;
} hx_md_stats;

typedef struct hx_md_engine hx_md_engine;

typedef struct hx_md_engine_ops {
    const char *name; /* "cpu" or "gpu" */
    /* Collective. Takes the system (home atoms; the engine may keep and
     * grow its arrays) and builds the first plan, lists and forces. */
    hx_status (*create)(hx_md_engine **e, hx_comm *comm, const hx_md_config *cfg,
                        hx_md_system *sys);
    /* One velocity-Verlet step; with want_thermo the force pass also sums
     * the energy and the virial for thermo(). Rebuilds (migrate, plan,
     * lists) as the config says. */
    hx_status (*step)(hx_md_engine *e, int want_thermo);
    /* The next n steps (n >= 2), none a thermo step: what n calls of
     * step(e, 0) do. The caller reads and calls nothing else of the
     * engine's until they are done, so the engine may queue them together
     * (NULL: the caller makes the n calls). */
    hx_status (*steps)(hx_md_engine *e, int n);
    /* Collective. Thermo of the current state (after create: step 0). */
    hx_status (*thermo)(hx_md_engine *e, hx_md_thermo *out);
    /* Copies the current home atoms (x, v, id) back into sys, for dumps,
     * restart files and tests, with the positions of the last list build
     * (xref, ref_ago, has_ref) where the engine keeps them. Forces on home atoms go to *f (3 per
     * atom, malloc'd by the engine, valid until the next call) when f is not NULL. */
    hx_status (*gather)(hx_md_engine *e, hx_md_system *sys, double **f);
    const hx_md_stats *(*stats)(const hx_md_engine *e);
    /* Waits until the engine's queued work is done, so that host clocks
     * measure it (NULL: every step is synchronous). Rank-local. */
    hx_status (*sync)(hx_md_engine *e);
    /* Timed stretches without waiting (NULL: the caller times them with
     * sync and host clocks). mark(e, 0) marks where a stretch starts in
     * the work queued so far, mark(e, 1) where it ends; a stretch that
     * never ends is dropped by the next mark(e, 0). stretch_seconds gives
     * the durations of the first n stretches that ended, in order, waiting
     * for the work where it must. Rank-local. */
    hx_status (*mark)(hx_md_engine *e, int end);
    hx_status (*stretch_seconds)(hx_md_engine *e, double *sec, int n);
    /* One line on how it runs (transport, grid, device), for the log. */
    const char *(*describe)(const hx_md_engine *e);
    void (*destroy)(hx_md_engine *e);
} hx_md_engine_ops;

extern const hx_md_engine_ops hx_md_engine_cpu;
#ifdef HALOX_HAVE_CUDA
extern const hx_md_engine_ops hx_md_engine_gpu;
#endif

/* Set-up shared by both engines (lattice.c, velocity.c). */
/* Builds this rank's home atoms of the fcc lattice (LAMMPS's `lattice fcc
 * rho` and `region block 0 nx 0 ny 0 nz`); sys->decomp must be set. */
hx_status hx_md_lattice(hx_md_system *sys, const hx_md_config *cfg);
/* The periodic box of the lattice: origin 0, cfg->cells[d] lattice constants
 * (4 / density)^(1/3) along each dimension. HX_ERR_INVALID for a density or
 * cell count that cannot make a lattice. */
hx_status hx_md_box(const hx_md_config *cfg, double box_lo[3], double box_len[3]);
/* The fcc lattice constant (4 / density)^(1/3): every lattice position
 * (the box, the sites, the velocities' sweep) is made from this value. */
double hx_md_lattice_constant(const hx_md_config *cfg);
/* The lattice position of global atom id, bit for bit hx_md_lattice's. */
void hx_md_site(const hx_md_config *cfg, int64_t id, double x[3]);
/* The same with a = hx_md_lattice_constant(cfg) given, for loops over
 * many sites. */
void hx_md_site_at(const hx_md_config *cfg, double a, int64_t id, double x[3]);
/* Velocities at cfg->temperature: seeded, zero total momentum, scaled to T
 * over 3N-3 degrees of freedom; identical for any rank count. Collective. */
hx_status hx_md_velocities(hx_md_system *sys, const hx_md_config *cfg, hx_comm *comm);

/* Atom types (types.c). */
/* The types, masses, set commands and pairs of c: HX_ERR_INVALID for one
 * no engine can run (the pairs as hxi_pair_resolve). */
hx_status hxi_md_types_check(const hx_md_config *c);
/* The type of an atom created at x (create_atoms T, then the deck's set
 * commands in order, type/fraction drawn as LAMMPS's Set from a
 * generator reset from its seed and x): the same on any rank count. */
int hxi_md_type_at(const hx_md_config *c, const double x[3]);
/* The type an atom created as type at x has after the set commands. */
int hxi_md_type_sets(const hx_md_config *c, int type, const double x[3]);
/* The type of the atom of id at x: its create_atoms command's (several
 * with create_atoms T region ID), then the set commands (lattice.c). */
int hxi_md_type_of(const hx_md_config *c, int64_t id, const double x[3]);
/* The mass of type t (1-based). */
static inline double hxi_md_mass_of(const hx_md_config *c, int t)
{
    return c->types.ntypes > 1 ? c->types.masses[t - 1] : c->mass;
}
/* sys->type for this rank's atoms (hxi_md_type_of; NULL with one type;
 * lattice.c). */
hx_status hxi_md_types_assign(hx_md_system *sys, const hx_md_config *c);

/* The halox-md program (run.c): options and deck as deck.h describes;
 * returns the exit code, the same on every rank. */
int hx_md_main(int argc, char **argv);

/* A thermo row from global sums (thermo.c, shared by both engines): mv2 is
 * sum m v.v over all atoms, epair the pair energy, virial sum r.F over all
 * pairs. Temperature over 3N-3 degrees of freedom, energies per atom,
 * P = (mv2 + virial) / (3 V), as LAMMPS in lj units. */
void hx_md_thermo_from_sums(hx_md_thermo *out, int64_t step, int64_t natoms, double volume,
                            double mv2, double epair, double virial);

#endif /* HALOX_MD_H */
