/*
 * md_gpu.h - what the GPU engine's host code (the other files of src/md/gpu/) and its kernels
 * (md_kernels.cu, md_lists.cu) share: plain structs of fixed-width types and the thin
 * launchers. Compiles as C11 and as CUDA C++; needs no CUDA header.
 *
 * Arrays: x4, v4, f4 are float4 per home atom (x4's w: the atom's type, hxg_types) owned by the
 * engine; x3/f3 are the transport's float3 arrays (home, then halo). A
 * neighbour list keeps atom i's k-th neighbour at nb[k * stride + i], so
 * that the threads of a warp, one atom each, read one row together.
 */
#ifndef HALOX_MD_GPU_H
#define HALOX_MD_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "md/pair/pair_eval.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The box as pair code sees it. Along a dimension with grid 1 the minimum
 * image applies (per_len = box length); along a decomposed one coordinates
 * are used as they are (per_len = per_inv = 0, so the image term vanishes).
 * A triclinic box (LAMMPS's restricted one: edges a = (lx, 0, 0),
 * b = (xy, ly, 0), c = (xz, yz, lz)) adds the tilts an image along y or z
 * carries (per_tilt: xy, xz, yz, each 0 unless the dimension crossed, y
 * for xy and z for the others, has grid 1), and sorts atoms into cells by
 * their heights along the face normals (hx_decomp_height) instead of their
 * coordinates; tri 0 keeps the orthorhombic code's every instruction. */
typedef struct hxg_geom {
    float per_len[3];
    float per_inv[3];
    float per_tilt[3]; /* xy, xz, yz of an image (see above) */
    float box_lo[3];   /* wrapping at a single-rank rebuild */
    float box_len[3];
    float normal[3][3]; /* unit face normals (triclinic) */
    float face_lo[3];   /* heights of the box's lower faces (triclinic) */
    float height[3];    /* distances between the faces (triclinic) */
    int32_t tri;
} hxg_geom;

/* Cells along x per rh / 2 wide cell of y and z: rows of cells along x
 * cut closer to an atom's reach (docs/md-gpu.md). */
#define HXG_CELLS_X 2

/* Slots of the local list each lane of the one-thread list build keeps in
 * shared memory before they go out (a power of two; md_walks.cuh; host
 * and device code must see one value: no override). 64 slots: a row
 * whose candidates fit in every lane's ring takes the walk
 * without a room test per hit (hxg_row_ring); with 32 slots about half the
 * rows of a liquid did not fit. The larger ring leaves room for 6 blocks
 * an SM instead of 8, and still the home build issues fewer instructions
 * and the step is shorter than with 32 slots or the walk before
 * (docs/performance.md, "The list build without a room test per hit";
 * docs/results/ring-2026-12-04.txt). */
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

/* The pair style (md/pair/pair_eval.h) as the force kernels take it. */
typedef struct hxg_lj {
    float rc2;              /* pair cutoff squared */
    float rh2;              /* list cutoff (rc + skin) squared */
    int32_t style;          /* HX_PAIR_* */
    float c[HX_PAIR_NCOEF]; /* the formula's coefficients (lj/cut: 48 eps sig^12, 24 eps
                             * sig^6, 4 eps sig^12, 4 eps sig^6) */
    float eoff;             /* energy at rc when shifted, else 0 */
} hxg_lj;

/* Atom types the engine holds (hx_md_config's HX_MD_MAX_TYPES, which
 * types.c checks it against). */
#define HXG_MAX_TYPES 8

/* One pair of types as the typed force kernels take it: the formula's
 * coefficients, the pair's cutoff squared and its energy at the cutoff
 * when shifted. 16-byte aligned (48 bytes): the kernels then load the
 * coefficients two or four at a time from shared memory. */
#ifdef __cplusplus
#define HXG_ALIGN16 alignas(16)
#else
#define HXG_ALIGN16 _Alignas(16)
#endif
typedef struct hxg_pair_ij {
    HXG_ALIGN16 float c[HX_PAIR_NCOEF];
    float rc2, eoff, pad[2];
} hxg_pair_ij;

/* Atom types as the step kernels take them. A home atom's type (0-based)
 * is the bits of an int in the w of its position (x4, xold4, sx4: every
 * sort, wrap and migration moves it with the position); with several
 * ranks `type` holds the types of the local atoms, home then halo, for the
 * non-local forces (the halo's from the transport's field exchange at each
 * rebuild). n 1: one type, and nothing here is read. */
