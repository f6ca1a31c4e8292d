/*
 * test_deck.c - the LAMMPS deck reader and the halox-md command line:
 * LAMMPS's in.lj and in.melt give the values LAMMPS runs, -var overrides
 * index variables, every rejected deck says file and line, and options
 * override the deck wherever they stand.
 *
 * Usage: test_deck DECKDIR (the folder of tests/decks).
 */
#include "hxtest.h"
#include "md/deck.h"

#include <stdio.h>
#include <string.h>

static const char *deck_dir = ".";

static const char *deck_path(const char *name)
{
    static char buf[4][1024];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", deck_dir, name);
    return p;
}

/* Parses text as deck "t.in" over the defaults. */
static hx_status parse(const char *text, hx_md_config *c, const char *const *vars, int nvars)
{
    hx_md_config_defaults(c);
    return hx_md_deck_parse(text, strlen(text), "t.in", c, vars, nvars);
}

static void test_defaults(void)
{
    hx_md_config c;
    hx_md_config_defaults(&c);
    HXT_CHECK(c.cells[0] == 20 && c.cells[1] == 20 && c.cells[2] == 20, "cells %d %d %d",
              c.cells[0], c.cells[1], c.cells[2]);
    HXT_CHECK(c.density == 0.8442 && c.temperature == 1.44 && c.seed == 87287, "lj system");
    HXT_CHECK(c.rc == 2.5 && c.pair[0] == 1.0 && c.pair[1] == 1.0 && c.mass == 1.0, "lj pair");
    HXT_CHECK(c.skin == 0.3 && c.neigh_every == 20 && c.neigh_delay == 0 && c.neigh_check == 0,
              "neighbour settings");
    HXT_CHECK(c.dt == 0.005 && c.steps == 100 && c.thermo_every == 50 && c.nve == 1, "integration");
    HXT_CHECK(c.shift_energy == 0 && c.velocity_mode == HX_MD_VEL_LAMMPS, "shift, mode");
    HXT_CHECK(c.velocity_loop == HX_MD_LOOP_GEOM && c.velocity_gaussian == 0 &&
                  c.velocity_mom == 1 && c.velocity_rot == 0,
              "velocity: in.lj's loop geom, LAMMPS's other defaults");
    HXT_CHECK(c.transport[0] == '\0' && c.grid[0] == 0 && c.use_gpu == -1 && c.progress == 1 &&
                  c.dump_every == 0,
              "run-time fields");
    HXT_OK(hx_md_config_check(&c));
}

static void test_in_lj(void)
{
    hx_md_config c;
    static const char *const x2[] = {"x=2"};
    static const char *const xyz[] = {"x=2", "y=3", "z=1"};
    hx_md_config_defaults(&c);
    /* Run-time fields are not the deck's: they survive it. */
    strcpy(c.transport, "nccl");
    c.grid[0] = 2, c.grid[1] = 2, c.grid[2] = 1;
    c.use_gpu = 1;
    c.progress = 0;
    c.velocity_mode = HX_MD_VEL_MINIMD;
    if (!HXT_OK(hx_md_deck_read(deck_path("in.lj"), &c, NULL, 0)))
        return;
    HXT_CHECK(c.cells[0] == 20 && c.cells[1] == 20 && c.cells[2] == 20, "cells %d %d %d",
              c.cells[0], c.cells[1], c.cells[2]);
    HXT_CHECK(c.density == 0.8442, "density %g", c.density);
    HXT_CHECK(c.mass == 1.0, "mass %g", c.mass);
    HXT_CHECK(c.temperature == 1.44 && c.seed == 87287 && c.velocity_loop == HX_MD_LOOP_GEOM &&
                  c.velocity_gaussian == 0 && c.velocity_mom == 1 && c.velocity_rot == 0,
              "velocity %g %llu loop %d", c.temperature, (unsigned long long) c.seed,
              (int) c.velocity_loop);
    HXT_CHECK(c.rc == 2.5 && c.pair[0] == 1.0 && c.pair[1] == 1.0, "pair %g %g %g", c.rc, c.pair[0],
              c.pair[1]);
    HXT_CHECK(c.skin == 0.3 && c.neigh_every == 20 && c.neigh_delay == 0 && c.neigh_check == 0,
              "neighbor %g %d %d %d", c.skin, c.neigh_every, c.neigh_delay, c.neigh_check);
    HXT_CHECK(c.nve == 1 && c.steps == 100, "nve %d steps %d", c.nve, c.steps);
    /* in.lj has neither timestep nor thermo: LAMMPS's lj defaults. */
    HXT_CHECK(c.dt == 0.005 && c.thermo_every == 0, "dt %g thermo %d", c.dt, c.thermo_every);
    HXT_CHECK(c.shift_energy == 0 && c.dump_every == 0, "shift %d dump %d", c.shift_energy,
              c.dump_every);
    HXT_CHECK(strcmp(c.transport, "nccl") == 0 && c.grid[0] == 2 && c.grid[2] == 1 &&
                  c.use_gpu == 1 && c.progress == 0 && c.velocity_mode == HX_MD_VEL_MINIMD,
              "run-time fields kept");
    HXT_OK(hx_md_config_check(&c));

    /* -var x 2 wins over `variable x index 1`: xx = 20*$x = 40. */
    hx_md_config_defaults(&c);
    if (HXT_OK(hx_md_deck_read(deck_path("in.lj"), &c, x2, 1)))
        HXT_CHECK(c.cells[0] == 40 && c.cells[1] == 20 && c.cells[2] == 20, "cells %d %d %d",
                  c.cells[0], c.cells[1], c.cells[2]);
    if (HXT_OK(hx_md_deck_read(deck_path("in.lj"), &c, xyz, 3)))
        HXT_CHECK(c.cells[0] == 40 && c.cells[1] == 60 && c.cells[2] == 20, "cells %d %d %d",
                  c.cells[0], c.cells[1], c.cells[2]);
}

static void test_in_melt(void)
{
    hx_md_config c;
    hx_md_config_defaults(&c);
    if (!HXT_OK(hx_md_deck_read(deck_path("in.melt"), &c, NULL, 0)))
        return;
    HXT_CHECK(c.cells[0] == 10 && c.cells[1] == 10 && c.cells[2] == 10, "cells %d", c.cells[0]);
    HXT_CHECK(c.density == 0.8442 && c.temperature == 3.0 && c.seed == 87287 &&
                  c.velocity_loop == HX_MD_LOOP_GEOM,
              "system %g %g", c.density, c.temperature);
    HXT_CHECK(c.rc == 2.5 && c.skin == 0.3 && c.neigh_every == 20 && c.neigh_delay == 0 &&
                  c.neigh_check == 0,
              "pair and lists");
    HXT_CHECK(c.thermo_every == 50 && c.steps == 250 && c.nve == 1, "thermo %d steps %d",
              c.thermo_every, c.steps);
    /* Its dump lines are comments (one of them continued with &). */
    HXT_CHECK(c.dump_every == 0 && c.dump_file[0] == '\0', "no dump");
}

