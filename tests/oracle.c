/*
 * oracle.c - what brute force says a plan must give (oracle.h).
 */
#include "oracle.h"

#include "core/hxi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------- brute-force halo */

void hxt_expect_halo(hxt_expect *e, const hxt_sys *sys, const hx_decomp *d)
{
    int nr = d->nranks;
    /* Grid coordinates of every rank, and the lower domain bound of each
     * grid position along each dimension, as the library computes them. */
    int(*rc)[3] = hxt_xmalloc((size_t) nr * sizeof *rc);
    double *lo_of[3];
    for (int k = 0; k < 3; k++)
        lo_of[k] = hxt_xmalloc((size_t) d->grid[k] * sizeof(double));
    for (int r = 0; r < nr; r++) {
        hx_decomp o;
        if (hx_decomp_init(&o, d->box_lo, d->box_len, d->cutoff, d->grid, nr, r) != HX_OK) {
            fprintf(stderr, "[rank %d] hx_decomp_init(rank %d) failed: %s\n", hxt_rank, r,
                    hx_last_error());
            exit(1);
        }
        for (int k = 0; k < 3; k++) {
            rc[r][k] = o.coord[k];
            lo_of[k][o.coord[k]] = o.dom_lo[k];
        }
    }
    int n = sys->n;
    e->n = 0;
    e->id = hxt_xmalloc((size_t) n * sizeof(int64_t));
    e->off = hxt_xmalloc((size_t) n * 4);
    e->xd = hxt_xmalloc((size_t) n * 3 * sizeof(double));
    e->xf = hxt_xmalloc((size_t) n * 3 * sizeof(float));
    e->wrap = hxt_xmalloc((size_t) n * 3);
    const double rh = d->cutoff;
    for (int j = 0; j < n; j++) {
        const double *xj = &sys->x[3 * j];
        int own = hx_decomp_owner(d, xj);
        if (own < 0 || own >= nr) {
            fprintf(stderr, "[rank %d] hx_decomp_owner gave %d\n", hxt_rank, own);
            exit(1);
        }
        int in = 1, any = 0;
        uint8_t off[4] = {0, 0, 0, 0}, wrap[3] = {0, 0, 0};
        double xd[3];
        float xf[3];
        for (int k = 0; k < 3 && in; k++) {
            int nk = d->grid[k], c = d->coord[k];
            double L = d->box_len[k];
            xd[k] = xj[k];
            xf[k] = (float) xj[k];
            if (nk == 1)
                continue;
            int o = (rc[own][k] - c + nk) % nk;
            if (o == 0)
                continue;
            /* The chain: the sender at unwrapped grid index u (U down to
             * c + 1) passes the atom on when its coordinate in that sender's
             * frame is below the sender's lower bound plus the cutoff. The
             * frame is shifted by L once the chain has crossed index n. */
            int U = c + o, w = U >= nk;
            for (int u = U; u > c; u--) {
                double xu = (w && u < nk) ? xj[k] + L : xj[k];
                if (!(xu < lo_of[k][u % nk] + rh)) {
                    in = 0;
                    break;
                }
            }
            if (!in)
                break;
            off[k] = (uint8_t) o;
            wrap[k] = (uint8_t) w;
            any = 1;
            if (w) {
                float a = (float) xj[k], b = (float) L;
                xd[k] = xj[k] + L;
                xf[k] = a + b;
            }
        }
        if (!in || !any)
            continue;
        int m = e->n++;
        e->id[m] = j;
        memcpy(&e->off[4 * m], off, 4);
        memcpy(&e->xd[3 * m], xd, sizeof xd);
        memcpy(&e->xf[3 * m], xf, sizeof xf);
        memcpy(&e->wrap[3 * m], wrap, 3);
    }
    free(rc);
    for (int k = 0; k < 3; k++)
        free(lo_of[k]);
}

