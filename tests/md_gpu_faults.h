/*
 * md_gpu_faults.h - the failures test_md_gpu provokes on the GPU engine
 * (md_gpu_faults.c), each with the system its caller sets up.
 */
#ifndef HALOX_TESTS_MD_GPU_FAULTS_H
#define HALOX_TESTS_MD_GPU_FAULTS_H

#include "md/md.h"

/* The caller's system of cfg (the same atoms as its other runs). */
typedef hx_status (*hxt_md_setup_fn)(hx_comm *comm, const hx_md_config *cfg, hx_md_system *sys);

/* --withhold: graph mode (nvshmem-fused) with the last rank skipping its
 * coordinate sends in one replayed step (a 1 s timeout). base: `every N
 * check no` (the failure must come back at the check of step N on every
 * rank) or `every 1 check yes` (voted: within a step of the withheld one,
 * the same step on every rank), HX_ERR_TIMEOUT either way; the engine
 * must go away cleanly. steps: at least 40. Returns 0 when it ran, 1
 * when it could not (one rank, no nvshmem-fused, refused). Collective. */
int hxt_md_gpu_withhold(hx_comm *comm, const hx_md_config *base, int steps, hxt_md_setup_fn setup);

/* The list check, checked: with the halo's reach moved up by rh
 * (HALOX_MD_CHECK=bad-reach), home atoms near the upper faces skip the
 * halo and lose neighbours; the first device rebuild (base: `every N
 * check no`, step N) must fail with HX_ERR_STATE on every rank, naming
 * the lists. Collective. */
void hxt_md_gpu_bad_reach(hx_comm *comm, const hx_md_config *base, hxt_md_setup_fn setup);

#endif /* HALOX_TESTS_MD_GPU_FAULTS_H */
