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

static inline double hxi_park_miller(int *state)
{
    const int64_t im = 2147483647;
    const int64_t p = 16807 * (int64_t) *state;
    int64_t r = (p & im) + (p >> 31);
    if (r >= im)
        r -= im;
    *state = (int) r;
    return (1.0 / (double) im) * (double) *state;
}

#endif