static void test_all_and_vars(void)
{
    hx_md_config c;
    static const char *const s3[] = {"s=3"};
    hx_md_config_defaults(&c);
    if (HXT_OK(hx_md_deck_read(deck_path("all.in"), &c, NULL, 0))) {
        HXT_CHECK(c.density == 0.84, "density %.17g (0.8*(1+0.05) printed %%.15g)", c.density);
        HXT_CHECK(c.cells[0] == 6 && c.cells[1] == 6 && c.cells[2] == 6, "cells %d %d %d",
                  c.cells[0], c.cells[1], c.cells[2]);
        HXT_CHECK(c.mass == 2.0 && c.temperature == 0.7 && c.seed == 12345 &&
                      c.velocity_loop == HX_MD_LOOP_ALL && c.velocity_gaussian == 1 &&
                      c.velocity_mom == 1 && c.velocity_rot == 0,
                  "mass/velocity");
        HXT_CHECK(c.rc == 3.0 && c.pair[0] == 1.5 && c.pair[1] == 1.1 && c.shift_energy == 1,
                  "pair %g %g %g %d", c.rc, c.pair[0], c.pair[1], c.shift_energy);
        HXT_CHECK(c.skin == 0.4 && c.neigh_every == 2 && c.neigh_delay == 4 && c.neigh_check == 1,
                  "lists %g %d %d %d", c.skin, c.neigh_every, c.neigh_delay, c.neigh_check);
        HXT_CHECK(c.nve == 1 && c.dt == 0.002 && c.thermo_every == 10, "integration");
        HXT_CHECK(c.dump_every == 25 && strcmp(c.dump_file, "traj.xyz") == 0 &&
                      c.dump_style == HX_MD_DUMP_ATOM,
                  "dump %d %s style %d", c.dump_every, c.dump_file, (int) c.dump_style);
        HXT_CHECK(c.steps == 70, "two runs add up: %d", c.steps);
    }
    hx_md_config_defaults(&c);
    if (HXT_OK(hx_md_deck_read(deck_path("vars.in"), &c, NULL, 0))) {
        HXT_CHECK(c.cells[0] == 8 && c.cells[1] == 6 && c.cells[2] == 4, "cells %d %d %d",
                  c.cells[0], c.cells[1], c.cells[2]);
        /* Left out, so LAMMPS's defaults: at rest, no integrator, thermo 0,
         * lists every step with the check. */
        HXT_CHECK(c.temperature == 0.0 && c.nve == 0 && c.thermo_every == 0, "defaults");
        HXT_CHECK(c.neigh_every == 1 && c.neigh_delay == 0 && c.neigh_check == 1 && c.skin == 0.3,
                  "neighbour defaults");
        HXT_CHECK(c.rc == 2.5 && c.steps == 10, "rc %g steps %d", c.rc, c.steps);
    }
    hx_md_config_defaults(&c);
    if (HXT_OK(hx_md_deck_read(deck_path("vars.in"), &c, s3, 1)))
        HXT_CHECK(c.cells[0] == 12 && c.cells[1] == 8 && c.cells[2] == 5, "cells %d %d %d",
                  c.cells[0], c.cells[1], c.cells[2]);
    /* A -var that makes the box empty is an error at the deck's own line. */
    {
        static const char *const s0[] = {"s=0"};
        HXT_FAILS(hx_md_deck_read(deck_path("vars.in"), &c, s0, 1), HX_ERR_PARSE,
                  "vars.in:10: region: xhi 0 must be a whole number");
    }
    HXT_FAILS(hx_md_deck_read(deck_path("no-such.in"), &c, NULL, 0), HX_ERR_IO, "cannot open");
}

/* Lines 1-9 of a deck that needs only a run. */
#define HEAD                                                                                       \
    "units lj\n"                                                                                   \
    "atom_style atomic\n"                                                                          \
    "lattice fcc 0.8442\n"                                                                         \
    "region box block 0 4 0 4 0 4\n"                                                               \
    "create_box 1 box\n"                                                                           \
    "create_atoms 1 box\n"                                                                         \
    "mass 1 1.0\n"                                                                                 \
    "pair_style lj/cut 2.5\n"                                                                      \
    "pair_coeff 1 1 1.0 1.0\n"

/* A deck of 3 x 4 x 5 cells and 3 steps, however its lines are written. */
static void parses_345(const char *text, const char *what)
{
    hx_md_config c;
    if (HXT_OK(parse(text, &c, NULL, 0)))
        HXT_CHECK(c.cells[0] == 3 && c.cells[1] == 4 && c.cells[2] == 5 && c.steps == 3, "%s",
                  what);
}

