/*
 * auto.c - the transport that measures the others on the real plan and
 * keeps the fastest.
 *
 * At the first plan, and again when a new plan's largest rank differs by
 * more than a quarter from the one measured, every candidate (the device
 * transports built here; `cpu` where none is) adopts the plan and runs a few
 * forward + reverse steps (forwards alone on a full-shell plan, which has
 * no reverse); the slowest rank's median decides. Candidates
 * stay alive once created: NVSHMEM cannot start again in a process once it
 * has been finalised, and a later re-measurement needs them. Each candidate
 * owns its arrays, so the arrays handed out are the chosen one's and move
 * when the choice changes (as at any hx_transport_set_plan).
 */
#include "transport/transport.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HXI_AUTO_MAX 16

typedef struct hxi_auto {
    int n; /* candidates */
    const char *name[HXI_AUTO_MAX];
    hx_transport *cand[HXI_AUTO_MAX]; /* NULL: not created yet, or refused */
    int refused[HXI_AUTO_MAX];
    double us[HXI_AUTO_MAX]; /* last measurement, median per step */
    hx_transport *chosen;
    int measured_size; /* plan max_ntotal when last measured */
    int trial_steps;
} hxi_auto;

static int hxi_cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static hx_status auto_create(hx_transport *t)
{
    hxi_auto *a;
    HXI_CHECK(hxi_alloc((void **) &a, sizeof *a, "auto transport"));
    memset(a, 0, sizeof *a);
    a->trial_steps = hxi_knobs()->auto_steps; /* 3 or more */
    /* Device transports first; `cpu` is the last resort, measured only
     * where none of them can run (no GPU, or none built). */
    for (int i = 0; i < hx_transport_count() && a->n < HXI_AUTO_MAX - 1; i++) {
        const char *name = hx_transport_name_at(i);
        /* One not yet run where it can exchange is not a candidate. */
        if ((hx_transport_caps_of(name) & HX_CAP_DEVICE) && !hx_transport_note(name))
            a->name[a->n++] = name;
    }
    a->name[a->n++] = hxi_transport_cpu.name;
    t->impl = a;
    snprintf(t->describe, sizeof t->describe, "auto: nothing measured yet");
    return HX_OK;
}

static void auto_destroy(hx_transport *t)
{
    hxi_auto *a = t->impl;
    /* In reverse order of creation, so shared libraries close last. */
    for (int i = a->n - 1; i >= 0; i--)
        hx_transport_destroy(a->cand[i]);
    free(a);
}

/* Median forward + reverse time of one candidate on the current plan,
 * slowest rank per step; a negative value where it cannot run. */
static hx_status auto_trial(hx_transport *t, int i, double *us)
{
    hxi_auto *a = t->impl;
    hx_transport *c;
    hx_status st = HX_OK;
    double times[64];
    int steps = a->trial_steps > 64 ? 64 : a->trial_steps;
    const hx_plan *plan = t->plan;

    *us = -1;
    if (a->refused[i])
        return HX_OK;
    if (!a->cand[i]) {
        hx_transport_opts o = t->opts;
        o.name = a->name[i];
        st = hxi_agree(t->comm, hx_transport_create(&a->cand[i], t->comm, &o));
        if (st != HX_OK) {
            if (hx_comm_rank(t->comm) == 0)
                fprintf(stderr, "halox auto: %s cannot run here: %s\n", a->name[i],
                        hx_last_error());
            a->refused[i] = 1;
            a->cand[i] = NULL;
            return HX_OK;
        }
    }
    c = a->cand[i];
    /* Finite coordinates and forces: the plan's own, converted. */
    st = hx_transport_set_plan(c, plan);
    if (st == HX_OK)
        st = hx_transport_write(c, HX_COORDS, 0, plan->ntotal, plan->x);
    if (st == HX_OK)
        st = hx_transport_write(c, HX_FORCES, 0, plan->ntotal, plan->x);
    HXI_CHECK(hxi_agree(t->comm, st));
    for (int s = -2; s < steps; s++) { /* two warm-up steps */
        double t0, dt;
        HXI_CHECK(hxi_barrier(t->comm));
        t0 = hxi_now();
        st = hx_transport_forward(c);
        if (st == HX_OK && !plan->full_shell) /* a full-shell plan has no reverse */
            st = hx_transport_reverse(c);
        if (st == HX_OK)
            st = hx_transport_sync(c);
        dt = hxi_now() - t0;
        st = hxi_agree(t->comm, st);
        if (st != HX_OK) {
            /* A candidate that fails its trial is dropped, not fatal: the
             * others may run. It is kept alive (see the top of the file). */
            if (hx_comm_rank(t->comm) == 0)
                fprintf(stderr, "halox auto: %s failed its trial and is dropped: %s\n", a->name[i],
                        hx_last_error());
            a->refused[i] = 1;
            return HX_OK;
        }
        HXI_CHECK(hxi_allreduce_double(t->comm, &dt, 1, 1));
        if (s >= 0)
            times[s] = dt;
    }
    qsort(times, (size_t) steps, sizeof times[0], hxi_cmp);
    *us = 1e6 * times[steps / 2];
    return HX_OK;
}

