/* knobs_doc.c - the table of knobs.def in words: what each knob allows (for
 * the error that names a bad value) and the tables of docs/environment.md
 * (halox-md --help-env prints them). */
#include "core/knobs_table.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* A bound as the docs write it: whole numbers in digits (what an INT knob
 * takes), large reals as 1e9 rather than 1e+09. */
static void number(double v, int real, char *buf, size_t n)
{
    if (!real || (v == (double) (long long) v && v < 1e6 && v > -1e6)) {
        snprintf(buf, n, "%lld", (long long) v);
        return;
    }
    char raw[32], *out = buf;
    snprintf(raw, sizeof raw, "%g", v);
    for (const char *p = raw; *p && (size_t) (out - buf) + 1 < n; p++) {
        if (*p == '+' || (*p == '0' && p > raw && (p[-1] == '+' || p[-1] == 'e')))
            continue;
        *out++ = *p;
    }
    *out = '\0';
}

static void append(char *buf, size_t n, const char *text)
{
    const size_t used = strlen(buf);
    snprintf(buf + used, n - used, "%s", text);
}

/* "`a`" or "a". */
static void append_value(char *buf, size_t n, const char *v, size_t len, int code)
{
    char one[80];
    snprintf(one, sizeof one, "%s%.*s%s", code ? "`" : "", (int) len, v, code ? "`" : "");
    append(buf, n, one);
}

/* The values one number of k may take: "0 or 1", "a whole number from 0
 * to 2", "0, 1, 2, 4 or 8". */
static void one_number(const hxi_knob *k, char *buf, size_t n, int code)
{
    char lo[32], hi[32];
    number(k->lo, k->type == HXK_T_REAL, lo, sizeof lo);
    number(k->hi, k->type == HXK_T_REAL, hi, sizeof hi);
    if (k->type != HXK_T_REAL && k->lo == 0 && k->hi == 1) {
        append_value(buf, n, "0", 1, code);
        append(buf, n, " or ");
        append_value(buf, n, "1", 1, code);
    } else if (k->flags & HXK_POW2) {
        append_value(buf, n, "0", 1, code);
        for (long p = 1; p <= (long) k->hi; p *= 2) {
            char v[24];
            snprintf(v, sizeof v, "%ld", p);
            append(buf, n, 2 * p > (long) k->hi ? " or " : ", ");
            append_value(buf, n, v, strlen(v), code);
        }
    } else if (k->type == HXK_T_REAL) {
        append(buf, n, (k->flags & HXK_OPEN) ? "a number above " : "a number from ");
        append_value(buf, n, lo, strlen(lo), code);
        append(buf, n, " up to ");
        append_value(buf, n, hi, strlen(hi), code);
    } else if (k->hi >= INT_MAX) {
        append(buf, n, "a whole number of ");
        append_value(buf, n, lo, strlen(lo), code);
        append(buf, n, " or more");
    } else {
        append(buf, n, "a whole number from ");
        append_value(buf, n, lo, strlen(lo), code);
        append(buf, n, " to ");
        append_value(buf, n, hi, strlen(hi), code);
    }
}

void hxi_knob_allowed(const hxi_knob *k, char *buf, size_t n, int code)
{
    buf[0] = '\0';
    switch (k->type) {
    case HXK_T_INT:
    case HXK_T_REAL:
        one_number(k, buf, n, code);
        return;
    case HXK_T_CHOICE:
        append(buf, n, code ? "" : "one of ");
        for (const char *p = k->values; *p;) {
            const char *bar = strchr(p, '|');
            const size_t len = bar ? (size_t) (bar - p) : strlen(p);
            append_value(buf, n, p, len, code);
            if (bar)
                append(buf, n, strchr(bar + 1, '|') ? ", " : " or ");
            p += len + (bar ? 1 : 0);
        }
        return;
    case HXK_T_PATH:
        append(buf, n, "a file in a directory that exists");
        return;
    case HXK_T_INTS:
        append_value(buf, n, k->values, strlen(k->values), code);
        append(buf, n, ", each ");
        one_number(k, buf, n, code);
        return;
    }
}

static const char *const audience_title[3] = {
    "### Settings of a run",
    "### Tuning: choices made by measurements on two GPUs, kept to measure them again",
    "### Tests: other paths, smaller room, faults on purpose",
};

/* The text with any '|' escaped, for a markdown cell. */
static void cell(FILE *f, const char *text)
{
    for (const char *p = text; *p; p++) {
        if (*p == '|')
            fputc('\\', f);
        fputc(*p, f);
    }
}

void hxi_knobs_markdown(FILE *f)
{
    for (int a = HXK_A_USER; a <= HXK_A_TEST; a++) {
        fprintf(f, "%s%s\n\n| variable | default | values | meaning |\n|---|---|---|---|\n",
                a == HXK_A_USER ? "" : "\n", audience_title[a]);
        for (int i = 0; i < hxi_knob_count; i++) {
            const hxi_knob *k = &hxi_knob_table[i];
            char allowed[300];
            if ((int) k->audience != a)
                continue;
            hxi_knob_allowed(k, allowed, sizeof allowed, 1);
            fprintf(f, "| `%s` | ", k->name);
            cell(f, k->shown);
            fputs(" | ", f);
            cell(f, allowed);
            fputs(" | ", f);
            cell(f, k->help);
            fputs(" |\n", f);
        }
    }
}

void hxi_knobs_tsv(FILE *f)
{
    static const char *const types[] = {"int", "real", "choice", "path", "ints"};
    static const char *const audiences[] = {"user", "tuning", "test"};
    for (int i = 0; i < hxi_knob_count; i++) {
        const hxi_knob *k = &hxi_knob_table[i];
        fprintf(f, "%s\t%s\t%s\t%.17g\t%.17g\t%d\t%s\n", k->name, types[k->type],
                audiences[k->audience], k->lo, k->hi, k->flags, k->values[0] ? k->values : "-");
    }
}
