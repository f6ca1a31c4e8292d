/*
 * lattice.c - the fcc lattice of LAMMPS's `lattice fcc RHO` with
 * `region block 0 NX 0 NY 0 NZ` and `create_atoms 1 box`.
 *
 * Lattice constant a = (4 / rho)^(1/3) (four atoms per cubic cell), origin
 * 0, basis (0,0,0), (1/2,1/2,0), (1/2,0,1/2), (0,1/2,1/2). Global ids follow
 * LAMMPS's create_atoms loop on one process: cell k (z) outermost, then j
 * (y), then i (x), then the basis atom m innermost, so
 *   id = ((k * NY + j) * NX + i) * 4 + m      (0-based; LAMMPS's tag is id + 1).
 * Each rank keeps the atoms its domain owns (hx_decomp_owner) and loops only
 * over the cells that can touch its domain.
 *
 * `create_atoms T region ID` of part of the box (cfg->types.nfills > 0,
 * orthorhombic box) keeps the sites inside each command's region (a
 * block or a prism: hxi_in_region), ids in the same loop order command
 * after command (hxi_fill_tab below).
 *
 * A triclinic box (cfg->tilt not zero: LAMMPS's `region ID prism`) is
 * filled as LAMMPS's CreateAtoms::loop_lattice does on one process: cells
 * k, j, i and basis atoms m over a range of cells that covers the box, a
 * site kept when its lamda coordinates (Domain::x2lamda) lie in
 * [-1e-6, 1 - 2e-6) along every dimension (LAMMPS's EPSILON, which keeps
 * one of two periodic images on the faces). Ids count the kept sites in
 * that order. With create_atoms T region ID (nfills > 0) a site is also
 * inside the command's region (LAMMPS's region->match on the Cartesian
 * point, before the box test), command after command. A table of the
 * kept sites per row (command, cells k, j) finds the site of an id
 * without the whole loop (hx_md_site_at).
 */
#include "md/md.h"

#include "core/hxi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static const double hxi_fcc_basis[4][3] = {
    {0.0, 0.0, 0.0}, {0.5, 0.5, 0.0}, {0.5, 0.0, 0.5}, {0.0, 0.5, 0.5}};

double hx_md_lattice_constant(const hx_md_config *cfg)
{
    return pow(4.0 / cfg->density, 1.0 / 3.0);
}

/* LAMMPS's create_atoms in a triclinic box: the box matrix h and its
 * inverse (Domain::set_global_box's h, h_inv), the loop's cell range, and
 * the kept sites before each row: command f (one of the whole box where
 * the deck filled it whole), cells k, j. */
typedef struct hxi_tri {
    double a, h[6], hinv[6];
    int lo[3], hi[3];
    int nrows;       /* rows of one command: cells (k, j) of the range */
    int nfills;      /* commands: 1 for the whole box */
    int64_t *before; /* nfills * nrows + 1 */
    hx_md_fill fills[HX_MD_MAX_FILLS];
    /* what the table was made for */
    double density, tilt[3];
    int cells[3], cfg_nfills;
} hxi_tri;

static hxi_tri hxi_tri_table;

static const double hxi_tri_eps = 1e-6; /* CreateAtoms' EPSILON */

/* 1 when f's prism holds x (RegPrism::inside, with its h and h_inv; a
 * bound INF is LAMMPS's BIG, 1e20). */
static int hxi_in_prism(const hx_md_fill *f, const double x[3])
{
    double lo[3], h[3], p[3];
    for (int d = 0; d < 3; d++) {
        lo[d] = isinf(f->lo[d]) ? -1e20 : f->lo[d];
        h[d] = (isinf(f->hi[d]) ? 1e20 : f->hi[d]) - lo[d];
        p[d] = x[d] - lo[d];
    }
    const double xy = f->tilt[0], xz = f->tilt[1], yz = f->tilt[2];
    const double i00 = 1.0 / h[0], i01 = -xy / (h[0] * h[1]),
                 i02 = (xy * yz - xz * h[1]) / (h[0] * h[1] * h[2]);
    const double i11 = 1.0 / h[1], i12 = -yz / (h[1] * h[2]), i22 = 1.0 / h[2];
    const double a = i00 * p[0] + i01 * p[1] + i02 * p[2];
    const double b = i11 * p[1] + i12 * p[2];
    const double c = i22 * p[2];
    return a >= 0.0 && a <= 1.0 && b >= 0.0 && b <= 1.0 && c >= 0.0 && c <= 1.0;
}

