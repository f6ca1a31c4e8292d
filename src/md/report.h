/*
 * report.h - what halox-md reports after its run: LAMMPS's loop and
 * performance lines, then halox's summary (stage times, the median speed
 * of the timed stretches between rebuilds) and, on request, one CSV row
 * for halox-bench md. Not installed.
 */
#ifndef HALOX_MD_REPORT_H
#define HALOX_MD_REPORT_H

#include "md/md_driver.h"

/* Per-step times of the stretches between rebuilds (slowest rank each). */
typedef struct hxi_md_segments {
    double *us;
    int n, cap;
} hxi_md_segments;

hx_status hxi_md_segments_add(hxi_md_segments *g, double v);
/* With marks (ops->mark), the stretches hold their step counts: each
 * becomes its per-step time, from the engine's device times, the slowest
 * rank's. Collective: every rank timed the same stretches. */
hx_status hxi_md_segments_marked(hx_comm *comm, const hx_md_engine_ops *ops, hx_md_engine *eng,
                                 hxi_md_segments *g);

/* Collective; rank 0 prints. loop: this rank's loop time; out_time: its
 * time writing output in the loop; setup: the time before the first step. */
hx_status hxi_md_summary(hx_comm *comm, const hx_md_engine_ops *ops, hx_md_engine *eng,
                         const hx_md_config *cfg, int64_t natoms, int64_t steps, double loop,
                         double out_time, double setup, hxi_md_segments *segs);

#endif /* HALOX_MD_REPORT_H */
