/*
 * halox.h - the one public header of libhalox.
 *
 * Halo exchange for domain-decomposed particle simulations: a periodic
 * orthorhombic or triclinic box split into a grid of domains (hx_decomp), a
 * per-rank halo plan built from the home atoms (hx_plan), migration of atoms
 * between ranks (hx_migrate), and interchangeable transports that move
 * coordinates forward and forces back (hx_transport), and other per-atom
 * fields either way.
 *
 * C11; compiles without CUDA, MPI, NCCL or NVSHMEM installed. Every call that
 * can fail returns an hx_status (HX_OK = 0, errors negative); the text of the
 * last error on the calling thread, naming the problem and the fix, is
 * hx_last_error(). The library never exits or aborts.
 */
#ifndef HALOX_H
#define HALOX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks what libhalox exports; everything else in it is hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define HX_API __attribute__((visibility("default")))
#else
#define HX_API
#endif

#define HX_VERSION_MAJOR 0
#define HX_VERSION_MINOR 2
#define HX_VERSION_PATCH 0

/* ------------------------------------------------------------------ status */

typedef enum hx_status {
    HX_OK = 0,
    HX_ERR_INVALID = -1,          /* a bad argument not covered below */
    HX_ERR_GRID = -2,             /* grid product differs from the rank count */
    HX_ERR_BOX = -3,              /* non-positive or non-finite box length */
    HX_ERR_CUTOFF = -4,           /* non-positive or non-finite cutoff */
    HX_ERR_CUTOFF_TOO_LARGE = -5, /* cutoff at or above half a box length */
    HX_ERR_COORD_NAN = -6,        /* a coordinate is NaN or infinite */
    HX_ERR_COORD_OUTSIDE = -7,    /* a coordinate lies outside the box or domain */
    HX_ERR_OVERFLOW = -8,         /* a buffer would overflow and may not grow */
    HX_ERR_NOMEM = -9,            /* host or device allocation failed */
    HX_ERR_MPI = -10,             /* an MPI call failed, or MPI is missing */
    HX_ERR_UNSUPPORTED = -11,     /* not available in this build or setting */
    HX_ERR_CUDA = -12,            /* a CUDA call failed */
    HX_ERR_NCCL = -13,            /* an NCCL call failed */
    HX_ERR_NVSHMEM = -14,         /* an NVSHMEM call failed */
    HX_ERR_TIMEOUT = -15,         /* a wait for a peer exceeded its timeout */
    HX_ERR_STATE = -16,           /* call out of order (e.g. forward with no plan) */
    HX_ERR_PARSE = -17,           /* text input could not be parsed */
    HX_ERR_IO = -18               /* a file could not be read or written */
} hx_status;

/* What this libhalox is, in one line: version, git revision where known,
 * build type, the transports built in, and the dependencies with their
 * versions ("halox 0.2.0 (git 1a2b3c4, RelWithDebInfo); transports: cpu
 * mpi ...; MPI: Open MPI v4.1.6; CUDA runtime 13.0, driver 13.0; ...").
 * Needs no device and no MPI start. */
HX_API const char *hx_version_string(void);

/* Short fixed name of a status ("HX_ERR_GRID"). */
HX_API const char *hx_status_string(hx_status status);
/* Detailed text of the last error raised on this thread ("" if none). */
HX_API const char *hx_last_error(void);

/* ------------------------------------------------------------- processes */

/* Starts MPI (when built with it and not yet started) and reads the
 * environment. Safe to call when MPI is already initialised. Built with
 * CUDA, it also sets CUDA_MODULE_LOADING=EAGER unless the environment sets
 * it: processes that share a GPU under MPS can stall each other's
 * GPU-initiated exchanges when kernels load lazily (docs/transports.md).
 * Call it before anything initialises CUDA for that to take effect. */
HX_API hx_status hx_init(int *argc, char ***argv);
/* Finalises MPI if hx_init started it. */
HX_API hx_status hx_finalize(void);
/* 1 when built with MPI. */
HX_API int hx_have_mpi(void);

/* A communicator: MPI_COMM_WORLD (or a duplicate of one given), or a single
 * process when built without MPI. */
typedef struct hx_comm hx_comm;
/* mpi_comm: a pointer to an MPI_Comm to duplicate, or NULL for the world. */
HX_API hx_status hx_comm_create(hx_comm **comm, const void *mpi_comm);
HX_API void hx_comm_destroy(hx_comm *comm);
HX_API int hx_comm_rank(const hx_comm *comm);
HX_API int hx_comm_size(const hx_comm *comm);

/* ---------------------------------------------------------------- decomp */

enum { HX_X = 0, HX_Y = 1, HX_Z = 2 };

/* Longest pulse list a plan may have (all dimensions together). */
#define HX_MAX_PULSES 32
/* Most domains along one dimension whose cuts a caller may set
 * (hx_decomp_set_cuts); equal domains have no such limit. */
#define HX_MAX_CUT_DOMAINS 128

