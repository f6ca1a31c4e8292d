/*
 * deck_box.c - the commands that make the box and its atoms: lattice,
 * region (block, and prism: LAMMPS's restricted triclinic box),
 * create_box and create_atoms, and the box's check at the first run
 * (docs/md-triclinic.md).
 */
#include "md/deck_internal.h"
#include "md/md_driver.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hx_status deck_cmd_lattice(deck *d)
{
    HXI_CHECK(deck_not_restarted(d));
    double rho;
    if (d->nwords >= 2 && strcmp(d->words[1], "fcc") != 0)
        return deck_error(d,
                          "lattice '%s': halox-md builds fcc lattices only "
                          "(lattice fcc RHO)",
                          deck_show(d->words[1]).s);
    if (d->nwords > 3)
        return deck_error(d, "lattice keyword '%s' is not supported; write `lattice fcc RHO`",
                          deck_show(d->words[3]).s);
    HXI_CHECK(deck_nargs(d, 3, 3, "lattice fcc RHO"));
    if (d->nregions > 0 || d->have_box)
        return deck_error(d, "lattice after region: halox-md builds the box and the atoms "
                             "from one lattice; put lattice before region");
    HXI_CHECK(deck_get_double(d, "density", d->words[2], &rho));
    if (rho <= 0.0)
        return deck_error(d, "lattice: density %s must be > 0", deck_show(d->words[2]).s);
    d->c.density = rho;
    d->have_lattice = 1;
    return HX_OK;
}

/* The fcc lattice constant, LAMMPS's lattice spacing along each axis
 * (hx_md_lattice_constant; the deck reader is built without lattice.c). */
double deck_lattice_a(const deck *d)
{
    return pow(4.0 / d->c.density, 1.0 / 3.0);
}

/* One bound of a region in lattice cells: 0 for a lower bound, a whole
 * number of cells for an upper one (scale: the lattice constant with
 * `units box`, 1 with lattice units). */
static hx_status region_bound(deck *d, int k, int hi, double scale, const char *usage, int *out)
{
    char what[16];
    const char *w = d->words[3 + 2 * k + hi];
    double v, c;
    snprintf(what, sizeof what, "%c%s", "xyz"[k], hi ? "hi" : "lo");
    HXI_CHECK(deck_get_double(d, what, w, &v));
    c = v / scale;
    if (!hi) {
        if (v != 0.0)
            return deck_error(d, "region: %s is %s; the box must start at 0 (%s)", what,
                              deck_show(w).s, usage);
        return HX_OK;
    }
    if (fabs(c - floor(c + 0.5)) > 1e-9 * fabs(c))
        c = -1; /* not whole */
    c = floor(c + 0.5);
    if (c < 1.0 || c > DECK_MAX_CELLS)
        return deck_error(d,
                          "region: %s %s must be a whole number of lattice cells, 1 to %d "
                          "(%s)",
                          what, deck_show(w).s, DECK_MAX_CELLS, usage);
    *out = (int) c;
    return HX_OK;
}

/* The box's extent along k: [0, length) or, tilted, its bounding box
 * (Domain::set_global_box's boxlo_bound, boxhi_bound). */
static void box_extent(const deck *d, int k, double *lo, double *hi)
{
    const double a = deck_lattice_a(d);
    const double xy = d->c.tilt[0], xz = d->c.tilt[1], yz = d->c.tilt[2];
    *lo = 0.0;
    *hi = d->c.cells[k] * a;
    if (k == 0) {
        *lo = fmin(fmin(0.0, xy), fmin(xz, xy + xz));
        *hi += fmax(fmax(0.0, xy), fmax(xz, xy + xz));
    } else if (k == 1) {
        *lo = fmin(0.0, yz);
        *hi += fmax(0.0, yz);
    }
}

/* The bounds of a region defined after create_box (LAMMPS's RegBlock and
 * RegPrism: INF for no bound, EDGE for the box's, a block's in a tilted
 * box its bounding box's, else a number times scale). */