typedef struct hxg_types {
    int32_t n;
    float dtf[HXG_MAX_TYPES];  /* the kick's dt / 2m of each type (0: atoms do not move) */
    float mass[HXG_MAX_TYPES]; /* each type's mass */
    const hxg_pair_ij *pairs;  /* device, n * n: types ti, tj at ti * n + tj */
    const int32_t *type;       /* device: the local atoms' types (several ranks), else NULL */
} hxg_types;

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
    int32_t maxcnt;    /* largest neighbour count of any atom at any list build so far */
    int32_t nl_atoms;  /* atoms the non-local forces visit (hxg_nl_atoms) */
    int32_t kd_blocks; /* blocks of a deciding hxg_kickdrift done (the last one resets it) */
    int32_t need_rows; /* rows a compact non-local list needed past its stride (0: none) */
    int32_t unreached; /* 1 + an atom without a row in a compact list that had entries */
    int32_t nhome;     /* home atoms of a multi-rank rebuild, for its graphs (hxg_sort_home) */
    int32_t nl_rows;   /* rows given in a compact non-local list (hxg_build_nonlocal) */
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

/* ---------------------------------------------------------------- views */

/* What the launchers read, grouped as the engine holds it: a launcher
 * takes the views of the data its kernels read and the few values of its
 * call, and passes the kernels the fields they read (the host code builds
 * the views from its engine, engine.h). */

/* The atoms. Home atoms: x4, v4, f4 (float4 each; the w of x4 the type, else unused), xold4 (the
 * positions at the last list build), id; sx4, sv4, sid: the scratch a
 * cell sort permutes them into. x3, f3: the transport's positions and
 * forces, home then halo atoms (3 floats each); zones: 4 bytes per local
 * atom; these three NULL with one rank. nhome home atoms (a sort's grids
 * may be sized for more, hxg_sort_home), ntotal home and halo. */
typedef struct hxg_atoms_view {
    float *x4, *v4, *f4, *xold4;
    int64_t *id;
    float *sx4, *sv4;
    int64_t *sid;
    float *x3, *f3;
    const uint8_t *zones;
    hxg_geom geom;
    int32_t nhome, ntotal;
} hxg_atoms_view;

/* Cell lists over grid: per cell its count (zero between builds) and its
 * start (ncell + 1 ints: home atoms, or all local atoms of a one-pass
 * build); halo_start: the halo atoms' starts of a multi-rank build; per
 * atom its cell (cellof), the atoms in cell order (atoms; the permutation
 * of a cell sort) and their positions in cell order (xsort, 4 floats
 * each); scan_tmp: the scan's scratch (HXG_MAX_SCAN_BLOCKS). */
typedef struct hxg_cells_view {
    hxg_cellgrid grid;
    int32_t *cnt, *start, *halo_start, *cellof, *atoms, *scan_tmp;
    float *xsort;
} hxg_cells_view;

/* Neighbour lists: loc (home atoms' home neighbours) and nl (non-local,
 * nb NULL with one rank) within the list cutoff (rh2: its square). A
 * compact nl's rows: pos (scratch, ntotal + 1 ints), rowatom (the atom of
 * each row), near, near_rows and halo_pairs (hxg_build_nonlocal). The
 * atoms the non-local forces visit: nl_idx[0 .. nl_n), or with nl_idx
 * NULL atoms 0 .. nl_n - 1 (hxg_nl_atoms). full (newton off: a
 * full-shell plan, halo atoms on both sides along each decomposed
 * dimension): home atoms list every halo neighbour, halo atoms nothing
 * (no row, count 0), and a home atom may have halo neighbours at or below
 * near_lo too. */
typedef struct hxg_lists_view {
    hxg_list loc, nl;
    int32_t *pos, *rowatom, *nl_idx;
    float near[3], near_rows[3];
    float near_lo[3];      /* full: the lower faces' bound (-FLT_MAX where no halo lies below) */
    float near_rows_lo[3]; /* the same for the rows (as near_rows for near) */
    float rh2;
    int32_t halo_pairs, nl_n;
    int32_t full; /* a full-shell plan's halo: halo atoms list nothing */
} hxg_lists_view;

