/*
 * md_config.h - what a halox-md run is: filled from defaults, a LAMMPS input
 * deck (deck.c) and command-line options, in that order.
 */
#ifndef HALOX_MD_CONFIG_H
#define HALOX_MD_CONFIG_H

#include <stdint.h>

typedef enum hx_md_velocity_mode {
    HX_MD_VEL_LAMMPS = 0, /* LAMMPS's `velocity create`, every keyword as LAMMPS does it */
    HX_MD_VEL_HALOX = 1,  /* seeded per-atom streams, same for any rank count */
    HX_MD_VEL_MINIMD = 2  /* miniMD's ref/setup.cpp: Park-Miller per lattice site */
} hx_md_velocity_mode;

/* LAMMPS's `velocity ... loop` and `dist`. */
typedef enum hx_md_velocity_loop {
    HX_MD_LOOP_ALL = 0,   /* one stream over atom ids 1..N (any rank count) */
    HX_MD_LOOP_LOCAL = 1, /* a stream per rank over its own atoms */
    HX_MD_LOOP_GEOM = 2   /* a stream per atom seeded by its coordinates */
} hx_md_velocity_loop;

/* The trajectory's format. */
typedef enum hx_md_dump_style {
    HX_MD_DUMP_EXTXYZ = 0, /* --dump: extended XYZ (positions and velocities; ASE, OVITO) */
    HX_MD_DUMP_ATOM = 1,   /* deck `dump ... atom`: LAMMPS's atom format (id type xs ys zs) */
    HX_MD_DUMP_XYZ = 2     /* deck `dump ... xyz`: LAMMPS's xyz format (type x y z) */
} hx_md_dump_style;

/* The columns of a thermo row (thermo_style one|custom), LAMMPS's
 * keywords in this order. */
typedef enum hx_md_thermo_col {
    HX_MD_TH_STEP = 0, /* step:    Step */
    HX_MD_TH_TEMP,     /* temp:    Temp */
    HX_MD_TH_EPAIR,    /* epair:   E_pair (the pair energy) */
    HX_MD_TH_EMOL,     /* emol:    E_mol (0: no bonds) */
    HX_MD_TH_PE,       /* pe:      PotEng (the pair energy here) */
    HX_MD_TH_KE,       /* ke:      KinEng */
    HX_MD_TH_ETOTAL,   /* etotal:  TotEng */
    HX_MD_TH_PRESS,    /* press:   Press */
    HX_MD_TH_VOL,      /* vol:     Volume */
    HX_MD_TH_DENSITY,  /* density: Density (mass / volume) */
    HX_MD_TH_ATOMS,    /* atoms:   Atoms */
    HX_MD_TH_XY,       /* xy:      Xy (the box's tilts, 0 orthorhombic) */
    HX_MD_TH_XZ,       /* xz:      Xz */
    HX_MD_TH_YZ,       /* yz:      Yz */
    HX_MD_TH_LX,       /* lx:      Lx (the box's lengths) */
    HX_MD_TH_LY,       /* ly:      Ly */
    HX_MD_TH_LZ,       /* lz:      Lz */
    HX_MD_TH_NKEYS
} hx_md_thermo_col;

enum { HX_MD_THERMO_MAX_COLS = 32, HX_MD_NVT_MAX_CHAIN = 32 };

/* fix ID all nvt temp TSTART TSTOP TDAMP [tchain N] [tloop N] [drag D]:
 * LAMMPS's fix nvt (a Nose-Hoover chain, FixNH). */
typedef struct hx_md_nvt {
    int on;
    double t_start, t_stop; /* target, ramped linearly over the run */
    double t_damp;          /* TDAMP, in time units */
    int tchain;             /* thermostats in the chain (LAMMPS: 3; at most 32) */
    int tloop;              /* sub-steps of the chain update (LAMMPS: 1) */
    double drag;            /* drag factor (LAMMPS: 0) */
} hx_md_nvt;

