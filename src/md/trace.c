/*
 * trace.c - HALOX_TRACE=FILE (trace.h): records in memory on each rank,
 * gathered by rank 0 at the end and written as Chrome trace JSON
 * ({"traceEvents": [...]}, complete events "X" with ts and dur in us from
 * the start of the recording; metadata names the processes "rank R" and
 * the threads "host" and "stream S"). Perfetto (ui.perfetto.dev) and
 * chrome://tracing read it.
 *
 * One clock: ranks on one host share CLOCK_MONOTONIC; ranks on several
 * hosts are aligned to rank 0 by the time each reads just after a common
 * barrier (good to the barrier's skew, microseconds). Device records come
 * in the device's ns and are moved onto the host clock by the offset the
 * GPU engine measured (hxi_trace_device_clock).
 */
#define _POSIX_C_SOURCE 200809L /* gethostname */

#include "md/trace.h"

#include "core/outfile.h"
#include "md/md_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int hxi_trace_on = 0;

enum { CAT_HOST = 0, CAT_KERNEL, CAT_MEMCPY, CAT_MEMSET, CAT_API, NCAT };
static const char *const cat_names[NCAT] = {"host", "kernel", "memcpy", "memset", "api"};
/* Threads of a rank in the JSON: 0 the host's ranges, 1 + S stream S,
 * API_TID + k the CUDA calls of host thread k (0 the first thread seen
 * making one, and so on). */
enum { API_TID = 1 << 24 };

typedef struct rec {
    double t0, t1;    /* host seconds */
    const char *name; /* a literal, or an interned copy */
    uint32_t stream;  /* device records: the stream; API records: the host thread */
    uint8_t cat;
} rec;

static struct {
    char path[1024];
    rec *recs;
    size_t n, cap, max;
    int dropped;
    double origin;     /* rank 0's hxi_now() at the start, on this rank's clock */
    double dev_offset; /* host s = device ns * 1e-9 + dev_offset */
    void (*flush)(void);
    char **names; /* interned device names (open addressing) */
    size_t nnames, capnames;
} tr;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char) *s) * 1099511628211ull;
    return h;
}

/* The one copy of s (NULL when out of memory). */
static const char *intern(const char *s)
{
    if (tr.nnames * 2 >= tr.capnames) {
        size_t cap = tr.capnames ? 2 * tr.capnames : 256;
        char **t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < tr.capnames; i++)
            if (tr.names[i]) {
                size_t k = hash_str(tr.names[i]) & (cap - 1);
                while (t[k])
                    k = (k + 1) & (cap - 1);
                t[k] = tr.names[i];
            }
        free(tr.names);
        tr.names = t;
        tr.capnames = cap;
    }
    size_t k = hash_str(s) & (tr.capnames - 1);
    while (tr.names[k]) {
        if (strcmp(tr.names[k], s) == 0)
            return tr.names[k];
        k = (k + 1) & (tr.capnames - 1);
    }
    size_t len = strlen(s) + 1;
    char *c = malloc(len);
    if (!c)
        return NULL;
    memcpy(c, s, len);
    tr.names[k] = c;
    tr.nnames++;
    return c;
}

static rec *push(void)
{
    if (tr.n == tr.cap) {
        if (tr.cap >= tr.max) {
            tr.dropped = 1;
            return NULL;
        }
        size_t cap = tr.cap ? 2 * tr.cap : 65536;
        if (cap > tr.max)
            cap = tr.max;
        rec *r = realloc(tr.recs, cap * sizeof *r);
        if (!r) {
            tr.dropped = 1;
            return NULL;
        }
        tr.recs = r;
        tr.cap = cap;
    }
    return &tr.recs[tr.n++];
}

void hxi_trace_host(const char *name, double t0, double t1)
{
    if (!hxi_trace_on)
        return;
    rec *r = push();
    if (r)
        *r = (rec){t0, t1, name, 0, CAT_HOST};
}

void hxi_trace_device(const char *cat, const char *name, uint64_t t0_ns, uint64_t t1_ns,
                      uint32_t stream)
{
    if (!hxi_trace_on)
        return;
    uint8_t c = CAT_KERNEL;
    for (uint8_t k = 1; k < NCAT; k++)
        if (strcmp(cat, cat_names[k]) == 0)
            c = k;
    const char *n = intern(name ? name : "?");
    rec *r = n ? push() : NULL;
    if (r)
        *r = (rec){(double) t0_ns * 1e-9 + tr.dev_offset, (double) t1_ns * 1e-9 + tr.dev_offset, n,
                   stream, c};
}

void hxi_trace_device_clock(double offset_s)
{
    tr.dev_offset = offset_s;
}

void hxi_trace_set_flush(void (*flush)(void))
{
    tr.flush = flush;
}

