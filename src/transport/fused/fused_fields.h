/*
 * fused_fields.h - per-atom fields in the fused kernels: what the host
 * (nvshmem_fused/fused_fields.c) gives the forward and the reverse kernel
 * (fused/fields_dev.cuh) in their arguments. Plain types only.
 *
 * Forward, with the coordinates: a pulse's field values go in the same
 * kernel row as its coordinates and under the same signal: the row's
 * blocks store them into send_rank's landing buffer (symmetric, reached
 * by load/store) before they arrive on the pulse counter, so the one
 * release of the signal publishes both. The receiver's blocks of the
 * pulse then copy them from the landing buffer into its arrays. A map
 * entry that an earlier pulse delivered is read from the landing buffer,
 * after the signal of that pulse, as the coordinates are.
 *
 * Reverse, with the forces: the holder of a pulse's halo copies its halo
 * values into its own landing buffer, at the places the forward filled
 * (recv_offset + i), before the release that publishes the pulse's forces;
 * the pulse's owner side (the forward's sender) reads them there, at
 * peer_offset + i through the same peer pointer the forward stored
 * through, and adds them by its map where it adds the forces, in the same
 * order.
 */
#ifndef HALOX_FUSED_FIELDS_H
#define HALOX_FUSED_FIELDS_H

#include <stdint.h>

/* Fields one fused launch carries at most; more go the generic way. */
#define HXI_FZF_MAX 8
/* Pulses of a plan (HX_MAX_PULSES, repeated so that the kernels need not
 * include halox.h). */
#define HXI_FZF_PULSES 32

/* Element types as the reverse adds them (the values of hx_ftype). */
enum { HXI_FZF_FLOAT = 1, HXI_FZF_DOUBLE = 2, HXI_FZF_INT32 = 3 };

/* One field: the caller's device array (`words` 4-byte words per atom, of
 * type HXI_FZF_*) and where its block starts in the landing buffer, atom
 * i at land + 4 * words * i (every rank's layout alike). */
typedef struct hxi_fz_field {
    void *data;
    uint64_t land;
    int32_t words;
    int32_t type;
} hxi_fz_field;

typedef struct hxi_fz_fields {
    int32_t n;     /* fields in this launch; 0: the coordinates (forces) alone */
    int32_t nhome; /* forward: map entries below it read the arrays, the rest the landing buffer */
    char *land;    /* our landing buffer */
    hxi_fz_field f[HXI_FZF_MAX];
    char *peer_land[HXI_FZF_PULSES]; /* pulse p: send_rank's landing buffer */
} hxi_fz_fields;

#endif /* HALOX_FUSED_FIELDS_H */
