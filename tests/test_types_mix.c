/*
 * test_types_mix.c - atom types in the deck and the pairs a run uses
 * (src/md/deck*.c, src/md/pair/pair_mix.c, src/md/types.c), without
 * LAMMPS: type ranges as LAMMPS's bounds, each style's mixing under each
 * rule (LAMMPS's Pair::mix_energy and mix_distance written out here), a
 * pair's own cutoff and the list cutoff, and set type/fraction's draw.
 */
#include "hxtest.h"
#include "md/deck.h"
#include "md/md.h"
#include "md/md_driver.h"
#include "md/pair/pair_styles.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define BOX3                                                                                       \
    "units lj\natom_style atomic\nlattice fcc 0.8442\nregion box block 0 4 0 4 0 4\n"              \
    "create_box 3 box\ncreate_atoms 1 box\nmass * 1.0\nmass 2*3 2.0\n"

static int parse(const char *lines, hx_md_config *c)
{
    char text[4096];
    snprintf(text, sizeof text, BOX3 "%s\nrun 1\n", lines);
    hx_md_config_defaults(c);
    return HXT_OK(hx_md_deck_parse(text, strlen(text), "t.in", c, NULL, 0));
}

/* Ranges and masses: `mass 2*3` after `mass *`, pair_coeff's I <= J. */
static void test_ranges(void)
{
    hx_md_config c;
    if (!parse("pair_style lj/cut 2.5\npair_coeff * * 1 1\npair_coeff 2* *3 0.5 1.2 3.0", &c))
        return;
    HXT_CHECK(c.types.ntypes == 3 && c.types.masses[0] == 1.0 && c.types.masses[1] == 2.0 &&
                  c.types.masses[2] == 2.0,
              "masses %g %g %g", c.types.masses[0], c.types.masses[1], c.types.masses[2]);
    HXT_CHECK(c.types.set[0][0] && c.types.set[0][2] && c.types.set[1][1] && c.types.set[1][2] &&
                  c.types.param[1][2][1] == 1.2 && c.types.param[0][1][1] == 1.0 &&
                  c.types.rc[2][2] == 3.0 && c.types.rc[0][0] == 0.0,
              "pair_coeff ranges");
    HXT_CHECK(fabs(hxi_md_list_cutoff(&c) - 3.3) < 1e-12, "list cutoff %g (3.0 + 0.3)",
              hxi_md_list_cutoff(&c));
}

/* LAMMPS's rules, written out. */
static double want_eps(int mix, double e1, double e2, double s1, double s2)
{
    if (mix == HX_MD_MIX_SIXTHPOWER)
        return 2.0 * sqrt(e1 * e2) * pow(s1, 3.0) * pow(s2, 3.0) / (pow(s1, 6.0) + pow(s2, 6.0));
    return sqrt(e1 * e2);
}

static double want_sig(int mix, double s1, double s2)
{
    if (mix == HX_MD_MIX_ARITHMETIC)
        return 0.5 * (s1 + s2);
    if (mix == HX_MD_MIX_SIXTHPOWER)
        return pow(0.5 * (pow(s1, 6.0) + pow(s2, 6.0)), 1.0 / 6.0);
    return sqrt(s1 * s2);
}

static void test_mixing(void)
{
    static const char *const rules[] = {"geometric", "arithmetic", "sixthpower"};
    char lines[512];
    hx_md_config c;
    hxi_pair_types t;
    for (int mix = 0; mix < 3; mix++) {
        snprintf(lines, sizeof lines,
                 "pair_style lj/cut 2.5\npair_coeff 1 1 1.0 1.0\npair_coeff 2 2 0.5 1.2 2.8\n"
                 "pair_coeff 3 3 0.3 0.9\npair_modify mix %s",
                 rules[mix]);
        if (!parse(lines, &c) || !HXT_OK(hxi_pair_resolve(&c, &t, HX_ERR_INVALID, "")))
            continue;
        HXT_CHECK(t.p[0][1][0] == want_eps(mix, 1.0, 0.5, 1.0, 1.2) &&
                      t.p[0][1][1] == want_sig(mix, 1.0, 1.2) &&
                      t.rc[0][1] == want_sig(mix, 2.5, 2.8) && t.p[1][0][0] == t.p[0][1][0] &&
                      t.rc[2][1] == want_sig(mix, 2.5, 2.8),
                  "lj/cut %s: eps %.17g sigma %.17g rc %.17g", rules[mix], t.p[0][1][0],
                  t.p[0][1][1], t.rc[0][1]);
        /* soft: sqrt(A_i A_j) whatever the rule; yukawa: an energy of unit
         * sigmas. `* *` would set every pair (LAMMPS's I <= J of the ranges):
         * the like pairs are given one by one. */
        snprintf(
            lines, sizeof lines,
            "pair_style soft 1.5\npair_coeff 1 1 4.0\npair_coeff 2 3 9.0\npair_coeff 2*3 2*3 9.0\n"
            "pair_modify mix %s",
            rules[mix]);
        if (parse(lines, &c) && HXT_OK(hxi_pair_resolve(&c, &t, HX_ERR_INVALID, "")))
            HXT_CHECK(t.p[0][1][0] == 6.0 && t.rc[0][1] == 1.5, "soft %s: A %g", rules[mix],
                      t.p[0][1][0]);
        snprintf(lines, sizeof lines,
                 "pair_style yukawa 2.0 2.5\npair_coeff 1 1 4.0\npair_coeff 2* 2* 4.0\n"
                 "pair_coeff 3 3 9.0 3.0\n"
                 "pair_modify mix %s",
                 rules[mix]);
        if (parse(lines, &c) && HXT_OK(hxi_pair_resolve(&c, &t, HX_ERR_INVALID, "")))
            HXT_CHECK(t.p[0][2][0] == want_eps(mix, 4.0, 9.0, 1.0, 1.0) && t.p[0][2][1] == 2.0 &&
                          t.rc[0][2] == want_sig(mix, 2.5, 3.0),
                      "yukawa %s: A %g kappa %g rc %g", rules[mix], t.p[0][2][0], t.p[0][2][1],
                      t.rc[0][2]);
    }
}