/* The step kernels' constants: the pair potential; the half-step kick dtf
 * and the drift dt (0 where atoms do not move), the mass, the squared
 * half-skin; the threads per atom of the local and the non-local forces,
 * and whether the local forces leave room beside them (hxg_force_local);
 * vscale (device, NULL: none): the factor the kick-drift scales the
 * velocities by first (fix nvt's first half step, md_thermostat.h); ty:
 * the atom types (ty.n > 1: each atom's mass and each pair's potential by
 * type, the force kernels' typed instantiation). */
typedef struct hxg_consts {
    hxg_lj lj;
    float dtf, dt, mass, trig2;
    int32_t tpp, tpp_nl, room;
    const float *vscale;
    hxg_types ty; /* several types: the masses and pairs by type (dtf, mass, lj unused) */
} hxg_consts;

/* When a step rebuilds its lists, as LAMMPS's Neighbor::decide: step %
 * every == 0, step - last_build >= delay and, with check, flags->moved_step
 * == step. step < 0: the step is flags->cur (device-resident steps). */
typedef struct hxg_decide {
    hxg_flags *flags;
    int64_t step;
    int32_t every, delay, check;
} hxg_decide;

/* What a force launch does (hxg_force_local, hxg_force_nonlocal): WRITE
 * stores the forces (f4, or f3 for the non-local ones; without it, sums
 * only), KICK (local forces) kicks the velocities after (v4 += dtf f: the
 * single-rank step's closing kick, fused), PDL launches with programmatic
 * stream serialisation (see the launchers). */
enum { HXG_FORCE_WRITE = 1, HXG_FORCE_KICK = 2, HXG_FORCE_PDL = 4 };

/* ------------------------------------------------------------ launchers */

/* Each launcher returns the cudaError_t of its launch as an int (0: fine). */

/* v = vscale v + dtf f (k.vscale NULL: v += dtf f); x += dt v over the
 * a.nhome home atoms (x4 and, when x3 != NULL, the transport's home
 * coordinates). fclose != NULL: first the previous step's closing kick, as
 * hxg_kick does it (f4 += fclose, stored; v += dtf f4), so that a step of
 * several ranks need not launch it (the same float operations in the same
 * order: the same numbers). Does nothing while flags->halt. When d.check
 * and step % d.every == 0, flags->moved_step = step if an atom moved more
 * than sqrt(k.trig2) from xold4. acc_zero != NULL: zeroes the HXG_NACC
 * accumulators (a thermo step). cond != 0 (one rank's replayed candidate
 * step; step -1): the last block also stores the decision of
 * hxg_rebuild_single's gate (d) into the condition of that CUDA graph
 * conditional node (a cudaGraphConditionalHandle), so that the step runs
 * the rebuild's kernels only when it rebuilds; d.delay is read only then. */
int hxg_kickdrift(void *stream, hxg_atoms_view a, const float *fclose, hxg_consts k, hxg_decide d,
                  double *acc_zero, unsigned long long cond);

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

/* Over the a.nhome home atoms: f = f4 (+ f3[i] when f3 != NULL, stored
 * back into f4); v += k.dtf f; acc != NULL: adds k.mass v^2 after the
 * kick. k.dtf = 0 and f3 = NULL: just the kinetic sum. flags != NULL:
 * nothing is done while flags->halt. */
int hxg_kick(void *stream, hxg_atoms_view a, const float *f3, hxg_consts k, double *acc,
             const hxg_flags *flags);

/* The a.nhome home atoms at x4 against their home neighbours l.loc (full
 * list: every pair twice, no atomics), k.tpp threads per atom (1, 2, 4 or
 * 8); k.room (at 2 or 4 threads per atom): the kernel compiled to leave a
 * quarter of each SM to the kernels beside it (md_force.cuh, HXG_ROOM_*).
 * how: HXG_FORCE_* (WRITE into f4, KICK v4 by k.dtf). acc != NULL: energy
 * and virial (and k.mass v^2 after the kick) added. flags != NULL (the
 * single-rank device step): nothing is done while flags->halt, else
 * flags->cur is incremented once (the step is done). HXG_FORCE_PDL (with
 * WRITE and neither KICK, acc nor flags): the list's counts read while
 * the kernel before it on the stream (the kick-drift) runs, the positions
 * after it ends. */
