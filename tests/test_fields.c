/*
 * test_fields: per-atom fields through the halo (hx_transport_field_add,
 * hx_transport_fields_forward, hx_transport_fields_reverse) on the cpu
 * transport (float and double); built as test_fields_gpu (HXT_FIELDS_GPU),
 * on every GPU transport of the build with device arrays: each one with
 * and without force_put where it has a put path, the fused ones in graph
 * mode too (there the forward with the coordinates and the reverse with
 * the forces are also captured in a CUDA graph and replayed), `auto`,
 * which passes field calls to its choice, and nvshmem-fused with its
 * forces pushed instead of pulled; and a host array refused. Nine
 * fields: float, double and int32, each of width 1, 3 and 7. Each check
 * makes three calls: every field alone, then the odd ones and the even
 * ones with the coordinates (forces): at most 8 each, so that on the
 * nvshmem-fused transports they ride the fused kernels, every type and
 * width among them. The oracle is brute force from the coordinates: each
 * halo atom's owner is the one atom of the system whose position equals
 * the halo coordinates modulo the box. A forward must give every halo
 * entry its owner's values exactly (no shift added); a reverse must add
 * into each home atom the values on all its halo copies on all ranks:
 * int32 exactly, double to 1e-12 and float to 1e-6 of the sum of
 * magnitudes, and on a GPU transport bitwise what the cpu transport gives
 * (the sums formed in the same order). With the coordinates (forces) in
 * the same call, those must come out bitwise as hx_transport_forward
 * (reverse) gives them, and fields not named must stay untouched. Then
 * the bad input: one clear error each. With --stopped-peer, only a rank
 * that skips a field forward: the others must end in HX_ERR_TIMEOUT, not
 * hang. test_fields_gpu skips (77) where no CUDA device is seen.
 */
#include "fields_bad.h"
#include "oracle.h"

#include "core/hxi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HXT_FIELDS_GPU
#include <cuda_runtime_api.h>
#endif

static const double box_lo[3] = {2.0, 0.0, -1.5};
static const double box_len[3] = {12.5, 14.0, 11.75};

enum { NF = 9 };
static const hx_ftype ftypes[3] = {HX_FIELD_FLOAT, HX_FIELD_DOUBLE, HX_FIELD_INT32};
static const int fwidths[3] = {1, 3, 7};

/* The nine fields of a case: field k has type ftypes[k / 3] and width
 * fwidths[k % 3]. */
typedef struct fset {
    void *a[NF]; /* host arrays: what the checks read and write */
    void *d[NF]; /* their device copies, registered on a GPU transport */
    int id[NF];
    int n;   /* atoms each array holds (the plan's ntotal) */
    int dev; /* 1: the transport takes the device copies */
} fset;

static hx_ftype ftype_of(int k)
{
    return ftypes[k / 3];
}
static int width_of(int k)
{
    return fwidths[k % 3];
}
static size_t size_of(int k)
{
    return (size_t) width_of(k) * (ftype_of(k) == HX_FIELD_DOUBLE ? 8 : 4);
}

static double get(const fset *f, int k, int i, int c)
{
    size_t at = (size_t) width_of(k) * (size_t) i + (size_t) c;
    switch (ftype_of(k)) {
    case HX_FIELD_FLOAT:
        return ((const float *) f->a[k])[at];
    case HX_FIELD_DOUBLE:
        return ((const double *) f->a[k])[at];
    default:
        return ((const int32_t *) f->a[k])[at];
    }
}

static void put(fset *f, int k, int i, int c, double v)
{
    size_t at = (size_t) width_of(k) * (size_t) i + (size_t) c;
    if (ftype_of(k) == HX_FIELD_FLOAT)
        ((float *) f->a[k])[at] = (float) v;
    else if (ftype_of(k) == HX_FIELD_DOUBLE)
        ((double *) f->a[k])[at] = v;
    else
        ((int32_t *) f->a[k])[at] = (int32_t) v;
}

/* A value that names the atom, the field and the component, exact in every
 * type. */
