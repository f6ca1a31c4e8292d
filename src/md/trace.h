/*
 * trace.h - halox-md's own timeline (HALOX_TRACE=FILE): the driver's and
 * the engines' phases on every rank's host thread as named ranges and,
 * with the GPU engine, every kernel, copy and memset from CUPTI's activity
 * records with its stream, on one clock, written by rank 0 as one Chrome /
 * Perfetto trace (JSON: ranks are processes, the host thread and the
 * streams are threads; with HALOX_TRACE_API=1 also every CUDA runtime
 * call, on a row of its host thread). Off by default; when off, every hook is one load of
 * a global flag. bench/trace_step.py draws one step of a trace.
 */
#ifndef HALOX_MD_TRACE_H
#define HALOX_MD_TRACE_H

#include "core/hxi.h"
#include "md/md.h"

#include <stdint.h>

/* Non-zero while a trace is being recorded (read by the hooks). */
extern int hxi_trace_on;

/* Collective: starts recording when HALOX_TRACE names a file (the ranks
 * agree on the clock: each rank's offset to rank 0 is measured after a
 * barrier). A no-op otherwise. */
hx_status hxi_trace_open(hx_comm *comm);
/* Collective: gathers every rank's records, writes the file on rank 0 and
 * stops recording. A no-op when not recording. */
hx_status hxi_trace_close(hx_comm *comm);

/* A range of the host thread, in hxi_now() seconds. `name` must outlive
 * the trace (a string literal). */
void hxi_trace_host(const char *name, double t0, double t1);
/* A range on GPU stream `stream` (cat: "kernel", "memcpy", "memset"),
 * ns on the device clock; the name is copied. cat "api": a CUDA runtime
 * call on the host, `stream` then numbers its host thread. */
void hxi_trace_device(const char *cat, const char *name, uint64_t t0_ns, uint64_t t1_ns,
                      uint32_t stream);
/* The device clock: host seconds = device ns * 1e-9 + offset. */
void hxi_trace_device_clock(double offset_s);
/* Called before the records are gathered (the GPU engine flushes CUPTI's
 * buffers here); NULL: none. */
void hxi_trace_set_flush(void (*flush)(void));

/* Adds t1 - t0 to stage k of the statistics and, when recording, traces
 * the range under the stage's name. */
void hxi_md_stage(hx_md_stats *st, int k, double t0, double t1);
/* The name of stage k (HX_MD_LOCAL ... HX_MD_OTHER). */
const char *hxi_md_stage_name(int k);

#endif /* HALOX_MD_TRACE_H */