/* The decomposition seen from one rank. Plain data: fill with
 * hx_decomp_init (orthorhombic box) or hx_decomp_init_tilted (LAMMPS's
 * restricted triclinic box). Index 0, 1, 2 is x, y, z.
 *
 * The box has edge vectors a = (lx, 0, 0), b = (xy, ly, 0) and
 * c = (xz, yz, lz) from box_lo, with (lx, ly, lz) = box_len and
 * (xy, xz, yz) = tilt. Ownership and pulses are decided by heights: the
 * height of a point x along d is dot(normal[d], x) (hx_decomp_height),
 * where normal[d] is the unit normal of the box faces that bound d (the
 * planes of constant fractional coordinate along d). For an orthorhombic
 * box normal[d] is the unit vector e_d and the height is x[d] itself, so
 * everything below reads as box coordinates there. */
typedef struct hx_decomp {
    double box_lo[3];  /* box origin */
    double box_len[3]; /* lx, ly, lz, all > 0 */
    double cutoff;     /* halo cutoff rh (pair cutoff + skin) */
    int grid[3];       /* domains along each dimension */
    int nranks, rank;
    int coord[3];                /* this rank's position in the grid */
    double dom_lo[3], dom_hi[3]; /* heights of this rank's domain faces */
    int up[3], down[3];          /* neighbour ranks (+1 and -1), periodic */
    int npulse[3];               /* pulses per dimension, 0 where grid[d] == 1 */
    double tilt[3];              /* xy, xz, yz (LAMMPS's order); 0 when orthorhombic */
    int triclinic;               /* 1 when some tilt is non-zero */
    double normal[3][3];         /* normal[d]: unit face normal n_d (e_d when orthorhombic) */
    double edge[3][3];           /* edge[d]: the edge vector crossed along d: a, b, c */
    double height[3];            /* h_d: distance between the two faces bounding d
                                    (box_len[d] when orthorhombic) */
    double face_lo[3];           /* height of the box's lower face along d
                                    (box_lo[d] when orthorhombic) */
    int cuts_set[3];             /* 1: the cuts along d were set (hx_decomp_set_cuts);
                                    0: grid[d] equal domains */
    double cut[3][HX_MAX_CUT_DOMAINS + 1]; /* cuts_set[d]: the fractions
                        0 = cut[d][0] < ... < cut[d][grid[d]] = 1 of h_d */
} hx_decomp;

/* "2x2x1" -> {2,2,1}. */
HX_API hx_status hx_grid_parse(const char *text, int grid[3]);
/* The grid for nranks with the smallest halo volume for this box and cutoff;
 * only grids whose every decomposed dimension keeps the cutoff under half the
 * box are chosen. box_len: the box lengths, or for a triclinic box its face
 * distances (hx_decomp.height). */
HX_API hx_status hx_grid_choose(int nranks, const double box_len[3], double cutoff, int grid[3]);
/* The same for a full-shell plan (hx_plan_create_full, `newton off`): the
 * halo grows by the cutoff towards both neighbours along each decomposed
 * dimension, and twice the grid's pulses must fit in HX_MAX_PULSES, so a
 * grid hx_grid_choose gives may have too many pulses for it (HX_ERR_GRID
 * where none fits). hx_decomp_init chooses as hx_grid_choose does: a
 * full-shell user passes this grid to it. */
HX_API hx_status hx_grid_choose_full(int nranks, const double box_len[3], double cutoff,
                                     int grid[3]);
/* grid == NULL or {0,0,0}: chosen with hx_grid_choose; a grid with some
 * entries 0 (LAMMPS's `processors 2 * *`): those chosen, the others kept.
 * Checks the box, the cutoff and the grid, each with its own status. */
HX_API hx_status hx_decomp_init(hx_decomp *d, const double box_lo[3], const double box_len[3],
                                double cutoff, const int grid[3], int nranks, int rank);
/* The same for a triclinic box: tilt = (xy, xz, yz), within LAMMPS's limits
 * |xy| <= lx / 2, |xz| <= lx / 2, |yz| <= ly / 2 (beyond them HX_ERR_BOX);
 * the cutoff must be under half of every face distance h_d
 * (HX_ERR_CUTOFF_TOO_LARGE). tilt NULL or all 0 gives exactly what
 * hx_decomp_init gives. */
HX_API hx_status hx_decomp_init_tilted(hx_decomp *d, const double box_lo[3],
                                       const double box_len[3], const double tilt[3], double cutoff,
                                       const int grid[3], int nranks, int rank);
/* Non-uniform domains (LAMMPS's brick after `balance shift`): the cuts
 * along dim become cuts[0 .. grid[dim]], increasing fractions of the face
 * distance h_dim with cuts[0] == 0 and cuts[grid[dim]] == 1, the same on
 * every rank (hx_plan_create, hx_plan_create_device and hx_migrate check
 * that they are: HX_ERR_INVALID naming the rank). Domain c along dim is
 * then [face_lo + h cuts[c], face_lo + h cuts[c + 1]) in height (the last
 * one ends exactly at face_lo + h); dom_lo, dom_hi and npulse[dim] follow,
 * and ownership, migration and the plans use them. cuts NULL: equal
 * domains again. The pulse count along dim is the most any domain needs
 * (the fewest upper neighbours whose widths together exceed the cutoff).
 * HX_ERR_INVALID: dim out of range, more than HX_MAX_CUT_DOMAINS domains,
 * or cuts not finite, not increasing, or not from 0 to 1.
 * HX_ERR_CUTOFF_TOO_LARGE: a domain too thin for the cutoff, i.e. the
 * halo above some domain would reach round the box into that domain
 * itself, the pulses of all dimensions would exceed HX_MAX_PULSES, or a
 * domain rounds to no thickness. On error *d is unchanged. */