/* 1 when f's region holds x: a block's bounds, upper planes included
 * (RegBlock::inside), or a prism. */
static int hxi_in_region(const hx_md_fill *f, const double x[3])
{
    if (f->prism)
        return hxi_in_prism(f, x);
    for (int d = 0; d < 3; d++)
        if (!(x[d] >= f->lo[d] && x[d] <= f->hi[d]))
            return 0;
    return 1;
}

/* Site (i, j, k, m) into x; 1 when LAMMPS's one process keeps it for
 * command f: inside f's region (region->match), then inside the box. */
static int hxi_tri_site(const hxi_tri *t, const hx_md_fill *f, int i, int j, int k, int m,
                        double x[3])
{
    double l[3];
    x[0] = ((double) i + hxi_fcc_basis[m][0]) * t->a;
    x[1] = ((double) j + hxi_fcc_basis[m][1]) * t->a;
    x[2] = ((double) k + hxi_fcc_basis[m][2]) * t->a;
    if (!hxi_in_region(f, x))
        return 0;
    /* Domain::x2lamda with boxlo 0 */
    l[0] = t->hinv[0] * x[0] + t->hinv[5] * x[1] + t->hinv[4] * x[2];
    l[1] = t->hinv[1] * x[1] + t->hinv[3] * x[2];
    l[2] = t->hinv[2] * x[2];
    for (int d = 0; d < 3; d++)
        if (l[d] < -hxi_tri_eps || l[d] >= 1.0 - 2.0 * hxi_tri_eps)
            return 0;
    return 1;
}

static int hxi_tri_matches(const hxi_tri *t, const hx_md_config *c)
{
    return t->before && t->density == c->density && !memcmp(t->cells, c->cells, sizeof t->cells) &&
           !memcmp(t->tilt, c->tilt, sizeof t->tilt) && t->cfg_nfills == c->types.nfills &&
           !memcmp(t->fills, c->types.fills, sizeof(hx_md_fill) * (size_t) c->types.nfills);
}

/* The kept sites of row r (command r / nrows, cells k, j of r % nrows)
 * one by one: i and m from *i, *m on; 0 past the row's end. */
static int hxi_tri_row_next(const hxi_tri *t, int r, int *i, int *m, double x[3])
{
    const int nj = t->hi[1] - t->lo[1] + 1, rr = r % t->nrows;
    const hx_md_fill *f = &t->fills[r / t->nrows];
    for (; *i <= t->hi[0]; (*i)++, *m = 0)
        for (; *m < 4; (*m)++)
            if (hxi_tri_site(t, f, *i, t->lo[1] + rr % nj, t->lo[2] + rr / nj, *m, x)) {
                (*m)++;
                return 1;
            }
    return 0;
}

/* The box matrix, the loop range (the box's bounding box in cells, one
 * more each side) and the rows' table for c. */
