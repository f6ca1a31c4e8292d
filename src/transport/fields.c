/*
 * fields.c - per-atom fields through the halo: the registry of a
 * transport's fields, the checks of a field call, and the host helpers a
 * backend packs and adds with. The exchange itself is the backend's
 * (hxi_transport_ops.fields_forward / fields_reverse): the cpu
 * transport's on host arrays, every GPU transport's on device arrays
 * (gpu/fields_dev.c). One without those and without HX_CAP_FIELDS refuses
 * every field call by its caps.
 */
#include "transport/transport.h"
#ifdef HALOX_HAVE_CUDA
#include "transport/gpu/fields_dev.h"
#endif

#include <stdlib.h>
#include <string.h>

typedef struct hxi_fieldset {
    hx_field f[HX_MAX_FIELDS];
    hx_ftype type[HX_MAX_FIELDS];
    int width[HX_MAX_FIELDS]; /* 0: the id is free */
} hxi_fieldset;

static size_t hxi_ftype_bytes(hx_ftype type)
{
    switch (type) {
    case HX_FIELD_FLOAT:
    case HX_FIELD_INT32:
        return 4;
    case HX_FIELD_DOUBLE:
        return 8;
    default:
        return 0;
    }
}

/* HX_OK where t carries fields, else the one refusal every call gives.
 * `auto` takes registrations before its choice (every transport it may
 * choose carries fields) and passes each call to its choice. */
static hx_status hxi_fields_carried(const hx_transport *t, const char *call)
{
    const unsigned caps = hx_transport_caps(t);
    if ((caps & (HX_CAP_FIELDS | HX_CAP_CHOOSES)) && t->ops->fields_forward &&
        t->ops->fields_reverse)
        return HX_OK;
    return hxi_error(HX_ERR_UNSUPPORTED,
                     "%s: transport '%s' cannot carry per-atom fields (its hx_transport_caps "
                     "lacks HX_CAP_FIELDS): use one that has it, such as cpu or any GPU "
                     "transport",
                     call, t->ops->name);
}

static hx_status hxi_field_check(const hx_field *field, hx_ftype type, int width)
{
    size_t bytes = hxi_ftype_bytes(type);
    if (!field || !field->data)
        return hxi_error(HX_ERR_INVALID, "hx_transport_field_add: no field, or a NULL data "
                                         "pointer: give the address of the array's pointer");
    if (bytes == 0)
        return hxi_error(HX_ERR_INVALID,
                         "hx_transport_field_add: type %d: use HX_FIELD_FLOAT, HX_FIELD_DOUBLE "
                         "or HX_FIELD_INT32",
                         (int) type);
    if (width < 1)
        return hxi_error(HX_ERR_INVALID,
                         "hx_transport_field_add: width %d: a field holds 1 or more values "
                         "per atom",
                         width);
    if (field->size != (size_t) width * bytes)
        return hxi_error(HX_ERR_INVALID,
                         "hx_transport_field_add: size %zu bytes per atom, but %d values of "
                         "%zu bytes are %zu: set size = width * the type's bytes",
                         field->size, width, bytes, (size_t) width * bytes);
    return HX_OK;
}

hx_status hx_transport_field_add(hx_transport *t, const hx_field *field, hx_ftype type, int width,
                                 int *id)
{
    if (!t || !id)
        return hxi_error(HX_ERR_INVALID, "hx_transport_field_add: no transport or no id");
    *id = -1;
    HXI_CHECK(hxi_fields_carried(t, "hx_transport_field_add"));
    HXI_CHECK(hxi_field_check(field, type, width));
    if (!t->fields) {
        HXI_CHECK(hxi_alloc((void **) &t->fields, sizeof *t->fields, "field registry"));
        memset(t->fields, 0, sizeof *t->fields);
    }
    hxi_fieldset *s = t->fields;
    for (int k = 0; k < HX_MAX_FIELDS; k++)
        if (s->width[k] == 0) {
            s->f[k] = *field;
            s->type[k] = type;
            s->width[k] = width;
            *id = k;
            return HX_OK;
        }
    return hxi_error(HX_ERR_OVERFLOW,
                     "hx_transport_field_add: %d fields are registered, the most a transport "
                     "holds (HX_MAX_FIELDS): remove one first",
                     HX_MAX_FIELDS);
}

static int hxi_field_known(const hx_transport *t, int id)
{
    return t->fields && id >= 0 && id < HX_MAX_FIELDS && t->fields->width[id] > 0;
}

hx_status hx_transport_field_remove(hx_transport *t, int id)
{
    if (!t || !hxi_field_known(t, id))
        return hxi_error(HX_ERR_INVALID,
                         "hx_transport_field_remove: field id %d is not registered on this "
                         "transport",
                         id);
    t->fields->width[id] = 0;
    return HX_OK;
}

size_t hxi_fields_bytes(const hx_transport *t)
{
    size_t bytes = 0;
    for (int k = 0; t->fields && k < HX_MAX_FIELDS; k++)
        if (t->fields->width[k] > 0)
            bytes += t->fields->f[k].size;
    return bytes;
}

void hxi_fields_free(hx_transport *t)
{
#ifdef HALOX_HAVE_CUDA
    hxi_fdev_free(t);
#endif
    free(t->fields);
    t->fields = NULL;
}

