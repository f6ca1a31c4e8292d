/*
 * deck.c - reads a LAMMPS input deck into an hx_md_config (the subset and
 * the rules are in deck.h).
 *
 * One logical line at a time, in LAMMPS's order: join `&` continuations,
 * cut the comment, substitute variables, split into words, run the command.
 * A deck is untrusted text, so every quantity it could push without end has
 * a fixed bound here: the length of a line (joined, and after substitution),
 * the number of words and variables, the nesting of formulas, and the work
 * spent on formulas and substitution over the whole deck. A variable defined
 * through itself therefore ends in a clear error, not a hang or a crash.
 */
#include "md/deck.h"

#include "core/hxi.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    DECK_MAX_LINE = 1 << 16, /* bytes of one command, joined or substituted */
    DECK_MAX_WORDS = 64,     /* words of one command */
    DECK_MAX_VARS = 256,     /* variables defined */
    DECK_MAX_NAME = 64,      /* bytes of a variable, region or fix ID, with NUL */
    DECK_MAX_REGIONS = 16,   /* regions defined */
    DECK_MAX_DEPTH = 64,     /* nesting of signs, parentheses and v_ references */
    DECK_MAX_CELLS = 1000000 /* unit cells along one dimension */
};
/* Formula work over one deck: terms evaluated plus bytes of formula text
 * scanned. in.lj needs about a hundred. */
#define DECK_MAX_WORK 4000000L
/* Bytes that substitution may insert over one deck. */
#define DECK_MAX_EXPANSION (64L << 20)
/* Largest deck file read. */
#define DECK_MAX_FILE (64L << 20)

static const char deck_commands[] =
    "units, atom_style, lattice, region, create_box, create_atoms, mass, velocity, "
    "pair_style, pair_coeff, pair_modify, neighbor, neigh_modify, fix, timestep, thermo, "
    "dump, variable, run";

typedef enum { VAR_INDEX, VAR_EQUAL } var_style;

typedef struct deck_var {
    char name[DECK_MAX_NAME];
    var_style style;
    char *value; /* index: the text; equal: the formula */
} deck_var;

typedef struct deck_region {
    char id[DECK_MAX_NAME];
    int cells[3];
} deck_region;

typedef struct deck {
    const char *name; /* for messages */
    int line;         /* first physical line of the command at hand */
    long work;        /* against DECK_MAX_WORK */
    long expanded;    /* against DECK_MAX_EXPANSION */
    int depth;        /* formula nesting now */
    deck_var vars[DECK_MAX_VARS];
    int nvars;
    char *sub; /* the line after substitution: DECK_MAX_LINE + 1 bytes */
    char *words[DECK_MAX_WORDS];
    int nwords;

    /* What the deck has said so far. */
    hx_md_config c;
    int have_lattice, have_box, have_atoms, have_mass, have_pair_style, have_pair_coeff;
    int have_fix, have_dump, have_velocity, ran;
    double rc_global; /* pair_style lj/cut RC */
    double rc_coeff;  /* pair_coeff ... RC, or 0 when none was given */
    deck_region regions[DECK_MAX_REGIONS];
    int nregions;
    char box_region[DECK_MAX_NAME];
    char fix_id[DECK_MAX_NAME];
    char dump_id[DECK_MAX_NAME];
} deck;

/* ------------------------------------------------------------- messages */

/* A word as a message may show it: at most 40 bytes, anything but printable
 * ASCII as '?'. Returned by value, so that one message can show several. */
typedef struct shown_word {
    char s[48];
} shown_word;

static shown_word show(const char *w)
{
    shown_word r;
    size_t i = 0;
    for (; w[i] != '\0' && i < 40; i++)
        r.s[i] = (w[i] >= 0x20 && w[i] < 0x7f) ? w[i] : '?';
    if (w[i] != '\0') {
        memcpy(r.s + i, "...", 3);
        i += 3;
    }
    r.s[i] = '\0';
    return r;
}

static hx_status deck_error(deck *d, const char *fmt, ...) HXI_PRINTF(2, 3);

static hx_status deck_error(deck *d, const char *fmt, ...)
{
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hxi_error(HX_ERR_PARSE, "%s:%d: %s", d->name, d->line, msg);
}

/* ------------------------------------------------------------- lexing */

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\f' || ch == '\v';
}

static int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static int is_name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || is_digit(ch) || ch == '_';
}

/* IDs and variable names: letters, digits and underscores, as LAMMPS. */
static int is_name(const char *s, size_t n)
{
    if (n == 0 || n >= DECK_MAX_NAME)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!is_name_char(s[i]))
            return 0;
    return 1;
}

/* A quote opens a quoted word only at the start of a word; inside it there
 * is neither comment nor substitution. Returns the end of the span that
 * starts at s[i] (past the closing quote, or n when there is none). */
static size_t quoted_span(const char *s, size_t n, size_t i)
{
    char q = s[i];
    size_t j = i + 1;
    while (j < n && s[j] != q)
        j++;
    return j < n ? j + 1 : n;
}

static int opens_quote(const char *s, size_t i)
{
    return (s[i] == '"' || s[i] == '\'') && (i == 0 || is_blank(s[i - 1]));
}

/* Cuts the comment: from the first '#' outside quotes. */
static size_t strip_comment(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (opens_quote(s, i))
            i = quoted_span(s, n, i);
        else if (s[i] == '#')
            return i;
        else
            i++;
    }
    return n;
}

/* Splits s (NUL-terminated) into words in place. */
static hx_status split_words(deck *d, char *s)
{
    char *p = s;
    d->nwords = 0;
    for (;;) {
        while (is_blank(*p))
            p++;
        if (*p == '\0')
            return HX_OK;
        if (d->nwords == DECK_MAX_WORDS)
            return deck_error(d, "more than %d words in one command", DECK_MAX_WORDS);
        if (*p == '"' || *p == '\'') {
            char q = *p++;
            d->words[d->nwords++] = p;
            while (*p != '\0' && *p != q)
                p++;
            if (*p == '\0')
                return deck_error(d, "unterminated %c quote", q);
            *p++ = '\0';
        } else {
            d->words[d->nwords++] = p;
            while (*p != '\0' && !is_blank(*p))
                p++;
            if (*p != '\0')
                *p++ = '\0';
        }
    }
}

/* ------------------------------------------------------------- numbers */

/* A real number as LAMMPS writes one: digits, '.', exponent, signs; finite. */
static hx_status text_to_double(const char *w, double *out)
{
    char *end;
    double v;
    if (*w == '\0')
        return HX_ERR_PARSE;
    for (const char *p = w; *p; p++)
        if (!is_digit(*p) && *p != '.' && *p != 'e' && *p != 'E' && *p != '+' && *p != '-')
            return HX_ERR_PARSE;
    errno = 0;
    v = strtod(w, &end);
    if (end == w || *end != '\0')
        return HX_ERR_PARSE;
    if (!isfinite(v))
        return HX_ERR_INVALID;
    *out = v;
    return HX_OK;
}

