/*
 * thermostat.c - LAMMPS's fix nvt and fix langevin for the CPU engine.
 *
 * fix nvt (FixNH, thermostat only, lj units: k = 1): a chain of mtchain
 * thermostats with masses Q_1 = tdof k T / w^2 and Q_k = k T / w^2,
 * w = 1 / TDAMP, updated over a half step (nc_tchain sub-steps, Trotter
 * order: chain from its end, eta_dot[0], velocities scaled by
 * exp(-dt/2 eta_dot[0]), eta, chain back) before the first kick and after
 * the second, the target ramped from TSTART to TSTOP over the run.
 *
 * fix langevin: after the forces, f += gamma1 v + gamma2 (u - 1/2) with
 * gamma1 = -m / damp and gamma2 = sqrt(m) sqrt(24 k / (damp dt)) sqrt(T),
 * as LAMMPS's default (uniform) noise. LAMMPS draws u from one stream per
 * process, so its trajectories depend on the process count; here u is a
 * hash of the seed, the atom id, the step and the component, so that they
 * do not (and so they cannot match LAMMPS's atom for atom).
 *
 * The chain's half step and the noise's hash are md/thermostat_math.h's,
 * which the GPU engine's kernels run too.
 */
#include "md/cpu/thermostat.h"

#include "md/thermostat_math.h"

#include <math.h>

void hxi_md_nh_target(hxi_md_nh *nh, int64_t done, int64_t steps)
{
    hxi_md_nh_target_at(nh, done, steps);
}

void hxi_md_nh_setup(hxi_md_nh *nh, const hx_md_config *cfg, double tdof, double t_now)
{
    const int m = cfg->nvt.tchain < HXI_MD_NH_MAX_CHAIN ? cfg->nvt.tchain : HXI_MD_NH_MAX_CHAIN;
    *nh = (hxi_md_nh){0};
    nh->mtchain = m > 0 ? m : 1;
    nh->nc_tchain = cfg->nvt.tloop > 0 ? cfg->nvt.tloop : 1;
    nh->t_start = cfg->nvt.t_start;
    nh->t_stop = cfg->nvt.t_stop;
    nh->t_freq = 1.0 / cfg->nvt.t_damp;
    nh->tdrag_factor = 1.0 - (cfg->dt * nh->t_freq * cfg->nvt.drag / nh->nc_tchain);
    nh->dthalf = 0.5 * cfg->dt;
    nh->dt4 = 0.25 * cfg->dt;
    nh->dt8 = 0.125 * cfg->dt;
    nh->tdof = tdof;
    hxi_md_nh_target(nh, 0, 0);
    nh->t_current = t_now;
    nh->eta_mass[0] = tdof * nh->t_target / (nh->t_freq * nh->t_freq);
    for (int ich = 1; ich < nh->mtchain; ich++)
        nh->eta_mass[ich] = nh->t_target / (nh->t_freq * nh->t_freq);
    for (int ich = 1; ich < nh->mtchain; ich++)
        nh->eta_dotdot[ich] =
            (nh->eta_mass[ich - 1] * nh->eta_dot[ich - 1] * nh->eta_dot[ich - 1] - nh->t_target) /
            nh->eta_mass[ich];
}

void hxi_md_nh_half(hxi_md_nh *nh, double *v, int n)
{
    hxi_md_nh_masses(nh);
    for (int iloop = 0; iloop < nh->nc_tchain; iloop++) {
        const double factor_eta = hxi_md_nh_substep(nh);
        for (int i = 0; i < 3 * n; i++)
            v[i] *= factor_eta;
    }
}

double hxi_md_langevin_target(const hx_md_langevin *l, int64_t done, int64_t steps)
{
    return hxi_md_langevin_target_at(l->t_start, l->t_stop, done, steps);
}

double hxi_md_langevin_uniform(int seed, int64_t id, int64_t step, int k)
{
    return hxi_md_langevin_u(seed, id, step, k);
}

void hxi_md_langevin_forces(const hx_md_langevin *l, const double *mass, const int32_t *type,
                            double dt, double t, int64_t step, const int64_t *id, const double *v,
                            double *f, int n)
{
    double gamma1 = -mass[0] / l->damp;
    double gamma2 = sqrt(mass[0]) * sqrt(24.0 / l->damp / dt) * sqrt(t);
    for (int i = 0; i < n; i++) {
        if (type) { /* LAMMPS's per-type gfactor1 and gfactor2 */
            const double m = mass[type[i] - 1];
            gamma1 = -m / l->damp;
            gamma2 = sqrt(m) * sqrt(24.0 / l->damp / dt) * sqrt(t);
        }
        for (int k = 0; k < 3; k++) {
            const double fran = gamma2 * (hxi_md_langevin_uniform(l->seed, id[i], step, k) - 0.5);
            f[3 * i + k] += gamma1 * v[3 * i + k] + fran;
        }
    }
}
