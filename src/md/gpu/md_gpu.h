/*
 * md_gpu.h - what the GPU engine's host code (the other files of src/md/gpu/) and its kernels
 * (md_kernels.cu, md_lists.cu) share: plain structs of fixed-width types and the thin
 * launchers. Compiles as C11 and as CUDA C++; needs no CUDA header.
 *
 * Arrays: x4, v4, f4 are float4 per home atom (w unused) owned by the
 * engine; x3/f3 are the transport's float3 arrays (home, then halo). A
 * neighbour list keeps atom i's k-th neighbour at nb[k * stride + i], so
 * that the threads of a warp, one atom each, read one row together.
 */
#ifndef HALOX_MD_GPU_H
#define HALOX_MD_GPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The box as pair code sees it. Along a dimension with grid 1 the minimum
 * image applies (per_len = box length); along a decomposed one coordinates
 * are used as they are (per_len = per_inv = 0, so the image term vanishes). */
typedef struct hxg_geom {
    float per_len[3];
    float per_inv[3];
    float box_lo[3]; /* wrapping at a single-rank rebuild */
    float box_len[3];
} hxg_geom;

/* Cells along x per rh / 2 wide cell of y and z: rows of cells along x
 * cut closer to an atom's reach (docs/md-gpu.md). */
#define HXG_CELLS_X 2

/* Slots of the local list each lane of the one-thread list build keeps in
 * shared memory before they go out (a power of two; md_walks.cuh; host
 * and device code must see one value: no override). 64 slots: a row
 * whose candidates fit in every lane's ring takes the walk
 * without a room test per hit (hxg_row_ring); with 32 slots about half the
 * rows of a liquid did not fit. On one H200 (2026-12-04, against 32 slots
 * and the walk before): the home build at 2,048,000 atoms 0.895 G warp
 * instructions against 1.019 G and 1.038 G, 1.20 ms against 1.21 and 1.22
 * (the larger ring leaves room for 6 blocks an SM instead of 8), mean us a
 * step at 256,000 atoms 64.9-65.1 against 65.96 and 66.15-66.18
 * (docs/results/ring-2026-12-04.txt). */
#define HXG_RING 64

/* Cells covering home and halo atoms, of width >= half the list cutoff
 * along y and z and >= a 2 reach_x-th of it along x; at least 4 along a
 * periodic dimension (the box exceeds twice the cutoff). */
typedef struct hxg_cellgrid {
    int32_t n[3];
    int32_t ncell;
    int32_t periodic[3]; /* stencil wraps around (dimensions with grid 1) */
    float lo[3];
    float inv_w[3];
    int32_t reach_x; /* cells along x an atom's neighbours may lie away */
} hxg_cellgrid;

typedef struct hxg_lj {
    float rc2;      /* pair cutoff squared */
    float rh2;      /* list cutoff (rc + skin) squared */
    float lj1, lj2; /* 48 eps sig^12, 24 eps sig^6: F.r/r^2 = r6i (lj1 r6i - lj2) / r^2 */
    float lj3, lj4; /* 4 eps sig^12, 4 eps sig^6 */
    float eoff;     /* energy at rc when shifted, else 0 */
} hxg_lj;

/* Neighbour list: nb[k * stride + r] for k < cnt[i] <= max, where r = i
 * (row NULL: a row for every atom) or r = row[i] (the compact non-local
 * list of the device rebuild: rows only for the atoms that can have
 * entries, stride of them; row[i] < 0 and cnt[i] 0 for the others). */
typedef struct hxg_list {
    int32_t *nb;
    int32_t *cnt;
    int32_t stride;
    int32_t max;
    int32_t *row;
    int32_t ring; /* slots of the build's ring a lane may fill ahead: 1 to HXG_RING
                     (fewer than HXG_RING only in tests, HALOX_MD_RING) */
} hxg_list;

/* Device-resident bookkeeping (device memory). */
typedef struct hxg_flags {
    int64_t cur;        /* the step being computed (device-resident steps count it) */
    int64_t moved_step; /* last step at which some atom had moved more than skin/2 */
    int64_t last_build; /* step of the last list build */
    int32_t need;       /* largest neighbour count seen over a list's max (0: none) */
    int32_t bad;        /* a non-finite coordinate was seen at a rebuild */
    int32_t rebuilds;   /* list builds done on the device path */
    /* The single-rank rebuild overflowed its list: every later step kernel
     * returns at once until the host has grown the list and finished the
     * step (hxg_k_finish sets it; the host clears it). */
    int32_t halt;
    int32_t maxcnt;   /* largest neighbour count of any atom at any list build so far */
    int32_t nl_atoms; /* atoms the non-local forces visit (hxg_nl_atoms) */
    int32_t kd_blocks;  /* blocks of a deciding hxg_kickdrift done (the last one resets it) */
    int32_t need_rows;  /* rows a compact non-local list needed past its stride (0: none) */
    int32_t unreached;  /* 1 + an atom without a row in a compact list that had entries */
    int32_t nhome;      /* home atoms of a multi-rank rebuild, for its graphs (hxg_sort_home) */
    int32_t nl_rows;    /* rows given in a compact non-local list (hxg_build_nonlocal) */
} hxg_flags;

