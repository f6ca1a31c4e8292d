/*
 * pair_eval.h - the pair styles' formulas, written once for the CPU engine
 * (double) and the GPU engine (float): each gives F(r)/r and the energy
 * E(r) (not shifted) at r^2 from the style's coefficients c[], which
 * pair_styles.c derives from the deck's parameters. The formulas are
 * LAMMPS's (src/pair_<style>.cpp). Usable from C and from CUDA; not
 * installed. docs/md-pair.md walks through adding a style.
 */
#ifndef HALOX_MD_PAIR_EVAL_H
#define HALOX_MD_PAIR_EVAL_H

#include <math.h>

/* The styles: X(ID, name), name as in the formulas' function names. The
 * ids are what restart files hold: a new style goes at the end. */
#define HX_PAIR_STYLES(X)                                                                          \
    X(LJ_CUT, lj_cut)                                                                              \
    X(MORSE, morse)                                                                                \
    X(YUKAWA, yukawa)                                                                              \
    X(SOFT, soft)                                                                                  \
    X(LJ_SMOOTH_LINEAR, lj_smooth_linear)

#define HX_PAIR_ENUM(ID, name) HX_PAIR_##ID,
enum { HX_PAIR_STYLES(HX_PAIR_ENUM) HX_PAIR_NSTYLES };
#undef HX_PAIR_ENUM

enum {
    HX_PAIR_NPARAM = 4, /* a style's parameters (pair_coeff's, then pair_style's) */
    HX_PAIR_NCOEF = 8   /* coefficients the formulas use */
};

#if defined(__CUDACC__)
#define HXP_FN static inline __host__ __device__
#else
#define HXP_FN static inline
#endif

/* The formulas in double (suffix _d) and in float (suffix _f). */
#define HXP_T       double
#define HXP_S(name) name##_d
#define HXP_SQRT    sqrt
#define HXP_EXP     exp
#define HXP_SIN     sin
#define HXP_COS     cos
/* r, x / r, 1 / r and 1 / r^2 from r^2: in double as LAMMPS writes them (a
 * square root, then divisions); in float on the GPU from one rsqrtf (2 ulp;
 * the compiler computes it once), which spares the divisions. */
#define HXP_ROOT(r2)         sqrt(r2)
#define HXP_OVER_R(x, r2, r) ((x) / (r))
#define HXP_INV_R(r2, r)     (1 / (r))
#define HXP_INV_R2(r2)       (1 / (r2))
#include "md/pair/pair_formulas.h"

/* On the GPU the float formulas take the hardware's exponential and sine
 * (a few ulp, far below the engine's float bounds; arguments stay within
 * a few units: -alpha (r - r0), -kappa r, pi r / rc). */
#define HXP_T       float
#define HXP_S(name) name##_f
#define HXP_SQRT    sqrtf
#if defined(__CUDA_ARCH__)
#define HXP_EXP              __expf
#define HXP_SIN              __sinf
#define HXP_COS              __cosf
#define HXP_ROOT(r2)         ((r2) *rsqrtf(r2))
#define HXP_OVER_R(x, r2, r) ((x) *rsqrtf(r2))
#define HXP_INV_R(r2, r)     rsqrtf(r2)
#define HXP_INV_R2(r2)       (rsqrtf(r2) * rsqrtf(r2))
#else
#define HXP_EXP              expf
#define HXP_SIN              sinf
#define HXP_COS              cosf
#define HXP_ROOT(r2)         sqrtf(r2)
#define HXP_OVER_R(x, r2, r) ((x) / (r))
#define HXP_INV_R(r2, r)     (1 / (r))
#define HXP_INV_R2(r2)       (1 / (r2))
#endif
#include "md/pair/pair_formulas.h"

#endif /* HALOX_MD_PAIR_EVAL_H */