static double tag_of(int64_t id, int k, int c)
{
    return (double) id * 128.0 + k * 8 + c;
}

/* ------------------------------------------------------ device copies */

#ifdef HXT_FIELDS_GPU
static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    HXT_CHECK(cudaMalloc(&p, bytes) == cudaSuccess, "cudaMalloc of %zu bytes failed", bytes);
    return p;
}

static void dev_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    HXT_CHECK(cudaMemcpy(dst, src, bytes, kind) == cudaSuccess, "cudaMemcpy of %zu bytes failed",
              bytes);
}

/* Host arrays to their device copies (to_dev) or back. A copy from
 * pageable memory may return before it lands, and the transport's stream
 * need not wait for the default stream: the device is drained after. */
static void fset_copy(fset *f, int to_dev)
{
    for (int k = 0; f->dev && k < NF; k++)
        if (to_dev)
            dev_copy(f->d[k], f->a[k], (size_t) f->n * size_of(k), cudaMemcpyHostToDevice);
        else
            dev_copy(f->a[k], f->d[k], (size_t) f->n * size_of(k), cudaMemcpyDeviceToHost);
    if (f->dev)
        HXT_CHECK(cudaDeviceSynchronize() == cudaSuccess, "cudaDeviceSynchronize failed");
}
#else
static void *dev_alloc(size_t bytes)
{
    HXT_CHECK(0, "device arrays of %zu bytes asked in a build without CUDA", bytes);
    return NULL;
}
static void fset_copy(fset *f, int to_dev)
{
    (void) f, (void) to_dev;
}
#endif

/* Registers the nine fields on t, the arrays ntotal atoms long (allocated
 * here, after the plan, as the header asks); dev: device copies are
 * registered instead. */
static int fset_add(fset *f, hx_transport *t, int ntotal, int dev)
{
    int ok = 1;
    f->n = ntotal;
    f->dev = dev;
    for (int k = 0; k < NF; k++) {
        f->a[k] = hxt_xcalloc((size_t) ntotal + 1, size_of(k));
        f->d[k] = dev ? dev_alloc(((size_t) ntotal + 1) * size_of(k)) : NULL;
        hx_field d = {dev ? &f->d[k] : &f->a[k], size_of(k)};
        ok &= HXT_OK(hx_transport_field_add(t, &d, ftype_of(k), width_of(k), &f->id[k]));
    }
    return ok;
}

static void fset_free(fset *f, hx_transport *t)
{
    for (int k = 0; k < NF; k++) {
        HXT_OK(hx_transport_field_remove(t, f->id[k]));
        free(f->a[k]);
#ifdef HXT_FIELDS_GPU
        cudaFree(f->d[k]);
#endif
    }
}

/* After a call: t's work done here and on every rank, so that no peer's
 * next exchange meets this one (the GPU transports' signals count steps:
 * an exchange runs once every rank is done with the one before). */
static void settle(hx_comm *comm, hx_transport *t)
{
    hxt_agree(comm, HXT_OK(hx_transport_sync(t)));
}

/* The stream a graph-mode transport under test runs on (opts.stream),
 * NULL for the others: its forward with the coordinates is captured in a
 * CUDA graph and replayed. */
static void *capture_stream;

/* Forces: the same values before each reverse, and a forward before it
 * (a GPU transport's reverse answers that step's forward). */
static void fill_forces(hx_comm *comm, hx_transport *t, const double *f0, int ntotal)
{
    HXT_OK(hx_transport_write(t, HX_FORCES, 0, ntotal, f0));
    HXT_OK(hx_transport_forward(t));
    settle(comm, t);
}

#ifdef HXT_FIELDS_GPU
/* The field call with the coordinates (forces). */
static hx_status call_fields(hx_transport *t, const int *ids, int n, int reverse)
{
    return reverse ? hx_transport_fields_reverse(t, ids, n, 1)
                   : hx_transport_fields_forward(t, ids, n, 1);
}

/* That call captured in a graph on the stream and replayed once. A
 * transport that takes the generic path there (the put path, the atomic
 * force mode) refuses the capture: said, and run uncaptured instead. */
