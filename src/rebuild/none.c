/*
 * none.c - the device rebuild in a build without CUDA: every call says so.
 */
#include "core/hxi.h"

static hx_status hxr_none(void)
{
    return hxi_error(HX_ERR_UNSUPPORTED,
                     "the device rebuild needs CUDA, and this libhalox was built without it "
                     "(-DHALOX_WITH_CUDA=ON); use hx_migrate and hx_plan_create");
}

hx_status hx_rebuild_create(hx_rebuild **r, hx_transport *t, const hx_decomp *d)
{
    (void) t, (void) d;
    if (r)
        *r = NULL;
    return hxr_none();
}

void hx_rebuild_destroy(hx_rebuild *r)
{
    (void) r;
}

hx_status hx_rebuild_set_decomp(hx_rebuild *r, const hx_decomp *d)
{
    (void) r, (void) d;
    return hxr_none();
}

hx_status hx_rebuild_keep_order(hx_rebuild *r, int keep)
{
    (void) r, (void) keep;
    return hxr_none();
}

hx_status hx_rebuild_migrate(hx_rebuild *r, int *n, int *capacity, float **x, int xstride,
                             const hx_dfield *fields, int nfields)
{
    (void) r, (void) n, (void) capacity, (void) x, (void) xstride, (void) fields, (void) nfields;
    return hxr_none();
}

hx_status hx_plan_create_device(hx_plan **plan, hx_rebuild *r, int nhome, const float *x,
                                int xstride)
{
    (void) r, (void) nhome, (void) x, (void) xstride;
    if (plan)
        *plan = NULL;
    return hxr_none();
}

hx_status hx_plan_create_device_full(hx_plan **plan, hx_rebuild *r, int nhome, const float *x,
                                     int xstride)
{
    return hx_plan_create_device(plan, r, nhome, x, xstride);
}

hx_status hx_plan_count_device(hx_rebuild *r, int nhome, const float *x, int xstride)
{
    (void) r, (void) nhome, (void) x, (void) xstride;
    return hxr_none();
}

hx_status hx_rebuild_census(hx_rebuild *r, int n, const int64_t *ids, int64_t *natoms,
                            uint64_t *checksum)
{
    (void) r, (void) n, (void) ids, (void) natoms, (void) checksum;
    return hxr_none();
}
