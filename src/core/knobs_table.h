/*
 * knobs_table.h - the rows of knobs.def as data, for knobs.c (reading and
 * checking) and knobs_doc.c (printing); no one else includes it.
 */
#ifndef HALOX_KNOBS_TABLE_H
#define HALOX_KNOBS_TABLE_H

#include "core/knobs.h"

#include <stddef.h>

typedef enum { HXK_T_INT, HXK_T_REAL, HXK_T_CHOICE, HXK_T_PATH, HXK_T_INTS } hxi_knob_type;
typedef enum { HXK_A_USER, HXK_A_TUNING, HXK_A_TEST } hxi_knob_audience;

typedef struct hxi_knob {
    const char *name;
    hxi_knob_type type;
    hxi_knob_audience audience;
    double lo, hi;
    int flags;          /* HXK_OPEN, HXK_POW2 */
    const char *values; /* CHOICE: "a|b|c"; INTS: the fields' names and separator */
    double dflt;        /* the value when unset (CHOICE: an index) */
    const char *shown;  /* the default as the docs say it */
    const char *help;
    size_t offset; /* of the field in struct hxi_knobs */
} hxi_knob;

extern const hxi_knob hxi_knob_table[];
extern const int hxi_knob_count;

/* What k allows, in words ("a whole number from 0 to 2"; code: `0` with
 * backticks, for the docs). */
void hxi_knob_allowed(const hxi_knob *k, char *buf, size_t n, int code);

#endif /* HALOX_KNOBS_TABLE_H */