/* Bad decks: one error each, with the file, the line and the form. */
static void test_errors(void)
{
    static const struct {
        const char *lines, *needle;
    } bad[] = {
        {"pair_style lj/cut 2.5\npair_coeff 1 4 1 1", "t.in:10: pair_coeff: atom type '4' is out"},
        {"pair_style lj/cut 2.5\npair_coeff 2 1 1 1", "t.in:10: pair_coeff 2 1 names no pair"},
        {"pair_style lj/cut 2.5\npair_coeff 1 1 1 1\npair_coeff 3 3 1 1",
         "t.in:12: run: pair_coeff 2 2 is not set"},
        {"pair_style morse 2.5\npair_coeff 1 1 1 4 1\npair_coeff 2 2 1 4 1\npair_coeff 3 3 1 4 1",
         "t.in:13: run: pair_coeff 1 2 is not set: pair_style morse does not mix"},
        {"pair_style soft 2.5\npair_coeff 1 1 1\npair_coeff 2* 2* -1",
         "t.in:12: run: pair_coeff 1 2 is not set, and A 1 of type 1 and -1 of type 2"},
        {"pair_style lj/cut 2.5\npair_coeff * * 1 1\npair_modify mix lorentz",
         "t.in:11: pair_modify mix 'lorentz'"},
        {"pair_style lj/cut 2.5\npair_coeff * * 1 -1", "t.in:10: pair_coeff: sigma -1 must be > 0"},
        {"set type 1 type/fraction 4 0.5 1\npair_style lj/cut 2.5\npair_coeff * * 1 1",
         "t.in:9: set: atom type 4 is out of range"},
        {"set type 1 type/fraction 2 1.5 1\npair_style lj/cut 2.5\npair_coeff * * 1 1",
         "t.in:9: set: fraction 1.5 must be 0 to 1"},
        {"set type 1 mass 2\npair_style lj/cut 2.5\npair_coeff * * 1 1",
         "t.in:9: set keyword 'mass'"},
    };
    char text[4096];
    hx_md_config c;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, BOX3 "%s\nrun 1\n", bad[i].lines);
        hx_md_config_defaults(&c);
        HXT_FAILS(hx_md_deck_parse(text, strlen(text), "t.in", &c, NULL, 0), HX_ERR_PARSE,
                  bad[i].needle);
    }
}

/* set type/fraction: the draw of LAMMPS's Set at a few sites, and the
 * share over many near the fraction. */
static void test_fraction(void)
{
    hx_md_config c;
    int n2 = 0, n = 0;
    if (!parse("set type 1 type/fraction 2 0.25 7\nset type 2 type 3\npair_style lj/cut 2.5\n"
               "pair_coeff * * 1 1",
               &c))
        return;
    for (int64_t id = 0; id < 4 * 64; id++) {
        double x[3];
        hx_md_site(&c, id, x);
        const int t = hxi_md_type_at(&c, x);
        HXT_CHECK(t == 1 || t == 3, "site %lld: type %d (set type 2 type 3 moves every 2)",
                  (long long) id, t);
        n2 += t == 3;
        n++;
    }
    HXT_CHECK(n2 > n / 8 && n2 < n / 2, "%d of %d sites drawn at 0.25", n2, n);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_types_mix");
    test_ranges();
    test_mixing();
    test_errors();
    test_fraction();
    return hxt_finish(comm);
}