static hx_status region_free_bounds(deck *d, deck_region *r, int prism, double scale)
{
    for (int k = 0; k < 6; k++) {
        const char *w = d->words[3 + k];
        const int dim = k / 2, hi = k % 2;
        double v;
        char what[16];
        snprintf(what, sizeof what, "%c%s", "xyz"[dim], hi ? "hi" : "lo");
        if (strcmp(w, "INF") == 0)
            v = hi ? HUGE_VAL : -HUGE_VAL;
        else if (strcmp(w, "EDGE") == 0) {
            double lo, up;
            box_extent(d, dim, &lo, &up);
            if (prism) /* LAMMPS's boxlo, boxhi */
                lo = 0.0, up = d->c.cells[dim] * deck_lattice_a(d);
            v = hi ? up : lo;
        } else {
            HXI_CHECK(deck_get_double(d, what, w, &v));
            if (!isfinite(v))
                return deck_error(d, "region: %s %s is not finite (write INF)", what,
                                  deck_show(w).s);
            v *= scale;
        }
        *(hi ? &r->hi[dim] : &r->lo[dim]) = v;
    }
    for (int k = 0; k < 3; k++)
        if (r->lo[k] > r->hi[k])
            return deck_error(d, "region: %clo %s is above %chi %s", "xyz"[k],
                              deck_show(d->words[3 + 2 * k]).s, "xyz"[k],
                              deck_show(d->words[4 + 2 * k]).s);
    return HX_OK;
}

/* `region ID block 0 NX 0 NY 0 NZ` and `region ID prism 0 NX 0 NY 0 NZ XY
 * XZ YZ`, each with `units lattice` (LAMMPS's default: lengths and tilts
 * in lattice constants) or `units box`. */
hx_status deck_cmd_region(deck *d)
{
    HXI_CHECK(deck_not_restarted(d));
    static const char usage[] = "region ID block 0 NX 0 NY 0 NZ [units lattice|box] or region "
                                "ID prism 0 NX 0 NY 0 NZ XY XZ YZ [units lattice|box]";
    deck_region *r;
    int prism, nw;
    double a, scale;
    HXI_CHECK(deck_nargs(d, 3, 14, usage));
    if (!deck_is_name(d->words[1], strlen(d->words[1])))
        return deck_error(d, "region ID '%s' must be letters, digits and _",
                          deck_show(d->words[1]).s);
    prism = strcmp(d->words[2], "prism") == 0;
    if (!prism && strcmp(d->words[2], "block") != 0)
        return deck_error(d, "region style '%s': halox-md reads block and prism regions (%s)",
                          deck_show(d->words[2]).s, usage);
    nw = prism ? 12 : 9;
    HXI_CHECK(deck_nargs(d, nw, nw + 2, usage));
    if (d->nwords > nw) {
        if (d->nwords != nw + 2 || strcmp(d->words[nw], "units") != 0 ||
            (strcmp(d->words[nw + 1], "lattice") != 0 && strcmp(d->words[nw + 1], "box") != 0))
            return deck_error(d,
                              "region keyword '%s' is not supported (only `units lattice` or "
                              "`units box`)",
                              deck_show(d->words[nw]).s);
    }
    HXI_CHECK(deck_need(d, d->have_lattice, "lattice"));
    for (int i = 0; i < d->nregions; i++)
        if (strcmp(d->regions[i].id, d->words[1]) == 0)
            return deck_error(d, "region ID '%s' is already defined", deck_show(d->words[1]).s);
    if (d->nregions == DECK_MAX_REGIONS)
        return deck_error(d, "more than %d regions", DECK_MAX_REGIONS);
    r = &d->regions[d->nregions];
    memset(r, 0, sizeof *r);
    a = deck_lattice_a(d);
    /* LAMMPS scales lengths and tilts by the lattice spacings: all a for fcc. */
    scale = d->nwords > nw && strcmp(d->words[nw + 1], "box") == 0 ? 1.0 : a;
    if (d->have_box) /* a region to fill: any bounds */
        HXI_CHECK(region_free_bounds(d, r, prism, scale));
    for (int k = 0; !d->have_box && k < 3; k++) {
        HXI_CHECK(region_bound(d, k, 0, scale / a, usage, NULL));
        HXI_CHECK(region_bound(d, k, 1, a / scale, usage, &r->cells[k]));
        r->lo[k] = 0.0;
        r->hi[k] = r->cells[k] * a;
    }
    for (int k = 0; prism && k < 3; k++) {
        static const char *const tilt_name[3] = {"xy", "xz", "yz"};
        double t;
        HXI_CHECK(deck_get_double(d, tilt_name[k], d->words[9 + k], &t));
        r->tilt[k] = t * scale;
        if (!isfinite(r->tilt[k]))
            return deck_error(d, "region: tilt %s %s is not finite", tilt_name[k],
                              deck_show(d->words[9 + k]).s);
    }
    r->prism = prism;
    snprintf(r->id, sizeof r->id, "%s", d->words[1]);
    d->nregions++;
    return HX_OK;
}

