/*
 * types.c - the GPU engine's atom types (create_box N, N > 1): each
 * type's mass and the table of pairs the typed kernels read (hxg_types,
 * md_gpu.h), the device array of the local atoms' types that the
 * non-local forces read, filled for the halo by the transport's field
 * exchange at each rebuild, and the mass of all atoms that thermo's
 * density reads.
 *
 * A home atom's type lives in the w of its position (x4), so that the
 * cell sorts, the wraps and both migrations (hx_rebuild_migrate carries
 * the whole float4; the host path's hx_migrate carries sys->type) move it
 * with the atom at no cost, and the local forces read it with the
 * position they load anyway. Between rebuilds types do not change: the
 * halo's are sent once a rebuild, with its forward exchange of the
 * coordinates (one call, hx_transport_fields_forward), and nothing is
 * sent per step.
 */
#include "md/gpu/engine.h"

#include "md/md_driver.h"
#include "md/pair/pair_styles.h"

#include <string.h>

_Static_assert(HXG_MAX_TYPES == HX_MD_MAX_TYPES, "the GPU engine holds every type a deck may have");
_Static_assert(sizeof(hxg_pair_ij) % 16 == 0, "rows of pairs stay 16-byte aligned");

hx_status hxg_eng_types_setup(hx_md_engine *e)
{
    const hx_md_config *c = &e->cfg;
    struct hxg_phys *p = &e->phys;
    memset(&p->ty, 0, sizeof p->ty);
    p->ty.n = 1;
    e->xport.type_field = -1;
    if (c->types.ntypes <= 1)
        return HX_OK;
    hxi_pair_types t;
    HXI_CHECK(hxi_pair_resolve(c, &t, HX_ERR_INVALID, "GPU engine: "));
    const int n = t.n;
    hxg_pair_ij tab[HXG_MAX_TYPES * HXG_MAX_TYPES];
    memset(tab, 0, sizeof tab);
    for (int i = 0; i < n; i++) {
        p->ty.mass[i] = (float) c->types.masses[i];
        p->ty.dtf[i] = (float) (0.5 * c->dt / c->types.masses[i]);
        for (int j = 0; j < n; j++) {
            double coef[HX_PAIR_NCOEF], eoff;
            hxi_pair_setup(c->pair_style, t.p[i][j], t.rc[i][j], c->shift_energy, coef, &eoff);
            hxg_pair_ij *q = &tab[i * n + j];
            for (int k = 0; k < HX_PAIR_NCOEF; k++)
                q->c[k] = (float) coef[k];
            q->rc2 = (float) (t.rc[i][j] * t.rc[i][j]);
            q->eoff = (float) eoff;
        }
    }
    HXI_CHECK(hxg_eng_dev_grow(&p->pairs, &(size_t){0}, sizeof(hxg_pair_ij) * (size_t) (n * n),
                               "the pairs of types"));
    CU(cudaMemcpy(p->pairs, tab, sizeof(hxg_pair_ij) * (size_t) (n * n), cudaMemcpyHostToDevice),
       "the pairs of types");
    p->ty.n = n;
    p->ty.pairs = p->pairs;
    return HX_OK;
}

/* The mass of this rank's atoms (e->sys, types 1-based). */
static double local_mass(const hx_md_engine *e)
{
    const hx_md_system *s = e->sys;
    double m = 0.0;
    for (int i = 0; i < s->n; i++)
        m += hxi_md_mass_of(&e->cfg, s->type ? s->type[i] : 1);
    return m;
}

hx_status hxg_eng_types_start(hx_md_engine *e)
{
    if (e->phys.ty.n <= 1)
        return HX_OK;
    hx_status st = HX_OK;
    if (!e->sys->type)
        st = hxi_error(HX_ERR_STATE, "GPU engine: %d atom types, but the system holds none",
                       e->phys.ty.n);
    HXI_CHECK(hxi_agree(e->comm, st));
    double m = local_mass(e);
    HXI_CHECK(hxi_allreduce_double(e->comm, &m, 1, 0));
    e->phys.mass_sum = m;
    if (!e->multi)
        return HX_OK;
    /* Every rank registers the one field, so that the ids agree. */
    const hx_field f = {(void **) &e->atoms.type, sizeof(int32_t)};
    st = hx_transport_field_add(e->xport.t, &f, HX_FIELD_INT32, 1, &e->xport.type_field);
    return hxi_agree(e->comm, st);
}

hx_status hxg_eng_forward_rebuild(hx_md_engine *e)
{
    if (e->xport.type_field < 0)
        return hx_transport_forward(e->xport.t);
    /* The home part, on the transport's stream, before the exchange reads it. */
    CU(hxg_types_of((void *) e->dev.s_nl, e->atoms.x4, e->atoms.type, e->atoms.nhome),
       "the home atoms' types");
    return hx_transport_fields_forward(e->xport.t, &e->xport.type_field, 1, 1);
}

void hxg_eng_types_free(hx_md_engine *e)
{
    if (e->phys.pairs)
        cudaFree(e->phys.pairs);
    if (e->atoms.type)
        cudaFree(e->atoms.type);
    e->phys.pairs = NULL;
    e->atoms.type = NULL;
}
