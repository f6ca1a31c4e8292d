/*
 * timers.c - the GPU engine's stage timers (local forces, halo forward, ...
 * as hx_md_stats counts them).
 *
 * A stage time is a pair of events around the stage's work on its stream.
 * Spans live in a ring; a slot is read back when it is reused (hundreds of
 * steps later, so the read does not wait) or at a sync point. With
 * HALOX_MD_TIMERS=N one step in N (picked at random) is timed and counts N
 * times: an unbiased estimate that keeps event records off the other steps
 * (and lets those run from CUDA graphs); 0 turns the stage timers off.
 */
#include "md/gpu/engine.h"

#include <stdlib.h>
#include <string.h>

#define TM_SLOTS 1024

struct tm_span {
    cudaEvent_t a, b;
    int stage;
    int pending;
    double weight; /* steps this sample stands for */
};

/* Rank-local part of create: how often to time (HALOX_MD_TIMERS) and the
 * ring of event pairs. A timed step is launched kernel by kernel, not
 * replayed: about 40 us more than a replayed one at HOOMD-blue's 64,000
 * atoms on an H200 (one step in 16 cost 2.4-3.3 us a step there), so graph
 * modes time one step in 128 by default. */
hx_status hxg_eng_timers_create(hx_md_engine *e)
{
    const int every = hxi_knobs()->md_timers; /* -1: unset */
    e->timers_every = every >= 0 ? every : e->graphs || e->mgraph ? 128 : 1;
    e->timers_on = e->timers_every > 0;
    if (e->timers_every < 1)
        e->timers_every = 1;
    if (e->timers_on) {
        HXI_CHECK(hxi_alloc((void **) &e->spans, TM_SLOTS * sizeof(tm_span), "timers"));
        memset(e->spans, 0, TM_SLOTS * sizeof(tm_span));
        for (int k = 0; k < TM_SLOTS; k++) {
            CU(cudaEventCreate(&e->spans[k].a), "timer event");
            CU(cudaEventCreate(&e->spans[k].b), "timer event");
        }
    }
    return HX_OK;
}

void hxg_eng_timers_destroy(hx_md_engine *e)
{
    if (e->spans) {
        for (int k = 0; k < TM_SLOTS; k++) {
            if (e->spans[k].a)
                cudaEventDestroy(e->spans[k].a);
            if (e->spans[k].b)
                cudaEventDestroy(e->spans[k].b);
        }
        free(e->spans);
    }
}

static void tm_harvest_one(hx_md_engine *e, tm_span *sp)
{
    float ms = 0.0f;
    if (cudaEventSynchronize(sp->b) == cudaSuccess &&
        cudaEventElapsedTime(&ms, sp->a, sp->b) == cudaSuccess)
        e->stats.stage[sp->stage] += 1e-3 * (double) ms * sp->weight;
    cudaGetLastError();
    sp->pending = 0;
}

void hxg_eng_tm_harvest_all(hx_md_engine *e)
{
    if (!e->spans)
        return;
    for (int k = 0; k < TM_SLOTS; k++)
        if (e->spans[k].pending)
            tm_harvest_one(e, &e->spans[k]);
}

int hxg_eng_tm_open(hx_md_engine *e, int stage, cudaStream_t s)
{
    if (!e->timers_on || !e->timing_now)
        return -1;
    int k = e->span_next;
    e->span_next = (k + 1) % TM_SLOTS;
    tm_span *sp = &e->spans[k];
    if (sp->pending)
        tm_harvest_one(e, sp);
    sp->stage = stage;
    sp->weight = (double) e->timers_every;
    if (cudaEventRecord(sp->a, s) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return k;
}

/* Whether to time this step: none with the timers off (a timed step is
 * launched, not replayed), else one step in e->timers_every, picked by a
 * hash of the step number so that the samples do not fall in step with
 * the rebuild period (a fixed stride of 16 against rebuilds every 20 would
 * count every rebuild it hits 16 times and miss the others). */
int hxg_eng_tm_sampled(const hx_md_engine *e, int64_t step)
{
    const int every = e->timers_every;
    if (!e->timers_on)
        return 0;
    if (every <= 1)
        return 1;
    uint64_t z = (uint64_t) step * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % (uint64_t) every == 0;
}

void hxg_eng_tm_close(hx_md_engine *e, int k, cudaStream_t s)
{
    if (k < 0)
        return;
    if (cudaEventRecord(e->spans[k].b, s) == cudaSuccess)
        e->spans[k].pending = 1;
    else
        cudaGetLastError();
}
