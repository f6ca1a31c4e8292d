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

/* ------------------------------------------ neighbour lists (config.c) */

/* The neighbour-list cutoff and the decomposition's halo cutoff: rc + skin. */
double hxi_md_list_cutoff(const hx_md_config *c);
/* Whether the step `ago` steps after the last list build may rebuild:
 * LAMMPS's Neighbor::decide without the half-skin test (every N steps once
 * `delay` steps have passed). Both engines ask this. */
int hxi_md_rebuild_candidate(const hx_md_config *c, int64_t ago);
/* 1 where a run left to choose its engine takes the CPU engine whatever
 * the devices (run.c): domains of their own widths. */
int hxi_md_cpu_only(const hx_md_config *cfg);

/* ---------------------------------------------------------------- output */

/* The thermo header and rows of c's thermo_style (thermo.c). */
void hxi_md_thermo_header(FILE *out, const hx_md_config *c);
void hxi_md_thermo_row(FILE *out, const hx_md_config *c, const hx_md_thermo *t);
/* The hx_md_thermo_col of a thermo_style custom keyword, or -1. */
int hxi_md_thermo_keyword(const char *word);
/* The keywords read, blank-separated, for messages. */
const char *hxi_md_thermo_keywords(void);
/* The thermo and thermostat settings of c that no engine can run
 * (HX_ERR_INVALID; HX_ERR_UNSUPPORTED for what is not done yet). */
hx_status hxi_md_thermo_config_check(const hx_md_config *c);

/* Every rank's atoms on rank 0 by global id (gather.c). */
typedef struct hxi_md_gather {
    int width;   /* doubles a record: 6 (x, v) or 9 (x, v, xref), + 1 where typed */
    int typed;   /* the last double of a record is the atom's type */
    double *all; /* rank 0: natoms records, by id */
    int64_t cap_all;
    double *pack; /* this rank: n (id, record) pairs */
    int64_t cap_pack;
    int *counts, *displs;
} hxi_md_gather;
/* Collective: sys holds this rank's current atoms; every id must be held
 * by exactly one rank. with_ref: the records hold sys->xref too where
 * sys->has_ref says it is there (the same on every rank). `what` names
 * the caller in messages. */
hx_status hxi_md_gather_by_id(hxi_md_gather *g, hx_comm *comm, const hx_md_system *sys,
                              int with_ref, const char *what);
void hxi_md_gather_free(hxi_md_gather *g);

/* Trajectories written by rank 0 from every rank's atoms (dump.c). */
typedef struct hxi_md_dump hxi_md_dump;
/* Collective. */
hx_status hxi_md_dump_open(hxi_md_dump **dump, hx_comm *comm, const char *path,
                           hx_md_dump_style style);
/* Collective: sys holds this rank's current atoms (engine gather). */
hx_status hxi_md_dump_frame(hxi_md_dump *dump, const hx_md_system *sys, int64_t step, double time);
/* Closes rank 0's file: a write error there is rank 0's error alone. */
hx_status hxi_md_dump_close(hxi_md_dump *dump);

/* ------------------------------------------------------ stopping (stop.c) */

typedef struct hxi_md_stop {
    double max_seconds; /* 0: no time limit */
    double t_start;     /* hxi_now() when the program started */
    int64_t next_check; /* the step after which the ranks look next */
    int reason;         /* 0: none; a signal number; -1: the time limit */
} hxi_md_stop;

/* SIGTERM and SIGINT set a flag that hxi_md_stop_poll() reads. */
void hxi_md_stop_install(void);
void hxi_md_stop_init(hxi_md_stop *p, double max_hours, double t_start);
/* Collective after step s (counted from 1 in this run) when s is
 * p->next_check: sets p->reason when a rank saw a signal or the time limit
 * passed. loop_seconds: this rank's time in the loop so far. */
hx_status hxi_md_stop_poll(hxi_md_stop *p, hx_comm *comm, int64_t s, double loop_seconds);

#endif /* HALOX_MD_DRIVER_H */