void hxt_expect_free(hxt_expect *e)
{
    free(e->id);
    free(e->off);
    free(e->xd);
    free(e->xf);
    free(e->wrap);
    memset(e, 0, sizeof *e);
}

int64_t *hxt_trace_ids(hx_transport *td, const hx_plan *plan, const int64_t *home_ids,
                       double **shift)
{
    int nhome = hx_plan_nhome(plan), ntotal = hx_plan_ntotal(plan);
    const hx_decomp *d = hx_plan_decomp(plan);
    int64_t *ids = hxt_xmalloc((size_t) (ntotal > 0 ? ntotal : 1) * sizeof(int64_t));
    double *sh = hxt_xcalloc((size_t) ntotal * 3, sizeof(double));
    for (int i = 0; i < ntotal; i++)
        ids[i] = i < nhome ? home_ids[i] : -1;
    if (shift)
        *shift = sh;
    if (!HXT_OK(hx_transport_set_plan(td, plan))) {
        if (!shift)
            free(sh);
        return ids;
    }
    double *x = hx_transport_coords(td);
    for (int i = 0; i < ntotal; i++)
        for (int k = 0; k < 3; k++)
            x[3 * i + k] = i < nhome ? (double) home_ids[i] * HXT_ID_SCALE : NAN;
    if (HXT_OK(hx_transport_forward(td)) && HXT_OK(hx_transport_sync(td))) {
        int bad = 0;
        for (int i = nhome; i < ntotal; i++) {
            double v0 = x[3 * i];
            int64_t id = isfinite(v0) ? (int64_t) floor(v0 / HXT_ID_SCALE) : -1;
            int ok = id >= 0;
            for (int k = 0; k < 3 && ok; k++) {
                double s = x[3 * i + k] - (double) id * HXT_ID_SCALE;
                ok = isfinite(x[3 * i + k]) && (s == 0.0 || s == d->box_len[k]);
                sh[3 * i + k] = s;
            }
            if (ok)
                ids[i] = id;
            else if (bad++ < 3)
                fprintf(stderr,
                        "[rank %d] halo entry %d does not decode to an id: (%.17g, %.17g, %.17g)\n",
                        hxt_rank, i, x[3 * i], x[3 * i + 1], x[3 * i + 2]);
        }
        HXT_CHECK(bad == 0, "%d halo entries of the id forward do not decode", bad);
    }
    if (!shift)
        free(sh);
    return ids;
}

/* ------------------------------------------------------------- pulses */

