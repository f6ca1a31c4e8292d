/*
 * restart.h - halox-md's restart files (restart_header.c has the layout). Not
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
    double tilt[3]; /* xy, xz, yz (version 5; 0 before): whole half lattice cells */
    double mass, rc, dt;
    int pair_style;                 /* HX_PAIR_* (versions 1 and 2: lj/cut) */
    double pair[HX_MD_PAIR_NPARAM]; /* its parameters (hx_md_config.pair) */
    int shift_energy;
    int width;                           /* doubles a record: 6 (x, v) or 9 (x, v, list position) */
    int64_t ago;                         /* steps since the last list build (-1: width 6) */
    double skin;                         /* the neighbour skin of that build */
    uint64_t trailer_bytes, trailer_sum; /* fix nvt's chain after the records */
    hx_md_types types;  /* version 4's types block (ntypes 1 where the file has none) */
    uint64_t types_sum; /* its checksum */
    /* version 6: the decomposition's cuts where it had any (restart_cuts.c) */
    uint64_t cuts_block; /* its bytes after the header (read: the header's size - 256) */
    unsigned cut_mask;   /* bit d: cuts along d (0: uniform domains, no block) */
    int cut_grid[3];     /* the rank grid they were made for */
    double cut[3][HX_MAX_CUT_DOMAINS + 1];
} hxi_md_restart;

/* The types' block of a version 4 file (restart_types.c). */
#define HXI_MD_RST_TYPES 2696
void hxi_md_restart_types_encode(unsigned char *b, const hx_md_types *t);
hx_status hxi_md_restart_types_decode(const unsigned char *b, hx_md_types *t, const char *path);
/* The file's types into cfg, but for the pairs and masses the deck gave
 * after read_restart (cfg->given, types.mass_given). */
void hxi_md_restart_types_apply(const hx_md_types *file, hx_md_config *cfg);

/* The largest step a restart file may hold: a run of up to as many steps
 * more still fits the step counter. */
#define HXI_MD_STEP_MAX ((int64_t) 1 << 62)

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
 * into sys, after the whole payload's checksum matched and every atom is
 * finite and near the box. With list positions (width 9) an atom's owner
 * is the domain of its list position, and sys->xref, ref_ago and has_ref
 * are set. */
hx_status hxi_md_restart_read_atoms(hx_comm *comm, const char *path, const hxi_md_restart *h,
                                    hx_md_system *sys);
/* The file's system and physics into cfg: lattice, density, and mass, pair
 * and timestep where cfg->given does not say the deck or the command line
 * set them after the file was named. */
void hxi_md_restart_apply(const hxi_md_restart *h, hx_md_config *cfg);
/* The file's cuts (version 6) into d where d has the file's rank grid and
 * the run's halo cutoff fits them; else d stays uniform and rank 0 prints
 * a note saying why (restart_cuts.c). Either engine takes them. */
void hxi_md_restart_cuts_restore(const hxi_md_restart *h, hx_decomp *d, const char *path);

/* ------------------------------------------- during a run (checkpoint.c) */

/* Collective: the engine's atoms written as a restart file at absolute step
 * abs (any kind: write_restart's file, a checkpoint). */
hx_status hxi_md_write_state(hx_comm *comm, const hx_md_engine_ops *ops, hx_md_engine *eng,
                             hx_md_system *sys, const hx_md_config *cfg, const char *path,
                             int64_t abs, hxi_md_gather *g);

/* The checkpoints of a run: how many, when, how long they took. */
typedef struct hxi_md_ckpt {
    hxi_md_gather g;
    int count;
    int64_t last_step;
    double last_s, max_s; /* seconds the last and the longest write took */
    int noted;            /* the note on a launcher's grace was considered */
} hxi_md_ckpt;

/* Collective: the checkpoint (cfg->checkpoint_file) at absolute step abs,
 * timed; step_s, the seconds a step takes, goes into rank 0's note where a
 * stop's write would not fit in mpirun's grace. */
hx_status hxi_md_ckpt_write(hxi_md_ckpt *k, hx_comm *comm, const hx_md_engine_ops *ops,
                            hx_md_engine *eng, hx_md_system *sys, const hx_md_config *cfg,
                            int64_t abs, double step_s);
void hxi_md_ckpt_free(hxi_md_ckpt *k);
/* Rank 0: one line of the run's checkpoints, where it wrote any. */
void hxi_md_ckpt_summary(const hxi_md_ckpt *k, const hx_md_config *cfg);
/* Rank 0: why the run stopped early (reason: a signal, or -1 for
 * --max-hours) after absolute step `last`, and where its state went. */
void hxi_md_stop_message(const hxi_md_ckpt *k, const hx_md_config *cfg, int reason, int64_t last);

#endif
