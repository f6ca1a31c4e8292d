/*
 * test_deck_pair.c - the deck's pair commands (src/md/deck_pair.c) for
 * each pair style: LAMMPS's forms give the style's parameters, and every
 * bad parameter, cutoff or count is one error with the file, the line
 * and the form.
 */
#include "hxtest.h"
#include "md/deck.h"
#include "md/pair/pair_eval.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Lines 1-7 of a deck; the pair commands follow from line 8. */
#define BOX                                                                                        \
    "units lj\natom_style atomic\nlattice fcc 0.8442\nregion box block 0 4 0 4 0 4\n"              \
    "create_box 1 box\ncreate_atoms 1 box\nmass 1 1.0\n"

/* Each style with LAMMPS's forms: its parameters in c.pair (pair_coeff's,
 * then pair_style's), `1 1` and `* *` alike; WCA is lj/cut shifted. */
static void test_pair_styles(void)
{
    static const struct {
        const char *lines;
        int style;
        double p0, p1, p2, rc;
        int shift;
    } ok[] = {
        {"pair_style morse 2.5\npair_coeff * * 1.0 4.0 1.1", HX_PAIR_MORSE, 1.0, 4.0, 1.1, 2.5, 0},
        {"pair_style morse 2.5\npair_coeff 1 1 2 3 1 2.2\npair_modify shift yes", HX_PAIR_MORSE,
         2.0, 3.0, 1.0, 2.2, 1},
        {"pair_style yukawa 2.0 2.5\npair_coeff * * 20.0", HX_PAIR_YUKAWA, 20.0, 2.0, 0.0, 2.5, 0},
        {"pair_style yukawa 1.5 2.5\npair_coeff 1 1 -3 2.0", HX_PAIR_YUKAWA, -3.0, 1.5, 0.0, 2.0,
         0},
        {"pair_style soft 1.5\npair_coeff * * 5.0", HX_PAIR_SOFT, 5.0, 0.0, 0.0, 1.5, 0},
        {"pair_style lj/smooth/linear 2.5\npair_coeff 1 1 1.0 1.0", HX_PAIR_LJ_SMOOTH_LINEAR, 1.0,
         1.0, 0.0, 2.5, 0},
        {"pair_style lj/cut $(2^(1/6))\npair_coeff * * 1.0 1.0\npair_modify shift yes",
         HX_PAIR_LJ_CUT, 1.0, 1.0, 0.0, 1.122462048309373, 1},
        /* A mixing rule: checked, no unlike pair to mix with one type. */
        {"pair_style lj/cut 2.5\npair_coeff * * 1.0 1.0\npair_modify mix arithmetic shift yes",
         HX_PAIR_LJ_CUT, 1.0, 1.0, 0.0, 2.5, 1},
    };
    char text[4096];
    hx_md_config c;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        snprintf(text, sizeof text, BOX "%s\nrun 10\n", ok[i].lines);
        hx_md_config_defaults(&c);
        if (!HXT_OK(hx_md_deck_parse(text, strlen(text), "t.in", &c, NULL, 0)))
            continue;
        HXT_CHECK(c.pair_style == ok[i].style && c.pair[0] == ok[i].p0 && c.pair[1] == ok[i].p1 &&
                      (ok[i].style != HX_PAIR_MORSE || c.pair[2] == ok[i].p2) &&
                      fabs(c.rc - ok[i].rc) < 1e-12 && c.shift_energy == ok[i].shift,
                  "%s: style %d pair %g %g %g rc %.17g shift %d", ok[i].lines, c.pair_style,
                  c.pair[0], c.pair[1], c.pair[2], c.rc, c.shift_energy);
    }
}

typedef struct bad_case {
    const char *text;
    const char *needle;
} bad_case;