static const deck_region *region_find(const deck *d, const char *id)
{
    for (int i = 0; i < d->nregions; i++)
        if (strcmp(d->regions[i].id, id) == 0)
            return &d->regions[i];
    return NULL;
}

/* A prism region's tilts for the box: within LAMMPS's limits (its
 * Domain::set_initial_box: |xy| and |xz| at most half of lx, |yz| half of
 * ly), and making the box's edges fcc lattice vectors, so that the
 * lattice fills the periodic box (xy a whole number of lattice cells, xz
 * and yz halves whose sum is whole). */
static hx_status box_tilt(deck *d, const deck_region *r)
{
    static const char *const name[3] = {"xy", "xz", "yz"};
    const double a = deck_lattice_a(d);
    double len[3], half[3];
    for (int k = 0; k < 3; k++) {
        len[k] = r->cells[k] * a;
        half[k] = 2.0 * r->tilt[k] / a; /* the tilt in half cells */
    }
    d->c.triclinic = r->prism;
    memcpy(d->c.tilt, r->tilt, sizeof d->c.tilt);
    for (int k = 0; k < 3; k++) {
        const double l = len[k == 2 ? 1 : 0];
        if (fabs(r->tilt[k] / l) > 0.5)
            return deck_error(d,
                              "create_box: region %s's tilt %s = %g is beyond LAMMPS's limit "
                              "|%s| <= %s / 2 = %g (LAMMPS: triclinic box skew is too large)",
                              r->id, name[k], r->tilt[k], name[k], k == 2 ? "ly" : "lx", 0.5 * l);
    }
    for (int k = 0; k < 3; k++)
        if (fabs(half[k] - floor(half[k] + 0.5)) > 1e-9 * (1.0 + fabs(half[k])))
            half[0] = 0.5; /* not a lattice vector: refused below */
    if (fmod(floor(half[0] + 0.5), 2.0) != 0.0 ||
        fmod(floor(half[1] + 0.5) + floor(half[2] + 0.5), 2.0) != 0.0)
        return deck_error(d,
                          "create_box: region %s's tilts xy %g, xz %g, yz %g do not fit the fcc "
                          "lattice: halox-md fills the periodic box with it, so xy must be a "
                          "whole number of lattice cells and xz, yz halves with a whole sum",
                          r->id, r->tilt[0] / a, r->tilt[1] / a, r->tilt[2] / a);
    /* Whole half cells, as a restart file holds them: the very value of
     * LAMMPS's lattice units (n / 2 times a), the nearest for units box. */
    for (int k = 0; k < 3; k++)
        d->c.tilt[k] = floor(half[k] + 0.5) * 0.5 * a;
    return HX_OK;
}

hx_status deck_cmd_create_box(deck *d)
{
    HXI_CHECK(deck_not_restarted(d));
    const deck_region *r;
    long long ntypes;
    HXI_CHECK(deck_nargs(d, 3, 3, "create_box N REGION"));
    HXI_CHECK(deck_get_int(d, "the number of atom types", d->words[1], 0, LLONG_MAX, &ntypes));
    if (ntypes < 1 || ntypes > HX_MD_MAX_TYPES)
        return deck_error(d,
                          "create_box %s: halox-md runs 1 to %d atom types (create_box N REGION)",
                          deck_show(d->words[1]).s, HX_MD_MAX_TYPES);
    if (d->have_box)
        return deck_error(d, "the box is already created");
    r = region_find(d, d->words[2]);
    if (!r)
        return deck_error(d,
                          "create_box: no region '%s' (define it with `region %s block 0 "
                          "NX 0 NY 0 NZ`)",
                          deck_show(d->words[2]).s, deck_show(d->words[2]).s);
    HXI_CHECK(box_tilt(d, r));
    memcpy(d->c.cells, r->cells, sizeof d->c.cells);
    snprintf(d->box_region, sizeof d->box_region, "%s", r->id);
    d->c.types.ntypes = (int) ntypes;
    d->c.types.create_type = 1;
    d->c.types.nsets = 0;
    d->c.types.nfills = 0;
    d->have_box = 1;
    return HX_OK;
}

