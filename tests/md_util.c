/*
 * md_util.c - set-up and helpers of the MD tests (md_util.h).
 */
#include "md_util.h"

#include "core/hxi.h"
#include "md/md_driver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

hx_status hxt_md_system(hx_comm *comm, const hx_md_config *cfg, hx_md_system *sys)
{
    double lo[3], len[3];
    memset(sys, 0, sizeof *sys);
    HXI_CHECK(hx_md_box(cfg, lo, len));
    /* The deck's box: tilted where cfg says (zero tilts give hx_decomp_init's). */
    HXI_CHECK(hx_decomp_init_tilted(&sys->decomp, lo, len, cfg->tilt, hxi_md_list_cutoff(cfg),
                                    cfg->grid, hx_comm_size(comm), hx_comm_rank(comm)));
    HXI_CHECK(hx_md_lattice(sys, cfg));
    return hx_md_velocities(sys, cfg, comm);
}

hx_status hxt_md_setup(hx_comm *comm, const hx_md_config *cfg, hx_md_system *sys,
                       hx_md_engine **eng)
{
    *eng = NULL;
    HXI_CHECK(hxt_md_system(comm, cfg, sys));
    return hx_md_engine_cpu.create(eng, comm, cfg, sys);
}

void hxt_md_free(hx_md_system *sys, hx_md_engine *eng)
{
    if (eng)
        hx_md_engine_cpu.destroy(eng);
    free(sys->x);
    free(sys->v);
    free(sys->id);
    free(sys->xref);
    memset(sys, 0, sizeof *sys);
}

hx_status hxt_md_by_id(hx_comm *comm, const hx_md_system *sys, const double *vals, int k,
                       double *all)
{
    memset(all, 0, (size_t) sys->natoms * k * sizeof(double));
    for (int i = 0; i < sys->n; i++)
        memcpy(all + (size_t) sys->id[i] * k, vals + (size_t) i * k, k * sizeof(double));
    return hxi_allreduce_double(comm, all, (int) (sys->natoms * k), 0);
}

int hxt_md_close(double a, double b, double rel, double floor)
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    if (m < floor)
        m = floor;
    return fabs(a - b) <= rel * m;
}
