/*
 * restart.c - halox-md's restart files: write (write_restart, restart N,
 * --checkpoint) and read (read_restart, --restart).
 *
 * Layout, version 5 (fields in the writer's byte order; the endianness
 * mark says which):
 *   bytes   0..7    "HALOXRST"
 *           8..11   version (uint32, 5)
 *          12..15   endianness mark (uint32 0x01020304)
 *          16..23   header size (uint64, 256)
 *          24..31   step (int64)
 *          32..39   atoms N (int64)
 *          40..51   lattice cells (3 x int32)
 *          52..55   pair_modify shift (int32, 0 or 1)
 *          56..151  density, box origin (3), box lengths (3), mass, pair
 *                   cutoff, pair parameters 0 and 1 (lj/cut: epsilon,
 *                   sigma), timestep (12 x double)
 *         152..159  the box's tilts xy and xz (2 x int32), in half lattice
 *                   cells (a tilt is n a / 2, a = (4 / density)^(1/3))
 *         160..167  payload size (uint64, 8 W N)
 *         168..175  payload checksum (uint64)
 *         176..179  W, doubles a record (uint32, 6 or 9; 7 or 10 with
 *                   several atom types, the type last)
 *         180..183  the tilt yz (int32, half lattice cells)
 *         184..191  steps since the last neighbour-list build (int64;
 *                   -1 where the file holds no list positions, W 6)
 *         192..199  neighbour skin of that build (double)
 *         200..203  pair style (int32, HX_PAIR_* of md/pair/pair_eval.h)
 *         204..207  atom types N (int32; 0 or 1: one, no types block)
 *         208..223  pair parameters 2 and 3 (2 x double; pair_styles.c
 *                   says what each style's are)
 *         224..231  trailer size T (uint64; 0: none)
 *         232..239  trailer checksum (uint64)
 *         240..247  the types block's checksum (uint64; 0 with one type)
 *         248..255  header checksum (uint64, over bytes 0..247)
 *   then, where N > 1, the types block (restart_types.c: the types' masses,
 *   the mixing rule and the pairs pair_coeff gave), then N records of W
 *   doubles, x, v, (W 9, 10) the position of the last list build and (W 7,
 *   10) the atom's type, in atom-id order: the state does not depend on the
 *   decomposition, so a file is read on any rank count and by either
 *   engine. With the list positions the CPU engine builds its first lists
 *   from them and keeps the neighbour schedule, so that a continued run
 *   repeats the run that wrote the file bit for bit, and writing a file
 *   never changes the run (no rebuild is forced before it).
 *   Then, where T > 0, fix nvt's chain: T / 8 doubles, its length n, the
 *   temperature it last saw, then eta, eta_dot and eta_dotdot (n each), so
 *   that a continued run with the same fix nvt goes on from the chain's
 *   state (as LAMMPS's fix nvt writes it into its restart files).
 * Versions 1 (W 6 and zeros at 176..199) and 2 (zeros at 200..247) are
 * still read: their pair style is lj/cut; they and version 3 (zeros at
 * 204..207 and 240..247) hold one atom type; versions 1 to 4 (zeros at
 * 152..159 and 180..183) an orthorhombic box.
 * Checksums: FNV-1a over 64-bit words (the bytes in file order, 8 at a
 * time, as little-endian words), so a flipped bit anywhere is found.
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
#include "md/pair/pair_styles.h"

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

enum { RST_HEADER = 256, RST_VERSION = 5, RST_CHUNK = 65536 };
#define RST_ENDIAN 0x01020304u
static const char rst_magic[8] = {'H', 'A', 'L', 'O', 'X', 'R', 'S', 'T'};

/* ------------------------------------------------------------ checksum */

#define RST_FNV_START 0xcbf29ce484222325ull
#define RST_FNV_PRIME 0x100000001b3ull

/* n must be a multiple of 8. */
static uint64_t rst_fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        for (int k = 7; k >= 0; k--)
            w = (w << 8) | b[i + (size_t) k];
        h ^= w;
        h *= RST_FNV_PRIME;
    }
    return h;
}

/* -------------------------------------------------------------- header */

static void put(unsigned char *buf, size_t at, const void *v, size_t n)
{
    memcpy(buf + at, v, n);
}

static void get(const unsigned char *buf, size_t at, void *v, size_t n)
{
    memcpy(v, buf + at, n);
}

/* The fcc lattice constant, as hx_md_lattice_constant makes it. */
static double rst_lattice_a(double density)
{
    return pow(4.0 / density, 1.0 / 3.0);
}

