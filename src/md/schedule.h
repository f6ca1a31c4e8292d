/*
 * schedule.h - when the run loop of halox-md does something besides
 * stepping: in the manner of LAMMPS's Output::next, each kind of event
 * answers the next step at which it happens, and the loop hands the engine
 * every step up to the nearest one. Not installed.
 *
 * Steps are those of this run, counted from 1 (the absolute step is
 * first + s). An event "after step s" happens once step s has run; one
 * "before step s" before it starts.
 *
 * After a step: a thermo row (every thermo_every steps, the last step of
 * the run, and the step a stop request ends it after), a dump frame, a
 * restart file (a checkpoint, write_restart's file, or the checkpoint of a
 * stop), the end of a timed stretch, and the stop check. Before a step: the
 * start of a timed stretch, and a thermo step (the engine sums energies
 * while it runs).
 */
#ifndef HALOX_MD_SCHEDULE_H
#define HALOX_MD_SCHEDULE_H

#include "md/md.h"

#include <stdint.h>

/* "No such step": later than any. */
#define HXI_MD_NEVER INT64_MAX

typedef struct hxi_md_sched {
    int64_t first;         /* the absolute step the run starts from */
    int64_t steps;         /* the steps of this run */
    int64_t stop_at;       /* a stop request ends the run after this step (-1: none) */
    int thermo_every;      /* 0: the last step only */
    int dump_every;        /* 0: no dump */
    int checkpoint_every;  /* 0: none */
    int64_t restart_after; /* write_restart's step (-1: none) */
    int stretch_every;     /* timed stretches between periodic rebuilds (0: none) */
} hxi_md_sched;

/* The schedule of a run of `steps` steps from absolute step `first`;
 * dumping: a dump file is open. */
void hxi_md_sched_init(hxi_md_sched *c, const hx_md_config *cfg, int64_t first, int64_t steps,
                       int dumping);

/* The first step >= s after which a thermo row, a dump frame or a restart
 * file (any kind) is written, or after which a timed stretch may end; the
 * first step >= s before which a timed stretch starts (a whole stretch of
 * stretch_every steps must be left). HXI_MD_NEVER where none. */
int64_t hxi_md_next_thermo(const hxi_md_sched *c, int64_t s);
int64_t hxi_md_next_dump(const hxi_md_sched *c, int64_t s);
int64_t hxi_md_next_restart(const hxi_md_sched *c, int64_t s);
int64_t hxi_md_next_stretch_end(const hxi_md_sched *c, int64_t s);
int64_t hxi_md_next_stretch_start(const hxi_md_sched *c, int64_t s);

/* Whether step s has an event of that kind. */
static inline int hxi_md_thermo_at(const hxi_md_sched *c, int64_t s)
{
    return hxi_md_next_thermo(c, s) == s;
}
static inline int hxi_md_dump_at(const hxi_md_sched *c, int64_t s)
{
    return hxi_md_next_dump(c, s) == s;
}
static inline int hxi_md_restart_at(const hxi_md_sched *c, int64_t s)
{
    return hxi_md_next_restart(c, s) == s;
}

/* The last step of the run of steps from s on that the engine can take at
 * once (ops->steps): no event after any of them but the last, none before
 * any of them but the first, and no thermo step after the first (the stop
 * check after next_check counts). At most `cap` steps. */
int64_t hxi_md_sched_next(const hxi_md_sched *c, int64_t s, int64_t next_check, int64_t cap);

#endif /* HALOX_MD_SCHEDULE_H */