/* Each at line 8, followed by "run 10". */
static const bad_case bad_lines[] = {
    {"pair_style lj/cut 2.5\npair_coeff * * 1.0 -1.0",
     "t.in:9: pair_coeff: sigma -1.0 must be > 0 (pair_coeff * * EPSILON SIGMA [RC])"},
    {"pair_style morse 2.5\npair_coeff * * 1.0 0 1.1",
     "t.in:9: pair_coeff: alpha 0 must be > 0 (pair_coeff * * D0 ALPHA R0 [RC])"},
    {"pair_style morse 2.5\npair_coeff 1 1 1.0 -2 1.1", "t.in:9: pair_coeff: alpha -2 must be > 0"},
    {"pair_style morse 2.5\npair_coeff 1 1 1.0 2 1.1 0",
     "t.in:9: pair_coeff: cutoff 0 must be > 0 (pair_coeff * * D0 ALPHA R0 [RC])"},
    {"pair_style morse 2.5\npair_coeff * * 1.0 2",
     "t.in:9: pair_coeff takes more arguments; write `pair_coeff * * D0 ALPHA R0 [RC]`"},
    {"pair_style morse -2.5", "t.in:8: pair_style: cutoff -2.5 must be > 0 (pair_style morse RC)"},
    {"pair_style morse 2.5",
     "t.in:9: run comes before pair_coeff; pair_style morse needs `pair_coeff * * D0 ALPHA R0 "
     "[RC]` first"},
    {"pair_style yukawa 2.5",
     "t.in:8: pair_style takes more arguments; write `pair_style yukawa KAPPA RC`"},
    {"pair_style yukawa -1 2.5",
     "t.in:8: pair_style: kappa -1 must be >= 0 (pair_style yukawa KAPPA RC)"},
    {"pair_style soft 0", "t.in:8: pair_style: cutoff 0 must be > 0 (pair_style soft RC)"},
    {"pair_style soft 1.5\npair_coeff * * 1 2 3",
     "t.in:9: pair_coeff takes fewer arguments; write `pair_coeff * * A [RC]`"},
    {"pair_style lj/smooth/linear 2.5\npair_coeff 1 1 1.0 0.0",
     "t.in:9: pair_coeff: sigma 0.0 must be > 0 (pair_coeff * * EPSILON SIGMA [RC])"},
    {"pair_style lj/smooth/linear 2.5\npair_coeff 1 2 1.0 1.0",
     "t.in:9: pair_coeff: atom type '2'"},
    {"pair_style lj/smooth 2.0 2.5",
     "t.in:8: pair_style 'lj/smooth': halox-md computes lj/cut, morse, yukawa, soft, "
     "lj/smooth/linear"},
    {"pair_style lj/cut 2.5\npair_coeff * * 1 1\npair_modify mix average",
     "t.in:10: pair_modify mix 'average': the rules are geometric, arithmetic and sixthpower"},
    {"pair_style lj/cut 2.5\npair_coeff * * 1 1\npair_modify tail yes",
     "t.in:10: pair_modify keyword 'tail' is not supported"},
    {"pair_style lj/cut 2.5\npair_coeff * * 1 1\npair_modify shift yes mix",
     "t.in:10: pair_modify mix has no value"},
    {"read_restart a.rst\npair_coeff * * 1 1",
     "t.in:2: pair_coeff after read_restart needs a pair_style before it"},
};

static void test_pair_errors(void)
{
    char text[4096];
    hx_md_config c;
    for (size_t i = 0; i < sizeof bad_lines / sizeof bad_lines[0]; i++) {
        const int restart = strncmp(bad_lines[i].text, "read_restart", 12) == 0;
        snprintf(text, sizeof text, "%s%s\nrun 10\n", restart ? "" : BOX, bad_lines[i].text);
        hx_md_config_defaults(&c);
        if (!HXT_FAILS(hx_md_deck_parse(text, strlen(text), "t.in", &c, NULL, 0), HX_ERR_PARSE,
                       bad_lines[i].needle))
            fprintf(stderr, "  (%s)\n", bad_lines[i].text);
    }
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_deck_pair");
    test_pair_styles();
    test_pair_errors();
    return hxt_finish(comm);
}
