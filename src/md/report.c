/*
 * report.c - halox-md's report after the run (report.h).
 */
#include "md/report.h"
#include "md/trace.h" /* hxi_md_stage_name */
#include "core/outfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hx_status hxi_md_segments_add(hxi_md_segments *g, double v)
{
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 64;
        HXI_CHECK(hxi_grow((void **) &g->us, sizeof(double) * (size_t) cap, "stretch timings"));
        g->cap = cap;
    }
    g->us[g->n++] = v;
    return HX_OK;
}

/* With marks (ops->mark), the stretches hold their step counts: each
 * becomes its per-step time, from the engine's device times, the slowest
 * rank's. Collective: every rank timed the same stretches. */
hx_status hxi_md_segments_marked(hx_comm *comm, const hx_md_engine_ops *ops, hx_md_engine *eng,
                                 hxi_md_segments *g)
{
    double *sec = NULL;
    hx_status st = hxi_alloc((void **) &sec, sizeof(double) * (size_t) (g->n + 1), "stretch times");
    if (st == HX_OK)
        st = ops->stretch_seconds(eng, sec, g->n);
    st = hxi_agree(comm, st);
    if (st == HX_OK && g->n > 0)
        st = hxi_allreduce_double(comm, sec, g->n, 1);
    for (int k = 0; st == HX_OK && k < g->n; k++)
        g->us[k] = 1e6 * sec[k] / g->us[k];
    free(sec);
    return st;
}

static int hxi_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* Median of the recorded stretches, or -1 where none was recorded. */
static double hxi_segments_median(hxi_md_segments *g)
{
    if (g->n == 0)
        return -1;
    qsort(g->us, (size_t) g->n, sizeof(double), hxi_cmp_double);
    return g->n % 2 ? g->us[g->n / 2] : 0.5 * (g->us[g->n / 2 - 1] + g->us[g->n / 2]);
}

/* One CSV row for halox-bench md; the header is written to a new file.
 * Rank 0; a file that cannot take it is an error. */
static hx_status hxi_stats_row(const hx_md_config *cfg, const char *engine, const char *how,
                               int ranks, int64_t natoms, int64_t steps, int64_t rebuilds,
                               double median_us, double mean_us, double tau_day, double aps,
                               const double *stage_avg, double tloop)
{
    hxi_outfile o;
    HXI_CHECK(hxi_out_open(&o, cfg->stats_csv, "--stats-csv", HXI_OUT_APPEND));
    FILE *f = o.fp;
    if (ftell(f) == 0)
        fprintf(f, "engine,transport,ranks,atoms,steps,rebuilds,us_step_median,us_step_mean,"
                   "tau_day,atom_steps_s,local,nonlocal,halo_fwd,halo_rev,neigh,migrate_plan,"
                   "integrate,other,how\n");
    fprintf(f, "%s,%s,%d,%lld,%lld,%lld,%.3f,%.3f,%.1f,%.6g", engine,
            cfg->transport[0] ? cfg->transport : "default", ranks, (long long) natoms,
            (long long) steps, (long long) rebuilds, median_us, mean_us, tau_day, aps);
    for (int k = 0; k < HX_MD_NSTAGES; k++)
        fprintf(f, ",%.4f", tloop > 0 ? stage_avg[k] / tloop : 0.0);
    /* The description may hold commas: quote it. */
    fputs(",\"", f);
    for (const char *c = how; *c; c++)
        fputc(*c == '"' ? '\'' : *c, f);
    fputs("\"\n", f);
    return hxi_out_commit(&o);
}

/* LAMMPS's line on dangerous builds, or what the engine counted instead
 * with check no (LAMMPS says only "not checked" there); then the pairs
 * that lists had lost, where the engine found any. */
static void hxi_danger_line(const hx_md_stats *st, const hx_md_config *cfg)
{
    if (st->danger == HX_MD_DANGER_FIRST)
        printf("Dangerous builds = %lld\n", (long long) st->dangerous);
    else if (st->danger == HX_MD_DANGER_MOVED)
        printf("Dangerous builds not checked; rebuilds after an atom moved more than half the "
               "skin (%g) = %lld\n",
               0.5 * cfg->skin, (long long) st->dangerous);
    if (st->danger != HX_MD_DANGER_NONE && st->missed_pairs > 0)
        printf("Pairs within the cutoff the lists had missed = %lld (at most %.3g%% of them at "
               "one rebuild)\n",
               (long long) st->missed_pairs, 100.0 * st->missed_share);
}

