/* log.c - messages to stderr, prefixed with the rank; and small helpers
 * (the clock, memory, numbers from text). */
#define _POSIX_C_SOURCE 200809L

#include "core/hxi.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int hxi_rank = 0;

void hxi_log_set_rank(int rank)
{
    hxi_rank = rank;
}

double hxi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

int hxi_log_level(void)
{
    return hxi_knobs()->log;
}

static void hxi_vlog(const char *tag, const char *fmt, va_list ap)
{
    char line[1200];
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "halox[%d] %s%s\n", hxi_rank, tag, line);
}

#define HXI_LOG_BODY(tag)                                                                          \
    va_list ap;                                                                                    \
    va_start(ap, fmt);                                                                             \
    hxi_vlog(tag, fmt, ap);                                                                        \
    va_end(ap)

void hxi_info(const char *fmt, ...)
{
    if (hxi_log_level() < 1)
        return;
    HXI_LOG_BODY("");
}

void hxi_debug(const char *fmt, ...)
{
    if (hxi_log_level() < 2)
        return;
    HXI_LOG_BODY("debug: ");
}

void hxi_warn(const char *fmt, ...)
{
    HXI_LOG_BODY("warning: ");
}

hx_status hxi_alloc(void **p, size_t bytes, const char *what)
{
    *p = malloc(bytes ? bytes : 1);
    if (!*p)
        return hxi_error(HX_ERR_NOMEM, "out of host memory allocating %zu bytes for %s", bytes,
                         what);
    return HX_OK;
}

hx_status hxi_grow(void **p, size_t bytes, const char *what)
{
    void *q = realloc(*p, bytes ? bytes : 1);
    if (!q)
        return hxi_error(HX_ERR_NOMEM, "out of host memory growing %s to %zu bytes", what, bytes);
    *p = q;
    return HX_OK;
}

hx_status hxi_parse_long(const char *what, const char *text, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    const long v = strtol(text, &end, 10);
    if (end == text || *end != '\0')
        return hxi_error(HX_ERR_INVALID, "%s: '%s' is not a whole number", what, text);
    if (errno == ERANGE || v < lo || v > hi)
        return hxi_error(HX_ERR_INVALID, "%s: %s must be between %ld and %ld", what, text, lo, hi);
    *out = v;
    return HX_OK;
}

hx_status hxi_parse_double(const char *what, const char *text, double *out)
{
    char *end;
    const double v = strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(v))
        return hxi_error(HX_ERR_INVALID, "%s: '%s' is not a finite number", what, text);
    *out = v;
    return HX_OK;
}
