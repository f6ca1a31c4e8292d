/*
 * test_md_util.h - set-up shared by the MD tests: a system and a CPU engine
 * from a config, on any communicator, and global arrays indexed by atom id.
 */
#ifndef HALOX_TEST_MD_UTIL_H
#define HALOX_TEST_MD_UTIL_H

#include "hxtest.h"

#include "core/hxi.h"
#include "md/deck.h"
#include "md/md.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Box, decomposition, lattice, velocities and a CPU engine, as halox-md
 * sets them up. */
static inline hx_status tmd_setup(hx_comm *comm, const hx_md_config *cfg, hx_md_system *sys,
                                  hx_md_engine **eng)
{
    double lo[3], len[3];
    memset(sys, 0, sizeof *sys);
    *eng = NULL;
    HXI_CHECK(hx_md_box(cfg, lo, len));
    HXI_CHECK(hx_decomp_init(&sys->decomp, lo, len, cfg->rc + cfg->skin, cfg->grid,
                             hx_comm_size(comm), hx_comm_rank(comm)));
    HXI_CHECK(hx_md_lattice(sys, cfg));
    HXI_CHECK(hx_md_velocities(sys, cfg, comm));
    return hx_md_engine_cpu.create(eng, comm, cfg, sys);
}

static inline void tmd_free(hx_md_system *sys, hx_md_engine *eng)
{
    if (eng)
        hx_md_engine_cpu.destroy(eng);
    free(sys->x);
    free(sys->v);
    free(sys->id);
    memset(sys, 0, sizeof *sys);
}

/* Every rank's per-atom values (k per atom) placed by global id in
 * all[natoms * k] on every rank: each id has exactly one writer, so the sum
 * over ranks is exact. */
static inline hx_status tmd_by_id(hx_comm *comm, const hx_md_system *sys, const double *vals, int k,
                                  double *all)
{
    memset(all, 0, (size_t) sys->natoms * k * sizeof(double));
    for (int i = 0; i < sys->n; i++)
        memcpy(all + (size_t) sys->id[i] * k, vals + (size_t) i * k, k * sizeof(double));
    return hxi_allreduce_double(comm, all, (int) (sys->natoms * k), 0);
}

/* |a - b| within rel of the larger magnitude (and at least rel * floor). */
static inline int tmd_close(double a, double b, double rel, double floor)
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    if (m < floor)
        m = floor;
    return fabs(a - b) <= rel * m;
}

#endif /* HALOX_TEST_MD_UTIL_H */
