/*
 * dump.c - trajectories.
 *
 * Rank 0 gathers every rank's atoms and writes them in global id order, so
 * that atom k is line k of every frame whatever the rank count. Positions
 * are as the engine holds them, which between neighbour-list rebuilds may
 * lie slightly outside the box (LAMMPS's do too). Three formats:
 *
 * HX_MD_DUMP_EXTXYZ (--dump): extended XYZ, read by ASE and OVITO:
 *   N
 *   Lattice="Lx 0 0 0 Ly 0 0 0 Lz" Properties=species:S:1:pos:R:3:vel:R:3 Time=t Step=s pbc="T T T"
 *   Ar x y z vx vy vz
 * The species is a placeholder name for the one LJ type ("Ar", the textbook
 * LJ liquid), or T1, T2, ... for the types where there are several.
 *
 * HX_MD_DUMP_ATOM (deck `dump ID all atom N FILE`): LAMMPS's atom format,
 * its defaults (scaled coordinates, no image flags), as LAMMPS writes it:
 *   ITEM: TIMESTEP / s / ITEM: NUMBER OF ATOMS / N / ITEM: BOX BOUNDS pp pp pp
 *   lo hi (three lines, %-1.16e) / ITEM: ATOMS id type xs ys zs
 *   tag type xs ys zs (%g)
 * in a triclinic box (tilt not 0) LAMMPS's triclinic header, ITEM: BOX
 * BOUNDS xy xz yz pp pp pp with the bounding box's bounds and the tilts,
 * and xs ys zs its lamda (fractional) coordinates;
 * HX_MD_DUMP_XYZ (deck `dump ID all xyz N FILE`): LAMMPS's xyz format:
 *   N / Atoms. Timestep: s / type x y z (%g)
 * Both with atoms sorted by id, as LAMMPS's `dump_modify ID sort id`.
 */
#include "md/md_driver.h"
#include "core/outfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct hxi_md_dump {
    hx_comm *comm;
    hxi_outfile out; /* rank 0's file */
    hx_md_dump_style style;
    hxi_md_gather g; /* rank 0: every atom's x and v, by id */
};

hx_status hxi_md_dump_open(hxi_md_dump **out, hx_comm *comm, const char *path,
                           hx_md_dump_style style)
{
    hxi_md_dump *d = NULL;
    hx_status st = hxi_alloc((void **) &d, sizeof *d, "the trajectory writer");
    *out = NULL;
    if (st == HX_OK) {
        memset(d, 0, sizeof *d);
        d->comm = comm;
        d->style = style;
        /* Written as it goes: a run that ends early keeps its frames. */
        if (hx_comm_rank(comm) == 0)
            st = hxi_out_open(&d->out, path, "the trajectory (dump file)", HXI_OUT_STREAM);
    }
    st = hxi_agree(comm, st);
    if (st != HX_OK) {
        if (d)
            hxi_out_abort(&d->out);
        (void) hxi_md_dump_close(d);
        return st;
    }
    *out = d;
    return HX_OK;
}

hx_status hxi_md_dump_close(hxi_md_dump *d)
{
    hx_status st = HX_OK;
    if (!d)
        return HX_OK;
    if (d->out.fp)
        st = hxi_out_commit(&d->out);
    hxi_md_gather_free(&d->g);
    free(d);
    return st;
}

/* The type of the atom of record p (1 where the atoms have none). */
static int hxi_dump_type(const hxi_md_gather *g, const double *p)
{
    return g->typed ? (int) p[g->width - 1] : 1;
}

/* LAMMPS's triclinic box header (DumpAtom::header_item_triclinic): the
 * bounding box's bounds as Domain::set_global_box makes them, each line
 * with its tilt. */
static void hxi_dump_box_tilted(FILE *fp, const hx_decomp *dc)
{
    const double *lo = dc->box_lo, *L = dc->box_len, xy = dc->tilt[0], xz = dc->tilt[1],
                 yz = dc->tilt[2];
    const double hi[3] = {lo[0] + L[0], lo[1] + L[1], lo[2] + L[2]};
    double blo[3], bhi[3];
    blo[0] = fmin(lo[0], lo[0] + xy);
    blo[0] = fmin(blo[0], blo[0] + xz);
    blo[1] = fmin(lo[1], lo[1] + yz);
    blo[2] = lo[2];
    bhi[0] = fmax(hi[0], hi[0] + xy);
    bhi[0] = fmax(bhi[0], bhi[0] + xz);
    bhi[1] = fmax(hi[1], hi[1] + yz);
    bhi[2] = hi[2];
    fprintf(fp, "ITEM: BOX BOUNDS xy xz yz pp pp pp\n");
    for (int k = 0; k < 3; k++)
        fprintf(fp, "%-1.16e %-1.16e %-1.16e\n", blo[k], bhi[k], dc->tilt[k]);
}