HX_API hx_status hx_decomp_set_cuts(hx_decomp *d, int dim, const double *cuts);
/* Height of the lower face of domain c along dim (c == grid[dim]: the
 * box's upper face, face_lo + height exactly): the bounds that decide
 * ownership. */
HX_API double hx_decomp_bound(const hx_decomp *d, int dim, int c);

/* LAMMPS's `balance shift` along one dimension (Balance::shift, tally,
 * adjust and the spreading of duplicate cuts, as in LAMMPS 29 Sep 2021,
 * unweighted): moves the n - 1 inner cuts of cuts[0 .. n] (fractions,
 * cuts[0] == 0, cuts[n] == 1) so that the n slabs between them hold
 * near-equal atom counts. count(cuts, n, counts, arg) fills counts[0 .. n)
 * with the atoms of the whole system in each slab, an atom with
 * fractional coordinate f in slab k where cuts[k] <= f < cuts[k + 1]
 * (below cuts[0]: slab 0; at or above cuts[n - 1]: slab n - 1; the same
 * on every rank: hx_balance_count does it for atoms spread over ranks).
 * niter and stopthresh are the command's Niter (>= 1) and stopthresh
 * (>= 1); ndims is how many dimensions the command's string names (LAMMPS
 * stops a dimension when every cut's cumulative count is within
 * stopthresh^(1/ndims) - 1 of its target). On return cuts holds the new
 * cuts and *out the iterations and the slab loads before and after. The
 * caller does what LAMMPS does around it: the `thresh` test before, the
 * loop over the dimensions named, the migration after. */
typedef hx_status (*hx_balance_count_fn)(const double *cuts, int n, double *counts, void *arg);
typedef struct hx_balance_result {
    int iterations;
    double max_before, max_after;             /* largest slab count */
    double imbalance_before, imbalance_after; /* max / average: LAMMPS's
                        imbalance factor when the grid is 1 along the
                        other dimensions */
} hx_balance_result;
HX_API hx_status hx_balance_shift(int n, double *cuts, hx_balance_count_fn count, void *arg,
                                  int niter, double stopthresh, int ndims, hx_balance_result *out);
/* A count for hx_balance_shift over atoms spread over the ranks of comm
 * (collective): each rank's nlocal positions x (3 doubles each) are taken
 * to fractional coordinates along dim as LAMMPS's x2lamda computes them
 * (box and tilt of d), counted per slab and summed over the ranks (comm
 * NULL: this process's atoms alone). */
typedef struct hx_balance_local {
    hx_comm *comm;
    const hx_decomp *d;
    int dim;
    int nlocal;
    const double *x;
} hx_balance_local;
HX_API hx_status hx_balance_count(const double *cuts, int n, double *counts, void *arg);

/* Height of the point x along dimension dim: dot(normal[dim], x), summed
 * in this order with each product and sum rounded on its own (separate
 * statements, so that a compiler contracting within an expression fuses
 * none: the device computes it the same way); exactly x[dim] for an
 * orthorhombic box. */
static inline double hx_decomp_height(const hx_decomp *d, int dim, const double x[3])
{
    if (!d->triclinic)
        return x[dim];
    const double *n = d->normal[dim];
    const double a = n[0] * x[0];
    const double b = n[1] * x[1];
    const double c = n[2] * x[2];
    const double ab = a + b;
    return ab + c;
}
/* Rank at grid position (coordinates taken modulo the grid). */
HX_API int hx_decomp_rank_at(const hx_decomp *d, const int coord[3]);
/* Grid position owning a point of height h along dimension dim
 * (hx_decomp_height; the coordinate itself for an orthorhombic box),
 * clamped into the grid. */
HX_API int hx_decomp_cell(const hx_decomp *d, int dim, double h);
/* Rank owning a point inside the box. */
HX_API int hx_decomp_owner(const hx_decomp *d, const double x[3]);

/* ------------------------------------------------------------------ plan */

/* One pulse of the coordinate exchange. Coordinates go to send_rank and
 * come from recv_rank: the lower and the upper neighbour along dim (dir -1,
 * every pulse of hx_plan_create), or the upper and the lower one (dir +1,
 * half the pulses of hx_plan_create_full). */
