/*
 * rebuild.h - the device rebuild (hx_rebuild_*, hx_plan_create_device):
 * what its host logic (rebuild.c, plan_device.c) and its kernels
 * (kernels.cu) share. Fixed-width types and plain pointers only; compiles
 * as C11 and as CUDA C++.
 *
 * Data layout. Migration moves records of 4-byte words: an atom's xs
 * position words, then each field's words, packed back to back. The plan
 * moves 16-byte records: x, y, z (shift added) and the zone word (offset
 * added along the pulse's dimension).
 *
 * Triclinic boxes (tri set): every decision is by heights along the face
 * normals (hx_decomp_height), computed in double from the float
 * coordinates with no fused multiply-add, the host's expression; the box
 * and domain bounds below are then heights (hx_decomp's face_lo, height,
 * dom_lo, dom_hi). Orthorhombic boxes (tri 0) read the coordinate itself,
 * as always: the same bounds are then coordinates.
 */
#ifndef HALOX_REBUILD_H
#define HALOX_REBUILD_H

#include "transport/gpu/gpu_types.h" /* hxi_fshift */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HXR_MAX_FIELDS 8
#define HXR_MAX_PULSES 32  /* HX_MAX_PULSES */
#define HXR_BLOCK      256 /* threads per block of every kernel */

typedef struct hxr_field {
    void *data;    /* device array */
    int32_t words; /* 4-byte words per atom */
    int32_t pad_;
} hxr_field;

/* The arrays migration moves, as the kernels see them. */
typedef struct hxr_layout {
    float *x;
    int32_t xs; /* position words per atom (3 or 4) */
    int32_t nf;
    hxr_field f[HXR_MAX_FIELDS];
    int32_t words; /* per record: xs + the fields' words */
    int32_t pad_;
} hxr_layout;

/* The box, this rank's domain, and the dimension being migrated. */
typedef struct hxr_dom {
    double box_lo[3], box_len[3]; /* heights of the lower faces, face distances */
    double lo[3], hi[3];          /* this rank's domain */
    double below_lo[3];           /* the lower face of the lower neighbour's domain */
    double above_hi[3];           /* the upper face of the upper neighbour's domain */
    int32_t grid[3], coord[3];    /* domains along each dimension, this rank's place */
    int32_t dim;                  /* -1: wrap only */
    int32_t tri;                  /* 1: triclinic (normal and edge below) */
    double normal[3][3];          /* hx_decomp's normal */
    double edge[3][3];            /* hx_decomp's edge: a wrap along d moves by edge[d] */
} hxr_dom;

/* Kinds of bad atom, as the kernels report them. */
enum { HXR_BAD_NONE = 0, HXR_BAD_NAN = 1, HXR_BAD_FAR = 2, HXR_BAD_OUTSIDE = 3 };

/* What the kernels report to the host: in device memory, copied into
 * pinned host memory before each synchronisation (atomics on mapped host
 * memory are not atomic over PCIe on every platform). */
typedef struct hxr_result {
    int32_t count[3];  /* migration: atoms staying, going down, going up;
                          plan: count[0] atoms selected */
    int32_t bad_index; /* lowest bad atom (INT32_MAX: none) */
    int32_t bad_kind;  /* HXR_BAD_* of that atom */
    int32_t bad_dim;   /* and the dimension of a HXR_BAD_FAR */
    int32_t nsel_home; /* plan: selected home atoms */
    float bad_pos[3];  /* hxr_first_count: where the lowest bad atom was */
    int32_t from[HXR_MAX_PULSES];
    unsigned long long share[HXR_MAX_PULSES];
    unsigned long long census[2]; /* atoms, sum of hashed ids */
} hxr_result;

/* Every launcher returns the cudaError_t of its launches as an int. The
 * stream is a cudaStream_t. */

/* Zeroes the result (bad_index = INT32_MAX). */
int hxr_reset(void *stream, hxr_result *res);

/* Migration along one dimension, in two launches: classify (with wrap,
 * the first pass: wraps every position into the box and checks that every
 * atom is within one hop of its domain along every decomposed dimension,
 * so that a too-far atom is found before anything moves; counts each class
 * per block, and its last block scans the block counts into boff, totals
 * into res->count, then publishes the result into pub, mapped pinned host
 * memory read once the stream has drained, and clears res), then pack
 * (each atom's slot in its class, and the records of stayers into stay,
 * of leavers into down and up, as far as room_down and room_up records
 * reach: the pack may be queued before the counts are known). nb: blocks
 * of both launches, hxr_blocks(n). bcnt, boff: 3 * nb ints each. counter:
 * a device int, zero, which the last block resets. */
int hxr_blocks(long long n);
int hxr_classify(void *stream, hxr_layout L, int n, hxr_dom dom, int wrap, int32_t *cls,
                 int32_t *bcnt, int32_t *boff, int *counter, hxr_result *res, hxr_result *pub);
int hxr_pack(void *stream, hxr_layout L, int n, const int32_t *cls, const int32_t *bcnt,
             const int32_t *boff, uint32_t *stay, uint32_t *down, uint32_t *up, int room_down,
             int room_up, int32_t *holes);