static void call_captured(hx_transport *t, const int *ids, int n, int reverse)
{
    const char *what = reverse ? "reverse" : "forward";
    cudaStream_t s = (cudaStream_t) capture_stream;
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    HXT_CHECK(e == cudaSuccess, "cudaStreamBeginCapture: %s", cudaGetErrorString(e));
    if (e != cudaSuccess)
        return;
    hx_status st = call_fields(t, ids, n, reverse);
    char why[256];
    snprintf(why, sizeof why, "%s", hx_last_error());
    e = cudaStreamEndCapture(s, &g);
    if (st == HX_ERR_STATE && strstr(why, "stream capture")) {
        if (hxt_rank == 0)
            printf("test_fields_gpu: %s not captured: %s\n", what, why);
        if (g)
            cudaGraphDestroy(g);
        HXT_OK(call_fields(t, ids, n, reverse));
        return;
    }
    HXT_CHECK(st == HX_OK && e == cudaSuccess, "captured fields %s: %s: %s (%s)", what,
              hx_status_string(st), why, cudaGetErrorString(e));
    if (st == HX_OK && e == cudaSuccess)
        e = cudaGraphInstantiate(&x, g, 0);
    if (st == HX_OK && e == cudaSuccess)
        e = cudaGraphLaunch(x, s);
    HXT_CHECK(e == cudaSuccess, "graph of the fields %s: %s", what, cudaGetErrorString(e));
    if (x)
        cudaGraphExecDestroy(x);
    if (g)
        cudaGraphDestroy(g);
}
#endif

/* A field call on the host arrays: copied to the device first and back
 * after (all nine: those not named must come back untouched). A call with
 * the coordinates (forces) on a graph-mode transport runs once plainly
 * (its buffers grow outside any capture), then captured and replayed on
 * the same values: a reverse's forces f0 written again and a forward
 * before it. */
static void fset_call(hx_comm *comm, hx_transport *t, fset *f, const int *ids, int n, int with,
                      int reverse, const double *f0)
{
    fset_copy(f, 1);
    if (reverse)
        HXT_OK(hx_transport_fields_reverse(t, ids, n, with));
    else
        HXT_OK(hx_transport_fields_forward(t, ids, n, with));
    settle(comm, t);
#ifdef HXT_FIELDS_GPU
    if (capture_stream && with) {
        if (reverse)
            fill_forces(comm, t, f0, f->n);
        fset_copy(f, 1);
        call_captured(t, ids, n, reverse);
        settle(comm, t);
    }
#else
    (void) f0;
#endif
    fset_copy(f, 0);
}

/* The calls of a check: 0, every field alone; 1, the odd ones and 2, the
 * even ones, with the coordinates (forces). Each with-call names at most
 * 8 (the nvshmem-fused kernels' limit) and the two together every type
 * at every width. */
enum { NMODE = 3 };

static int mode_names(int m, int k)
{
    return m == 0 || k % 2 == (m == 1);
}

/* The ids of mode m's call into ids; their count. */
static int mode_ids(const fset *f, int m, int *ids)
{
    int n = 0;
    for (int k = 0; k < NF; k++)
        if (mode_names(m, k))
            ids[n++] = f->id[k];
    return n;
}

/* The transport's coordinates or forces, ntotal atoms, as doubles (after
 * its queued work). Malloc'd. */
static double *read_array(hx_transport *t, hx_array which, int ntotal)
{
    double *a = hxt_xcalloc((size_t) ntotal * 3 + 1, sizeof(double));
    HXT_OK(hx_transport_sync(t));
    HXT_OK(hx_transport_read(t, which, 0, ntotal, a));
    return a;
}

/* ----------------------------------------------------------- the oracle */

static int same_image(const double *a, const double *b)
{
    for (int k = 0; k < 3; k++) {
        double d = a[k] - b[k];
        d -= box_len[k] * nearbyint(d / box_len[k]);
        if (!(fabs(d) <= 1e-9))
            return 0;
    }
    return 1;
}

/* The global id of every local atom: home atoms from the case, each halo
 * atom the one atom of the system at its coordinates modulo the box (-1
 * where none or several are). Malloc'd, ntotal entries. */