static void check_pulses(hx_comm *c, const hx_plan *plan)
{
    const hx_decomp *d = hx_plan_decomp(plan);
    int nhome = hx_plan_nhome(plan), ntotal = hx_plan_ntotal(plan);
    int np = hx_plan_npulses(plan);
    int want = d->npulse[0] + d->npulse[1] + d->npulse[2];
    HXT_CHECK(np == want, "plan has %d pulses, decomp says %d", np, want);
    if (np != want || np > HX_MAX_PULSES || np < 0)
        return;
    int order[HX_MAX_PULSES][2], k = 0;
    for (int dim = 2; dim >= 0; dim--)
        for (int i = 0; i < d->npulse[dim]; i++, k++) {
            order[k][0] = dim;
            order[k][1] = i;
        }
    /* Per-rank tables for the cross-rank checks. */
    int mine[4 * HX_MAX_PULSES + 2];
    memset(mine, 0, sizeof mine);
    int at = nhome;
    char *mark = hxt_xcalloc((size_t) ntotal, 1);
    for (int p = 0; p < np; p++) {
        const hx_pulse *P = hx_plan_pulse(plan, p);
        int dim = P->dim;
        HXT_CHECK(P->dim == order[p][0] && P->index == order[p][1],
                  "pulse %d is dim %d index %d, want dim %d index %d (order Z, Y, X)", p, P->dim,
                  P->index, order[p][0], order[p][1]);
        if (dim < 0 || dim > 2)
            continue;
        HXT_CHECK(P->send_rank == d->down[dim] && P->recv_rank == d->up[dim],
                  "pulse %d: send to %d, recv from %d; neighbours down %d up %d", p, P->send_rank,
                  P->recv_rank, d->down[dim], d->up[dim]);
        for (int c3 = 0; c3 < 3; c3++) {
            double sh = d->coord[dim] == 0 ? d->edge[dim][c3] : 0.0;
            HXT_CHECK(hxt_same_d(P->shift[c3], sh), "pulse %d: shift[%d] %.17g, want %.17g", p, c3,
                      P->shift[c3], sh);
        }
        HXT_CHECK(P->recv_offset == at, "pulse %d: recv_offset %d, want %d", p, P->recv_offset, at);
        HXT_CHECK(P->nrecv >= 0 && P->nsend >= 0 && P->nsend_home >= 0 && P->nsend_home <= P->nsend,
                  "pulse %d: nrecv %d nsend %d nsend_home %d", p, P->nrecv, P->nsend,
                  P->nsend_home);
        if (P->index > 0)
            HXT_CHECK(P->nsend_home == 0,
                      "pulse %d (index %d) sends %d home atoms; only pulse 0 of a dimension may", p,
                      P->index, P->nsend_home);
        uint64_t deps = 0;
        int nbad = 0;
        for (int i = 0; i < P->nsend; i++) {
            int m = P->map ? P->map[i] : -1;
            if (i < P->nsend_home) {
                if (m < 0 || m >= nhome) {
                    nbad++;
                    continue;
                }
            } else {
                /* Pulse 0 of a dimension forwards halo atoms of earlier
                 * dimensions; pulse k > 0 those of pulse k - 1 alone. */
                int lo = nhome, hi = P->recv_offset;
                if (P->index > 0 && p > 0) {
                    const hx_pulse *Q = hx_plan_pulse(plan, p - 1);
                    lo = Q->recv_offset;
                    hi = Q->recv_offset + Q->nrecv;
                } else {
                    for (int q = 0; q < p; q++) {
                        const hx_pulse *Q = hx_plan_pulse(plan, q);
                        if (Q->dim == dim) {
                            hi = Q->recv_offset;
                            break;
                        }
                    }
                }
                if (m < lo || m >= hi) {
                    nbad++;
                    continue;
                }
                for (int q = 0; q < p; q++) {
                    const hx_pulse *Q = hx_plan_pulse(plan, q);
                    if (m >= Q->recv_offset && m < Q->recv_offset + Q->nrecv)
                        deps |= 1ull << q;
                }
            }
            if (mark[m] == (char) (p + 1))
                nbad++; /* the same atom twice in one pulse */
            mark[m] = (char) (p + 1);
        }
        HXT_CHECK(nbad == 0, "pulse %d: %d map entries out of their range or repeated", p, nbad);
        HXT_CHECK(P->deps == deps, "pulse %d: deps 0x%llx, the map reads 0x%llx", p,
                  (unsigned long long) P->deps, (unsigned long long) deps);
        mine[4 * p + 0] = P->nsend;
        mine[4 * p + 1] = P->nrecv;
        mine[4 * p + 2] = P->recv_offset;
        mine[4 * p + 3] = P->peer_offset;
        at += P->nrecv;
    }
    free(mark);
    HXT_CHECK(at == ntotal, "pulses deliver up to %d, ntotal is %d", at, ntotal);
    HXT_CHECK(hx_plan_nhalo(plan) == ntotal - nhome, "nhalo %d, ntotal %d, nhome %d",
              hx_plan_nhalo(plan), ntotal, nhome);
    mine[4 * HX_MAX_PULSES] = ntotal;
    mine[4 * HX_MAX_PULSES + 1] = np;
    int nr = hx_comm_size(c);
    int stride = 4 * HX_MAX_PULSES + 2;
    int *all = hxt_xmalloc((size_t) nr * stride * sizeof(int));
    if (!HXT_OK(hxi_allgather(c, mine, sizeof mine, all))) {
        free(all);
        return;
    }
    int maxt = 0;
    for (int r = 0; r < nr; r++)
        if (all[r * stride + 4 * HX_MAX_PULSES] > maxt)
            maxt = all[r * stride + 4 * HX_MAX_PULSES];
    HXT_CHECK(hx_plan_max_ntotal(plan) == maxt, "max_ntotal %d, the largest ntotal is %d",
              hx_plan_max_ntotal(plan), maxt);
    for (int p = 0; p < np; p++) {
        const hx_pulse *P = hx_plan_pulse(plan, p);
        int s = P->send_rank;
        if (s < 0 || s >= nr)
            continue;
        const int *peer = &all[s * stride];
        HXT_CHECK(peer[4 * HX_MAX_PULSES + 1] == np, "rank %d has %d pulses, this rank %d", s,
                  peer[4 * HX_MAX_PULSES + 1], np);
        HXT_CHECK(peer[4 * p + 1] == P->nsend,
                  "pulse %d: this rank sends %d atoms, rank %d receives %d", p, P->nsend, s,
                  peer[4 * p + 1]);
        HXT_CHECK(peer[4 * p + 2] == P->peer_offset,
                  "pulse %d: peer_offset %d, rank %d receives at %d", p, P->peer_offset, s,
                  peer[4 * p + 2]);
    }
    free(all);
}