static hx_status hxi_tri_build(hxi_tri *t, const hx_md_config *c)
{
    const double a = hx_md_lattice_constant(c);
    double lx = c->cells[0] * a, ly = c->cells[1] * a, lz = c->cells[2] * a;
    double xy = c->tilt[0], xz = c->tilt[1], yz = c->tilt[2];
    double xmin = fmin(fmin(0.0, xy), fmin(xz, xy + xz)),
           xmax = fmax(fmax(0.0, xy), fmax(xz, xy + xz));
    int nj, nk;
    free(t->before);
    memset(t, 0, sizeof *t);
    t->a = a;
    t->h[0] = lx, t->h[1] = ly, t->h[2] = lz, t->h[3] = yz, t->h[4] = xz, t->h[5] = xy;
    t->hinv[0] = 1.0 / lx;
    t->hinv[1] = 1.0 / ly;
    t->hinv[2] = 1.0 / lz;
    t->hinv[3] = -yz / (ly * lz);
    t->hinv[4] = (yz * xy - ly * xz) / (lx * ly * lz);
    t->hinv[5] = -xy / (lx * ly);
    t->lo[0] = (int) floor(xmin / a) - 1, t->hi[0] = (int) ceil((lx + xmax) / a) + 1;
    t->lo[1] = (int) floor(fmin(0.0, yz) / a) - 1,
    t->hi[1] = (int) ceil((ly + fmax(0.0, yz)) / a) + 1;
    t->lo[2] = -1, t->hi[2] = c->cells[2] + 1;
    nj = t->hi[1] - t->lo[1] + 1;
    nk = t->hi[2] - t->lo[2] + 1;
    t->nrows = nj * nk;
    t->nfills = c->types.nfills > 0 ? c->types.nfills : 1;
    if (c->types.nfills > 0)
        memcpy(t->fills, c->types.fills, sizeof(hx_md_fill) * (size_t) c->types.nfills);
    else
        t->fills[0] = (hx_md_fill){.type = c->types.create_type,
                                   .lo = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL},
                                   .hi = {HUGE_VAL, HUGE_VAL, HUGE_VAL}};
    HXI_CHECK(hxi_alloc((void **) &t->before,
                        sizeof(int64_t) * ((size_t) t->nfills * (size_t) t->nrows + 1),
                        "triclinic lattice rows"));
    t->before[0] = 0;
    for (int r = 0; r < t->nfills * t->nrows; r++) {
        int64_t n = 0;
        int i = t->lo[0], m = 0;
        double x[3];
        while (hxi_tri_row_next(t, r, &i, &m, x))
            n++;
        t->before[r + 1] = t->before[r] + n;
    }
    t->density = c->density;
    memcpy(t->cells, c->cells, sizeof t->cells);
    memcpy(t->tilt, c->tilt, sizeof t->tilt);
    t->cfg_nfills = c->types.nfills;
    return HX_OK;
}

/* The table for c, made where it is not (once, before threads read it). */
static const hxi_tri *hxi_tri_get(const hx_md_config *c)
{
    hxi_tri *t = &hxi_tri_table;
    int ok = 1;
#ifdef _OPENMP
#pragma omp critical(hxi_md_tri_table)
#endif
    if (!hxi_tri_matches(t, c))
        ok = hxi_tri_build(t, c) == HX_OK;
    return ok ? t : NULL;
}

static int hxi_tri_on(const hx_md_config *c)
{
    return c->tilt[0] != 0.0 || c->tilt[1] != 0.0 || c->tilt[2] != 0.0;
}

/* The row of id in a table of the sites before each of nrows rows: the
 * last row r with before[r] <= id, by bisection. */
