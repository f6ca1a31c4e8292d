/*
 * test_md_thermostat_math.c - md/thermostat_math.h as the two engines use
 * it (CPU only, one rank):
 *  - the GPU engine scales the velocities once per half step by the
 *    product of the sub-steps' factors (hxi_md_nh_half_factor), the CPU
 *    engine by each factor in turn (hxi_md_nh_half): over 200 half steps
 *    of a chain of 4 with 3 sub-steps, drag and a ramp, the two leave the
 *    chain bit for bit the same and the velocities within 1e-13 relative;
 *  - the noise: hxi_md_langevin_uniform (the CPU engine's) is the hash the
 *    GPU kernel calls, in (0, 1), with mean 1/2 and variance 1/12 within 4
 *    standard errors over 300,000 draws, and a different number for
 *    another seed, id, step or component.
 */
#include "hxtest.h"

#include "md/cpu/thermostat.h"
#include "md/md.h"
#include "md/thermostat_math.h"

#include <math.h>
#include <string.h>

enum { NV = 30, HALVES = 200 };

static void chain_cases(void)
{
    hx_md_config cfg;
    hxi_md_nh cpu, gpu;
    double v[NV], w[NV];
    hx_md_config_defaults(&cfg);
    cfg.nvt.on = 1;
    cfg.nvt.t_start = 1.5;
    cfg.nvt.t_stop = 0.9;
    cfg.nvt.t_damp = 0.2;
    cfg.nvt.tchain = 4;
    cfg.nvt.tloop = 3;
    cfg.nvt.drag = 0.2;
    for (int i = 0; i < NV; i++)
        v[i] = w[i] = sin(1.0 + i) * 1.3;
    hxi_md_nh_setup(&cpu, &cfg, 3.0 * NV / 3 - 3.0, 1.2);
    gpu = cpu;
    for (int h = 0; h < HALVES; h++) {
        /* Both see the temperature of their own velocities (the GPU's
         * after its sum, the CPU's carried), as each engine does. */
        double mv2 = 0.0;
        for (int i = 0; i < NV; i++)
            mv2 += v[i] * v[i];
        cpu.t_current = gpu.t_current = mv2 / cpu.tdof;
        hxi_md_nh_target(&cpu, h / 2 + 1, HALVES / 2);
        hxi_md_nh_target_at(&gpu, h / 2 + 1, HALVES / 2);
        hxi_md_nh_half(&cpu, v, NV / 3);
        const double f = hxi_md_nh_half_factor(&gpu);
        for (int i = 0; i < NV; i++)
            w[i] *= f;
        /* Keep both on the same velocities, as a kick would. */
        for (int i = 0; i < NV; i++) {
            const double d = fabs(v[i] - w[i]) / fmax(fabs(v[i]), 1e-300);
            HXT_CHECK(d < 1e-13, "half step %d, v[%d]: %.17g against %.17g", h, i, v[i], w[i]);
            w[i] = v[i];
        }
    }
    HXT_CHECK(memcmp(&cpu, &gpu, sizeof cpu) == 0,
              "the chain after %d half steps: one scale by the product, or one by each "
              "sub-step's factor, leaves it the same (eta[0] %.17g against %.17g)",
              HALVES, cpu.eta[0], gpu.eta[0]);
    HXT_CHECK(cpu.t_target > 0.89 && cpu.t_target < 0.91, "the ramp ends at %g, want 0.9",
              cpu.t_target);
}

static void noise_cases(void)
{
    const int n = 100000;
    double s = 0.0, s2 = 0.0, lo = 1.0, hi = 0.0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            const double u = hxi_md_langevin_uniform(48279, i + 1, 17, k);
            HXT_CHECK(u == hxi_md_langevin_u(48279, i + 1, 17, k), "one hash for both engines");
            s += u;
            s2 += u * u;
            lo = fmin(lo, u);
            hi = fmax(hi, u);
        }
    const double m = s / (3.0 * n), var = s2 / (3.0 * n) - m * m;
    /* The mean's standard error is sqrt(1/12 / 3n); the variance's about
     * sqrt(1/180 / 3n) (the fourth central moment of a uniform is 1/80). */
    HXT_CHECK(fabs(m - 0.5) < 4.0 * sqrt(1.0 / 12.0 / (3.0 * n)), "mean %.6f, want 1/2", m);
    HXT_CHECK(fabs(var - 1.0 / 12.0) < 4.0 * sqrt(1.0 / 180.0 / (3.0 * n)),
              "variance %.6f, want 1/12", var);
    HXT_CHECK(lo > 0.0 && hi < 1.0, "draws in (0, 1): %g to %g", lo, hi);
    const double u0 = hxi_md_langevin_u(5, 7, 11, 0);
    HXT_CHECK(u0 != hxi_md_langevin_u(6, 7, 11, 0) && u0 != hxi_md_langevin_u(5, 8, 11, 0) &&
                  u0 != hxi_md_langevin_u(5, 7, 12, 0) && u0 != hxi_md_langevin_u(5, 7, 11, 1),
              "another seed, id, step or component draws another number");
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_md_thermostat_math");
    chain_cases();
    noise_cases();
    return hxt_finish(comm);
}