/* fix ID all langevin TSTART TSTOP DAMP SEED: LAMMPS's fix langevin (a
 * drag and uniform random forces; an integrator moves the atoms). */
typedef struct hx_md_langevin {
    int on;
    double t_start, t_stop; /* target, ramped linearly over the run */
    double damp;            /* DAMP, in time units */
    int seed;               /* SEED, 1 to 2^31 - 1 */
} hx_md_langevin;

/* Settings given by the deck after read_restart or on the command line,
 * which a restart file therefore does not replace (hx_md_config.given). */
enum {
    HX_MD_GIVEN_MASS = 1 << 0,    /* mass */
    HX_MD_GIVEN_RC = 1 << 1,      /* pair_style RC, pair_coeff ... RC, --rc */
    HX_MD_GIVEN_PAIR = 1 << 2,    /* pair_style and pair_coeff's parameters */
    HX_MD_GIVEN_SHIFT = 1 << 3,   /* pair_modify shift, --shift */
    HX_MD_GIVEN_DT = 1 << 4,      /* timestep, --dt */
    HX_MD_GIVEN_SIZE = 1 << 5,    /* --size, --cells (must match the file) */
    HX_MD_GIVEN_DENSITY = 1 << 6, /* --density (must match the file) */
    HX_MD_GIVEN_MIX = 1 << 7,     /* pair_modify mix */
    HX_MD_GIVEN_NEWTON = 1 << 8   /* newton, --newton */
};

/* Parameters a pair style may have (lj/cut: epsilon, sigma). */
#define HX_MD_PAIR_NPARAM 4

/* Atom types (create_box N) and the deck's `set` commands halox-md holds. */
#define HX_MD_MAX_TYPES 8
#define HX_MD_MAX_SETS  16
/* create_atoms commands a deck may give (one per region or type). */
#define HX_MD_MAX_FILLS 8

/* `velocity all set` commands a deck may give, and one of them: the
 * components it has (box units) set, or with sum added, on every atom. */
#define HX_MD_MAX_VSETS 4
typedef struct hx_md_vset {
    double v[3];
    int has[3];
    int sum;
} hx_md_vset;

/* pair_modify mix: LAMMPS's rules for the coefficients of unlike types. */
typedef enum hx_md_mix {
    HX_MD_MIX_GEOMETRIC = 0, /* LAMMPS's default */
    HX_MD_MIX_ARITHMETIC = 1,
    HX_MD_MIX_SIXTHPOWER = 2
} hx_md_mix;

/* `set type LO*HI type J` or `set type LO*HI type/fraction J FRAC SEED`
 * (`set group all ...`: LO 1, HI ntypes), applied in the deck's order to
 * every atom where it was created, as LAMMPS's Set does it. */
typedef struct hx_md_type_set {
    int lo, hi;      /* the types it selects */
    int to;          /* the type they take */
    double fraction; /* type/fraction: the share (type: 1) */
    int seed;        /* type/fraction's seed (type: 0, every selected atom) */
} hx_md_type_set;

/* One `create_atoms T region ID` of a block region: the lattice sites
 * of the box with lo <= x <= hi along every dimension (LAMMPS's
 * RegBlock::inside, upper planes included; box units, +-HUGE_VAL for
 * INF), of type T. A prism region (prism 1): lo, hi its untilted bounds
 * and tilt its xy, xz, yz; a site inside where its fractional
 * coordinates in the prism lie in [0, 1] (LAMMPS's RegPrism::inside). */
typedef struct hx_md_fill {
    int type;
    double lo[3], hi[3];
    int prism;
    double tilt[3];
} hx_md_fill;

/* Atom types and their pairs. With one type (ntypes 1) the run reads
 * only hx_md_config.mass, pair and rc, as before types came; with more,
 * masses[] and the pairs' tables below (type t is index t - 1): mass and
 * pair[0 .. ncoeff) hold type 1's, pair[ncoeff ..] pair_style's
 * parameters, and rc pair_style's cutoff, that of the pairs without one. */