static int64_t *owners_from_coords(const hxt_case *c)
{
    int nhome = hx_plan_nhome(c->plan), ntotal = hx_plan_ntotal(c->plan);
    const double *x = hx_plan_coords(c->plan);
    int64_t *own = hxt_xmalloc((size_t) ntotal * sizeof *own);
    for (int i = 0; i < nhome; i++)
        own[i] = c->l.id[i];
    for (int i = nhome; i < ntotal; i++) {
        int found = -1, count = 0;
        for (int j = 0; j < c->s.n; j++)
            if (same_image(&x[3 * i], &c->s.x[3 * j])) {
                found = j;
                count++;
            }
        own[i] = count == 1 ? found : -1;
    }
    return own;
}

/* ------------------------------------------------------------- forward */

/* Home entries tagged, halo entries -1. */
static void fill_tags(fset *f, int nhome, const int64_t *own)
{
    for (int k = 0; k < NF; k++)
        for (int i = 0; i < f->n; i++)
            for (int c = 0; c < width_of(k); c++)
                put(f, k, i, c, i < nhome ? tag_of(own[i], k, c) : -1.0);
}

/* Entries of field k that differ from what a forward of it should leave
 * (named: the owner's tags on the halo; not named: -1 there). */
static int forward_wrong(const fset *f, int k, int nhome, const int64_t *own, int named)
{
    int bad = 0;
    for (int i = 0; i < f->n; i++)
        for (int c = 0; c < width_of(k); c++) {
            double want = i < nhome || named ? tag_of(own[i], k, c) : -1.0;
            bad += get(f, k, i, c) != want;
        }
    return bad;
}

/* Coordinates: home from the system, halo zeroed; then every rank waits
 * for the others, since a GPU transport's peers store straight into this
 * rank's halo once their forward starts, and a zeroing after that would
 * erase what they sent. */
static void fill_coords(hx_comm *comm, hx_transport *t, const hxt_case *c, int ntotal)
{
    int nhome = c->l.n;
    double *x = hxt_xcalloc((size_t) ntotal * 3 + 1, sizeof(double));
    memcpy(x, c->l.x, (size_t) nhome * 3 * sizeof(double));
    HXT_OK(hx_transport_write(t, HX_COORDS, 0, ntotal, x));
    free(x);
    settle(comm, t);
}

static void check_forward(hx_comm *comm, hx_transport *t, fset *f, const hxt_case *c,
                          const int64_t *own, const char *tn)
{
    int nhome = hx_plan_nhome(c->plan), ntotal = hx_plan_ntotal(c->plan);
    size_t xbytes = (size_t) ntotal * 3 * sizeof(double);
    /* The reference: coordinates as hx_transport_forward sends them. */
    fill_coords(comm, t, c, ntotal);
    HXT_OK(hx_transport_forward(t));
    settle(comm, t);
    double *xref = read_array(t, HX_COORDS, ntotal);
    for (int m = 0; m < NMODE; m++) {
        int ids[NF], n = mode_ids(f, m, ids), with = m > 0;
        fill_tags(f, nhome, own);
        fill_coords(comm, t, c, ntotal);
        if (!with) {
            HXT_OK(hx_transport_forward(t));
            settle(comm, t);
        }
        fset_call(comm, t, f, ids, n, with, 0, NULL);
        for (int k = 0; k < NF; k++) {
            int named = mode_names(m, k), bad = forward_wrong(f, k, nhome, own, named);
            HXT_CHECK(bad == 0,
                      "grid %s rh %g %s, call %d: field %d (%s x %d, named %d): %d "
                      "entries wrong",
                      c->gs, c->spec.rh, tn, m, k, ftype_of(k) == HX_FIELD_INT32 ? "int32" : "real",
                      width_of(k), named, bad);
        }
        double *x = read_array(t, HX_COORDS, ntotal);
        HXT_CHECK(memcmp(xref, x, xbytes) == 0,
                  "grid %s rh %g %s, call %d: coordinates differ from hx_transport_forward's",
                  c->gs, c->spec.rh, tn, m);
        free(x);
    }
    free(xref);
}

