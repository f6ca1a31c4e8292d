/*
 * pair_formulas.h - one function a style: hxp_<name>(c, r2, &e) returns
 * F(r)/r (the pair force along the separation is that times dx) and sets
 * e to E(r), both at r^2 = r2 within the cutoff. Included twice by
 * pair_eval.h, with HXP_T double and float; no include guard, and the
 * macros it takes are undefined at its end (HXP_ROOT, HXP_OVER_R,
 * HXP_INV_R and HXP_INV_R2: r, x / r, 1 / r and 1 / r^2 from r^2). The
 * coefficients c[] are set by the style's coef function in pair_styles.c.
 */

/* lj/cut: c = 48 eps s^12, 24 eps s^6, 4 eps s^12, 4 eps s^6. */
HXP_FN HXP_T HXP_S(hxp_lj_cut)(const HXP_T *c, HXP_T r2, HXP_T *e)
{
    const HXP_T r2i = (HXP_T) 1 / r2;
    const HXP_T r6i = r2i * r2i * r2i;
    *e = r6i * (c[2] * r6i - c[3]);
    return r6i * (c[0] * r6i - c[1]) * r2i;
}

/* morse: E = D0 (exp(-2 a (r - r0)) - 2 exp(-a (r - r0))); c = D0, alpha,
 * r0, 2 D0 alpha. */
HXP_FN HXP_T HXP_S(hxp_morse)(const HXP_T *c, HXP_T r2, HXP_T *e)
{
    const HXP_T r = HXP_ROOT(r2);
    const HXP_T dexp = HXP_EXP(-c[1] * (r - c[2]));
    *e = c[0] * (dexp * dexp - 2 * dexp);
    return HXP_OVER_R(c[3] * (dexp * dexp - dexp), r2, r);
}

/* yukawa: E = A exp(-kappa r) / r; c = A, kappa. */
HXP_FN HXP_T HXP_S(hxp_yukawa)(const HXP_T *c, HXP_T r2, HXP_T *e)
{
    const HXP_T r2i = HXP_INV_R2(r2);
    const HXP_T r = HXP_ROOT(r2);
    const HXP_T rinv = HXP_INV_R(r2, r);
    const HXP_T screening = HXP_EXP(-c[1] * r);
    *e = c[0] * screening * rinv;
    return c[0] * screening * (c[1] + rinv) * r2i;
}

/* soft: E = A (1 + cos(pi r / rc)); c = A, pi / rc. */
HXP_FN HXP_T HXP_S(hxp_soft)(const HXP_T *c, HXP_T r2, HXP_T *e)
{
    const HXP_T r = HXP_ROOT(r2);
    const HXP_T arg = c[1] * r;
    *e = c[0] * (1 + HXP_COS(arg));
    return HXP_OVER_R(c[0] * HXP_SIN(arg) * c[1], r2, r);
}

/* lj/smooth/linear: lj/cut's force less its value at rc, and the energy
 * that goes with it, both 0 at rc; c = lj/cut's four, then E_lj(rc),
 * F_lj(rc) and rc. */
HXP_FN HXP_T HXP_S(hxp_lj_smooth_linear)(const HXP_T *c, HXP_T r2, HXP_T *e)
{
    const HXP_T r2i = (HXP_T) 1 / r2;
    const HXP_T r6i = r2i * r2i * r2i;
    const HXP_T rinv = HXP_SQRT(r2i);
    const HXP_T r = HXP_SQRT(r2);
    *e = r6i * (c[2] * r6i - c[3]) - c[4] + (r - c[6]) * c[5];
    return (rinv * (r6i * (c[0] * r6i - c[1])) - c[5]) * rinv;
}

#undef HXP_T
#undef HXP_S
#undef HXP_SQRT
#undef HXP_EXP
#undef HXP_SIN
#undef HXP_COS
#undef HXP_ROOT
#undef HXP_OVER_R
#undef HXP_INV_R
#undef HXP_INV_R2
