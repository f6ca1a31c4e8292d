/*
 * migrate.c - atoms that left their domain move to their owner.
 *
 * Every atom is first wrapped into the box (by whole edge vectors of a
 * triclinic box); then, dimension by dimension (Z, Y, X), each atom whose
 * height along the dimension (hx_decomp_height) is outside this rank's
 * domain hops one domain per round
 * towards its owner along the shorter periodic way, carrying its
 * coordinates and every registered field; rounds repeat until no atom on any
 * rank is misplaced along that dimension, so any displacement is handled
 * (one round in a normal MD step).
 */
#include "core/hxi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { HXI_TAG_MCOUNT_UP = 201, HXI_TAG_MDATA_UP, HXI_TAG_MCOUNT_DOWN, HXI_TAG_MDATA_DOWN };

/* x wrapped into [lo, lo + len). Far out (|x| of 1e17 box lengths, after
 * a blow-up) len * floor(...) is off by more than a box, and the result
 * would be outside still: there the exact fmod decides. Near the box the
 * subtraction stays, the result LAMMPS's remap gives. */
static double hxi_wrap(double x, double lo, double len)
{
    double t = x - len * floor((x - lo) / len);
    if (t >= lo + len)
        t -= len;
    if (t < lo - len || t >= lo + len) {
        t = fmod(x - lo, len);
        t = lo + (t < 0.0 ? t + len : t);
        if (t >= lo + len)
            t = lo;
    }
    if (t < lo)
        t = lo;
    return t;
}

/* x moved by whole edges of the triclinic box along dim until its height
 * there is in [face_lo, face_lo + h): the edge is orthogonal to the other
 * normals, so the other heights stay. Where rounding leaves it just
 * outside (a height a rounding below face_lo comes back a rounding above
 * the upper face), it is moved inside by a sliver of the edge, as
 * orthorhombic wraps clamp onto the face. 1 when that could not be reached
 * (a coordinate so far out that a box is below its rounding). */
static int hxi_wrap_tilted(const hx_decomp *d, int dim, double *x)
{
    const double lo = d->face_lo[dim], h = d->height[dim];
    const double *e = d->edge[dim];
    double t = hx_decomp_height(d, dim, x);
    for (int tries = 0; tries < 8 && (t < lo || t >= lo + h); tries++) {
        double k = floor((t - lo) / h);
        if (tries >= 4) /* a sliver: (t - lo) / h is then nearly 0 or 1 */
            k = t < lo ? (t - lo) / h - 0x1p-40 : (t - lo - h) / h + 0x1p-40;
        else if (k == 0.0)
            k = t < lo ? -1.0 : 1.0;
        for (int c = 0; c < 3; c++)
            x[c] -= k * e[c];
        t = hx_decomp_height(d, dim, x);
    }
    return t < lo || t >= lo + h;
}

/* Every coordinate of the atom at p finite (else HX_ERR_COORD_NAN) and
 * wrapped into the box: along each dimension by the box length when
 * orthorhombic, by heights along z, y, x when triclinic (a wrap along z
 * moves x and y, so z goes first). */
static hx_status hxi_wrap_atom(const hx_decomp *d, int i, double *p)
{
    for (int k = 0; k < 3; k++)
        if (!isfinite(p[k]))
            return hxi_error(HX_ERR_COORD_NAN,
                             "atom %d has coordinate %c = %g: coordinates must be finite "
                             "(the time step may be too large)",
                             i, "xyz"[k], p[k]);
    if (!d->triclinic) {
        for (int k = 0; k < 3; k++)
            if (p[k] < d->box_lo[k] || p[k] >= d->box_lo[k] + d->box_len[k])
                p[k] = hxi_wrap(p[k], d->box_lo[k], d->box_len[k]);
        return HX_OK;
    }
    for (int k = HX_Z; k >= HX_X; k--)
        if (hxi_wrap_tilted(d, k, p))
            return hxi_error(HX_ERR_COORD_OUTSIDE,
                             "atom %d at (%g, %g, %g) is too far outside the triclinic box to "
                             "be wrapped back along %c: the time step may be too large",
                             i, p[0], p[1], p[2], "xyz"[k]);
    return HX_OK;
}

