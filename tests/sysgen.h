/*
 * sysgen.h - seeded random systems for the core tests, gathering them over
 * the ranks, the grids to try, and small helpers the tests share (the
 * brute-force checks are in oracle.h).
 *
 * Every rank generates the same global system from the same seed and keeps
 * the atoms it owns; after a migration the system is gathered back by global
 * id.
 */
#ifndef HALOX_TESTS_SYSGEN_H
#define HALOX_TESTS_SYSGEN_H

#include "hxtest.h"

#include <stdint.h>

/* A whole periodic system, atoms indexed by global id 0 .. n-1. */
typedef struct hxt_sys {
    int n;
    double box_lo[3], box_len[3];
    double *x; /* n * 3 */
} hxt_sys;

/* Home atoms of one rank: global ids and coordinates, in home order. */
typedef struct hxt_local {
    int n;
    int64_t *id;
    double *x;
} hxt_local;

/* n atoms uniform in the box, from a seeded hxt_rng. Every coordinate is
 * strictly inside [lo, lo + len). */
void hxt_sys_random(hxt_sys *s, int n, const double lo[3], const double len[3], uint64_t seed);
/* Maps s (uniform in its orthorhombic box) into d's triclinic box: the
 * fractional coordinates (x - lo) / len become lo + s0 a + s1 b + s2 c.
 * Nothing changes for an orthorhombic d. */
void hxt_sys_tilt(hxt_sys *s, const hx_decomp *d);
/* 1 when v is a whole lattice vector of d's box: its fractional
 * coordinates (H^-1 v) within tol of whole numbers. */
int hxt_is_lattice(const hx_decomp *d, const double v[3], double tol);
/* Violations of "every id 0 .. N-1 held exactly once" over the ranks, from
 * each rank's n ids. Collective. */
int hxt_ids_once(hx_comm *comm, const int64_t *id, int n, int N);
void hxt_sys_free(hxt_sys *s);

/* The atoms of s that d->rank owns (hx_decomp_owner), in id order. */
void hxt_local_take(hxt_local *l, const hxt_sys *s, const hx_decomp *d);
void hxt_local_free(hxt_local *l);

/* Concatenation over ranks (rank order) of count items of elem bytes each.
 * Returns a malloc'd block; *total is the sum of the counts; counts (if not
 * NULL) receives a malloc'd array of the per-rank counts. Collective. */
void *hxt_allgatherv(hx_comm *c, const void *buf, int count, size_t elem, int *total, int **counts);

/* Gathers per-rank atoms (ids, coordinates) into g (box copied from box_src)
 * indexed by id; owner (n ints, may be NULL) gets the rank holding each id.
 * Checks that every id 0 .. n-1 is held exactly once and returns the number
 * of violations. Collective. */
int hxt_gather(hx_comm *c, int nlocal, const int64_t *id, const double *x, int n,
               const hxt_sys *box_src, hxt_sys *g, int *owner);

/* Grids (from a fixed list) whose product is nranks; returns how many. */
int hxt_grids_for(int nranks, int grids[][3], int max);
/* "2x1x3" for messages (static buffer per call site is not needed: writes buf). */
const char *hxt_grid_str(const int g[3], char buf[32]);

/* One case of a walk: a halo cutoff, a number of atoms (or, when natoms is
 * 0, density times the box's volume), and a value of the test's own (a pair
 * cutoff...). */
typedef struct hxt_spec {
    double rh;
    int natoms;
    double aux;
    double density;
} hxt_spec;

/* What a case hands the test: its grid and spec (natoms as generated), the
 * seed of its system, the decomposition, the system, this rank's atoms and
 * their plan. */
typedef struct hxt_case {
    const int *grid;
    char gs[32]; /* the grid as "2x1x3" */
    hxt_spec spec;
    uint64_t seed;
    hx_decomp d;
    hxt_sys s;
    hxt_local l;
    hx_plan *plan;
} hxt_case;

typedef void (*hxt_case_fn)(hx_comm *comm, const hxt_case *c, void *ctx);

