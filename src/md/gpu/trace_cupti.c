/*
 * trace_cupti.c - the GPU half of HALOX_TRACE (md/trace.h): CUPTI's
 * activity API delivers a record of every kernel, copy and memset of the
 * process (the engine's and the transports' alike) in buffers it asks for;
 * each record becomes a range on its stream. CUPTI's clock is moved onto
 * the host's by one pair of readings taken together at the start. With
 * HALOX_TRACE_API=1 every CUDA runtime call (its host thread, its length)
 * is recorded too: where the host's time goes between kernels. Built
 * where CUPTI is found (HALOX_HAVE_CUPTI); elsewhere the trace keeps the
 * host ranges and says why.
 */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#define _ISOC11_SOURCE          /* aligned_alloc */

#include "md/gpu/engine.h"
#include "md/trace.h"

#include "md/md_driver.h"

#include <stdlib.h>
#include <string.h>

#ifdef HALOX_HAVE_CUPTI
#include <cupti.h>

/* A readable kernel name from a mangled one: the identifiers of
 * _Z<len>name... or _ZN<len>a<len>b...E..., joined by "::" (templates and
 * argument types dropped); anything else as it is. */
static void short_name(const char *m, char *out, size_t n)
{
    size_t k = 0;
    const char *p = m;
    if (!m || strncmp(m, "_Z", 2) != 0) {
        snprintf(out, n, "%s", m ? m : "?");
        return;
    }
    p += 2;
    int nested = *p == 'N';
    if (nested)
        p++;
    out[0] = 0;
    while (*p >= '0' && *p <= '9') {
        long len = strtol(p, (char **) &p, 10);
        if (len <= 0 || (long) strnlen(p, (size_t) len) < len)
            break;
        if (k > 0 && k + 2 < n) {
            out[k++] = ':';
            out[k++] = ':';
        }
        for (long i = 0; i < len && k + 1 < n; i++)
            out[k++] = p[i];
        out[k] = 0;
        p += len;
        if (!nested)
            break;
    }
    if (k == 0)
        snprintf(out, n, "%s", m);
}

static const char *copy_kind(uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        return "copy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        return "copy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        return "copy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return "copy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return "copy PtoP";
    default:
        return "copy";
    }
}

enum { BUF_BYTES = 8 << 20 };

/* A runtime call's name without its version ("cudaLaunchKernel_v7000"). */
static void api_name(CUpti_CallbackId cbid, char *out, size_t n)
{
    const char *name = NULL;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) != CUPTI_SUCCESS || !name)
        name = "cuda?";
    snprintf(out, n, "%s", name);
    char *v = strstr(out, "_v");
    if (v && v[2] >= '0' && v[2] <= '9')
        *v = 0;
}

/* Host threads by order of appearance (CUPTI names them by OS id); past
 * 32 threads the later ones share the last row. */
static uint32_t thread_index(uint32_t os_id)
{
    static uint32_t ids[32];
    static uint32_t n = 0;
    for (uint32_t k = 0; k < n; k++)
        if (ids[k] == os_id)
            return k;
    if (n < 32)
        ids[n++] = os_id;
    return n - 1;
}

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUF_BYTES);
    *size = *buffer ? BUF_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                   size_t valid)
{
    CUpti_Activity *r = NULL;
    char name[256];
    (void) ctx;
    (void) stream;
    (void) size;
    while (buffer && cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
        switch (r->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *) r;
            short_name(k->name, name, sizeof name);
            hxi_trace_device("kernel", name, k->start, k->end, k->streamId);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const CUpti_ActivityMemcpy6 *c = (const CUpti_ActivityMemcpy6 *) r;
            hxi_trace_device("memcpy", copy_kind(c->copyKind), c->start, c->end, c->streamId);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY2: {
            const CUpti_ActivityMemcpyPtoP4 *c = (const CUpti_ActivityMemcpyPtoP4 *) r;
            hxi_trace_device("memcpy", "copy PtoP", c->start, c->end, c->streamId);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *) r;
            hxi_trace_device("memset", "memset", m->start, m->end, m->streamId);
            break;
        }
        case CUPTI_ACTIVITY_KIND_RUNTIME: {
            const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *) r;
            api_name(a->cbid, name, sizeof name);
            hxi_trace_device("api", name, a->start, a->end, thread_index(a->threadId));
            break;
        }
        default:
            break;
        }
    }
    free(buffer);
}

static void flush(void)
{
    cudaDeviceSynchronize();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY2);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
}

void hxg_trace_cupti_start(void)
{
    static int started = 0;
    if (!hxi_trace_on || started)
        return;
    started = 1;
    const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                        CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
                                        CUPTI_ACTIVITY_KIND_MEMSET};
    CUptiResult rc = cuptiActivityRegisterCallbacks(buf_requested, buf_completed);
    for (size_t i = 0; rc == CUPTI_SUCCESS && i < sizeof kinds / sizeof kinds[0]; i++)
        rc = cuptiActivityEnable(kinds[i]);
    if (rc == CUPTI_SUCCESS && hxi_knobs()->trace_api)
        rc = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
    uint64_t ts = 0;
    if (rc == CUPTI_SUCCESS)
        rc = cuptiGetTimestamp(&ts);
    if (rc != CUPTI_SUCCESS) {
        const char *why = "?";
        cuptiGetResultString(rc, &why);
        hxi_warn("HALOX_TRACE: CUPTI could not start (%s); the trace has host ranges only", why);
        return;
    }
    /* The two clocks read together (the later reading halves the gap). */
    double h0 = hxi_now();
    uint64_t ts2 = 0;
    cuptiGetTimestamp(&ts2);
    double h1 = hxi_now();
    hxi_trace_device_clock(0.5 * (h0 + h1) - 0.5e-9 * ((double) ts + (double) ts2));
    hxi_trace_set_flush(flush);
}

#else

void hxg_trace_cupti_start(void)
{
    static int said = 0;
    if (hxi_trace_on && !said) {
        said = 1;
        hxi_warn("HALOX_TRACE: this halox-md was built without CUPTI; the trace has host "
                 "ranges only (no kernels or copies)");
    }
}

#endif
