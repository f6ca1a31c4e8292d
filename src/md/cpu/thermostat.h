/*
 * thermostat.h - the CPU engine's thermostats: LAMMPS's fix nvt (a
 * Nose-Hoover chain, as FixNH integrates it) and fix langevin's forces.
 * Not installed.
 */
#ifndef HALOX_MD_CPU_THERMOSTAT_H
#define HALOX_MD_CPU_THERMOSTAT_H

#include "md/md_config.h"

#include <stdint.h>

enum { HXI_MD_NH_MAX_CHAIN = HX_MD_NVT_MAX_CHAIN };

/* The chain's state and constants (FixNH's names). */
typedef struct hxi_md_nh {
    int mtchain, nc_tchain;
    double eta[HXI_MD_NH_MAX_CHAIN];
    double eta_dot[HXI_MD_NH_MAX_CHAIN + 1]; /* the last stays 0 */
    double eta_dotdot[HXI_MD_NH_MAX_CHAIN];
    double eta_mass[HXI_MD_NH_MAX_CHAIN];
    double t_start, t_stop, t_freq, tdrag_factor;
    double t_target, ke_target, t_current, tdof;
    double dthalf, dt4, dt8;
} hxi_md_nh;

/* FixNH::init and setup: constants from cfg (nvt, dt), tdof degrees of
 * freedom, and the chain's masses and forces at the temperature t_now. */
void hxi_md_nh_setup(hxi_md_nh *nh, const hx_md_config *cfg, double tdof, double t_now);
/* FixNH::compute_temp_target: the target `done` steps into a run of
 * `steps`, ramped from t_start to t_stop. */
void hxi_md_nh_target(hxi_md_nh *nh, int64_t done, int64_t steps);
/* FixNH::nhc_temp_integrate: a half step of the chain from nh->t_current,
 * scaling the n atoms' velocities v (3 per atom). */
void hxi_md_nh_half(hxi_md_nh *nh, double *v, int n);

/* The target of fix langevin `done` steps into a run of `steps`. */
double hxi_md_langevin_target(const hx_md_langevin *l, int64_t done, int64_t steps);
/* FixLangevin::post_force for n atoms at temperature t, of mass
 * mass[type[i] - 1] (mass[0] where type is NULL):
 * f += -m v / damp + sqrt(24 k t m / (dt damp)) (u - 1/2) per component,
 * u uniform in (0, 1) from the seed, the atom's id and the step, so that
 * the forces do not depend on which rank holds the atom. */
void hxi_md_langevin_forces(const hx_md_langevin *l, const double *mass, const int32_t *type,
                            double dt, double t, int64_t step, const int64_t *id, const double *v,
                            double *f, int n);
/* The uniform number of component k (0..2) of atom id at step. */
double hxi_md_langevin_uniform(int seed, int64_t id, int64_t step, int k);

#endif /* HALOX_MD_CPU_THERMOSTAT_H */
