/*
 * sysgen.h - seeded random systems for the core tests, gathering them over
 * the ranks, and the brute-force checks that several tests share.
 *
 * Every rank generates the same global system from the same seed and keeps
 * the atoms it owns; after a migration the system is gathered back by global
 * id. The halo check compares a plan (and the cpu transport driven by it)
 * with what a brute-force walk of the staged forwarding chain says each rank
 * must hold.
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

/* The halo that brute force says this rank must hold. */
typedef struct hxt_expect {
    int n;         /* halo atoms */
    int64_t *id;   /* n */
    uint8_t *off;  /* n * 4: (ox, oy, oz, 0) */
    double *xd;    /* n * 3: coordinates in this rank's frame, double data */
    float *xf;     /* n * 3: the same, float data */
    uint8_t *wrap; /* n * 3: 1 where the chain wrapped along that dimension */
} hxt_expect;

/* Walks the forwarding chain of DESIGN.md for every atom of sys, using the
 * library's domain bounds of each sender (hx_decomp_init) but not its pulse
 * counts. */
void hxt_expect_halo(hxt_expect *e, const hxt_sys *sys, const hx_decomp *d);
void hxt_expect_free(hxt_expect *e);

/* Identifies every local atom of the plan by forwarding ids through the
 * double cpu transport td (set to this plan here): home coordinates are
 * id * HXT_ID_SCALE in each component, so a halo entry reads back as
 * id * HXT_ID_SCALE + shift with shift 0 or the box length. Returns a
 * malloc'd array of ntotal ids (-1 where the value does not decode), and
 * the decoded shifts (ntotal * 3, malloc'd) in *shift when not NULL.
 * Collective. */
#define HXT_ID_SCALE 1024.0
int64_t *hxt_trace_ids(hx_transport *td, const hx_plan *plan, const int64_t *home_ids,
                       double **shift);

/* The full halo check of one plan on this rank, against brute force over
 * sys (indexed by id): plan coordinates, zones, pulse metadata (gathered
 * over ranks), and cpu-transport forwards of double and float data. td and
 * tf are double and float cpu transports (created here when NULL). Returns
 * the ids of all ntotal local atoms (malloc'd) for further checks;
 * *nexpected gets the brute-force halo size of this rank. Collective. */
int64_t *hxt_check_halo(hx_comm *c, const hx_plan *plan, const hxt_sys *sys,
                        const int64_t *home_ids, hx_transport *td, hx_transport *tf,
                        int *nexpected);

/* A cpu transport of the given data type, or NULL (after a failed check). */
hx_transport *hxt_cpu_transport(hx_comm *c, hx_dtype dtype);

/* 1 when ok is non-zero on every rank (so that all ranks take the same
 * branch before further collective calls). Collective. */
int hxt_agree(hx_comm *c, int ok);

/* Bitwise equality of doubles and floats (so that -0.0 != 0.0 and NaN is
 * caught too). */
int hxt_same_d(double a, double b);
int hxt_same_f(float a, float b);

#endif /* HALOX_TESTS_SYSGEN_H */
