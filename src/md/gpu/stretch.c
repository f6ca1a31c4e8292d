/*
 * stretch.c - the GPU engine's timed stretches (md.h: ops->mark and
 * ops->stretch_seconds): the steps between two scheduled rebuilds timed on
 * the device, so that the run's loop never waits for the GPU to time them.
 *
 * Waiting at a stretch's ends cost every rebuild twice: the GPU ran dry
 * while the host returned from the wait and launched again (before the
 * rebuild step, and after it before the stretch's first replay). A mark is
 * an event recorded on the local stream, behind everything queued (every
 * step ends on that stream: its other streams join it); a stretch's time is
 * the device time between its two marks. Pairs of events are taken in
 * turn from a small ring: the ended pairs are the `nended` from `head` on,
 * oldest first, and the started one (if any) the next. An ended pair is read
 * once its second event has completed (the next rebuild waits for the GPU,
 * so by the next mark it has) or when the ring needs it; a started pair
 * whose stretch did not end cleanly (a thermo step inside) is started again
 * by the next mark.
 */
#include "md/gpu/engine.h"

#include <stdlib.h>
#include <string.h>

#define ST_PAIRS 8

struct hxg_stretch {
    cudaEvent_t a[ST_PAIRS], b[ST_PAIRS];
    int head, nended; /* the oldest ended pair, and how many are unread */
    int started;      /* pair (head + nended) % ST_PAIRS is started */
    double *sec;      /* durations read, in the order the stretches ended */
    int n, cap;
};

hx_status hxg_eng_stretch_create(hxg_stretch **out)
{
    hxg_stretch *t = NULL;
    HXI_CHECK(hxi_alloc((void **) &t, sizeof *t, "stretch timers"));
    memset(t, 0, sizeof *t);
    *out = t;
    for (int k = 0; k < ST_PAIRS; k++) {
        CU(cudaEventCreate(&t->a[k]), "stretch timer event");
        CU(cudaEventCreate(&t->b[k]), "stretch timer event");
    }
    return HX_OK;
}

void hxg_eng_stretch_destroy(hxg_stretch **st)
{
    hxg_stretch *t = *st;
    if (!t)
        return;
    for (int k = 0; k < ST_PAIRS; k++) {
        if (t->a[k])
            cudaEventDestroy(t->a[k]);
        if (t->b[k])
            cudaEventDestroy(t->b[k]);
    }
    free(t->sec);
    free(t);
    *st = NULL;
}

/* Reads the oldest ended pair: at once if its stretch is done, else only
 * with wait (then it waits). *done: whether it was read. */
static hx_status read_oldest(hxg_stretch *t, int wait, int *done)
{
    *done = 0;
    const int k = t->head;
    cudaError_t ce = wait ? cudaEventSynchronize(t->b[k]) : cudaEventQuery(t->b[k]);
    if (ce == cudaErrorNotReady) {
        (void) cudaGetLastError();
        return HX_OK;
    }
    float ms = 0.0f;
    if (ce == cudaSuccess)
        ce = cudaEventElapsedTime(&ms, t->a[k], t->b[k]);
    CU(ce, "reading a stretch timer");
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        HXI_CHECK(hxi_grow((void **) &t->sec, (size_t) cap * sizeof(double), "stretch timings"));
        t->cap = cap;
    }
    t->sec[t->n++] = 1e-3 * (double) ms;
    t->head = (t->head + 1) % ST_PAIRS;
    t->nended--;
    *done = 1;
    return HX_OK;
}

/* Reads every ended pair whose stretch is done (all of them with wait). */
static hx_status read_ended(hxg_stretch *t, int wait)
{
    int done = 1;
    while (t->nended > 0 && done)
        HXI_CHECK(read_oldest(t, wait, &done));
    return HX_OK;
}

hx_status hxg_eng_mark(hx_md_engine *e, int end)
{
    hxg_stretch *t = e->timers.stretch;
    HXI_CHECK(read_ended(t, 0));
    if (!end) {
        /* With every pair ended and unread (the GPU far behind), the
         * oldest is waited for, so that the next pair is free. */
        if (!t->started && t->nended == ST_PAIRS) {
            int done = 0;
            HXI_CHECK(read_oldest(t, 1, &done));
        }
        t->started = 1;
        CU(cudaEventRecord(t->a[(t->head + t->nended) % ST_PAIRS], e->dev.s_loc),
           "marking a stretch");
        return HX_OK;
    }
    if (!t->started)
        return hxi_error(HX_ERR_STATE, "GPU engine: a stretch ended that never started");
    CU(cudaEventRecord(t->b[(t->head + t->nended) % ST_PAIRS], e->dev.s_loc), "marking a stretch");
    t->nended++;
    t->started = 0;
    return HX_OK;
}

hx_status hxg_eng_stretch_seconds(hx_md_engine *e, double *sec, int n)
{
    hxg_stretch *t = e->timers.stretch;
    HXI_CHECK(read_ended(t, 1));
    if (n > t->n)
        return hxi_error(HX_ERR_STATE, "GPU engine: %d timed stretches asked for, %d ended", n,
                         t->n);
    memcpy(sec, t->sec, (size_t) n * sizeof *sec);
    return HX_OK;
}
