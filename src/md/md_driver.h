/*
 * md_driver.h - what the driver of halox-md shares with the engines: a wall
 * clock, the thermo table and the trajectory writer. Not installed.
 */
#ifndef HALOX_MD_DRIVER_H
#define HALOX_MD_DRIVER_H

#include "core/hxi.h"
#include "md/md.h"

#include <stdint.h>
#include <stdio.h>

/* Wall-clock seconds from an arbitrary origin (monotonic). */
double hxi_md_now(void);

/* ---------------------------------------------------------------- output */

/* LAMMPS's `thermo_style one` header and rows. */
void hxi_md_thermo_header(FILE *out);
void hxi_md_thermo_row(FILE *out, const hx_md_thermo *t);

/* Extended XYZ trajectory written by rank 0 from every rank's atoms. */
typedef struct hxi_md_dump hxi_md_dump;
/* Collective. */
hx_status hxi_md_dump_open(hxi_md_dump **dump, hx_comm *comm, const char *path,
                           hx_md_dump_style style);
/* Collective: sys holds this rank's current atoms (engine gather). */
hx_status hxi_md_dump_frame(hxi_md_dump *dump, const hx_md_system *sys, int64_t step, double time);
void hxi_md_dump_close(hxi_md_dump *dump);

#endif /* HALOX_MD_DRIVER_H */
