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

#include <stddef.h>
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

/* LAMMPS's RanPark::reset(int seed, double *coord): the Jenkins
 * one-at-a-time hash of the bytes of the int seed and then of the three
 * doubles of x (bytes as signed chars, as LAMMPS on x86-64 reads them),
 * state = hash & 0x7ffffff (27 bits, LAMMPS's mask), 1 where that is 0,
 * then 5 values discarded. Returns the state; the next value is the
 * stream's first. The same for every decomposition: it depends only on
 * the seed and the atom's coordinates. */
static inline unsigned int hxi_jenkins_add(unsigned int hash, const void *data, size_t len)
{
    const signed char *b = (const signed char *) data;
    for (size_t i = 0; i < len; i++) {
        hash += (unsigned int) (int) b[i];
        hash += hash << 10;
        hash ^= hash >> 6;
    }
    return hash;
}

static inline int hxi_park_miller_reset(int seed, const double x[3])
{
    unsigned int hash = hxi_jenkins_add(0u, &seed, sizeof seed);
    int state;
    hash = hxi_jenkins_add(hash, x, 3 * sizeof(double));
    hash += hash << 3;
    hash ^= hash >> 11;
    hash += hash << 15;
    state = (int) (hash & 0x7ffffffu);
    if (state == 0)
        state = 1;
    for (int i = 0; i < 5; i++)
        (void) hxi_park_miller(&state);
    return state;
}

#endif