/* The array of field id as the exchange sees it now. */
static hx_status hxi_field_resolve(const hx_transport *t, const char *call, int id, hxi_field *out)
{
    if (!hxi_field_known(t, id))
        return hxi_error(HX_ERR_INVALID,
                         "%s: field id %d is not registered on this transport "
                         "(hx_transport_field_add)",
                         call, id);
    const hxi_fieldset *s = t->fields;
    out->data = *s->f[id].data;
    out->size = s->f[id].size;
    out->type = s->type[id];
    out->width = s->width[id];
    out->shift = 0;
    if (!out->data && hx_plan_ntotal(t->plan) > 0)
        return hxi_error(HX_ERR_INVALID,
                         "%s: field %d's array is NULL: make it hold the plan's %d atoms "
                         "(hx_plan_ntotal) before the call",
                         call, id, hx_plan_ntotal(t->plan));
    return HX_OK;
}

/* Checks a field call and resolves its arrays into f (with the transport's
 * coordinates or forces first when `with` says so); *nf gets their count. */
static hx_status hxi_fields_gather(hx_transport *t, const char *call, const int *ids, int n,
                                   int with, hxi_field *f, int *nf)
{
    if (!t)
        return hxi_error(HX_ERR_INVALID, "%s: no transport", call);
    HXI_CHECK(hxi_fields_carried(t, call));
    if (!t->plan)
        return hxi_error(HX_ERR_STATE, "%s before a plan: call hx_transport_set_plan", call);
    if (n < 0 || n > HX_MAX_FIELDS || (n > 0 && !ids))
        return hxi_error(HX_ERR_INVALID, "%s: %d field ids%s: give 0 to %d ids", call, n,
                         n > 0 && !ids ? " at NULL" : "", HX_MAX_FIELDS);
    *nf = 0;
    if (with) {
        size_t elem = t->opts.dtype == HX_DOUBLE ? sizeof(double) : sizeof(float);
        f[0] =
            (hxi_field){with > 1 ? t->x : t->f, 3 * elem,
                        t->opts.dtype == HX_DOUBLE ? HX_FIELD_DOUBLE : HX_FIELD_FLOAT, 3, with > 1};
        *nf = 1;
    }
    for (int k = 0; k < n; k++) {
        for (int j = 0; j < k; j++)
            if (ids[j] == ids[k])
                return hxi_error(HX_ERR_INVALID, "%s: field id %d is named twice", call, ids[k]);
        HXI_CHECK(hxi_field_resolve(t, call, ids[k], &f[(*nf)++]));
    }
    return HX_OK;
}

hx_status hx_transport_fields_forward(hx_transport *t, const int *ids, int n, int with_coords)
{
    hxi_field f[HX_MAX_FIELDS + 1];
    int nf;
    /* with 2: the coordinates, packed with their shift. */
    HXI_CHECK(
        hxi_fields_gather(t, "hx_transport_fields_forward", ids, n, with_coords ? 2 : 0, f, &nf));
    if (with_coords)
        t->step++;
    return nf > 0 ? t->ops->fields_forward(t, f, nf) : HX_OK;
}

hx_status hx_transport_fields_reverse(hx_transport *t, const int *ids, int n, int with_forces)
{
    hxi_field f[HX_MAX_FIELDS + 1];
    int nf;
    HXI_CHECK(
        hxi_fields_gather(t, "hx_transport_fields_reverse", ids, n, with_forces ? 1 : 0, f, &nf));
    HXI_CHECK(hxi_transport_no_reverse(t, "hx_transport_fields_reverse"));
    return nf > 0 ? t->ops->fields_reverse(t, f, nf) : HX_OK;
}

/* ------------------------------------------------------ host helpers */

size_t hxi_field_block(const hxi_field *f, int n)
{
    return ((size_t) n * f->size + 7) & ~(size_t) 7;
}

void hxi_field_pack(const hxi_field *f, const hx_pulse *p, void *buf)
{
    if (f->shift && f->type == HX_FIELD_DOUBLE)
        hxi_pulse_pack_double(p, f->data, buf);
    else if (f->shift)
        hxi_pulse_pack_float(p, f->data, buf);
    else
        for (int i = 0; i < p->nsend; i++)
            memcpy((char *) buf + (size_t) i * f->size,
                   (const char *) f->data + (size_t) p->map[i] * f->size, f->size);
}

/* Adds buf's values into the atoms the map names, one type each. */
#define HXI_FIELD_ADD(T, name)                                                                     \
    static void hxi_field_add_##name(T *a, const T *buf, const hx_pulse *p, int w)                 \
    {                                                                                              \
        for (int i = 0; i < p->nsend; i++) {                                                       \
            T *dst = a + (size_t) w * (size_t) p->map[i];                                          \
            for (int k = 0; k < w; k++)                                                            \
                dst[k] += buf[(size_t) w * i + k];                                                 \
        }                                                                                          \
    }
HXI_FIELD_ADD(float, float)
HXI_FIELD_ADD(double, double)
/* int32 adds as uint32: wraps modulo 2^32 where a signed sum would overflow. */
HXI_FIELD_ADD(uint32_t, int32)

void hxi_field_add(const hxi_field *f, const hx_pulse *p, const void *buf)
{
    if (f->type == HX_FIELD_DOUBLE)
        hxi_field_add_double(f->data, buf, p, f->width);
    else if (f->type == HX_FIELD_FLOAT)
        hxi_field_add_float(f->data, buf, p, f->width);
    else
        hxi_field_add_int32(f->data, buf, p, f->width);
}
