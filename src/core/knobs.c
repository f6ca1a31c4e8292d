/* knobs.c - the environment variables of knobs.def, read and checked once
 * (see knobs.h); knobs_doc.c prints the table. */
#define _POSIX_C_SOURCE 200809L

#include "core/knobs_table.h"

#include "core/hxi.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

extern char **environ;

/* clang-format off */
const hxi_knob hxi_knob_table[] = {
#define HXK(NAME, field, TYPE, AUD, lo, hi, flags, values, dflt, shown, help) \
    {#NAME, HXK_T_##TYPE, HXK_A_##AUD, lo, hi, flags, values, dflt, shown, help, \
     offsetof(struct hxi_knobs, field)},
#include "core/knobs.def"
#undef HXK
};
/* clang-format on */
const int hxi_knob_count = (int) (sizeof hxi_knob_table / sizeof hxi_knob_table[0]);

/* Variables named HALOX_* that halox itself does not read but its scripts
 * do (tests/lammps_match.py, tools/test.sh): no warning for them. */
static const char *const not_ours[] = {"HALOX_LMP", "HALOX_TEST_SANITIZE", "HALOX_TEST_FUZZ"};

static struct hxi_knobs from_env; /* the environment's values (or defaults) */
static struct hxi_knobs cur;      /* the same, after hxi_knobs_set */
/* A PATH knob's text, owned: [0] from the environment, [1] set later. */
static char *owned[2][sizeof hxi_knob_table / sizeof hxi_knob_table[0]];
static hx_status load_status;
static char load_msg[700];
static char unknown[300];     /* HALOX_* variables set that no knob reads */
static atomic_int load_state; /* 0: not read, 1: being read, 2: read */

#define HXK_PATH_MAX 1024

static void *field_of(struct hxi_knobs *v, const hxi_knob *k)
{
    return (char *) v + k->offset;
}

/* The problem with text, or NULL where the text is a whole number in range. */
static const char *parse_int(const hxi_knob *k, const char *text, int *out)
{
    char *end;
    errno = 0;
    const long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || text[0] == ' ' || text[0] == '\t')
        return "is not a whole number";
    if (errno == ERANGE || v < k->lo || v > k->hi)
        return "is out of range";
    if ((k->flags & HXK_POW2) && (v & (v - 1)) != 0)
        return "is not 0 or a power of two";
    *out = (int) v;
    return NULL;
}

static const char *parse_real(const hxi_knob *k, const char *text, double *out)
{
    char *end;
    const double v = strtod(text, &end);
    if (end == text || *end != '\0' || text[0] == ' ' || text[0] == '\t')
        return "is not a number";
    if (!isfinite(v))
        return "is not finite";
    if (v < k->lo || v > k->hi || ((k->flags & HXK_OPEN) && v == k->lo))
        return "is out of range";
    *out = v;
    return NULL;
}

static const char *parse_choice(const hxi_knob *k, const char *text, int *out)
{
    const size_t n = strlen(text);
    const char *p = k->values;
    for (int i = 0; *p; i++) {
        const char *bar = strchr(p, '|');
        const size_t len = bar ? (size_t) (bar - p) : strlen(p);
        if (len == n && strncmp(p, text, n) == 0) {
            *out = i;
            return NULL;
        }
        p += len + (bar ? 1 : 0);
    }
    return "is not one of the choices";
}

/* The fields of an INTS knob: how many, and the character between them. */
static int ints_shape(const hxi_knob *k, char *sep)
{
    int n = 1;
    *sep = ',';
    for (const char *p = k->values; *p; p++)
        if (*p != '_' && (*p < 'A' || *p > 'Z')) {
            *sep = *p;
            n++;
        }
    return n;
}

static const char *parse_ints(const hxi_knob *k, const char *text, int *out)
{
    char sep;
    const int n = ints_shape(k, &sep);
    int v[HXK_INTS_MAX], seps = 0;
    for (const char *p = text; *p; p++)
        seps += *p == sep;
    if (seps != n - 1)
        return "has the wrong number of fields";
    const char *p = text;
    for (int i = 0; i < n; i++) {
        char part[32];
        const char *end = i + 1 < n ? strchr(p, sep) : p + strlen(p);
        if ((size_t) (end - p) >= sizeof part)
            return "is not a whole number";
        memcpy(part, p, (size_t) (end - p));
        part[end - p] = '\0';
        const char *why = parse_int(k, part, &v[i]);
        if (why)
            return why;
        p = end + 1;
    }
    memcpy(out, v, (size_t) n * sizeof *v);
    return NULL;
}

/* A file in a directory that exists: the directory is checked, the file
 * is the program's to write. */
static const char *parse_path(const char *text)
{
    char dir[HXK_PATH_MAX];
    struct stat sb;
    if (strlen(text) >= sizeof dir)
        return "is too long";
    snprintf(dir, sizeof dir, "%s", text);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        slash[1] = '\0';
    else
        *slash = '\0';
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return "names a directory that does not exist";
    return NULL;
}

/* Sets k in *v (PATH: into owned[slot]) from text; the problem or NULL. */
static const char *parse(const hxi_knob *k, const char *text, struct hxi_knobs *v, int slot)
{
    void *f = field_of(v, k);
    switch (k->type) {
    case HXK_T_INT:
        return parse_int(k, text, (int *) f);
    case HXK_T_REAL:
        return parse_real(k, text, (double *) f);
    case HXK_T_CHOICE:
        return parse_choice(k, text, (int *) f);
    case HXK_T_INTS:
        return parse_ints(k, text, (int *) f);
    case HXK_T_PATH: {
        const char *why = parse_path(text);
        if (why)
            return why;
        char *copy = strdup(text);
        if (!copy)
            return "cannot be kept (out of memory)";
        const int i = (int) (k - hxi_knob_table);
        free(owned[slot][i]);
        owned[slot][i] = copy;
        *(const char **) f = copy;
        return NULL;
    }
    }
    return "has a type halox does not know";
}

