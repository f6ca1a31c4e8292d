/*
 * setup.c - the GPU engine's device and transport set-up: which GPU this
 * rank uses, which transport moves its halo, the Lennard-Jones and cell
 * parameters, and device memory sized with a margin.
 */
#define _POSIX_C_SOURCE 200809L

#include "md/gpu/engine.h"
#include "md/pair/pair_styles.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --------------------------------------------------------------- memory */

hx_status hxg_eng_dev_grow(void *p, size_t *have, size_t need, const char *what)
{
    void **pp = (void **) p;
    if (*pp && need <= *have)
        return HX_OK;
    if (*pp)
        cudaFree(*pp);
    *pp = NULL;
    *have = 0;
    cudaError_t err = cudaMalloc(pp, need ? need : 16);
    if (err != cudaSuccess) {
        *pp = NULL;
        cudaGetLastError();
        return hxi_error(HX_ERR_NOMEM,
                         "GPU engine: cudaMalloc of %zu bytes for %s failed (%s); use fewer "
                         "atoms per GPU (more ranks or GPUs)",
                         need, what, cudaGetErrorString(err));
    }
    *have = need;
    return HX_OK;
}

int hxg_eng_round_up(long long v, int to)
{
    return (int) ((v + to - 1) / to * to);
}

/* Room for `need` atoms with a margin, so that migration rarely reallocates. */
int hxg_eng_cap_for(const hx_md_engine *e, int need)
{
    /* HALOX_MD_TIGHT=1: no margin, so that the first rebuild that brings a
     * rank more atoms grows its arrays (tests of the growth path). */
    if (e->tight || !e->multi) /* one rank: no atom ever arrives */
        return hxg_eng_round_up(need > 0 ? need : 1, 32);
    return hxg_eng_round_up((long long) need + need / 4 + 1024, 32);
}

/* Room per atom in the neighbour lists to start with: the neighbours
 * within rc + skin at the system's mean density, plus 30% and 8 for
 * liquid fluctuations (in the LJ melt at 0.8442: 78 on the lattice, at
 * most 90-91 measured in the liquid; 112 slots). A list build that finds more
 * grows the lists and builds again (rebuild.c, step_single.c), so a denser
 * cluster costs one regrowth, not an error. HALOX_MD_NEIGH_MAX sets it. */
static int neigh_max_for(const hx_md_engine *e, double rho)
{
    const int asked = hxi_knobs()->md_neigh_max; /* 0: unset */
    if (asked > 0)
        return hxg_eng_round_up(asked, 8);
    double nb = 4.0 / 3.0 * 3.14159265358979323846 * e->phys.rh * e->phys.rh * e->phys.rh * rho;
    return hxg_eng_round_up((long long) ceil(fmax(1.3 * nb + 8.0, 16.0)), 8);
}

/* Bytes of GPU memory per home atom the engine holds (see the table in
 * docs/md-gpu.md): positions, velocities, forces and positions at the
 * last build (16 each), the sort's scratch (40), ids (8), cell index and
 * slot (8), then the local list: 4 per slot plus a count. With several
 * ranks, per local atom (home and halo) a non-local count, a row index
 * and the atom of a row, positions in cell order, zones and the
 * transport's coordinates and forces (56), and the non-local list's slots
 * for the rows of the atoms that can have entries: the halo and as many
 * home atoms near its faces, with a quarter more (rows_frac of the home
 * atoms in all; the host path's one-pass build keeps a row for every local
 * atom). */
static double bytes_per_atom(const hx_md_engine *e, int width, double halo_frac)
{
    double b = 64.0 + 40.0 + 8.0 + 8.0 + 4.0 * (width + 1);
    if (e->multi) {
        double rows_frac = e->host_rebuild ? 1.0 + halo_frac : 1.25 * 2.0 * halo_frac;
        b += (1.0 + halo_frac) * 56.0 + rows_frac * 4.0 * width;
    }
    return b;
}

/* Refuses, before any large allocation, a system whose atoms do not fit in
 * the GPU's free memory (HALOX_MD_GPU_BYTES caps what counts as free, for
 * tests), saying how many GPUs it would take. Rank-local; create agrees. */