/* Tilt k in half lattice cells (the deck's tilts are whole halves). */
static int32_t rst_half_cells(const hxi_md_restart *h, int k)
{
    const double n = floor(2.0 * h->tilt[k] / rst_lattice_a(h->density) + 0.5);
    return fabs(n) < (1 << 30) ? (int32_t) n : 0;
}

static void rst_encode(unsigned char *buf, const hxi_md_restart *h, uint64_t payload_sum)
{
    const uint32_t version = RST_VERSION, endian = RST_ENDIAN, width = (uint32_t) h->width;
    const uint64_t hsize = RST_HEADER, psize = 8 * (uint64_t) h->width * (uint64_t) h->natoms;
    const int32_t shift = h->shift_energy, style = h->pair_style;
    const double d[12] = {h->density,    h->box_lo[0],  h->box_lo[1],  h->box_lo[2],
                          h->box_len[0], h->box_len[1], h->box_len[2], h->mass,
                          h->rc,         h->pair[0],    h->pair[1],    h->dt};
    uint64_t hsum;
    memset(buf, 0, RST_HEADER);
    put(buf, 0, rst_magic, 8);
    put(buf, 8, &version, 4);
    put(buf, 12, &endian, 4);
    put(buf, 16, &hsize, 8);
    put(buf, 24, &h->step, 8);
    put(buf, 32, &h->natoms, 8);
    for (int k = 0; k < 3; k++) {
        int32_t c = h->cells[k];
        put(buf, 40 + 4 * (size_t) k, &c, 4);
    }
    put(buf, 52, &shift, 4);
    put(buf, 56, d, sizeof d);
    for (int k = 0; k < 3; k++) {
        const int32_t half = rst_half_cells(h, k);
        put(buf, k < 2 ? 152 + 4 * (size_t) k : 180, &half, 4);
    }
    put(buf, 160, &psize, 8);
    put(buf, 168, &payload_sum, 8);
    put(buf, 176, &width, 4);
    put(buf, 184, &h->ago, 8);
    put(buf, 192, &h->skin, 8);
    put(buf, 200, &style, 4);
    if (h->types.ntypes > 1) {
        unsigned char blk[HXI_MD_RST_TYPES];
        const int32_t n = h->types.ntypes;
        const uint64_t ysum =
            (hxi_md_restart_types_encode(blk, &h->types), rst_fnv(RST_FNV_START, blk, sizeof blk));
        put(buf, 204, &n, 4);
        put(buf, 240, &ysum, 8);
    }
    put(buf, 208, &h->pair[2], 2 * sizeof(double));
    put(buf, 224, &h->trailer_bytes, 8);
    put(buf, 232, &h->trailer_sum, 8);
    hsum = rst_fnv(RST_FNV_START, buf, 248);
    put(buf, 248, &hsum, 8);
}

/* The fields of a header whose checksum matched. */
static void rst_fields(const unsigned char *buf, uint32_t version, hxi_md_restart *h,
                       uint64_t *psize, uint64_t *payload_sum)
{
    int32_t cells[3], shift, style = HX_PAIR_LJ_CUT;
    uint32_t width = 6;
    double d[12];
    get(buf, 24, &h->step, 8);
    get(buf, 32, &h->natoms, 8);
    get(buf, 40, cells, sizeof cells);
    get(buf, 52, &shift, 4);
    get(buf, 56, d, sizeof d);
    get(buf, 160, psize, 8);
    get(buf, 168, payload_sum, 8);
    h->ago = -1;
    h->skin = 0;
    if (version >= 2) {
        get(buf, 176, &width, 4);
        get(buf, 184, &h->ago, 8);
        get(buf, 192, &h->skin, 8);
    }
    h->pair[2] = h->pair[3] = 0.0;
    h->trailer_bytes = 0;
    h->trailer_sum = 0;
    h->types_sum = 0;
    memset(&h->types, 0, sizeof h->types);
    h->types.ntypes = 1;
    if (version >= 4) {
        int32_t n;
        get(buf, 204, &n, 4);
        get(buf, 240, &h->types_sum, 8);
        h->types.ntypes = n > 1 ? n : 1;
    }
    if (version >= 3) {
        get(buf, 200, &style, 4);
        get(buf, 208, &h->pair[2], 2 * sizeof(double));
        get(buf, 224, &h->trailer_bytes, 8);
        get(buf, 232, &h->trailer_sum, 8);
    }
    h->pair_style = style;
    h->width = (int) width;
    for (int k = 0; k < 3; k++)
        h->cells[k] = cells[k];
    h->shift_energy = shift;
    h->density = d[0];
    for (int k = 0; k < 3; k++) {
        h->box_lo[k] = d[1 + k];
        h->box_len[k] = d[4 + k];
    }
    for (int k = 0; k < 3; k++) { /* zeros before version 5 */
        int32_t half;
        get(buf, k < 2 ? 152 + 4 * (size_t) k : 180, &half, 4);
        h->tilt[k] = half == 0 ? 0.0 : (double) half * 0.5 * rst_lattice_a(h->density);
    }
    h->mass = d[7];
    h->rc = d[8];
    h->pair[0] = d[9];
    h->pair[1] = d[10];
    h->dt = d[11];
}