typedef struct hx_pulse {
    int dim;         /* HX_X, HX_Y or HX_Z */
    int index;       /* pulse number within its dimension, from 0 */
    int send_rank;   /* receives our atoms */
    int recv_rank;   /* sends us atoms */
    int nsend;       /* atoms sent */
    int nsend_home;  /* map[0 .. nsend_home) are home atoms; the rest are
                        halo atoms of earlier pulses */
    const int *map;  /* local indices of the atoms sent, home atoms first */
    double shift[3]; /* periodic image added to the coordinates while
                        packing: edge[dim] of the decomp where the send
                        wraps across the box (coord[dim] == 0), else 0 */
    int nrecv;       /* atoms received */
    int recv_offset; /* they land at [recv_offset, recv_offset + nrecv) */
    int peer_offset; /* where our atoms land on send_rank */
    uint64_t deps;   /* bit q set: map reads atoms delivered by pulse q */
    int map_offset;  /* first entry of this map in the plan's concatenated
                        maps (pulses in order): for device plans */
    uint64_t share;  /* bit r set (r > this pulse): pulse r's map holds an
                        atom this map holds too (it orders the reverse's
                        adds: 0 on a full-shell plan, which has none) */
    int dir;         /* -1: to the lower neighbour (shift edge[dim] where
                        coord[dim] == 0); +1: to the upper one (full shell;
                        shift -edge[dim] where coord[dim] == grid[dim] - 1) */
} hx_pulse;

typedef struct hx_plan hx_plan;

/* Collective over comm. x: nhome * 3 home coordinates (x, y, z per atom),
 * each inside this rank's domain (call hx_migrate first). */
HX_API hx_status hx_plan_create(hx_plan **plan, hx_comm *comm, const hx_decomp *d, int nhome,
                                const double *x);
/* Collective, as hx_plan_create: the full-shell plan (LAMMPS's `newton
 * off`). Along Z, then Y, then X, each decomposed dimension has pulses in
 * both directions: atoms within the cutoff of the domain's lower face go
 * down (dir -1), those within the cutoff of its upper face go up (dir +1),
 * pulse k of each direction right after pulse k of the other; the first
 * pulses of a dimension send from every atom held before it (home and
 * earlier dimensions' halo, so edges and corners arrive), pulse k > 0 of a
 * direction forwards what pulse k - 1 of that direction delivered. The two
 * directions of a dimension read nothing of each other (hx_pulse.deps).
 * A rank then holds every atom within the cutoff of each home atom, once:
 * it computes the pairs with at least one home atom (index < nhome), each
 * pair across a boundary on both of its ranks (each counting half its
 * energy and virial), forces on its home atoms only. Nothing goes back:
 * hx_transport_reverse refuses such a plan. Zones: hx_plan_zones holds
 * signed offsets (int8_t; -1 for an atom of the lower neighbour), all zero
 * for home atoms exactly; hx_zone_pair does not apply. Twice the
 * decomposition's pulses must fit in HX_MAX_PULSES (else HX_ERR_INVALID). */
HX_API hx_status hx_plan_create_full(hx_plan **plan, hx_comm *comm, const hx_decomp *d, int nhome,
                                     const double *x);
/* 1 for a plan of hx_plan_create_full or hx_plan_create_device_full. */
HX_API int hx_plan_full_shell(const hx_plan *plan);
HX_API void hx_plan_destroy(hx_plan *plan);
HX_API const hx_decomp *hx_plan_decomp(const hx_plan *plan);
HX_API int hx_plan_nhome(const hx_plan *plan);
HX_API int hx_plan_nhalo(const hx_plan *plan);
HX_API int hx_plan_ntotal(const hx_plan *plan);
/* Largest ntotal over all ranks (known to every rank). */
HX_API int hx_plan_max_ntotal(const hx_plan *plan);
HX_API int hx_plan_npulses(const hx_plan *plan);
/* Pulses in exchange order: Z pulses, then Y, then X. */
HX_API const hx_pulse *hx_plan_pulse(const hx_plan *plan, int p);
/* Map entries of pulse p that pulse q delivered (q < p; the map's halo
 * entries are sorted, so they are one run starting at
 * nsend_home + the counts of the pulses before q). */
HX_API int hx_plan_from_pulse(const hx_plan *plan, int p, int q);
/* Coordinates of all ntotal atoms (home, then halo with shifts applied), as
 * the plan's own exchange delivered them. ntotal * 3 doubles; NULL for a
 * plan built on the device (hx_plan_device_coords). */
HX_API const double *hx_plan_coords(const hx_plan *plan);
/* Zone offsets: 4 bytes per atom (ox, oy, oz, 0), 0 for home. A pair (i, j)
 * belongs to this rank iff min(oi, oj) == 0 in every dimension (a full-shell
 * plan: see hx_plan_create_full). NULL for a
 * plan built on the device (hx_plan_device_zones). */
HX_API const uint8_t *hx_plan_zones(const hx_plan *plan);
/* 1 when the pair (i, j) of local atoms is this rank's to compute. */
static inline int hx_zone_pair(const uint8_t *zi, const uint8_t *zj)
{
    return (zi[0] == 0 || zj[0] == 0) && (zi[1] == 0 || zj[1] == 0) && (zi[2] == 0 || zj[2] == 0);
}

/* --------------------------------------------------------------- migrate */

/* A per-atom payload array carried by hx_migrate: *data points to
 * n * size bytes allocated with malloc; hx_migrate may realloc it. The same
 * description registers a halo field (hx_transport_field_add). */
typedef struct hx_field {
    void **data;
    size_t size;
} hx_field;

/* Collective. Wraps every coordinate into the box and sends each atom that
 * left this rank's domain to its owner, with its fields. *x holds *n atoms
 * (3 doubles each) in a malloc'd block of *capacity atoms; x and every field
 * are realloc'd together when more room is needed. Order of the atoms that
 * stay is kept; arrivals are appended. */