static hx_status check_fit(const hx_md_engine *e, int nhome)
{
    size_t free_b = 0, total_b = 0;
    CU(cudaMemGetInfo(&free_b, &total_b), "memory query");
    const double asked = hxi_knobs()->md_gpu_bytes; /* 0: unset */
    double avail = (double) free_b;
    if (asked > 0 && asked < avail)
        avail = asked;
    /* The halo of a slab of thickness rh on each face along decomposed
     * dimensions, as a fraction of the home atoms (with a margin; a
     * full-shell halo lies on both faces). */
    double halo = 0.0;
    for (int k = 0; k < 3; k++)
        if (e->decomp.grid[k] > 1)
            halo +=
                (e->full ? 3.0 : 2.0) * e->phys.rh / (e->decomp.dom_hi[k] - e->decomp.dom_lo[k]);
    double per = bytes_per_atom(e, e->lists.loc.max, halo);
    double cap = (double) hxg_eng_cap_for(e, nhome); /* the arrays' room, margin included */
    double cells = 8.0 * (double) e->cells.grid.ncell;
    double need = per * cap + cells + 64.0 * 1048576.0;
    if (need <= avail)
        return HX_OK;
    double natoms = (double) e->sys->natoms;
    double per_gpu = avail - 64.0 * 1048576.0;
    long gpus = per_gpu > 0 ? (long) ceil(natoms * per * 1.25 * 1.1 / per_gpu) : 0;
    return hxi_error(HX_ERR_NOMEM,
                     "GPU engine: %d atoms on rank %d need about %.1f GB on the GPU (%.0f bytes "
                     "per atom, lists of %d), but %.1f GB are free on GPU %d: this system of "
                     "%.0f atoms needs about %ld GPUs of this size, one rank each (or fewer "
                     "atoms, or a smaller rc + skin)",
                     nhome, e->rank, need / 1e9, per * cap / (nhome > 0 ? nhome : 1),
                     e->lists.loc.max, avail / 1e9, e->dev.device, natoms, gpus > 1 ? gpus : 2);
}

/* --------------------------------------------------------------- set-up */

void hxg_eng_choose_newton(hx_md_engine *e)
{
    const hx_md_config *c = &e->cfg;
    e->newton_chosen = !(c->given & HX_MD_GIVEN_NEWTON);
    if (!e->newton_chosen)
        e->full = e->multi && c->newton_off;
    else /* and only where the full shell's pulses fit */
        e->full = e->multi && e->sys->natoms < (int64_t) HXG_FULL_BELOW * e->nranks &&
                  hxi_plan_full_fits(&e->decomp);
}

/* Rank among the processes of this host: the communicator's node map,
 * which the GPU transports read too, so that engine and transport pick the
 * same device. Collective. */
hx_status hxg_eng_local_rank(hx_md_engine *e)
{
    const hxi_node_map *m = NULL;
    HXI_CHECK(hxi_comm_node_map(e->comm, &m));
    e->dev.local_rank = m->local_rank;
    e->dev.local_size = m->local_size;
    return HX_OK;
}