static hx_status get_double(deck *d, const char *what, const char *w, double *out)
{
    hx_status s = text_to_double(w, out);
    if (s == HX_ERR_INVALID)
        return deck_error(d, "%s: %s '%s' is not a finite number", d->words[0], what, show(w).s);
    if (s != HX_OK)
        return deck_error(d, "%s: %s '%s' is not a number", d->words[0], what, show(w).s);
    return HX_OK;
}

/* A whole number in [lo, hi], written as one (LAMMPS rejects "100.0" too). */
static hx_status get_int(deck *d, const char *what, const char *w, long long lo, long long hi,
                         long long *out)
{
    const char *p = w;
    char *end;
    long long v;
    if (*p == '+' || *p == '-')
        p++;
    if (!is_digit(*p))
        goto bad;
    for (; *p; p++)
        if (!is_digit(*p))
            goto bad;
    errno = 0;
    v = strtoll(w, &end, 10);
    if (errno == ERANGE || v < lo || v > hi)
        return deck_error(d, "%s: %s must be between %lld and %lld, not '%s'", d->words[0], what,
                          lo, hi, show(w).s);
    *out = v;
    return HX_OK;
bad:
    return deck_error(d, "%s: %s '%s' is not a whole number", d->words[0], what, show(w).s);
}

static hx_status get_int32(deck *d, const char *what, const char *w, long long lo, int *out)
{
    long long v;
    HXI_CHECK(get_int(d, what, w, lo, INT_MAX, &v));
    *out = (int) v;
    return HX_OK;
}

static hx_status get_yes_no(deck *d, const char *what, const char *w, int *out)
{
    if (strcmp(w, "yes") == 0)
        *out = 1;
    else if (strcmp(w, "no") == 0)
        *out = 0;
    else
        return deck_error(d, "%s: %s must be yes or no, not '%s'", d->words[0], what, show(w).s);
    return HX_OK;
}

/* --------------------------------------------------------- variables */

static deck_var *var_find(deck *d, const char *name, size_t n)
{
    for (int i = 0; i < d->nvars; i++)
        if (strlen(d->vars[i].name) == n && memcmp(d->vars[i].name, name, n) == 0)
            return &d->vars[i];
    return NULL;
}

static hx_status var_add(deck *d, const char *name, var_style style, const char *value,
                         deck_var **out)
{
    deck_var *v;
    char *copy;
    if (d->nvars == DECK_MAX_VARS)
        return deck_error(d, "more than %d variables", DECK_MAX_VARS);
    copy = malloc(strlen(value) + 1);
    if (!copy)
        return hxi_error(HX_ERR_NOMEM, "out of memory for the value of variable %s", show(name).s);
    strcpy(copy, value);
    v = &d->vars[d->nvars++];
    snprintf(v->name, sizeof v->name, "%s", name);
    v->style = style;
    v->value = copy;
    if (out)
        *out = v;
    return HX_OK;
}

static hx_status undefined(deck *d, const char *name, size_t n)
{
    char nm[DECK_MAX_NAME];
    size_t k = n < sizeof nm - 1 ? n : sizeof nm - 1;
    memcpy(nm, name, k);
    nm[k] = '\0';
    return deck_error(d,
                      "undefined variable '%s' (define it with `variable %s index VALUE` "
                      "or on the command line with -var %s VALUE)",
                      show(nm).s, show(nm).s, show(nm).s);
}

/* ------------------------------------------------------------ formulas */

/* Recursive descent over [p, end): sum := product (+|- product)*,
 * product := power (*|/ power)*, power := unary (^ unary)* (left to right,
 * as LAMMPS), unary := (+|-) unary | primary, primary := number | v_name |
 * ( sum ). Signs bind tighter than '^', as in LAMMPS. Recursion passes
 * through eval_unary only, where the depth is bounded. */
typedef struct formula {
    deck *d;
    const char *p, *end;
    const char *text; /* whole formula, for messages */
    size_t len;
} formula;

static hx_status eval_sum(formula *f, double *v);
static hx_status eval_text(deck *d, const char *text, size_t len, double *out);

static void skip_blanks(formula *f)
{
    while (f->p < f->end && is_blank(*f->p))
        f->p++;
}

static shown_word show_formula(const formula *f)
{
    char buf[48];
    size_t n = f->len < sizeof buf - 1 ? f->len : sizeof buf - 1;
    memcpy(buf, f->text, n);
    buf[n] = '\0';
    return show(buf);
}

static hx_status formula_error(formula *f, const char *what)
{
    return deck_error(f->d, "formula '%s': %s", show_formula(f).s, what);
}

static hx_status finite_result(formula *f, double v)
{
    if (!isfinite(v))
        return formula_error(f, "the result is not a finite number");
    return HX_OK;
}

static hx_status eval_primary(formula *f, double *v)
{
    deck *d = f->d;
    skip_blanks(f);
    if (++d->work > DECK_MAX_WORK)
        return formula_error(f, "too much work: is a variable defined through itself?");
    if (f->p == f->end)
        return formula_error(f, "a number, v_name or '(' is missing");
    if (*f->p == '(') {
        f->p++;
        HXI_CHECK(eval_sum(f, v));
        skip_blanks(f);
        if (f->p == f->end || *f->p != ')')
            return formula_error(f, "')' is missing");
        f->p++;
        return HX_OK;
    }
    if (is_digit(*f->p) || *f->p == '.') {
        char num[64];
        size_t n = 0;
        hx_status s;
        while (f->p < f->end && (is_digit(*f->p) || *f->p == '.')) {
            if (n == sizeof num - 1)
                return formula_error(f, "a number is too long");
            num[n++] = *f->p++;
        }
        if (f->p < f->end && (*f->p == 'e' || *f->p == 'E')) {
            const char *q = f->p + 1;
            if (q < f->end && (*q == '+' || *q == '-'))
                q++;
            if (q < f->end && is_digit(*q)) {
                while (f->p < q) {
                    if (n == sizeof num - 1)
                        return formula_error(f, "a number is too long");
                    num[n++] = *f->p++;
                }
                while (f->p < f->end && is_digit(*f->p)) {
                    if (n == sizeof num - 1)
                        return formula_error(f, "a number is too long");
                    num[n++] = *f->p++;
                }
            }
        }
        num[n] = '\0';
        s = text_to_double(num, v);
        if (s == HX_ERR_INVALID)
            return formula_error(f, "a number is not finite");
        if (s != HX_OK)
            return formula_error(f, "a number is malformed");
        return HX_OK;
    }
    if (f->end - f->p >= 2 && f->p[0] == 'v' && f->p[1] == '_') {
        const char *name = f->p + 2;
        const char *q = name;
        deck_var *var;
        while (q < f->end && is_name_char(*q))
            q++;
        if (!is_name(name, (size_t) (q - name)))
            return formula_error(f, "v_ must be followed by a variable name");
        f->p = q;
        var = var_find(d, name, (size_t) (q - name));
        if (!var)
            return undefined(d, name, (size_t) (q - name));
        if (var->style == VAR_EQUAL)
            return eval_text(d, var->value, strlen(var->value), v);
        if (text_to_double(var->value, v) != HX_OK)
            return deck_error(d, "formula '%s': v_%s is '%s', not a number", show_formula(f).s,
                              var->name, show(var->value).s);
        return HX_OK;
    }
    {
        char what[160];
        char word[41];
        size_t n = 0;
        while (f->p + n < f->end && n < sizeof word - 1 && !is_blank(f->p[n]))
            n++;
        memcpy(word, f->p, n);
        word[n] = '\0';
        snprintf(what, sizeof what,
                 "'%s' is not understood (formulas here have numbers, + - * / ^, "
                 "parentheses and v_name)",
                 show(word).s);
        return formula_error(f, what);
    }
}

