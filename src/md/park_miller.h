/*
 * park_miller.h - the Park-Miller minimal standard generator (multiplier
 * 16807, modulus 2^31 - 1), as LAMMPS's RanPark and miniMD's random()
 * compute it: the same integer steps and the same double,
 * (1 / (2^31 - 1)) * state, in (0, 1). They use Schrage's method to stay
 * in 32 bits; here the product is formed in 64 bits and reduced with
 * 2^31 = 1 (mod 2^31 - 1), which gives the same state for every state
 * from 0 to 2^31 - 1 without a division.
 */
#ifndef HALOX_MD_PARK_MILLER_H
#define HALOX_MD_PARK_MILLER_H

#include <stdint.h>

#define HXI_PARK_MILLER_A 16807
#define HXI_PARK_MILLER_M 2147483647 /* 2^31 - 1 */

static inline double hxi_park_miller(int *state)
{
    const int64_t im = HXI_PARK_MILLER_M;
    const int64_t p = HXI_PARK_MILLER_A * (int64_t) *state;
    int64_t r = (p & im) + (p >> 31);
    if (r >= im)
        r -= im;
    *state = (int) r;
    return (1.0 / (double) im) * (double) *state;
}

/* The state k values after `state`: 16807^k * state mod (2^31 - 1), by
 * squaring, so that a stream can be started anywhere along it. */
static inline int hxi_park_miller_jump(int state, int64_t k)
{
    const uint64_t m = HXI_PARK_MILLER_M;
    uint64_t mult = HXI_PARK_MILLER_A, r = 1u;
    for (; k > 0; k >>= 1) {
        if (k & 1)
            r = r * mult % m;
        mult = mult * mult % m;
    }
    return (int) (r * (uint64_t) state % m);
}

#endif
