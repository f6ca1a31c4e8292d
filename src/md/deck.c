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
 * This file joins and runs the lines; deck_lex.c has the words, numbers,
 * variables, formulas and substitution; deck_commands.c the commands.
 */
#include "md/deck_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One logical line, s[0 .. n), joined already and free of NUL bytes. */
static hx_status run_line(deck *d, const char *s, size_t n)
{
    n = deck_strip_comment(s, n);
    HXI_CHECK(deck_substitute(d, s, n));
    HXI_CHECK(deck_split_words(d, d->sub));
    if (d->nwords == 0)
        return HX_OK;
    return deck_run_command(d);
}

/* The end of the physical line that starts at pos: the first '\n' or '\r'
 * (or len). *next is where the following line starts: past "\r\n" as one
 * break, so that LF, CRLF and CR-only (old Mac) files read alike. */
static size_t line_end(const char *text, size_t pos, size_t len, size_t *next)
{
    size_t i = pos;
    while (i < len && text[i] != '\n' && text[i] != '\r')
        i++;
    if (i == len)
        *next = len;
    else if (text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')
        *next = i + 2;
    else
        *next = i + 1;
    return i;
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
            size_t next;
            size_t eol = line_end(text, pos, len, &next);
            size_t e = eol;
            phys++;
            while (e > pos && deck_is_blank(text[e - 1]))
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
            pos = next;
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
        if (!eq || !deck_is_name(vars[i], (size_t) (eq - vars[i])))
            return hxi_error(HX_ERR_INVALID,
                             "-var '%s': write -var NAME VALUE, NAME of letters, digits and _ "
                             "(at most %d)",
                             vars[i] ? deck_show(vars[i]).s : "(null)", DECK_MAX_NAME - 1);
        memcpy(name, vars[i], (size_t) (eq - vars[i]));
        name[eq - vars[i]] = '\0';
        if (deck_var_find(d, name, strlen(name)))
            return hxi_error(HX_ERR_INVALID, "-var %s is given twice; give it once",
                             deck_show(name).s);
        if (d->nvars == DECK_MAX_VARS)
            return hxi_error(HX_ERR_INVALID, "more than %d -var options", DECK_MAX_VARS);
        HXI_CHECK(deck_var_add(d, name, VAR_INDEX, eq + 1, NULL));
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
    /* A UTF-8 byte-order mark, which some editors put first, is not a
     * word of the first command. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }

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
    memset(&d->c.nvt, 0, sizeof d->c.nvt);
    memset(&d->c.langevin, 0, sizeof d->c.langevin);
    hx_md_config_thermo_one(&d->c);

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
