/*
 * thermostat.c - fix nvt and fix langevin on the GPU engine: their set-up
 * (the chain as the CPU engine starts it, hxi_md_nh_setup, or as a
 * restart file left it), the launches the step files make at the start
 * and the end of a step (md_thermostat.h says which kernel does what),
 * and the chain's state for gather and restart files.
 *
 * Per step, fix nvt adds one one-thread kernel before the kick-drift
 * (whose scale is fused into the kick-drift), a sum of m v^2 over the home
 * atoms (one read of the velocities) and a scale of them (a read and a
 * write). One rank: the sum's last block runs the chain, nothing returns
 * to the host, and the step stays in its CUDA graph. Several ranks: the
 * sum goes over the ranks on the host (one double a rank, one
 * MPI_Allreduce through hxi_allreduce_double a step, after waiting for
 * the local stream), then a one-thread kernel runs the chain; those steps
 * are not replayed from graphs (graph mode is off with a thermostat).
 * fix langevin adds one kernel after the forces (a read of v, id and f, a
 * write of f) and, on one rank, moves the closing kick out of the local
 * force kernel into its own (it must follow the noise).
 */
#include "md/gpu/engine.h"

#include "md/md_driver.h"

#include <stdio.h>
#include <string.h>

/* The temperature of sys's velocities, as the CPU engine sums it (in
 * double, over every rank). Collective. */
static hx_status host_temperature(hx_md_engine *e, double *t)
{
    const hx_md_system *s = e->sys;
    const double dof = 3.0 * (double) s->natoms - 3.0;
    double mv2 = 0.0;
    for (int i = 0; i < 3 * s->n; i++)
        mv2 += hxi_md_mass_of(&e->cfg, s->type ? s->type[i / 3] : 1) * s->v[i] * s->v[i];
    HXI_CHECK(hxi_allreduce_double(e->comm, &mv2, 1, 0));
    *t = dof > 0 ? mv2 / dof : 0.0;
    return HX_OK;
}

/* fix nvt's chain at the start of a run: anew from the velocities, or, for
 * a restart file's chain of the same length, where it was (as the CPU
 * engine and LAMMPS's fix nvt do); on the device. Collective. */
static hx_status nh_setup(hx_md_engine *e)
{
    hxg_nh_dev h;
    double t_now = 0.0;
    const hx_md_system *s = e->sys;
    memset(&h, 0, sizeof h);
    HXI_CHECK(host_temperature(e, &t_now));
    hxi_md_nh_setup(&h.nh, &e->cfg, 3.0 * (double) s->natoms - 3.0, t_now);
    if (s->has_nh && s->nh_n == h.nh.mtchain) {
        const int m = s->nh_n;
        for (int k = 0; k < m; k++) {
            h.nh.eta[k] = s->nh[k];
            h.nh.eta_dot[k] = s->nh[m + k];
            h.nh.eta_dotdot[k] = s->nh[2 * m + k];
        }
        h.nh.t_current = s->nh_t;
    }
    h.steps = e->cfg.steps;
    h.scale = 1.0f;
    hx_status st = hxg_eng_dev_grow(&e->therm.nh, &(size_t){0}, sizeof h, "fix nvt's chain");
    if (st == HX_OK && cudaMemcpy(e->therm.nh, &h, sizeof h, cudaMemcpyHostToDevice) != cudaSuccess)
        st = cuda_fail(cudaGetLastError(), "fix nvt's chain upload");
    if (st == HX_OK && e->multi &&
        cudaHostAlloc((void **) &e->therm.host, sizeof(double), cudaHostAllocDefault) !=
            cudaSuccess)
        st = cuda_fail(cudaGetLastError(), "pinned host allocation");
    return hxi_agree(e->comm, st);
}

hx_status hxg_eng_therm_setup(hx_md_engine *e)
{
    const hx_md_config *c = &e->cfg;
    if (c->langevin.on) {
        const hx_md_langevin *l = &c->langevin;
        e->therm.lang_on = 1;
        e->therm.lang = (hxg_langevin){.t_start = l->t_start,
                                       .t_stop = l->t_stop,
                                       .damp = l->damp,
                                       .dt = c->dt,
                                       .mass = c->mass,
                                       .first_step = c->first_step,
                                       .steps = c->steps,
                                       .seed = l->seed};
        e->therm.lang.ntypes = c->types.ntypes > 1 ? c->types.ntypes : 1;
        for (int t = 0; t < e->therm.lang.ntypes && t < HXG_MAX_TYPES; t++)
            e->therm.lang.masses[t] = hxi_md_mass_of(c, t + 1);
        /* LAMMPS's fix langevin setup(): the term at step 0 joins the
         * first forces, which the first kick reads. */
        HXI_CHECK(hxg_eng_therm_langevin(e, NULL, 0));
        CU(cudaStreamSynchronize(e->dev.s_loc), "fix langevin's first forces");
    }
    return c->nvt.on ? nh_setup(e) : HX_OK;
}

void hxg_eng_therm_free(struct hxg_therm *t)
{
    if (t->nh)
        cudaFree(t->nh);
    if (t->host)
        cudaFreeHost(t->host);
    t->nh = NULL;
    t->host = NULL;
}

