/*
 * staging.c - the GPU engine's copies of per-atom arrays between the
 * host's doubles and the device's floats, through a small pinned staging
 * buffer in two halves: the host converts one chunk while the copy engine
 * moves the other. Pinning a buffer the size of the arrays took seconds at
 * a hundred million atoms; this one is HXG_STAGE_BYTES whatever the size.
 * With one rank the conversions run on the host's threads (OpenMP where
 * found); several ranks on a host share its cores, so theirs stay serial.
 */
#include "md/gpu/engine.h"

#include <string.h>

/* Bytes of each half of the staging buffer. */
#define HXG_STAGE_BYTES ((size_t) 32 << 20)

hx_status hxg_eng_stage_create(struct hxg_host *host)
{
    if (host->stage[0])
        return HX_OK;
    for (int h = 0; h < 2; h++) {
        if (cudaMallocHost((void **) &host->stage[h], HXG_STAGE_BYTES) != cudaSuccess) {
            host->stage[h] = NULL;
            cudaGetLastError();
            return hxi_error(HX_ERR_NOMEM,
                             "GPU engine: pinned host allocation of %zu bytes for the staging "
                             "buffer failed",
                             HXG_STAGE_BYTES);
        }
        CU(cudaEventCreateWithFlags(&host->ev_stage[h], cudaEventDisableTiming), "event");
    }
    return HX_OK;
}

void hxg_eng_stage_destroy(struct hxg_host *host)
{
    for (int h = 0; h < 2; h++) {
        if (host->stage[h])
            cudaFreeHost(host->stage[h]);
        if (host->ev_stage[h])
            cudaEventDestroy(host->ev_stage[h]);
        host->stage[h] = NULL;
        host->ev_stage[h] = NULL;
    }
}

/* The fourth float of a position: the bits of the 0-based type. */
static float type_bits(int32_t t)
{
    float f;
    memcpy(&f, &t, sizeof f);
    return f;
}

/* One chunk, atoms [a, b): host doubles (3 per atom) into w floats per
 * atom (3, or 4 with w = 0 or the type's bits), or raw bytes (w == 0:
 * `size` bytes per atom). And back: floats (w per atom, the first 3 kept)
 * into doubles, the fourth's bits into type. */
static void to_stage(const struct hxg_host *host, void *buf, const void *src, const int32_t *type,
                     size_t a, size_t b, int w, size_t size)
{
    if (w == 0) {
        memcpy(buf, (const char *) src + a * size, (b - a) * size);
        return;
    }
    const double *s = (const double *) src;
    float *d = (float *) buf;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (!host->serial)
#endif
    for (size_t i = a; i < b; i++) {
        float *q = d + (i - a) * (size_t) w;
        for (int k = 0; k < 3; k++)
            q[k] = (float) s[3 * i + k];
        if (w == 4)
            q[3] = type ? type_bits(type[i] - 1) : 0.0f;
    }
}

static void from_stage(const struct hxg_host *host, void *dst, int32_t *type, const void *buf,
                       size_t a, size_t b, int w)
{
    const float *s = (const float *) buf;
    double *d = (double *) dst;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (!host->serial)
#endif
    for (size_t i = a; i < b; i++) {
        const float *q = s + (i - a) * (size_t) w;
        for (int k = 0; k < 3; k++)
            d[3 * i + k] = (double) q[k];
        if (type && w == 4) {
            int32_t t;
            memcpy(&t, q + 3, sizeof t);
            type[i] = t + 1;
        }
    }
}

/* Bytes per atom on the device side of a copy. */
static size_t dev_size(int w, size_t size)
{
    return w == 0 ? size : sizeof(float) * (size_t) w;
}

hx_status hxg_eng_put(struct hxg_host *host, void *dst, const void *src, const int32_t *type, int n,
                      int w, size_t size, cudaStream_t s)
{
    const size_t per = dev_size(w, size), chunk = HXG_STAGE_BYTES / per;
    HXI_CHECK(hxg_eng_stage_create(host));
    for (size_t a = 0, c = 0; a < (size_t) (n > 0 ? n : 0); a += chunk, c++) {
        const size_t b = a + chunk < (size_t) n ? a + chunk : (size_t) n;
        const int h = (int) (c & 1);
        /* The copy that last read this half must be done. */
        if (c >= 2)
            CU(cudaEventSynchronize(host->ev_stage[h]), "staging upload");
        to_stage(host, host->stage[h], src, type, a, b, w, size);
        CU(cudaMemcpyAsync((char *) dst + a * per, host->stage[h], (b - a) * per,
                           cudaMemcpyHostToDevice, s),
           "staging upload");
        CU(cudaEventRecord(host->ev_stage[h], s), "event");
    }
    /* The staging buffer is free for the next copy. */
    CU(cudaStreamSynchronize(s), "staging upload");
    return HX_OK;
}

hx_status hxg_eng_get(struct hxg_host *host, double *dst, int32_t *type, const float *src, int n,
                      int w, cudaStream_t s)
{
    const size_t per = sizeof(float) * (size_t) w, chunk = HXG_STAGE_BYTES / per;
    const size_t total = (size_t) (n > 0 ? n : 0);
    HXI_CHECK(hxg_eng_stage_create(host));
    /* Chunk c is copied into half c & 1 while chunk c - 1 is converted. */
    for (size_t a = 0, c = 0; a < total + chunk; a += chunk, c++) {
        if (a < total) {
            const size_t b = a + chunk < total ? a + chunk : total;
            CU(cudaMemcpyAsync(host->stage[c & 1], src + a * (size_t) w, (b - a) * per,
                               cudaMemcpyDeviceToHost, s),
               "staging download");
            CU(cudaEventRecord(host->ev_stage[c & 1], s), "event");
        }
        if (c > 0) {
            const size_t pa = a - chunk, pb = pa + chunk < total ? pa + chunk : total;
            CU(cudaEventSynchronize(host->ev_stage[(c - 1) & 1]), "staging download");
            from_stage(host, dst, type, host->stage[(c - 1) & 1], pa, pb, w);
        }
    }
    return HX_OK;
}