static int rst_positive(double v)
{
    return isfinite(v) && v > 0;
}

/* The pair style and its parameters, as the deck would have had them. */
static hx_status rst_pair_valid(const hxi_md_restart *h, const char *path)
{
    char where[PATH_MAX + 32];
    snprintf(where, sizeof where, "restart file %s: ", path);
    return hxi_pair_valid(h->pair_style, h->pair, h->rc, HX_ERR_PARSE, where);
}

/* The header's fields against each other: a file whose checksums match
 * may still have been written wrong, or made by hand. */
static hx_status rst_fields_agree(const hxi_md_restart *h, const char *path)
{
    const double a = rst_positive(h->density) ? cbrt(4.0 / h->density) : 0;
    int64_t cells = 4;
    for (int k = 0; k < 3; k++) {
        if (h->cells[k] < 1 || h->cells[k] > (1 << 20))
            return hxi_error(HX_ERR_PARSE, "restart file %s: lattice cells %d x %d x %d", path,
                             h->cells[0], h->cells[1], h->cells[2]);
        cells *= h->cells[k];
    }
    if (cells != h->natoms)
        return hxi_error(
            HX_ERR_PARSE, "restart file %s: %lld atoms, but %d x %d x %d fcc cells hold %lld", path,
            (long long) h->natoms, h->cells[0], h->cells[1], h->cells[2], (long long) cells);
    for (int k = 0; k < 3; k++)
        if (!(a > 0) || !isfinite(h->box_lo[k]) || fabs(h->box_lo[k]) > 1e12 ||
            !(fabs(h->box_len[k] - h->cells[k] * a) <= 1e-9 * h->box_len[k]))
            return hxi_error(HX_ERR_PARSE,
                             "restart file %s: the box (origin %g, length %g along dimension %d) "
                             "is not that of %d cells at density %g",
                             path, h->box_lo[k], h->box_len[k], k, h->cells[k], h->density);
    if (!(fabs(h->tilt[0]) <= 0.5 * h->box_len[0] && fabs(h->tilt[1]) <= 0.5 * h->box_len[0] &&
          fabs(h->tilt[2]) <= 0.5 * h->box_len[1]))
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: tilts %g %g %g beyond LAMMPS's limits (|xy|, |xz| "
                         "<= lx / 2, |yz| <= ly / 2)",
                         path, h->tilt[0], h->tilt[1], h->tilt[2]);
    if (!rst_positive(h->mass) || !rst_positive(h->dt) || (h->shift_energy & ~1) ||
        !isfinite(h->skin) || h->skin < 0)
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: mass %g, timestep %g, shift %d, skin %g: each must be "
                         "finite and positive (shift 0 or 1, skin >= 0)",
                         path, h->mass, h->dt, h->shift_energy, h->skin);
    HXI_CHECK(rst_pair_valid(h, path));
    if (h->step > HXI_MD_STEP_MAX || h->ago < -1 || h->ago > h->step ||
        (h->width < 9) != (h->ago == -1))
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: step %lld, %lld steps since the last list build, %d "
                         "values an atom: inconsistent (the step must be at most %lld)",
                         path, (long long) h->step, (long long) h->ago, h->width,
                         (long long) HXI_MD_STEP_MAX);
    return HX_OK;
}

/* The types block's bytes after the header. */
static uint64_t rst_types_bytes(const hxi_md_restart *h)
{
    return h->types.ntypes > 1 ? HXI_MD_RST_TYPES : 0;
}