HX_API hx_status hx_migrate(hx_comm *comm, const hx_decomp *d, int *n, int *capacity, double **x,
                            const hx_field *fields, int nfields);

/* ------------------------------------------------------------- transport */

typedef enum hx_dtype { HX_FLOAT = 0, HX_DOUBLE = 1 } hx_dtype;

/* How the `mpi` transport moves GPU data. */
typedef enum hx_mpi_mode {
    HX_MPI_AUTO = 0,       /* CUDA-aware if the library says so, else ipc when
                              every rank shares one node, else staged;
                              HALOX_MPI_MODE=auto|cuda-aware|ipc|staged
                              chooses when this is AUTO */
    HX_MPI_CUDA_AWARE = 1, /* device pointers handed to MPI */
    HX_MPI_STAGED = 2,     /* through pinned host buffers */
    HX_MPI_IPC = 3         /* same node: peer copies into CUDA IPC mappings,
                              MPI only for the ready/done messages */
} hx_mpi_mode;

typedef struct hx_transport_opts {
    const char *name;     /* "cpu", "mpi", "nccl", "nvshmem-stream", ... */
    hx_dtype dtype;       /* cpu: float or double; GPU transports: float */
    int capacity;         /* atoms per rank the buffers hold at first;
                             0: sized from the first plan with a margin */
    int fixed_capacity;   /* 1: a plan that does not fit is HX_ERR_OVERFLOW
                             instead of a collective re-allocation */
    int force_put;        /* NVSHMEM: ignore peer pointers, always put with
                             signal (also HALOX_FORCE_PUT=1) */
    double timeout_s;     /* every wait for a peer, > 0; 0: HALOX_TIMEOUT_S or 5 s */
    void *stream;         /* cudaStream_t to run on; NULL: the transport's own */
    hx_mpi_mode mpi_mode; /* `mpi` transport only */
    int graph;            /* 1: forward and reverse may be captured in a CUDA
                             graph (see hx_transport_step_graph); transports
                             that cannot be captured refuse it */
    const int32_t *gate;  /* graph mode, optional: a device int32 that the
                             forward and reverse kernels read when they start;
                             while it is nonzero they do nothing (send, wait
                             for and count nothing), so every rank must gate
                             the same calls (e.g. after a yes of
                             hx_transport_vote) */
} hx_transport_opts;

typedef struct hx_transport hx_transport;

/* What a transport can do, as bits of hx_transport_caps(). A caller decides
 * by these, never by a transport's name. */
enum {
    HX_CAP_DEVICE = 1u << 0,       /* arrays in device memory (float) */
    HX_CAP_HOST = 1u << 1,         /* arrays in host memory */
    HX_CAP_DOUBLE = 1u << 2,       /* takes HX_DOUBLE as well as HX_FLOAT */
    HX_CAP_GRAPH = 1u << 3,        /* forward and reverse can be captured in a CUDA
                                      graph (opts.graph, hx_transport_step_graph) */
    HX_CAP_BLOCKS_HOST = 1u << 4,  /* forward and reverse wait on the host
                                      (CPU-orchestrated): queue other work first */
    HX_CAP_GPU_PER_RANK = 1u << 5, /* needs one GPU per rank */
    HX_CAP_PEER = 1u << 6,         /* stores straight into peers' memory where it can;
                                      opts.force_put takes the network path instead */
    HX_CAP_CHOOSES = 1u << 7,      /* measures others and runs the fastest (`auto`):
                                      the other bits are its choice's, known after the
                                      first plan */
    HX_CAP_VOTE = 1u << 8,         /* hx_transport_vote: a yes/no agreed over the ranks
                                      on the device, capturable in a CUDA graph */
    HX_CAP_FIELDS = 1u << 9        /* carries per-atom fields through the halo
                                      (hx_transport_field_add): every transport
                                      (`auto` through its choice) */
};

HX_API void hx_transport_opts_init(hx_transport_opts *opts);
/* Names of the transports built into this library, in order of increasing
 * sophistication. */
HX_API int hx_transport_count(void);
HX_API const char *hx_transport_name_at(int i);
/* Every transport halox knows, built into this library or not, in the
 * same order (hx_transport_name_at lists the built ones only). */
HX_API int hx_transport_known_count(void);
HX_API const char *hx_transport_known_at(int i);
/* What a build needs for a transport, as a sentence; NULL where this
 * library has it (and for a name halox does not know). */
HX_API const char *hx_transport_needs(const char *name);
/* A built transport's caveat, NULL where it has none: a transport that has
 * not yet run where it can exchange says so, and `auto` leaves it out. */
HX_API const char *hx_transport_note(const char *name);
/* Capabilities of a built transport by name, before one is created
 * (HX_CAP_* bits; 0 for a name not built here). `auto` answers
 * HX_CAP_CHOOSES only: what it can do depends on its choice. */
HX_API unsigned hx_transport_caps_of(const char *name);
/* Collective over comm. */
HX_API hx_status hx_transport_create(hx_transport **t, hx_comm *comm,
                                     const hx_transport_opts *opts);