static void test_lexical(void)
{
    hx_md_config c;
    char text[4096];
    FILE *f;

    /* CRLF line ends, tabs, trailing blanks after &. */
    snprintf(text, sizeof text,
             "units\tlj\r\natom_style atomic\r\nlattice fcc 0.8442\r\n"
             "region box block 0 3 &  \r\n 0 4 0 5\r\ncreate_box 1 box\r\n"
             "create_atoms 1 box\r\nmass * 1\r\npair_style lj/cut 2.5\r\n"
             "pair_coeff * * 1 1\r\nrun 3\r\n");
    parses_345(text, "crlf deck");
    /* CR-only line ends (old Mac) after a UTF-8 byte-order mark; a line
     * number counts CR lines (the error is on line 3). */
    snprintf(text, sizeof text,
             "\xEF\xBB\xBFunits lj\ratom_style atomic\rlattice fcc 0.8442\r"
             "region box block 0 3 &\r 0 4 0 5\rcreate_box 1 box\r"
             "create_atoms 1 box\rmass * 1\rpair_style lj/cut 2.5\r"
             "pair_coeff * * 1 1\rrun 3\r");
    parses_345(text, "bom + cr deck");
    HXT_FAILS(parse("\xEF\xBB\xBFunits lj\r\ratom_style atomik\rrun 1", &c, NULL, 0), HX_ERR_PARSE,
              "t.in:3: atom_style");

    /* '#' inside quotes is no comment; $ inside quotes is not substituted. */
    if (HXT_OK(parse(HEAD "dump d all atom 7 \"a#b$x.xyz\" # comment\nrun 1", &c, NULL, 0)))
        HXT_CHECK(strcmp(c.dump_file, "a#b$x.xyz") == 0 && c.dump_every == 7, "file %s",
                  c.dump_file);
    if (HXT_OK(parse(HEAD "dump t all xyz 3 t.xyz\ndump_modify t sort id\nrun 1", &c, NULL, 0)))
        HXT_CHECK(c.dump_style == HX_MD_DUMP_XYZ && c.dump_every == 3, "xyz style %d",
                  (int) c.dump_style);
    /* read_restart: the file's system; what comes after it is the deck's. */
    if (HXT_OK(parse("read_restart a.rst\ntimestep 0.002\nfix 1 all nve\nrestart 25 c.rst\n"
                     "run 50\nwrite_restart w.rst\nrun 10\n",
                     &c, NULL, 0)))
        HXT_CHECK(strcmp(c.restart_file, "a.rst") == 0 && c.dt == 0.002 &&
                      c.given == HX_MD_GIVEN_DT && c.checkpoint_every == 25 &&
                      strcmp(c.checkpoint_file, "c.rst") == 0 &&
                      strcmp(c.write_restart_file, "w.rst") == 0 && c.write_restart_after == 50 &&
                      c.steps == 60 && c.nve == 1,
                  "read_restart deck: file %s dt %g given %u restart %d %s write %s after %d",
                  c.restart_file, c.dt, c.given, c.checkpoint_every, c.checkpoint_file,
                  c.write_restart_file, c.write_restart_after);

    /* $(formula), precedence, v_ of index and equal variables. */
    if (HXT_OK(parse(HEAD "variable a index 4\nvariable b equal v_a*2+1\n"
                          "thermo $(v_b - 4*(1+1) / 2 ^ 2)\nrun ${b}",
                     &c, NULL, 0)))
        HXT_CHECK(c.thermo_every == 7 && c.steps == 9, "thermo %d steps %d", c.thermo_every,
                  c.steps);
    if (HXT_OK(parse(HEAD "thermo $(-2^2)\nrun $(2*-+-3)", &c, NULL, 0)))
        HXT_CHECK(c.thermo_every == 4 && c.steps == 6, "signs: thermo %d steps %d", c.thermo_every,
                  c.steps);
    /* A value with spaces splits into words, as in LAMMPS. */
    if (HXT_OK(parse("variable b index \"0 2 0 3 0 4\"\n" HEAD "region r2 block ${b}\nrun 0", &c,
                     NULL, 0)))
        HXT_CHECK(c.steps == 0 && c.cells[0] == 4, "run 0 accepted");
    /* An equal variable redefined is looked up anew. */
    if (HXT_OK(parse(HEAD "variable a equal 2\nvariable b equal v_a*3\nvariable a equal 5\n"
                          "run ${b}",
                     &c, NULL, 0)))
        HXT_CHECK(c.steps == 15, "steps %d", c.steps);

    /* As in LAMMPS, a trailing & continues a comment too (in.melt's
     * commented dump lines rely on it): "thermo x" is part of the comment. */
    if (HXT_OK(parse(HEAD "processors * 2 *\nrun 1", &c, NULL, 0)))
        HXT_CHECK(c.grid[0] == 0 && c.grid[1] == 2 && c.grid[2] == 0, "processors * 2 *: %d %d %d",
                  c.grid[0], c.grid[1], c.grid[2]);
    if (HXT_OK(parse(HEAD "# a comment &\nthermo x\nrun 1\n", &c, NULL, 0)))
        HXT_CHECK(c.thermo_every == 0 && c.steps == 1, "continued comment");

    /* pair_coeff's own cutoff wins over pair_style's before it; a later
     * pair_style's cutoff replaces it, as in LAMMPS (the same style keeps
     * its coefficients). */
    if (HXT_OK(parse(HEAD "pair_coeff 1 1 1 1 3.5\nrun 1", &c, NULL, 0)))
        HXT_CHECK(c.rc == 3.5, "rc %g", c.rc);
    if (HXT_OK(parse(HEAD "pair_coeff 1 1 1 1 3.5\npair_style lj/cut 2.0\nrun 1", &c, NULL, 0)))
        HXT_CHECK(c.rc == 2.0, "rc %g", c.rc);
    if (HXT_OK(parse(HEAD "pair_style lj/cut 2.0\nrun 1", &c, NULL, 0)))
        HXT_CHECK(c.rc == 2.0, "rc %g", c.rc);

    /* Several runs add up; variables may still change between them. */
    if (HXT_OK(
            parse(HEAD "run 10\nrun 5\nvariable a equal 2\nrun ${a} pre no post yes", &c, NULL, 0)))
        HXT_CHECK(c.steps == 17, "steps %d", c.steps);

    /* The same fix ID again replaces; neigh_modify keywords in any order. */
    if (HXT_OK(parse(HEAD "fix 1 all nve\nfix 1 all nve\nneigh_modify check no delay 6 "
                          "every 3\nrun 1",
                     &c, NULL, 0)))
        HXT_CHECK(c.nve == 1 && c.neigh_every == 3 && c.neigh_delay == 6 && c.neigh_check == 0,
                  "fix/neigh_modify");

    /* A deck without a dump keeps the dump the caller had. */
    hx_md_config_defaults(&c);
    c.dump_every = 9;
    strcpy(c.dump_file, "keep.xyz");
    if (HXT_OK(hx_md_deck_parse(HEAD "run 1", strlen(HEAD "run 1"), "t.in", &c, NULL, 0)))
        HXT_CHECK(c.dump_every == 9 && strcmp(c.dump_file, "keep.xyz") == 0, "dump kept");

    /* The text need not be terminated: only len bytes are read. */
    {
        const char *t = HEAD "run 12";
        char *copy = malloc(strlen(t));
        memcpy(copy, t, strlen(t));
        hx_md_config_defaults(&c);
        if (HXT_OK(hx_md_deck_parse(copy, strlen(t) - 1, "t.in", &c, NULL, 0)))
            HXT_CHECK(c.steps == 1, "len bytes only: steps %d", c.steps);
        free(copy);
    }

    /* The usage text names the options. */
    f = tmpfile();
    if (f) {
        size_t n;
        hx_md_config_usage(f, "halox-md");
        rewind(f);
        n = fread(text, 1, sizeof text - 1, f);
        text[n] = '\0';
        fclose(f);
        HXT_CHECK(strstr(text, "-in") && strstr(text, "--steps") && strstr(text, "--grid") &&
                      strstr(text, "32000 atoms"),
                  "usage text");
    }
}

typedef struct bad_case {
    const char *text;
    hx_status want;
    const char *needle;
} bad_case;

