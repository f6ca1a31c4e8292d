/*
 * restart.c - halox-md's restart files: write (write_restart, restart N,
 * --checkpoint) and read (read_restart, --restart). The layout and the
 * header's checks are in restart_header.c.
 *
 * Writing: the ranks' atoms are gathered on rank 0 (gather.c; 96 MB at
 * 2,048,000 atoms, written in one stream, about as fast as the disk
 * allows, which an MPI-IO write of one shared file would not beat at this
 * size), written to FILE.tmp.PID, flushed and fsync'ed, then the old FILE
 * (if any) becomes FILE.prev and the new one takes its name; the directory
 * is fsync'ed last. A failure at any point leaves the old FILE as it was.
 * A path that exists and is not a regular file (a device such as
 * /dev/null) is written in place; a symbolic link's target is written
 * (the link stays a link).
 *
 * Reading: rank 0 reads and checks the header (magic, byte order,
 * version, header checksum, sizes against the file's length), broadcasts
 * it, then streams the records in chunks; every rank keeps the atoms its
 * domain owns. The payload checksum is checked at the end, before any rank
 * uses an atom.
 */
#define _XOPEN_SOURCE 700 /* realpath */

#include "md/restart.h"
#include "md/restart_header.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { RST_CHUNK = 65536 };
/* --------------------------------------------------------------- write */

/* What follows the header: the cuts, the atoms' records and the trailer. */
typedef struct rst_body {
    const unsigned char *cuts; /* the cuts' block, cbytes (0: none) */
    size_t cbytes;
    const unsigned char *types; /* the types block, ybytes (0: none) */
    size_t ybytes;
    const double *payload;
    size_t nbytes;
    const double *trailer;
    size_t tbytes;
} rst_body;

/* Writes header and body to fp; HX_ERR_IO naming `shown` on failure. */
static hx_status rst_stream(FILE *fp, const unsigned char *header, const rst_body *b,
                            const char *shown)
{
    if (fwrite(header, 1, RST_HEADER, fp) != RST_HEADER ||
        (b->cbytes && fwrite(b->cuts, 1, b->cbytes, fp) != b->cbytes) ||
        (b->ybytes && fwrite(b->types, 1, b->ybytes, fp) != b->ybytes) ||
        (b->nbytes && fwrite(b->payload, 1, b->nbytes, fp) != b->nbytes) ||
        (b->tbytes && fwrite(b->trailer, 1, b->tbytes, fp) != b->tbytes) || fflush(fp) != 0)
        return hxi_error(HX_ERR_IO, "cannot write restart file %s: %s", shown, strerror(errno));
    if (fsync(fileno(fp)) != 0 && errno != EINVAL && errno != EROFS)
        return hxi_error(HX_ERR_IO, "cannot write restart file %s: fsync: %s", shown,
                         strerror(errno));
    return HX_OK;
}

/* The directory part of path ("." when there is none). */
static void rst_dirname(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, n, ".");
    else if (slash == path)
        snprintf(dir, n, "/");
    else
        snprintf(dir, n, "%.*s", (int) (slash - path), path);
}

/* The file a symbolic link points to, so that the file is written and the
 * link stays; any other path as it is. */
static const char *rst_target(const char *path, char *real)
{
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode) && realpath(path, real))
        return real;
    return path;
}