static hx_status auto_measure(hx_transport *t)
{
    hxi_auto *a = t->impl;
    int best = -1, len = 0;
    char line[512];

    for (int i = 0; i < a->n; i++) {
        a->us[i] = -1;
        if ((hx_transport_caps_of(a->name[i]) & HX_CAP_HOST) && best >= 0)
            continue;
        HXI_CHECK(auto_trial(t, i, &a->us[i]));
        if (a->us[i] >= 0 && (best < 0 || a->us[i] < a->us[best]))
            best = i;
    }
    if (best < 0)
        return hxi_error(HX_ERR_UNSUPPORTED,
                         "auto: no transport could run on this plan (each one's reason was "
                         "printed): fix the first refusal, or name a transport");
    a->chosen = a->cand[best];
    a->measured_size = t->plan->max_ntotal;
    len = snprintf(line, sizeof line, "auto: %s (measured, us per %s:", a->name[best],
                   t->plan->full_shell ? "forward (full shell)" : "forward+reverse");
    for (int i = 0; i < a->n && len < (int) sizeof line; i++)
        if (a->us[i] >= 0)
            len +=
                snprintf(line + len, sizeof line - (size_t) len, " %s %.1f", a->name[i], a->us[i]);
    if (len < (int) sizeof line)
        snprintf(line + len, sizeof line - (size_t) len, ")");
    snprintf(t->describe, sizeof t->describe, "%s", line);
    if (hx_comm_rank(t->comm) == 0)
        fprintf(stderr, "halox %s; chose %s for a largest rank of %d atoms\n", line, a->name[best],
                a->measured_size);
    return HX_OK;
}

static hx_status auto_set_plan(hx_transport *t)
{
    hxi_auto *a = t->impl;
    int size = t->plan->max_ntotal;
    int again = !a->chosen || fabs((double) size - a->measured_size) > 0.25 * a->measured_size;
    if (again)
        HXI_CHECK(auto_measure(t));
    else
        HXI_CHECK(hx_transport_set_plan(a->chosen, t->plan));
    t->x = hx_transport_coords(a->chosen);
    t->f = hx_transport_forces(a->chosen);
    t->capacity = a->chosen->capacity;
    return HX_OK;
}

static hx_status auto_forward(hx_transport *t)
{
    hxi_auto *a = t->impl;
    return hx_transport_forward(a->chosen);
}

static hx_status auto_reverse(hx_transport *t)
{
    hxi_auto *a = t->impl;
    return hx_transport_reverse(a->chosen);
}

static hx_status auto_sync(hx_transport *t)
{
    hxi_auto *a = t->impl;
    return a->chosen ? hx_transport_sync(a->chosen) : HX_OK;
}

/* Field calls, checked and resolved by fields.c against auto's own
 * registry, go to the choice; a forward with the coordinates counts the
 * choice's step, as hx_transport_forward does. */
static hx_status auto_fields_forward(hx_transport *t, const hxi_field *f, int n)
{
    hx_transport *c = ((hxi_auto *) t->impl)->chosen;
    if (!c->ops->fields_forward)
        return hxi_error(HX_ERR_UNSUPPORTED, "auto: its choice %s carries no fields", c->ops->name);
    if (n > 0 && f[0].shift)
        c->step++;
    return c->ops->fields_forward(c, f, n);
}

static hx_status auto_fields_reverse(hx_transport *t, const hxi_field *f, int n)
{
    hx_transport *c = ((hxi_auto *) t->impl)->chosen;
    if (!c->ops->fields_reverse)
        return hxi_error(HX_ERR_UNSUPPORTED, "auto: its choice %s carries no fields", c->ops->name);
    return c->ops->fields_reverse(c, f, n);
}

const hx_transport *hxi_auto_chosen(const hx_transport *t)
{
    const hxi_auto *a = t->impl;
    return a->chosen;
}

const hxi_transport_ops hxi_transport_auto = {
    .name = "auto",
    .caps = HX_CAP_CHOOSES, /* and those of the chosen transport */
    .create = auto_create,
    .destroy = auto_destroy,
    .set_plan = auto_set_plan,
    .forward = auto_forward,
    .reverse = auto_reverse,
    .sync = auto_sync,
    .fields_forward = auto_fields_forward,
    .fields_reverse = auto_fields_reverse,
};