static const char *const stage_names[HX_MD_NSTAGES] = {
    "local forces",    "non-local forces", "halo forward", "halo reverse",
    "neighbour build", "migrate + plan",   "integrate",    "other"};

const char *hxi_md_stage_name(int k)
{
    return k >= 0 && k < HX_MD_NSTAGES ? stage_names[k] : "?";
}

void hxi_md_stage(hx_md_stats *st, int k, double t0, double t1)
{
    st->stage[k] += t1 - t0;
    if (hxi_trace_on)
        hxi_trace_host(stage_names[k], t0, t1);
}

hx_status hxi_trace_open(hx_comm *comm)
{
    int rank = hx_comm_rank(comm), size = hx_comm_size(comm);
    /* Rank 0's setting holds for all (a launcher may pass the variable to
     * rank 0 alone). */
    char path[sizeof tr.path];
    memset(path, 0, sizeof path);
    if (rank == 0) {
        const char *env = hxi_knobs()->trace;
        if (env && strlen(env) >= sizeof path)
            path[0] = '\1'; /* too long: refused below, on every rank */
        else if (env)
            snprintf(path, sizeof path, "%s", env);
    }
    HXI_CHECK(hxi_bcast(comm, path, sizeof path, 0));
    if (!path[0])
        return HX_OK;
    if (path[0] == '\1')
        return hxi_error(HX_ERR_INVALID, "HALOX_TRACE: the path is longer than %zu bytes",
                         sizeof path - 1);
    /* The file is written at the end; a directory that cannot take it
     * should say so now, not after the run. */
    hx_status st = HX_OK;
    if (rank == 0) {
        st = hxi_out_probe(path, "HALOX_TRACE");
    }
    HXI_CHECK(hxi_agree(comm, st));
    memset(&tr, 0, sizeof tr);
    snprintf(tr.path, sizeof tr.path, "%s", path);
    tr.max = (size_t) hxi_knobs()->trace_max; /* 1 or more */
    /* One clock: the same host needs no correction. */
    char host[64], *hosts = NULL;
    memset(host, 0, sizeof host);
    if (gethostname(host, sizeof host - 1) != 0)
        strcpy(host, "?");
    HXI_CHECK(hxi_agree(comm, hxi_alloc((void **) &hosts, sizeof host * (size_t) size, "trace")));
    st = hxi_allgather(comm, host, sizeof host, hosts);
    int same = 1;
    for (int r = 1; st == HX_OK && r < size; r++)
        same &= memcmp(hosts, hosts + sizeof host * (size_t) r, sizeof host) == 0;
    free(hosts);
    HXI_CHECK(st);
    double t[2];
    HXI_CHECK(hxi_barrier(comm));
    t[0] = hxi_now();
    t[1] = t[0];
    HXI_CHECK(hxi_bcast(comm, &t[1], sizeof t[1], 0));
    tr.origin = same ? t[1] : t[0]; /* rank 0's start, on this rank's clock */
    hxi_trace_on = 1;
    hxi_trace_host("trace start", t[0], t[0]);
    return HX_OK;
}

/* One record as a JSON line; returns the bytes written (at most n). */
static int json_rec(char *buf, size_t n, const rec *r, int rank)
{
    char name[512];
    size_t k = 0;
    for (const char *s = r->name; *s && k + 8 < sizeof name; s++) {
        unsigned char c = (unsigned char) *s;
        if (c == '"' || c == '\\') {
            name[k++] = '\\';
            name[k++] = (char) c;
        } else if (c < 0x20) {
            k += (size_t) snprintf(name + k, sizeof name - k, "\\u%04x", c);
        } else {
            name[k++] = (char) c;
        }
    }
    name[k] = 0;
    int tid = r->cat == CAT_HOST  ? 0
              : r->cat == CAT_API ? API_TID + (int) (r->stream % (uint32_t) API_TID)
                                  : 1 + (int) r->stream;
    double ts = (r->t0 - tr.origin) * 1e6, dur = (r->t1 - r->t0) * 1e6;
    return snprintf(buf, n,
                    "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,"
                    "\"pid\":%d,\"tid\":%d},\n",
                    name, cat_names[r->cat], ts, dur < 0 ? 0.0 : dur, rank, tid);
}