/* A prism region to fill: bounds finite (LAMMPS's RegPrism puts INF at
 * 1e20, where its fill no longer follows the prism's shape) and
 * increasing (LAMMPS: Illegal region prism command). */
static hx_status prism_fill_ok(deck *d, long long type, const deck_region *r)
{
    for (int k = 0; k < 3; k++) {
        if (!isfinite(r->lo[k]) || !isfinite(r->hi[k]))
            return deck_error(d,
                              "create_atoms %lld region %s: a prism with an INF bound along %c: "
                              "halox-md fills prisms of finite bounds (numbers or EDGE)",
                              type, r->id, "xyz"[k]);
        if (!(r->lo[k] < r->hi[k]))
            return deck_error(d,
                              "create_atoms %lld region %s: the prism's %clo is not below its "
                              "%chi (LAMMPS: Illegal region prism command)",
                              type, r->id, "xyz"[k], "xyz"[k]);
    }
    return HX_OK;
}

/* A region's extent along k: a block's bounds, a prism's bounding box. */
static void region_extent(const deck_region *r, int k, double *lo, double *hi)
{
    const double xy = r->prism ? r->tilt[0] : 0.0, xz = r->prism ? r->tilt[1] : 0.0,
                 yz = r->prism ? r->tilt[2] : 0.0;
    *lo = r->lo[k];
    *hi = r->hi[k];
    if (k == 0) {
        *lo += fmin(fmin(0.0, xy), fmin(xz, xy + xz));
        *hi += fmax(fmax(0.0, xy), fmax(xz, xy + xz));
    } else if (k == 1) {
        *lo += fmin(0.0, yz);
        *hi += fmax(0.0, yz);
    }
}

/* The fill of create_atoms T region ID: a block or prism region defined
 * after create_box that reaches into the box (their bounding boxes). */
static hx_status fill_of_region(deck *d, long long type, hx_md_fill *f)
{
    const deck_region *r = region_find(d, d->words[3]);
    if (!r)
        return deck_error(d,
                          "create_atoms: no region '%s' (define it with `region %s block XLO "
                          "XHI YLO YHI ZLO ZHI` after create_box)",
                          deck_show(d->words[3]).s, deck_show(d->words[3]).s);
    if (r->prism)
        HXI_CHECK(prism_fill_ok(d, type, r));
    for (int k = 0; k < 3; k++) {
        double lo, hi, rlo, rhi;
        box_extent(d, k, &lo, &hi);
        region_extent(r, k, &rlo, &rhi);
        if (rhi < lo || rlo >= hi)
            return deck_error(d,
                              "create_atoms %lld region %s: the region (%c from %g to %g) lies "
                              "outside the box (%g to %g): it holds no atom",
                              type, r->id, "xyz"[k], rlo, rhi, lo, hi);
    }
    f->type = (int) type;
    memcpy(f->lo, r->lo, sizeof f->lo);
    memcpy(f->hi, r->hi, sizeof f->hi);
    f->prism = r->prism;
    if (r->prism)
        memcpy(f->tilt, r->tilt, sizeof f->tilt);
    return HX_OK;
}

/* `create_atoms T box` and `create_atoms T region ID`, several in turn:
 * one of the whole box alone keeps nfills 0 (the whole-box lattice). */