HX_API void hx_transport_destroy(hx_transport *t);
HX_API const char *hx_transport_name(const hx_transport *t);
/* One line saying how it moves data (mode, paths), for logs. */
HX_API const char *hx_transport_describe(const hx_transport *t);
/* Collective. Takes a new plan (kept by pointer: it must outlive its use);
 * grows the buffers when needed. */
HX_API hx_status hx_transport_set_plan(hx_transport *t, const hx_plan *plan);
/* The transport's coordinate and force arrays (ntotal * 3 of dtype), in
 * host memory for `cpu`, in device memory otherwise. They may move at
 * hx_transport_set_plan. */
HX_API void *hx_transport_coords(hx_transport *t);
HX_API void *hx_transport_forces(hx_transport *t);
HX_API int hx_transport_on_device(const hx_transport *t);
/* HX_CAP_* bits of this transport; for `auto`, HX_CAP_CHOOSES plus those of
 * the transport it runs now (none before its first plan). */
HX_API unsigned hx_transport_caps(const hx_transport *t);
/* Host <-> transport array copies with conversion, for set-up and checks:
 * n atoms (3 doubles each) from atom `first` on. Device transports copy
 * synchronously. */
typedef enum hx_array { HX_COORDS = 0, HX_FORCES = 1 } hx_array;
HX_API hx_status hx_transport_write(hx_transport *t, hx_array which, int first, int n,
                                    const double *src);
HX_API hx_status hx_transport_read(hx_transport *t, hx_array which, int first, int n, double *dst);
/* Halo coordinates: fills [nhome, ntotal) of the coordinate array from the
 * home coordinates of the other ranks. GPU transports enqueue on their stream.
 * On a full-shell plan, where no reverse orders the steps, the transports
 * that store into their peers first make sure no peer still reads its
 * previous halo: the nvshmem-* ones with a vote on the stream (as
 * hx_transport_vote; capturable), nccl-dev by draining its stream and a
 * barrier (blocking; not capturable). */
HX_API hx_status hx_transport_forward(hx_transport *t);
/* Forces on halo atoms are added to their owners' home (or forwarded) atoms,
 * in reverse pulse order. On a full-shell plan (hx_plan_full_shell; `newton
 * off`: nothing goes back) HX_ERR_STATE, as are hx_transport_fields_reverse
 * and hx_transport_step_graph there. */
HX_API hx_status hx_transport_reverse(hx_transport *t);
/* Waits for the transport's work and reports any device-side timeout. */
HX_API hx_status hx_transport_sync(hx_transport *t);

/* Graph mode (opts.graph = 1; nvshmem-fused and nvshmem-fused-tma).
 * hx_transport_forward and hx_transport_reverse then enqueue device work
 * only, on opts.stream (or the transport's own stream), with no host
 * synchronisation and no per-step value from the host: the step number lives
 * in device memory and the forward kernel advances it. A caller may capture
 * forward, its own force kernels, reverse and update in one CUDA graph on
 * opts.stream (stream capture) and replay it: each replay is the next step.
 * Capture again after hx_transport_set_plan (arrays and maps may move);
 * never call hx_transport_sync or the read/write copies inside a capture.
 * hx_transport_step_graph enqueues one whole step, forward then reverse,
 * by replaying a graph that the transport captures itself on first use and
 * again after each hx_transport_set_plan; errors are reported by
 * hx_transport_sync as for launched steps. */
HX_API hx_status hx_transport_step_graph(hx_transport *t);

/* A vote on the device (HX_CAP_VOTE: the nvshmem-* transports): enqueues on
 * the transport's stream a kernel that reads this rank's int32 at `in`
 * (device memory), exchanges it with every other rank and stores at `out`
 * (device memory) 1 if any rank's was nonzero, else 0. No host
 * synchronisation, no per-call value from the host: it may be captured in a
 * CUDA graph and replayed, each replay the next vote. Every rank must make
 * the same votes; a rank whose *in is negative when the kernel runs takes
 * no part in that vote (sends nothing, waits for nothing, leaves *out), so
 * the ranks must sit out the same votes (e.g. after a yes that stops them
 * all). Each rank waits for each other rank, so a vote costs one message
 * per pair of ranks. A wait is bounded by the transport's timeout: a vote
 * that times out stores 1, and hx_transport_sync then reports which rank's
 * vote did not come; a rank whose transport has recorded a timeout (a lost
 * step) votes 1 whatever its *in, unless it sits the vote out. Arrays and
 * plans do not matter to it: it may run before the first plan. */
HX_API hx_status hx_transport_vote(hx_transport *t, const int32_t *in, int32_t *out);

/* ------------------------------------------------ per-atom fields (halo) */