static int hxi_row_of(const int64_t *before, int nrows, int64_t id)
{
    int lo = 0, hi = nrows - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (before[mid] <= id)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static int hxi_tri_row(const hxi_tri *t, int64_t id)
{
    return hxi_row_of(t->before, t->nfills * t->nrows, id);
}

/* The site of id in the triclinic loop: its row by bisection, then the
 * row's kept sites in order. */
static void hxi_tri_site_of(const hxi_tri *t, int64_t id, double x[3])
{
    const int r = hxi_tri_row(t, id);
    int64_t left = id - t->before[r];
    int i = t->lo[0], m = 0;
    while (hxi_tri_row_next(t, r, &i, &m, x))
        if (left-- == 0)
            return;
    x[0] = x[1] = x[2] = NAN;
}

/* create_atoms T region ID (cfg->types.nfills > 0, orthorhombic box):
 * each command's sites of the box inside its block, in LAMMPS's loop
 * order (k, j, i, m), one command after the other, as CreateAtoms'
 * add_lattice appends them and tags them on one process. A table of the
 * sites before each row (command f, cells k, j) finds an id's site. */
typedef struct hxi_fill_tab {
    double a;
    int nrows;       /* rows of one command: cells[1] * cells[2] */
    int64_t *before; /* nfills * nrows + 1 */
    /* what the table was made for */
    double density;
    int cells[3], nfills;
    hx_md_fill fills[HX_MD_MAX_FILLS];
} hxi_fill_tab;

static hxi_fill_tab hxi_fill_table;

static int hxi_fill_on(const hx_md_config *c)
{
    return c->types.nfills > 0;
}

/* Site (i, j, k, m) into x; 1 when f's block holds it (RegBlock::inside). */
static int hxi_fill_site(const hx_md_fill *f, double a, int i, int j, int k, int m, double x[3])
{
    const int cell[3] = {i, j, k};
    for (int d = 0; d < 3; d++)
        x[d] = 0.0 + ((double) cell[d] + hxi_fcc_basis[m][d]) * a;
    return hxi_in_region(f, x);
}

static int hxi_fill_matches(const hxi_fill_tab *t, const hx_md_config *c)
{
    return t->before && t->density == c->density && !memcmp(t->cells, c->cells, sizeof t->cells) &&
           t->nfills == c->types.nfills &&
           !memcmp(t->fills, c->types.fills, sizeof(hx_md_fill) * (size_t) t->nfills);
}

static hx_status hxi_fill_build(hxi_fill_tab *t, const hx_md_config *c)
{
    const int nf = c->types.nfills;
    free(t->before);
    memset(t, 0, sizeof *t);
    t->a = hx_md_lattice_constant(c);
    t->nrows = c->cells[1] * c->cells[2];
    HXI_CHECK(hxi_alloc((void **) &t->before, sizeof(int64_t) * ((size_t) nf * t->nrows + 1),
                        "create_atoms rows"));
    t->before[0] = 0;
    for (int r = 0; r < nf * t->nrows; r++) {
        const hx_md_fill *f = &c->types.fills[r / t->nrows];
        const int j = (r % t->nrows) % c->cells[1], k = (r % t->nrows) / c->cells[1];
        int64_t n = 0;
        double x[3];
        for (int i = 0; i < c->cells[0]; i++)
            for (int m = 0; m < 4; m++)
                n += hxi_fill_site(f, t->a, i, j, k, m, x);
        t->before[r + 1] = t->before[r] + n;
    }
    t->density = c->density;
    memcpy(t->cells, c->cells, sizeof t->cells);
    t->nfills = nf;
    memcpy(t->fills, c->types.fills, sizeof(hx_md_fill) * (size_t) nf);
    return HX_OK;
}

/* The table for c, made where it is not (once, before threads read it). */
static const hxi_fill_tab *hxi_fill_get(const hx_md_config *c)
{
    hxi_fill_tab *t = &hxi_fill_table;
    int ok = 1;
#ifdef _OPENMP
#pragma omp critical(hxi_md_fill_table)
#endif
    if (!hxi_fill_matches(t, c))
        ok = hxi_fill_build(t, c) == HX_OK;
    return ok ? t : NULL;
}

static int hxi_fill_row(const hxi_fill_tab *t, int64_t id)
{
    return hxi_row_of(t->before, t->nfills * t->nrows, id);
}

static void hxi_fill_site_of(const hxi_fill_tab *t, const hx_md_config *c, int64_t id, double x[3])
{
    const int r = hxi_fill_row(t, id), rr = r % t->nrows;
    const hx_md_fill *f = &c->types.fills[r / t->nrows];
    int64_t left = id - t->before[r];
    for (int i = 0; i < c->cells[0]; i++)
        for (int m = 0; m < 4; m++)
            if (hxi_fill_site(f, t->a, i, rr % c->cells[1], rr / c->cells[1], m, x) && left-- == 0)
                return;
    x[0] = x[1] = x[2] = NAN;
}

int hxi_md_type_of(const hx_md_config *c, int64_t id, const double x[3])
{
    int type = c->types.create_type;
    if (hxi_fill_on(c) && hxi_tri_on(c)) {
        const hxi_tri *t = hxi_tri_get(c);
        if (t)
            type = t->fills[hxi_tri_row(t, id) / t->nrows].type;
    } else if (hxi_fill_on(c)) {
        const hxi_fill_tab *t = hxi_fill_get(c);
        if (t)
            type = c->types.fills[hxi_fill_row(t, id) / t->nrows].type;
    }
    return hxi_md_type_sets(c, type, x);
}

hx_status hxi_md_types_assign(hx_md_system *sys, const hx_md_config *c)
{
    free(sys->type);
    sys->type = NULL;
    if (c->types.ntypes <= 1)
        return HX_OK;
    HXI_CHECK(hxi_alloc((void **) &sys->type,
                        sizeof(int32_t) * (size_t) (sys->capacity > 0 ? sys->capacity : 1),
                        "atom types"));
    /* the table before the threads read it */
    if (hxi_fill_on(c) && (hxi_tri_on(c) ? !hxi_tri_get(c) : !hxi_fill_get(c)))
        return hxi_error(HX_ERR_NOMEM, "no memory for the create_atoms rows");
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int i = 0; i < sys->n; i++)
        sys->type[i] = hxi_md_type_of(c, sys->id[i], sys->x + 3 * (size_t) i);
    return HX_OK;
}