int hxg_force_local(void *stream, hxg_atoms_view a, hxg_lists_view l, hxg_consts k, double *acc,
                    hxg_flags *flags, int how);

/* Local atoms at x3 against their non-local lists l.nl, k.tpp_nl threads
 * per atom: for a home atom its halo neighbours, for a halo atom its
 * partners in owned pairs; the atoms visited are l.nl_idx[0 .. l.nl_n)
 * (hxg_nl_atoms), or with nl_idx NULL every atom below l.nl_n.
 * HXG_FORCE_WRITE: f3[i] of each atom visited is overwritten (zero when its
 * list is empty), so that those entries need no clearing. flags != NULL:
 * nothing is done while flags->halt (the step counter is the local
 * forces'). HXG_FORCE_PDL (with WRITE and neither acc nor flags): the list
 * read while the kernel before it on the stream (the forward exchange)
 * runs, the positions after it ends. */
int hxg_force_nonlocal(void *stream, hxg_atoms_view a, hxg_lists_view l, hxg_consts k, double *acc,
                       hxg_flags *flags, int how);

/* The atoms the non-local forces must visit, in index order: those with a
 * non-empty list l.nl among the a.ntotal local atoms, and the targets of
 * the transport's maps (maps[0 .. nmaps): the reverse exchange adds into
 * their forces, which the force kernel must overwrite first). Every other
 * entry of the transport's force array stays as it is (zero after a clear
 * at the rebuild). Into l.nl_idx (ntotal ints), the count into
 * flags->nl_atoms; scratch: c.cellof (a flag an atom), l.pos (ntotal + 1
 * ints), c.scan_tmp. */
int hxg_nl_atoms(void *stream, hxg_atoms_view a, hxg_cells_view c, hxg_lists_view l,
                 const int32_t *maps, int nmaps, hxg_flags *flags);

/* Cell scan scratch: HXG_MAX_SCAN_BLOCKS - 1 chunks of 4096 cells at most
 * (268 million cells, enough for half-cutoff cells over 600 million atoms
 * at liquid density); scan_tmp holds 2 * HXG_MAX_SCAN_BLOCKS ints: the
 * look-back scan's status words, its ticket and exit count, all zeros
 * between scans (md_cells.cu). */
#define HXG_MAX_SCAN_BLOCKS 65536

/* The scan the cell lists use, on its own (for tests): start[c] = cnt[0] +
 * ... + cnt[c-1] for c <= n, in one launch on stream; scan_tmp as above. */
int hxg_scan(void *stream, const int32_t *cnt, int32_t *start, int n, int32_t *scan_tmp);

/* Host-driven list build over the a.ntotal local atoms in one pass: cell
 * counts, scan, fill (sorted within a cell), then lists (the single-rank
 * host path; several ranks build in two halves, below). Positions: x3
 * where it is given (several ranks), else x4. Home atoms (i < nhome) get
 * l.loc (home neighbours) and l.nl (halo neighbours); halo atoms get l.nl
 * (partners in pairs this rank owns by the zone rule; a.zones NULL when
 * there is no halo). Cell lists in c (start over all local atoms; xsort:
 * the positions in cell order with each atom's index in w). With l.nl.row
 * set (positions x3), nl is compact as in hxg_build_nonlocal (rows from
 * l.near_rows, l.pos). */
int hxg_build_lists(void *stream, hxg_atoms_view a, hxg_cells_view c, hxg_lists_view l,
                    hxg_flags *flags);

/* The local list l.loc of the a.nhome atoms already in cell order (x4
 * sorted, cell starts in c.start from that sort), ungated: the single-rank
 * set-up, the rebuild of a list that overflowed (after it grew), and the
 * local half of a multi-rank build (only home atoms count: with several
 * ranks it is the list hxg_build_lists would make). */
int hxg_build_sorted(void *stream, hxg_atoms_view a, hxg_cells_view c, hxg_lists_view l,
                     hxg_flags *flags);