static hx_status eval_unary(formula *f, double *v)
{
    hx_status s;
    skip_blanks(f);
    if (f->d->depth >= DECK_MAX_DEPTH)
        return formula_error(f, "nested too deeply (is a variable defined through itself?)");
    f->d->depth++;
    if (f->p < f->end && (*f->p == '-' || *f->p == '+')) {
        int neg = *f->p == '-';
        f->p++;
        s = eval_unary(f, v);
        if (s == HX_OK && neg)
            *v = -*v;
    } else {
        s = eval_primary(f, v);
    }
    f->d->depth--;
    return s;
}

static hx_status eval_power(formula *f, double *v)
{
    HXI_CHECK(eval_unary(f, v));
    for (;;) {
        double r;
        skip_blanks(f);
        if (f->p == f->end || *f->p != '^')
            return HX_OK;
        f->p++;
        HXI_CHECK(eval_unary(f, &r));
        *v = pow(*v, r);
        HXI_CHECK(finite_result(f, *v));
    }
}

static hx_status eval_product(formula *f, double *v)
{
    HXI_CHECK(eval_power(f, v));
    for (;;) {
        double r;
        char op;
        skip_blanks(f);
        if (f->p == f->end || (*f->p != '*' && *f->p != '/'))
            return HX_OK;
        op = *f->p++;
        HXI_CHECK(eval_power(f, &r));
        if (op == '/' && r == 0.0)
            return formula_error(f, "division by zero");
        *v = op == '*' ? *v * r : *v / r;
        HXI_CHECK(finite_result(f, *v));
    }
}

static hx_status eval_sum(formula *f, double *v)
{
    HXI_CHECK(eval_product(f, v));
    for (;;) {
        double r;
        char op;
        skip_blanks(f);
        if (f->p == f->end || (*f->p != '+' && *f->p != '-'))
            return HX_OK;
        op = *f->p++;
        HXI_CHECK(eval_product(f, &r));
        *v = op == '+' ? *v + r : *v - r;
        HXI_CHECK(finite_result(f, *v));
    }
}

static hx_status eval_text(deck *d, const char *text, size_t len, double *out)
{
    formula f = {d, text, text + len, text, len};
    double v;
    /* Scanning counts as work too, so that long formulas referenced many
     * times stay bounded. */
    d->work += (long) (len < (size_t) DECK_MAX_WORK ? len : (size_t) DECK_MAX_WORK);
    if (d->work > DECK_MAX_WORK)
        return formula_error(&f, "too much work: is a variable defined through itself?");
    HXI_CHECK(eval_sum(&f, &v));
    skip_blanks(&f);
    if (f.p != f.end) {
        char what[80];
        snprintf(what, sizeof what, "unexpected '%c'", (*f.p >= 0x20 && *f.p < 0x7f) ? *f.p : '?');
        return formula_error(&f, what);
    }
    *out = v;
    return HX_OK;
}

/* The text a variable stands for: an index variable's value as it is
 * (*text points into the variable), an equal variable's formula evaluated
 * and printed as LAMMPS prints it ("%.15g", into buf). */
static hx_status var_text(deck *d, const char *name, size_t n, char *buf, size_t bufsz,
                          const char **text)
{
    deck_var *v = var_find(d, name, n);
    double x;
    if (!v)
        return undefined(d, name, n);
    if (v->style == VAR_INDEX) {
        *text = v->value;
        return HX_OK;
    }
    HXI_CHECK(eval_text(d, v->value, strlen(v->value), &x));
    snprintf(buf, bufsz, "%.15g", x);
    *text = buf;
    return HX_OK;
}

/* -------------------------------------------------------- substitution */

static hx_status append(deck *d, size_t *o, const char *s, size_t n)
{
    if (*o + n > DECK_MAX_LINE)
        return deck_error(d,
                          "the command grows past %d bytes when its variables are "
                          "substituted",
                          DECK_MAX_LINE);
    memcpy(d->sub + *o, s, n);
    *o += n;
    return HX_OK;
}

/* $x, ${name} and $(formula) outside quotes, left to right; what is
 * inserted is not scanned again (as LAMMPS), so substitution cannot loop. */
static hx_status substitute(deck *d, const char *in, size_t n)
{
    size_t o = 0, i = 0;
    while (i < n) {
        char buf[40];
        const char *text;
        size_t tlen;
        if (opens_quote(in, i)) {
            size_t j = quoted_span(in, n, i);
            HXI_CHECK(append(d, &o, in + i, j - i));
            i = j;
            continue;
        }
        if (in[i] != '$') {
            HXI_CHECK(append(d, &o, in + i, 1));
            i++;
            continue;
        }
        if (i + 1 == n)
            return deck_error(d, "'$' ends the line; write $x, ${name} or $(formula)");
        if (in[i + 1] == '{') {
            size_t j = i + 2;
            while (j < n && in[j] != '}')
                j++;
            if (j == n)
                return deck_error(d, "'${' without its '}'");
            if (!is_name(in + i + 2, j - i - 2))
                return deck_error(d, "'${...}' must hold a variable name (letters, digits, _)");
            HXI_CHECK(var_text(d, in + i + 2, j - i - 2, buf, sizeof buf, &text));
            i = j + 1;
        } else if (in[i + 1] == '(') {
            size_t j = i + 2;
            int open = 1;
            double v;
            for (; j < n; j++) {
                if (in[j] == '(')
                    open++;
                else if (in[j] == ')' && --open == 0)
                    break;
            }
            if (j == n)
                return deck_error(d, "'$(' without its ')'");
            HXI_CHECK(eval_text(d, in + i + 2, j - i - 2, &v));
            snprintf(buf, sizeof buf, "%.20g", v);
            text = buf;
            i = j + 1;
        } else if (is_name_char(in[i + 1])) {
            HXI_CHECK(var_text(d, in + i + 1, 1, buf, sizeof buf, &text));
            i += 2;
        } else {
            return deck_error(d,
                              "'$%c' is not a variable reference; write $x, ${name} or "
                              "$(formula)",
                              (in[i + 1] >= 0x20 && in[i + 1] < 0x7f) ? in[i + 1] : '?');
        }
        tlen = strlen(text);
        d->expanded += (long) tlen;
        if (d->expanded > DECK_MAX_EXPANSION)
            return deck_error(d, "variables expand to more than %ld bytes over the deck",
                              (long) DECK_MAX_EXPANSION);
        HXI_CHECK(append(d, &o, text, tlen));
    }
    d->sub[o] = '\0';
    return HX_OK;
}