hx_status hx_md_box(const hx_md_config *cfg, double box_lo[3], double box_len[3])
{
    double a;
    if (!(cfg->density > 0) || !isfinite(cfg->density))
        return hxi_error(HX_ERR_INVALID,
                         "lattice density %g is impossible: `lattice fcc RHO` needs a positive "
                         "finite reduced density (0.8442 in the LJ benchmark)",
                         cfg->density);
    a = hx_md_lattice_constant(cfg);
    if (!(a > 0) || !isfinite(a))
        return hxi_error(HX_ERR_INVALID,
                         "lattice density %g gives lattice constant %g: choose a density "
                         "between 1e-300 and 1e300",
                         cfg->density, a);
    for (int k = 0; k < 3; k++) {
        if (cfg->cells[k] < 1)
            return hxi_error(HX_ERR_INVALID,
                             "region has %d lattice cells along %c: `region ID block 0 NX 0 "
                             "NY 0 NZ` needs at least one cell along every dimension",
                             cfg->cells[k], "xyz"[k]);
        box_lo[k] = 0.0;
        box_len[k] = cfg->cells[k] * a;
    }
    return HX_OK;
}

void hx_md_site(const hx_md_config *cfg, int64_t id, double x[3])
{
    hx_md_site_at(cfg, hx_md_lattice_constant(cfg), id, x);
}

void hx_md_site_at(const hx_md_config *cfg, double a, int64_t id, double x[3])
{
    const double lo = 0.0;
    if (hxi_tri_on(cfg)) {
        const hxi_tri *t = hxi_tri_get(cfg);
        if (t)
            hxi_tri_site_of(t, id, x);
        else
            x[0] = x[1] = x[2] = NAN;
        return;
    }
    if (hxi_fill_on(cfg)) {
        const hxi_fill_tab *t = hxi_fill_get(cfg);
        if (t)
            hxi_fill_site_of(t, cfg, id, x);
        else
            x[0] = x[1] = x[2] = NAN;
        return;
    }
    int m = (int) (id % 4);
    int64_t c = id / 4;
    int64_t cell[3];
    cell[0] = c % cfg->cells[0];
    cell[1] = (c / cfg->cells[0]) % cfg->cells[1];
    cell[2] = c / ((int64_t) cfg->cells[0] * cfg->cells[1]);
    /* The expression of hx_md_lattice, so that the result is its bits. */
    for (int k = 0; k < 3; k++)
        x[k] = lo + ((double) (int) cell[k] + hxi_fcc_basis[m][k]) * a;
}