typedef struct hxi_mig {
    hx_comm *comm;
    const hx_decomp *d;
    int *n, *cap;
    double **x;
    const hx_field *fields;
    int nfields;
    size_t rec;            /* bytes per atom record */
    unsigned char *out[2]; /* records leaving: [0] down, [1] up */
    int nout[2];
    size_t outcap[2];
    unsigned char *in;
    size_t incap;
} hxi_mig;

static void hxi_pack(hxi_mig *m, int i, unsigned char *dst)
{
    memcpy(dst, *m->x + 3 * (size_t) i, 3 * sizeof(double));
    dst += 3 * sizeof(double);
    for (int f = 0; f < m->nfields; f++) {
        memcpy(dst, (char *) *m->fields[f].data + m->fields[f].size * (size_t) i,
               m->fields[f].size);
        dst += m->fields[f].size;
    }
}

static void hxi_unpack(hxi_mig *m, int i, const unsigned char *src)
{
    memcpy(*m->x + 3 * (size_t) i, src, 3 * sizeof(double));
    src += 3 * sizeof(double);
    for (int f = 0; f < m->nfields; f++) {
        memcpy((char *) *m->fields[f].data + m->fields[f].size * (size_t) i, src,
               m->fields[f].size);
        src += m->fields[f].size;
    }
}

static void hxi_move(hxi_mig *m, int to, int from)
{
    memmove(*m->x + 3 * (size_t) to, *m->x + 3 * (size_t) from, 3 * sizeof(double));
    for (int f = 0; f < m->nfields; f++) {
        size_t s = m->fields[f].size;
        char *base = (char *) *m->fields[f].data;
        memmove(base + s * (size_t) to, base + s * (size_t) from, s);
    }
}

static hx_status hxi_reserve(hxi_mig *m, int need)
{
    int cap;
    if (need <= *m->cap)
        return HX_OK;
    cap = need > 2 * *m->cap ? need : 2 * *m->cap;
    HXI_CHECK(hxi_grow((void **) m->x, (size_t) cap * 3 * sizeof(double), "migrated coordinates"));
    for (int f = 0; f < m->nfields; f++)
        HXI_CHECK(
            hxi_grow(m->fields[f].data, (size_t) cap * m->fields[f].size, "a migrated field"));
    *m->cap = cap;
    return HX_OK;
}

/* Takes the atoms misplaced along dim out of the arrays into the outgoing
 * buffers; returns through *misplaced how many were found. */
static hx_status hxi_collect(hxi_mig *m, int dim, int *misplaced)
{
    const hx_decomp *d = m->d;
    int keep = 0, g = d->grid[dim];
    m->nout[0] = m->nout[1] = 0;
    for (int i = 0; i < *m->n; i++) {
        double xi = hx_decomp_height(d, dim, *m->x + 3 * (size_t) i);
        int delta = 0;
        /* The domain bounds are the ownership rule; only atoms outside
         * them need their cell. */
        if (xi < d->dom_lo[dim] || xi >= d->dom_hi[dim])
            delta = ((hx_decomp_cell(d, dim, xi) - d->coord[dim]) % g + g) % g;
        if (delta == 0) {
            if (keep != i)
                hxi_move(m, keep, i);
            keep++;
            continue;
        }
        int dir = delta <= g / 2 ? 1 : 0;
        size_t need = (size_t) (m->nout[dir] + 1) * m->rec;
        if (need > m->outcap[dir]) {
            m->outcap[dir] = 2 * need;
            HXI_CHECK(hxi_grow((void **) &m->out[dir], m->outcap[dir], "migration buffer"));
        }
        hxi_pack(m, i, m->out[dir] + (size_t) m->nout[dir] * m->rec);
        m->nout[dir]++;
    }
    *misplaced = *m->n - keep;
    *m->n = keep;
    return HX_OK;
}

