/*
 * md_thermostat.h - the GPU engine's thermostat kernels (md_thermostat.cu)
 * as its host code (thermostat.c, the step files) sees them: fix nvt's
 * chain in device memory and fix langevin's force term. Compiles as C11
 * and as CUDA C++; needs no CUDA header.
 *
 * fix nvt, a step (FixNH's order, the CPU engine's: md/cpu/engine_cpu.c):
 *   hxg_nh_begin   one thread: the target of the step, the first half of
 *                  the chain from t_current; writes the factor `scale`
 *   kick-drift     v = scale v + dtf f (hxg_consts.vscale), x += dt v
 *   forces, closing kick
 *   hxg_nh_ke      sum m v^2 of the home atoms; one rank: its last block
 *                  runs the second half of the chain (several ranks: the
 *                  host sums over the ranks, then hxg_nh_end does)
 *   hxg_nh_scale   v *= scale (the second half's factor)
 * Every kernel reads the chain from device memory, so that a step needs no
 * host round trip on one rank and is captured into its CUDA graph.
 */
#ifndef HALOX_MD_GPU_THERMOSTAT_H
#define HALOX_MD_GPU_THERMOSTAT_H

#include "md/cpu/thermostat.h"
#include "md/gpu/md_gpu.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* fix nvt's chain on the device: every rank holds the same one. mv2: the
 * sum m v^2 of this rank's home atoms (hxg_nh_ke adds into it; the chain's
 * second half zeroes it), mv2_all: the sum over the ranks, which the host
 * puts there (several ranks). blocks: hxg_nh_ke's blocks done. scale: the
 * factor of the last half step. */
typedef struct hxg_nh_dev {
    hxi_md_nh nh;
    int64_t steps; /* the run's steps: the target's ramp */
    double mv2, mv2_all;
    int32_t blocks;
    float scale;
} hxg_nh_dev;

/* fix langevin's constants (the force term of hxg_langevin_forces). */
typedef struct hxg_langevin {
    double t_start, t_stop, damp, dt, mass;
    int64_t first_step, steps;
    int32_t seed;
    int32_t ntypes; /* > 1: each atom's mass by its type, from masses */
    double masses[HXG_MAX_TYPES];
} hxg_langevin;

/* done: the step of the run (1 for its first); done < 0: flags->cur, the
 * device-resident step's counter (before the local forces count it). Every
 * kernel below does nothing while flags != NULL and flags->halt. */

/* One thread: FixNH's target `done` steps into the run, then the first
 * half of the chain; nh->scale = its factor. */
int hxg_nh_begin(void *stream, hxg_nh_dev *nh, const hxg_flags *flags, int64_t done);

/* nh->mv2 += sum mass v^2 over the a.nhome home atoms (ty.n > 1: the
 * mass of each atom's type). chain: the last block to finish also runs
 * hxg_nh_end's work from nh->mv2 (one rank). */
int hxg_nh_ke(void *stream, hxg_atoms_view a, float mass, hxg_types ty, hxg_nh_dev *nh, int chain,
              const hxg_flags *flags);

/* One thread: t_current = nh->mv2_all / tdof, the second half of the
 * chain, nh->scale = its factor, nh->mv2 = 0 (several ranks). */
int hxg_nh_end(void *stream, hxg_nh_dev *nh, const hxg_flags *flags);

/* v *= nh->scale over the a.nhome home atoms; acc != NULL (a thermo step,
 * whose closing kick summed m v^2 into acc before this scale): the sum
 * scaled by scale^2. */
int hxg_nh_scale(void *stream, hxg_atoms_view a, const hxg_nh_dev *nh, double *acc,
                 const hxg_flags *flags);

/* fix langevin at step `done` (done < 0: flags->cur - 1, the device-
 * resident step after its local forces counted it): f4 += -m v / damp +
 * sqrt(24 m T / (damp dt)) (u - 1/2) per component over the home atoms,
 * T ramped as hxi_md_langevin_target, u the hash of the seed, the atom's
 * id, the step (first_step + done) and the component that the CPU engine
 * draws (md/thermostat_math.h). */
int hxg_langevin_forces(void *stream, hxg_atoms_view a, hxg_langevin p, const hxg_flags *flags,
                        int64_t done);

#ifdef __cplusplus
}
#endif

#endif /* HALOX_MD_GPU_THERMOSTAT_H */
