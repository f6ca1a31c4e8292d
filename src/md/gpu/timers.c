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
 * replayed, and takes much longer than a replayed one (timing one step in
 * 16 showed in the mean step), so graph modes time one step in 128 by
 * default (docs/md-gpu-timeline.md, "Stage timers"). */
hx_status hxg_eng_timers_create(struct hxg_timers *t, int graphs)
{
    const int every = hxi_knobs()->md_timers; /* -1: unset */
    t->every = every >= 0 ? every : graphs ? 128 : 1;
    t->on = t->every > 0;
    if (t->every < 1)
        t->every = 1;
    if (t->on) {
        HXI_CHECK(hxi_alloc((void **) &t->spans, TM_SLOTS * sizeof(tm_span), "timers"));
        memset(t->spans, 0, TM_SLOTS * sizeof(tm_span));
        for (int k = 0; k < TM_SLOTS; k++) {
            CU(cudaEventCreate(&t->spans[k].a), "timer event");
            CU(cudaEventCreate(&t->spans[k].b), "timer event");
        }
    }
    return HX_OK;
}

void hxg_eng_timers_destroy(struct hxg_timers *t)
{
    if (t->spans) {
        for (int k = 0; k < TM_SLOTS; k++) {
            if (t->spans[k].a)
                cudaEventDestroy(t->spans[k].a);
            if (t->spans[k].b)
                cudaEventDestroy(t->spans[k].b);
        }
        free(t->spans);
    }
}

static void tm_harvest_one(struct hxg_timers *t, tm_span *sp)
{
    float ms = 0.0f;
    if (cudaEventSynchronize(sp->b) == cudaSuccess &&
        cudaEventElapsedTime(&ms, sp->a, sp->b) == cudaSuccess)
        t->stats.stage[sp->stage] += 1e-3 * (double) ms * sp->weight;
    cudaGetLastError();
    sp->pending = 0;
}

void hxg_eng_tm_harvest_all(struct hxg_timers *t)
{
    if (!t->spans)
        return;
    for (int k = 0; k < TM_SLOTS; k++)
        if (t->spans[k].pending)
            tm_harvest_one(t, &t->spans[k]);
}

int hxg_eng_tm_open(struct hxg_timers *t, int stage, cudaStream_t s)
{
    if (!t->on || !t->timing_now)
        return -1;
    int k = t->span_next;
    t->span_next = (k + 1) % TM_SLOTS;
    tm_span *sp = &t->spans[k];
    if (sp->pending)
        tm_harvest_one(t, sp);
    sp->stage = stage;
    sp->weight = (double) t->every;
    if (cudaEventRecord(sp->a, s) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return k;
}

/* Whether to time this step: none with the timers off (a timed step is
 * launched, not replayed), else one step in t->every, picked by a
 * hash of the step number so that the samples do not fall in step with
 * the rebuild period (a fixed stride of 16 against rebuilds every 20 would
 * count every rebuild it hits 16 times and miss the others). */
int hxg_eng_tm_sampled(const struct hxg_timers *t, int64_t step)
{
    const int every = t->every;
    if (!t->on)
        return 0;
    if (every <= 1)
        return 1;
    uint64_t z = (uint64_t) step * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % (uint64_t) every == 0;
}

void hxg_eng_tm_close(struct hxg_timers *t, int k, cudaStream_t s)
{
    if (k < 0)
        return;
    if (cudaEventRecord(t->spans[k].b, s) == cudaSuccess)
        t->spans[k].pending = 1;
    else
        cudaGetLastError();
}