/* The migration without order (hx_rebuild_keep_order(r, 0)), after a pack
 * with no stay buffer that wrote the leavers' indices, ascending, into
 * holes (nh of them): of n0 atoms, the stayers remain where they are but
 * those at n1 (the count after the migration) or past it, which move into
 * leavers' places below n1; the arrivals (nb records from b, then na from
 * a) fill the leavers' places left below n1, then n0 on. */
int hxr_fill(void *stream, hxr_layout L, int n0, int n1, const int32_t *cls, const int32_t *holes,
             int nh, int nb, const uint32_t *b, int na, const uint32_t *a);
/* Records back into the arrays: n0 from a (stayers), then n1 from b, then
 * n2 from c, at atoms 0 .. n0 + n1 + n2. */
int hxr_unpack(void *stream, hxr_layout L, int n0, const uint32_t *a, int n1, const uint32_t *b,
               int n2, const uint32_t *c);

/* The plan. The home atoms (x, xs floats per atom) are checked (finite,
 * inside the box and the domain; the first bad one into res) and copied
 * into the plan's positions px (3 floats per atom) with zone 0 in pz: by
 * hxr_home where there is no pulse, else by the first pulse's
 * select_count. */
typedef struct hxr_pdom {
    double box_lo[3], box_hi[3];
    double lo[3], hi[3]; /* this rank's domain */
    double normal[3][3]; /* triclinic: hx_decomp's normal */
    int32_t tri, pad_;
} hxr_pdom;
typedef struct hxr_home_in {
    const float *x;
    int xs;
    uint32_t *pz;
    hxr_pdom dom;
} hxr_home_in;
int hxr_home(void *stream, hxr_home_in h, int nhome, float *px, hxr_result *res);
/* Which candidates a pulse along dim sends: those whose height (the
 * coordinate along dim widened to double; triclinic: its height along
 * normal) is below limit (dir -1, to the lower neighbour) or above it
 * (dir +1, to the upper one: full shell), as hxi_pulse_selects. */
typedef struct hxr_sel {
    double normal[3];
    double limit;
    int32_t dim, tri, dir;
} hxr_sel;
/* One pulse over candidates [lo, hi), in two launches: an atom is sent
 * by the rule of sel.
 * select_count (home != NULL: first checking and copying the home atoms,
 * lo = 0, hi = nhome) counts per block, and its last block scans the
 * counts into boff (total into res->count[0]; counter as for
 * hxr_classify); select_place writes the map (candidate indices in order)
 * and the 16-byte records (shift added, zone - sel.dir along sel.dim, in
 * that byte alone), and
 * the running count at each candidate into spos (blocks that select none,
 * by the count kernel's bcnt, only take part in the last block's
 * election); its last block counts
 * the selected home atoms (below nhome) and those of each earlier pulse's
 * receive range [r.beg[q], r.end[q]), then publishes the result into pub
 * (mapped pinned host memory, read once the stream has drained) and
 * clears res. */
typedef struct hxr_ranges {
    int32_t beg[HXR_MAX_PULSES], end[HXR_MAX_PULSES];
} hxr_ranges;
int hxr_select_count(void *stream, const hxr_home_in *home, float *px, int lo, int hi, hxr_sel sel,
                     int32_t *bcnt, int32_t *boff, int *counter, hxr_result *res);
/* expect >= 0: the total a count taken ahead (hxr_first_count) found; a
 * different total sets *recount (mapped pinned host memory) to 1. */
int hxr_select_place(void *stream, const float *px, const uint32_t *pz, int lo, int hi, hxr_sel sel,
                     hxi_fshift shift, const int32_t *bcnt, const int32_t *boff, int32_t *map,
                     int32_t *spos, float *send, int nhome, int np, hxr_ranges r, int expect,
                     int32_t *recount, int *counter, hxr_result *res, hxr_result *pub);
/* The first pulse's count taken ahead, in one launch: the nhome home atoms
 * at h.x (h.pz unused), in any order, are checked as select_count checks
 * them and counted by the same rule (res->count[0]; the lowest bad atom's
 * position into bad_pos), and the result is published into pub and
 * cleared. Its atoms are then free to be reordered. */
int hxr_first_count(void *stream, hxr_home_in h, int nhome, hxr_sel sel, int *counter,
                    hxr_result *res, hxr_result *pub);
/* n received 16-byte records into px, pz from atom `at` on. */
int hxr_receive(void *stream, const float *recv, int n, int at, float *px, uint32_t *pz);
/* Share masks: mask[map[i]] |= 1 << bit for each entry; then res->share[bit]
 * gets the OR of mask over the entries of that map. */
int hxr_mask_set(void *stream, const int32_t *map, int n, int bit, unsigned long long *mask);
int hxr_mask_or(void *stream, const int32_t *map, int n, int bit, const unsigned long long *mask,
                hxr_result *res);

/* Census: res->census[0] += n, res->census[1] += the sum of hashed ids. */
int hxr_census(void *stream, const int64_t *ids, int n, hxr_result *res);

#ifdef __cplusplus
}
#endif

#endif /* HALOX_REBUILD_H */