/* Each line goes at line 10, after HEAD, followed by "run 10". */
static const bad_case bad_lines[] = {
    {"fix_modify 1 energy yes", HX_ERR_PARSE,
     "t.in:10: unsupported command 'fix_modify' (halox-md reads: units, atom_style"},
    {"include other.in", HX_ERR_PARSE, "t.in:10: unsupported command 'include'"},
    {"pair_coeff 1 2 1.0 1.0", HX_ERR_PARSE, "t.in:10: pair_coeff: atom type '2'"},
    {"pair_coeff 1 1 1.0 0", HX_ERR_PARSE, "t.in:10: pair_coeff: sigma 0 must be > 0"},
    {"pair_coeff 1 1 -1 1", HX_ERR_PARSE, "t.in:10: pair_coeff: epsilon -1 must be >= 0"},
    {"pair_coeff 1 1 1 1 0", HX_ERR_PARSE, "t.in:10: pair_coeff: cutoff 0 must be > 0"},
    {"pair_style lj/cut 0", HX_ERR_PARSE, "t.in:10: pair_style: cutoff 0 must be > 0"},
    {"pair_style lj/cut/coul/long 2.5", HX_ERR_PARSE, "t.in:10: pair_style 'lj/cut/coul/long'"},
    {"pair_modify tail yes", HX_ERR_PARSE, "t.in:10: pair_modify keyword 'tail'"},
    {"pair_modify shift", HX_ERR_PARSE, "t.in:10: pair_modify takes more arguments"},
    {"neighbor -0.1 bin", HX_ERR_PARSE, "t.in:10: neighbor: skin -0.1 must be >= 0"},
    {"processors 2 0 *", HX_ERR_PARSE, "t.in:10: processors: processors count (or *) must be"},
    {"processors 2 2", HX_ERR_PARSE, "t.in:10: processors takes more arguments"},
    {"neighbor 0.3 nsq", HX_ERR_PARSE, "t.in:10: neighbor style 'nsq'"},
    {"neigh_modify every 0", HX_ERR_PARSE, "t.in:10: neigh_modify: every must be between 1"},
    {"neigh_modify delay 3 every 2", HX_ERR_PARSE, "t.in:10: neigh_modify: delay 3 must be 0 or"},
    {"neigh_modify once yes", HX_ERR_PARSE, "t.in:10: neigh_modify keyword 'once'"},
    {"neigh_modify every 2 delay", HX_ERR_PARSE, "t.in:10: neigh_modify delay has no value"},
    {"neigh_modify check maybe", HX_ERR_PARSE, "t.in:10: neigh_modify: check must be yes or no"},
    {"timestep 0", HX_ERR_PARSE, "t.in:10: timestep 0 must be > 0"},
    {"timestep -1e-3", HX_ERR_PARSE, "t.in:10: timestep -1e-3 must be > 0"},
    {"timestep 1e999", HX_ERR_PARSE, "t.in:10: timestep: timestep '1e999' is not a finite"},
    {"timestep nan", HX_ERR_PARSE, "t.in:10: timestep: timestep 'nan' is not a number"},
    {"timestep 0.005 0.001", HX_ERR_PARSE, "t.in:10: timestep takes fewer arguments"},
    {"thermo -1", HX_ERR_PARSE, "t.in:10: thermo: the thermo interval must be between 0"},
    {"thermo 50.0", HX_ERR_PARSE, "t.in:10: thermo: the thermo interval '50.0' is not a whole"},
    {"thermo 99999999999999999999", HX_ERR_PARSE, "t.in:10: thermo: the thermo interval must"},
    {"run -5", HX_ERR_PARSE, "t.in:10: run: the number of steps must be between 0"},
    {"run 10 every 5 NULL", HX_ERR_PARSE, "t.in:10: run keyword 'every'"},
    {"mass 1 0", HX_ERR_PARSE, "t.in:10: mass 0 must be > 0"},
    {"mass 2 1.0", HX_ERR_PARSE, "t.in:10: mass: atom type '2'"},
    {"velocity all create 1.0 0", HX_ERR_PARSE, "t.in:10: velocity: seed must be between 1"},
    {"velocity all create -1 5", HX_ERR_PARSE, "t.in:10: velocity: temperature -1 must be"},
    {"velocity all create 1.0 5 mom maybe", HX_ERR_PARSE, "t.in:10: velocity: mom must be yes"},
    {"velocity all create 1.0 5 rot 1", HX_ERR_PARSE, "t.in:10: velocity: rot must be yes"},
    {"velocity all create 1.0 5 sum x", HX_ERR_PARSE, "t.in:10: velocity: sum must be yes"},
    {"velocity all create 1.0 5 units cm", HX_ERR_PARSE, "t.in:10: velocity: units must be"},
    {"velocity all create 1.0 5 dist normal", HX_ERR_PARSE, "t.in:10: velocity: dist must be"},
    {"velocity all create 1.0 5 loop geo", HX_ERR_PARSE, "t.in:10: velocity: loop must be"},
    {"velocity all create 1.0 5 temp foo", HX_ERR_PARSE, "t.in:10: velocity keyword 'temp'"},
    {"velocity all create 1.0 5 bias yes", HX_ERR_PARSE, "t.in:10: velocity keyword 'bias'"},
    {"velocity all create 1.0 5 rigid r", HX_ERR_PARSE, "t.in:10: velocity keyword 'rigid'"},
    {"velocity all create 1.0 5 spin yes", HX_ERR_PARSE, "t.in:10: velocity keyword 'spin'"},
    {"velocity all create 1.0 5\nvelocity all create 1.0 6", HX_ERR_PARSE,
     "t.in:11: a second velocity command"},
    {"velocity all create 1.0 2147483648", HX_ERR_PARSE, "t.in:10: velocity: seed must be"},
    {"velocity all create 1.0 5 loop", HX_ERR_PARSE, "t.in:10: velocity keyword 'loop' has no"},
    {"velocity all set 1 0 0", HX_ERR_PARSE, "t.in:10: velocity style 'set'"},
    {"velocity mobile create 1.0 5", HX_ERR_PARSE, "t.in:10: velocity group 'mobile'"},
    {"fix 1 all npt temp 1 1 0.1 iso 1 1 1", HX_ERR_PARSE, "t.in:10: fix style 'npt'"},
    {"fix 1 all nvt", HX_ERR_PARSE, "t.in:10: fix nvt needs its target first"},
    {"fix 1 all nvt tchain 3", HX_ERR_PARSE, "t.in:10: fix nvt needs its target first"},
    {"fix 1 all nvt temp 1 1", HX_ERR_PARSE, "t.in:10: fix nvt temp takes TSTART TSTOP TDAMP"},
    {"fix 1 all nvt temp 1 1 0", HX_ERR_PARSE, "t.in:10: fix nvt: the damping TDAMP 0 must be > 0"},
    {"fix 1 all nvt temp 1 1 -0.5", HX_ERR_PARSE, "the damping TDAMP -0.5 must be > 0"},
    {"fix 1 all nvt temp 0 1 0.5", HX_ERR_PARSE,
     "fix nvt: the target temperature TSTART 0 must be > 0"},
    {"fix 1 all nvt temp 1 1 0.5 iso 1 1 1", HX_ERR_PARSE, "fix nvt keyword 'iso'"},
    {"fix 1 all nvt temp 1 1 0.5 tchain 0", HX_ERR_PARSE, "tchain"},
    {"fix 1 all nvt temp 1 1 0.5 tchain 33", HX_ERR_PARSE,
     "t.in:10: fix: tchain must be between 1 and 32, not '33'"},
    {"fix 1 all nvt temp 1 1 0.5 drag", HX_ERR_PARSE, "fix nvt drag has no value"},
    {"fix 1 all nve\nfix 2 all nvt temp 1 1 0.5", HX_ERR_PARSE,
     "t.in:11: fix 2 nvt with fix 1 nve: both integrate"},
    {"fix 2 all nvt temp 1 1 0.5\nfix 1 all nve", HX_ERR_PARSE,
     "t.in:11: fix 1 nve with fix 2 nvt: both integrate"},
    {"fix 1 all nve\nfix 1 all langevin 1 1 1 5", HX_ERR_PARSE, "t.in:11: fix 1: it is fix nve"},
    {"fix 1 all langevin 1 1 1", HX_ERR_PARSE, "t.in:10: fix langevin takes TSTART TSTOP"},
    {"fix 1 all langevin 1 1 1 0", HX_ERR_PARSE,
     "t.in:10: fix: the langevin SEED must be between 1"},
    {"fix 1 all langevin 1 1 0 5", HX_ERR_PARSE, "fix langevin: the damping DAMP 0 must be > 0"},
    {"fix 1 all langevin -1 1 1 5", HX_ERR_PARSE, "temperatures must be >= 0"},
    {"fix 1 all langevin 1 1 1 5 zero yes", HX_ERR_PARSE, "fix langevin zero yes is not"},
    {"fix 1 all langevin 1 1 1 5 gjf vhalf", HX_ERR_PARSE, "fix langevin gjf vhalf is not"},
    {"fix 1 all nve\nfix 2 all langevin 1 1 1 5\nrun 5", HX_ERR_PARSE,
     "t.in:13: a second run with fix langevin"},
    {"thermo_style custom step temp foo", HX_ERR_PARSE,
     "t.in:10: thermo_style custom keyword 'foo' is not supported (step temp"},
    {"thermo_style custom", HX_ERR_PARSE, "t.in:10: thermo_style custom takes keywords"},
    {"thermo_style multi", HX_ERR_PARSE, "t.in:10: thermo_style multi is not supported"},
    {"thermo_modify norm maybe", HX_ERR_PARSE, "t.in:10: thermo_modify: norm must be yes"},
    {"thermo_modify lost warn", HX_ERR_PARSE, "t.in:10: thermo_modify keyword 'lost'"},
    {"thermo_modify norm", HX_ERR_PARSE, "t.in:10: thermo_modify takes keywords with values"},
    {"fix 1 mobile nve", HX_ERR_PARSE, "t.in:10: fix group 'mobile'"},
    {"dump d all custom 10 f id x", HX_ERR_PARSE, "t.in:10: dump style 'custom'"},
    {"dump_modify d sort id", HX_ERR_PARSE, "t.in:10: dump_modify: no dump 'd'"},
    {"read_restart a.rst", HX_ERR_PARSE, "t.in:10: read_restart after create_box"},
    {"restart 10 a.rst b.rst", HX_ERR_PARSE, "t.in:10: restart N FILE1 FILE2"},
    {"restart 10 a.*.rst", HX_ERR_PARSE, "t.in:10: restart: file names with '*'"},
    {"restart -5 a.rst", HX_ERR_PARSE, "t.in:10: restart: the restart interval"},
    {"write_restart a.rst\nwrite_restart b.rst", HX_ERR_PARSE, "t.in:11: a second write_restart"},
    {"dump d all atom 5 f\ndump_modify d sort 2", HX_ERR_PARSE,
     "t.in:11: dump_modify sort 2: halox-md writes atoms in id order only"},
    {"dump d all atom 5 f\ndump_modify d scale no", HX_ERR_PARSE,
     "t.in:11: dump_modify keyword 'scale'"},
    {"dump d all atom 5 f\ndump_modify d", HX_ERR_PARSE, "t.in:11: dump_modify takes a keyword"},
    {"dump d all atom 0 f.xyz", HX_ERR_PARSE, "t.in:10: dump: the dump interval must be"},
    {"dump d all atom 10 f.*.xyz", HX_ERR_PARSE, "t.in:10: dump file 'f.*.xyz'"},
    {"variable v string hello", HX_ERR_PARSE, "t.in:10: variable style 'string'"},
    {"variable 1-x index 1", HX_ERR_PARSE, "t.in:10: variable name '1-x'"},
    {"variable a equal 1 + 2", HX_ERR_PARSE, "t.in:10: variable a equal takes one formula"},
    {"variable a", HX_ERR_PARSE, "t.in:10: variable takes a name"},
    {"thermo ${nope}", HX_ERR_PARSE, "t.in:10: undefined variable 'nope'"},
    {"thermo $q", HX_ERR_PARSE, "t.in:10: undefined variable 'q'"},
    {"thermo $", HX_ERR_PARSE, "t.in:10: '$' ends the line"},
    {"thermo $%", HX_ERR_PARSE, "t.in:10: '$%' is not a variable reference"},
    {"thermo ${abc", HX_ERR_PARSE, "t.in:10: '${' without its '}'"},
    {"thermo ${a-b}", HX_ERR_PARSE, "t.in:10: '${...}' must hold a variable name"},
    {"thermo $(1+", HX_ERR_PARSE, "t.in:10: '$(' without its ')'"},
    {"thermo $((((1)))", HX_ERR_PARSE, "t.in:10: '$(' without its ')'"},
    {"thermo $(1/0)", HX_ERR_PARSE, "t.in:10: formula '1/0': division by zero"},
    {"thermo $(sqrt(4))", HX_ERR_PARSE, "t.in:10: formula 'sqrt(4)': 'sqrt(4)' is not understood"},
    {"thermo $(2^2000)", HX_ERR_PARSE, "t.in:10: formula '2^2000': the result is not a finite"},
    {"thermo $(1 2)", HX_ERR_PARSE, "t.in:10: formula '1 2': unexpected '2'"},
    {"thermo $(1+)", HX_ERR_PARSE, "t.in:10: formula '1+': a number, v_name or '(' is missing"},
    {"thermo $(v_)", HX_ERR_PARSE, "t.in:10: formula 'v_': v_ must be followed"},
    {"thermo $(v_zz)", HX_ERR_PARSE, "t.in:10: undefined variable 'zz'"},
    {"thermo $(1.2.3)", HX_ERR_PARSE, "t.in:10: formula '1.2.3': a number is malformed"},
    {"thermo \"50", HX_ERR_PARSE, "t.in:10: unterminated \" quote"},
    {"thermo '50", HX_ERR_PARSE, "t.in:10: unterminated ' quote"},
    {"lattice fcc 0.9", HX_ERR_PARSE, "t.in:10: lattice after region"},
    {"create_atoms 1 box", HX_ERR_PARSE, "t.in:10: atoms are already created"},
    {"create_atoms 1 region other", HX_ERR_PARSE, "t.in:10: create_atoms: no region 'other'"},
    {"create_atoms 1 random 10 5 NULL", HX_ERR_PARSE, "t.in:10: create_atoms takes fewer"},
    {"create_box 1 box", HX_ERR_PARSE, "t.in:10: the box is already created"},
    {"region r2 block 0 4 0 4 0 4 units cells", HX_ERR_PARSE, "t.in:10: region keyword 'units'"},
    {"region r2 block 0 4 0 4 5 4", HX_ERR_PARSE, "t.in:10: region: zlo 5 is above zhi 4"},
    {"region r2 prism 0 4 0 4 0 4 1 0", HX_ERR_PARSE, "t.in:10: region takes more arguments"},
    {"region r2 block 0 4 0 4 0 INFX", HX_ERR_PARSE, "t.in:10: region: zhi 'INFX' is not a number"},
    {"region r2 sphere 0 0 0 4 0 0 0", HX_ERR_PARSE, "t.in:10: region style 'sphere'"},
    {"region box block 0 4 0 4 0 4", HX_ERR_PARSE, "t.in:10: region ID 'box' is already"},
    {"atom_style full", HX_ERR_PARSE, "t.in:10: atom_style after create_box"},
    {"units lj", HX_ERR_PARSE, "t.in:10: units after create_box"},
};

