/*
 * fused_util.h - what the nvshmem-fused tests share: the transport
 * variants (fused and fused-tma, each force mode, put path on and off, all
 * in graph mode so that a step can be launched or replayed), the cpu
 * reference of one step, and the check of one variant's step against it.
 *
 * Coordinates must be bitwise those of the cpu transport (float). Forces:
 * push and pull add every atom's contributions in the cpu transport's
 * order, so they must be bitwise equal too; remote atomics add in any
 * order, so the atomic mode must agree within 1e-6 of the sum of the
 * contributions' magnitudes (a double cpu reverse of |f|), which bounds
 * float rounding in any order.
 */
#ifndef HALOX_TESTS_FUSED_UTIL_H
#define HALOX_TESTS_FUSED_UTIL_H

#include "sysgen.h"

#define HXT_FZ_MAXV 8

typedef struct hxt_fz_var {
    hx_transport *t;
    char label[64];
    const char *fmode; /* "push", "pull", "atomic" */
    int put;           /* put path forced */
    int alive;
} hxt_fz_var;

/* 1 when the variant's forces must match the cpu ones bitwise. */
int hxt_fz_bitwise_forces(const hxt_fz_var *v);

/* 1 when every rank sees a CUDA device. Collective. */
int hxt_fz_have_gpu(hx_comm *comm);

/* Creates one variant (collective); 0 when it was refused everywhere or
 * failed (a failure other than HX_ERR_UNSUPPORTED is a test failure). */
int hxt_fz_create(hx_comm *comm, hxt_fz_var *v, const char *name, const char *fmode, int put,
                  double timeout_s, void *stream);

/* The standard set: fused x {push, pull, atomic} x {direct, put}, and
 * fused-tma push x {direct, put}. Returns how many were created. */
int hxt_fz_create_all(hx_comm *comm, hxt_fz_var *v, double timeout_s);
/* Another transport of the fused design (nccl-dev): its push and pull
 * modes, load/store only. Returns how many were created. */
int hxt_fz_create_named(hx_comm *comm, hxt_fz_var *v, const char *name, double timeout_s);

/* The cpu reference of one step: halo coordinates (xr, ntotal * 3),
 * forces after the reverse (fr, nhome * 3) and the magnitude bound
 * (sabs, nhome * 3). cf, cd: float and double cpu transports. */
typedef struct hxt_fz_ref {
    hx_transport *cf, *cd;
    float *xr, *fr;
    double *sabs, *tmp;
    int cap;
} hxt_fz_ref;

/* The two cpu transports (collective; 0 when either failed on a rank), and
 * everything freed. */
int hxt_fz_ref_init(hx_comm *comm, hxt_fz_ref *r);
void hxt_fz_ref_free(hxt_fz_ref *r);

/* The reference's arrays sized for plan, and the plan set on both cpu
 * transports. Collective. */
int hxt_fz_ref_plan(hx_comm *comm, hxt_fz_ref *r, const hx_plan *plan);

/* cur: nhome * 3 home coordinates; force: ntotal * 3 float-representable
 * forces. */
int hxt_fz_ref_step(hx_comm *comm, hxt_fz_ref *r, const hx_plan *plan, const double *cur,
                    const double *force);

/* Random forces spanning two decades, float-representable. */
void hxt_fz_forces(double *force, int n3, hxt_rng *rng);

/* One step of variant v, launched (forward + reverse) or replayed from its
 * graph, checked against the reference. Returns 1 when it ran and agreed
 * (on every rank). `what` names the case in messages. */
int hxt_fz_check(hx_comm *comm, const hxt_fz_ref *r, const hx_plan *plan, hxt_fz_var *v,
                 const double *cur, const double *force, int graph, const char *what);

#endif /* HALOX_TESTS_FUSED_UTIL_H */