/* Cells whose atoms may fall in [lo, hi) along one dimension: the range is
 * widened by one cell on each side so that rounding never drops a plane;
 * hx_decomp_owner makes the final choice. */
static void hxi_cell_range(double lo, double hi, double a, int n, int *c0, int *c1)
{
    double f0 = floor(lo / a) - 1, f1 = floor(hi / a) + 1;
    *c0 = f0 < 0 ? 0 : (int) f0;
    *c1 = f1 > n - 1 ? n - 1 : (int) f1;
}

/* The new atoms (positions x, ids, room for cap; v zeroed here) replace
 * sys's, with their types. */
static hx_status hxi_lattice_install(hx_md_system *sys, const hx_md_config *cfg, double *x,
                                     double *v, int64_t *id, int n, int cap, int64_t natoms)
{
    memset(v, 0, (size_t) cap * 3 * sizeof(double));
    free(sys->x);
    free(sys->v);
    free(sys->id);
    sys->x = x;
    sys->v = v;
    sys->id = id;
    sys->n = n;
    sys->capacity = cap;
    sys->natoms = natoms;
    return hxi_md_types_assign(sys, cfg);
}

/* One site into this rank's arrays (grown as needed). */
static hx_status hxi_keep(double **x, int64_t **ids, int *n, int *cap, const double p[3],
                          int64_t id)
{
    if (*n == *cap) {
        *cap += *cap / 2 + 64;
        HXI_CHECK(hxi_grow((void **) x, (size_t) *cap * 3 * sizeof(double), "lattice coordinates"));
        HXI_CHECK(hxi_grow((void **) ids, (size_t) *cap * sizeof(int64_t), "lattice ids"));
    }
    memcpy(*x + 3 * (size_t) *n, p, 3 * sizeof(double));
    (*ids)[(*n)++] = id;
    return HX_OK;
}

/* This rank's atoms of a triclinic box: every row of the loop in order
 * (each create_atoms command's in turn), the sites its domain owns kept
 * (the loop's sites on the lower faces may lie a rounding outside;
 * hx_decomp_owner clamps them and the engine's first migration wraps
 * them, as LAMMPS's first pbc()). */
static hx_status hxi_md_lattice_tri(hx_md_system *sys, const hx_md_config *cfg)
{
    const hx_decomp *d = &sys->decomp;
    const hxi_tri *t = hxi_tri_get(cfg);
    const int64_t want = 4 * (int64_t) cfg->cells[0] * cfg->cells[1] * cfg->cells[2];
    int64_t id = 0, natoms;
    int n = 0, cap;
    double *x = NULL, *v = NULL;
    int64_t *ids = NULL;
    hx_status st;
    if (!t)
        return hxi_error(HX_ERR_NOMEM, "no memory for the triclinic lattice's rows");
    natoms = t->before[t->nfills * t->nrows];
    if (natoms != want && !hxi_fill_on(cfg))
        return hxi_error(HX_ERR_INVALID,
                         "the triclinic box (tilts %g %g %g) holds %lld lattice sites, not the "
                         "%lld of its %dx%dx%d cells: the tilts must make the box's edges "
                         "lattice vectors (xy whole lattice cells, xz and yz half cells with a "
                         "whole sum)",
                         cfg->tilt[0], cfg->tilt[1], cfg->tilt[2], (long long) natoms,
                         (long long) want, cfg->cells[0], cfg->cells[1], cfg->cells[2]);
    if (natoms < 1)
        return hxi_error(HX_ERR_INVALID,
                         "create_atoms: its regions hold no lattice site of the box (LAMMPS "
                         "creates 0 atoms): widen the region");
    cap = (int) ((natoms / d->nranks < (1 << 24) ? natoms / d->nranks : (1 << 24)) + 64);
    st = hxi_alloc((void **) &x, (size_t) cap * 3 * sizeof(double), "lattice coordinates");
    if (st == HX_OK)
        st = hxi_alloc((void **) &ids, (size_t) cap * sizeof(int64_t), "lattice ids");
    for (int r = 0; st == HX_OK && r < t->nfills * t->nrows; r++) {
        int i = t->lo[0], m = 0;
        double p[3];
        while (st == HX_OK && hxi_tri_row_next(t, r, &i, &m, p)) {
            if (d->nranks == 1 || hx_decomp_owner(d, p) == d->rank)
                st = hxi_keep(&x, &ids, &n, &cap, p, id);
            id++;
        }
    }
    if (st == HX_OK)
        st = hxi_alloc((void **) &v, (size_t) cap * 3 * sizeof(double), "lattice velocities");
    if (st != HX_OK) {
        free(x);
        free(ids);
        return st;
    }
    return hxi_lattice_install(sys, cfg, x, v, ids, n, cap, natoms);
}