/* The non-local half of a multi-rank build: l.nl of every local atom (the
 * halo neighbours of home atoms; the partners of halo atoms in pairs this
 * rank owns, home ones first), from x (home then halo atoms, 3 floats
 * each; read only), the sorted home positions a.x4 with their cell starts
 * c.start, a.zones, and cell lists of the halo atoms built here into
 * c.cnt, c.halo_start, c.cellof, c.atoms, c.xsort, c.scan_tmp (none of
 * which the local half reads, so that it may run beside this). l.near[d]:
 * the domain's upper bound less rh and a margin along a dimension with
 * pulses, FLT_MAX along the others: home atoms below it along every
 * dimension skip the halo's cells. The list is compact (nl.row and
 * l.rowatom are required): every halo atom and every home atom at or past
 * l.near_rows (near as the geometry gives it; tests move near alone) along
 * some dimension gets a row, in index order (counted into l.pos, ntotal +
 * 1 ints); atoms past nl.stride rows get none, and flags->need_rows says
 * how many rows the build needed. An atom without a row that finds
 * non-local partners sets flags->unreached (index + 1) and keeps a count
 * of 0. l.halo_pairs 0: pulses run along one dimension only, so that no
 * pair of two halo atoms is this rank's, and halo atoms walk the home
 * atoms' cells alone. l.rowatom (nl.stride ints): the atom of each row,
 * written here, so that the build walks the rows alone (atoms without a
 * row get a count of 0). */
int hxg_build_nonlocal(void *stream, const float *x, hxg_atoms_view a, hxg_cells_view c,
                       hxg_lists_view l, hxg_flags *flags);

/* Cell sort of the a.nhome home atoms on the device (x4, v4, id permuted
 * through the scratch arrays sx4, sv4, sid, xold4 set to the sorted
 * positions; c.atoms: the permutation; with adopt 0 the sorted atoms are
 * left in the scratch, for the caller to swap). The multi-rank device
 * rebuild's sort; positions must be inside the grid. dn (device, may be
 * NULL): the atom count, read by the kernels when they run (a.nhome then
 * only bounds it), so that one captured graph serves every rebuild
 * whatever its count. */
int hxg_sort_home(void *stream, hxg_atoms_view a, hxg_cells_view c, const int32_t *dn, int adopt,
                  hxg_flags *flags);

/* Single-rank rebuild on the device: a sequence of kernels that each decide
 * alike (d, with d.every < 1 taken as 1) whether this step rebuilds;
 * otherwise each returns at once, so the sequence can be captured once
 * and replayed every candidate step. A rebuild wraps x4 into the box,
 * sorts atoms by cell (x4, v4, id permuted through the scratch arrays,
 * c.atoms the permutation), sets xold4, builds l.loc and reports into
 * *report. No host synchronisation. A build that overflows loc sets
 * flags->halt (see hxg_flags): the host grows the list, builds it again
 * (hxg_build_sorted) and finishes the step. */
int hxg_rebuild_single(void *stream, hxg_atoms_view a, hxg_cells_view c, hxg_lists_view l,
                       hxg_decide d, hxg_report *report);

/* type[i] = the type in the w of x4[i] (the bits of an int) for the n
 * home atoms: the home part of the array the transport's field exchange
 * forwards to the halo. */
int hxg_types_of(void *stream, const float *x4, int32_t *type, int n);

/* fix balance's count (md_balance.cu, fix_balance.c): the box as LAMMPS's
 * Domain::x2lamda reads it and, along each dimension, grid[k] bins whose
 * edges are the fractions cut[k][0 .. grid[k]] (0 to 1). */
#define HXG_BAL_MAX 128 /* HX_MAX_CUT_DOMAINS */
typedef struct hxg_bal_grid {
    double box_lo[3], box_len[3];
    double tilt[3]; /* xy, xz, yz */
    double cut[3][HXG_BAL_MAX + 1];
    int32_t grid[3];
    int32_t tri;
} hxg_bal_grid;
/* counts[(c2 * grid[1] + c1) * grid[0] + c0] = the home atoms (n, x4) whose
 * fractional coordinates, wrapped into [0, 1) as Domain::pbc wraps the
 * atom into the box, fall in bin c0, c1, c2 (LAMMPS's binary search of
 * Balance::tally: below the first edge the first bin, at or above the
 * last but one the last). counts: device memory of hxg_bal_bytes(the
 * bins) bytes: the bins' ints, zeroed first on the stream, then a copy
 * of g the kernel reads. */
static inline size_t hxg_bal_bytes(int ncell)
{
    return sizeof(int32_t) * (size_t) ((ncell + 1) & ~1) + sizeof(hxg_bal_grid);
}
int hxg_bal_count(void *stream, const float *x4, int n, const hxg_bal_grid *g, int32_t *counts);

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