/* LAMMPS's loop line and performance line, then halox's summary. */
hx_status hxi_md_summary(hx_comm *comm, const hx_md_engine_ops *ops, hx_md_engine *eng,
                         const hx_md_config *cfg, int64_t natoms, int64_t steps, double loop,
                         double out_time, double setup, hxi_md_segments *segs)
{
    const hx_md_stats *st = ops->stats(eng);
    int size = hx_comm_size(comm), rank = hx_comm_rank(comm);
    double sum[HX_MD_NSTAGES + 1], max[HX_MD_NSTAGES + 1];
    double tloop, t_step, tau_day, aps;
    hx_status csv = HX_OK;

    for (int k = 0; k < HX_MD_NSTAGES; k++)
        sum[k] = st->stage[k];
    sum[HX_MD_OTHER] += out_time;
    sum[HX_MD_NSTAGES] = loop;
    memcpy(max, sum, sizeof max);
    HXI_CHECK(hxi_allreduce_double(comm, sum, HX_MD_NSTAGES + 1, 0));
    HXI_CHECK(hxi_allreduce_double(comm, max, HX_MD_NSTAGES + 1, 1));
    /* Every rank agrees once below on rank 0's status (the stats file). */
    if (rank != 0)
        return hxi_agree(comm, HX_OK);

    tloop = sum[HX_MD_NSTAGES] / size; /* LAMMPS: the average over ranks */
    printf("Loop time of %.6g on %d procs for %lld steps with %lld atoms\n\n", tloop, size,
           (long long) steps, (long long) natoms);
    if (steps <= 0 || tloop <= 0) {
        fflush(stdout);
        return hxi_agree(comm, HX_OK);
    }
    t_step = tloop / (double) steps;
    tau_day = 86400.0 / t_step * cfg->dt;
    aps = (double) natoms / t_step;
    printf("Performance: %.3f tau/day, %.3f timesteps/s, %.3f katom-step/s\n\n", tau_day,
           1.0 / t_step, aps * 1e-3);
    double median = hxi_segments_median(segs);

    printf("halox-md performance: %s engine, %d rank(s), %lld neighbour-list rebuilds\n", ops->name,
           size, (long long) st->rebuilds);
    printf("  steps/s       %14.3f\n", 1.0 / t_step);
    printf("  us/step       %14.3f   (mean over all steps, rebuilds included)\n", 1e6 * t_step);
    if (median > 0)
        printf("  us/step       %14.3f   (median of the %d stretches between rebuilds)\n", median,
               segs->n);
    printf("  atom-steps/s  %14.6g\n", aps);
    printf("  set-up (s)    %14.3f   (from the start of the program to the first step)\n", setup);
    printf("  tau/day       %14.3f\n", tau_day);
    printf("  %-18s %10s %10s %8s\n", "stage", "avg (s)", "max (s)", "% loop");
    {
        double tot = 0;
        for (int k = 0; k < HX_MD_NSTAGES; k++) {
            double avg = sum[k] / size;
            tot += avg;
            printf("  %-18s %10.4f %10.4f %8.2f\n", hxi_md_stage_name(k), avg, max[k],
                   100.0 * avg / tloop);
        }
        printf("  %-18s %10.4f %10s %8.2f\n", "total", tot, "", 100.0 * tot / tloop);
    }
    hxi_danger_line(st, cfg);
    if (cfg->stats_csv[0]) {
        double avg[HX_MD_NSTAGES];
        for (int k = 0; k < HX_MD_NSTAGES; k++)
            avg[k] = sum[k] / size;
        csv = hxi_stats_row(cfg, ops->name, ops->describe(eng), size, natoms, steps, st->rebuilds,
                            median > 0 ? median : 1e6 * t_step, 1e6 * t_step, tau_day, aps, avg,
                            tloop);
    }
    fflush(stdout);
    return hxi_agree(comm, csv);
}
