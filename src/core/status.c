/* status.c - status names and the per-thread text of the last error. */
#include "core/hxi.h"

#include <stdio.h>

static _Thread_local char hxi_last_msg[1024];

const char *hx_status_string(hx_status status)
{
    switch (status) {
    case HX_OK:
        return "HX_OK";
    case HX_ERR_INVALID:
        return "HX_ERR_INVALID";
    case HX_ERR_GRID:
        return "HX_ERR_GRID";
    case HX_ERR_BOX:
        return "HX_ERR_BOX";
    case HX_ERR_CUTOFF:
        return "HX_ERR_CUTOFF";
    case HX_ERR_CUTOFF_TOO_LARGE:
        return "HX_ERR_CUTOFF_TOO_LARGE";
    case HX_ERR_COORD_NAN:
        return "HX_ERR_COORD_NAN";
    case HX_ERR_COORD_OUTSIDE:
        return "HX_ERR_COORD_OUTSIDE";
    case HX_ERR_OVERFLOW:
        return "HX_ERR_OVERFLOW";
    case HX_ERR_NOMEM:
        return "HX_ERR_NOMEM";
    case HX_ERR_MPI:
        return "HX_ERR_MPI";
    case HX_ERR_UNSUPPORTED:
        return "HX_ERR_UNSUPPORTED";
    case HX_ERR_CUDA:
        return "HX_ERR_CUDA";
    case HX_ERR_NCCL:
        return "HX_ERR_NCCL";
    case HX_ERR_NVSHMEM:
        return "HX_ERR_NVSHMEM";
    case HX_ERR_TIMEOUT:
        return "HX_ERR_TIMEOUT";
    case HX_ERR_STATE:
        return "HX_ERR_STATE";
    case HX_ERR_PARSE:
        return "HX_ERR_PARSE";
    case HX_ERR_IO:
        return "HX_ERR_IO";
    }
    return "HX_ERR_UNKNOWN";
}

const char *hx_last_error(void)
{
    return hxi_last_msg;
}

hx_status hxi_error(hx_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(hxi_last_msg, sizeof hxi_last_msg, fmt, ap);
    va_end(ap);
    hxi_debug("%s: %s", hx_status_string(status), hxi_last_msg);
    return status;
}