/* ------------------------------------------------------------ commands */

static hx_status nargs(deck *d, int min, int max, const char *usage)
{
    if (d->nwords < min || d->nwords > max)
        return deck_error(d, "%s takes %s; write `%s`", d->words[0],
                          d->nwords < min ? "more arguments" : "fewer arguments", usage);
    return HX_OK;
}

/* Atom types: halox-md has one, so "1" or a range that holds only 1. */
static hx_status check_type(deck *d, const char *w)
{
    static const char *const ok[] = {"1", "*", "1*", "*1", "1*1"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(w, ok[i]) == 0)
            return HX_OK;
    return deck_error(d, "%s: atom type '%s': halox-md has one atom type, 1 (or *)", d->words[0],
                      show(w).s);
}

static hx_status need(deck *d, int have, const char *first)
{
    if (!have)
        return deck_error(d, "%s comes before %s; LAMMPS needs %s first", d->words[0], first,
                          first);
    return HX_OK;
}

static hx_status cmd_units(deck *d)
{
    HXI_CHECK(nargs(d, 2, 2, "units lj"));
    if (d->have_box)
        return deck_error(d, "units after create_box; put it first");
    if (strcmp(d->words[1], "lj") != 0)
        return deck_error(d,
                          "units '%s': halox-md runs reduced Lennard-Jones units only "
                          "(units lj)",
                          show(d->words[1]).s);
    return HX_OK;
}

static hx_status cmd_atom_style(deck *d)
{
    HXI_CHECK(nargs(d, 2, 2, "atom_style atomic"));
    if (d->have_box)
        return deck_error(d, "atom_style after create_box; put it first");
    if (strcmp(d->words[1], "atomic") != 0)
        return deck_error(d,
                          "atom_style '%s': halox-md has point atoms only "
                          "(atom_style atomic)",
                          show(d->words[1]).s);
    return HX_OK;
}

static hx_status cmd_lattice(deck *d)
{
    double rho;
    if (d->nwords >= 2 && strcmp(d->words[1], "fcc") != 0)
        return deck_error(d,
                          "lattice '%s': halox-md builds fcc lattices only "
                          "(lattice fcc RHO)",
                          show(d->words[1]).s);
    if (d->nwords > 3)
        return deck_error(d, "lattice keyword '%s' is not supported; write `lattice fcc RHO`",
                          show(d->words[3]).s);
    HXI_CHECK(nargs(d, 3, 3, "lattice fcc RHO"));
    if (d->nregions > 0 || d->have_box)
        return deck_error(d, "lattice after region: halox-md builds the box and the atoms "
                             "from one lattice; put lattice before region");
    HXI_CHECK(get_double(d, "density", d->words[2], &rho));
    if (rho <= 0.0)
        return deck_error(d, "lattice: density %s must be > 0", show(d->words[2]).s);
    d->c.density = rho;
    d->have_lattice = 1;
    return HX_OK;
}

static hx_status cmd_region(deck *d)
{
    static const char usage[] = "region ID block 0 NX 0 NY 0 NZ";
    static const char *const axis = "xyz";
    deck_region *r;
    HXI_CHECK(nargs(d, 9, 11, usage));
    if (!is_name(d->words[1], strlen(d->words[1])))
        return deck_error(d, "region ID '%s' must be letters, digits and _", show(d->words[1]).s);
    if (strcmp(d->words[2], "block") != 0)
        return deck_error(d, "region style '%s': halox-md reads block regions only (%s)",
                          show(d->words[2]).s, usage);
    if (d->nwords > 9) {
        if (d->nwords != 11 || strcmp(d->words[9], "units") != 0 ||
            strcmp(d->words[10], "lattice") != 0)
            return deck_error(d, "region keyword '%s' is not supported (only `units lattice`)",
                              show(d->words[9]).s);
    }
    HXI_CHECK(need(d, d->have_lattice, "lattice"));
    for (int i = 0; i < d->nregions; i++)
        if (strcmp(d->regions[i].id, d->words[1]) == 0)
            return deck_error(d, "region ID '%s' is already defined", show(d->words[1]).s);
    if (d->nregions == DECK_MAX_REGIONS)
        return deck_error(d, "more than %d regions", DECK_MAX_REGIONS);
    r = &d->regions[d->nregions];
    for (int k = 0; k < 3; k++) {
        char what[16];
        double lo, hi;
        snprintf(what, sizeof what, "%clo", axis[k]);
        HXI_CHECK(get_double(d, what, d->words[3 + 2 * k], &lo));
        snprintf(what, sizeof what, "%chi", axis[k]);
        HXI_CHECK(get_double(d, what, d->words[4 + 2 * k], &hi));
        if (lo != 0.0)
            return deck_error(d, "region: %clo is %s; the box must start at 0 (%s)", axis[k],
                              show(d->words[3 + 2 * k]).s, usage);
        if (hi != floor(hi) || hi < 1.0 || hi > DECK_MAX_CELLS)
            return deck_error(d,
                              "region: %chi %s must be a whole number of lattice cells, "
                              "1 to %d",
                              axis[k], show(d->words[4 + 2 * k]).s, DECK_MAX_CELLS);
        r->cells[k] = (int) hi;
    }
    snprintf(r->id, sizeof r->id, "%s", d->words[1]);
    d->nregions++;
    return HX_OK;
}

static const deck_region *region_find(const deck *d, const char *id)
{
    for (int i = 0; i < d->nregions; i++)
        if (strcmp(d->regions[i].id, id) == 0)
            return &d->regions[i];
    return NULL;
}

static hx_status cmd_create_box(deck *d)
{
    const deck_region *r;
    long long ntypes;
    HXI_CHECK(nargs(d, 3, 3, "create_box 1 REGION"));
    HXI_CHECK(get_int(d, "the number of atom types", d->words[1], 0, LLONG_MAX, &ntypes));
    if (ntypes != 1)
        return deck_error(d, "create_box %s: halox-md has one atom type (create_box 1 REGION)",
                          show(d->words[1]).s);
    if (d->have_box)
        return deck_error(d, "the box is already created");
    r = region_find(d, d->words[2]);
    if (!r)
        return deck_error(d,
                          "create_box: no region '%s' (define it with `region %s block 0 "
                          "NX 0 NY 0 NZ`)",
                          show(d->words[2]).s, show(d->words[2]).s);
    memcpy(d->c.cells, r->cells, sizeof d->c.cells);
    snprintf(d->box_region, sizeof d->box_region, "%s", r->id);
    d->have_box = 1;
    return HX_OK;
}