typedef struct hx_md_types {
    int ntypes;      /* create_box N */
    int create_type; /* create_atoms T (the whole box when nfills is 0) */
    /* create_atoms T region ID, in the deck's order (0: create_atoms T
     * box once): ids count each one's sites in LAMMPS's loop order, one
     * command after the other (lattice.c). */
    int nfills;
    hx_md_fill fills[HX_MD_MAX_FILLS];
    int nsets;
    hx_md_type_set sets[HX_MD_MAX_SETS];
    double masses[HX_MD_MAX_TYPES]; /* mass I M */
    unsigned mass_given;            /* bit t - 1: the deck gave type t's mass */
    int mix;                        /* hx_md_mix */
    /* pair_coeff I J ...: set[i][j] (i <= j) where given, with its
     * parameters (pair_coeff's; pair_style's stay in hx_md_config.pair)
     * and its own cutoff (0: pair_style's). */
    unsigned char set[HX_MD_MAX_TYPES][HX_MD_MAX_TYPES];
    double param[HX_MD_MAX_TYPES][HX_MD_MAX_TYPES][HX_MD_PAIR_NPARAM];
    double rc[HX_MD_MAX_TYPES][HX_MD_MAX_TYPES];
    double rc_style; /* the deck's pair_style cutoff (0: none), for a restart file's types */
} hx_md_types;

/* Most domains along one dimension whose cuts a `balance` may set
 * (libhalox's HX_MAX_CUT_DOMAINS). */
#define HX_MD_BALANCE_MAX 128
/* `balance` commands a deck may give before its run, done in turn. */
#define HX_MD_MAX_BALANCES 4

typedef enum hx_md_balance_style {
    HX_MD_BAL_NONE = 0,
    HX_MD_BAL_SHIFT = 1, /* balance THRESH shift DIMS NITER STOPTHRESH */
    HX_MD_BAL_USER = 2   /* balance THRESH x uniform|FRACS... y ... z ... */
} hx_md_balance_style;

/* LAMMPS's `balance` (once, before the run: `balance`) and `fix ID all
 * balance NFREQ ...` (during the run, shift only). Loads are atoms per
 * rank, LAMMPS's default. */
typedef struct hx_md_balance {
    int style;         /* hx_md_balance_style */
    double thresh;     /* THRESH: nothing is done below this imbalance */
    char dims[4];      /* shift: the dimensions in the command's order ("z", "xy") */
    int niter;         /* shift: NITER */
    double stopthresh; /* shift: STOPTHRESH */
    int nfreq;         /* fix balance: every NFREQ steps (0: at the start only) */
    int line;          /* the deck's line, for messages at the run */
    /* user: per dimension 0 unchanged, 1 uniform, 2 the fractions given */
    int user[3];
    int nfrac[3];
    double frac[3][HX_MD_BALANCE_MAX];
} hx_md_balance;

