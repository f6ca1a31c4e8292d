/*
 * common.c - what the transports' backends share and call down into (never
 * up into the registry): the capacity rule and the check that a plan fits.
 */
#include "transport/transport.h"

#include <stdint.h>

int hxi_capacity_for(int need, int floor)
{
    /* A quarter more than needed, so that small changes at the next rebuild
     * do not force a collective re-allocation. */
    long cap = (long) need + need / 4 + 64;
    if (cap < floor)
        cap = floor;
    return cap > INT32_MAX ? INT32_MAX : (int) cap;
}

hx_status hxi_transport_fit(hx_transport *t, int *grow, int *new_capacity)
{
    int need = t->plan->max_ntotal;
    *grow = 0;
    *new_capacity = t->capacity;
    if (need <= t->capacity)
        return HX_OK;
    if (t->opts.fixed_capacity && t->capacity > 0)
        return hxi_error(HX_ERR_OVERFLOW,
                         "transport '%s': the plan needs room for %d atoms on its largest rank "
                         "but the buffers hold %d and fixed_capacity forbids growth: raise "
                         "opts.capacity or set fixed_capacity = 0",
                         t->ops->name, need, t->capacity);
    *grow = 1;
    *new_capacity = hxi_capacity_for(need, t->opts.capacity);
    return HX_OK;
}