static hx_status cmd_create_atoms(deck *d)
{
    static const char usage[] = "create_atoms 1 box";
    long long type;
    HXI_CHECK(nargs(d, 3, 4, usage));
    HXI_CHECK(get_int(d, "the atom type", d->words[1], 0, LLONG_MAX, &type));
    if (type != 1)
        return deck_error(d, "create_atoms %s: halox-md has one atom type (%s)",
                          show(d->words[1]).s, usage);
    if (d->nwords == 3 && strcmp(d->words[2], "box") != 0)
        return deck_error(d, "create_atoms style '%s': halox-md fills the whole box (%s)",
                          show(d->words[2]).s, usage);
    if (d->nwords == 4 && strcmp(d->words[2], "region") != 0)
        return deck_error(d, "create_atoms style '%s' is not supported (%s or %s)",
                          show(d->words[2]).s, usage, "create_atoms 1 region BOXREGION");
    HXI_CHECK(need(d, d->have_box, "create_box"));
    if (d->nwords == 4 && strcmp(d->words[3], d->box_region) != 0)
        return deck_error(d,
                          "create_atoms region '%s': halox-md fills the whole box "
                          "(region %s)",
                          show(d->words[3]).s, d->box_region);
    if (d->have_atoms)
        return deck_error(d, "atoms are already created; halox-md fills the box once");
    d->have_atoms = 1;
    return HX_OK;
}

static hx_status cmd_mass(deck *d)
{
    double m;
    HXI_CHECK(nargs(d, 3, 3, "mass 1 M"));
    HXI_CHECK(check_type(d, d->words[1]));
    HXI_CHECK(need(d, d->have_box, "create_box"));
    HXI_CHECK(get_double(d, "mass", d->words[2], &m));
    if (m <= 0.0)
        return deck_error(d, "mass %s must be > 0", show(d->words[2]).s);
    /* LAMMPS draws velocities with the mass of the moment; a later mass
     * would leave them scaled for the old one. */
    if (d->have_velocity && m != d->c.mass)
        return deck_error(d,
                          "mass after velocity: the velocities were created for mass %g; "
                          "put mass before velocity",
                          d->c.mass);
    d->c.mass = m;
    d->have_mass = 1;
    return HX_OK;
}

/* A yes/no keyword value. */
static hx_status yes_no(deck *d, const char *key, const char *v, int *out)
{
    if (strcmp(v, "yes") == 0)
        *out = 1;
    else if (strcmp(v, "no") == 0)
        *out = 0;
    else
        return deck_error(d, "velocity: %s must be yes or no, not '%s'", key, show(v).s);
    return HX_OK;
}

/* `velocity all create T SEED keyword value ...`, as LAMMPS's Velocity:
 * every keyword of `create` is read and done as LAMMPS does it (velocity.c),
 * or refused. One velocity command per deck: a second would need LAMMPS's
 * `sum` over two creates, which halox-md does not keep. */
static hx_status cmd_velocity(deck *d)
{
    static const char usage[] = "velocity all create T SEED [dist uniform|gaussian] "
                                "[loop all|local|geom] [mom yes|no] [rot yes|no] [sum no|yes] "
                                "[units box|lattice]";
    double t;
    long long seed;
    hx_md_velocity_loop loop = HX_MD_LOOP_ALL; /* LAMMPS's defaults */
    int gaussian = 0, mom = 1, rot = 0, sum = 0;
    if (d->nwords >= 2 && strcmp(d->words[1], "all") != 0)
        return deck_error(d, "velocity group '%s': halox-md has the group all only",
                          show(d->words[1]).s);
    if (d->nwords >= 3 && strcmp(d->words[2], "create") != 0)
        return deck_error(d, "velocity style '%s': halox-md reads `velocity all create` only",
                          show(d->words[2]).s);
    if (d->have_velocity)
        return deck_error(d, "a second velocity command: halox-md reads one `velocity all "
                             "create` per deck");
    HXI_CHECK(nargs(d, 5, DECK_MAX_WORDS, usage));
    HXI_CHECK(need(d, d->have_atoms, "create_atoms"));
    HXI_CHECK(need(d, d->have_mass, "mass")); /* LAMMPS: all masses must be set */
    HXI_CHECK(get_double(d, "temperature", d->words[3], &t));
    if (t < 0.0)
        return deck_error(d, "velocity: temperature %s must be >= 0", show(d->words[3]).s);
    /* LAMMPS reads the seed as an int and refuses seeds <= 0. */
    HXI_CHECK(get_int(d, "seed", d->words[4], 1, INT_MAX, &seed));
    for (int i = 5; i < d->nwords; i += 2) {
        const char *k = d->words[i];
        const char *v = i + 1 < d->nwords ? d->words[i + 1] : NULL;
        if (!v)
            return deck_error(d, "velocity keyword '%s' has no value (%s)", show(k).s, usage);
        if (strcmp(k, "dist") == 0) {
            if (strcmp(v, "uniform") != 0 && strcmp(v, "gaussian") != 0)
                return deck_error(d, "velocity: dist must be uniform or gaussian, not '%s'",
                                  show(v).s);
            gaussian = strcmp(v, "gaussian") == 0;
        } else if (strcmp(k, "loop") == 0) {
            if (strcmp(v, "all") == 0)
                loop = HX_MD_LOOP_ALL;
            else if (strcmp(v, "local") == 0)
                loop = HX_MD_LOOP_LOCAL;
            else if (strcmp(v, "geom") == 0)
                loop = HX_MD_LOOP_GEOM;
            else
                return deck_error(d, "velocity: loop must be all, local or geom, not '%s'",
                                  show(v).s);
        } else if (strcmp(k, "mom") == 0) {
            HXI_CHECK(yes_no(d, "mom", v, &mom));
        } else if (strcmp(k, "rot") == 0) {
            HXI_CHECK(yes_no(d, "rot", v, &rot));
        } else if (strcmp(k, "sum") == 0) {
            /* The velocities before this (the only) create are zero, so
             * adding them changes nothing, as in LAMMPS. */
            HXI_CHECK(yes_no(d, "sum", v, &sum));
        } else if (strcmp(k, "units") == 0) {
            /* LAMMPS reads it for every style; create does not use it. */
            if (strcmp(v, "box") != 0 && strcmp(v, "lattice") != 0)
                return deck_error(d, "velocity: units must be box or lattice, not '%s'", show(v).s);
        } else if (strcmp(k, "temp") == 0 || strcmp(k, "bias") == 0 || strcmp(k, "rigid") == 0) {
            return deck_error(d,
                              "velocity keyword '%s' needs computes or rigid bodies, which "
                              "halox-md does not have (%s)",
                              show(k).s, usage);
        } else {
            return deck_error(d, "velocity keyword '%s' is not one of LAMMPS's (%s)", show(k).s,
                              usage);
        }
    }
    (void) sum;
    d->c.temperature = t;
    d->c.seed = (uint64_t) seed;
    d->c.velocity_loop = loop;
    d->c.velocity_gaussian = gaussian;
    d->c.velocity_mom = mom;
    d->c.velocity_rot = rot;
    d->have_velocity = 1;
    return HX_OK;
}

static hx_status cmd_pair_style(deck *d)
{
    double rc;
    if (d->nwords >= 2 && strcmp(d->words[1], "lj/cut") != 0)
        return deck_error(d,
                          "pair_style '%s': halox-md computes lj/cut only "
                          "(pair_style lj/cut RC)",
                          show(d->words[1]).s);
    HXI_CHECK(nargs(d, 3, 3, "pair_style lj/cut RC"));
    HXI_CHECK(get_double(d, "cutoff", d->words[2], &rc));
    if (rc <= 0.0)
        return deck_error(d, "pair_style: cutoff %s must be > 0", show(d->words[2]).s);
    d->rc_global = rc;
    d->have_pair_style = 1;
    return HX_OK;
}

