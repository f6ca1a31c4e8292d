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
 */
#include "md/md.h"

#include "core/hxi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double hxi_fcc_basis[4][3] = {
    {0.0, 0.0, 0.0}, {0.5, 0.5, 0.0}, {0.5, 0.0, 0.5}, {0.0, 0.5, 0.5}};

double hx_md_lattice_constant(const hx_md_config *cfg)
{
    return pow(4.0 / cfg->density, 1.0 / 3.0);
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

    for (int k = 0; k < 3; k++)
        hxi_cell_range(d->dom_lo[k] - lo[k], d->dom_hi[k] - lo[k], a, cfg->cells[k], &r0[k],
                       &r1[k]);
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
fail:
    free(x);
    free(v);
    free(id);
    return st;
}
