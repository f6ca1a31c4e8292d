/*
 * pack_dev.cuh - one pulse entry's coordinates as every GPU kernel that
 * packs them computes it (the transports' packs, the fused kernels, the
 * device rebuild's send records): the atom's three floats with the
 * periodic image (hxi_fshift) added, in float. Keeping the one expression
 * here keeps every path's halo bitwise equal to the cpu transport's float
 * pack (hxi_pulse_pack_float). For an orthorhombic box two of the three
 * components are 0, added as -0.0f, which changes no value.
 */
#ifndef HALOX_PACK_DEV_CUH
#define HALOX_PACK_DEV_CUH

#include "transport/gpu/gpu_types.h"

#include <stddef.h>

/* x[3 atom + 0..2], with the shift added, into v0..v2. */
static __device__ __forceinline__ void
hxi_dev_load_shifted(const float *x, int atom, hxi_fshift shift, float &v0, float &v1, float &v2)
{
    const float *s = x + 3 * (size_t) atom;
    v0 = s[0] + shift.v[0];
    v1 = s[1] + shift.v[1];
    v2 = s[2] + shift.v[2];
}

/* Entry i of a pulse: atom map[i], shifted, stored at dst[3 i]. */
static __device__ __forceinline__ void hxi_dev_pack_one(float *dst, const float *x, const int *map,
                                                        int i, hxi_fshift shift)
{
    float v0, v1, v2;
    hxi_dev_load_shifted(x, map[i], shift, v0, v1, v2);
    float *d = dst + 3 * (size_t) i;
    d[0] = v0;
    d[1] = v1;
    d[2] = v2;
}

#endif /* HALOX_PACK_DEV_CUH */