static hx_status cmd_pair_coeff(deck *d)
{
    double eps, sigma, rc = 0.0;
    HXI_CHECK(nargs(d, 5, 6, "pair_coeff 1 1 EPSILON SIGMA [RC]"));
    HXI_CHECK(check_type(d, d->words[1]));
    HXI_CHECK(check_type(d, d->words[2]));
    HXI_CHECK(need(d, d->have_box, "create_box"));
    HXI_CHECK(need(d, d->have_pair_style, "pair_style"));
    HXI_CHECK(get_double(d, "epsilon", d->words[3], &eps));
    HXI_CHECK(get_double(d, "sigma", d->words[4], &sigma));
    if (eps < 0.0)
        return deck_error(d, "pair_coeff: epsilon %s must be >= 0", show(d->words[3]).s);
    if (sigma <= 0.0)
        return deck_error(d, "pair_coeff: sigma %s must be > 0", show(d->words[4]).s);
    if (d->nwords == 6) {
        HXI_CHECK(get_double(d, "cutoff", d->words[5], &rc));
        if (rc <= 0.0)
            return deck_error(d, "pair_coeff: cutoff %s must be > 0", show(d->words[5]).s);
    }
    d->c.epsilon = eps;
    d->c.sigma = sigma;
    d->rc_coeff = rc;
    d->have_pair_coeff = 1;
    return HX_OK;
}

static hx_status cmd_pair_modify(deck *d)
{
    HXI_CHECK(nargs(d, 3, DECK_MAX_WORDS, "pair_modify shift yes|no"));
    HXI_CHECK(need(d, d->have_pair_style, "pair_style"));
    for (int i = 1; i < d->nwords; i += 2) {
        if (strcmp(d->words[i], "shift") != 0)
            return deck_error(d,
                              "pair_modify keyword '%s' is not supported (pair_modify "
                              "shift yes|no)",
                              show(d->words[i]).s);
        if (i + 1 == d->nwords)
            return deck_error(d, "pair_modify shift has no value (yes or no)");
        HXI_CHECK(get_yes_no(d, "shift", d->words[i + 1], &d->c.shift_energy));
    }
    return HX_OK;
}

static hx_status cmd_neighbor(deck *d)
{
    double skin;
    HXI_CHECK(nargs(d, 3, 3, "neighbor SKIN bin"));
    HXI_CHECK(get_double(d, "skin", d->words[1], &skin));
    if (skin < 0.0)
        return deck_error(d, "neighbor: skin %s must be >= 0", show(d->words[1]).s);
    if (strcmp(d->words[2], "bin") != 0)
        return deck_error(d, "neighbor style '%s': halox-md bins (neighbor SKIN bin)",
                          show(d->words[2]).s);
    d->c.skin = skin;
    return HX_OK;
}

static hx_status cmd_neigh_modify(deck *d)
{
    HXI_CHECK(nargs(d, 3, DECK_MAX_WORDS, "neigh_modify every N delay N check yes|no"));
    for (int i = 1; i < d->nwords; i += 2) {
        const char *k = d->words[i];
        const char *v = i + 1 < d->nwords ? d->words[i + 1] : NULL;
        if (strcmp(k, "every") != 0 && strcmp(k, "delay") != 0 && strcmp(k, "check") != 0)
            return deck_error(d,
                              "neigh_modify keyword '%s' is not supported (every, delay, "
                              "check)",
                              show(k).s);
        if (!v)
            return deck_error(d, "neigh_modify %s has no value", k);
        if (strcmp(k, "every") == 0)
            HXI_CHECK(get_int32(d, "every", v, 1, &d->c.neigh_every));
        else if (strcmp(k, "delay") == 0)
            HXI_CHECK(get_int32(d, "delay", v, 0, &d->c.neigh_delay));
        else
            HXI_CHECK(get_yes_no(d, "check", v, &d->c.neigh_check));
    }
    if (d->c.neigh_delay % d->c.neigh_every != 0)
        return deck_error(d, "neigh_modify: delay %d must be 0 or a multiple of every %d",
                          d->c.neigh_delay, d->c.neigh_every);
    return HX_OK;
}

static hx_status cmd_fix(deck *d)
{
    if (d->nwords >= 4 && strcmp(d->words[3], "nve") != 0)
        return deck_error(d, "fix style '%s': halox-md integrates with fix ID all nve only",
                          show(d->words[3]).s);
    HXI_CHECK(nargs(d, 4, 4, "fix ID all nve"));
    if (!is_name(d->words[1], strlen(d->words[1])))
        return deck_error(d, "fix ID '%s' must be letters, digits and _", show(d->words[1]).s);
    if (strcmp(d->words[2], "all") != 0)
        return deck_error(d, "fix group '%s': halox-md has the group all only",
                          show(d->words[2]).s);
    HXI_CHECK(need(d, d->have_box, "create_box"));
    if (d->have_fix && strcmp(d->fix_id, d->words[1]) != 0)
        return deck_error(d, "fix %s: a second fix nve (besides %s) would integrate twice",
                          show(d->words[1]).s, d->fix_id);
    snprintf(d->fix_id, sizeof d->fix_id, "%s", d->words[1]);
    d->have_fix = 1;
    d->c.nve = 1;
    return HX_OK;
}

static hx_status cmd_timestep(deck *d)
{
    double dt;
    HXI_CHECK(nargs(d, 2, 2, "timestep DT"));
    HXI_CHECK(get_double(d, "timestep", d->words[1], &dt));
    if (dt <= 0.0)
        return deck_error(d, "timestep %s must be > 0", show(d->words[1]).s);
    d->c.dt = dt;
    return HX_OK;
}

static hx_status cmd_thermo(deck *d)
{
    HXI_CHECK(nargs(d, 2, 2, "thermo N"));
    return get_int32(d, "the thermo interval", d->words[1], 0, &d->c.thermo_every);
}

/* `dump ID all atom|xyz N FILE`: LAMMPS's atom format (id type xs ys zs)
 * or its xyz format (type x y z), with LAMMPS's headers and number formats,
 * a frame at the first step and every N steps; atoms in id order, as LAMMPS
 * writes them with `dump_modify ID sort id`. */
