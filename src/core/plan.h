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
    int *maps[HX_MAX_PULSES]; /* owned storage behind pulse[p].map */
    double *x;                /* ntotal * 3 */
    uint8_t *zones;           /* ntotal * 4 */
};

#endif /* HALOX_PLAN_H */