/* Rank 0: the whole file, atomically where the path is a regular file. */
static hx_status rst_write_file(const char *name, const unsigned char *header, const rst_body *b)
{
    struct stat sb;
    char tmp[600], prev[600], dir[512], real[PATH_MAX];
    const char *path = rst_target(name, real);
    FILE *fp;
    hx_status st;
    int dfd;

    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        fp = fopen(path, "wb");
        if (!fp)
            return hxi_error(HX_ERR_IO, "cannot write restart file %s: %s", path, strerror(errno));
        st = rst_stream(fp, header, b, path);
        if (fclose(fp) != 0 && st == HX_OK)
            st = hxi_error(HX_ERR_IO, "cannot write restart file %s: %s", path, strerror(errno));
        return st;
    }
    if (strlen(path) > 500)
        return hxi_error(HX_ERR_INVALID,
                         "restart file name of %zu bytes is too long (500 at "
                         "most)",
                         strlen(path));
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long) getpid());
    snprintf(prev, sizeof prev, "%s.prev", path);
    fp = fopen(tmp, "wb");
    if (!fp)
        return hxi_error(HX_ERR_IO,
                         "cannot write restart file %s: cannot create %s: %s (check the "
                         "directory exists and is writable)",
                         path, tmp, strerror(errno));
    st = rst_stream(fp, header, b, path);
    if (fclose(fp) != 0 && st == HX_OK)
        st = hxi_error(HX_ERR_IO, "cannot write restart file %s: %s", path, strerror(errno));
    if (st == HX_OK && stat(path, &sb) == 0 && rename(path, prev) != 0)
        st = hxi_error(HX_ERR_IO, "cannot keep the previous restart file as %s: %s", prev,
                       strerror(errno));
    if (st == HX_OK && rename(tmp, path) != 0)
        st = hxi_error(HX_ERR_IO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    if (st != HX_OK) {
        remove(tmp);
        return st;
    }
    rst_dirname(path, dir, sizeof dir);
    dfd = open(dir, O_RDONLY);
    if (dfd >= 0) {
        (void) fsync(dfd); /* best effort: some file systems refuse it */
        close(dfd);
    }
    return HX_OK;
}

/* Temporaries FILE.tmp.PID left by a write that was cut short (a rank
 * killed while it wrote: SIGKILL after a signal's grace ran out), whose
 * process is gone from this host and which nothing has written to for a
 * minute (a writer on another host sharing the directory keeps its file
 * fresh), are removed, each with a line that says so. */
static void rst_clean_stale(const char *path)
{
    char dir[512], name[512 + 256 + 2];
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const size_t nb = strlen(base);
    struct dirent *de;
    DIR *d;
    const time_t now = time(NULL);
    rst_dirname(path, dir, sizeof dir);
    d = opendir(dir);
    if (!d)
        return;
    while ((de = readdir(d)) != NULL) {
        const char *tail = de->d_name + nb;
        char *end = NULL;
        long pid;
        struct stat sb;
        if (strncmp(de->d_name, base, nb) != 0 || strncmp(tail, ".tmp.", 5) != 0)
            continue;
        pid = strtol(tail + 5, &end, 10);
        if (pid <= 0 || *end != '\0' || pid == (long) getpid())
            continue;
        if (kill((pid_t) pid, 0) == 0 || errno != ESRCH)
            continue;     /* its writer may still be at work */
        if (base == path) /* in the working directory: named as the user named it */
            snprintf(name, sizeof name, "%s", de->d_name);
        else
            snprintf(name, sizeof name, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", de->d_name);
        if (lstat(name, &sb) == 0 && S_ISREG(sb.st_mode) && difftime(now, sb.st_mtime) > 60.0 &&
            remove(name) == 0)
            printf("halox-md: removed %s, left by a restart file write that was cut short\n", name);
    }
    closedir(d);
    fflush(stdout);
}

hx_status hxi_md_restart_probe(hx_comm *comm, const char *name)
{
    hx_status st = HX_OK;
    if (hx_comm_rank(comm) == 0) {
        struct stat sb;
        char tmp[600], real[PATH_MAX];
        const char *path = rst_target(name, real);
        FILE *fp;
        if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
            fp = fopen(path, "ab");
            if (!fp)
                st =
                    hxi_error(HX_ERR_IO, "cannot write restart file %s: %s", path, strerror(errno));
            else
                fclose(fp);
        } else if (strlen(path) > 500) {
            st = hxi_error(HX_ERR_INVALID,
                           "restart file name of %zu bytes is too long (500 at "
                           "most)",
                           strlen(path));
        } else {
            rst_clean_stale(path);
            snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long) getpid());
            fp = fopen(tmp, "wb");
            if (!fp)
                st = hxi_error(HX_ERR_IO,
                               "cannot write restart file %s: cannot create %s: %s (check the "
                               "directory exists and is writable)",
                               path, tmp, strerror(errno));
            else {
                fclose(fp);
                remove(tmp);
            }
        }
    }
    return hxi_agree(comm, st);
}

