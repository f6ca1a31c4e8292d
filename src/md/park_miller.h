/*
 * park_miller.h - the Park-Miller minimal standard generator (multiplier
 * 16807, modulus 2^31 - 1) by Schrage's method, as LAMMPS's RanPark and
 * miniMD's random() compute it: the same integer steps and the same
 * double, (1 / (2^31 - 1)) * state, in (0, 1).
 */
#ifndef HALOX_MD_PARK_MILLER_H
#define HALOX_MD_PARK_MILLER_H

static inline double hxi_park_miller(int *state)
{
    const int ia = 16807, im = 2147483647, iq = 127773, ir = 2836;
    int k = *state / iq;
    *state = ia * (*state - k * iq) - ir * k;
    if (*state < 0)
        *state += im;
    return (1.0 / im) * *state;
}

#endif
