/*
 * fields_dev.h - per-atom fields through the halo on device arrays: the
 * field exchange every GPU transport puts in its ops table
 * (hxi_transport_ops.fields_forward / fields_reverse). Host side, C.
 */
#ifndef HALOX_GPU_FIELDS_DEV_H
#define HALOX_GPU_FIELDS_DEV_H

#include "transport/transport.h"

/* Forward (reverse) of the n arrays f, checked and resolved by fields.c;
 * f[0] may be the coordinates (forces), which then go through the
 * transport's own forward (reverse) first. Blocks the host until the
 * arrays hold the result; refuses a call made during stream capture. */
hx_status hxi_fdev_forward(hx_transport *t, const hxi_field *f, int n);
hx_status hxi_fdev_reverse(hx_transport *t, const hxi_field *f, int n);
/* HX_ERR_INVALID naming the first of the n arrays f that is not device
 * memory (plain host memory), the same on every rank; for a path of its
 * own (nvshmem_fused/fused_fields.c). */
hx_status hxi_fdev_check(const hx_transport *t, const char *call, const hxi_field *f, int n);
/* Frees t's device field state (hx_transport_destroy, through
 * hxi_fields_free). */
void hxi_fdev_free(hx_transport *t);

#endif /* HALOX_GPU_FIELDS_DEV_H */
