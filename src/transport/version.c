/*
 * version.c - hx_version_string: what this libhalox is, in one line.
 */
#include "transport/transport.h"

#ifdef HALOX_HAVE_NVSHMEM
#include "transport/nvshmem/shm_api.h"
#endif

#include <stdio.h>
#include <string.h>

#ifndef HALOX_GIT_REVISION
#define HALOX_GIT_REVISION "unknown"
#endif
#ifndef HALOX_BUILD_TYPE
#define HALOX_BUILD_TYPE "unknown"
#endif

/* Appends to buf (of n bytes, holding len) and returns the new length. */
static size_t hxi_add(char *buf, size_t n, size_t len, const char *text)
{
    if (len < n)
        len += (size_t) snprintf(buf + len, n - len, "%s", text);
    return len < n ? len : n - 1;
}

const char *hx_version_string(void)
{
    /* One buffer per thread: callers on several threads do not race. */
    static _Thread_local char s[768];
    char part[160];
    size_t n = sizeof s, len = 0;
    snprintf(part, sizeof part, "halox %d.%d.%d (git %s, %s); transports:", HX_VERSION_MAJOR,
             HX_VERSION_MINOR, HX_VERSION_PATCH, HALOX_GIT_REVISION, HALOX_BUILD_TYPE);
    len = hxi_add(s, n, 0, part);
    for (int i = 0; i < hx_transport_count(); i++) {
        len = hxi_add(s, n, len, " ");
        len = hxi_add(s, n, len, hx_transport_name_at(i));
    }
    len = hxi_add(s, n, len, "; ");
    hxi_comm_library(part, sizeof part);
    len = hxi_add(s, n, len, part);
#ifdef HALOX_HAVE_CUDA
    hxi_gpu_versions(part, sizeof part);
    len = hxi_add(s, n, len, "; ");
    len = hxi_add(s, n, len, part);
#endif
#ifdef HALOX_HAVE_NCCL
    hxi_nccl_version(part, sizeof part);
    len = hxi_add(s, n, len, "; ");
    len = hxi_add(s, n, len, part);
#endif
#ifdef HALOX_HAVE_NVSHMEM
    int ma = 0, mi = 0, pa = 0;
    hxi_shm_api_versions(&ma, &mi, &pa);
    snprintf(part, sizeof part, "; NVSHMEM %d.%d.%d", ma, mi, pa);
    len = hxi_add(s, n, len, part);
#endif
    (void) len;
    return s;
}
