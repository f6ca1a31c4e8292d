/*
 * deck_lex.c - the deck's words: messages, lexing (quotes, comments),
 * numbers, variables, formulas and substitution, with the bounds deck.c
 * describes.
 */
#include "md/deck_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- messages */

shown_word deck_show(const char *w)
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

hx_status deck_error(deck *d, const char *fmt, ...)
{
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hxi_error(HX_ERR_PARSE, "%s:%d: %s", d->name, d->line, msg);
}

/* ------------------------------------------------------------- lexing */

int deck_is_blank(char ch)
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
int deck_is_name(const char *s, size_t n)
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
    return (s[i] == '"' || s[i] == '\'') && (i == 0 || deck_is_blank(s[i - 1]));
}

/* Cuts the comment: from the first '#' outside quotes. */
size_t deck_strip_comment(const char *s, size_t n)
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
hx_status deck_split_words(deck *d, char *s)
{
    char *p = s;
    d->nwords = 0;
    for (;;) {
        while (deck_is_blank(*p))
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
            while (*p != '\0' && !deck_is_blank(*p))
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

hx_status deck_get_double(deck *d, const char *what, const char *w, double *out)
{
    hx_status s = text_to_double(w, out);
    if (s == HX_ERR_INVALID)
        return deck_error(d, "%s: %s '%s' is not a finite number", d->words[0], what,
                          deck_show(w).s);
    if (s != HX_OK)
        return deck_error(d, "%s: %s '%s' is not a number", d->words[0], what, deck_show(w).s);
    return HX_OK;
}

/* A whole number in [lo, hi], written as one (LAMMPS rejects "100.0" too). */
hx_status deck_get_int(deck *d, const char *what, const char *w, long long lo, long long hi,
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
                          lo, hi, deck_show(w).s);
    *out = v;
    return HX_OK;
bad:
    return deck_error(d, "%s: %s '%s' is not a whole number", d->words[0], what, deck_show(w).s);
}

hx_status deck_get_int32(deck *d, const char *what, const char *w, long long lo, int *out)
{
    long long v;
    HXI_CHECK(deck_get_int(d, what, w, lo, INT_MAX, &v));
    *out = (int) v;
    return HX_OK;
}

hx_status deck_get_yes_no(deck *d, const char *what, const char *w, int *out)
{
    if (strcmp(w, "yes") == 0)
        *out = 1;
    else if (strcmp(w, "no") == 0)
        *out = 0;
    else
        return deck_error(d, "%s: %s must be yes or no, not '%s'", d->words[0], what,
                          deck_show(w).s);
    return HX_OK;
}

/* --------------------------------------------------------- variables */

deck_var *deck_var_find(deck *d, const char *name, size_t n)
{
    for (int i = 0; i < d->nvars; i++)
        if (strlen(d->vars[i].name) == n && memcmp(d->vars[i].name, name, n) == 0)
            return &d->vars[i];
    return NULL;
}

hx_status deck_var_add(deck *d, const char *name, var_style style, const char *value,
                       deck_var **out)
{
    deck_var *v;
    char *copy;
    if (d->nvars == DECK_MAX_VARS)
        return deck_error(d, "more than %d variables", DECK_MAX_VARS);
    copy = malloc(strlen(value) + 1);
    if (!copy)
        return hxi_error(HX_ERR_NOMEM, "out of memory for the value of variable %s",
                         deck_show(name).s);
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
                      deck_show(nm).s, deck_show(nm).s, deck_show(nm).s);
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
    while (f->p < f->end && deck_is_blank(*f->p))
        f->p++;
}

static shown_word show_formula(const formula *f)
{
    char buf[48];
    size_t n = f->len < sizeof buf - 1 ? f->len : sizeof buf - 1;
    memcpy(buf, f->text, n);
    buf[n] = '\0';
    return deck_show(buf);
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
        if (!deck_is_name(name, (size_t) (q - name)))
            return formula_error(f, "v_ must be followed by a variable name");
        f->p = q;
        var = deck_var_find(d, name, (size_t) (q - name));
        if (!var)
            return undefined(d, name, (size_t) (q - name));
        if (var->style == VAR_EQUAL)
            return eval_text(d, var->value, strlen(var->value), v);
        if (text_to_double(var->value, v) != HX_OK)
            return deck_error(d, "formula '%s': v_%s is '%s', not a number", show_formula(f).s,
                              var->name, deck_show(var->value).s);
        return HX_OK;
    }
    {
        char what[160];
        char word[41];
        size_t n = 0;
        while (f->p + n < f->end && n < sizeof word - 1 && !deck_is_blank(f->p[n]))
            n++;
        memcpy(word, f->p, n);
        word[n] = '\0';
        snprintf(what, sizeof what,
                 "'%s' is not understood (formulas here have numbers, + - * / ^, "
                 "parentheses and v_name)",
                 deck_show(word).s);
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
    deck_var *v = deck_var_find(d, name, n);
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
hx_status deck_substitute(deck *d, const char *in, size_t n)
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
            if (!deck_is_name(in + i + 2, j - i - 2))
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
