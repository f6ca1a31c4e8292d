/*
 * checkpoint.c - restart files written during a run (write_restart's
 * file, --checkpoint on its schedule and at a stop), how long they take,
 * and what a stop says about them.
 *
 * A stop by a signal gives halox-md little time under a launcher: mpirun
 * (Open MPI) passes a SIGTERM or SIGINT on to the ranks as SIGTERM and
 * kills them odls_base_sigkill_timeout seconds later (1 by default; it
 * exits about twice that after the signal, whenever the ranks end); a
 * batch system's grace is usually longer (Slurm's KillWait: 30 s). A write
 * cut short leaves the previous checkpoint whole (restart.c writes a
 * temporary and renames it), so a run that checkpoints ahead
 * (--checkpoint-every) loses at most the steps since its last file. The
 * first write's time is compared with the launcher's grace where it is
 * known, and a note says what to do when a stop could not finish in it.
 */
#define _POSIX_C_SOURCE 200809L

#include "md/restart.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

hx_status hxi_md_write_state(hx_comm *comm, const hx_md_engine_ops *ops, hx_md_engine *eng,
                             hx_md_system *sys, const hx_md_config *cfg, const char *path,
                             int64_t abs, hxi_md_gather *g)
{
    HXI_CHECK(hxi_agree(comm, ops->gather(eng, sys, NULL)));
    return hxi_md_restart_write(g, comm, path, sys, cfg, abs);
}

/* Seconds between the SIGTERM mpirun passes on and its SIGKILL, where
 * this rank runs under Open MPI's mpirun (-1: not under it). */
static double ckpt_launcher_grace(void)
{
    const char *size = getenv("OMPI_COMM_WORLD_SIZE");
    const char *grace = getenv("OMPI_MCA_odls_base_sigkill_timeout");
    if (!size)
        return -1;
    return grace ? atof(grace) : 1.0;
}

/* Rank 0, once: a note where a stop's write would not fit in mpirun's
 * grace. step_s: seconds a step (a stop runs one more before it writes). */
static void ckpt_note(hxi_md_ckpt *k, double step_s)
{
    const double grace = ckpt_launcher_grace();
    const double need = 0.3 + step_s + 1.5 * k->last_s;
    k->noted = 1;
    if (grace < 0 || need <= grace)
        return;
    fflush(stdout);
    fprintf(stderr,
            "halox-md: note: a checkpoint takes %.2f s to write, but mpirun kills the ranks "
            "%g s after it passes on a SIGTERM or SIGINT, before a stop could write one; to "
            "keep the state at a stop, start mpirun with --mca odls_base_sigkill_timeout %d; "
            "without it a stop leaves the last checkpoint of --checkpoint-every\n",
            k->last_s, grace, (int) (2 * need) + 5);
}

hx_status hxi_md_ckpt_write(hxi_md_ckpt *k, hx_comm *comm, const hx_md_engine_ops *ops,
                            hx_md_engine *eng, hx_md_system *sys, const hx_md_config *cfg,
                            int64_t abs, double step_s)
{
    const double t = hxi_now();
    HXI_CHECK(hxi_md_write_state(comm, ops, eng, sys, cfg, cfg->checkpoint_file, abs, &k->g));
    k->last_s = hxi_now() - t;
    if (k->last_s > k->max_s)
        k->max_s = k->last_s;
    k->count++;
    k->last_step = abs;
    if (!k->noted && hx_comm_rank(comm) == 0)
        ckpt_note(k, step_s);
    return HX_OK;
}

void hxi_md_ckpt_free(hxi_md_ckpt *k)
{
    hxi_md_gather_free(&k->g);
}

void hxi_md_ckpt_summary(const hxi_md_ckpt *k, const hx_md_config *cfg)
{
    if (k->count > 0)
        printf("Checkpoints: %d written to %s, the last at step %lld; the longest write took "
               "%.3f s\n",
               k->count, cfg->checkpoint_file, (long long) k->last_step, k->max_s);
}

void hxi_md_stop_message(const hxi_md_ckpt *k, const hx_md_config *cfg, int reason, int64_t last)
{
    char why[64];
    if (reason > 0)
        snprintf(why, sizeof why, "stopped by %s",
                 reason == SIGINT    ? "SIGINT"
                 : reason == SIGTERM ? "SIGTERM"
                                     : "a signal");
    else
        snprintf(why, sizeof why, "stopped by --max-hours %g", cfg->max_hours);
    fflush(stdout);
    if (cfg->checkpoint_file[0])
        fprintf(stderr,
                "halox-md: %s after step %lld; the state is in %s, written in %.2f s (continue "
                "with --restart %s, or read_restart %s in a deck)\n",
                why, (long long) last, cfg->checkpoint_file, k->last_s, cfg->checkpoint_file,
                cfg->checkpoint_file);
    else
        fprintf(stderr,
                "halox-md: %s after step %lld; no checkpoint was configured (--checkpoint "
                "FILE, or restart N FILE in a deck), so the state is not saved\n",
                why, (long long) last);
}