static const bad_case bad_decks[] = {
    {"units metal\n", HX_ERR_PARSE, "t.in:1: units 'metal': halox-md runs reduced"},
    {"units lj\natom_style full\n", HX_ERR_PARSE, "t.in:2: atom_style 'full'"},
    {"units lj\nlattice bcc 0.8442\n", HX_ERR_PARSE, "t.in:2: lattice 'bcc'"},
    {"units lj\nlattice fcc 0\n", HX_ERR_PARSE, "t.in:2: lattice: density 0 must be > 0"},
    {"units lj\nlattice fcc -1\n", HX_ERR_PARSE, "t.in:2: lattice: density -1 must be > 0"},
    {"units lj\nlattice fcc 1e400\n", HX_ERR_PARSE,
     "t.in:2: lattice: density '1e400' is not a finite"},
    {"units lj\nlattice fcc\n", HX_ERR_PARSE, "t.in:2: lattice takes more arguments"},
    {"lattice fcc 0.8 orient x 1 0 0\n", HX_ERR_PARSE, "t.in:1: lattice keyword 'orient'"},
    {"units lj\nregion box block 0 4 0 4 0 4\n", HX_ERR_PARSE,
     "t.in:2: region comes before lattice"},
    {"lattice fcc 0.8\nregion box block 0 4 0 4 0 4\ncreate_box 9 box\n", HX_ERR_PARSE,
     "t.in:3: create_box 9: halox-md runs 1 to 8 atom types"},
    {"lattice fcc 0.8\ncreate_box 1 box\n", HX_ERR_PARSE, "t.in:2: create_box: no region 'box'"},
    {"mass 1 1.0\n", HX_ERR_PARSE, "t.in:1: mass comes before create_box"},
    {"read_restart a.rst\nlattice fcc 0.8\n", HX_ERR_PARSE,
     "t.in:2: lattice after read_restart: the restart file holds"},
    {"read_restart a.rst\nvelocity all create 1 5\n", HX_ERR_PARSE,
     "t.in:2: velocity after read_restart"},
    {"read_restart a.rst\nread_restart b.rst\n", HX_ERR_PARSE, "t.in:2: a second read_restart"},
    {"lattice fcc 0.8\nregion box block 0 4 0 4 0 4\ncreate_box 1 box\n"
     "velocity all create 1 1\n",
     HX_ERR_PARSE, "t.in:4: velocity comes before create_atoms"},
    {"lattice fcc 0.8\nregion box block 0 4 0 4 0 4\ncreate_box 1 box\ncreate_atoms 1 box\n"
     "velocity all create 1 1\n",
     HX_ERR_PARSE, "t.in:5: velocity comes before mass"},
    {HEAD "velocity all create 1 1\nmass 1 2.0\nrun 1\n", HX_ERR_PARSE,
     "t.in:11: mass after velocity"},
    /* The box region (before create_box): from 0, whole lattice cells. */
    {"lattice fcc 0.8\nregion box block 0 4 0 4 0 4 units box\n", HX_ERR_PARSE,
     "t.in:2: region: xhi 4 must be a whole number of lattice cells"},
    {"lattice fcc 0.8\nregion box block 1 4 0 4 0 4\n", HX_ERR_PARSE,
     "t.in:2: region: xlo is 1; the box must"},
    {"lattice fcc 0.8\nregion box block 0 4 0 4.5 0 4\n", HX_ERR_PARSE,
     "t.in:2: region: yhi 4.5 must be a whole number of lattice cells"},
    {"lattice fcc 0.8\nregion box block 0 4 0 4 0 INF\n", HX_ERR_PARSE,
     "t.in:2: region: zhi 'INF' is not a number"},
    /* create_atoms T region ID: a region defined, reaching into the box. */
    {"lattice fcc 0.8\nregion box block 0 4 0 4 0 4\ncreate_box 1 box\ncreate_atoms 1 region s\n",
     HX_ERR_PARSE, "t.in:4: create_atoms: no region 's'"},
    {"lattice fcc 0.8\nregion box block 0 4 0 4 0 4\ncreate_box 1 box\n"
     "region s block INF INF INF INF 5 8\ncreate_atoms 1 region s\n",
     HX_ERR_PARSE, "t.in:5: create_atoms 1 region s: the region (z from"},
    {"lattice fcc 0.8\nregion box block 0 4 0 4 0 4\ncreate_box 1 box\ncreate_atoms 1 sphere\n",
     HX_ERR_PARSE, "t.in:4: create_atoms style 'sphere'"},
    {"pair_modify shift yes\n", HX_ERR_PARSE, "t.in:1: pair_modify comes before pair_style"},
    {HEAD, HX_ERR_PARSE, "t.in:9: no run command"},
    {"", HX_ERR_PARSE, "t.in:1: no run command"},
    {"# nothing\n\n   \n", HX_ERR_PARSE, "t.in:3: no run command"},
    {"units lj\natom_style atomic\nlattice fcc 0.8442\nregion box block 0 4 0 4 0 4\n"
     "create_box 1 box\ncreate_atoms 1 box\nmass 1 1.0\npair_style lj/cut 2.5\nrun 1\n",
     HX_ERR_PARSE, "t.in:9: run comes before pair_coeff"},
    {"units lj\natom_style atomic\nlattice fcc 0.8442\nregion box block 0 4 0 4 0 4\n"
     "create_box 1 box\nmass 1 1.0\nrun 1\n",
     HX_ERR_PARSE, "t.in:7: run comes before create_atoms"},
    {HEAD "fix 1 all nve\nfix 2 all nve\nrun 1\n", HX_ERR_PARSE,
     "t.in:11: fix 2 nve: a second fix nve (besides 1)"},
    {HEAD "dump a all atom 1 a.xyz\ndump b all atom 1 b.xyz\nrun 1\n", HX_ERR_PARSE,
     "t.in:11: a second dump"},
    {HEAD "run 10\ntimestep 0.001\n", HX_ERR_PARSE, "t.in:11: timestep after the first run"},
    {HEAD "run 2147483647\nrun 1\n", HX_ERR_PARSE, "t.in:11: runs add up to more than"},
    /* A continued command is reported at its first line. */
    {HEAD "neigh_modify every 2 &\n  delay 3\nrun 1\n", HX_ERR_PARSE,
     "t.in:10: neigh_modify: delay 3 must be 0 or a multiple of every 2"},
    {"variable x index 1\nvariable x equal 2\n", HX_ERR_PARSE, "t.in:2: variable x is index-style"},
    {"variable x equal 1\nvariable x index 2\n", HX_ERR_PARSE, "t.in:2: variable x is equal-style"},
    /* Defined through itself: bounded, and said so. */
    {"variable a equal v_a+1\nthermo ${a}\n", HX_ERR_PARSE,
     "t.in:2: formula 'v_a+1': nested too deeply (is a variable defined through itself?)"},
    {"variable a equal v_b\nvariable b equal v_a\nrun $(v_a)\n", HX_ERR_PARSE,
     "t.in:3: formula 'v_a': nested too deeply"},
    {"variable a index $a\n", HX_ERR_PARSE, "t.in:1: undefined variable 'a'"},
    {"thermo 1\n\x01\x02\n", HX_ERR_PARSE, "t.in:2: unsupported command '?\?'"},
};

