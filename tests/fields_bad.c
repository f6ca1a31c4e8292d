/*
 * fields_bad.c - the bad input of test_fields: every wrong description or
 * call of a halo field gets one clear error; every transport carries
 * fields, auto through its choice. Collective (a plan is made).
 */
#include "fields_bad.h"

#include "oracle.h"

#include "core/hxi.h"

#include <stdlib.h>
#include <string.h>

/* Descriptions hx_transport_field_add must refuse. */
static void bad_descriptions(hx_transport *t)
{
    double *a = NULL;
    int id = 7;
    hx_field good = {(void **) &a, 3 * sizeof(double)}, zero = {(void **) &a, 0};
    hx_field wrong_size = {(void **) &a, 8}, no_pointer = {NULL, 3 * sizeof(double)};
    HXT_FAILS(hx_transport_field_add(t, &zero, HX_FIELD_DOUBLE, 0, &id), HX_ERR_INVALID, "width 0");
    HXT_CHECK(id == -1, "a refused field got id %d", id);
    HXT_FAILS(hx_transport_field_add(t, &good, (hx_ftype) 99, 3, &id), HX_ERR_INVALID, "type 99");
    HXT_FAILS(hx_transport_field_add(t, &good, HX_FIELD_NONE, 3, &id), HX_ERR_INVALID, "type 0");
    HXT_FAILS(hx_transport_field_add(t, &wrong_size, HX_FIELD_DOUBLE, 3, &id), HX_ERR_INVALID,
              "size 8");
    HXT_FAILS(hx_transport_field_add(t, &no_pointer, HX_FIELD_DOUBLE, 3, &id), HX_ERR_INVALID,
              "NULL data pointer");
    HXT_FAILS(hx_transport_field_add(t, NULL, HX_FIELD_DOUBLE, 3, &id), HX_ERR_INVALID, NULL);
    HXT_FAILS(hx_transport_field_add(t, &good, HX_FIELD_DOUBLE, 3, NULL), HX_ERR_INVALID, NULL);
}

/* HX_MAX_FIELDS fit, one more does not; removal frees the ids. */
static void full_registry(hx_transport *t)
{
    int32_t *a = NULL;
    hx_field f = {(void **) &a, sizeof(int32_t)};
    int ids[HX_MAX_FIELDS + 1], n = 0;
    while (n < HX_MAX_FIELDS && HXT_OK(hx_transport_field_add(t, &f, HX_FIELD_INT32, 1, &ids[n])))
        n++;
    HXT_CHECK(n == HX_MAX_FIELDS && ids[n - 1] == HX_MAX_FIELDS - 1, "%d fields registered", n);
    HXT_FAILS(hx_transport_field_add(t, &f, HX_FIELD_INT32, 1, &ids[n]), HX_ERR_OVERFLOW,
              "HX_MAX_FIELDS");
    for (int k = 0; k < n; k++)
        HXT_OK(hx_transport_field_remove(t, ids[k]));
    HXT_FAILS(hx_transport_field_remove(t, 0), HX_ERR_INVALID, "not registered");
    HXT_FAILS(hx_transport_field_remove(t, -1), HX_ERR_INVALID, "not registered");
}

/* Calls on a plan with one registered field of ntotal atoms. */
static void bad_calls(hx_transport *t, int ntotal)
{
    double *a = NULL;
    int id = -1;
    hx_field f = {(void **) &a, 3 * sizeof(double)};
    HXT_OK(hx_transport_field_add(t, &f, HX_FIELD_DOUBLE, 3, &id));
    HXT_FAILS(hx_transport_fields_forward(t, &id, 1, 0), HX_ERR_INVALID, "array is NULL");
    a = calloc((size_t) ntotal + 1, 3 * sizeof(double));
    HXT_OK(hx_transport_fields_forward(t, &id, 1, 0));
    HXT_OK(hx_transport_fields_reverse(t, &id, 1, 1));
    const int unknown[3] = {id + 5, -1, HX_MAX_FIELDS}, twice[2] = {id, id};
    for (int k = 0; k < 3; k++) {
        HXT_FAILS(hx_transport_fields_forward(t, &unknown[k], 1, 0), HX_ERR_INVALID,
                  "not registered");
        HXT_FAILS(hx_transport_fields_reverse(t, &unknown[k], 1, 0), HX_ERR_INVALID,
                  "not registered");
    }
    HXT_FAILS(hx_transport_fields_forward(t, twice, 2, 0), HX_ERR_INVALID, "named twice");
    HXT_FAILS(hx_transport_fields_reverse(t, twice, 2, 1), HX_ERR_INVALID, "named twice");
    HXT_FAILS(hx_transport_fields_forward(t, &id, -1, 0), HX_ERR_INVALID, "field ids");
    HXT_FAILS(hx_transport_fields_forward(t, NULL, 1, 0), HX_ERR_INVALID, "at NULL");
    HXT_FAILS(hx_transport_fields_forward(NULL, &id, 1, 0), HX_ERR_INVALID, "no transport");
    HXT_OK(hx_transport_field_remove(t, id));
    HXT_FAILS(hx_transport_fields_forward(t, &id, 1, 0), HX_ERR_INVALID, "not registered");
    free(a);
}