static hx_status cmd_dump(deck *d)
{
    static const char usage[] = "dump ID all atom N FILE";
    const char *file;
    int every;
    if (d->nwords >= 4 && strcmp(d->words[3], "atom") != 0 && strcmp(d->words[3], "xyz") != 0)
        return deck_error(d,
                          "dump style '%s': halox-md writes one extended XYZ trajectory "
                          "(%s)",
                          show(d->words[3]).s, usage);
    HXI_CHECK(nargs(d, 6, 6, usage));
    if (!is_name(d->words[1], strlen(d->words[1])))
        return deck_error(d, "dump ID '%s' must be letters, digits and _", show(d->words[1]).s);
    if (strcmp(d->words[2], "all") != 0)
        return deck_error(d, "dump group '%s': halox-md has the group all only",
                          show(d->words[2]).s);
    HXI_CHECK(need(d, d->have_box, "create_box"));
    if (d->have_dump)
        return deck_error(d, "a second dump: halox-md writes one trajectory");
    HXI_CHECK(get_int32(d, "the dump interval", d->words[4], 1, &every));
    file = d->words[5];
    if (file[0] == '\0' || strlen(file) >= sizeof d->c.dump_file)
        return deck_error(d, "dump file name must have 1 to %zu bytes", sizeof d->c.dump_file - 1);
    if (strchr(file, '*') || strchr(file, '%'))
        return deck_error(d,
                          "dump file '%s': one file per step or per rank ('*', '%%') is "
                          "not supported",
                          show(file).s);
    snprintf(d->c.dump_file, sizeof d->c.dump_file, "%s", file);
    snprintf(d->dump_id, sizeof d->dump_id, "%s", d->words[1]);
    d->c.dump_every = every;
    d->c.dump_style = strcmp(d->words[3], "atom") == 0 ? HX_MD_DUMP_ATOM : HX_MD_DUMP_XYZ;
    d->have_dump = 1;
    return HX_OK;
}

/* `dump_modify ID sort id`: halox-md writes every frame in id order. */
static hx_status cmd_dump_modify(deck *d)
{
    static const char usage[] = "dump_modify ID sort id";
    HXI_CHECK(nargs(d, 2, DECK_MAX_WORDS, usage));
    if (!d->have_dump || strcmp(d->words[1], d->dump_id) != 0)
        return deck_error(d, "dump_modify: no dump '%s' (define it with `dump %s all atom N FILE`)",
                          show(d->words[1]).s, show(d->words[1]).s);
    for (int i = 2; i < d->nwords; i += 2) {
        const char *k = d->words[i];
        const char *v = i + 1 < d->nwords ? d->words[i + 1] : NULL;
        if (strcmp(k, "sort") != 0)
            return deck_error(d, "dump_modify keyword '%s' is not supported (%s)", show(k).s,
                              usage);
        if (!v || strcmp(v, "id") != 0)
            return deck_error(d, "dump_modify sort %s: halox-md writes atoms in id order only (%s)",
                              v ? show(v).s : "(nothing)", usage);
    }
    if (d->nwords == 2)
        return deck_error(d, "dump_modify takes a keyword (%s)", usage);
    return HX_OK;
}

static hx_status cmd_run(deck *d)
{
    int n;
    HXI_CHECK(nargs(d, 2, 6, "run N [pre yes|no] [post yes|no]"));
    HXI_CHECK(get_int32(d, "the number of steps", d->words[1], 0, &n));
    for (int i = 2; i < d->nwords; i += 2) {
        int unused;
        /* pre/post only change what LAMMPS prints. */
        if (strcmp(d->words[i], "pre") != 0 && strcmp(d->words[i], "post") != 0)
            return deck_error(d, "run keyword '%s' is not supported (pre, post)",
                              show(d->words[i]).s);
        if (i + 1 == d->nwords)
            return deck_error(d, "run %s has no value (yes or no)", d->words[i]);
        HXI_CHECK(get_yes_no(d, d->words[i], d->words[i + 1], &unused));
    }
    if (!d->ran) {
        HXI_CHECK(need(d, d->have_box, "create_box"));
        HXI_CHECK(need(d, d->have_atoms, "create_atoms"));
        HXI_CHECK(need(d, d->have_mass, "mass"));
        HXI_CHECK(need(d, d->have_pair_style, "pair_style"));
        HXI_CHECK(need(d, d->have_pair_coeff, "pair_coeff"));
        d->c.rc = d->rc_coeff > 0.0 ? d->rc_coeff : d->rc_global;
        d->c.steps = 0;
        d->ran = 1;
    }
    if (n > INT_MAX - d->c.steps)
        return deck_error(d, "runs add up to more than %d steps", INT_MAX);
    d->c.steps += n;
    return HX_OK;
}

static hx_status cmd_variable(deck *d)
{
    const char *name;
    deck_var *v;
    if (d->nwords < 4)
        return deck_error(d, "variable takes a name, a style and a value; write `variable "
                             "NAME index VALUE` or `variable NAME equal FORMULA`");
    name = d->words[1];
    if (!is_name(name, strlen(name)))
        return deck_error(d, "variable name '%s' must be letters, digits and _ (at most %d)",
                          show(name).s, DECK_MAX_NAME - 1);
    v = var_find(d, name, strlen(name));
    if (strcmp(d->words[2], "index") == 0) {
        /* As LAMMPS: an index variable that exists (from -var, or earlier)
         * keeps its value; later values would need `next`, which halox-md
         * does not read, so only the first counts. */
        if (v && v->style != VAR_INDEX)
            return deck_error(d, "variable %s is equal-style; it cannot become index-style",
                              show(name).s);
        if (v)
            return HX_OK;
        return var_add(d, name, VAR_INDEX, d->words[3], NULL);
    }
    if (strcmp(d->words[2], "equal") == 0) {
        char *copy;
        if (d->nwords != 4)
            return deck_error(d,
                              "variable %s equal takes one formula; quote it when it has "
                              "spaces",
                              show(name).s);
        if (!v)
            return var_add(d, name, VAR_EQUAL, d->words[3], NULL);
        if (v->style != VAR_EQUAL)
            return deck_error(d,
                              "variable %s is index-style (perhaps from -var); it cannot "
                              "become equal-style",
                              show(name).s);
        copy = malloc(strlen(d->words[3]) + 1);
        if (!copy)
            return hxi_error(HX_ERR_NOMEM, "out of memory for the value of variable %s",
                             show(name).s);
        strcpy(copy, d->words[3]);
        free(v->value);
        v->value = copy;
        return HX_OK;
    }
    return deck_error(d, "variable style '%s' is not supported (index, equal)",
                      show(d->words[2]).s);
}

typedef struct deck_command {
    const char *name;
    hx_status (*run)(deck *d);
} deck_command;

static const deck_command commands[] = {
    {"units", cmd_units},
    {"atom_style", cmd_atom_style},
    {"lattice", cmd_lattice},
    {"region", cmd_region},
    {"create_box", cmd_create_box},
    {"create_atoms", cmd_create_atoms},
    {"mass", cmd_mass},
    {"velocity", cmd_velocity},
    {"pair_style", cmd_pair_style},
    {"pair_coeff", cmd_pair_coeff},
    {"pair_modify", cmd_pair_modify},
    {"neighbor", cmd_neighbor},
    {"neigh_modify", cmd_neigh_modify},
    {"fix", cmd_fix},
    {"timestep", cmd_timestep},
    {"thermo", cmd_thermo},
    {"dump", cmd_dump},
    {"dump_modify", cmd_dump_modify},
    {"run", cmd_run},
    {"variable", cmd_variable},
};