hx_status deck_cmd_create_atoms(deck *d)
{
    HXI_CHECK(deck_not_restarted(d));
    static const char usage[] = "create_atoms T box or create_atoms T region ID";
    hx_md_types *t = &d->c.types;
    hx_md_fill f = {.lo = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL}, .hi = {HUGE_VAL, HUGE_VAL, HUGE_VAL}};
    long long type;
    HXI_CHECK(deck_nargs(d, 3, 4, usage));
    HXI_CHECK(deck_need(d, d->have_box, "create_box"));
    HXI_CHECK(deck_get_int(d, "the atom type", d->words[1], 0, LLONG_MAX, &type));
    if (type < 1 || type > t->ntypes)
        return deck_error(d, "create_atoms %s: the box has atom types 1 to %d (%s)",
                          deck_show(d->words[1]).s, t->ntypes, usage);
    if ((d->nwords == 3 && strcmp(d->words[2], "box") != 0) ||
        (d->nwords == 4 && strcmp(d->words[2], "region") != 0))
        return deck_error(d, "create_atoms style '%s' is not supported (%s)",
                          deck_show(d->words[2]).s, usage);
    if (d->nwords == 4 && d->c.triclinic && strcmp(d->words[3], d->box_region) == 0)
        return deck_error(d,
                          "create_atoms %s region %s: the prism box's own region: halox-md "
                          "fills the whole box as LAMMPS's create_atoms box does (create_atoms "
                          "T box)",
                          deck_show(d->words[1]).s, deck_show(d->words[3]).s);
    if (d->nwords == 4 && strcmp(d->words[3], d->box_region) != 0)
        HXI_CHECK(fill_of_region(d, type, &f));
    else if (d->have_atoms)
        return deck_error(d, "atoms are already created: a second create_atoms of the whole "
                             "box would put two atoms on every site");
    f.type = (int) type;
    if (d->have_atoms && t->nfills == 0) { /* the first command filled the whole box */
        t->fills[0] = (hx_md_fill){.type = t->create_type,
                                   .lo = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL},
                                   .hi = {HUGE_VAL, HUGE_VAL, HUGE_VAL}};
        t->nfills = 1;
    }
    if (t->nfills == HX_MD_MAX_FILLS)
        return deck_error(d, "more than %d create_atoms commands", HX_MD_MAX_FILLS);
    t->fills[t->nfills++] = f;
    t->create_type = t->fills[0].type;
    if (t->nfills == 1 && !f.prism && f.lo[0] == -HUGE_VAL && f.lo[1] == -HUGE_VAL &&
        f.lo[2] == -HUGE_VAL && f.hi[0] == HUGE_VAL && f.hi[1] == HUGE_VAL && f.hi[2] == HUGE_VAL)
        t->nfills = 0; /* the whole box */
    d->have_atoms = 1;
    return HX_OK;
}

/* At the first run: a triclinic box must be thicker than twice the halo
 * cutoff (rc + skin) between every pair of faces, as libhalox asks
 * (hx_decomp_init_tilted); a tilt makes a face distance shorter than the
 * box's length, so the deck's run line names it. */
hx_status deck_box_ready(deck *d)
{
    static const int one[3] = {1, 1, 1};
    const double a = deck_lattice_a(d), lo[3] = {0, 0, 0};
    const double cut = hxi_md_list_cutoff(&d->c);
    double len[3];
    hx_decomp dc;
    if (d->restarted || !d->c.triclinic)
        return HX_OK;
    for (int k = 0; k < 3; k++)
        len[k] = d->c.cells[k] * a;
    if (hx_decomp_init_tilted(&dc, lo, len, d->c.tilt, cut, one, 1, 0) != HX_ERR_CUTOFF_TOO_LARGE)
        return HX_OK;
    {
        /* the face distances: 1 / |row k of H^-1| (H's columns the edges) */
        const double xy = d->c.tilt[0], xz = d->c.tilt[1], yz = d->c.tilt[2];
        const double r0[3] = {1.0 / len[0], -xy / (len[0] * len[1]),
                              (xy * yz - len[1] * xz) / (len[0] * len[1] * len[2])};
        dc.height[0] = 1.0 / sqrt(r0[0] * r0[0] + r0[1] * r0[1] + r0[2] * r0[2]);
        dc.height[1] = 1.0 / hypot(1.0 / len[1], yz / (len[1] * len[2]));
        dc.height[2] = len[2];
    }
    for (int k = 0; k < 3; k++)
        if (!(cut < 0.5 * dc.height[k]))
            return deck_error(d,
                              "run: the triclinic box is %g thick along %c (the distance "
                              "between its faces; lengths %g %g %g, tilts %g %g %g): the halo "
                              "cutoff rc + skin = %g must be below half of it; use more "
                              "lattice cells, less tilt, or a smaller cutoff or skin",
                              dc.height[k], "xyz"[k], len[0], len[1], len[2], d -> c.tilt[0],
                              d->c.tilt[1], d->c.tilt[2], cut);
    return HX_OK;
}
