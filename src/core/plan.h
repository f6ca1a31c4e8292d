/*
 * plan.h - the halo plan as the transports see it. Not installed.
 */
#ifndef HALOX_PLAN_H
#define HALOX_PLAN_H

#include "halox.h"

struct hx_plan {
    hx_decomp decomp;
    int nhome;
    int nhalo;
    int ntotal;
    int max_ntotal; /* over all ranks */
    int max_nsend;  /* largest pulse send count over all ranks */
    int npulses;
    hx_pulse pulse[HX_MAX_PULSES];
    /* from[p][q]: map entries of pulse p that pulse q delivered. */
    int from[HX_MAX_PULSES][HX_MAX_PULSES];
    /* Host plan (hx_plan_create). */
    int *maps[HX_MAX_PULSES]; /* owned storage behind pulse[p].map */
    double *x;                /* ntotal * 3 */
    uint8_t *zones;           /* ntotal * 4 */
    /* Device plan (hx_plan_create_device): device arrays, freed by
     * free_device (the rebuild module's, so that the core needs no CUDA). */
    int on_device;
    float *d_x;       /* ntotal * 3 */
    uint8_t *d_zones; /* ntotal * 4 */
    int *d_maps;      /* all maps, pulse p at pulse[p].map_offset */
    void (*free_device)(struct hx_plan *plan);
    void *device_owner; /* the rebuild context that made it */
};

/* Fills from[][] and every pulse's deps, map_offset and share from the
 * host maps. */
void hxi_plan_summarise(hx_plan *p);

/* The periodic image a pulse along dim adds on this rank: the box edge
 * crossed (d->edge[dim]) where the send wraps (coord[dim] == 0), else
 * zeros. */
void hxi_pulse_shift(const hx_decomp *d, int dim, double shift[3]);

/* Component k of the shift as every pack adds it: a zero off the pulse's
 * dimension is -0.0, the identity of IEEE addition (x + 0.0 turns a -0.0
 * into +0.0), so that those components come out exactly as they went in,
 * as when a pack added the shift along its dimension only. */
double hxi_pack_shift(const hx_pulse *p, int k);

/* A pulse's coordinates as they are sent: buf[3 i + c] = x[3 map[i] + c]
 * + hxi_pack_shift(p, c) for its nsend entries (in the array's type: float
 * adds the shift rounded to float). The host side of every pack; the
 * kernels' is hxi_dev_load_shifted (transport/gpu/pack_dev.cuh), with the
 * shift from hxi_fshift_of. */
void hxi_pulse_pack_double(const hx_pulse *p, const double *x, double *buf);
void hxi_pulse_pack_float(const hx_pulse *p, const float *x, float *buf);

#endif /* HALOX_PLAN_H */