hx_status hxi_md_restart_write(hxi_md_gather *g, hx_comm *comm, const char *path,
                               const hx_md_system *sys, const hx_md_config *cfg, int64_t step)
{
    hx_status st = HX_OK;
    HXI_CHECK(hxi_md_gather_by_id(g, comm, sys, 1, "restart file"));
    if (hx_comm_rank(comm) == 0) {
        unsigned char header[RST_HEADER];
        hxi_md_restart h;
        size_t nbytes = 8 * (size_t) g->width * (size_t) sys->natoms;
        memset(&h, 0, sizeof h);
        h.width = g->width;
        h.ago = g->width >= 9 ? sys->ref_ago : -1;
        h.types = cfg->types;
        h.skin = cfg->skin;
        h.step = step;
        h.natoms = sys->natoms;
        memcpy(h.cells, cfg->cells, sizeof h.cells);
        h.density = cfg->density;
        memcpy(h.box_lo, sys->decomp.box_lo, sizeof h.box_lo);
        memcpy(h.box_len, sys->decomp.box_len, sizeof h.box_len);
        memcpy(h.tilt, sys->decomp.tilt, sizeof h.tilt);
        h.mass = cfg->mass;
        h.rc = cfg->rc;
        h.pair_style = cfg->pair_style;
        memcpy(h.pair, cfg->pair, sizeof h.pair);
        h.dt = cfg->dt;
        h.shift_energy = cfg->shift_energy;
        double trailer[2 + 3 * HX_MD_NVT_MAX_CHAIN];
        unsigned char blk[HXI_MD_RST_TYPES], cblk[RST_CUTS_MAX];
        rst_body body = {cblk, 0, blk, 0, g->all, nbytes, trailer, 0};
        hxi_rst_cuts_from(&h, &sys->decomp);
        body.cbytes = (size_t) hxi_rst_cuts_bytes(&h);
        if (body.cbytes)
            hxi_rst_cuts_encode(cblk, &h);
        if (cfg->types.ntypes > 1) {
            hxi_md_restart_types_encode(blk, &cfg->types);
            body.ybytes = sizeof blk;
        }
        if (sys->has_nh) {
            trailer[0] = (double) sys->nh_n;
            trailer[1] = sys->nh_t;
            memcpy(trailer + 2, sys->nh, 3 * (size_t) sys->nh_n * sizeof(double));
            body.tbytes = 8 * (2 + 3 * (size_t) sys->nh_n);
        }
        h.trailer_bytes = (uint64_t) body.tbytes;
        h.trailer_sum = hxi_rst_fnv(RST_FNV_START, trailer, body.tbytes);
        hxi_rst_encode(header, &h, hxi_rst_fnv(RST_FNV_START, g->all, nbytes));
        st = rst_write_file(path, header, &body);
    }
    return hxi_agree(comm, st);
}

/* ---------------------------------------------------------------- read */

/* Rank 0's open file and length, or a status. */
static hx_status rst_open(const char *path, FILE **fp, int64_t *fsize)
{
    struct stat sb;
    *fp = fopen(path, "rb");
    if (!*fp)
        return hxi_error(HX_ERR_IO, "cannot open restart file %s: %s", path, strerror(errno));
    if (fstat(fileno(*fp), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(*fp);
        *fp = NULL;
        return hxi_error(HX_ERR_IO, "restart file %s is not a regular file", path);
    }
    *fsize = (int64_t) sb.st_size;
    return HX_OK;
}

/* Rank 0: the types block after the header, checked against its sum. */
static hx_status rst_read_types(FILE *fp, const char *path, hxi_md_restart *h, unsigned char *blk)
{
    if (fread(blk, 1, HXI_MD_RST_TYPES, fp) != HXI_MD_RST_TYPES)
        return hxi_error(HX_ERR_PARSE, "restart file %s: truncated in its atom types", path);
    if (hxi_rst_fnv(RST_FNV_START, blk, HXI_MD_RST_TYPES) != h->types_sum)
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: the atom types' checksum does not match: the file "
                         "is damaged",
                         path);
    return hxi_md_restart_types_decode(blk, &h->types, path);
}