/* ------------------------------------------------------------- reverse */

/* Random values on every entry; their sums per atom (and of magnitudes)
 * over all ranks into want (per field k, N * width each) for the fields
 * named. */
static void fill_random(hx_comm *comm, fset *f, const int64_t *own, int N, uint64_t seed,
                        double *want[NF], double *mag[NF])
{
    hxt_rng r = {seed * 1000003u + (uint64_t) hx_comm_rank(comm) * 7919u};
    for (int k = 0; k < NF; k++) {
        int w = width_of(k);
        memset(want[k], 0, (size_t) N * w * sizeof(double));
        memset(mag[k], 0, (size_t) N * w * sizeof(double));
        for (int i = 0; i < f->n; i++)
            for (int c = 0; c < w; c++) {
                double v = (2.0 * hxt_uniform(&r) - 1.0) * pow(10.0, 4.0 * hxt_uniform(&r) - 2.0);
                if (ftype_of(k) == HX_FIELD_INT32)
                    v = floor(v * 10.0); /* |v| <= 1000: sums stay exact */
                put(f, k, i, c, v);
                v = get(f, k, i, c);
                want[k][(size_t) w * own[i] + c] += v;
                mag[k][(size_t) w * own[i] + c] += fabs(v);
            }
        HXT_OK(hxi_allreduce_double(comm, want[k], N * w, 0));
        HXT_OK(hxi_allreduce_double(comm, mag[k], N * w, 0));
    }
}

/* Home entries of field k that are not the sums (named) or not their own
 * values before (not named: the whole array, against before). */
static int reverse_wrong(const fset *f, int k, int nhome, const int64_t *own, int named,
                         const double *want, const double *mag, const void *before)
{
    int bad = 0, w = width_of(k);
    if (!named)
        return memcmp(before, f->a[k], (size_t) f->n * size_of(k)) != 0;
    double tol = ftype_of(k) == HX_FIELD_DOUBLE ? 1e-12 : ftype_of(k) == HX_FIELD_FLOAT ? 1e-6 : 0;
    for (int i = 0; i < nhome; i++)
        for (int c = 0; c < w; c++) {
            double got = get(f, k, i, c), sum = want[(size_t) w * own[i] + c];
            bad += !(fabs(got - sum) <= tol * mag[(size_t) w * own[i] + c]);
        }
    return bad;
}

/* The cpu transport's (float) arrays after each reverse call of the case:
 * every GPU transport's must be the same bitwise, its sums formed in the
 * same order (each atom's adds in reverse pulse order). */
static struct {
    int record;
    void *a[NMODE][NF];
} cpu_ref;

static void cpu_ref_free(void)
{
    for (int m = 0; m < NMODE; m++)
        for (int k = 0; k < NF; k++) {
            free(cpu_ref.a[m][k]);
            cpu_ref.a[m][k] = NULL;
        }
}

/* After reverse call m: kept (the cpu transport, recording) or compared
 * with what was kept (device arrays). */
static void cpu_ref_keep_or_check(const fset *f, int m, const hxt_case *c, const char *tn)
{
    for (int k = 0; k < NF; k++) {
        const size_t bytes = (size_t) f->n * size_of(k);
        if (cpu_ref.record) {
            free(cpu_ref.a[m][k]);
            cpu_ref.a[m][k] = hxt_xmalloc(bytes + 1);
            memcpy(cpu_ref.a[m][k], f->a[k], bytes);
        } else if (f->dev && cpu_ref.a[m][k]) {
            HXT_CHECK(memcmp(cpu_ref.a[m][k], f->a[k], bytes) == 0,
                      "grid %s rh %g %s, call %d: field %d (type %d x %d): not bitwise the cpu "
                      "transport's sums",
                      c->gs, c->spec.rh, tn, m, k, (int) ftype_of(k), width_of(k));
        }
    }
}

