/*
 * deck_internal.h - what the deck reader's files share (deck.c: reading
 * lines; deck_lex.c: words, numbers, variables, formulas, substitution;
 * deck_commands.c: the commands; deck_box.c: the box and its atoms;
 * deck_pair.c: the pair commands). Not installed.
 */
#ifndef HALOX_MD_DECK_INTERNAL_H
#define HALOX_MD_DECK_INTERNAL_H

#include "md/deck.h"

#include "core/hxi.h"

#include <stddef.h>

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

typedef enum { VAR_INDEX, VAR_EQUAL } var_style;

typedef struct deck_var {
    char name[DECK_MAX_NAME];
    var_style style;
    char *value; /* index: the text; equal: the formula */
} deck_var;

typedef struct deck_region {
    char id[DECK_MAX_NAME];
    int cells[3];
    int prism;      /* region ID prism ...: a triclinic box */
    double tilt[3]; /* its xy, xz, yz in box units */
    /* its bounds in box units (+-HUGE_VAL for INF): a region defined
     * after create_box, for create_atoms T region ID */
    double lo[3], hi[3];
} deck_region;

/* The fix styles read (deck_fix.c). */
typedef enum { DECK_FIX_NVE = 0, DECK_FIX_NVT, DECK_FIX_LANGEVIN, DECK_FIX_STYLES } deck_fix_style;

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
    int have_dump, have_velocity, ran;
    int restarted;    /* read_restart given: the file holds box, atoms, mass, pair, dt */
    int new_style;    /* the deck gave pair_style (after read_restart: a new one) */
    double rc_global; /* pair_style ... RC */
    double rc_coeff;  /* pair_coeff ... RC, or 0 when none was given */
    deck_region regions[DECK_MAX_REGIONS];
    int nregions;
    char box_region[DECK_MAX_NAME];
    char fix_ids[DECK_FIX_STYLES][DECK_MAX_NAME]; /* by deck_fix_style, "" none */
    char dump_id[DECK_MAX_NAME];
} deck;

/* A word as a message may show it: at most 40 bytes, anything but printable
 * ASCII as '?'. Returned by value, so that one message can show several. */
typedef struct shown_word {
    char s[48];
} shown_word;

/* ---------------------------------------------- deck_lex.c */

shown_word deck_show(const char *w);
/* HX_ERR_PARSE with "file:line: " before the message. */
hx_status deck_error(deck *d, const char *fmt, ...) HXI_PRINTF(2, 3);
int deck_is_blank(char ch);
/* s[0 .. n) is an ID or variable name: letters, digits and _, as LAMMPS. */
int deck_is_name(const char *s, size_t n);
/* Length of s[0 .. n) before its comment. */
size_t deck_strip_comment(const char *s, size_t n);
/* Splits s (d->sub) into d->words, in place. */
hx_status deck_split_words(deck *d, char *s);
/* A word as a number, an error naming `what` when it is not one. */
hx_status deck_get_double(deck *d, const char *what, const char *w, double *out);
hx_status deck_get_int(deck *d, const char *what, const char *w, long long lo, long long hi,
                       long long *out);
hx_status deck_get_int32(deck *d, const char *what, const char *w, long long lo, int *out);
hx_status deck_get_yes_no(deck *d, const char *what, const char *w, int *out);
deck_var *deck_var_find(deck *d, const char *name, size_t n);
hx_status deck_var_add(deck *d, const char *name, var_style style, const char *value,
                       deck_var **out);
/* The line in[0 .. n) with $x, ${name} and $(formula) replaced, into d->sub. */
hx_status deck_substitute(deck *d, const char *in, size_t n);

/* ------------------------------------------ deck_commands.c */

/* Runs the command in d->words. */
hx_status deck_run_command(deck *d);
/* The command has min to max words (usage: its form). */
hx_status deck_nargs(deck *d, int min, int max, const char *usage);
/* The atom types a word names (I, *, I*, *J, I*J) within the box's. */
hx_status deck_type_range(deck *d, const char *w, int *lo, int *hi);
/* HX_ERR_PARSE naming `first` unless have. */
hx_status deck_need(deck *d, int have, const char *first);

/* HX_ERR_PARSE for a command that makes the box after read_restart. */
hx_status deck_not_restarted(deck *d);

/* ----------------------------------------------- deck_box.c */

hx_status deck_cmd_lattice(deck *d);
/* The fcc lattice constant a of the deck's density (lattice fcc RHO). */
double deck_lattice_a(const deck *d);
/* region ID block|prism ... [units lattice|box] */
hx_status deck_cmd_region(deck *d);
hx_status deck_cmd_create_box(deck *d);
hx_status deck_cmd_create_atoms(deck *d);
/* At the first run: a triclinic box thick enough for rc + skin. */
hx_status deck_box_ready(deck *d);

/* --------------------------------------------- deck_pair.c */

hx_status deck_pair_style(deck *d);
hx_status deck_pair_coeff(deck *d);
hx_status deck_pair_modify(deck *d);
/* At the first run: the pair style has its coefficients. */
hx_status deck_pair_ready(deck *d);

/* ----------------------------------------------- deck_fix.c */

/* fix ID all nve|nvt|langevin ... */
hx_status deck_cmd_fix(deck *d);
/* thermo N, thermo_style one|custom ..., thermo_modify norm yes|no */
hx_status deck_cmd_thermo(deck *d);
hx_status deck_cmd_thermo_style(deck *d);
hx_status deck_cmd_thermo_modify(deck *d);
/* ------------------------------------------ deck_velocity.c */

/* velocity all create T SEED ... | velocity all set VX VY VZ ... */
hx_status deck_cmd_velocity(deck *d);

/* ------------------------------------------- deck_balance.c */

/* balance THRESH shift ... | x ... y ... z ... */
hx_status deck_cmd_balance(deck *d);
/* fix ID all balance NFREQ THRESH shift DIMS NITER STOPTHRESH */
hx_status deck_cmd_fix_balance(deck *d);

/* At a run after the first: what a thermostat cannot carry over (a ramped
 * target starts again at each LAMMPS run). */
hx_status deck_fix_next_run(deck *d);

#endif