/* Where a walk goes: the grids (NULL: every grid of the rank count,
 * hxt_grids_for), the box of each grid (box_of, else box_lo and box_len for
 * all), the specs, and the seed of the first case (one more per case).
 * keep: a plan outlives its case until the next case's fn has run (a
 * transport keeps its plan by pointer), and the last one is handed back. */
typedef struct hxt_walk {
    const int (*grids)[3];
    int ngrids;
    void (*box_of)(const int grid[3], double lo[3], double len[3]);
    const double *box_lo, *box_len;
    const hxt_spec *specs;
    int nspecs;
    uint64_t seed;
    int keep;
    const double *tilt_frac; /* NULL: orthorhombic; else a triclinic box with
                                tilts xy, xz, yz of these fractions of lx, lx, ly */
    int full;                /* 1: full-shell plans (hx_plan_create_full) */
} hxt_walk;

/* The walk every plan-based test shares: for each grid and each spec, the
 * decomposition of the box, a random system (hxt_sys_random), this rank's
 * atoms and their plan, each agreed over the ranks (a case that fails on
 * one rank is reported and skipped on all), then fn, then everything freed
 * (the plan as w->keep says; with keep, *last gets the plan still alive, to
 * be destroyed after the transports that hold it). Returns the number of
 * cases that reached fn. Collective. */
int hxt_walk_plans(hx_comm *comm, const hxt_walk *w, hxt_case_fn fn, void *ctx, hx_plan **last);

/* hxt_walk_plans over every grid of the rank count in one box, plans freed
 * after their case. */
int hxt_for_each_plan(hx_comm *comm, const double box_lo[3], const double box_len[3],
                      const hxt_spec *specs, int nspecs, uint64_t seed, hxt_case_fn fn, void *ctx);

/* A cpu transport of the given data type, or NULL (after a failed check). */
hx_transport *hxt_cpu_transport(hx_comm *c, hx_dtype dtype);

/* v reduced by whole edges of d's box along the dimensions with mi[k] set,
 * to its minimum image there (by heights, along z, y, x). */
void hxt_min_image(const hx_decomp *d, const int mi[3], double v[3]);

/* Every local atom's id (home_id for home atoms, then the halo), forwarded
 * as an int32 field with the coordinates through a double cpu transport
 * made here; its halo coordinates must be the plan's, bitwise (a failed
 * check names `what`). Returns ntotal + 1 ints (malloc'd). keep NULL: the
 * transport is destroyed; else *keep gets it (NULL if it could not be
 * made), still holding the plan, its field removed. Collective. */
int *hxt_forward_ids(hx_comm *comm, const hx_plan *plan, const int *home_id, const char *what,
                     hx_transport **keep);

/* One transport to test: a built transport's name, with or without the
 * put path (force_put), and its label ("name" or "name(put)"). */
typedef struct hxt_tvariant {
    const char *name;
    int put;
    char label[64];
} hxt_tvariant;

/* The built transports whose capabilities have every bit of `need` and
 * none of `skip`, in registry order; with `puts`, a peer transport
 * (HX_CAP_PEER) twice: without and with force_put. At most max; returns
 * how many. */
int hxt_transport_variants(unsigned need, unsigned skip, int puts, hxt_tvariant *v, int max);

/* Creates v's transport (opts o with v's name and force_put) on every rank
 * or on none. Where some rank could not, NULL, after checking that it
 * only refused (HX_ERR_UNSUPPORTED: a setting it cannot run in) and
 * printing "<label>: not run: <why>" on rank 0 and on a rank that failed
 * itself. Collective. */
hx_transport *hxt_transport_try(hx_comm *comm, const hx_transport_opts *o, const hxt_tvariant *v);

/* 1 when ok is non-zero on every rank (so that all ranks take the same
 * branch before further collective calls). Collective. */
int hxt_agree(hx_comm *c, int ok);

/* Bitwise equality of doubles and floats (so that -0.0 != 0.0 and NaN is
 * caught too). */
int hxt_same_d(double a, double b);
int hxt_same_f(float a, float b);

#endif /* HALOX_TESTS_SYSGEN_H */
