/*
 * fused_fields.h - fields in the fused kernels of nvshmem-fused and
 * nvshmem-fused-tma (fused_fields.c; the layout and the kernel side:
 * fused/fused_fields.h). Host side, C.
 */
#ifndef HALOX_NVSHMEM_FUSED_FIELDS_H
#define HALOX_NVSHMEM_FUSED_FIELDS_H

#include "transport/fused/fused_core.h"

typedef struct hxi_fzf {
    void *land;      /* symmetric landing buffer, NULL until a call needs one */
    size_t land_cap; /* its bytes, the same on every rank */
    int nxput;       /* this rank's pulses on the put path, this plan */
    int nfoff;       /* this rank's pulse ends whose forces go neither by
                        direct push nor by pull (put path, atomic), this plan */
    int adopted;     /* direct, rdirect and cap agreed for this plan */
    int direct;      /* the plan's coordinate pulses all store straight into
                        their peers, on every rank (agreed at the plan's
                        first fused fields call) */
    int rdirect;     /* direct, and every rank's forces go by direct push or
                        pull: a reverse's fields ride them */
    int cap;         /* atoms per field in the landing buffer: the largest
                        rank's capacity (agreed with direct) */
} hxi_fzf;

/* At set_plan, local: a new plan, whose agreement waits for its first
 * fused fields call (nxput: this rank's pulses on the put path; nfoff:
 * its pulse ends whose forces go by a put or by remote atomics). */
void hxi_fzf_new_plan(hxi_fzf *s, int nxput, int nfoff);
/* Collective: frees the landing buffer (at destroy, before NVSHMEM closes). */
void hxi_fzf_close(hxi_fzf *s);
/* Forward of the coordinates f[0] and the fields f[1 .. n) in one fused
 * launch where every rank can (coordinates asked, 1 to HXI_FZF_MAX
 * fields, every pulse direct): *done 1. Elsewhere *done 0 and nothing
 * ran: the caller takes the generic device path (gpu/fields_dev.c). The
 * decision is the same on every rank. */
hx_status hxi_fzf_forward(hx_transport *t, hxi_fzf *s, hxi_fz_core *c, hxi_gpu *g,
                          const hxi_field *f, int n, int *done);
/* Reverse of the forces f[0] and the fields f[1 .. n) in one fused launch
 * where every rank can (forces asked, 1 to HXI_FZF_MAX fields, every pulse
 * direct, its forces by direct push or pull): *done 1; elsewhere *done 0,
 * as for the forward. The sums are those of the generic path, bitwise. */
hx_status hxi_fzf_reverse(hx_transport *t, hxi_fzf *s, hxi_fz_core *c, hxi_gpu *g,
                          const hxi_field *f, int n, int *done);

#endif /* HALOX_NVSHMEM_FUSED_FIELDS_H */