static void check_reverse(hx_comm *comm, hx_transport *t, fset *f, const hxt_case *c,
                          const int64_t *own, const char *tn)
{
    int nhome = hx_plan_nhome(c->plan), ntotal = hx_plan_ntotal(c->plan), N = c->s.n;
    size_t fbytes = (size_t) ntotal * 3 * sizeof(double);
    double *want[NF], *mag[NF], *f0 = hxt_xmalloc((size_t) ntotal * 3 * sizeof(double) + 1);
    void *before[NF];
    hxt_rng r = {c->seed * 31u + (uint64_t) hx_comm_rank(comm)};
    for (int i = 0; i < 3 * ntotal; i++)
        f0[i] = 2.0 * hxt_uniform(&r) - 1.0;
    fill_forces(comm, t, f0, ntotal);
    HXT_OK(hx_transport_reverse(t));
    settle(comm, t);
    double *fref = read_array(t, HX_FORCES, ntotal);
    for (int k = 0; k < NF; k++) {
        want[k] = hxt_xmalloc((size_t) N * width_of(k) * sizeof(double));
        mag[k] = hxt_xmalloc((size_t) N * width_of(k) * sizeof(double));
        before[k] = hxt_xmalloc((size_t) f->n * size_of(k) + 1);
    }
    for (int m = 0; m < NMODE; m++) {
        int ids[NF], n = mode_ids(f, m, ids), with = m > 0;
        fill_random(comm, f, own, N, c->seed + (uint64_t) m, want, mag);
        for (int k = 0; k < NF; k++)
            memcpy(before[k], f->a[k], (size_t) f->n * size_of(k));
        fill_forces(comm, t, f0, ntotal);
        if (!with) {
            HXT_OK(hx_transport_reverse(t));
            settle(comm, t);
        }
        fset_call(comm, t, f, ids, n, with, 1, f0);
        for (int k = 0; k < NF; k++) {
            int named = mode_names(m, k);
            int bad = reverse_wrong(f, k, nhome, own, named, want[k], mag[k], before[k]);
            HXT_CHECK(bad == 0,
                      "grid %s rh %g %s, call %d: field %d (type %d x %d, named %d): "
                      "%d sums wrong",
                      c->gs, c->spec.rh, tn, m, k, (int) ftype_of(k), width_of(k), named, bad);
        }
        cpu_ref_keep_or_check(f, m, c, tn);
        double *fo = read_array(t, HX_FORCES, ntotal);
        HXT_CHECK(memcmp(fref, fo, fbytes) == 0,
                  "grid %s rh %g %s, call %d: forces differ from hx_transport_reverse's", c->gs,
                  c->spec.rh, tn, m);
        free(fo);
    }
    for (int k = 0; k < NF; k++) {
        free(want[k]);
        free(mag[k]);
        free(before[k]);
    }
    free(fref);
    free(f0);
}

/* ---------------------------------------------------------------- cases */

enum { MAXT = 32 };

/* The transports under test besides cpu (made per case, float and double):
 * the GPU ones live through all the cases (NVSHMEM starts once a process),
 * each dropped after a case it failed. */
typedef struct ctx {
    int max_pulses; /* along one dimension, over the cases */
    int nt;
    hx_transport *t[MAXT];
    char label[MAXT][80];
    int alive[MAXT];
    void *stream[MAXT]; /* graph mode: the stream it runs on (opts.stream) */
} ctx;

/* The forward and reverse checks of t on the case's plan; 1 when every
 * rank passed them. */
static int check_transport(hx_comm *comm, hx_transport *t, const hxt_case *c, const int64_t *own,
                           const char *tn, int dev)
{
    const int failures = hxt_failures;
    fset f;
    if (hxt_agree(comm, HXT_OK(hx_transport_set_plan(t, c->plan)) &&
                            fset_add(&f, t, hx_plan_ntotal(c->plan), dev))) {
        check_forward(comm, t, &f, c, own, tn);
        check_reverse(comm, t, &f, c, own, tn);
        fset_free(&f, t);
    }
    return hxt_agree(comm, hxt_failures == failures);
}