/* Rank 0: the cuts' block after the header (version 6), checked. */
static hx_status rst_read_cuts(FILE *fp, const char *path, hxi_md_restart *h, unsigned char *cblk)
{
    const size_t n = (size_t) h->cuts_block;
    if (n && fread(cblk, 1, n, fp) != n)
        return hxi_error(HX_ERR_PARSE, "restart file %s: truncated in its domains' cuts", path);
    return hxi_rst_cuts_decode(cblk, n, path, h);
}

hx_status hxi_md_restart_read_header(hx_comm *comm, const char *path, hxi_md_restart *h)
{
    unsigned char buf[RST_HEADER], blk[HXI_MD_RST_TYPES], cblk[RST_CUTS_MAX];
    uint64_t psum = 0;
    hx_status st = HX_OK;
    memset(buf, 0, sizeof buf);
    memset(blk, 0, sizeof blk);
    memset(cblk, 0, sizeof cblk);
    if (hx_comm_rank(comm) == 0) {
        FILE *fp = NULL;
        int64_t fsize = 0;
        st = rst_open(path, &fp, &fsize);
        if (st == HX_OK) {
            if (fsize < RST_HEADER || fread(buf, 1, RST_HEADER, fp) != RST_HEADER)
                st = hxi_error(HX_ERR_PARSE,
                               "restart file %s: %lld bytes, shorter than the %d-byte header: "
                               "the file is truncated or not a restart file",
                               path, (long long) fsize, RST_HEADER);
            else
                st = hxi_rst_decode(buf, fsize, path, h, &psum);
            if (st == HX_OK)
                st = rst_read_cuts(fp, path, h, cblk);
            if (st == HX_OK && h->types.ntypes > 1)
                st = rst_read_types(fp, path, h, blk);
            fclose(fp);
        }
    }
    HXI_CHECK(hxi_agree(comm, st));
    HXI_CHECK(hxi_bcast(comm, buf, sizeof buf, 0));
    HXI_CHECK(hxi_bcast(comm, blk, sizeof blk, 0));
    HXI_CHECK(hxi_bcast(comm, cblk, sizeof cblk, 0));
    {
        /* Every rank decodes the same bytes; the length was checked on 0. */
        int64_t fsize = 0, tbytes = 0, hsize = RST_HEADER;
        uint32_t version = 0;
        int32_t ntypes = 0;
        memcpy(&fsize, buf + 160, 8);
        memcpy(&version, buf + 8, 4);
        if (version >= 6)
            memcpy(&hsize, buf + 16, 8);
        if (version >= 3)
            memcpy(&tbytes, buf + 224, 8);
        if (version >= 4)
            memcpy(&ntypes, buf + 204, 4);
        fsize += hsize + tbytes + (ntypes > 1 ? HXI_MD_RST_TYPES : 0);
        HXI_CHECK(hxi_rst_decode(buf, fsize, path, h, &psum));
        HXI_CHECK(hxi_rst_cuts_decode(cblk, h->cuts_block, path, h));
        return h->types.ntypes > 1 ? hxi_md_restart_types_decode(blk, &h->types, path) : HX_OK;
    }
}

/* Whether record r (width w) is a finite atom near the box: its position
 * within a box length of it, its list position (w 9) inside it. */
static int rst_atom_ok(const hx_decomp *d, const double *r, int w)
{
    for (int k = 0; k < w; k++)
        if (!isfinite(r[k]))
            return 0;
    /* By heights (the coordinates themselves in an orthorhombic box). */
    for (int k = 0; k < 3; k++) {
        const double lo = d->face_lo[k], len = d->height[k], tol = 1e-9 * len;
        const double x = hx_decomp_height(d, k, r);
        if (x < lo - len || x > lo + 2 * len)
            return 0;
        if (w >= 9 && (hx_decomp_height(d, k, r + 6) < lo - tol ||
                       hx_decomp_height(d, k, r + 6) > lo + len + tol))
            return 0;
    }
    return 1;
}