/* Any per-atom data besides coordinates and forces travels through the halo
 * as a field registered on a transport (HX_CAP_FIELDS): host arrays on the
 * `cpu` transport, device arrays (cudaMalloc) on the GPU transports; `auto`
 * takes fields before its choice and passes every call to it. A GPU
 * transport's field call waits for its stream (host staging per pulse),
 * except a forward with the coordinates on nvshmem-fused(-tma) where every
 * peer is reached by stores: that one runs in the fused kernel, with no
 * host synchronisation, and may be captured in a CUDA graph (docs/core.md
 * says which path a call takes and what it costs). Fields and migration
 * use the same description of a field, hx_field: data points to the
 * caller's pointer to the array and size is the bytes per atom; the
 * transport adds how to read those bytes, an element type and a width
 * (values per atom), so that size == width * the type's bytes.
 *
 * The caller owns the arrays. After each hx_transport_set_plan it makes
 * every registered array hold at least hx_plan_ntotal atoms (home atoms
 * first, then the halo, in the plan's order), for instance by realloc
 * through the same pointer: the transport reads *data afresh at each call
 * and never allocates, frees or keeps a copy of the array. Registration is
 * rank-local, but every rank must register the same fields (type and width)
 * under the same ids, and make the same field calls with the same ids in
 * the same order, as for hx_transport_forward. Arguments are checked before
 * anything is sent; a rank whose peer stops mid-exchange gets
 * HX_ERR_TIMEOUT, never a hang. */
typedef enum hx_ftype {
    HX_FIELD_NONE = 0, /* bytes only: what hx_migrate carries (not a halo field) */
    HX_FIELD_FLOAT = 1,
    HX_FIELD_DOUBLE = 2,
    HX_FIELD_INT32 = 3
} hx_ftype;

/* Fields a transport holds at once; ids run from 0 to HX_MAX_FIELDS - 1. */
#define HX_MAX_FIELDS 32

/* Registers a field on t and returns its id in *id: the lowest free one, so
 * that ranks that add and remove in the same order agree on ids. field->data
 * must not be NULL (*field->data may be until the first call); width >= 1;
 * field->size == width * sizeof(type). HX_ERR_UNSUPPORTED where t cannot
 * carry fields (not HX_CAP_FIELDS), HX_ERR_INVALID for a bad description,
 * HX_ERR_OVERFLOW when HX_MAX_FIELDS are registered. */
HX_API hx_status hx_transport_field_add(hx_transport *t, const hx_field *field, hx_ftype type,
                                        int width, int *id);
/* Forgets field id (its array stays the caller's); the id may be given out
 * again. HX_ERR_INVALID for an id not registered. */
HX_API hx_status hx_transport_field_remove(hx_transport *t, int id);
/* Collective. Forward of the n fields named by ids (distinct, registered):
 * each home atom's values are copied onto its halo copies on the other
 * ranks, pulse by pulse in plan order, forwarded atoms included, exactly as
 * coordinates travel but with no periodic shift (a field is not a
 * position). Fills entries [nhome, ntotal) of each array; entries
 * [0, nhome) are read, never written. with_coords 1: the coordinates go
 * forward in the same call, as hx_transport_forward sends them (one
 * message per pulse on `cpu`, one kernel and signal per pulse on
 * nvshmem-fused); n may then be 0. On the GPU transports, as in an MD
 * step, a reverse (or a sync on every rank) comes between two forwards
 * with the coordinates, so that a peer's next values never meet these. */
HX_API hx_status hx_transport_fields_forward(hx_transport *t, const int *ids, int n,
                                             int with_coords);
/* Collective. Reverse of the n fields named by ids: each halo entry's
 * values are added into the atom it is a copy of, in reverse pulse order
 * (the order hx_transport_reverse adds forces in), so the sums do not
 * depend on timing; int32 values add too (wrapping modulo 2^32). Halo
 * entries keep their values. with_forces 1: the forces go back in the same
 * call, as hx_transport_reverse sends them (one message per pulse on
 * `cpu`; the transport's own reverse, then the fields, on the GPU
 * transports); n may then be 0. */
HX_API hx_status hx_transport_fields_reverse(hx_transport *t, const int *ids, int n,
                                             int with_forces);

/* -------------------------------------------------- rebuild on the device */

/* For atoms whose data live on the GPU: migration and the halo plan with no
 * per-atom data crossing to the host (the host learns counts and errors
 * only). Each runs collectively, on the stream of the transport it is
 * given, which also moves the bytes between neighbours (puts with signal
 * for the NVSHMEM transports, NCCL send/receive for nccl, pinned host
 * buffers over MPI for the others). Built with CUDA only: elsewhere every
 * call returns HX_ERR_UNSUPPORTED. docs/core.md has the details. */

/* The context of device rebuilds: scratch buffers, counters, the stream.
 * One per set of arrays; it outlives the plans it makes. */
typedef struct hx_rebuild hx_rebuild;

/* Collective. t: a transport with device arrays (HX_CAP_DEVICE), used for
 * its stream and its byte exchange; d: the decomposition (copied). */
HX_API hx_status hx_rebuild_create(hx_rebuild **r, hx_transport *t, const hx_decomp *d);
HX_API void hx_rebuild_destroy(hx_rebuild *r);
/* Rank-local. New cuts for r (hx_decomp_set_cuts): d must have r's ranks
 * and grid. The next hx_rebuild_migrate moves the atoms to it and the
 * next hx_plan_create_device plans on it (plans made before keep their
 * own); a count taken ahead is dropped. Since the device migration moves
 * an atom at most one domain along each dimension, along a dimension of
 * four domains or more each new bound must lie between the old bounds on
 * either side of it (bound k + 1 of one no lower than bound k of the
 * other, both ways; move the cuts in steps, or migrate on the host);
 * beyond that, and for another grid, HX_ERR_INVALID. */