static void fields_case(hx_comm *comm, const hxt_case *c, void *vctx)
{
    ctx *x = vctx;
    int64_t *own = owners_from_coords(c);
    int nid = 0, ntotal = hx_plan_ntotal(c->plan);
    for (int i = 0; i < ntotal; i++)
        nid += own[i] < 0;
    HXT_CHECK(nid == 0, "grid %s rh %g: %d halo atoms without one owner", c->gs, c->spec.rh, nid);
    for (int d = 0; d < 3; d++)
        if (hx_plan_decomp(c->plan)->npulse[d] > x->max_pulses)
            x->max_pulses = hx_plan_decomp(c->plan)->npulse[d];
    /* cpu in double and float; with GPU transports under test, in float
     * alone, recording its reverse sums for them (cpu_ref). */
    for (int dt = x->nt > 0; dt < 2 && hxt_agree(comm, nid == 0); dt++) {
        hx_transport *t = hxt_cpu_transport(comm, dt ? HX_FLOAT : HX_DOUBLE);
        if (!hxt_agree(comm, t != NULL))
            break;
        cpu_ref.record = dt == 1;
        check_transport(comm, t, c, own, dt ? "cpu float" : "cpu double", 0);
        cpu_ref.record = 0;
        hx_transport_destroy(t);
    }
    for (int k = 0; k < x->nt && hxt_agree(comm, nid == 0); k++) {
        capture_stream = x->stream[k];
        const int ok = !x->alive[k] || check_transport(comm, x->t[k], c, own, x->label[k], 1);
        capture_stream = NULL;
        if (!ok) {
            x->alive[k] = 0;
            if (hx_comm_rank(comm) == 0)
                printf("test_fields: %s failed on grid %s rh %g; left out of later cases\n",
                       x->label[k], c->gs, c->spec.rh);
        }
    }
    cpu_ref_free();
    free(own);
}

#ifdef HXT_FIELDS_GPU
/* Opens v's transport into x, in graph mode on a stream of its own where
 * `graph`; one that refuses to run here (HX_ERR_UNSUPPORTED: e.g. several
 * ranks on one GPU) is left out with its reason. */