/* Room for cap atoms in sys (xref too where the file has it). */
static hx_status rst_room(hx_md_system *sys, int with_ref, int typed)
{
    int cap = sys->capacity ? 2 * sys->capacity : 1024;
    HXI_CHECK(hxi_grow((void **) &sys->x, (size_t) cap * 3 * sizeof(double), "atoms"));
    HXI_CHECK(hxi_grow((void **) &sys->v, (size_t) cap * 3 * sizeof(double), "atoms"));
    HXI_CHECK(hxi_grow((void **) &sys->id, (size_t) cap * sizeof(int64_t), "atoms"));
    if (with_ref)
        HXI_CHECK(hxi_grow((void **) &sys->xref, (size_t) cap * 3 * sizeof(double), "atoms"));
    if (typed)
        HXI_CHECK(hxi_grow((void **) &sys->type, (size_t) cap * sizeof(int32_t), "atoms"));
    sys->capacity = cap;
    return HX_OK;
}

/* Appends the records [first, first + n) this rank owns to sys. */
static hx_status rst_keep(hx_md_system *sys, const hxi_md_restart *h, const double *rec,
                          int64_t first, int n, const char *path)
{
    const int w = h->width, typed = h->types.ntypes > 1, ref = w >= 9;
    for (int k = 0; k < n; k++) {
        const double *r = rec + (size_t) w * (size_t) k;
        if (typed && !(r[w - 1] >= 1 && r[w - 1] <= h->types.ntypes && r[w - 1] == floor(r[w - 1])))
            return hxi_error(HX_ERR_PARSE,
                             "restart file %s: atom %lld has type %g; the file has types 1 to %d",
                             path, (long long) (first + k), r[w - 1], h->types.ntypes);
        if (!rst_atom_ok(&sys->decomp, r, w))
            return hxi_error(
                HX_ERR_PARSE,
                "restart file %s: atom %lld is not finite or lies far outside the "
                "box (at %g %g %g): the file is damaged or was not written by a sane run",
                path, (long long) (first + k), r[0], r[1], r[2]);
        if (hx_decomp_owner(&sys->decomp, ref ? r + 6 : r) != sys->decomp.rank)
            continue;
        if (sys->n == sys->capacity || (typed && !sys->type))
            HXI_CHECK(rst_room(sys, ref, typed));
        memcpy(sys->x + 3 * (size_t) sys->n, r, 3 * sizeof(double));
        memcpy(sys->v + 3 * (size_t) sys->n, r + 3, 3 * sizeof(double));
        if (ref)
            memcpy(sys->xref + 3 * (size_t) sys->n, r + 6, 3 * sizeof(double));
        if (typed)
            sys->type[sys->n] = (int32_t) r[w - 1];
        sys->id[sys->n] = first + k;
        sys->n++;
    }
    return HX_OK;
}

/* Collective: fix nvt's chain after the records (rank 0 reads it from fp,
 * checks it, and every rank gets it), into sys. */
static hx_status rst_read_trailer(hx_comm *comm, FILE *fp, const hxi_md_restart *h,
                                  const char *path, hx_md_system *sys)
{
    double t[2 + 3 * HX_MD_NVT_MAX_CHAIN];
    const size_t tb = (size_t) h->trailer_bytes;
    hx_status st = HX_OK;
    sys->has_nh = 0;
    if (tb == 0)
        return HX_OK;
    if (hx_comm_rank(comm) == 0) {
        if (fread(t, 1, tb, fp) != tb)
            st = hxi_error(HX_ERR_PARSE, "restart file %s: truncated in its thermostat", path);
        else if (hxi_rst_fnv(RST_FNV_START, t, tb) != h->trailer_sum ||
                 t[0] != (double) (tb / 8 - 2) / 3)
            st = hxi_error(HX_ERR_PARSE,
                           "restart file %s: the thermostat's checksum does not match: the "
                           "file is damaged",
                           path);
    }
    HXI_CHECK(hxi_agree(comm, st));
    HXI_CHECK(hxi_bcast(comm, t, tb, 0));
    sys->nh_n = (int) t[0];
    sys->nh_t = t[1];
    memcpy(sys->nh, t + 2, 3 * (size_t) sys->nh_n * sizeof(double));
    sys->has_nh = 1;
    return HX_OK;
}

