/*
 * velocity.c - initial velocities.
 *
 * HX_MD_VEL_LAMMPS (the default) is LAMMPS's `velocity create`, in
 * velocity_lammps.c. The two modes here compute each atom's raw velocity
 * from its lattice site alone, and every rank sweeps the whole lattice once (no communication) to
 * form the two global sums the set-up needs (total momentum, then kinetic energy) in one fixed
 * order. The sums are therefore bitwise identical on every rank and for every rank count, and so
 * are the velocities. The sweep costs O(N) hashing per rank, negligible next to one force pass;
 * LAMMPS's `velocity ... loop all` does the same.
 *
 * HX_MD_VEL_HALOX: raw components uniform in [-1/2, 1/2) from a splitmix64
 *   stream keyed by (seed, global id); momentum zeroed (subtract the mean);
 *   scaled to T over 3N-3 degrees of freedom. Sums run in id order.
 *
 * HX_MD_VEL_MINIMD: miniMD's ref/setup.cpp (create_atoms, create_velocity).
 *   Sites live on the half-lattice (i, j, k) in [0, 2NX) x [0, 2NY) x
 *   [0, 2NZ) with i + j + k even, at 0.5 a (i, j, k). A site's stream is the
 *   Park-Miller generator (16807, 2^31 - 1) seeded with
 *   n = k (2NY)(2NX) + j (2NX) + i + 1; it discards 5 values before each of
 *   vx, vy, vz, so vx, vy, vz are the 6th, 12th and 18th values, each
 *   idum / (2^31 - 1) in (0, 1). The seed of the deck is not used (miniMD
 *   has none). miniMD's one-process atom order is its loop over 8x8x8 blocks
 *   of sites: blocks with x fastest, then y, then z, and sites within a block
 *   with x fastest. In that order: vtot = sum(v) / N and v -= vtot; then
 *   t = sum((vx vx + vy vy + vz vz) m) * (1 / (3N - 3)) and v *= sqrt(T / t).
 *   miniMD's temperature also has 3N-3 degrees of freedom. The arithmetic is
 *   reproduced operation for operation, so the velocities equal those of a
 *   one-process miniMD run bit for bit (with MMD_float double).
 */
#include "md/md.h"

#include "core/hxi.h"
#include "md/park_miller.h"
#include "md/velocity_lammps.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ halox mode */

static uint64_t hxi_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Three components uniform in [-1/2, 1/2), 53 random bits each; the key
 * mixes seed and id so that neighbouring ids give unrelated streams. */
static void hxi_halox_raw(uint64_t seed, int64_t id, double u[3])
{
    uint64_t s = hxi_mix64(seed ^ 0x6a09e667f3bcc909ull) ^ hxi_mix64((uint64_t) id + 1);
    for (int k = 0; k < 3; k++) {
        s += 0x9e3779b97f4a7c15ull;
        u[k] = (double) (hxi_mix64(s) >> 11) * 0x1.0p-53 - 0.5;
    }
}

static hx_status hxi_vel_halox(hx_md_system *sys, const hx_md_config *cfg)
{
    const int64_t N = sys->natoms;
    double sum[3] = {0, 0, 0}, mean[3], mv2 = 0, u[3], t, factor;

    for (int64_t id = 0; id < N; id++) {
        hxi_halox_raw(cfg->seed, id, u);
        for (int k = 0; k < 3; k++)
            sum[k] += u[k];
    }
    for (int k = 0; k < 3; k++)
        mean[k] = sum[k] / (double) N;
    for (int64_t id = 0; id < N; id++) {
        hxi_halox_raw(cfg->seed, id, u);
        for (int k = 0; k < 3; k++) {
            double w = u[k] - mean[k];
            mv2 += cfg->mass * w * w;
        }
    }
    t = mv2 / (double) (3 * N - 3);
    factor = t > 0 ? sqrt(cfg->temperature / t) : 0.0;
    for (int i = 0; i < sys->n; i++) {
        hxi_halox_raw(cfg->seed, sys->id[i], u);
        for (int k = 0; k < 3; k++)
            sys->v[3 * (size_t) i + k] = (u[k] - mean[k]) * factor;
    }
    return HX_OK;
}

/* ----------------------------------------------------------- miniMD mode */

/* Raw velocity of half-lattice site (i, j, k). */
static void hxi_minimd_raw(const int cells[3], int i, int j, int k, double v[3])
{
    int n = k * (2 * cells[1]) * (2 * cells[0]) + j * (2 * cells[0]) + i + 1;
    for (int c = 0; c < 3; c++) {
        for (int m = 0; m < 5; m++)
            hxi_park_miller(&n);
        v[c] = hxi_park_miller(&n);
    }
}

/* Half-lattice site of a global id (see lattice.c for the id order). */
static void hxi_minimd_site(const int cells[3], int64_t id, int s[3])
{
    static const int twice_basis[4][3] = {{0, 0, 0}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}};
    int m = (int) (id % 4);
    int64_t c = id / 4;
    int ci = (int) (c % cells[0]);
    int cj = (int) ((c / cells[0]) % cells[1]);
    int ck = (int) (c / ((int64_t) cells[0] * cells[1]));
    s[0] = 2 * ci + twice_basis[m][0];
    s[1] = 2 * cj + twice_basis[m][1];
    s[2] = 2 * ck + twice_basis[m][2];
}