/* Written by the device path's rebuild kernel into mapped host memory, so
 * that the host sees it without a synchronisation. */
typedef struct hxg_report {
    volatile int64_t last_build;
    volatile int64_t halted; /* 1 + the step a vote stopped (hxg_vote_out); 0: none */
    volatile int32_t rebuilds;
    volatile int32_t need;
    volatile int32_t bad;
    volatile int32_t maxcnt;
} hxg_report;

/* acc[0] pair energy, acc[1] virial sum r.f, acc[2] sum m v^2, each summed
 * over this rank's atoms (pairs counted half from each side). */
enum { HXG_ACC_E = 0, HXG_ACC_W = 1, HXG_ACC_MV2 = 2, HXG_NACC = 3 };

/* Each launcher returns the cudaError_t of its launch as an int (0: fine). */

/* v += dtf f; x += dt v (x4 and, when x3 != NULL, the transport's home
 * coordinates). fclose != NULL: first the previous step's closing kick, as
 * hxg_kick does it (f4 += fclose, stored; v += dtf f4), so that a step of
 * several ranks need not launch it (the same float operations in the same
 * order: the same numbers). Does nothing while flags->halt. step < 0: the
 * step is flags->cur. When neigh_check and step % every == 0,
 * flags->moved_step = step if an atom moved more than sqrt(trig2) from
 * xold4. acc_zero != NULL: zeroes the HXG_NACC
 * accumulators (a thermo step). cond != 0 (one rank's replayed candidate
 * step; step -1): the last block also stores the decision of
 * hxg_rebuild_single's gate (every, delay, neigh_check) into the condition
 * of that CUDA graph conditional node (a cudaGraphConditionalHandle), so
 * that the step runs the rebuild's kernels only when it rebuilds; delay is
 * read only then. */
int hxg_kickdrift(void *stream, int n, float *x4, float *v4, float *f4, const float *xold4,
                  float *x3, const float *fclose, float dtf, float dt, int neigh_check, int every,
                  int delay,
                  float trig2, int64_t step, hxg_flags *flags, double *acc_zero,
                  unsigned long long cond);

/* Several ranks, `check yes`, the rebuild decision voted on the device
 * (vote.c). vote_in: *vin = -1 while flags->halt (this vote is sat out),
 * else 1 if the kick-drift of step flags->cur found an atom past half the
 * skin. vote_out, after hx_transport_vote put the outcome in *vout: a yes
 * stops the steps at flags->cur (flags->halt, which the rest of the step's
 * kernels and the transport's gate read; report->halted = cur + 1,
 * published to the host). set_cur: flags->cur = cur and the halt lifted.
 * One thread each. */
int hxg_vote_in(void *stream, hxg_flags *flags, int32_t *vin);
int hxg_vote_out(void *stream, hxg_flags *flags, const int32_t *vout, hxg_report *report);
int hxg_set_cur(void *stream, hxg_flags *flags, int64_t cur);
/* dst[0 .. n) = src[0 .. n) floats, or zeros where src is NULL (a kernel). */
int hxg_copy(void *stream, float *dst, const float *src, long long n);

/* f = f4 (+ f3[i] when f3 != NULL, stored back into f4); v += dtf f;
 * acc != NULL: adds m v^2 after the kick. dtf = 0 and f3 = NULL: just the
 * kinetic sum. flags != NULL: nothing is done while flags->halt. */
int hxg_kick(void *stream, int n, float *v4, float *f4, const float *f3, float dtf, float mass,
             double *acc, const hxg_flags *flags);

/* Home atoms against their home neighbours (full list: every pair twice, no
 * atomics). f4 != NULL: forces written; v4 != NULL: then v += dtf f (the
 * single-rank step's closing kick, fused). acc != NULL: energy and virial
 * (and m v^2 after the kick when v4 != NULL) added. tpp: threads per atom
 * (1, 2, 4 or 8). room (at 2 or 4 threads per atom): the kernel compiled
 * to leave a quarter of each SM to the kernels beside it (md_kernels.cu,
 * HXG_ROOM_*). flags != NULL (the single-rank device step): nothing
 * is done while flags->halt, else flags->cur is incremented once (the step
 * is done). pdl (with f4 and neither v4, acc nor flags): launched with
 * programmatic stream serialisation, the list's counts read while the
 * kernel before it on the stream (the kick-drift) runs, the positions
 * after it ends. */