/* Scaled coordinates: (x - lo) / L, or in a triclinic box the lamda
 * coordinates of LAMMPS's Domain::x2lamda (its h_inv). */
static void hxi_dump_scaled(const hx_decomp *dc, const double *p, double s[3])
{
    const double *lo = dc->box_lo, *L = dc->box_len;
    const double d[3] = {p[0] - lo[0], p[1] - lo[1], p[2] - lo[2]};
    if (!dc->triclinic) {
        for (int k = 0; k < 3; k++)
            s[k] = d[k] / L[k];
        return;
    }
    const double xy = dc->tilt[0], xz = dc->tilt[1], yz = dc->tilt[2];
    const double h3 = -yz / (L[1] * L[2]), h4 = (yz * xy - L[1] * xz) / (L[0] * L[1] * L[2]),
                 h5 = -xy / (L[0] * L[1]);
    s[0] = 1.0 / L[0] * d[0] + h5 * d[1] + h4 * d[2];
    s[1] = 1.0 / L[1] * d[1] + h3 * d[2];
    s[2] = 1.0 / L[2] * d[2];
}

/* One frame in rank 0's file, as d->style says. */
static void hxi_dump_write(hxi_md_dump *d, const hx_md_system *sys, int64_t step, double time)
{
    const double *lo = sys->decomp.box_lo, *L = sys->decomp.box_len;
    FILE *fp = d->out.fp;
    if (d->style == HX_MD_DUMP_ATOM) {
        fprintf(fp, "ITEM: TIMESTEP\n%lld\nITEM: NUMBER OF ATOMS\n%lld\n", (long long) step,
                (long long) sys->natoms);
        if (sys->decomp.triclinic) {
            hxi_dump_box_tilted(fp, &sys->decomp);
        } else {
            fprintf(fp, "ITEM: BOX BOUNDS pp pp pp\n");
            for (int k = 0; k < 3; k++)
                fprintf(fp, "%-1.16e %-1.16e\n", lo[k], lo[k] + L[k]);
        }
        fprintf(fp, "ITEM: ATOMS id type xs ys zs\n");
        for (int64_t k = 0; k < sys->natoms; k++) {
            const double *p = d->g.all + (size_t) d->g.width * (size_t) k;
            double sc[3];
            hxi_dump_scaled(&sys->decomp, p, sc);
            fprintf(fp, "%lld %d %g %g %g\n", (long long) k + 1, hxi_dump_type(&d->g, p), sc[0],
                    sc[1], sc[2]);
        }
    } else if (d->style == HX_MD_DUMP_XYZ) {
        fprintf(fp, "%lld\nAtoms. Timestep: %lld\n", (long long) sys->natoms, (long long) step);
        for (int64_t k = 0; k < sys->natoms; k++) {
            const double *p = d->g.all + (size_t) d->g.width * (size_t) k;
            fprintf(fp, "%d %g %g %g\n", hxi_dump_type(&d->g, p), p[0], p[1], p[2]);
        }
    } else {
        fprintf(fp, "%lld\n", (long long) sys->natoms);
        const double(*e)[3] = sys->decomp.edge; /* a, b, c: (L, 0, 0) ... orthorhombic */
        fprintf(fp,
                "Lattice=\"%.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\" "
                "Properties=species:S:1:pos:R:3:vel:R:3 Time=%.10g Step=%lld pbc=\"T T T\"\n",
                e[0][0], e[0][1], e[0][2], e[1][0], e[1][1], e[1][2], e[2][0], e[2][1], e[2][2],
                time, (long long) step);
        for (int64_t k = 0; k < sys->natoms; k++) {
            const double *p = d->g.all + (size_t) d->g.width * (size_t) k;
            if (d->g.typed)
                fprintf(fp, "T%d ", hxi_dump_type(&d->g, p));
            else
                fputs("Ar ", fp);
            fprintf(fp, "%.10g %.10g %.10g %.10g %.10g %.10g\n", p[0], p[1], p[2], p[3], p[4],
                    p[5]);
        }
    }
}

hx_status hxi_md_dump_frame(hxi_md_dump *d, const hx_md_system *sys, int64_t step, double time)
{
    hx_status st = HX_OK;
    HXI_CHECK(hxi_md_gather_by_id(&d->g, d->comm, sys, 0, "trajectory"));
    if (hx_comm_rank(d->comm) == 0) {
        hxi_dump_write(d, sys, step, time);
        st = hxi_out_check(&d->out);
    }
    return hxi_agree(d->comm, st);
}