/* Sends out[dir] to the neighbour that way and appends what comes from the
 * other side. */
static hx_status hxi_shift(hxi_mig *m, int dim, int dir)
{
    const hx_decomp *d = m->d;
    int to = dir ? d->up[dim] : d->down[dim];
    int from = dir ? d->down[dim] : d->up[dim];
    int tag = dir ? HXI_TAG_MCOUNT_UP : HXI_TAG_MCOUNT_DOWN;
    int nin = 0;
    hx_status st = HX_OK;

    HXI_CHECK(hxi_sendrecv(m->comm, &m->nout[dir], sizeof(int), to, &nin, sizeof(int), from, tag));
    if ((size_t) nin * m->rec > m->incap) {
        m->incap = (size_t) nin * m->rec;
        st = hxi_grow((void **) &m->in, m->incap, "migration receive buffer");
    }
    if (st == HX_OK)
        st = hxi_reserve(m, *m->n + nin);
    HXI_CHECK(hxi_agree(m->comm, st));
    HXI_CHECK(hxi_sendrecv(m->comm, m->out[dir], (size_t) m->nout[dir] * m->rec, to, m->in,
                           (size_t) nin * m->rec, from, tag + 1));
    for (int k = 0; k < nin; k++)
        hxi_unpack(m, (*m->n)++, m->in + (size_t) k * m->rec);
    return HX_OK;
}

hx_status hx_migrate(hx_comm *comm, const hx_decomp *d, int *n, int *capacity, double **x,
                     const hx_field *fields, int nfields)
{
    hxi_mig m;
    hx_status st = HX_OK;

    memset(&m, 0, sizeof m);
    m.comm = comm;
    m.d = d;
    m.n = n;
    m.cap = capacity;
    m.x = x;
    m.fields = fields;
    m.nfields = nfields;
    m.rec = 3 * sizeof(double);
    if (!d || !n || !capacity || !x || (nfields > 0 && !fields))
        st = hxi_error(HX_ERR_INVALID, "migrate: the decomposition, the atom count, the "
                                       "capacity, the coordinates and the fields must be given");
    else if (*n < 0 || *n > *capacity || (*n > 0 && !*x) || nfields < 0)
        st = hxi_error(HX_ERR_INVALID,
                       "migrate: %d atoms in room for %d: need 0 <= n <= "
                       "capacity and arrays for them",
                       *n, *capacity);
    for (int f = 0; st == HX_OK && f < nfields; f++) {
        if (!fields[f].data || (*n > 0 && !*fields[f].data) || fields[f].size == 0)
            st = hxi_error(HX_ERR_INVALID, "migrate: field %d has no data or zero size", f);
        m.rec += fields[f].size;
    }
    for (int i = 0; st == HX_OK && i < *n; i++)
        st = hxi_wrap_atom(d, i, *x + 3 * (size_t) i);
    HXI_CHECK(hxi_agree(comm, st));
    /* Ranks with other cuts would pass atoms back and forth: say so. */
    HXI_CHECK(hxi_decomp_agree(comm, d));

    for (int dim = HX_Z; dim >= HX_X; dim--) {
        if (d->grid[dim] == 1)
            continue;
        for (int round = 0;; round++) {
            int misplaced = 0;
            st = hxi_collect(&m, dim, &misplaced);
            HXI_CHECK_GOTO(hxi_agree(comm, st), st, done);
            HXI_CHECK_GOTO(hxi_allreduce_int(comm, &misplaced, 1, 0), st, done);
            if (misplaced == 0)
                break;
            if (round > d->grid[dim]) {
                st = hxi_error(HX_ERR_STATE,
                               "migrate: atoms still misplaced along %c after "
                               "%d rounds",
                               "xyz"[dim], round);
                goto done;
            }
            HXI_CHECK_GOTO(hxi_shift(&m, dim, 1), st, done);
            HXI_CHECK_GOTO(hxi_shift(&m, dim, 0), st, done);
        }
    }
done:
    free(m.out[0]);
    free(m.out[1]);
    free(m.in);
    return st;
}