int hxg_force_local(void *stream, int tpp, int room, int n, const float *x4, hxg_list l, hxg_lj lj,
                    hxg_geom g, float *f4, float *v4, float dtf, float mass, double *acc,
                    hxg_flags *flags, int pdl);

/* Local atoms against their non-local lists: for a home atom its halo
 * neighbours, for a halo atom its partners in owned pairs. idx NULL: every
 * atom i in [0, n); else the n atoms idx[0 .. n) (hxg_nl_atoms). f3 != NULL:
 * f3[i] of each atom visited is overwritten (zero when its list is empty),
 * so that those entries need no clearing. flags != NULL: nothing is done
 * while flags->halt (the step counter is the local forces'). pdl (with f3
 * and neither acc nor flags): launched with programmatic stream serialisation, the list
 * read while the kernel before it on the stream (the forward exchange)
 * runs, the positions after it ends. */
int hxg_force_nonlocal(void *stream, int tpp, int n, const int32_t *idx, const float *x3,
                       hxg_list l, hxg_lj lj, hxg_geom g, float *f3, double *acc, hxg_flags *flags,
                       int pdl);

/* The atoms the non-local forces must visit, in index order: those with a
 * non-empty non-local list, and the targets of the transport's maps
 * (maps[0 .. nmaps): the reverse exchange adds into their forces, which
 * the force kernel must overwrite first). Every other entry of the
 * transport's force array stays as it is (zero after a clear at the
 * rebuild). flag: ntotal ints, pos: ntotal + 1 ints (scratch); idx:
 * ntotal ints; the count into flags->nl_atoms. */
int hxg_nl_atoms(void *stream, int ntotal, const hxg_list *nl, const int32_t *maps, int nmaps,
                 int32_t *flag, int32_t *pos, int32_t *scan_tmp, int32_t *idx, hxg_flags *flags);

/* Cell scan scratch: HXG_MAX_SCAN_BLOCKS - 1 chunks of 4096 cells at most
 * (268 million cells, enough for half-cutoff cells over 600 million atoms
 * at liquid density); scan_tmp holds 2 * HXG_MAX_SCAN_BLOCKS ints: the
 * look-back scan's status words, its ticket and exit count, all zeros
 * between scans (md_cells.cu). */
#define HXG_MAX_SCAN_BLOCKS 65536

/* The scan the cell lists use, on its own (for tests): start[c] = cnt[0] +
 * ... + cnt[c-1] for c <= n, in one launch on stream; scan_tmp as above. */
int hxg_scan(void *stream, const int32_t *cnt, int32_t *start, int n, int32_t *scan_tmp);

/* Host-driven list build over ntotal atoms at x (stride xs floats: 3 or 4)
 * in one pass: cell counts, scan, fill (sorted within a cell), then lists
 * (the single-rank host path; several ranks build in two halves, below). Home atoms
 * (i < nhome) get loc (home neighbours) and nl (halo neighbours); halo atoms
 * get nl (partners in pairs this rank owns by the zone rule). zones: 4
 * bytes per atom, or NULL when there is no halo. xsort: 4 floats per atom,
 * the positions in cell order with each atom's index in w (scratch). With
 * nl.row set (xs 3), nl is compact as in hxg_build_nonlocal (rows from
 * near_rows, pos). */
int hxg_build_lists(void *stream, int nhome, int ntotal, const float *x, int xs,
                    const uint8_t *zones, hxg_cellgrid cg, hxg_geom g, float rh2,
                    const float near_rows[3], int32_t *cell_cnt, int32_t *cell_start, int32_t *cellof,
                    int32_t *cellatoms, float *xsort, int32_t *scan_tmp, int32_t *pos,
                    hxg_list loc, hxg_list nl, hxg_flags *flags);

/* The local list loc of n atoms already in cell order (x4 sorted, cell
 * starts in cell_start from that sort), ungated: the single-rank set-up,
 * the rebuild of a list that overflowed (after it grew), and the local
 * half of a multi-rank build (only home atoms count: with several ranks
 * it is the list hxg_build_lists would make). */
int hxg_build_sorted(void *stream, int n, const float *x4, hxg_cellgrid cg, hxg_geom g, float rh2,
                     const int32_t *cell_start, hxg_list loc, hxg_flags *flags);

