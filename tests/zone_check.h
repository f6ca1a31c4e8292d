/*
 * zone_check.h - checks of a plan against brute force in any box
 * (orthorhombic or triclinic) and any decomposition (equal or set cuts):
 * random systems at uniform fractional coordinates, each atom's id carried
 * through the cpu transport, and every pair within a cutoff computed
 * exactly once over the ranks by the zone rule (hx_zone_pair).
 */
#ifndef HALOX_TESTS_ZONE_CHECK_H
#define HALOX_TESTS_ZONE_CHECK_H

#include "sysgen.h"

/* x = box_lo + s0 a + s1 b + s2 c. */
void hxt_frac_to_x(const hx_decomp *d, const double s[3], double x[3]);
/* n atoms at uniform fractional coordinates strictly inside d's box
 * (malloc'd, 3 doubles each); the same on every rank for one seed. */
double *hxt_frac_system(const hx_decomp *d, int n, uint64_t seed);
/* The atoms of X (n) that d->rank owns: their ids and coordinates
 * (malloc'd); returns how many. */
int hxt_take_owned(const hx_decomp *d, const double *X, int n, int **id, double **x);
/* want: each of the N atoms X moved by up to `reach` of each edge of d's
 * box, drawn from seed (the same on every rank, so all know where each
 * atom goes). */
void hxt_random_moves(const hx_decomp *d, const double *X, int N, double reach, uint64_t seed,
                      double *want);
/* The payload component k that atom id carries through a migration. */
double hxt_payload(int id, int k);
/* |a - b|^2 with the minimum image of d's box along the dimensions with
 * mi[k] set. */
double hxt_dist2(const hx_decomp *d, const int mi[3], const double *a, const double *b);

/* A double cpu transport carrying the atoms' ids as an int32 field. It
 * must stay where it is once opened (the field holds &ids). */
typedef struct hxt_idt {
    hx_transport *t;
    int *ids;
    int fid;
} hxt_idt;
/* 1 on success on every rank. Collective. */
int hxt_idt_open(hx_comm *comm, hxt_idt *it);
/* Sets plan on it->t, forwards the home ids with the home coordinates and
 * checks that the transport's halo coordinates are the plan's, bitwise.
 * Returns it->ids (ntotal entries; -1 where nothing arrived) or NULL.
 * Collective. */
const int *hxt_idt_run(hxt_idt *it, const hx_plan *plan, const int *home_id, const char *what);
void hxt_idt_close(hxt_idt *it);

/* Every pair of the N atoms X within rc computed exactly once over the
 * ranks by the zone rule on each rank's plan (ids: every local atom's id),
 * against brute force with the minimum image (rank 0 compares); and each
 * halo atom is its atom moved by a lattice vector. Collective. */
void hxt_check_zone_pairs(hx_comm *comm, const hx_plan *plan, const int *ids, const double *X,
                          int N, double rc, const char *what);

#endif /* HALOX_TESTS_ZONE_CHECK_H */