/* Rank-local: call between collectives, then agree. */
static hx_status choose_device(struct hxg_device *d)
{
    int ndev = 0;
    cudaError_t err = cudaGetDeviceCount(&ndev);
    if (err != cudaSuccess || ndev <= 0) {
        cudaGetLastError();
        return hxi_error(HX_ERR_CUDA,
                         "GPU engine: no CUDA device is visible (%s); run on a machine with a "
                         "GPU, check CUDA_VISIBLE_DEVICES, or use the CPU engine (--cpu)",
                         err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    }
    d->ndevices = ndev;
    d->device = d->local_rank % ndev;
    CU(cudaSetDevice(d->device), "cudaSetDevice");
    struct cudaDeviceProp prop;
    CU(cudaGetDeviceProperties(&prop, d->device), "cudaGetDeviceProperties");
    snprintf(d->name, sizeof d->name, "%s", prop.name);
    memcpy(d->gpu_uuid, prop.uuid.bytes, sizeof d->gpu_uuid);
    d->fill = (long long) (prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1) * 1024;
    return HX_OK;
}

/* The three size rules of a multi-rank device rebuild (rebuild.c,
 * rebuild_dev.c): by size (-1), or forced to a small system's choice or a
 * large one's (HALOX_MD_REBUILD=small|large, tests); and the knobs of how
 * a rebuild step and a step between checks are launched. */
static void read_rules(hx_md_engine *e)
{
    const struct hxi_knobs *knobs = hxi_knobs();
    const int small = knobs->md_rebuild == HXK_REBUILD_SMALL;
    const int large = knobs->md_rebuild == HXK_REBUILD_LARGE;
    e->rebuild.nl_pick = small ? 0 : large ? 1 : -1;
    e->rebuild.nl_early = small ? 1 : large ? 0 : -1;
    e->rebuild.plan_ahead = small ? 1 : large ? 0 : -1;
    e->rebuild.local_late = knobs->md_local_late;
    e->rebuild.early_forces = knobs->md_early_forces;
    e->sched.pdl = knobs->md_pdl;
}

/* Threads per atom of the force kernels, once every rank has its device:
 * collective (the ranks sharing this GPU are counted by its UUID, as the
 * transports count them, whatever CUDA_VISIBLE_DEVICES shows each rank). */
hx_status hxg_eng_choose_tpp(hx_md_engine *e)
{
    int sharing = 1;
    HXI_CHECK(hxi_count_alike(e->comm, e->dev.gpu_uuid, sizeof e->dev.gpu_uuid, &sharing));
    /* Threads per atom: enough threads to fill the GPU once (1024 per SM),
     * twice where a rank of several holds its GPU alone; at most 8. For one
     * process that picks the fastest of 1, 2, 4 and 8 at every size
     * measured. A rank alone on its GPU runs its non-local forces beside
     * its local ones, which need free block slots then: on two GPUs 4 beat
     * 2 (2 puts every block of the local forces on the GPU at once). Ranks
     * sharing a GPU share its slots anyway, and there 2 beat 4
     * (docs/performance.md, "Threads per atom"; docs/md-gpu.md, "Why full
     * lists and no atomics"; docs/results/tpp-2026-12-04.txt).
     * HALOX_MD_LANES (its first field) overrides. */
    const int *lanes = hxi_knobs()->md_lanes; /* 0 or a power of two up to 8 */
    const long long fill = e->dev.fill * (e->nranks > 1 && sharing <= 1 ? 2 : 1);
    /* A rank that starts with no atoms chooses as a rank of the mean
     * count: a balance may fill it, and none would take 8 for its forces. */
    const long long n = e->sys->n > 0 ? e->sys->n : e->sys->natoms / e->nranks;
    int tpp = 1;
    while (tpp < 8 && n * tpp < fill)
        tpp *= 2;
    e->phys.tpp = lanes[0] ? lanes[0] : tpp;
    /* The non-local forces (a few pairs per atom, most atoms none) run
     * beside the local ones, and where those are short the non-local
     * kernel's longest neighbour loop sets the step: 8 threads per atom
     * below two fills of the GPU (on two GPUs a shorter step than 2), else
     * as the local forces (at the largest size measured more than 1 was
     * slower; docs/md-gpu.md, "Why full lists and no atomics").
     * HALOX_MD_LANES (its second field) overrides. */
    e->phys.tpp_nl = n < 2 * e->dev.fill ? 8 : e->phys.tpp;
    if (lanes[1])
        e->phys.tpp_nl = lanes[1];
    /* With several ranks the local forces run beside the non-local ones and
     * the exchange kernels (and, where ranks share the GPU, beside another
     * rank's): at 2 or 4 threads an atom they take the kernel that leaves
     * them room (md_force.cuh, HXG_ROOM_*, which says why); one rank keeps
     * the one that fills the SMs. HALOX_MD_FORCE_ROOM=0|1 overrides. */
    const int room = hxi_knobs()->md_force_room; /* -1: unset */
    e->phys.room = room >= 0 ? room : e->nranks > 1;
    /* Forces launched with PDL hold their blocks on the SMs while they wait
     * for the exchange before them: where ranks share a GPU, they can keep
     * another rank's exchange kernel off it, and the two wait for each
     * other: 2 processes sharing a GPU failed from 256,000 atoms on
     * (docs/performance.md, "Launching a multi-rank step";
     * docs/results/step-launch-2026-12-05.txt). */
    if (e->sched.pdl && sharing > 1) {
        if (e->rank == 0)
            hxi_warn("ignoring HALOX_MD_PDL=%d: %d ranks share GPU %d, and forces launched "
                     "early would hold its SMs from another rank's exchange",
                     e->sched.pdl, sharing, e->dev.device);
        e->sched.pdl = 0;
    }
    return HX_OK;
}

/* The transport when none is named. With one rank nothing crosses a
 * boundary, so the one cheapest to create (host arrays: no device memory,
 * no NVSHMEM or NCCL start-up) is as fast as any. With several, the first
 * built transport that can be captured in a CUDA graph (nvshmem-fused): it
 * alone lets the whole step replay from one graph, which measured fastest
 * at every size (docs/md-gpu.md); where it cannot run, hxg_eng_make_transport falls
 * back to the one that measures the launched ones on the real plan. */
const char *hxg_eng_default_transport(const hx_md_engine *e)
{
    const char *host = NULL, *chooser = NULL;
    for (int i = 0; i < hx_transport_count(); i++) {
        const char *name = hx_transport_name_at(i);
        unsigned caps = hx_transport_caps_of(name);
        if (e->multi && (caps & HX_CAP_DEVICE) && (caps & HX_CAP_GRAPH))
            return name;
        if (!host && (caps & HX_CAP_HOST))
            host = name;
        if (!chooser && (caps & HX_CAP_CHOOSES))
            chooser = name;
    }
    return e->multi && chooser ? chooser : host;
}

/* The transport that measures the others, for the fall-back. */
static const char *choosing_transport(void)
{
    for (int i = 0; i < hx_transport_count(); i++)
        if (hx_transport_caps_of(hx_transport_name_at(i)) & HX_CAP_CHOOSES)
            return hx_transport_name_at(i);
    return NULL;
}

hx_status hxg_eng_make_transport(hx_md_engine *e)
{
    const char *want = e->cfg.transport;
    const char *name = want;
    if (!want[0] || strcmp(want, "default") == 0)
        name = hxg_eng_default_transport(e);
    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.name = name;
    o.dtype = HX_FLOAT;
    o.stream = (void *) e->dev.s_nl;
    o.graph = e->graphs.mgraph;
    o.gate = e->graphs.mgraph ? &e->dev.flags->halt : NULL; /* voted steps (vote.c) */
    hx_status st = hxi_agree(e->comm, hx_transport_create(&e->xport.t, e->comm, &o));
    const char *fallback = choosing_transport();
    if (st == HX_ERR_UNSUPPORTED && name != want && fallback &&
        !(hx_transport_caps_of(name) & HX_CAP_CHOOSES)) {
        /* The default could not run here (e.g. processes sharing a GPU
         * without MPS): `auto` takes the transports that can. */
        if (e->rank == 0)
            fprintf(stderr, "halox-md: %s cannot run here (%s); using %s\n", name, hx_last_error(),
                    fallback);
        e->graphs.mgraph = e->graphs.mg_ok = 0;
        o.name = fallback;
        o.graph = 0;
        o.gate = NULL;
        e->xport.t = NULL;
        st = hxi_agree(e->comm, hx_transport_create(&e->xport.t, e->comm, &o));
    }
    return st;
}

/* Where a home atom may have halo neighbours (hxg_build_nonlocal): within
 * rh of the domain's upper face along a dimension with pulses (every halo
 * atom came in through a pulse and lies at or above that face, up to the
 * rounding of its shift, which the margin covers many times over), and
 * with a full-shell halo (newton off) within rh of its lower face too.
 * HALOX_MD_CHECK=bad-reach moves that bound up by rh (and the lower one
 * down), wrongly, so that the tests see the list check catch it; the rows
 * of the compact non-local list (near_rows, near_rows_lo) keep the true
 * bounds. */
static void set_reach(hx_md_engine *e)
{
    const hx_decomp *d = &e->decomp;
    const double shift = hxi_knobs()->md_check == HXK_CHECK_BAD_REACH ? e->phys.rh : 0.0;
    int dims = 0;
    for (int k = 0; k < 3; k++) {
        double at = d->dom_hi[k] - e->phys.rh - 1e-4 * (fabs(d->dom_hi[k]) + e->phys.rh);
        double lo = d->dom_lo[k] + e->phys.rh + 1e-4 * (fabs(d->dom_lo[k]) + e->phys.rh);
        e->lists.near_rows[k] = d->npulse[k] > 0 ? (float) at : FLT_MAX;
        e->lists.near[k] = d->npulse[k] > 0 ? (float) (at + shift) : FLT_MAX;
        e->lists.near_rows_lo[k] = d->npulse[k] > 0 && e->full ? (float) lo : -FLT_MAX;
        e->lists.near_lo[k] = d->npulse[k] > 0 && e->full ? (float) (lo - shift) : -FLT_MAX;
        dims += d->npulse[k] > 0;
    }
    /* With pulses along one dimension every halo atom is off home along
     * it, and the zone rule gives no pair of two halo atoms to this rank:
     * the non-local build leaves their walk out. */
    e->lists.halo_pairs = dims > 1;
}

/* The box as the kernels see it (hxg_geom): images along the dimensions
 * with grid 1, and a triclinic box's tilts, normals and face heights. */
static void setup_geom(hxg_geom *g, const hx_decomp *d)
{
    memset(g, 0, sizeof *g);
    for (int k = 0; k < 3; k++) {
        const int periodic = d->grid[k] == 1;
        g->per_len[k] = periodic ? (float) d->box_len[k] : 0.0f;
        g->per_inv[k] = periodic ? (float) (1.0 / d->box_len[k]) : 0.0f;
        g->box_lo[k] = (float) d->box_lo[k];
        g->box_len[k] = (float) d->box_len[k];
        for (int c = 0; c < 3; c++)
            g->normal[k][c] = (float) d->normal[k][c];
        g->face_lo[k] = (float) (d->triclinic ? d->face_lo[k] : d->box_lo[k]);
        g->height[k] = (float) (d->triclinic ? d->height[k] : d->box_len[k]);
    }
    /* xy moves x with an image along y; xz and yz with one along z. */
    g->per_tilt[0] = d->grid[1] == 1 ? (float) d->tilt[0] : 0.0f;
    g->per_tilt[1] = d->grid[2] == 1 ? (float) d->tilt[1] : 0.0f;
    g->per_tilt[2] = d->grid[2] == 1 ? (float) d->tilt[2] : 0.0f;
    g->tri = d->triclinic;
}

/* The cell grid over this rank's domain (e->decomp's dom_lo, dom_hi). */
static void setup_cells(hx_md_engine *e)
{
    const hx_decomp *d = &e->decomp;
    const int split = HXG_CELLS_X;
    double ext[3];
    for (int k = 0; k < 3; k++) {
        int periodic = d->grid[k] == 1;
        /* Cells a little over (rc + skin) / 2 wide along y and z, and
         * split times narrower along x, over home atoms and, along a
         * decomposed dimension, the halo above them (up to the halo
         * cutoff), and below them too with a full-shell halo. The list build looks at 25 rows of
         * cells along x, each cut to the atom's reach: a third of the candidates that cells of
         * width rc + skin give, and narrower cells along x cut the rows closer to it without adding
         * rows (docs/md-gpu.md). */
        const double below = periodic || !e->full ? 0.0 : d->cutoff;
        const double len = d->triclinic ? d->height[k] : d->box_len[k];
        ext[k] = periodic ? len : d->dom_hi[k] - d->dom_lo[k] + d->cutoff + below;
        double w = 0.5 * e->phys.rh * (1.0 + 1e-5) / (k == 0 ? split : 1);
        int n = (int) floor(ext[k] / w);
        e->cells.grid.n[k] = n < 1 ? 1 : n;
        e->cells.grid.periodic[k] = periodic;
        const double lo = d->triclinic ? d->face_lo[k] : d->box_lo[k];
        e->cells.grid.lo[k] = (float) (periodic ? lo : d->dom_lo[k] - below);
    }
    /* Wider cells (still correct, a little slower) where the grid would
     * outgrow the cell scan. */
    while ((long long) e->cells.grid.n[0] * e->cells.grid.n[1] * e->cells.grid.n[2] >
           (long long) HXG_MAX_SCAN_BLOCKS * 4096) {
        int k = e->cells.grid.n[1] > e->cells.grid.n[0] ? 1 : 0;
        k = e->cells.grid.n[2] > e->cells.grid.n[k] ? 2 : k;
        e->cells.grid.n[k] = e->cells.grid.n[k] * 3 / 4;
    }
    for (int k = 0; k < 3; k++)
        e->cells.grid.inv_w[k] = (float) (e->cells.grid.n[k] / ext[k]);
    e->cells.grid.ncell = e->cells.grid.n[0] * e->cells.grid.n[1] * e->cells.grid.n[2];
}

static void setup_physics(hx_md_engine *e)
{
    const hx_md_config *c = &e->cfg;
    const hx_decomp *d = &e->decomp;
    double coef[HX_PAIR_NCOEF], eoff;
    hxi_pair_setup(c->pair_style, c->pair, c->rc, c->shift_energy, coef, &eoff);
    e->phys.lj.rc2 = (float) (c->rc * c->rc);
    e->phys.lj.rh2 = (float) (e->phys.rh * e->phys.rh);
    e->phys.lj.style = c->pair_style;
    for (int k = 0; k < HX_PAIR_NCOEF; k++)
        e->phys.lj.c[k] = (float) coef[k];
    e->phys.lj.eoff = (float) eoff;
    e->phys.dt = (float) c->dt;
    e->phys.mass = (float) c->mass;
    e->phys.dtf = (float) (0.5 * c->dt / c->mass);
    e->phys.trig2 = (float) (0.25 * c->skin * c->skin);
    /* Cells along x per rh / 2. */
    const int split = HXG_CELLS_X;
    e->cells.grid.reach_x = 2 * split;
    /* Ring slots of the list build a lane may fill ahead (HALOX_MD_RING,
     * 1 to HXG_RING, tests: fewer rows fit, more hits go to the list
     * directly). */
    const int ring = hxi_knobs()->md_ring;
    e->lists.loc.ring = ring < HXG_RING ? ring : HXG_RING;
    setup_geom(&e->phys.geom, d);
    setup_cells(e);
}

/* The arrays of the cell grid's cells, grown to it: counts (zero, as the
 * cell sort expects them and leaves them), starts, and the halo's starts
 * where the device rebuilds. A grown array's old one is freed (cudaFree
 * waits for the device). */
static hx_status cell_arrays(hx_md_engine *e)
{
    const size_t nc = (size_t) e->cells.grid.ncell;
    const size_t had = e->cells.cnt ? e->cells.b_cnt : 0;
    HXI_CHECK(
        hxg_eng_dev_grow(&e->cells.cnt, &e->cells.b_cnt, sizeof(int32_t) * nc, "cell counts"));
    if (e->cells.b_cnt != had) { /* before any stream's kernel reads it */
        CU(cudaMemset(e->cells.cnt, 0, e->cells.b_cnt), "cell count set-up");
        CU(cudaDeviceSynchronize(), "cell count set-up");
    }
    HXI_CHECK(hxg_eng_dev_grow(&e->cells.start, &e->cells.b_start, sizeof(int32_t) * (nc + 1),
                               "cell starts"));
    if (e->multi && !e->host_rebuild)
        HXI_CHECK(hxg_eng_dev_grow(&e->cells.halo_start, &e->cells.b_halo_start,
                                   sizeof(int32_t) * (nc + 1), "halo cell starts"));
    return HX_OK;
}

hx_status hxg_eng_domain_changed(hx_md_engine *e)
{
    const int had = e->cells.grid.ncell;
    setup_cells(e);
    set_reach(e);
    /* The host path's cell sort keeps its cell starts behind its atoms'
     * room: more cells, a new scratch at the next sort. */
    if (e->cells.grid.ncell > had)
        e->host.hsort_cap = 0;
    return cell_arrays(e);
}

/* The home-sized arrays for cap atoms; contents are not kept. with_xvid:
 * positions, velocities and ids too (the device migration grows those
 * itself, keeping them). */
static hx_status home_arrays(hx_md_engine *e, int cap, int with_xvid)
{
    size_t h = (size_t) cap;
    if (with_xvid) {
        HXI_CHECK(hxg_eng_dev_grow(&e->atoms.x4, &e->atoms.b_x4, 16 * h, "positions"));
        HXI_CHECK(hxg_eng_dev_grow(&e->atoms.v4, &e->atoms.b_v4, 16 * h, "velocities"));
        HXI_CHECK(hxg_eng_dev_grow(&e->atoms.id, &e->atoms.b_id, 8 * h, "atom ids"));
    }
    HXI_CHECK(hxg_eng_dev_grow(&e->atoms.f4, &e->atoms.b_f4, 16 * h, "forces"));
    HXI_CHECK(hxg_eng_dev_grow(&e->atoms.xold4, &e->atoms.b_xold4, 16 * h,
                               "positions at the last build"));
    /* Scratch of the device cell sort (every path but the host one). */
    if (!e->host_rebuild) {
        HXI_CHECK(hxg_eng_dev_grow(&e->atoms.sx4, &e->atoms.b_sx4, 16 * h, "sort scratch"));
        HXI_CHECK(hxg_eng_dev_grow(&e->atoms.sv4, &e->atoms.b_sv4, 16 * h, "sort scratch"));
        HXI_CHECK(hxg_eng_dev_grow(&e->atoms.sid, &e->atoms.b_sid, 8 * h, "sort scratch"));
    }
    e->lists.loc.stride = cap;
    HXI_CHECK(hxg_eng_dev_grow(&e->lists.loc.cnt, &e->lists.b_loccnt, 4 * h, "neighbour counts"));
    HXI_CHECK(hxg_eng_dev_grow(&e->lists.loc.nb, &e->lists.b_locnb,
                               4 * h * (size_t) e->lists.loc.max, "the local neighbour list"));
    e->atoms.cap_home = cap;
    return HX_OK;
}

hx_status hxg_eng_home_grown(hx_md_engine *e, int cap)
{
    e->atoms.b_x4 = e->atoms.b_v4 = 16 * (size_t) cap;
    e->atoms.b_id = 8 * (size_t) cap;
    return home_arrays(e, cap, 0);
}

/* Makes room for nhome home and ntotal local atoms. Contents are not kept:
 * this runs in a rebuild, which rewrites what it needs after. */
hx_status hxg_eng_ensure_capacity(hx_md_engine *e, int nhome, int ntotal)
{
    if (nhome > e->atoms.cap_home || !e->atoms.x4)
        HXI_CHECK(home_arrays(e, hxg_eng_cap_for(e, nhome), 1));
    if (ntotal > e->atoms.cap_total || e->atoms.cap_total < e->atoms.cap_home || !e->cells.cellof) {
        e->atoms.cap_total =
            hxg_eng_cap_for(e, ntotal > e->atoms.cap_home ? ntotal : e->atoms.cap_home);
        size_t t = (size_t) e->atoms.cap_total;
        HXI_CHECK(hxg_eng_dev_grow(&e->cells.cellof, &e->cells.b_cellof, 4 * t, "cell indices"));
        HXI_CHECK(hxg_eng_dev_grow(&e->cells.atoms, &e->cells.b_atoms, 4 * t, "cell lists"));
        /* One rank's atoms are themselves in cell order (device sort). */
        if (e->multi || e->host_rebuild)
            HXI_CHECK(hxg_eng_dev_grow(&e->cells.xsort, &e->cells.b_xsort, 16 * t,
                                       "positions in cell order"));
        if (e->multi && !e->host_rebuild) {
            HXI_CHECK(
                hxg_eng_dev_grow(&e->lists.nl_idx, &e->lists.b_nlidx, 4 * t, "non-local atoms"));
            HXI_CHECK(hxg_eng_dev_grow(&e->lists.nl_pos, &e->lists.b_nlpos, 4 * (t + 1),
                                       "non-local atoms"));
        }
        if (e->multi && e->phys.ty.n > 1) /* the transport's field of types (types.c) */
            HXI_CHECK(hxg_eng_dev_grow(&e->atoms.type, &e->atoms.b_type, 4 * t, "atom types"));
        if (e->multi) {
            HXI_CHECK(hxg_eng_dev_grow(&e->atoms.zones, &e->atoms.b_zones, 4 * t, "zones"));
            HXI_CHECK(
                hxg_eng_dev_grow(&e->lists.nl.cnt, &e->lists.b_nlcnt, 4 * t, "neighbour counts"));
            if (e->host_rebuild) { /* one pass: a row for every local atom */
                e->lists.nl.stride = e->atoms.cap_total;
                HXI_CHECK(hxg_eng_dev_grow(&e->lists.nl.nb, &e->lists.b_nlnb,
                                           4 * t * (size_t) e->lists.nl.max,
                                           "the non-local neighbour list"));
            } else { /* compact: its rows are sized at each build (rebuild.c) */
                HXI_CHECK(hxg_eng_dev_grow(&e->lists.nl.row, &e->lists.b_nlrow, 4 * t,
                                           "the non-local list's rows"));
                HXI_CHECK(hxg_eng_dev_grow(&e->lists.nl_atom, &e->lists.b_nlatom, 4 * t,
                                           "the non-local list's rows"));
            }
        }
    }
    return HX_OK;
}

/* Rank-local part of create: device, streams, events, physics, memory. */
hx_status hxg_eng_create_local(hx_md_engine *e)
{
    const hx_md_config *cfg = &e->cfg;
    if (!(cfg->rc > 0) || !(cfg->skin >= 0) || !(cfg->dt > 0) || !(cfg->mass > 0))
        return hxi_error(HX_ERR_INVALID,
                         "GPU engine: rc, dt and mass must be positive and skin not negative (rc "
                         "%g skin %g dt %g mass %g)",
                         cfg->rc, cfg->skin, cfg->dt, cfg->mass);
    HXI_CHECK(hxi_pair_valid(cfg->pair_style, cfg->pair, cfg->rc, HX_ERR_INVALID, "GPU engine: "));
    if (e->decomp.nranks != e->nranks)
        return hxi_error(HX_ERR_GRID,
                         "GPU engine: the system's decomposition has %d domains but the "
                         "communicator %d ranks; set sys->decomp for this communicator",
                         e->decomp.nranks, e->nranks);
    if (e->decomp.cutoff < e->phys.rh * (1.0 - 1e-12))
        return hxi_error(HX_ERR_CUTOFF,
                         "GPU engine: the decomposition's halo cutoff %g is below rc + skin = "
                         "%g; initialise sys->decomp with cutoff rc + skin",
                         e->decomp.cutoff, e->phys.rh);
    HXI_CHECK(choose_device(&e->dev));
    read_rules(e);
    int least = 0, greatest = 0;
    CU(cudaDeviceGetStreamPriorityRange(&least, &greatest), "stream priorities");
    CU(cudaStreamCreateWithPriority(&e->dev.s_loc, cudaStreamNonBlocking, least), "stream");
    CU(cudaStreamCreateWithPriority(&e->dev.s_nl, cudaStreamNonBlocking, greatest), "stream");
    CU(cudaStreamCreateWithPriority(&e->dev.s_b, cudaStreamNonBlocking, greatest), "stream");
    CU(cudaEventCreateWithFlags(&e->dev.ev_kd, cudaEventDisableTiming), "event");
    CU(cudaEventCreateWithFlags(&e->dev.ev_rev, cudaEventDisableTiming), "event");
    CU(cudaEventCreateWithFlags(&e->dev.ev_acc, cudaEventDisableTiming), "event");
    CU(cudaEventCreateWithFlags(&e->graphs.ev_gfork, cudaEventDisableTiming), "event");
    CU(cudaEventCreateWithFlags(&e->graphs.ev_gjoin, cudaEventDisableTiming), "event");
    CU(cudaEventCreateWithFlags(&e->lists.ev_list, cudaEventDisableTiming), "event");
    CU(cudaEventCreateWithFlags(&e->lists.ev_nlq, cudaEventDisableTiming), "event");
    setup_physics(e);
    HXI_CHECK(hxg_eng_types_setup(e));
    double vol = e->decomp.box_len[0] * e->decomp.box_len[1] * e->decomp.box_len[2];
    int m = neigh_max_for(e, (double) e->sys->natoms / vol);
    e->lists.loc.max = m;
    e->lists.nl.max = m;
    HXI_CHECK(check_fit(e, e->sys->n));
    HXI_CHECK(hxg_eng_dev_grow(&e->dev.flags, &(size_t){0}, sizeof(hxg_flags), "flags"));
    HXI_CHECK(
        hxg_eng_dev_grow(&e->dev.acc, &(size_t){0}, HXG_NACC * sizeof(double), "thermo sums"));
    HXI_CHECK(cell_arrays(e));
    HXI_CHECK(hxg_eng_dev_grow(&e->cells.scan_tmp, &(size_t){0},
                               sizeof(int32_t) * 2 * HXG_MAX_SCAN_BLOCKS, "scan scratch"));
    /* The cell scan expects its scratch all zeros, and leaves it so. */
    CU(cudaMemset(e->cells.scan_tmp, 0, sizeof(int32_t) * 2 * HXG_MAX_SCAN_BLOCKS), "scan set-up");
    set_reach(e);
    CU(cudaHostAlloc((void **) &e->dev.report, sizeof(hxg_report), cudaHostAllocMapped),
       "mapped host allocation");
    CU(cudaHostGetDevicePointer((void **) &e->dev.report_dev, e->dev.report, 0), "mapped pointer");
    memset((void *) e->dev.report, 0, sizeof(hxg_report));
    hxg_flags fl;
    memset(&fl, 0, sizeof fl);
    fl.moved_step = -1;
    fl.cur = 1;
    CU(cudaMemcpy(e->dev.flags, &fl, sizeof fl, cudaMemcpyHostToDevice), "flag set-up");
    e->graphs.on = !e->multi && !e->host_rebuild && e->graphs.allowed;
    HXI_CHECK(hxg_eng_timers_create(&e->timers, e->graphs.on || e->graphs.mgraph));
    HXI_CHECK(hxg_eng_stretch_create(&e->timers.stretch));
    return HX_OK;
}
