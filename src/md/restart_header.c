/*
 * restart_header.c - the header of halox-md's restart files: encoded,
 * decoded and checked (restart.c writes and reads the files).
 *
 * Layout, version 6 (fields in the writer's byte order; the endianness
 * mark says which):
 *   bytes   0..7    "HALOXRST"
 *           8..11   version (uint32, 6)
 *          12..15   endianness mark (uint32 0x01020304)
 *          16..23   header size (uint64: 256, and the cuts' block's size
 *                   where the file holds one)
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
 *   then, where the decomposition had cuts of its own (`balance`, `fix
 *   balance`), the cuts' block (restart_cuts.c: the rank grid, the cuts,
 *   its checksum; the header's size counts it); where N > 1, the types block (restart_types.c: the
 types' masses,
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
 * 152..159 and 180..183) an orthorhombic box; versions 1 to 5 (header
 * size 256) no cuts: uniform domains.
 * Checksums: FNV-1a over 64-bit words (the bytes in file order, 8 at a
 * time, as little-endian words), so a flipped bit anywhere is found.

 */
#define _XOPEN_SOURCE 700 /* PATH_MAX */

#include "md/restart_header.h"
#include "md/pair/pair_styles.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#define RST_ENDIAN 0x01020304u
static const char rst_magic[8] = {'H', 'A', 'L', 'O', 'X', 'R', 'S', 'T'};

/* ------------------------------------------------------------ checksum */

#define RST_FNV_PRIME 0x100000001b3ull

/* n must be a multiple of 8. */
uint64_t hxi_rst_fnv(uint64_t h, const void *data, size_t n)
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

void hxi_rst_encode(unsigned char *buf, const hxi_md_restart *h, uint64_t payload_sum)
{
    const uint32_t version = RST_VERSION, endian = RST_ENDIAN, width = (uint32_t) h->width;
    const uint64_t hsize = RST_HEADER + hxi_rst_cuts_bytes(h),
                   psize = 8 * (uint64_t) h->width * (uint64_t) h->natoms;
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
        const uint64_t ysum = (hxi_md_restart_types_encode(blk, &h->types),
                               hxi_rst_fnv(RST_FNV_START, blk, sizeof blk));
        put(buf, 204, &n, 4);
        put(buf, 240, &ysum, 8);
    }
    put(buf, 208, &h->pair[2], 2 * sizeof(double));
    put(buf, 224, &h->trailer_bytes, 8);
    put(buf, 232, &h->trailer_sum, 8);
    hsum = hxi_rst_fnv(RST_FNV_START, buf, 248);
    put(buf, 248, &hsum, 8);
}

/* The fields of a header whose checksum matched. */
static void rst_fields(const unsigned char *buf, uint32_t version, hxi_md_restart *h,
                       uint64_t *psize, uint64_t *payload_sum)
{
    uint64_t hsize;
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
    get(buf, 16, &hsize, 8);
    h->cut_mask = 0;
    h->cuts_block = version >= 6 && hsize > RST_HEADER ? hsize - RST_HEADER : 0;
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
    /* A box filled in part (create_atoms T region ID) holds fewer. */
    if (h->natoms > cells)
        return hxi_error(
            HX_ERR_PARSE,
            "restart file %s: %lld atoms, but %d x %d x %d fcc cells hold at most %lld", path,
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
uint64_t hxi_rst_types_bytes(const hxi_md_restart *h)
{
    return h->types.ntypes > 1 ? HXI_MD_RST_TYPES : 0;
}

/* Checks a header read from `path` (file length `fsize`) and decodes it. */
hx_status hxi_rst_decode(const unsigned char *buf, int64_t fsize, const char *path,
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
    if (hsum != hxi_rst_fnv(RST_FNV_START, buf, 248))
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: the header's checksum does not match: the file is "
                         "damaged",
                         path);
    get(buf, 16, &hsize, 8);
    rst_fields(buf, version, h, &psize, payload_sum);
    const int typed = h->types.ntypes > 1;
    if (hsize != RST_HEADER + h->cuts_block || h->cuts_block > RST_CUTS_MAX ||
        h->cuts_block % 8 != 0 || (h->cuts_block > 0 && h->cuts_block < 32) || h->natoms < 2 ||
        h->natoms > ((int64_t) 1 << 40) || h->types.ntypes > HX_MD_MAX_TYPES ||
        (h->width != 6 + typed && h->width != 9 + typed) ||
        psize != 8 * (uint64_t) h->width * (uint64_t) h->natoms || h->step < 0)
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: inconsistent header (%lld atoms, %d values each, %llu "
                         "payload bytes, step %lld, header %llu bytes)",
                         path, (long long) h->natoms, h->width, (unsigned long long) psize,
                         (long long) h->step, (unsigned long long) hsize);
    const uint64_t tb = h->trailer_bytes, tn = tb / 8;
    if (tb != 0 && (tb % 8 != 0 || tn < 5 || (tn - 2) % 3 != 0 ||
                    (tn - 2) / 3 > (uint64_t) HX_MD_NVT_MAX_CHAIN))
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: a thermostat trailer of %llu bytes is not a chain "
                         "of 1 to %d",
                         path, (unsigned long long) tb, (int) HX_MD_NVT_MAX_CHAIN);
    const uint64_t whole = hsize + hxi_rst_types_bytes(h) + psize + tb;
    if (fsize != (int64_t) whole)
        return hxi_error(HX_ERR_PARSE,
                         "restart file %s: %lld bytes, but its header describes %llu: the file "
                         "is %s",
                         path, (long long) fsize, (unsigned long long) whole,
                         fsize < (int64_t) whole ? "truncated" : "too long");
    return rst_fields_agree(h, path);
}
