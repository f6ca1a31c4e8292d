/*
 * restart.h - halox-md's restart files (restart.c has the layout). Not
 * installed.
 */
#ifndef HALOX_MD_RESTART_H
#define HALOX_MD_RESTART_H

#include "md/md_driver.h"

/* What a restart file's header holds. */
typedef struct hxi_md_restart {
    int64_t step;   /* the step the state is at */
    int64_t natoms; /* atoms, ids 0 .. natoms - 1 */
    int cells[3];   /* the lattice it was made from */
    double density;
    double box_lo[3], box_len[3];
    double mass, rc, epsilon, sigma, dt;
    int shift_energy;
} hxi_md_restart;

/* Collective: sys holds this rank's atoms (engine gather); rank 0 writes
 * the state at `step` to path as restart.c describes. Every rank returns
 * the same status; on failure the previous file at path is untouched. */
hx_status hxi_md_restart_write(hxi_md_gather *g, hx_comm *comm, const char *path,
                               const hx_md_system *sys, const hx_md_config *cfg, int64_t step);
/* Collective: whether rank 0 can write a restart file at path (a file in
 * its directory is created and removed), so that a run finds out at its
 * start, not at its first checkpoint. */
hx_status hxi_md_restart_probe(hx_comm *comm, const char *path);
/* Collective: the header, checked on rank 0 and broadcast. */
hx_status hxi_md_restart_read_header(hx_comm *comm, const char *path, hxi_md_restart *h);
/* Collective: this rank's atoms (those its domain owns; sys->decomp set)
 * into sys, after the whole payload's checksum matched. */
hx_status hxi_md_restart_read_atoms(hx_comm *comm, const char *path, const hxi_md_restart *h,
                                    hx_md_system *sys);
/* The file's system and physics into cfg: lattice, density, and mass, pair
 * and timestep where cfg->given does not say the deck or the command line
 * set them after the file was named. */
void hxi_md_restart_apply(const hxi_md_restart *h, hx_md_config *cfg);

#endif
