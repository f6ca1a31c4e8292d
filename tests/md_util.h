/*
 * md_util.h - set-up shared by the MD tests: a system and a CPU engine
 * from a config, on any communicator, and global arrays indexed by atom id.
 */
#ifndef HALOX_TESTS_MD_UTIL_H
#define HALOX_TESTS_MD_UTIL_H

#include "hxtest.h"

#include "md/deck.h"
#include "md/md.h"

/* Box, decomposition, lattice and velocities, as halox-md sets them up. */
hx_status hxt_md_system(hx_comm *comm, const hx_md_config *cfg, hx_md_system *sys);

/* hxt_md_system and a CPU engine. */
hx_status hxt_md_setup(hx_comm *comm, const hx_md_config *cfg, hx_md_system *sys,
                       hx_md_engine **eng);
/* The engine (when not NULL) and the system's arrays. */
void hxt_md_free(hx_md_system *sys, hx_md_engine *eng);

/* Every rank's per-atom values (k per atom) placed by global id in
 * all[natoms * k] on every rank: each id has exactly one writer, so the sum
 * over ranks is exact. */
hx_status hxt_md_by_id(hx_comm *comm, const hx_md_system *sys, const double *vals, int k,
                       double *all);

/* |a - b| within rel of the larger magnitude (and at least rel * floor). */
int hxt_md_close(double a, double b, double rel, double floor);

#endif /* HALOX_TESTS_MD_UTIL_H */