HX_API hx_status hx_rebuild_set_decomp(hx_rebuild *r, const hx_decomp *d);

/* A per-atom payload array in device memory carried by hx_rebuild_migrate:
 * *data points to capacity * size bytes from cudaMalloc (size a multiple of
 * 4); it moves when the arrays grow. */
typedef struct hx_dfield {
    void **data;
    size_t size;
} hx_dfield;

/* Collective. *n atoms with xstride floats each (3 or 4; the first three
 * are the position, the rest travel with it) in *x, a device array of
 * *capacity atoms, as is every field. Wraps every coordinate into the box;
 * then, along Z, Y, X in turn, atoms below their domain go to the lower
 * neighbour and atoms at or above it to the upper one, with their fields;
 * the atoms that stay keep their order and arrivals are appended. An atom
 * may move at most one domain along each dimension between two calls
 * (any distance where a dimension has two or three domains); one further
 * away is HX_ERR_COORD_OUTSIDE naming it, found before anything moves (the
 * positions are wrapped by then). Where arrivals do not fit, every array
 * grows (cudaMalloc, contents kept, old block freed) and *capacity with it.
 * A non-finite coordinate is HX_ERR_COORD_NAN. The work is ordered on the
 * transport's stream: what is queued there after the call sees the
 * migrated arrays, and a failed exchange of the last dimension is reported
 * by the next call that waits for the stream (hx_transport_sync, or the
 * next device rebuild call). */
HX_API hx_status hx_rebuild_migrate(hx_rebuild *r, int *n, int *capacity, float **x, int xstride,
                                    const hx_dfield *fields, int nfields);
/* Rank-local. keep 1 (the default): hx_rebuild_migrate keeps the order
 * above. keep 0: it may leave the atoms in any order, and moves only what
 * must move: the arrivals go into the places of the atoms that left (then
 * after the last atom), and where fewer arrive than leave, the stayers
 * past the new count move into the places left; every other atom stays
 * where it is. For callers that sort the atoms after each migration. */
HX_API hx_status hx_rebuild_keep_order(hx_rebuild *r, int keep);

/* Collective. The halo plan of nhome home atoms whose coordinates are in
 * device memory (x, xstride floats per atom, every atom inside this rank's
 * domain: call hx_rebuild_migrate first), by the rules of hx_plan_create:
 * the same atoms per pulse in the same order, the same shifts, offsets,
 * dependency and share masks, when the comparisons come out the same in
 * float (a coordinate within rounding of a pulse's limit may fall either
 * side). Maps, coordinates and zones stay on the device; hx_pulse.map is
 * NULL. The plan's own exchange delivers the halo coordinates (shift added
 * in float, as the GPU transports add it), so its coordinates are those a
 * forward exchange of the transport gives. */
HX_API hx_status hx_plan_create_device(hx_plan **plan, hx_rebuild *r, int nhome, const float *x,
                                       int xstride);
/* Collective: the full-shell plan (hx_plan_create_full's pulses) of the
 * same atoms, as hx_plan_create_device makes the eighth shell's: equal to
 * hx_plan_create_full's on the same float coordinates, by the same rules.
 * hx_plan_count_device serves it as well (its first pulse is the same). */
HX_API hx_status hx_plan_create_device_full(hx_plan **plan, hx_rebuild *r, int nhome,
                                            const float *x, int xstride);
/* Optional, rank-local, before hx_plan_create_device: queues on the
 * transport's stream the count of the first pulse's atoms among the nhome
 * home atoms at x (and their check), which does not depend on their order,
 * and returns. The next hx_plan_create_device of r, given the same atoms in
 * any order (after a cell sort queued behind this call, say), then waits
 * for that count alone, not for what was queued after it: its count
 * messages go while the GPU still works, and its selection is queued
 * behind. Its own count is compared on the device; atoms other than those
 * counted are HX_ERR_INVALID from the next call of r that waits for the
 * stream (hx_rebuild_migrate, hx_rebuild_census), and their plan is wrong.
 * A migration in between cancels the count; a plan given another number
 * of atoms is HX_ERR_INVALID. Without pulses this does nothing. */
HX_API hx_status hx_plan_count_device(hx_rebuild *r, int nhome, const float *x, int xstride);
/* 1 for a plan built on the device. */
HX_API int hx_plan_on_device(const hx_plan *plan);
/* Device arrays of a device plan (NULL for a host plan): coordinates of all
 * ntotal atoms (3 floats each, home then halo), zones (4 bytes each), and
 * the maps of all pulses concatenated (pulse p at hx_pulse.map_offset). */
HX_API const float *hx_plan_device_coords(const hx_plan *plan);
HX_API const uint8_t *hx_plan_device_zones(const hx_plan *plan);
HX_API const int *hx_plan_device_maps(const hx_plan *plan);

/* Collective. Atoms over all ranks and a checksum of their ids (a sum of a
 * hash of each id, so that a lost or duplicated atom changes it), from n
 * int64 ids in device memory. */
HX_API hx_status hx_rebuild_census(hx_rebuild *r, int n, const int64_t *ids, int64_t *natoms,
                                   uint64_t *checksum);

#ifdef __cplusplus
}
#endif

#endif /* HALOX_H */