static hx_status run_command(deck *d)
{
    const char *cmd = d->words[0];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(cmd, commands[i].name) != 0)
            continue;
        if (d->ran && commands[i].run != cmd_run && commands[i].run != cmd_variable)
            return deck_error(d,
                              "%s after the first run: halox-md runs one set-up, and later "
                              "runs only add steps; move it before the first run",
                              cmd);
        return commands[i].run(d);
    }
    return deck_error(d, "unsupported command '%s' (halox-md reads: %s)", show(cmd).s,
                      deck_commands);
}

/* One logical line, s[0 .. n), joined already and free of NUL bytes. */
static hx_status run_line(deck *d, const char *s, size_t n)
{
    n = strip_comment(s, n);
    HXI_CHECK(substitute(d, s, n));
    HXI_CHECK(split_words(d, d->sub));
    if (d->nwords == 0)
        return HX_OK;
    return run_command(d);
}

static hx_status run_text(deck *d, const char *text, size_t len, char *logical)
{
    size_t pos = 0;
    int phys = 0;
    while (pos < len) {
        size_t n = 0;
        int more = 1;
        d->line = phys + 1;
        while (more && pos < len) {
            const char *nl = memchr(text + pos, '\n', len - pos);
            size_t eol = nl ? (size_t) (nl - text) : len;
            size_t e = eol;
            phys++;
            while (e > pos && is_blank(text[e - 1]))
                e--;
            more = e > pos && text[e - 1] == '&';
            if (more)
                e--;
            if (n + (e - pos) + 1 > DECK_MAX_LINE)
                return deck_error(d, "the command is longer than %d bytes", DECK_MAX_LINE);
            memcpy(logical + n, text + pos, e - pos);
            n += e - pos;
            if (more)
                logical[n++] = ' ';
            pos = eol < len ? eol + 1 : len;
        }
        if (memchr(logical, '\0', n))
            return deck_error(d, "a NUL byte: the deck must be text");
        logical[n] = '\0';
        HXI_CHECK(run_line(d, logical, n));
    }
    if (!d->ran) {
        d->line = phys > 0 ? phys : 1;
        return deck_error(d, "no run command: the deck ends without `run N`, so there is "
                             "nothing to run");
    }
    return HX_OK;
}

/* Defines -var's "name=value" pairs as index variables. */
static hx_status define_vars(deck *d, const char *const *vars, int nvars)
{
    if (nvars < 0 || (nvars > 0 && !vars))
        return hxi_error(HX_ERR_INVALID, "deck variables: %d given with %s", nvars,
                         vars ? "a list" : "no list");
    for (int i = 0; i < nvars; i++) {
        const char *eq = vars[i] ? strchr(vars[i], '=') : NULL;
        char name[DECK_MAX_NAME];
        if (!eq || !is_name(vars[i], (size_t) (eq - vars[i])))
            return hxi_error(HX_ERR_INVALID,
                             "-var '%s': write -var NAME VALUE, NAME of letters, digits and _ "
                             "(at most %d)",
                             vars[i] ? show(vars[i]).s : "(null)", DECK_MAX_NAME - 1);
        memcpy(name, vars[i], (size_t) (eq - vars[i]));
        name[eq - vars[i]] = '\0';
        if (var_find(d, name, strlen(name)))
            return hxi_error(HX_ERR_INVALID, "-var %s is given twice; give it once", show(name).s);
        if (d->nvars == DECK_MAX_VARS)
            return hxi_error(HX_ERR_INVALID, "more than %d -var options", DECK_MAX_VARS);
        HXI_CHECK(var_add(d, name, VAR_INDEX, eq + 1, NULL));
    }
    return HX_OK;
}

hx_status hx_md_deck_parse(const char *text, size_t len, const char *name, hx_md_config *cfg,
                           const char *const *vars, int nvars)
{
    deck *d;
    char *logical = NULL;
    hx_status st;
    if (!cfg || (!text && len > 0))
        return hxi_error(HX_ERR_INVALID, "hx_md_deck_parse: %s is NULL",
                         cfg ? "text" : "the config");
    d = calloc(1, sizeof *d);
    logical = malloc(DECK_MAX_LINE + 1);
    if (!d || !logical) {
        st = hxi_error(HX_ERR_NOMEM, "out of memory reading a deck");
        goto done;
    }
    d->sub = malloc(DECK_MAX_LINE + 1);
    if (!d->sub) {
        st = hxi_error(HX_ERR_NOMEM, "out of memory reading a deck");
        goto done;
    }
    d->name = name ? name : "deck";

    /* LAMMPS's defaults for what a deck may leave out; the run-time fields
     * stay as the caller had them. */
    d->c = *cfg;
    d->c.temperature = 0.0;
    d->c.velocity_loop = HX_MD_LOOP_ALL;
    d->c.velocity_gaussian = 0;
    d->c.velocity_mom = 1;
    d->c.velocity_rot = 0;
    d->c.shift_energy = 0;
    d->c.skin = 0.3;
    d->c.neigh_every = 1;
    d->c.neigh_delay = 0;
    d->c.neigh_check = 1;
    d->c.dt = 0.005;
    d->c.steps = 0;
    d->c.thermo_every = 0;
    d->c.nve = 0;

    HXI_CHECK_GOTO(define_vars(d, vars, nvars), st, done);
    HXI_CHECK_GOTO(run_text(d, text, len, logical), st, done);
    *cfg = d->c;
    st = HX_OK;
done:
    if (d) {
        for (int i = 0; i < d->nvars; i++)
            free(d->vars[i].value);
        free(d->sub);
    }
    free(d);
    free(logical);
    return st;
}

hx_status hx_md_deck_read(const char *path, hx_md_config *cfg, const char *const *vars, int nvars)
{
    FILE *f;
    char *text = NULL;
    size_t size = 0, cap = 0;
    hx_status st;
    if (!path || !cfg)
        return hxi_error(HX_ERR_INVALID, "hx_md_deck_read: %s is NULL",
                         path ? "the config" : "the path");
    f = fopen(path, "rb");
    if (!f)
        return hxi_error(HX_ERR_IO, "cannot open deck %s: %s", path, strerror(errno));
    /* Read to the end in growing chunks: pipes and process substitution
     * have no size to ask for. */
    for (;;) {
        size_t got;
        if (size == cap) {
            char *grown;
            if (cap >= (size_t) DECK_MAX_FILE) {
                st = hxi_error(HX_ERR_IO, "deck %s is longer than %ld bytes", path,
                               (long) DECK_MAX_FILE);
                goto done;
            }
            cap = cap ? 2 * cap : 65536;
            grown = realloc(text, cap);
            if (!grown) {
                st = hxi_error(HX_ERR_NOMEM, "out of memory for deck %s (%zu bytes)", path, cap);
                goto done;
            }
            text = grown;
        }
        errno = 0;
        got = fread(text + size, 1, cap - size, f);
        size += got;
        if (got == 0) {
            if (ferror(f)) {
                st = hxi_error(HX_ERR_IO, "cannot read deck %s: %s", path,
                               errno ? strerror(errno) : "read error");
                goto done;
            }
            break;
        }
    }
    st = hx_md_deck_parse(text, size, path, cfg, vars, nvars);
done:
    free(text);
    fclose(f);
    return st;
}