/* Visits every site in miniMD's one-process order. pass 0 sums v into
 * acc[0..2]; pass 1 sums (v - vtot)^2 m into acc[0], miniMD's way. */
static void hxi_minimd_sweep(const int cells[3], int pass, const double vtot[3], double mass,
                             double acc[3])
{
    const int sub = 8;
    const int ihi = 2 * cells[0] - 1, jhi = 2 * cells[1] - 1, khi = 2 * cells[2] - 1;
    for (int oz = 0; oz * sub <= khi; oz++)
        for (int oy = 0; oy * sub <= jhi; oy++)
            for (int ox = 0; ox * sub <= ihi; ox++)
                for (int sz = 0; sz < sub; sz++)
                    for (int sy = 0; sy < sub; sy++)
                        for (int sx = 0; sx < sub; sx++) {
                            int i = ox * sub + sx, j = oy * sub + sy, k = oz * sub + sz;
                            double v[3];
                            if ((i + j + k) % 2 != 0 || i > ihi || j > jhi || k > khi)
                                continue;
                            hxi_minimd_raw(cells, i, j, k, v);
                            if (pass == 0) {
                                acc[0] += v[0];
                                acc[1] += v[1];
                                acc[2] += v[2];
                            } else {
                                double vx = v[0] - vtot[0], vy = v[1] - vtot[1],
                                       vz = v[2] - vtot[2];
                                acc[0] += (vx * vx + vy * vy + vz * vz) * mass;
                            }
                        }
}

static hx_status hxi_vel_minimd(hx_md_system *sys, const hx_md_config *cfg)
{
    const int *cells = cfg->cells;
    double sum[3] = {0, 0, 0}, vtot[3], t[3] = {0, 0, 0}, t_scale, factor;
    int64_t sites = 8 * (int64_t) cells[0] * cells[1] * cells[2];

    if (sites > INT32_MAX)
        return hxi_error(HX_ERR_INVALID,
                         "miniMD velocities seed each site with a 32-bit int: %lld sites are "
                         "too many; use the halox velocity mode",
                         (long long) sites);
    hxi_minimd_sweep(cells, 0, NULL, cfg->mass, sum);
    for (int k = 0; k < 3; k++)
        vtot[k] = sum[k] / sys->natoms;
    hxi_minimd_sweep(cells, 1, vtot, cfg->mass, t);
    t_scale = 1.0 / (double) (sys->natoms * 3 - 3);
    t[0] = t[0] * t_scale;
    factor = t[0] > 0 ? sqrt(cfg->temperature / t[0]) : 0.0;
    for (int i = 0; i < sys->n; i++) {
        int s[3];
        double v[3];
        hxi_minimd_site(cells, sys->id[i], s);
        hxi_minimd_raw(cells, s[0], s[1], s[2], v);
        for (int k = 0; k < 3; k++) {
            v[k] -= vtot[k];
            sys->v[3 * (size_t) i + k] = v[k] * factor;
        }
    }
    return HX_OK;
}

/* The deck's `velocity all set` commands after the create, in order. */
static void hxi_vel_sets(hx_md_system *sys, const hx_md_config *cfg)
{
    for (int s = 0; s < cfg->nvsets; s++) {
        const hx_md_vset *vs = &cfg->vsets[s];
        for (int i = 0; i < sys->n; i++)
            for (int k = 0; k < 3; k++)
                if (vs->has[k])
                    sys->v[3 * (size_t) i + k] =
                        vs->sum ? sys->v[3 * (size_t) i + k] + vs->v[k] : vs->v[k];
    }
}

hx_status hx_md_velocities(hx_md_system *sys, const hx_md_config *cfg, hx_comm *comm)
{
    hx_status st = HX_OK;
    if (sys->natoms < 2)
        st = hxi_error(HX_ERR_INVALID,
                       "velocities need at least 2 atoms (3N-3 degrees of freedom); there "
                       "are %lld",
                       (long long) sys->natoms);
    else if (!(cfg->temperature >= 0) || !isfinite(cfg->temperature))
        st = hxi_error(HX_ERR_INVALID,
                       "velocity temperature %g: `velocity all create T SEED` needs T >= 0",
                       cfg->temperature);
    else if (!(cfg->mass > 0) || !isfinite(cfg->mass))
        st = hxi_error(HX_ERR_INVALID, "mass %g: `mass 1 M` needs a positive mass", cfg->mass);
    else if (cfg->temperature == 0)
        memset(sys->v, 0, (size_t) sys->n * 3 * sizeof(double));
    else if (cfg->velocity_mode == HX_MD_VEL_LAMMPS)
        st = hx_md_velocities_lammps(sys, cfg, comm);
    else if (cfg->velocity_mode == HX_MD_VEL_MINIMD && cfg->types.nfills > 0)
        st = hxi_error(HX_ERR_INVALID,
                       "--velocity minimd walks every site of the box: with create_atoms T "
                       "region ID use --velocity lammps (LAMMPS's velocity create)");
    else if (cfg->velocity_mode == HX_MD_VEL_MINIMD)
        st = hxi_vel_minimd(sys, cfg);
    else if (cfg->velocity_mode == HX_MD_VEL_HALOX)
        st = hxi_vel_halox(sys, cfg);
    else
        st = hxi_error(HX_ERR_INVALID, "unknown velocity mode %d", (int) cfg->velocity_mode);
    if (st == HX_OK)
        hxi_vel_sets(sys, cfg);
    return st;
}