/* The non-local half of a multi-rank build: nl of every local atom (the
 * halo neighbours of home atoms; the partners of halo atoms in pairs this
 * rank owns, home ones first), from x (home then halo atoms, 3 floats
 * each), the sorted home positions x4 with their cell starts home_start,
 * and cell lists of the halo atoms built here into cell_cnt, cell_start,
 * cellof, cellatoms, xsort, scan_tmp (none of which the local half reads,
 * so that it may run beside this). near[d]: the domain's upper bound less
 * rh and a margin along a dimension with pulses, FLT_MAX along the others:
 * home atoms below it along every dimension skip the halo's cells. The
 * list is compact (nl.row and rowatom are required): every halo atom and
 * every home atom at or past near_rows (near as the geometry gives it;
 * tests move near alone) along some dimension gets a row, in index order
 * (counted into pos, ntotal + 1 ints); atoms past nl.stride rows get none,
 * and flags->need_rows says how many rows the build needed. An atom
 * without a row that finds non-local partners sets flags->unreached
 * (index + 1) and keeps a count of 0. halo_pairs 0: pulses run along one
 * dimension only, so that no pair of two halo atoms is this rank's, and
 * halo atoms walk the home atoms' cells alone. rowatom (nl.stride ints):
 * the atom of each row, written here, so that the build walks the rows
 * alone (atoms without a row get a count of 0). */
int hxg_build_nonlocal(void *stream, int nhome, int ntotal, const float *x, const float *x4,
                       const int32_t *home_start, const uint8_t *zones, hxg_cellgrid cg, hxg_geom g,
                       float rh2, const float near[3], const float near_rows[3], int halo_pairs,
                       int32_t *cell_cnt, int32_t *cell_start, int32_t *cellof, int32_t *cellatoms,
                       float *xsort, int32_t *scan_tmp, int32_t *pos, int32_t *rowatom, hxg_list nl,
                       hxg_flags *flags);

/* Cell sort of n home atoms on the device (x4, v4, id permuted through the
 * scratch arrays s*, xold4 set to the sorted positions; perm: n ints; with
 * adopt 0 the sorted atoms are left in s*, for the caller to swap). The
 * multi-rank device rebuild's sort; positions must be inside the grid.
 * dn (device, may be NULL): the atom count, read by the kernels when they
 * run (n then only bounds it), so that one captured graph serves every
 * rebuild whatever its count. */
int hxg_sort_home(void *stream, int adopt, int n, const int32_t *dn, float *x4, float *v4,
                  int64_t *id, float *xold4, float *sx4, float *sv4, int64_t *sid, hxg_cellgrid cg,
                  hxg_geom g, int32_t *cell_cnt, int32_t *cell_start, int32_t *cellof,
                  int32_t *perm, int32_t *scan_tmp, hxg_flags *flags);

/* Single-rank rebuild on the device: a sequence of kernels that each decide
 * alike, as LAMMPS's Neighbor::decide, whether this step rebuilds (step < 0:
 * the step is flags->cur): only when step % every == 0, step - last_build
 * >= delay and, with check, flags->moved_step == step; otherwise each
 * returns at once, so the sequence can be captured once and replayed every
 * candidate step. A rebuild wraps x into the box, sorts atoms by cell (x4,
 * v4, id permuted through the scratch arrays s*), sets xold4, builds loc and
 * reports into *report. No host synchronisation. A build that overflows loc
 * sets flags->halt (see hxg_flags): the host grows the list, builds it
 * again (hxg_build_sorted) and finishes the step. */
int hxg_rebuild_single(void *stream, int n, float *x4, float *v4, int64_t *id, float *xold4,
                       float *sx4, float *sv4, int64_t *sid, hxg_cellgrid cg, hxg_geom g, float rh2,
                       int32_t *cell_cnt, int32_t *cell_start, int32_t *cellof, int32_t *perm,
                       int32_t *scan_tmp, hxg_list loc, hxg_flags *flags, hxg_report *report,
                       int64_t step, int every, int delay, int check);

/* Steps the GPU engine has replayed from CUDA graphs so far,
 * on this rank, for tests and logs. */
struct hx_md_engine;
int64_t hxg_engine_graph_steps(const struct hx_md_engine *e);
/* Device rebuilds on this rank that grew the home arrays (which moves the
 * arrays a captured step uses), for tests. */
int64_t hxg_engine_growths(const struct hx_md_engine *e);

#ifdef __cplusplus
}
#endif

#endif /* HALOX_MD_GPU_H */
