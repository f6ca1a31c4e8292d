/*
 * dmigrate_util.h - the fixture of test_dmigrate: the test context of one
 * grid (a random system, every rank's atoms as hx_migrate leaves them, the
 * device arrays), the device arrays' upload and download, the host float
 * wrap that the device must reproduce, the census, and one migration on
 * the device checked against hx_migrate (hxt_dm_migrate_case), or one that
 * must fail checked to have moved nothing (hxt_dm_check_untouched).
 *
 * Device atoms carry positions (xstride 3 or 4; the 4th word is payload,
 * (float) id + 0.25) and two fields, velocity (id, id + 0.5, -id, 7) and
 * the int64 id.
 */
#ifndef HALOX_TESTS_DMIGRATE_UTIL_H
#define HALOX_TESTS_DMIGRATE_UTIL_H

#include "gpucases.h"

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#define HXT_DM_MARGIN 1e-4 /* displaced atoms stay this far from every domain bound */
#define HXT_DM_MAXG   8    /* domains along a dimension, at most */

/* This rank's atoms on the device. */
typedef struct hxt_dm_dev {
    int n, cap, xs;
    float *x;      /* cap * xs */
    float *v;      /* cap * 4 */
    int64_t *id;   /* cap */
    int fields_ok; /* v and id hold the atoms of loc, in its order */
} hxt_dm_dev;

typedef struct hxt_dm_ctx {
    hx_comm *comm;
    hx_transport *t;
    hx_rebuild *r;
    hx_decomp d;
    int rank, nr, N, gi;
    char gs[32];
    double bound[3][HXT_DM_MAXG + 1]; /* domain bounds along each dimension */
    float ulp[3];                     /* of each box length, in float */
    float *cur;                       /* N * 3: every atom's position, the same on every rank */
    int nloc;
    int64_t *loc;    /* this rank's atoms in array order (as hx_migrate left them) */
    int64_t *allids; /* every rank's loc, in rank order */
    int *cnt, *first, *holder;
    int64_t nan4;  /* atom whose 4th word is a NaN (-1: none) */
    int any_order; /* the context migrates without order (hx_rebuild_keep_order(r, 0)): the
                      device's atoms are compared with hx_migrate's as a set, by id (two
                      fields needed), and loc follows the device's order */
    hxt_dm_dev a;
} hxt_dm_ctx;

/* The context of grid number gi: a random system of n atoms per rank in a
 * box of domains w_dom wide along decomposed dimensions and l_free long
 * along the others (lower corner box_lo, halo cutoff rh), every coordinate
 * a float HXT_DM_MARGIN away from every domain bound, each rank's atoms as
 * hxt_local_take gives them. No rebuild context and no device arrays yet.
 * Collective: 1 when it worked on every rank; hxt_dm_close either way. */
int hxt_dm_open(hxt_dm_ctx *c, hx_comm *comm, hx_transport *t, const int grid[3], int gi, int n,
                const double box_lo[3], double w_dom, double l_free, double rh);
/* Frees the device arrays and the host lists (not the rebuild context). */
void hxt_dm_close(hxt_dm_ctx *c);

/* 1 when x is outside the box along dimension k. */
int hxt_dm_outside_box(const hxt_dm_ctx *c, int k, float x);
/* Moves a target position along each dimension until its wrapped value is
 * HXT_DM_MARGIN away from every domain bound. */
void hxt_dm_settle(const hxt_dm_ctx *c, float *t);

/* Puts this rank's atoms (loc, positions tgt by id) into the device arrays:
 * every array when `full`, when the fields are not known to be in loc's
 * order, or when the arrays are made anew (stride changed, too small, or
 * `tight`: exactly nloc atoms, none at all for 0); otherwise the position
 * array alone, so that the fields go on from the last migration.
 * Collective: 1 when it worked on every rank. */
int hxt_dm_upload(hxt_dm_ctx *c, const float *tgt, int xs, int tight, int full);
/* 1 when e is cudaSuccess; else a failed check naming what. */
int hxt_dm_cuda_ok(cudaError_t e, const char *what);
/* The two fields of the device arrays, for hx_rebuild_migrate. */
void hxt_dm_fields_of(hxt_dm_ctx *c, hx_dfield f[2]);
/* How many places differ between the sorted copies of two id lists (and
 * the difference of their lengths). */
int hxt_dm_set_differs(const int64_t *a, int na, const int64_t *b, int nb);
/* hx_rebuild_census of the first n device ids. Collective: 1 when the
 * census ran on every rank. */
int hxt_dm_census(hxt_dm_ctx *c, int n, int64_t *natoms, uint64_t *sum);

/* One line on rank 0 per case: its text and whether any rank failed in it
 * (failures since fails0). Collective. */
void hxt_dm_summary(const hxt_dm_ctx *c, int fails0, const char *fmt, ...);
/* A case that cannot run on this grid: one line on rank 0. */
void hxt_dm_not_run(const hxt_dm_ctx *c, const char *what);

/* One migration from targets tgt (N * 3 by id, the same on every rank):
 * hx_rebuild_migrate on the device and hx_migrate on the host from the same
 * floats, then every check. Afterwards cur holds the wrapped targets and
 * loc hx_migrate's atoms. *moved (may be NULL) gets the atoms that changed
 * rank, over all ranks. Collective: 1 when both migrations ran everywhere. */
int hxt_dm_migrate_case(hxt_dm_ctx *c, const float *tgt, int xs, int nf, int tight, int full,
                        int *moved);
/* After a migration from targets tgt that must fail: the same n0 atoms in
 * the same order (loc's), each position the wrap of its target, the census
 * (na0 atoms, checksum cs0 before) unchanged. The atom `bad` (-1: none),
 * whose coordinates are not finite, is left out of the position check. */
void hxt_dm_check_untouched(hxt_dm_ctx *c, const float *tgt, int64_t bad, int n0, int64_t na0,
                            uint64_t cs0, const char *what);

#endif /* HALOX_TESTS_DMIGRATE_UTIL_H */
