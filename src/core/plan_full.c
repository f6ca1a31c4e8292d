/*
 * plan_full.c - the full-shell halo plan (LAMMPS's `newton off`): every
 * atom within the cutoff of a home atom is held, so that a rank computes
 * every pair with a home atom itself and nothing goes back.
 *
 * Along Z, then Y, then X, each decomposed dimension runs pulses in both
 * directions through plan.c's hxi_plan_pulse_run: down (dir -1) sends the
 * atoms within the cutoff of the domain's lower face, up (dir +1) those
 * within the cutoff of its upper face. The first pulse of each direction
 * takes its candidates from every atom held before the dimension began
 * (home atoms and what earlier dimensions delivered, both directions), so
 * edges and corners arrive; pulse k > 0 of a direction forwards what pulse
 * k - 1 of that direction delivered. Neither direction reads what the
 * other delivered, so their dependency masks (hxi_plan_summarise) name
 * earlier dimensions and their own direction only, and a transport may
 * send both at once. Pulses are ordered down 0, up 0, down 1, up 1, ...
 * per dimension.
 */
#include "core/hxi.h"
#include "core/plan.h"

int hxi_plan_full_fits(const hx_decomp *d)
{
    return 2 * (d->npulse[0] + d->npulse[1] + d->npulse[2]) <= HX_MAX_PULSES;
}

hx_status hxi_plan_full_check(const hx_decomp *d)
{
    int n = d->npulse[0] + d->npulse[1] + d->npulse[2];
    if (!hxi_plan_full_fits(d))
        return hxi_error(HX_ERR_INVALID,
                         "a full-shell plan needs %d pulses (%d per direction) but at most %d "
                         "fit: use fewer domains along the thinnest dimension (a grid of "
                         "hx_grid_choose_full) or the eighth shell (hx_plan_create)",
                         2 * n, n, HX_MAX_PULSES);
    return HX_OK;
}

hx_status hxi_plan_full_pulses(hx_plan *p, hxi_plan_work *w)
{
    for (int dim = HX_Z; dim >= HX_X; dim--) {
        /* prev[0]: the last pulse down, prev[1]: the last pulse up. */
        int held = p->ntotal, prev[2] = {-1, -1};
        for (int k = 0; k < p->decomp.npulse[dim]; k++)
            for (int s = 0; s < 2; s++) {
                int lo = 0, hi = held;
                if (k > 0) {
                    const hx_pulse *q = &p->pulse[prev[s]];
                    lo = q->recv_offset;
                    hi = q->recv_offset + q->nrecv;
                }
                prev[s] = p->npulses;
                HXI_CHECK(hxi_plan_pulse_run(p, w, dim, s ? 1 : -1, k, lo, hi));
            }
    }
    return HX_OK;
}

hx_status hx_plan_create_full(hx_plan **out, hx_comm *comm, const hx_decomp *d, int nhome,
                              const double *x)
{
    return hxi_plan_build(out, comm, d, nhome, x, 1);
}