/* Every built transport says HX_CAP_FIELDS but auto, which says
 * HX_CAP_CHOOSES only by name and its choice's bits after a plan. auto
 * takes a field before its choice and passes field calls to it (checked
 * here where the choice has host arrays; test_fields_gpu runs auto's
 * device exchange). */
static void auto_fields(hx_comm *comm, const hx_plan *plan)
{
    for (int i = 0; i < hx_transport_count(); i++) {
        const char *name = hx_transport_name_at(i);
        int has = (hx_transport_caps_of(name) & HX_CAP_FIELDS) != 0;
        HXT_CHECK(has == (strcmp(name, "auto") != 0), "transport %s: HX_CAP_FIELDS %d", name, has);
    }
    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.name = "auto";
    hx_transport *t = NULL;
    if (!HXT_OK(hx_transport_create(&t, comm, &o)))
        return;
    double *a = NULL;
    int id = -1;
    hx_field f = {(void **) &a, sizeof(double)};
    HXT_OK(hx_transport_field_add(t, &f, HX_FIELD_DOUBLE, 1, &id));
    HXT_CHECK(id == 0, "auto gave its first field id %d", id);
    HXT_FAILS(hx_transport_fields_forward(t, &id, 1, 0), HX_ERR_STATE, "before a plan");
    if (HXT_OK(hx_transport_set_plan(t, plan))) {
        HXT_CHECK(hx_transport_caps(t) & HX_CAP_FIELDS, "auto's choice lacks HX_CAP_FIELDS");
        if (!hx_transport_on_device(t)) {
            a = calloc((size_t) hx_plan_ntotal(plan) + 1, sizeof(double));
            HXT_OK(hx_transport_fields_forward(t, &id, 1, 1));
            HXT_OK(hx_transport_fields_reverse(t, &id, 1, 1));
        }
    }
    hx_transport_destroy(t);
    free(a);
}

/* A plan of 2000 random atoms in the box (halo cutoff 2), on every rank or
 * on none (NULL). */
static hx_plan *small_plan(hx_comm *comm, const double lo[3], const double len[3])
{
    hx_decomp d;
    hxt_sys s;
    hxt_local l;
    hx_plan *plan = NULL;
    HXT_OK(hx_decomp_init(&d, lo, len, 2.0, NULL, hx_comm_size(comm), hx_comm_rank(comm)));
    hxt_sys_random(&s, 2000, lo, len, 77);
    hxt_local_take(&l, &s, &d);
    if (!hxt_agree(comm, HXT_OK(hx_plan_create(&plan, comm, &d, l.n, l.x)))) {
        hx_plan_destroy(plan);
        plan = NULL;
    }
    hxt_local_free(&l);
    hxt_sys_free(&s);
    return plan;
}

void fields_bad_input(hx_comm *comm, const double lo[3], const double len[3])
{
    hx_transport *t = hxt_cpu_transport(comm, HX_DOUBLE);
    if (!hxt_agree(comm, t != NULL))
        return;
    bad_descriptions(t);
    full_registry(t);
    int id = 0;
    HXT_FAILS(hx_transport_fields_forward(t, &id, 1, 0), HX_ERR_STATE, "before a plan");
    hx_plan *plan = small_plan(comm, lo, len);
    if (plan) {
        if (hxt_agree(comm, HXT_OK(hx_transport_set_plan(t, plan))))
            bad_calls(t, hx_plan_ntotal(plan));
        auto_fields(comm, plan);
    }
    hx_transport_destroy(t);
    hx_plan_destroy(plan);
}

/* The last rank makes no field forward: the ranks whose first pulse
 * receives from it get HX_ERR_TIMEOUT naming the fields, within the
 * transport's timeout, and no rank hangs. */
void fields_stopped_peer(hx_comm *comm, const double lo[3], const double len[3])
{
    const int rank = hx_comm_rank(comm), last = hx_comm_size(comm) - 1;
    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.timeout_s = 0.5;
    hx_transport *t = NULL;
    hx_plan *plan = small_plan(comm, lo, len);
    if (!plan || !hxt_agree(comm, HXT_OK(hx_transport_create(&t, comm, &o))))
        goto done;
    if (!hxt_agree(comm, HXT_OK(hx_transport_set_plan(t, plan))))
        goto done;
    float *a = calloc((size_t) hx_plan_ntotal(plan) + 1, sizeof(float));
    hx_field f = {(void **) &a, sizeof(float)};
    int id = -1;
    HXT_OK(hx_transport_field_add(t, &f, HX_FIELD_FLOAT, 1, &id));
    if (rank != last && hx_plan_npulses(plan) > 0) {
        const double t0 = hxi_now();
        hx_status st = hx_transport_fields_forward(t, &id, 1, 0);
        const char *msg = hx_last_error();
        HXT_CHECK(st == HX_OK || st == HX_ERR_TIMEOUT, "rank %d: %s: %s", rank,
                  hx_status_string(st), msg);
        if (hx_plan_pulse(plan, 0)->recv_rank == last)
            HXT_CHECK(st == HX_ERR_TIMEOUT && strstr(msg, "fields of pulse"),
                      "rank %d receives from the stopped rank %d but got %s: %s", rank, last,
                      hx_status_string(st), msg);
        HXT_CHECK(hxi_now() - t0 < 10.0, "rank %d waited %.1f s", rank, hxi_now() - t0);
    }
    free(a);
done:
    hx_transport_destroy(t);
    hx_plan_destroy(plan);
}
