/*
 * oracle.h - the brute-force checks the core tests share: the halo a walk
 * of the staged forwarding chain (docs/design.md) says each rank must hold, the
 * ids of a plan's local atoms traced through the cpu transport, and the
 * full check of a plan against both.
 */
#ifndef HALOX_TESTS_ORACLE_H
#define HALOX_TESTS_ORACLE_H

#include "sysgen.h"

/* The halo that brute force says this rank must hold. */
typedef struct hxt_expect {
    int n;         /* halo atoms */
    int64_t *id;   /* n */
    uint8_t *off;  /* n * 4: (ox, oy, oz, 0) */
    double *xd;    /* n * 3: coordinates in this rank's frame, double data */
    float *xf;     /* n * 3: the same, float data */
    uint8_t *wrap; /* n * 3: 1 where the chain wrapped along that dimension */
} hxt_expect;

/* Walks the forwarding chain of docs/design.md for every atom of sys, using the
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

#endif /* HALOX_TESTS_ORACLE_H */
