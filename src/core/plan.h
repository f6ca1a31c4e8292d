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
    int full_shell; /* 1: hx_plan_create_full's pulses, both directions */
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

/* The periodic image a pulse along dim towards dir adds on this rank: the
 * box edge crossed where the send wraps, else zeros. dir -1 (to the lower
 * neighbour) wraps at coord[dim] == 0 and adds d->edge[dim]; dir +1 (to the
 * upper one, full shell) wraps at coord[dim] == grid[dim] - 1 and adds
 * -d->edge[dim]. */
void hxi_pulse_shift(const hx_decomp *d, int dim, int dir, double shift[3]);

/* The selection of a pulse along dim towards dir, on heights
 * (hx_decomp_height) in the sender's frame: dir -1 sends what lies below
 * the domain's lower face plus the cutoff, dir +1 what lies above its
 * upper face less the cutoff. The host and the device plan compare with
 * these, in double. */
static inline double hxi_pulse_limit(const hx_decomp *d, int dim, int dir)
{
    return dir < 0 ? d->dom_lo[dim] + d->cutoff : d->dom_hi[dim] - d->cutoff;
}
static inline int hxi_pulse_selects(int dir, double h, double limit)
{
    return dir < 0 ? h < limit : h > limit;
}

/* The state of one host plan build: the communicator, the atoms the plan's
 * arrays hold, the send buffers. */
typedef struct hxi_plan_work {
    hx_comm *comm;
    int cap;
    double *sbuf;
    uint8_t *zbuf;
} hxi_plan_work;

/* Collective: the host plan (hx_plan_create, full 0; hx_plan_create_full,
 * full 1), checks, pulses and summary. */
hx_status hxi_plan_build(hx_plan **out, hx_comm *comm, const hx_decomp *d, int nhome,
                         const double *x, int full);

/* Collective: one pulse along dim towards dir (-1: to the lower neighbour,
 * +1: to the upper), number `index` of its direction, from the candidates
 * [cand_lo, cand_hi): selects, packs, exchanges and appends what arrives
 * (zones: the receiver's offset along dim is the sender's minus dir). */
hx_status hxi_plan_pulse_run(hx_plan *p, hxi_plan_work *w, int dim, int dir, int index, int cand_lo,
                             int cand_hi);

/* Full shell (plan_full.c): whether the decomposition's pulses, doubled,
 * fit in HX_MAX_PULSES; and the pulses themselves. */
hx_status hxi_plan_full_check(const hx_decomp *d);
hx_status hxi_plan_full_pulses(hx_plan *p, hxi_plan_work *w);

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