static void set_default(const hxi_knob *k, struct hxi_knobs *v)
{
    void *f = field_of(v, k);
    switch (k->type) {
    case HXK_T_INT:
    case HXK_T_CHOICE:
        *(int *) f = (int) k->dflt;
        break;
    case HXK_T_REAL:
        *(double *) f = k->dflt;
        break;
    case HXK_T_INTS:
        for (int i = 0; i < HXK_INTS_MAX; i++)
            ((int *) f)[i] = (int) k->dflt;
        break;
    case HXK_T_PATH:
        *(const char **) f = NULL;
        break;
    }
}

/* "HALOX_LOG='-5' is out of range; give a whole number from 0 to 2". */
static void describe_bad(const hxi_knob *k, const char *text, const char *why, char *buf, size_t n)
{
    char allowed[160];
    hxi_knob_allowed(k, allowed, sizeof allowed, 0);
    snprintf(buf, n, "%s='%.160s' %s; give %s", k->name, text, why, allowed);
}

static int is_knob(const char *name, size_t len)
{
    for (int i = 0; i < hxi_knob_count; i++)
        if (strlen(hxi_knob_table[i].name) == len &&
            strncmp(hxi_knob_table[i].name, name, len) == 0)
            return 1;
    for (size_t i = 0; i < sizeof not_ours / sizeof not_ours[0]; i++)
        if (strlen(not_ours[i]) == len && strncmp(not_ours[i], name, len) == 0)
            return 1;
    return 0;
}

/* The HALOX_* variables in the environment that no knob reads. */
static void find_unknown(void)
{
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "HALOX_", 6) != 0 || !eq || is_knob(*e, (size_t) (eq - *e)))
            continue;
        const size_t used = strlen(unknown);
        snprintf(unknown + used, sizeof unknown - used, "%s%.*s", used ? ", " : "", (int) (eq - *e),
                 *e);
    }
}

static void load_once(void)
{
    int bad = 0;
    for (int i = 0; i < hxi_knob_count; i++) {
        const hxi_knob *k = &hxi_knob_table[i];
        set_default(k, &from_env);
        const char *text = getenv(k->name);
        if (!text || !*text)
            continue;
        const char *why = parse(k, text, &from_env, 0);
        if (!why)
            continue;
        set_default(k, &from_env);
        if (bad++ == 0)
            describe_bad(k, text, why, load_msg, sizeof load_msg);
    }
    if (bad > 1) {
        const size_t used = strlen(load_msg);
        snprintf(load_msg + used, sizeof load_msg - used, " (and %d more bad HALOX_* value%s)",
                 bad - 1, bad > 2 ? "s" : "");
    }
    load_status = bad ? HX_ERR_INVALID : HX_OK;
    find_unknown();
    cur = from_env;
}

/* load_once, once per process whatever the threads (C11 atomics: no
 * thread library to link). */
static void loaded(void)
{
    if (atomic_load_explicit(&load_state, memory_order_acquire) == 2)
        return;
    int expected = 0;
    if (atomic_compare_exchange_strong(&load_state, &expected, 1)) {
        load_once();
        atomic_store_explicit(&load_state, 2, memory_order_release);
        return;
    }
    while (atomic_load_explicit(&load_state, memory_order_acquire) != 2)
        ; /* another thread reads them: a few microseconds */
}

const struct hxi_knobs *hxi_knobs(void)
{
    loaded();
    return &cur;
}

/* Whether this process is the first of its job as the launcher numbers
 * them (or no launcher said): it alone warns, before MPI has started. */
static int first_process(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++) {
        const char *v = getenv(vars[k]);
        if (v && *v)
            return strcmp(v, "0") == 0;
    }
    return 1;
}

hx_status hxi_knobs_load(void)
{
    static int warned = 0;
    loaded();
    if (unknown[0] && !warned && first_process()) {
        warned = 1;
        hxi_warn("%s set, but halox reads no such variable (docs/environment.md lists those it "
                 "reads, and those renamed or removed)",
                 unknown);
    }
    if (load_status != HX_OK)
        return hxi_error(load_status, "%s", load_msg);
    return HX_OK;
}

hx_status hxi_knobs_set(const char *name, const char *text)
{
    loaded();
    for (int i = 0; i < hxi_knob_count; i++) {
        const hxi_knob *k = &hxi_knob_table[i];
        if (!name || strcmp(name, k->name) != 0)
            continue;
        const size_t size = k->type == HXK_T_REAL   ? sizeof(double)
                            : k->type == HXK_T_PATH ? sizeof(const char *)
                            : k->type == HXK_T_INTS ? HXK_INTS_MAX * sizeof(int)
                                                    : sizeof(int);
        if (!text) {
            memcpy(field_of(&cur, k), field_of(&from_env, k), size);
            return HX_OK;
        }
        struct hxi_knobs v = cur;
        if (!*text) {
            set_default(k, &v);
        } else {
            const char *why = parse(k, text, &v, 1);
            if (why) {
                char msg[600];
                describe_bad(k, text, why, msg, sizeof msg);
                return hxi_error(HX_ERR_INVALID, "%s", msg);
            }
        }
        memcpy(field_of(&cur, k), field_of(&v, k), size);
        return HX_OK;
    }
    return hxi_error(HX_ERR_INVALID, "hxi_knobs_set: halox has no variable %s",
                     name ? name : "(null)");
}