static void test_errors(void)
{
    char text[8192];
    hx_md_config c, before;
    for (size_t i = 0; i < sizeof bad_lines / sizeof bad_lines[0]; i++) {
        snprintf(text, sizeof text, HEAD "%s\nrun 10\n", bad_lines[i].text);
        hx_md_config_defaults(&c);
        memcpy(&before, &c, sizeof c);
        if (!HXT_FAILS(hx_md_deck_parse(text, strlen(text), "t.in", &c, NULL, 0), bad_lines[i].want,
                       bad_lines[i].needle))
            fprintf(stderr, "  (line 10: %s)\n", bad_lines[i].text);
        HXT_CHECK(memcmp(&c, &before, sizeof c) == 0, "config changed by a failed parse (%s)",
                  bad_lines[i].text);
    }
    for (size_t i = 0; i < sizeof bad_decks / sizeof bad_decks[0]; i++) {
        hx_md_config_defaults(&c);
        if (!HXT_FAILS(
                hx_md_deck_parse(bad_decks[i].text, strlen(bad_decks[i].text), "t.in", &c, NULL, 0),
                bad_decks[i].want, bad_decks[i].needle))
            fprintf(stderr, "  (deck %zu)\n", i);
    }

    /* A NUL byte, and a -var that an equal variable cannot replace. */
    {
        static const char nul[] = "thermo 1\nthermo 2\0\nrun 1\n";
        static const char *const x2[] = {"x=2"};
        static const char *const bad1[] = {"=3"};
        static const char *const bad2[] = {"noequals"};
        static const char *const twice[] = {"x=1", "x=2"};
        HXT_FAILS(hx_md_deck_parse(nul, sizeof nul - 1, "t.in", &c, NULL, 0), HX_ERR_PARSE,
                  "t.in:2: a NUL byte");
        HXT_FAILS(parse("variable x equal 3\nrun 1\n", &c, x2, 1), HX_ERR_PARSE,
                  "t.in:1: variable x is index-style (perhaps from -var)");
        HXT_FAILS(parse(HEAD "run 1", &c, bad1, 1), HX_ERR_INVALID, "-var '=3'");
        HXT_FAILS(parse(HEAD "run 1", &c, bad2, 1), HX_ERR_INVALID, "-var 'noequals'");
        HXT_FAILS(parse(HEAD "run 1", &c, twice, 2), HX_ERR_INVALID, "-var x is given twice");
    }

    /* Count bounds: variables and regions. */
    {
        size_t n = 0;
        for (int i = 0; i < 257; i++)
            n += (size_t) snprintf(text + n, sizeof text - n, "variable v%d index %d\n", i, i);
        HXT_FAILS(parse(text, &c, NULL, 0), HX_ERR_PARSE, "t.in:257: more than 256 variables");
        n = (size_t) snprintf(text, sizeof text, "lattice fcc 1\n");
        for (int i = 0; i < 17; i++)
            n += (size_t) snprintf(text + n, sizeof text - n, "region r%d block 0 1 0 1 0 1\n", i);
        HXT_FAILS(parse(text, &c, NULL, 0), HX_ERR_PARSE, "t.in:18: more than 16 regions");
    }
    /* A folder is no deck. */
    HXT_FAILS(hx_md_deck_read(deck_dir, &c, NULL, 0), HX_ERR_IO, deck_dir);

    /* Work bounds: a doubling chain of 40 variables would take 2^40 terms;
     * a line that substitutes past 64 KiB is refused. */
    {
        size_t n = 0;
        n += (size_t) snprintf(text + n, sizeof text - n, "variable a0 equal 1\n");
        for (int i = 1; i <= 40; i++)
            n += (size_t) snprintf(text + n, sizeof text - n, "variable a%d equal v_a%d+v_a%d\n", i,
                                   i - 1, i - 1);
        snprintf(text + n, sizeof text - n, "run ${a40}\n");
        HXT_FAILS(parse(text, &c, NULL, 0), HX_ERR_PARSE, "too much work");
        HXT_CHECK(strstr(hx_last_error(), "t.in:42: formula '"), "message: %s", hx_last_error());
    }
    {
        size_t n = 0;
        n += (size_t) snprintf(text + n, sizeof text - n, "variable a index \"");
        for (int i = 0; i < 1000; i++)
            text[n++] = 'a';
        n += (size_t) snprintf(text + n, sizeof text - n, "\"\nthermo ");
        for (int i = 0; i < 70; i++)
            n += (size_t) snprintf(text + n, sizeof text - n, "${a}");
        snprintf(text + n, sizeof text - n, "\n");
        HXT_FAILS(parse(text, &c, NULL, 0), HX_ERR_PARSE,
                  "t.in:2: the command grows past 65536 bytes");
    }
}

