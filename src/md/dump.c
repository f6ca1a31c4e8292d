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
 * LJ liquid).
 *
 * HX_MD_DUMP_ATOM (deck `dump ID all atom N FILE`): LAMMPS's atom format,
 * its defaults (scaled coordinates, no image flags), as LAMMPS writes it:
 *   ITEM: TIMESTEP / s / ITEM: NUMBER OF ATOMS / N / ITEM: BOX BOUNDS pp pp pp
 *   lo hi (three lines, %-1.16e) / ITEM: ATOMS id type xs ys zs
 *   tag 1 xs ys zs (%g)
 * HX_MD_DUMP_XYZ (deck `dump ID all xyz N FILE`): LAMMPS's xyz format:
 *   N / Atoms. Timestep: s / 1 x y z (%g)
 * Both with atoms sorted by id, as LAMMPS's `dump_modify ID sort id`.
 */
#include "md/md_driver.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef HALOX_HAVE_MPI
#include <mpi.h>
#endif

struct hxi_md_dump {
    hx_comm *comm;
    FILE *fp;
    char path[256];
    hx_md_dump_style style;
    double *all;  /* rank 0: natoms * 6, by id */
    double *pack; /* this rank: n * 7 (id, x, v) */
    int64_t cap_all;
    int cap_pack;
    int *counts, *displs;
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
        snprintf(d->path, sizeof d->path, "%s", path);
        if (hx_comm_rank(comm) == 0) {
            d->fp = fopen(path, "w");
            if (!d->fp)
                st = hxi_error(HX_ERR_IO,
                               "cannot write the trajectory \"%s\": %s (check the dump file "
                               "name and the directory)",
                               path, strerror(errno));
        }
    }
    st = hxi_agree(comm, st);
    if (st != HX_OK) {
        hxi_md_dump_close(d);
        return st;
    }
    *out = d;
    return HX_OK;
}

void hxi_md_dump_close(hxi_md_dump *d)
{
    if (!d)
        return;
    if (d->fp)
        fclose(d->fp);
    free(d->all);
    free(d->pack);
    free(d->counts);
    free(d->displs);
    free(d);
}

/* Every rank's packed atoms into d->all on rank 0, placed by id. */
static hx_status hxi_dump_collect(hxi_md_dump *d, const hx_md_system *sys)
{
    int rank = hx_comm_rank(d->comm), size = hx_comm_size(d->comm);
    hx_status st = HX_OK;
    double *recv = NULL;
    int64_t total = 0;

    if (sys->n + 1 > d->cap_pack) {
        st = hxi_grow((void **) &d->pack, (size_t) (sys->n + 1) * 7 * sizeof(double),
                      "trajectory buffer");
        if (st == HX_OK)
            d->cap_pack = sys->n + 1;
    }
    if (st == HX_OK && rank == 0 && sys->natoms > d->cap_all) {
        st = hxi_grow((void **) &d->all, (size_t) sys->natoms * 6 * sizeof(double),
                      "trajectory frame");
        if (st == HX_OK)
            d->cap_all = sys->natoms;
    }
    if (st == HX_OK && !d->counts) {
        st = hxi_alloc((void **) &d->counts, (size_t) size * sizeof(int), "trajectory counts");
        if (st == HX_OK)
            st = hxi_alloc((void **) &d->displs, (size_t) size * sizeof(int), "trajectory offsets");
    }
    HXI_CHECK(hxi_agree(d->comm, st));
    for (int i = 0; i < sys->n; i++) {
        double *p = d->pack + 7 * (size_t) i;
        p[0] = (double) sys->id[i];
        memcpy(p + 1, sys->x + 3 * (size_t) i, 3 * sizeof(double));
        memcpy(p + 4, sys->v + 3 * (size_t) i, 3 * sizeof(double));
    }
    {
        int n7 = 7 * sys->n;
        HXI_CHECK(hxi_allgather(d->comm, &n7, sizeof n7, d->counts));
    }
    for (int r = 0; r < size; r++) {
        d->displs[r] = (int) total;
        total += d->counts[r];
    }
    if (total != 7 * sys->natoms || total > INT32_MAX)
        return hxi_error(HX_ERR_STATE,
                         "trajectory: the ranks hold %lld values, not 7 x %lld atoms: atoms "
                         "were lost (or the system is too large for one frame)",
                         (long long) total, (long long) sys->natoms);
    if (rank == 0)
        st = hxi_alloc((void **) &recv, (size_t) total * sizeof(double) + 1, "trajectory gather");
    HXI_CHECK(hxi_agree(d->comm, st));
#ifdef HALOX_HAVE_MPI
    if (size > 1) {
        int rc = MPI_Gatherv(d->pack, 7 * sys->n, MPI_DOUBLE, recv, d->counts, d->displs,
                             MPI_DOUBLE, 0, *(MPI_Comm *) hxi_comm_mpi(d->comm));
        if (rc != MPI_SUCCESS) {
            free(recv);
            return hxi_error(HX_ERR_MPI, "trajectory: MPI_Gatherv failed (%d)", rc);
        }
    }
#endif
    if (size == 1 && total > 0)
        memcpy(recv, d->pack, (size_t) total * sizeof(double));
    if (rank == 0) {
        for (int64_t k = 0; k < sys->natoms; k++) {
            const double *p = recv + 7 * (size_t) k;
            int64_t id = (int64_t) p[0];
            if (id < 0 || id >= sys->natoms) {
                st = hxi_error(HX_ERR_STATE, "trajectory: atom id %lld outside 0..%lld",
                               (long long) id, (long long) sys->natoms - 1);
                break;
            }
            memcpy(d->all + 6 * (size_t) id, p + 1, 6 * sizeof(double));
        }
    }
    free(recv);
    return hxi_agree(d->comm, st);
}

