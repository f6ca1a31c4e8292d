/*
 * balance_math.h - the arithmetic of LAMMPS's balance that libhalox's
 * host count (core/balance.c) and the GPU engine's count kernel
 * (md/gpu/md_balance.cu) both run, so that the two bin an atom alike:
 * Domain::x2lamda and Balance::binary. Compiles as C11 and as CUDA C++
 * (functions are host and device there). Not installed.
 */
#ifndef HALOX_CORE_BALANCE_MATH_H
#define HALOX_CORE_BALANCE_MATH_H

#ifndef HXI_HD
#ifdef __CUDACC__
#define HXI_HD __host__ __device__
#else
#define HXI_HD
#endif
#endif

/* Fractional coordinate along k of d = x - box_lo, as LAMMPS's
 * Domain::x2lamda computes it from the box (h = lx, ly, lz, yz, xz, xy
 * and its inverse's entries); len: lx, ly, lz; tilt: xy, xz, yz. */
HXI_HD static inline double hxi_bal_lamda(const double len[3], const double tilt[3], int tri, int k,
                                          const double d[3])
{
    const double lx = len[0], ly = len[1], lz = len[2];
    const double xy = tilt[0], xz = tilt[1], yz = tilt[2];
    if (!tri)
        return (1.0 / len[k]) * d[k];
    if (k == 0)
        return (1.0 / lx) * d[0] + (-xy / (lx * ly)) * d[1] +
               ((yz * xy - ly * xz) / (lx * ly * lz)) * d[2];
    if (k == 1)
        return (1.0 / ly) * d[1] + (-yz / (ly * lz)) * d[2];
    return (1.0 / lz) * d[2];
}

/* LAMMPS's Balance::binary: the slab of value among cuts[0 .. n - 1]
 * (cuts[n] is not looked at): 0 below cuts[0], n - 1 at or above
 * cuts[n - 1], else the k with cuts[k] <= value < cuts[k + 1]. A value
 * that compares false both ways (NaN) moves lo, so the search ends. */
HXI_HD static inline int hxi_bal_binary(double value, int n, const double *cuts)
{
    int lo = 0, hi = n - 1;
    if (value < cuts[lo])
        return lo;
    if (value >= cuts[hi])
        return hi;
    int index = (lo + hi) / 2;
    while (lo < hi - 1) {
        if (value < cuts[index])
            hi = index;
        else
            lo = index;
        index = (lo + hi) / 2;
    }
    return index;
}

#endif
