/*
 * knobs.h - halox's environment variables (knobs.def, the one table), read
 * and checked once. Code reads the fields of hxi_knobs(), never getenv.
 * Not installed.
 */
#ifndef HALOX_KNOBS_H
#define HALOX_KNOBS_H

#include "halox.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The choices of the CHOICE knobs, in the order of their indices. */
#define HXK_MPI_MODES "auto|cuda-aware|ipc|staged"
enum { HXK_MPI_AUTO, HXK_MPI_CUDA_AWARE, HXK_MPI_IPC, HXK_MPI_STAGED };
/* The fused transports' force modes: the indices are HXI_FZ_F_*. */
#define HXK_FORCE_MODES "push|pull|atomic"
#define HXK_REBUILDS    "size|small|large|host"
enum { HXK_REBUILD_SIZE, HXK_REBUILD_SMALL, HXK_REBUILD_LARGE, HXK_REBUILD_HOST };
#define HXK_CHECKS "none|atoms|lists|all|bad-reach"
enum { HXK_CHECK_NONE, HXK_CHECK_ATOMS, HXK_CHECK_LISTS, HXK_CHECK_ALL, HXK_CHECK_BAD_REACH };

/* Flags of a knob (knobs.def). */
#define HXK_OPEN 1 /* REAL: above lo, not lo itself */
#define HXK_POW2 2 /* INT, INTS: 0 or a power of two */

#define HXK_INTS_MAX 3

#define HXK_FIELD_INT(f)    int f;
#define HXK_FIELD_REAL(f)   double f;
#define HXK_FIELD_CHOICE(f) int f;
#define HXK_FIELD_PATH(f)   const char *f;
#define HXK_FIELD_INTS(f)   int f[HXK_INTS_MAX];

/* Every knob's value: the environment's where set, else its default. */
struct hxi_knobs {
#define HXK(NAME, field, TYPE, ...) HXK_FIELD_##TYPE(field)
#include "core/knobs.def"
#undef HXK
};

/* The values, read and checked at the first call of this or of
 * hxi_knobs_load (a bad value leaves that knob at its default; the entry
 * points report it). */
const struct hxi_knobs *hxi_knobs(void);

/* Reads and checks every knob once; later calls give the same answer.
 * HX_ERR_INVALID with one message naming the first bad variable, its
 * value and what it allows (and how many others are bad). Warns once of
 * HALOX_* variables set that halox does not read. */
hx_status hxi_knobs_load(void);

/* Sets one knob from text as the environment would, checked the same way
 * (NULL: back to what the environment gave), for tests and halox-bench,
 * which change a knob within one process; the environment is not read
 * again. HX_ERR_INVALID for a bad value (the knob keeps its value) or an
 * unknown name. */
hx_status hxi_knobs_set(const char *name, const char *text);

/* The table as docs/environment.md shows it (markdown, one table per
 * audience), or one tab-separated line per knob for tests: name, type,
 * audience, lo, hi, flags, values. */
void hxi_knobs_markdown(FILE *f);
void hxi_knobs_tsv(FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* HALOX_KNOBS_H */