/* This rank's atoms of create_atoms T region ID: each command's rows
 * that can touch the domain (cells r0..r1 along y and z), every site of
 * a row counted for its id, the owned ones kept. An empty rank is fine. */
static hx_status hxi_md_lattice_fill(hx_md_system *sys, const hx_md_config *cfg, const int r0[3],
                                     const int r1[3])
{
    const hx_decomp *d = &sys->decomp;
    const hxi_fill_tab *t = hxi_fill_get(cfg);
    int n = 0, cap = 64;
    double *x = NULL, *v = NULL;
    int64_t *ids = NULL, natoms;
    hx_status st;
    if (!t)
        return hxi_error(HX_ERR_NOMEM, "no memory for the create_atoms rows");
    natoms = t->before[t->nfills * t->nrows];
    if (natoms < 1)
        return hxi_error(HX_ERR_INVALID,
                         "create_atoms: its regions hold no lattice site of the box (LAMMPS "
                         "creates 0 atoms): widen the region");
    st = hxi_alloc((void **) &x, (size_t) cap * 3 * sizeof(double), "lattice coordinates");
    if (st == HX_OK)
        st = hxi_alloc((void **) &ids, (size_t) cap * sizeof(int64_t), "lattice ids");
    for (int f = 0; st == HX_OK && f < t->nfills; f++)
        for (int k = r0[2]; st == HX_OK && k <= r1[2]; k++)
            for (int j = r0[1]; st == HX_OK && j <= r1[1]; j++) {
                int64_t id = t->before[f * t->nrows + k * cfg->cells[1] + j];
                for (int i = 0; st == HX_OK && i < cfg->cells[0]; i++)
                    for (int m = 0; st == HX_OK && m < 4; m++) {
                        double p[3];
                        if (!hxi_fill_site(&cfg->types.fills[f], t->a, i, j, k, m, p))
                            continue;
                        if (d->nranks == 1 || hx_decomp_owner(d, p) == d->rank)
                            st = hxi_keep(&x, &ids, &n, &cap, p, id);
                        id++;
                    }
            }
    if (st == HX_OK)
        st = hxi_alloc((void **) &v, (size_t) cap * 3 * sizeof(double), "lattice velocities");
    if (st != HX_OK) {
        free(x);
        free(ids);
        return st;
    }
    return hxi_lattice_install(sys, cfg, x, v, ids, n, cap, natoms);
}