/* One `run N` of the deck, with the settings in force when it was read. */
typedef struct hx_md_config {
    /* system */
    double density; /* reduced density of the fcc lattice (lattice fcc RHO) */
    int cells[3];   /* unit cells along x, y, z (region block 0 nx 0 ny 0 nz) */
    /* LAMMPS's restricted triclinic box (region ID prism ...): the tilts
     * xy, xz, yz in box units (0 orthorhombic); triclinic 1 for a prism
     * box, as LAMMPS's domain->triclinic, even with every tilt 0. */
    int triclinic;
    double tilt[3];
    double mass; /* mass of type 1 */
    /* velocities */
    double temperature; /* velocity create T */
    uint64_t seed;      /* velocity create ... SEED */
    hx_md_velocity_mode velocity_mode;
    hx_md_velocity_loop velocity_loop; /* loop all|local|geom */
    int velocity_gaussian;             /* dist gaussian (else uniform) */
    int velocity_mom;                  /* mom yes: zero the total momentum */
    int velocity_rot;                  /* rot yes: zero the angular momentum */
    hx_md_vset vsets[HX_MD_MAX_VSETS]; /* velocity all set, in deck order after create */
    int nvsets;
    /* interaction */
    int pair_style;                 /* HX_PAIR_* (md/pair/pair_eval.h) */
    double pair[HX_MD_PAIR_NPARAM]; /* pair_coeff's parameters, then pair_style's
                                     * before its cutoff (md/pair/pair_styles.c) */
    double rc;                      /* pair_style ... RC (pair_coeff may override) */
    int shift_energy;               /* pair_modify shift yes */
    hx_md_types types;              /* create_box N, mass I, pair_coeff I J, set */
    /* neighbour lists */
    double skin;     /* neighbor SKIN bin */
    int neigh_every; /* neigh_modify every N */
    int neigh_delay; /* neigh_modify delay N */
    int neigh_check; /* neigh_modify check yes|no */
    /* newton off (LAMMPS's newton pair setting; 0: newton on): the
     * full-shell plan, every pair with a halo atom computed on both of its
     * ranks and no force exchange. Unless given (HX_MD_GIVEN_NEWTON) the
     * CPU engine runs newton on, as LAMMPS, and the GPU engine chooses by
     * its atoms per rank (src/md/gpu/setup.c, hxg_eng_choose_newton). */
    int newton_off;
    /* integration */
    double dt;          /* timestep */
    int steps;          /* run N */
    int64_t first_step; /* the absolute step the run starts from (a restart
                         * file's); engines count steps from 0 and add it
                         * where a message names a step */
    int thermo_every;   /* thermo N (0: first and last step only) */
    int nve;            /* velocity Verlet moves the atoms: fix nve or fix nvt */
    hx_md_nvt nvt;
    hx_md_langevin langevin;
    int nbalance;                              /* the deck's `balance` commands */
    hx_md_balance balance[HX_MD_MAX_BALANCES]; /* ... in the deck's order */
    hx_md_balance fix_balance;                 /* fix ID all balance (style NONE: none) */
    /* thermo output */
    int thermo_ncols; /* thermo_style: the columns (HX_MD_TH_*) */
    unsigned char thermo_cols[HX_MD_THERMO_MAX_COLS];
    int thermo_norm; /* thermo_modify norm yes|no: extensive values per atom */
    /* run-time choices (command line) */
    char transport[32]; /* "cpu", "mpi", "nccl", "nvshmem-fused", ... */
    int grid[3];        /* 0,0,0: chosen for the rank count */
    int use_gpu;        /* -1 auto, 0 CPU engine, 1 GPU engine */
    int dump_every;     /* a trajectory frame every N steps (0: none) */
    char dump_file[256];
    hx_md_dump_style dump_style;
    int progress;        /* print a progress line with ETA */
    char stats_csv[256]; /* append one row of timings to this CSV ("" none) */
    /* restart files */
    char restart_file[256];       /* read_restart / --restart: start from it ("" none) */
    char checkpoint_file[256];    /* restart N FILE / --checkpoint ("" none) */
    int checkpoint_every;         /* every N steps (0: only when stopped by a signal) */
    char write_restart_file[256]; /* write_restart FILE ("" none) */
    int write_restart_after;      /* ... after this many of the run's steps */
    double max_hours;             /* --max-hours: stop cleanly before this (0: none) */
    unsigned given;               /* HX_MD_GIVEN_* */
} hx_md_config;

/* The classic LJ melt benchmark: 32,000 atoms (20^3 fcc cells at 0.8442),
 * T 1.44, rc 2.5, skin 0.3, dt 0.005, rebuild every 20 steps, 100 steps,
 * thermo every 50, unshifted energy. */
void hx_md_config_defaults(hx_md_config *c);
/* thermo_style one with thermo_modify norm yes: LAMMPS's default in lj units. */
void hx_md_config_thermo_one(hx_md_config *c);

#endif /* HALOX_MD_CONFIG_H */