hx_status hxg_eng_therm_begin(hx_md_engine *e, const hxg_flags *gate, int64_t done)
{
    if (e->therm.nh && e->cfg.nve)
        CU(hxg_nh_begin((void *) e->dev.s_loc, e->therm.nh, gate, done), "fix nvt launch");
    return HX_OK;
}

hx_status hxg_eng_therm_langevin(hx_md_engine *e, const hxg_flags *gate, int64_t done)
{
    if (e->therm.lang_on)
        CU(hxg_langevin_forces((void *) e->dev.s_loc, hxg_eng_atoms_view(e), e->therm.lang, gate,
                               done),
           "fix langevin launch");
    return HX_OK;
}

hx_status hxg_eng_therm_close_single(hx_md_engine *e, double *acc, const hxg_flags *gate,
                                     int64_t done)
{
    const hxg_atoms_view a = hxg_eng_atoms_view(e);
    if (e->therm.lang_on) {
        HXI_CHECK(hxg_eng_therm_langevin(e, gate, done));
        CU(hxg_kick((void *) e->dev.s_loc, a, NULL, hxg_eng_consts(e), acc, gate), "kick launch");
    }
    if (e->therm.nh && e->cfg.nve) {
        CU(hxg_nh_ke((void *) e->dev.s_loc, a, e->phys.mass, e->phys.ty, e->therm.nh, 1, gate),
           "fix nvt launch");
        CU(hxg_nh_scale((void *) e->dev.s_loc, a, e->therm.nh, acc, gate), "fix nvt launch");
    }
    return HX_OK;
}

/* This rank's sum m v^2 after the closing kick, on the host. */
static hx_status local_mv2(hx_md_engine *e, double *mv2)
{
    hxg_nh_dev *nh = e->therm.nh;
    CU(hxg_nh_ke((void *) e->dev.s_loc, hxg_eng_atoms_view(e), e->phys.mass, e->phys.ty, nh, 0,
                 NULL),
       "fix nvt launch");
    CU(cudaMemcpyAsync(e->therm.host, &nh->mv2, sizeof(double), cudaMemcpyDeviceToHost,
                       e->dev.s_loc),
       "fix nvt read-back");
    CU(cudaStreamSynchronize(e->dev.s_loc), "fix nvt's kinetic sum");
    *mv2 = *e->therm.host;
    return HX_OK;
}

hx_status hxg_eng_therm_end_multi(hx_md_engine *e, double *acc)
{
    if (!e->therm.nh || !e->cfg.nve)
        return HX_OK;
    double mv2 = 0.0;
    hxg_nh_dev *nh = e->therm.nh;
    /* Every rank reaches the sum, a failed one with its error agreed after. */
    hx_status st = local_mv2(e, &mv2);
    HXI_CHECK(hxi_allreduce_double(e->comm, &mv2, 1, 0));
    if (st == HX_OK) {
        *e->therm.host = mv2; /* no copy from it is pending: the stream was waited for */
        if (cudaMemcpyAsync(&nh->mv2_all, e->therm.host, sizeof(double), cudaMemcpyHostToDevice,
                            e->dev.s_loc) != cudaSuccess ||
            hxg_nh_end((void *) e->dev.s_loc, nh, NULL) != 0 ||
            hxg_nh_scale((void *) e->dev.s_loc, hxg_eng_atoms_view(e), nh, acc, NULL) != 0)
            st = cuda_fail(cudaGetLastError(), "fix nvt launch");
    }
    return hxi_agree(e->comm, st);
}

hx_status hxg_eng_therm_gather(hx_md_engine *e, hx_md_system *sys)
{
    hxg_nh_dev h;
    sys->has_nh = 0;
    if (!e->therm.nh)
        return HX_OK;
    CU(cudaMemcpy(&h, e->therm.nh, sizeof h, cudaMemcpyDeviceToHost), "fix nvt's chain read-back");
    const int m = h.nh.mtchain;
    sys->nh_n = m;
    sys->nh_t = h.nh.t_current;
    memcpy(sys->nh, h.nh.eta, (size_t) m * sizeof(double));
    memcpy(sys->nh + m, h.nh.eta_dot, (size_t) m * sizeof(double));
    memcpy(sys->nh + 2 * m, h.nh.eta_dotdot, (size_t) m * sizeof(double));
    sys->has_nh = 1;
    return HX_OK;
}

void hxg_eng_therm_describe(const hx_md_engine *e, char *buf, size_t n)
{
    const hx_md_config *c = &e->cfg;
    size_t k = strlen(buf);
    if (c->nvt.on && k < n)
        k += (size_t) snprintf(
            buf + k, n - k,
            "; fix nvt temp %g %g %g (tchain %d, tloop %d, drag %g; chain on "
            "the GPU%s)",
            c->nvt.t_start, c->nvt.t_stop, c->nvt.t_damp, c->nvt.tchain, c->nvt.tloop, c->nvt.drag,
            e->multi ? ", kinetic energy summed over the ranks on the host" : "");
    if (c->langevin.on && k < n)
        snprintf(buf + k, n - k, "; fix langevin %g %g %g %d (noise by atom id and step)",
                 c->langevin.t_start, c->langevin.t_stop, c->langevin.damp, c->langevin.seed);
}