hx_status hx_md_lattice(hx_md_system *sys, const hx_md_config *cfg)
{
    const hx_decomp *d = &sys->decomp;
    double lo[3], len[3], a;
    int r0[3], r1[3], n = 0, cap;
    int64_t natoms;
    double *x = NULL, *v = NULL;
    int64_t *id = NULL;
    hx_status st;

    HXI_CHECK(hx_md_box(cfg, lo, len));
    a = hx_md_lattice_constant(cfg);
    for (int k = 0; k < 3; k++)
        if (fabs(d->box_len[k] - len[k]) > 1e-12 * len[k] || d->box_lo[k] != lo[k])
            return hxi_error(HX_ERR_BOX,
                             "decomposition box [%g, %g) along %c differs from the lattice "
                             "box [%g, %g): initialise it with hx_md_box",
                             d->box_lo[k], d->box_lo[k] + d->box_len[k], "xyz"[k], lo[k],
                             lo[k] + len[k]);
    natoms = 4 * (int64_t) cfg->cells[0] * cfg->cells[1] * cfg->cells[2];
    if (natoms > ((int64_t) 1 << 40))
        return hxi_error(HX_ERR_INVALID, "%lld atoms are too many: use fewer lattice cells",
                         (long long) natoms);
    if (hxi_tri_on(cfg))
        return hxi_md_lattice_tri(sys, cfg);

    for (int k = 0; k < 3; k++)
        hxi_cell_range(d->dom_lo[k] - lo[k], d->dom_hi[k] - lo[k], a, cfg->cells[k], &r0[k],
                       &r1[k]);
    if (hxi_fill_on(cfg))
        return hxi_md_lattice_fill(sys, cfg, r0, r1);
    /* Room for the cells scanned; each holds at most 4 of our atoms. */
    {
        int64_t scan = 4;
        for (int k = 0; k < 3; k++)
            scan *= r1[k] - r0[k] + 1;
        if (scan > INT32_MAX / 4)
            return hxi_error(HX_ERR_INVALID,
                             "%lld lattice sites on one rank are too many: use more ranks",
                             (long long) scan);
        cap = scan > 16 ? (int) scan : 16;
    }
    st = hxi_alloc((void **) &x, (size_t) cap * 3 * sizeof(double), "lattice coordinates");
    if (st == HX_OK)
        st = hxi_alloc((void **) &v, (size_t) cap * 3 * sizeof(double), "lattice velocities");
    if (st == HX_OK)
        st = hxi_alloc((void **) &id, (size_t) cap * sizeof(int64_t), "lattice ids");
    if (st != HX_OK)
        goto fail;

    /* Planes of cells along z by the host's threads, each into its own
     * stretch of the arrays (the sites of one plane at most), then moved
     * together in plane order: the atoms and their order are those of one
     * loop over k, j, i, m. */
    {
        const int nk = r1[2] - r0[2] + 1;
        const size_t plane = 4 * (size_t) (r1[1] - r0[1] + 1) * (size_t) (r1[0] - r0[0] + 1);
        int *count = NULL;
        st = hxi_alloc((void **) &count, sizeof(int) * (size_t) nk, "lattice plane counts");
        if (st != HX_OK)
            goto fail;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
        for (int kk = 0; kk < nk; kk++) {
            const int k = r0[2] + kk;
            double *xp = x + 3 * plane * (size_t) kk;
            int64_t *ip = id + plane * (size_t) kk;
            int c = 0;
            for (int j = r0[1]; j <= r1[1]; j++)
                for (int i = r0[0]; i <= r1[0]; i++)
                    for (int m = 0; m < 4; m++) {
                        double *p = xp + 3 * (size_t) c;
                        p[0] = lo[0] + ((double) i + hxi_fcc_basis[m][0]) * a;
                        p[1] = lo[1] + ((double) j + hxi_fcc_basis[m][1]) * a;
                        p[2] = lo[2] + ((double) k + hxi_fcc_basis[m][2]) * a;
                        /* One rank owns every site: all lie inside the box. */
                        if (d->nranks > 1 && hx_decomp_owner(d, p) != d->rank)
                            continue;
                        ip[c] = (((int64_t) k * cfg->cells[1] + j) * cfg->cells[0] + i) * 4 + m;
                        c++;
                    }
            count[kk] = c;
        }
        for (int kk = 0; kk < nk; kk++) {
            const size_t from = plane * (size_t) kk;
            if (from != (size_t) n) {
                memmove(x + 3 * (size_t) n, x + 3 * from, 3 * sizeof(double) * (size_t) count[kk]);
                memmove(id + n, id + from, sizeof(int64_t) * (size_t) count[kk]);
            }
            n += count[kk];
        }
        free(count);
    }
    return hxi_lattice_install(sys, cfg, x, v, id, n, cap, natoms);
fail:
    free(x);
    free(v);
    free(id);
    return st;
}
