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
 */
#include "md/cpu/thermostat.h"

#include <math.h>

void hxi_md_nh_target(hxi_md_nh *nh, int64_t done, int64_t steps)
{
    double delta = (double) done;
    if (steps > 0)
        delta /= (double) steps;
    else
        delta = 0.0;
    nh->t_target = nh->t_start + delta * (nh->t_stop - nh->t_start);
    nh->ke_target = nh->tdof * nh->t_target;
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

/* eta_dotdot[0] from the current kinetic energy. */
static void nh_force0(hxi_md_nh *nh)
{
    const double kecurrent = nh->tdof * nh->t_current;
    nh->eta_dotdot[0] = nh->eta_mass[0] > 0.0 ? (kecurrent - nh->ke_target) / nh->eta_mass[0] : 0.0;
}

void hxi_md_nh_half(hxi_md_nh *nh, double *v, int n)
{
    const int mt = nh->mtchain;
    const double ncfac = 1.0 / nh->nc_tchain;
    double *ed = nh->eta_dot, *edd = nh->eta_dotdot, *mass = nh->eta_mass;
    double expfac;

    /* Masses follow the target (eta_mass_flag, on in LAMMPS). */
    mass[0] = nh->tdof * nh->t_target / (nh->t_freq * nh->t_freq);
    for (int ich = 1; ich < mt; ich++)
        mass[ich] = nh->t_target / (nh->t_freq * nh->t_freq);
    nh_force0(nh);
    for (int iloop = 0; iloop < nh->nc_tchain; iloop++) {
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
        for (int i = 0; i < 3 * n; i++)
            v[i] *= factor_eta;
        /* The temperature scales with the velocities: no new sum. */
        nh->t_current *= factor_eta * factor_eta;
        nh_force0(nh);

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
    }
}

double hxi_md_langevin_target(const hx_md_langevin *l, int64_t done, int64_t steps)
{
    double delta = (double) done;
    if (delta != 0.0)
        delta /= (double) steps;
    return l->t_start + delta * (l->t_stop - l->t_start);
}

/* splitmix64's output function: a bijective mix of 64 bits. */
static uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double hxi_md_langevin_uniform(int seed, int64_t id, int64_t step, int k)
{
    uint64_t h = mix64((uint64_t) (uint32_t) seed);
    h = mix64(h ^ (uint64_t) id);
    h = mix64(h ^ (uint64_t) step);
    h = mix64(h + (uint64_t) k);
    /* 53 bits, centred in their interval: in (0, 1), mean 1/2. */
    return ((double) (h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
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