/* Checks a header read from `path` (file length `fsize`) and decodes it. */
static hx_status rst_decode(const unsigned char *buf, int64_t fsize, const char *path,
                            hxi_md_restart *h, uint64_t *payload_sum)
{
    uint32_t version, endian;
    uint64_t hsize, psize, hsum;
    if (memcmp(buf, rst_magic, 8) != 0)
        return hxi_error(HX_ERR_PARSE, "restart file %s: not a halox-md restart file", path);
    get(buf, 12, &endian, 4);
    if (endian != RST_ENDIAN)
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: written on a machine of the other byte order; "
                         "halox-md reads restart files of its own byte order only",
                         path);
    get(buf, 8, &version, 4);
    if (version < 1 || version > RST_VERSION)
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: version %u; this halox-md reads versions 1 to %d", path,
                         (unsigned) version, RST_VERSION);
    get(buf, 248, &hsum, 8);
    if (hsum != rst_fnv(RST_FNV_START, buf, 248))
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: the header's checksum does not match: the file is "
                         "damaged",
                         path);
    get(buf, 16, &hsize, 8);
    rst_fields(buf, version, h, &psize, payload_sum);
    const int typed = h->types.ntypes > 1;
    if (hsize != RST_HEADER || h->natoms < 2 || h->natoms > ((int64_t) 1 << 40) ||
        h->types.ntypes > HX_MD_MAX_TYPES || (h->width != 6 + typed && h->width != 9 + typed) ||
        psize != 8 * (uint64_t) h->width * (uint64_t) h->natoms || h->step < 0)
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: inconsistent header (%lld atoms, %d values each, %llu "
                         "payload bytes, step %lld)",
                         path, (long long) h->natoms, h->width, (unsigned long long) psize,
                         (long long) h->step);
    const uint64_t tb = h->trailer_bytes, tn = tb / 8;
    if (tb != 0 && (tb % 8 != 0 || tn < 5 || (tn - 2) % 3 != 0 ||
                    (tn - 2) / 3 > (uint64_t) HX_MD_NVT_MAX_CHAIN))
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: a thermostat trailer of %llu bytes is not a chain "
                         "of 1 to %d",
                         path, (unsigned long long) tb, (int) HX_MD_NVT_MAX_CHAIN);
    const uint64_t whole = RST_HEADER + rst_types_bytes(h) + psize + tb;
    if (fsize != (int64_t) whole)
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: %lld bytes, but its header describes %llu: the file "
                         "is %s",
                         path, (long long) fsize, (unsigned long long) whole,
                         fsize < (int64_t) whole ? "truncated" : "too long");
    return rst_fields_agree(h, path);
}

/* --------------------------------------------------------------- write */

/* What follows the header: the atoms' records and the trailer. */
typedef struct rst_body {
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
        unsigned char blk[HXI_MD_RST_TYPES];
        rst_body body = {blk, 0, g->all, nbytes, trailer, 0};
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
        h.trailer_sum = rst_fnv(RST_FNV_START, trailer, body.tbytes);
        rst_encode(header, &h, rst_fnv(RST_FNV_START, g->all, nbytes));
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
    if (rst_fnv(RST_FNV_START, blk, HXI_MD_RST_TYPES) != h->types_sum)
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: the atom types' checksum does not match: the file "
                         "is damaged",
                         path);
    return hxi_md_restart_types_decode(blk, &h->types, path);
}

hx_status hxi_md_restart_read_header(hx_comm *comm, const char *path, hxi_md_restart *h)
{
    unsigned char buf[RST_HEADER], blk[HXI_MD_RST_TYPES];
    uint64_t psum = 0;
    hx_status st = HX_OK;
    memset(buf, 0, sizeof buf);
    memset(blk, 0, sizeof blk);
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
                st = rst_decode(buf, fsize, path, h, &psum);
            if (st == HX_OK && h->types.ntypes > 1)
                st = rst_read_types(fp, path, h, blk);
            fclose(fp);
        }
    }
    HXI_CHECK(hxi_agree(comm, st));
    HXI_CHECK(hxi_bcast(comm, buf, sizeof buf, 0));
    HXI_CHECK(hxi_bcast(comm, blk, sizeof blk, 0));
    {
        /* Every rank decodes the same bytes; the length was checked on 0. */
        int64_t fsize = 0, tbytes = 0;
        uint32_t version = 0;
        int32_t ntypes = 0;
        memcpy(&fsize, buf + 160, 8);
        memcpy(&version, buf + 8, 4);
        if (version >= 3)
            memcpy(&tbytes, buf + 224, 8);
        if (version >= 4)
            memcpy(&ntypes, buf + 204, 4);
        fsize += RST_HEADER + tbytes + (ntypes > 1 ? HXI_MD_RST_TYPES : 0);
        HXI_CHECK(rst_decode(buf, fsize, path, h, &psum));
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
        else if (rst_fnv(RST_FNV_START, t, tb) != h->trailer_sum ||
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
            st = rst_decode(buf, fsize, path, &again, &want);
        if (st == HX_OK && (again.natoms != h->natoms || again.step != h->step ||
                            again.types.ntypes != h->types.ntypes))
            st = hxi_error(HX_ERR_PARSE, "restart file %s changed while it was read", path);
        if (st == HX_OK && rst_types_bytes(h) > 0 && fseek(fp, (long) rst_types_bytes(h), SEEK_CUR))
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
                sum = rst_fnv(sum, chunk, nbytes);
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