/* One frame in rank 0's file, as d->style says. */
static void hxi_dump_write(hxi_md_dump *d, const hx_md_system *sys, int64_t step, double time)
{
    const double *lo = sys->decomp.box_lo, *L = sys->decomp.box_len;
    if (d->style == HX_MD_DUMP_ATOM) {
        fprintf(d->fp, "ITEM: TIMESTEP\n%lld\nITEM: NUMBER OF ATOMS\n%lld\n", (long long) step,
                (long long) sys->natoms);
        fprintf(d->fp, "ITEM: BOX BOUNDS pp pp pp\n");
        for (int k = 0; k < 3; k++)
            fprintf(d->fp, "%-1.16e %-1.16e\n", lo[k], lo[k] + L[k]);
        fprintf(d->fp, "ITEM: ATOMS id type xs ys zs\n");
        for (int64_t k = 0; k < sys->natoms; k++) {
            const double *p = d->all + 6 * (size_t) k;
            fprintf(d->fp, "%lld 1 %g %g %g\n", (long long) k + 1, (p[0] - lo[0]) / L[0],
                    (p[1] - lo[1]) / L[1], (p[2] - lo[2]) / L[2]);
        }
    } else if (d->style == HX_MD_DUMP_XYZ) {
        fprintf(d->fp, "%lld\nAtoms. Timestep: %lld\n", (long long) sys->natoms, (long long) step);
        for (int64_t k = 0; k < sys->natoms; k++) {
            const double *p = d->all + 6 * (size_t) k;
            fprintf(d->fp, "1 %g %g %g\n", p[0], p[1], p[2]);
        }
    } else {
        fprintf(d->fp, "%lld\n", (long long) sys->natoms);
        fprintf(d->fp,
                "Lattice=\"%.17g 0 0 0 %.17g 0 0 0 %.17g\" "
                "Properties=species:S:1:pos:R:3:vel:R:3 Time=%.10g Step=%lld pbc=\"T T T\"\n",
                L[0], L[1], L[2], time, (long long) step);
        for (int64_t k = 0; k < sys->natoms; k++) {
            const double *p = d->all + 6 * (size_t) k;
            fprintf(d->fp, "Ar %.10g %.10g %.10g %.10g %.10g %.10g\n", p[0], p[1], p[2], p[3], p[4],
                    p[5]);
        }
    }
}

hx_status hxi_md_dump_frame(hxi_md_dump *d, const hx_md_system *sys, int64_t step, double time)
{
    hx_status st = HX_OK;
    HXI_CHECK(hxi_dump_collect(d, sys));
    if (hx_comm_rank(d->comm) == 0) {
        hxi_dump_write(d, sys, step, time);
        if (fflush(d->fp) != 0 || ferror(d->fp))
            st = hxi_error(HX_ERR_IO, "cannot write the trajectory \"%s\": %s", d->path,
                           strerror(errno));
    }
    return hxi_agree(d->comm, st);
}
