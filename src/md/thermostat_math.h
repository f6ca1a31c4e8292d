/*
 * thermostat_math.h - the arithmetic of fix nvt's chain and fix
 * langevin's noise that both engines run: the CPU engine from
 * md/cpu/thermostat.c, the GPU engine in its one-thread chain kernel and
 * its force kernel (md/gpu/md_thermostat.cu), so that the two compute the
 * same chain and draw the same numbers for the same atom and step.
 * Compiles as C11 and as CUDA C++ (functions are host and device there).
 * Not installed.
 */
#ifndef HALOX_MD_THERMOSTAT_MATH_H
#define HALOX_MD_THERMOSTAT_MATH_H

#include "md/cpu/thermostat.h"

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define HXI_HD __host__ __device__
#else
#define HXI_HD
#endif

/* FixNH::compute_temp_target: the target `done` steps into a run of
 * `steps`, ramped from t_start to t_stop. */
HXI_HD static inline void hxi_md_nh_target_at(hxi_md_nh *nh, int64_t done, int64_t steps)
{
    double delta = (double) done;
    if (steps > 0)
        delta /= (double) steps;
    else
        delta = 0.0;
    nh->t_target = nh->t_start + delta * (nh->t_stop - nh->t_start);
    nh->ke_target = nh->tdof * nh->t_target;
}

/* eta_dotdot[0] from the current kinetic energy. */
HXI_HD static inline void hxi_md_nh_force0(hxi_md_nh *nh)
{
    const double kecurrent = nh->tdof * nh->t_current;
    nh->eta_dotdot[0] = nh->eta_mass[0] > 0.0 ? (kecurrent - nh->ke_target) / nh->eta_mass[0] : 0.0;
}

/* The start of a half step: the masses follow the target (eta_mass_flag,
 * on in LAMMPS), and the first thermostat's force. */
HXI_HD static inline void hxi_md_nh_masses(hxi_md_nh *nh)
{
    nh->eta_mass[0] = nh->tdof * nh->t_target / (nh->t_freq * nh->t_freq);
    for (int ich = 1; ich < nh->mtchain; ich++)
        nh->eta_mass[ich] = nh->t_target / (nh->t_freq * nh->t_freq);
    hxi_md_nh_force0(nh);
}

/* One of the nc_tchain sub-steps of a half step (FixNH::nhc_temp_integrate's
 * loop body): returns the factor the velocities are scaled by, the chain
 * and t_current updated as if they were. */
HXI_HD static inline double hxi_md_nh_substep(hxi_md_nh *nh)
{
    const int mt = nh->mtchain;
    const double ncfac = 1.0 / nh->nc_tchain;
    double *ed = nh->eta_dot, *edd = nh->eta_dotdot, *mass = nh->eta_mass;
    double expfac;

    for (int ich = mt - 1; ich > 0; ich--) {
        expfac = exp(-ncfac * nh->dt8 * ed[ich + 1]);
        ed[ich] *= expfac;
        ed[ich] += edd[ich] * ncfac * nh->dt4;
        ed[ich] *= nh->tdrag_factor;
        ed[ich] *= expfac;
    }
    expfac = exp(-ncfac * nh->dt8 * ed[1]);
    ed[0] *= expfac;
    ed[0] += edd[0] * ncfac * nh->dt4;
    ed[0] *= nh->tdrag_factor;
    ed[0] *= expfac;

    const double factor_eta = exp(-ncfac * nh->dthalf * ed[0]);
    /* The temperature scales with the velocities: no new sum. */
    nh->t_current *= factor_eta * factor_eta;
    hxi_md_nh_force0(nh);

    for (int ich = 0; ich < mt; ich++)
        nh->eta[ich] += ncfac * nh->dthalf * ed[ich];
    ed[0] *= expfac;
    ed[0] += edd[0] * ncfac * nh->dt4;
    ed[0] *= expfac;
    for (int ich = 1; ich < mt; ich++) {
        expfac = exp(-ncfac * nh->dt8 * ed[ich + 1]);
        ed[ich] *= expfac;
        edd[ich] = (mass[ich - 1] * ed[ich - 1] * ed[ich - 1] - nh->t_target) / mass[ich];
        ed[ich] += edd[ich] * ncfac * nh->dt4;
        ed[ich] *= expfac;
    }
    return factor_eta;
}

/* A whole half step of the chain from nh->t_current: the product of its
 * sub-steps' factors (the GPU engine scales the velocities once by it). */
HXI_HD static inline double hxi_md_nh_half_factor(hxi_md_nh *nh)
{
    double f = 1.0;
    hxi_md_nh_masses(nh);
    for (int iloop = 0; iloop < nh->nc_tchain; iloop++)
        f *= hxi_md_nh_substep(nh);
    return f;
}

/* fix langevin's target `done` steps into a run of `steps`. */
HXI_HD static inline double hxi_md_langevin_target_at(double t_start, double t_stop, int64_t done,
                                                      int64_t steps)
{
    double delta = (double) done;
    if (delta != 0.0)
        delta /= (double) steps;
    return t_start + delta * (t_stop - t_start);
}

/* splitmix64's output function: a bijective mix of 64 bits. */
HXI_HD static inline uint64_t hxi_md_mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The uniform number of component k (0..2) of atom id at step, in (0, 1):
 * a hash of the seed, the id, the step and the component. */
HXI_HD static inline double hxi_md_langevin_u(int seed, int64_t id, int64_t step, int k)
{
    uint64_t h = hxi_md_mix64((uint64_t) (uint32_t) seed);
    h = hxi_md_mix64(h ^ (uint64_t) id);
    h = hxi_md_mix64(h ^ (uint64_t) step);
    h = hxi_md_mix64(h + (uint64_t) k);
    /* 53 bits, centred in their interval: in (0, 1), mean 1/2. */
    return ((double) (h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

#endif /* HALOX_MD_THERMOSTAT_MATH_H */