/* This rank's records and thread names as JSON lines. */
static hx_status serialize(int rank, char **out, size_t *len)
{
    size_t cap = 4096 + tr.n * 256, n = 0;
    char *b = NULL;
    HXI_CHECK(hxi_alloc((void **) &b, cap, "trace text"));
    n += (size_t) snprintf(b + n, cap - n,
                           "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":"
                           "\"rank %d\"}},\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":"
                           "%d,\"args\":{\"sort_index\":%d}},\n{\"name\":\"thread_name\",\"ph\":"
                           "\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"host\"}},\n",
                           rank, rank, rank, rank, rank);
    /* Streams and API threads that appear, named once each. */
    uint32_t seen[64];
    uint8_t seen_api[64];
    int nseen = 0;
    for (size_t i = 0; i < tr.n && nseen < 64; i++) {
        const rec *r = &tr.recs[i];
        if (r->cat == CAT_HOST)
            continue;
        const uint8_t api = r->cat == CAT_API;
        int found = 0;
        for (int s = 0; s < nseen; s++)
            found |= seen[s] == r->stream && seen_api[s] == api;
        if (found)
            continue;
        seen[nseen] = r->stream;
        seen_api[nseen++] = api;
        if (api)
            n += (size_t) snprintf(b + n, cap - n,
                                   "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                                   "\"args\":{\"name\":\"CUDA calls, host thread %u\"}},\n",
                                   rank, API_TID + (int) (r->stream % (uint32_t) API_TID),
                                   r->stream % (uint32_t) API_TID);
        else
            n += (size_t) snprintf(b + n, cap - n,
                                   "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                                   "\"args\":{\"name\":\"stream %u\"}},\n",
                                   rank, 1 + (int) r->stream, r->stream);
    }
    for (size_t i = 0; i < tr.n; i++) {
        if (cap - n < 1024) {
            cap *= 2;
            HXI_CHECK(hxi_grow((void **) &b, cap, "trace text"));
        }
        n += (size_t) json_rec(b + n, cap - n, &tr.recs[i], rank);
    }
    *out = b;
    *len = n;
    return HX_OK;
}

static hx_status write_file(const char *all, size_t len)
{
    hxi_outfile o;
    HXI_CHECK(hxi_out_open(&o, tr.path, "HALOX_TRACE", HXI_OUT_REPLACE));
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", o.fp);
    /* Every line ends with ",\n": the last one loses its comma. */
    while (len > 0 && (all[len - 1] == '\n' || all[len - 1] == ','))
        len--;
    fwrite(all, 1, len, o.fp);
    fputs("\n]}\n", o.fp);
    return hxi_out_commit(&o); /* any write error above is its error */
}

hx_status hxi_trace_close(hx_comm *comm)
{
    int rank = hx_comm_rank(comm), size = hx_comm_size(comm);
    if (!hxi_trace_on)
        return HX_OK;
    if (tr.flush)
        tr.flush();
    hxi_trace_on = 0;
    if (tr.dropped)
        hxi_warn("HALOX_TRACE: rank %d kept its first %zu records only (HALOX_TRACE_MAX)", rank,
                 tr.n);
    char *mine = NULL, *all = NULL;
    size_t len = 0;
    hx_status st = hxi_agree(comm, serialize(rank, &mine, &len));
    int *counts = NULL, *displs = NULL;
    long long total = 0;
    if (st == HX_OK) {
        int n = len > (size_t) INT32_MAX ? -1 : (int) len;
        st = hxi_alloc((void **) &counts, sizeof(int) * (size_t) size, "trace");
        if (st == HX_OK)
            st = hxi_alloc((void **) &displs, sizeof(int) * (size_t) size, "trace");
        st = hxi_agree(comm, st);
        if (st == HX_OK)
            st = hxi_allgather(comm, &n, sizeof n, counts);
        for (int r = 0; st == HX_OK && r < size; r++) {
            if (counts[r] < 0 || total + counts[r] > INT32_MAX)
                st = hxi_error(HX_ERR_OVERFLOW, "HALOX_TRACE: over 2 GB of records; set "
                                                "HALOX_TRACE_MAX lower or trace fewer steps");
            displs[r] = (int) total;
            total += counts[r];
        }
    }
    if (st == HX_OK)
        st = hxi_agree(comm,
                       rank == 0 ? hxi_alloc((void **) &all, (size_t) total + 1, "trace") : HX_OK);
    if (st == HX_OK)
        st = hxi_gatherv(comm, mine, (int) len, all, counts, displs, 0, 0);
    if (st == HX_OK && rank == 0)
        st = write_file(all, (size_t) total);
    free(mine);
    free(all);
    free(counts);
    free(displs);
    free(tr.recs);
    for (size_t i = 0; i < tr.capnames; i++)
        free(tr.names[i]);
    free(tr.names);
    tr.recs = NULL;
    tr.names = NULL;
    tr.n = tr.cap = tr.nnames = tr.capnames = 0;
    st = hxi_agree(comm, st);
    if (st == HX_OK && rank == 0)
        printf("halox-md: trace of %d rank(s) written to %s\n", size, tr.path);
    return st;
}
