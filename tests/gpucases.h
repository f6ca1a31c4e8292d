/*
 * gpucases.h - the cases the GPU transport tests share: the grids per rank
 * count, the boxes, and the walk over grids and systems with the plans'
 * lifetimes handled (a transport keeps its plan by pointer, so a plan is
 * destroyed only once the next one has replaced it).
 */
#ifndef HALOX_TESTS_GPUCASES_H
#define HALOX_TESTS_GPUCASES_H

#include "sysgen.h"

/* Halo cutoff of every case. */
#define HXT_GPU_RH 2.8

/* Reads --grid AxBxC (repeatable) from argv, else takes two grids for 2, 4
 * or 8 ranks (2: 1x1x2 and 2x1x1; 4: 2x2x1 and 1x1x4 with 2 pulses; 8:
 * 2x2x2 and 2x1x4). Returns 0 when the test can run, else the exit code of
 * a skip (no CUDA device, or no grid for this rank count), printed once. */
int hxt_gpu_setup(hx_comm *comm, int argc, char **argv, int grids[8][3], int *ngrids);

/* The GPU tests' walk (hxt_walk_plans): the given grids, each in its box
 * (a dimension of 3 or more domains gets width 2.1 per domain, so rh 2.8
 * needs 2 pulses; else a box of 12), a random system at density 0.8442 and
 * then one of three times the atoms (so that buffers grow), plans kept
 * until the next has replaced them. */
hxt_walk hxt_gpu_walk(const int grids[][3], int ngrids, uint64_t seed);

/* Tilts (fractions of lx, lx, ly for xy, xz, yz) of the triclinic cases
 * the GPU tests add to their orthorhombic walk: a fifth of the box, and
 * LAMMPS's limits with mixed signs. */
#define HXT_GPU_NTILTS 2
extern const double hxt_gpu_tilts[HXT_GPU_NTILTS][3];

/* A transport under test. */
typedef struct hxt_gpu_entry {
    hx_transport *t;
    char label[64];
    int alive;    /* passed every case so far */
    void *last_x; /* its coordinate array after the previous plan */
    int moved;    /* plans after which that array had moved */
} hxt_gpu_entry;

typedef struct hxt_gpu_set {
    hxt_gpu_entry *e;
    int n;
} hxt_gpu_set;

/* An hxt_case_fn (ctx: an hxt_gpu_set): ten steps on one plan with the
 * home atoms moving a little each step, every live entry against a float
 * cpu transport. Halo coordinates must be bitwise equal (unwritten entries
 * are poisoned with NaN first), and home forces after the reverse of
 * random forces equal to 1e-6 relative (of max(|f|, 1)); on a full-shell
 * plan the reverse is refused (HX_ERR_STATE) instead. An entry that fails
 * on any rank is dropped from later cases. */
void hxt_gpu_check_plan(hx_comm *comm, const hxt_case *c, void *ctx);

#endif /* HALOX_TESTS_GPUCASES_H */