static void test_args(void)
{
    hx_md_config c, before;
    hx_md_cli cli;
    char lj[1024], vars[1024], all[1024];
    snprintf(lj, sizeof lj, "%s", deck_path("in.lj"));
    snprintf(vars, sizeof vars, "%s", deck_path("vars.in"));
    snprintf(all, sizeof all, "%s", deck_path("all.in"));
    {
        /* Options before and after the deck, -var and -v mixed. */
        char *argv[] = {"halox-md", "--steps",  "7", "-in", lj,  "-var", "x",
                        "2",        "--thermo", "5", "-v",  "z", "3"};
        hx_md_config_defaults(&c);
        if (HXT_OK(hx_md_config_apply_args(&c, 13, argv, &cli))) {
            HXT_CHECK(c.cells[0] == 40 && c.cells[1] == 20 && c.cells[2] == 60, "cells %d %d %d",
                      c.cells[0], c.cells[1], c.cells[2]);
            HXT_CHECK(c.steps == 7 && c.thermo_every == 5, "steps %d thermo %d", c.steps,
                      c.thermo_every);
            HXT_CHECK(c.neigh_every == 20 && c.dt == 0.005, "deck values kept");
            HXT_CHECK(cli.help == 0 && cli.deck == lj, "cli");
        }
    }
    {
        char *argv[] = {"halox-md", "--size", "8", "--every", "5", "-in", lj};
        hx_md_config_defaults(&c);
        if (HXT_OK(hx_md_config_apply_args(&c, 7, argv, &cli)))
            HXT_CHECK(c.cells[0] == 8 && c.cells[1] == 8 && c.cells[2] == 8 && c.neigh_every == 5 &&
                          c.steps == 100,
                      "option before -in still wins: cells %d every %d", c.cells[0], c.neigh_every);
    }
    {
        char *argv[] = {"halox-md",
                        "--cells",
                        "1",
                        "2",
                        "3",
                        "--grid",
                        "2x2x1",
                        "--transport",
                        "nvshmem-fused",
                        "--dump",
                        "t.xyz",
                        "--velocity",
                        "minimd",
                        "--density=0.9",
                        "--temp",
                        "2",
                        "--rc",
                        "2.0",
                        "--skin",
                        "0.2",
                        "--dt",
                        "0.001",
                        "--every",
                        "10",
                        "--check",
                        "yes",
                        "--shift",
                        "yes",
                        "--seed",
                        "42",
                        "--no-progress",
                        "--cpu"};
        int argc = (int) (sizeof argv / sizeof argv[0]);
        hx_md_config_defaults(&c);
        if (HXT_OK(hx_md_config_apply_args(&c, argc, argv, &cli))) {
            HXT_CHECK(c.cells[0] == 1 && c.cells[1] == 2 && c.cells[2] == 3, "cells");
            HXT_CHECK(c.grid[0] == 2 && c.grid[1] == 2 && c.grid[2] == 1, "grid");
            HXT_CHECK(c.use_gpu == 0, "--cpu");
            HXT_CHECK(strcmp(c.transport, "nvshmem-fused") == 0, "transport %s", c.transport);
            HXT_CHECK(strcmp(c.dump_file, "t.xyz") == 0 && c.dump_every == 100, "dump %d",
                      c.dump_every);
            HXT_CHECK(c.velocity_mode == HX_MD_VEL_MINIMD && c.density == 0.9 &&
                          c.temperature == 2.0 && c.rc == 2.0 && c.skin == 0.2 && c.dt == 0.001,
                      "values");
            HXT_CHECK(c.neigh_every == 10 && c.neigh_check == 1 && c.shift_energy == 1 &&
                          c.seed == 42 && c.progress == 0 && c.steps == 100,
                      "more values");
            HXT_CHECK(cli.deck == NULL, "no deck");
        }
    }
    {
        char *argv[] = {"halox-md", "--dump", "a.xyz", "--dump-every", "0"};
        /* A dump file that would get no frame is refused, not ignored. */
        hx_md_config_defaults(&c);
        HXT_CHECK(hx_md_config_apply_args(&c, 5, argv, NULL) == HX_ERR_INVALID &&
                      strstr(hx_last_error(), "--dump-every 0"),
                  "--dump a.xyz --dump-every 0 is refused: %s", hx_last_error());
    }
    {
        /* Help wins over everything, reads nothing, changes nothing. */
        char *argv[] = {"halox-md", "--bogus", "-in", "/no/such/deck", "-h"};
        hx_md_config_defaults(&c);
        memcpy(&before, &c, sizeof c);
        if (HXT_OK(hx_md_config_apply_args(&c, 5, argv, &cli)))
            HXT_CHECK(cli.help == 1 && memcmp(&c, &before, sizeof c) == 0, "help");
    }

    /* Errors: each names the option; the config stays as it was. */
    {
        struct {
            char *argv[6];
            hx_status want;
            const char *needle;
        } bad[] = {
            {{"--bogus"}, HX_ERR_INVALID, "unknown option '--bogus'"},
            {{"stray"}, HX_ERR_INVALID, "unexpected argument 'stray'"},
            {{"--steps"}, HX_ERR_INVALID, "option --steps needs 1 value"},
            {{"--cells", "1", "2"}, HX_ERR_INVALID, "option --cells needs 3 values"},
            {{"-var", "x"}, HX_ERR_INVALID, "option -var needs 2 values"},
            {{"--steps", "x"}, HX_ERR_INVALID, "--steps: 'x' is not a whole number"},
            {{"--steps", "-1"}, HX_ERR_INVALID, "--steps: -1 must be between 0"},
            {{"--size", "0"}, HX_ERR_INVALID, "--size: 0 must be between 1"},
            {{"--density", "0"}, HX_ERR_INVALID, "--density: 0 must be > 0"},
            {{"--density", "inf"}, HX_ERR_INVALID, "--density: 'inf' is not a finite"},
            {{"--temp", "-1"}, HX_ERR_INVALID, "--temp: -1 must be >= 0"},
            {{"--dt", "0"}, HX_ERR_INVALID, "--dt: 0 must be > 0"},
            {{"--every", "0"}, HX_ERR_INVALID, "--every: 0 must be between 1"},
            {{"--grid", "2x2"}, HX_ERR_PARSE, "cannot read grid \"2x2\""},
            {{"--velocity", "lamps"},
             HX_ERR_INVALID,
             "--velocity 'lamps': lammps, halox or minimd"},
            {{"--check", "maybe"}, HX_ERR_INVALID, "--check: 'maybe' must be yes or no"},
            {{"--transport", "NCCL!"}, HX_ERR_INVALID, "--transport 'NCCL!'"},
            {{"--seed", "0"}, HX_ERR_INVALID, "--seed: '0' must be a whole number > 0"},
            {{"--seed", "-5"}, HX_ERR_INVALID, "--seed: '-5'"},
            {{"--gpu=1"}, HX_ERR_INVALID, "option --gpu takes 0 values"},
            {{"-var", "x", "2"}, HX_ERR_INVALID, "-var x=2 is given but there is no deck"},
            {{"--dump-every", "5"}, HX_ERR_INVALID, "a dump every 5 steps needs a file"},
            {{"-in", "/no/such/deck"}, HX_ERR_IO, "cannot open deck /no/such/deck"},
            {{"-in", "a", "-in", "b"}, HX_ERR_INVALID, "-in is given twice"},
            {{"--cpu", "--gpu"}, HX_ERR_INVALID, "--gpu and --cpu ask for two engines"},
            {{"--size", "4", "--cells", "4", "4", "4"},
             HX_ERR_INVALID,
             "--cells and --size both set the number of cells"},
            {{"--seed", "3", "--restart", "r.bin"},
             HX_ERR_INVALID,
             "--seed with --restart FILE: the restart file holds the velocities"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            char *argv[8] = {"halox-md"};
            int argc = 1;
            for (int k = 0; k < 6 && bad[i].argv[k]; k++)
                argv[argc++] = bad[i].argv[k];
            hx_md_config_defaults(&c);
            memcpy(&before, &c, sizeof c);
            HXT_FAILS(hx_md_config_apply_args(&c, argc, argv, &cli), bad[i].want, bad[i].needle);
            HXT_CHECK(memcmp(&c, &before, sizeof c) == 0, "config changed by failed %s",
                      bad[i].argv[0]);
        }
    }
    {
        /* A deck error passes through with its file and line; a -var that
         * breaks the deck, too. */
        char *argv[] = {"halox-md", "-in", vars, "-var", "s", "0"};
        hx_md_config_defaults(&c);
        HXT_FAILS(hx_md_config_apply_args(&c, 6, argv, &cli), HX_ERR_PARSE,
                  "vars.in:10: region: xhi 0");
    }
    {
        /* An option may make the deck's values inconsistent: the final
         * check names it. */
        char *argv[] = {"halox-md", "-in", all, "--every", "3"};
        hx_md_config_defaults(&c);
        HXT_FAILS(hx_md_config_apply_args(&c, 5, argv, &cli), HX_ERR_INVALID,
                  "neighbour delay 4 must be 0 or a multiple of the rebuild interval 3");
    }
}

/* fix nvt and langevin, thermo_style and thermo_modify: read as LAMMPS
 * does; what no engine runs is refused by the config check. */
static void test_fixes(void)
{
    hx_md_config c;
    if (HXT_OK(parse(HEAD "fix n all nvt temp 1.5 1.0 0.5 tchain 4 tloop 2 drag 0.1\n"
                          "thermo_style custom step temp pe ke etotal press vol density atoms\n"
                          "thermo_modify norm no\nrun 10\n",
                     &c, NULL, 0))) {
        HXT_CHECK(c.nvt.on && c.nve == 1 && c.nvt.t_start == 1.5 && c.nvt.t_stop == 1.0 &&
                      c.nvt.t_damp == 0.5 && c.nvt.tchain == 4 && c.nvt.tloop == 2 &&
                      c.nvt.drag == 0.1 && !c.langevin.on,
                  "nvt %d %g %g %g %d %d %g", c.nvt.on, c.nvt.t_start, c.nvt.t_stop, c.nvt.t_damp,
                  c.nvt.tchain, c.nvt.tloop, c.nvt.drag);
        HXT_CHECK(c.thermo_ncols == 9 && c.thermo_cols[0] == HX_MD_TH_STEP &&
                      c.thermo_cols[2] == HX_MD_TH_PE && c.thermo_cols[8] == HX_MD_TH_ATOMS &&
                      c.thermo_norm == 0,
                  "thermo_style custom: %d columns, norm %d", c.thermo_ncols, c.thermo_norm);
        HXT_OK(hx_md_config_check(&c));
        c.use_gpu = 1; /* both engines run the thermostats */
        HXT_OK(hx_md_config_check(&c));
        c.use_gpu = -1;
        /* Restart files hold fix nvt's chain. */
        snprintf(c.checkpoint_file, sizeof c.checkpoint_file, "c.rst");
        HXT_OK(hx_md_config_check(&c));
    }
    /* nvt's defaults (tchain 3, tloop 1, drag 0); thermo_style resets norm. */
    if (HXT_OK(parse(HEAD "thermo_modify norm no\nthermo_style one\nfix 1 all nvt temp 1 1 0.5\n"
                          "fix 1 all nvt temp 2 2 0.5\nrun 10\n",
                     &c, NULL, 0)))
        HXT_CHECK(c.nvt.tchain == 3 && c.nvt.tloop == 1 && c.nvt.drag == 0.0 &&
                      c.nvt.t_start == 2.0 && c.thermo_norm == 1 && c.thermo_ncols == 6 &&
                      c.thermo_cols[2] == HX_MD_TH_EPAIR,
                  "nvt defaults: tchain %d tloop %d drag %g; norm %d", c.nvt.tchain, c.nvt.tloop,
                  c.nvt.drag, c.thermo_norm);
    if (HXT_OK(parse(HEAD "fix 1 all nve\nfix t all langevin 1.0 2.0 0.1 48279 zero no\nrun 10\n",
                     &c, NULL, 0))) {
        HXT_CHECK(c.nve == 1 && c.langevin.on && c.langevin.t_start == 1.0 &&
                      c.langevin.t_stop == 2.0 && c.langevin.damp == 0.1 &&
                      c.langevin.seed == 48279 && !c.nvt.on,
                  "langevin %d %g %g %g %d", c.langevin.on, c.langevin.t_start, c.langevin.t_stop,
                  c.langevin.damp, c.langevin.seed);
        c.use_gpu = 1;
        HXT_OK(hx_md_config_check(&c));
    }
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_deck");
    if (argc > 1)
        deck_dir = argv[1];
    test_defaults();
    test_in_lj();
    test_in_melt();
    test_all_and_vars();
    test_lexical();
    test_errors();
    test_fixes();
    test_args();
    return hxt_finish(comm);
}
