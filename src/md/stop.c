/*
 * stop.c - stopping a run cleanly: SIGTERM and SIGINT (as a batch system
 * or a person sends them) and the --max-hours limit.
 *
 * SIGXFSZ is ignored, so that a file-size limit ends in a write error.
 * A signal only sets a flag (and puts the default action back, so that a
 * second one ends the process at once). The ranks look at the flags
 * together, every so many steps: an allreduce of (signal seen, time
 * passed) at steps all ranks know, spaced to about a fifth of a second of
 * run time (at least 1 step, at most 1000), so that the check costs
 * nothing measurable, every rank stops after the same step, and a stop
 * leaves most of a launcher's grace to the checkpoint (checkpoint.c). The
 * driver then runs one more step (its thermo row needs the energies that
 * step sums), writes the checkpoint when one is configured, and ends.
 */
#define _POSIX_C_SOURCE 200809L

#include "md/md_driver.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t hxi_signal_seen = 0;

static void hxi_on_signal(int sig)
{
    hxi_signal_seen = sig;
}

void hxi_md_stop_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = hxi_on_signal;
    sa.sa_flags = (int) SA_RESETHAND; /* a second signal: the default action */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    /* A file over the size limit is a write error with a message (the
     * restart writer keeps the old file), not a killed process. */
    signal(SIGXFSZ, SIG_IGN);
}

void hxi_md_stop_init(hxi_md_stop *p, double max_hours, double t_start)
{
    memset(p, 0, sizeof *p);
    p->max_seconds = max_hours > 0 ? 0.99 * max_hours * 3600.0 : 0.0;
    p->t_start = t_start;
    p->next_check = 1;
}

hx_status hxi_md_stop_poll(hxi_md_stop *p, hx_comm *comm, int64_t s, double loop_seconds)
{
    double v[3];
    if (s != p->next_check || p->reason)
        return HX_OK;
    v[0] = (double) hxi_signal_seen;
    v[1] = hxi_now() - p->t_start;
    v[2] = loop_seconds;
    HXI_CHECK(hxi_allreduce_double(comm, v, 3, 1));
    if (v[0] > 0)
        p->reason = (int) v[0];
    else if (p->max_seconds > 0 && v[1] >= p->max_seconds)
        p->reason = -1;
    {
        /* The next check about a fifth of a second of steps on. */
        double per_step = s > 0 ? v[2] / (double) s : 0;
        int64_t k = per_step > 0 ? (int64_t) (0.2 / per_step) : 1000;
        p->next_check = s + (k < 1 ? 1 : k > 1000 ? 1000 : k);
    }
    return HX_OK;
}