static void open_one(hx_comm *comm, ctx *x, const hxt_tvariant *v, int graph)
{
    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.dtype = HX_FLOAT;
    o.graph = graph;
    cudaStream_t s = NULL;
    if (graph && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
        s = NULL;
    o.stream = s;
    hx_transport *t = hxt_transport_try(comm, &o, v);
    if (!t) {
        if (s)
            cudaStreamDestroy(s);
        return;
    }
    x->stream[x->nt] = s;
    HXT_CHECK(hx_transport_caps_of(v->name) & (HX_CAP_FIELDS | HX_CAP_CHOOSES),
              "%s: no HX_CAP_FIELDS", v->label);
    x->t[x->nt] = t;
    x->alive[x->nt] = 1;
    snprintf(x->label[x->nt++], sizeof x->label[0], "%s%s", v->label, graph ? "(graph)" : "");
}

/* Every GPU transport of the build, with and without force_put where it
 * has a put path, in graph mode too where it has one, and `auto`; then
 * nvshmem-fused with its forces pushed (pull is its default), whose
 * reverse carries the fields in the kernel on that path too. Not its
 * atomic force mode: those forces differ bitwise from one reverse to the
 * next, and its fields take the generic path anyway. */
static void open_gpu_transports(hx_comm *comm, ctx *x)
{
    hxt_tvariant v[MAXT];
    int nv = hxt_transport_variants(HX_CAP_DEVICE, 0, 1, v, MAXT - 1);
    v[nv++] = (hxt_tvariant){"auto", 0, "auto"};
    for (int i = 0; i < nv; i++) {
        int graphs = (hx_transport_caps_of(v[i].name) & HX_CAP_GRAPH) ? 2 : 1;
        for (int graph = 0; graph < graphs && x->nt < MAXT; graph++)
            open_one(comm, x, &v[i], graph);
    }
    const hxt_tvariant push = {"nvshmem-fused", 0, "nvshmem-fused[push]"};
    for (int graph = 0; graph < 2 && x->nt < MAXT && hx_transport_caps_of(push.name); graph++) {
        HXT_CHECK(hxi_knobs_set("HALOX_FUSED_FORCE_MODE", "push") == HX_OK, "force mode push: %s",
                  hx_last_error());
        open_one(comm, x, &push, graph);
        hxi_knobs_set("HALOX_FUSED_FORCE_MODE", "");
    }
}

/* A host array registered on a GPU transport (every one still alive, on
 * the last plan): one clear error, on every rank, before anything is
 * sent. */
static void host_array_refused(ctx *x, int ntotal)
{
    float *a = hxt_xcalloc((size_t) ntotal + 1, sizeof(float));
    hx_field f = {(void **) &a, sizeof(float)};
    for (int k = 0; k < x->nt; k++) {
        int id = -1;
        if (!x->alive[k]) /* its plan may be gone */
            continue;
        if (!HXT_OK(hx_transport_field_add(x->t[k], &f, HX_FIELD_FLOAT, 1, &id)))
            continue;
        HXT_FAILS(hx_transport_fields_forward(x->t[k], &id, 1, 0), HX_ERR_INVALID,
                  "not device memory");
        HXT_OK(hx_transport_field_remove(x->t[k], id));
    }
    free(a);
}

static int gpu_main(hx_comm *comm, const hxt_spec *specs, int nspecs)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        (void) cudaGetLastError();
        return hxt_skip(comm, "no CUDA device: the GPU transports' fields need one");
    }
    ctx x = {0};
    open_gpu_transports(comm, &x);
    if (x.nt == 0)
        return hxt_skip(comm, "no GPU transport runs here");
    hxt_walk w = {
        .box_lo = box_lo, .box_len = box_len, .specs = specs, .nspecs = nspecs, .seed = 5151};
    w.keep = 1;
    hx_plan *last = NULL;
    int ncases = hxt_walk_plans(comm, &w, fields_case, &x, &last);
    HXT_CHECK(ncases > 0, "no case ran");
    if (last)
        host_array_refused(&x, hx_plan_ntotal(last));
    for (int k = x.nt - 1; k >= 0; k--) {
        if (hx_comm_rank(comm) == 0)
            printf("test_fields_gpu: %s: %s\n", x.label[k], x.alive[k] ? "passed" : "FAILED");
        hx_transport_destroy(x.t[k]);
        if (x.stream[k])
            cudaStreamDestroy((cudaStream_t) x.stream[k]);
    }
    hx_plan_destroy(last);
    return hxt_finish(comm);
}
#endif

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_fields");
    int grids[16][3];
    if (hxt_grids_for(hx_comm_size(comm), grids, 16) == 0)
        return hxt_skip(comm, "no grid in the test list has this many domains");
    /* Halo cutoffs from a tenth to under half the box: 1 to 4 pulses along
     * a dimension of 3 to 8 domains. */
    const hxt_spec specs[] = {{1.25, 2000, 0, 0}, {2.8, 2000, 0, 0}, {5.5, 2000, 0, 0}};
#ifdef HXT_FIELDS_GPU
    (void) argv;
    return gpu_main(comm, specs, 3);
#else
    if (argc > 1 && strcmp(argv[1], "--stopped-peer") == 0) {
        if (hx_comm_size(comm) < 2)
            return hxt_skip(comm, "a stopped peer needs 2 ranks or more");
        fields_stopped_peer(comm, box_lo, box_len);
        return hxt_finish(comm);
    }
    fields_bad_input(comm, box_lo, box_len);
    ctx x = {0};
    int ncases = hxt_for_each_plan(comm, box_lo, box_len, specs, 3, 5151, fields_case, &x);
    HXT_CHECK(ncases > 0, "no case ran");
    if (hx_comm_size(comm) >= 3)
        HXT_CHECK(x.max_pulses >= 2, "no case had more than one pulse along a dimension");
    if (hx_comm_rank(comm) == 0)
        printf("test_fields: %d cases, up to %d pulses along a dimension\n", ncases, x.max_pulses);
    return hxt_finish(comm);
#endif
}