hx_status hxi_md_restart_read_atoms(hx_comm *comm, const char *path, const hxi_md_restart *h,
                                    hx_md_system *sys)
{
    const int rank = hx_comm_rank(comm);
    double *chunk = NULL;
    FILE *fp = NULL;
    uint64_t sum = RST_FNV_START, want = 0;
    hx_status st;

    sys->n = 0;
    sys->natoms = h->natoms;
    sys->has_ref = h->width >= 9;
    sys->ref_ago = h->ago;
    hxi_md_restart_cuts_restore(h, &sys->decomp, path);
    st = hxi_alloc((void **) &chunk, (size_t) RST_CHUNK * 10 * sizeof(double), "restart chunk");
    if (st == HX_OK && rank == 0) {
        unsigned char buf[RST_HEADER];
        hxi_md_restart again;
        int64_t fsize = 0;
        st = rst_open(path, &fp, &fsize);
        /* The file may have changed since the header was read: check again. */
        if (st == HX_OK && fread(buf, 1, RST_HEADER, fp) != RST_HEADER)
            st = hxi_error(HX_ERR_PARSE, "restart file %s: truncated", path);
        if (st == HX_OK)
            st = hxi_rst_decode(buf, fsize, path, &again, &want);
        if (st == HX_OK && (again.natoms != h->natoms || again.step != h->step ||
                            again.types.ntypes != h->types.ntypes))
            st = hxi_error(HX_ERR_PARSE, "restart file %s changed while it was read", path);
        if (st == HX_OK && h->cuts_block + hxi_rst_types_bytes(h) > 0 &&
            fseek(fp, (long) (h->cuts_block + hxi_rst_types_bytes(h)), SEEK_CUR))
            st = hxi_error(HX_ERR_PARSE, "restart file %s: truncated", path);
    }
    st = hxi_agree(comm, st);
    for (int64_t first = 0; st == HX_OK && first < h->natoms; first += RST_CHUNK) {
        int n = h->natoms - first < RST_CHUNK ? (int) (h->natoms - first) : RST_CHUNK;
        size_t nbytes = 8 * (size_t) h->width * (size_t) n;
        if (rank == 0) {
            if (fread(chunk, 1, nbytes, fp) != nbytes)
                st = hxi_error(HX_ERR_PARSE, "restart file %s: truncated at atom %lld", path,
                               (long long) first);
            else
                sum = hxi_rst_fnv(sum, chunk, nbytes);
        }
        st = hxi_agree(comm, st);
        if (st == HX_OK)
            st = hxi_bcast(comm, chunk, nbytes, 0);
        if (st == HX_OK)
            st = hxi_agree(comm, rst_keep(sys, h, chunk, first, n, path));
    }
    if (st == HX_OK)
        st = rst_read_trailer(comm, fp, h, path, sys);
    if (st == HX_OK && rank == 0 && sum != want)
        st = hxi_error(HX_ERR_PARSE,
                       "restart file %s: the atoms' checksum does not match: the file is "
                       "damaged",
                       path);
    if (fp)
        fclose(fp);
    free(chunk);
    return hxi_agree(comm, st);
}

void hxi_md_restart_apply(const hxi_md_restart *h, hx_md_config *cfg)
{
    memcpy(cfg->cells, h->cells, sizeof cfg->cells);
    cfg->density = h->density;
    memcpy(cfg->tilt, h->tilt, sizeof cfg->tilt);
    cfg->triclinic = h->tilt[0] != 0.0 || h->tilt[1] != 0.0 || h->tilt[2] != 0.0;
    if (!(cfg->given & HX_MD_GIVEN_MASS))
        cfg->mass = h->mass;
    if (!(cfg->given & HX_MD_GIVEN_RC))
        cfg->rc = h->rc;
    if (!(cfg->given & HX_MD_GIVEN_PAIR)) {
        cfg->pair_style = h->pair_style;
        memcpy(cfg->pair, h->pair, sizeof cfg->pair);
    }
    if (!(cfg->given & HX_MD_GIVEN_SHIFT))
        cfg->shift_energy = h->shift_energy;
    if (!(cfg->given & HX_MD_GIVEN_DT))
        cfg->dt = h->dt;
    hxi_md_restart_types_apply(&h->types, cfg);
}
