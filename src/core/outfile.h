/*
 * outfile.h - every file a user names for output (a trace, a trajectory,
 * --stats-csv, halox-bench --csv) is opened here, so that none destroys
 * what the name stands for:
 *   - nothing there, or a regular file: HXI_OUT_REPLACE writes a temporary
 *     beside it and renames it over the name at hxi_out_commit (readers
 *     never see half a file); HXI_OUT_STREAM writes in place from the
 *     start (a trajectory grows as the run goes); HXI_OUT_APPEND appends;
 *   - a symbolic link: the same, on the file it points to (the link stays);
 *   - a character device, a FIFO, or a name under /dev/ or /proc/ (what a
 *     user means by /dev/stdout or /dev/null): written in place, never
 *     renamed over;
 *   - a directory, a block device or anything else: one error, nothing
 *     written.
 * Every write error is an error: hxi_out_check after each batch of
 * writes, hxi_out_commit at the end. Not thread-safe; one rank writes.
 */
#ifndef HALOX_OUTFILE_H
#define HALOX_OUTFILE_H

#include "halox.h"

#include <stdio.h>

typedef enum hxi_out_mode { HXI_OUT_REPLACE, HXI_OUT_STREAM, HXI_OUT_APPEND } hxi_out_mode;

typedef struct hxi_outfile {
    FILE *fp;        /* write here between open and commit */
    char what[64];   /* how errors name the output: "--stats-csv", ... */
    char path[4096]; /* the name the user gave */
    char dest[4096]; /* where the bytes end up: path, or a link's target */
    char tmp[4200];  /* the temporary beside dest, or "" when in place */
} hxi_outfile;

/* Checks what `path` names and where its bytes would go (dest, n bytes),
 * without writing: *in_place 1 where the file is written where it is (a
 * device, a FIFO, a /dev/ name), 0 where a regular file or nothing is. */
hx_status hxi_out_target(const char *path, const char *what, char *dest, size_t n, int *in_place);

/* Before a run: refuses a name that could not take the output at the
 * end, and checks a regular file's directory by creating a temporary
 * there and removing it. A device or FIFO is not opened (a FIFO's reader
 * would see an end). */
hx_status hxi_out_probe(const char *path, const char *what);

/* Opens o->fp for `path` as the header says; on an error nothing is open. */
hx_status hxi_out_open(hxi_outfile *o, const char *path, const char *what, hxi_out_mode mode);

/* Flushes o->fp and reports a write error that happened so far. */
hx_status hxi_out_check(hxi_outfile *o);

/* Flushes and closes, then renames the temporary over the name; an error
 * leaves the old file as it was. */
hx_status hxi_out_commit(hxi_outfile *o);

/* Closes without keeping anything of a temporary. */
void hxi_out_abort(hxi_outfile *o);

#endif /* HALOX_OUTFILE_H */
