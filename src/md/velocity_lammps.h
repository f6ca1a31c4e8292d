/*
 * velocity_lammps.h - LAMMPS's `velocity all create` (velocity_lammps.c).
 */
#ifndef HALOX_MD_VELOCITY_LAMMPS_H
#define HALOX_MD_VELOCITY_LAMMPS_H

#include "md/md.h"

/* Velocities at cfg->temperature > 0 as LAMMPS's `velocity all create T
 * SEED dist D loop L mom M rot R` sets them on the same atoms (ids, x and
 * mass as halox-md's lattice gives them). Collective; every rank returns
 * the same status. */
hx_status hx_md_velocities_lammps(hx_md_system *sys, const hx_md_config *cfg, hx_comm *comm);

#endif
