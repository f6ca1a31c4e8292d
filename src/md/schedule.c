/*
 * schedule.c - the next step of each event of the run loop (schedule.h).
 */
#include "md/schedule.h"

void hxi_md_sched_init(hxi_md_sched *c, const hx_md_config *cfg, int64_t first, int64_t steps,
                       int dumping)
{
    c->first = first;
    c->steps = steps;
    c->stop_at = -1;
    c->thermo_every = cfg->thermo_every > 0 ? cfg->thermo_every : 0;
    c->dump_every = dumping && cfg->dump_every > 0 ? cfg->dump_every : 0;
    c->checkpoint_every = cfg->checkpoint_every > 0 ? cfg->checkpoint_every : 0;
    c->restart_after = cfg->write_restart_file[0] ? cfg->write_restart_after : -1;
    c->stretch_every = !cfg->neigh_check && cfg->neigh_every > 1 ? cfg->neigh_every : 0;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The first step j >= s with j % every == rem (0 <= rem < every). */
static int64_t next_mod(int64_t s, int64_t every, int64_t rem)
{
    return s + ((rem - s % every) % every + every) % every;
}

/* The first step j >= s whose absolute step first + j is a multiple of
 * every (HXI_MD_NEVER for every 0). */
static int64_t next_every(const hxi_md_sched *c, int64_t s, int every)
{
    return every > 0 ? next_mod(s, every, (every - c->first % every) % every) : HXI_MD_NEVER;
}

/* step where it is >= s, else HXI_MD_NEVER. */
static int64_t from(int64_t s, int64_t step)
{
    return step >= s ? step : HXI_MD_NEVER;
}

int64_t hxi_md_next_thermo(const hxi_md_sched *c, int64_t s)
{
    return min64(next_every(c, s, c->thermo_every), min64(from(s, c->steps), from(s, c->stop_at)));
}

int64_t hxi_md_next_dump(const hxi_md_sched *c, int64_t s)
{
    return next_every(c, s, c->dump_every);
}

int64_t hxi_md_next_restart(const hxi_md_sched *c, int64_t s)
{
    return min64(next_every(c, s, c->checkpoint_every),
                 min64(from(s, c->restart_after), from(s, c->stop_at)));
}

/* A stretch ends after the step before a rebuild step... */
int64_t hxi_md_next_stretch_end(const hxi_md_sched *c, int64_t s)
{
    const int every = c->stretch_every;
    return every > 0 ? next_mod(s, every, every - 1) : HXI_MD_NEVER;
}

/* ... and starts before the step after one, where a whole stretch is left. */
int64_t hxi_md_next_stretch_start(const hxi_md_sched *c, int64_t s)
{
    const int every = c->stretch_every;
    if (every <= 0)
        return HXI_MD_NEVER;
    const int64_t j = next_mod(s, every, 1);
    return j + every - 2 <= c->steps ? j : HXI_MD_NEVER;
}

int64_t hxi_md_sched_next(const hxi_md_sched *c, int64_t s, int64_t next_check, int64_t cap)
{
    /* The last step: one with an event after it... */
    int64_t e = min64(s + cap - 1, c->steps);
    e = min64(e, hxi_md_next_dump(c, s));
    e = min64(e, hxi_md_next_restart(c, s));
    e = min64(e, from(s, next_check));
    e = min64(e, hxi_md_next_stretch_end(c, s));
    /* ... or the step before one with an event before it. */
    e = min64(e, hxi_md_next_stretch_start(c, s + 1) - 1);
    e = min64(e, hxi_md_next_thermo(c, s + 1) - 1);
    e = min64(e, hxi_md_next_restart(c, s + 1) - 1);
    return e;
}