/* ---------------------------------------------------------- halo check */

int64_t *hxt_check_halo(hx_comm *c, const hx_plan *plan, const hxt_sys *sys,
                        const int64_t *home_ids, hx_transport *td, hx_transport *tf, int *nexpected)
{
    const hx_decomp *d = hx_plan_decomp(plan);
    int nhome = hx_plan_nhome(plan), nhalo = hx_plan_nhalo(plan);
    int ntotal = hx_plan_ntotal(plan);
    const double *X = hx_plan_coords(plan);
    const uint8_t *Z = hx_plan_zones(plan);
    int own_td = 0, own_tf = 0;
    char gs[32];
    hxt_grid_str(d->grid, gs);

    HXT_CHECK(ntotal == nhome + nhalo, "ntotal %d != nhome %d + nhalo %d", ntotal, nhome, nhalo);
    int nbad = 0;
    for (int i = 0; i < nhome; i++)
        for (int k = 0; k < 3; k++)
            nbad += !hxt_same_d(X[3 * i + k], sys->x[3 * home_ids[i] + k]);
    HXT_CHECK(nbad == 0, "grid %s: %d home coordinates of the plan differ from the input", gs,
              nbad);
    nbad = 0;
    for (int i = 0; i < ntotal; i++)
        nbad += (i < nhome && (Z[4 * i] | Z[4 * i + 1] | Z[4 * i + 2])) || Z[4 * i + 3] != 0;
    HXT_CHECK(nbad == 0, "grid %s: %d zone entries wrong (home not 0, or 4th byte not 0)", gs,
              nbad);
    check_pulses(c, plan);

    if (!td) {
        td = hxt_cpu_transport(c, HX_DOUBLE);
        own_td = 1;
    }
    if (!tf) {
        tf = hxt_cpu_transport(c, HX_FLOAT);
        own_tf = 1;
    }
    double *shift = NULL;
    int64_t *ids;
    double *xd = hxt_xmalloc((size_t) ntotal * 3 * sizeof(double));
    float *xf = hxt_xmalloc((size_t) ntotal * 3 * sizeof(float));
    for (int i = 0; i < ntotal * 3; i++) {
        xd[i] = NAN;
        xf[i] = NAN;
    }
    if (td) {
        ids = hxt_trace_ids(td, plan, home_ids, &shift);
        /* Real coordinates through the same transport; the halo is poisoned
         * first so that an entry left unwritten shows. */
        double *t = hx_transport_coords(td);
        for (int i = 0; i < ntotal; i++)
            for (int k = 0; k < 3; k++)
                t[3 * i + k] = i < nhome ? sys->x[3 * home_ids[i] + k] : NAN;
        if (HXT_OK(hx_transport_forward(td)) && HXT_OK(hx_transport_sync(td)))
            memcpy(xd, t, (size_t) ntotal * 3 * sizeof(double));
    } else {
        ids = hxt_xmalloc((size_t) (ntotal > 0 ? ntotal : 1) * sizeof(int64_t));
        for (int i = 0; i < ntotal; i++)
            ids[i] = i < nhome ? home_ids[i] : -1;
        shift = hxt_xcalloc((size_t) ntotal * 3, sizeof(double));
    }
    if (tf && HXT_OK(hx_transport_set_plan(tf, plan))) {
        float *t = hx_transport_coords(tf);
        for (int i = 0; i < ntotal; i++)
            for (int k = 0; k < 3; k++)
                t[3 * i + k] = i < nhome ? (float) sys->x[3 * home_ids[i] + k] : NAN;
        if (HXT_OK(hx_transport_forward(tf)) && HXT_OK(hx_transport_sync(tf)))
            memcpy(xf, t, (size_t) ntotal * 3 * sizeof(float));
    }

    int nhome_bad = 0;
    for (int i = 0; i < nhome; i++)
        for (int k = 0; k < 3; k++) {
            double v = sys->x[3 * home_ids[i] + k];
            nhome_bad += !hxt_same_d(xd[3 * i + k], v) || !hxt_same_f(xf[3 * i + k], (float) v);
        }
    HXT_CHECK(nhome_bad == 0, "grid %s: forward changed %d home coordinates", gs, nhome_bad);

    hxt_expect e;
    hxt_expect_halo(&e, sys, d);
    int *idx = hxt_xmalloc((size_t) sys->n * sizeof(int));
    for (int j = 0; j < sys->n; j++)
        idx[j] = -1;
    for (int m = 0; m < e.n; m++)
        idx[e.id[m]] = m;
    char *seen = hxt_xcalloc((size_t) e.n, 1);
    int nid = 0, nextra = 0, ndup = 0, nzone = 0, nplan = 0, nfd = 0, nff = 0, nsh = 0;
    int64_t ex_extra = -1, ex_dup = -1, ex_zone = -1, ex_plan = -1, ex_fd = -1, ex_ff = -1;
    for (int i = nhome; i < ntotal; i++) {
        int64_t id = ids[i];
        if (id < 0 || id >= sys->n) {
            nid++;
            continue;
        }
        int m = idx[id];
        if (m < 0) {
            if (nextra++ == 0)
                ex_extra = id;
            continue;
        }
        if (seen[m]++) {
            if (ndup++ == 0)
                ex_dup = id;
            continue;
        }
        int zb = 0, pb = 0, fdb = 0, ffb = 0, sb = 0;
        for (int k = 0; k < 3; k++) {
            zb |= Z[4 * i + k] != e.off[4 * m + k];
            pb |= !hxt_same_d(X[3 * i + k], e.xd[3 * m + k]);
            fdb |= !hxt_same_d(xd[3 * i + k], e.xd[3 * m + k]);
            ffb |= !hxt_same_f(xf[3 * i + k], e.xf[3 * m + k]);
            sb |= !hxt_same_d(shift[3 * i + k], e.wrap[3 * m + k] ? d->box_len[k] : 0.0);
        }
        if (zb && nzone++ == 0)
            ex_zone = i;
        if (pb && nplan++ == 0)
            ex_plan = i;
        if (fdb && nfd++ == 0)
            ex_fd = i;
        if (ffb && nff++ == 0)
            ex_ff = i;
        nsh += sb;
    }
    int nmiss = 0;
    int64_t ex_miss = -1;
    for (int m = 0; m < e.n; m++)
        if (!seen[m] && nmiss++ == 0)
            ex_miss = e.id[m];

    const double rh = d->cutoff;
    HXT_CHECK(nhalo == e.n, "grid %s rh %g: %d halo atoms, brute force says %d", gs, rh, nhalo,
              e.n);
    HXT_CHECK(nid == 0, "grid %s rh %g: %d halo atoms not identified", gs, rh, nid);
    HXT_CHECK(nmiss == 0, "grid %s rh %g: %d halo atoms missing (first id %lld)", gs, rh, nmiss,
              (long long) ex_miss);
    HXT_CHECK(nextra == 0, "grid %s rh %g: %d halo atoms extra (first id %lld)", gs, rh, nextra,
              (long long) ex_extra);
    HXT_CHECK(ndup == 0, "grid %s rh %g: %d halo atoms duplicated (first id %lld)", gs, rh, ndup,
              (long long) ex_dup);
    /* The first wrong entry of each kind is described; HXT_CHECK evaluates
     * the description (and so looks up ex_* and its expected entry) only
     * where the check fails, i.e. where there is such an entry. */
#define HXT_WANT(ex) idx[ids[ex]]
    HXT_CHECK(nzone == 0,
              "grid %s rh %g: %d zone offsets wrong (entry %lld: %d %d %d, want %d %d %d)", gs, rh,
              nzone, (long long) ex_zone, Z[4 * ex_zone], Z[4 * ex_zone + 1], Z[4 * ex_zone + 2],
              e.off[4 * HXT_WANT(ex_zone)], e.off[4 * HXT_WANT(ex_zone) + 1],
              e.off[4 * HXT_WANT(ex_zone) + 2]);
    HXT_CHECK(nplan == 0,
              "grid %s rh %g: %d plan halo coordinates differ (entry %lld id %lld: %.17g %.17g "
              "%.17g, want %.17g %.17g %.17g)",
              gs, rh, nplan, (long long) ex_plan, (long long) ids[ex_plan], X[3 * ex_plan],
              X[3 * ex_plan + 1], X[3 * ex_plan + 2], e.xd[3 * HXT_WANT(ex_plan)],
              e.xd[3 * HXT_WANT(ex_plan) + 1], e.xd[3 * HXT_WANT(ex_plan) + 2]);
    HXT_CHECK(nfd == 0,
              "grid %s rh %g: %d double forward coordinates differ (entry %lld: %.17g %.17g %.17g, "
              "want %.17g %.17g %.17g)",
              gs, rh, nfd, (long long) ex_fd, xd[3 * ex_fd], xd[3 * ex_fd + 1], xd[3 * ex_fd + 2],
              e.xd[3 * HXT_WANT(ex_fd)], e.xd[3 * HXT_WANT(ex_fd) + 1],
              e.xd[3 * HXT_WANT(ex_fd) + 2]);
    HXT_CHECK(nff == 0,
              "grid %s rh %g: %d float forward coordinates differ (entry %lld: %.9g %.9g %.9g, "
              "want %.9g %.9g %.9g)",
              gs, rh, nff, (long long) ex_ff, xf[3 * ex_ff], xf[3 * ex_ff + 1], xf[3 * ex_ff + 2],
              e.xf[3 * HXT_WANT(ex_ff)], e.xf[3 * HXT_WANT(ex_ff) + 1],
              e.xf[3 * HXT_WANT(ex_ff) + 2]);
#undef HXT_WANT
    HXT_CHECK(nsh == 0, "grid %s rh %g: %d halo atoms carry a wrong periodic shift", gs, rh, nsh);

    if (nexpected)
        *nexpected = e.n;
    free(seen);
    free(idx);
    hxt_expect_free(&e);
    free(xd);
    free(xf);
    free(shift);
    if (own_td)
        hx_transport_destroy(td);
    if (own_tf)
        hx_transport_destroy(tf);
    return ids;
}
