/*
 * test_deck.c - the LAMMPS deck reader and the halox-md command line:
 * LAMMPS's in.lj and in.melt give the values LAMMPS runs, -var overrides
 * index variables, every rejected deck says file and line, and options
 * override the deck wherever they stand.
 *
 * Usage: test_deck DECKDIR (the folder of tests/decks).
 */
#include "test_deck.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *deck_dir = ".";

static const char *deck_path(const char *name)
{
    static char buf[4][1024];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", deck_dir, name);
    return p;
}

hx_status deck_parse_text(const char *text, hx_md_config *c, const char *const *vars, int nvars)
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

/* A deck of 3 x 4 x 5 cells and 3 steps, however its lines are written. */
static void parses_345(const char *text, const char *what)
{
    hx_md_config c;
    if (HXT_OK(deck_parse_text(text, &c, NULL, 0)))
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
    HXT_FAILS(deck_parse_text("\xEF\xBB\xBFunits lj\r\ratom_style atomik\rrun 1", &c, NULL, 0),
              HX_ERR_PARSE, "t.in:3: atom_style");

    /* '#' inside quotes is no comment; $ inside quotes is not substituted. */
    if (HXT_OK(
            deck_parse_text(HEAD "dump d all atom 7 \"a#b$x.xyz\" # comment\nrun 1", &c, NULL, 0)))
        HXT_CHECK(strcmp(c.dump_file, "a#b$x.xyz") == 0 && c.dump_every == 7, "file %s",
                  c.dump_file);
    if (HXT_OK(deck_parse_text(HEAD "dump t all xyz 3 t.xyz\ndump_modify t sort id\nrun 1", &c,
                               NULL, 0)))
        HXT_CHECK(c.dump_style == HX_MD_DUMP_XYZ && c.dump_every == 3, "xyz style %d",
                  (int) c.dump_style);
    /* read_restart: the file's system; what comes after it is the deck's. */
    if (HXT_OK(
            deck_parse_text("read_restart a.rst\ntimestep 0.002\nfix 1 all nve\nrestart 25 c.rst\n"
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
    if (HXT_OK(deck_parse_text(HEAD "variable a index 4\nvariable b equal v_a*2+1\n"
                                    "thermo $(v_b - 4*(1+1) / 2 ^ 2)\nrun ${b}",
                               &c, NULL, 0)))
        HXT_CHECK(c.thermo_every == 7 && c.steps == 9, "thermo %d steps %d", c.thermo_every,
                  c.steps);
    if (HXT_OK(deck_parse_text(HEAD "thermo $(-2^2)\nrun $(2*-+-3)", &c, NULL, 0)))
        HXT_CHECK(c.thermo_every == 4 && c.steps == 6, "signs: thermo %d steps %d", c.thermo_every,
                  c.steps);
    /* A value with spaces splits into words, as in LAMMPS. */
    if (HXT_OK(deck_parse_text(
            "variable b index \"0 2 0 3 0 4\"\n" HEAD "region r2 block ${b}\nrun 0", &c, NULL, 0)))
        HXT_CHECK(c.steps == 0 && c.cells[0] == 4, "run 0 accepted");
    /* An equal variable redefined is looked up anew. */
    if (HXT_OK(deck_parse_text(HEAD
                               "variable a equal 2\nvariable b equal v_a*3\nvariable a equal 5\n"
                               "run ${b}",
                               &c, NULL, 0)))
        HXT_CHECK(c.steps == 15, "steps %d", c.steps);

    /* As in LAMMPS, a trailing & continues a comment too (in.melt's
     * commented dump lines rely on it): "thermo x" is part of the comment. */
    if (HXT_OK(deck_parse_text(HEAD "processors * 2 *\nrun 1", &c, NULL, 0)))
        HXT_CHECK(c.grid[0] == 0 && c.grid[1] == 2 && c.grid[2] == 0, "processors * 2 *: %d %d %d",
                  c.grid[0], c.grid[1], c.grid[2]);
    if (HXT_OK(deck_parse_text(HEAD "# a comment &\nthermo x\nrun 1\n", &c, NULL, 0)))
        HXT_CHECK(c.thermo_every == 0 && c.steps == 1, "continued comment");

    /* pair_coeff's own cutoff wins over pair_style's before it; a later
     * pair_style's cutoff replaces it, as in LAMMPS (the same style keeps
     * its coefficients). */
    if (HXT_OK(deck_parse_text(HEAD "pair_coeff 1 1 1 1 3.5\nrun 1", &c, NULL, 0)))
        HXT_CHECK(c.rc == 3.5, "rc %g", c.rc);
    if (HXT_OK(deck_parse_text(HEAD "pair_coeff 1 1 1 1 3.5\npair_style lj/cut 2.0\nrun 1", &c,
                               NULL, 0)))
        HXT_CHECK(c.rc == 2.0, "rc %g", c.rc);
    if (HXT_OK(deck_parse_text(HEAD "pair_style lj/cut 2.0\nrun 1", &c, NULL, 0)))
        HXT_CHECK(c.rc == 2.0, "rc %g", c.rc);

    /* Several runs add up; variables may still change between them. */
    if (HXT_OK(deck_parse_text(HEAD "run 10\nrun 5\nvariable a equal 2\nrun ${a} pre no post yes",
                               &c, NULL, 0)))
        HXT_CHECK(c.steps == 17, "steps %d", c.steps);

    /* The same fix ID again replaces; neigh_modify keywords in any order. */
    if (HXT_OK(deck_parse_text(HEAD "fix 1 all nve\nfix 1 all nve\nneigh_modify check no delay 6 "
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
    if (HXT_OK(deck_parse_text(
            HEAD "fix n all nvt temp 1.5 1.0 0.5 tchain 4 tloop 2 drag 0.1\n"
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
    if (HXT_OK(deck_parse_text(
            HEAD "thermo_modify norm no\nthermo_style one\nfix 1 all nvt temp 1 1 0.5\n"
                 "fix 1 all nvt temp 2 2 0.5\nrun 10\n",
            &c, NULL, 0)))
        HXT_CHECK(c.nvt.tchain == 3 && c.nvt.tloop == 1 && c.nvt.drag == 0.0 &&
                      c.nvt.t_start == 2.0 && c.thermo_norm == 1 && c.thermo_ncols == 6 &&
                      c.thermo_cols[2] == HX_MD_TH_EPAIR,
                  "nvt defaults: tchain %d tloop %d drag %g; norm %d", c.nvt.tchain, c.nvt.tloop,
                  c.nvt.drag, c.thermo_norm);
    if (HXT_OK(deck_parse_text(
            HEAD "fix 1 all nve\nfix t all langevin 1.0 2.0 0.1 48279 zero no\nrun 10\n", &c, NULL,
            0))) {
        HXT_CHECK(c.nve == 1 && c.langevin.on && c.langevin.t_start == 1.0 &&
                      c.langevin.t_stop == 2.0 && c.langevin.damp == 0.1 &&
                      c.langevin.seed == 48279 && !c.nvt.on,
                  "langevin %d %g %g %g %d", c.langevin.on, c.langevin.t_start, c.langevin.t_stop,
                  c.langevin.damp, c.langevin.seed);
        c.use_gpu = 1;
        HXT_OK(hx_md_config_check(&c));
    }
}

/* velocity all set after the create, in order; lattice units (the
 * default) scale by the fcc spacing, box units do not. */
static void test_velocity_set(void)
{
    hx_md_config c;
    const double a = pow(4.0 / 0.8442, 1.0 / 3.0);
    if (HXT_OK(deck_parse_text(HEAD "velocity all set NULL NULL 0.5 sum yes\n"
                                    "velocity all set 1.5 NULL NULL units box\nrun 10\n",
                               &c, NULL, 0))) {
        HXT_CHECK(c.nvsets == 2, "%d velocity sets", c.nvsets);
        HXT_CHECK(c.vsets[0].sum == 1 && !c.vsets[0].has[0] && !c.vsets[0].has[1] &&
                      c.vsets[0].has[2] && fabs(c.vsets[0].v[2] - 0.5 * a) < 1e-15,
                  "first set: sum %d, vz %.17g (want %.17g)", c.vsets[0].sum, c.vsets[0].v[2],
                  0.5 * a);
        HXT_CHECK(c.vsets[1].sum == 0 && c.vsets[1].has[0] && c.vsets[1].v[0] == 1.5 &&
                      !c.vsets[1].has[2],
                  "second set: sum %d, vx %g", c.vsets[1].sum, c.vsets[1].v[0]);
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
    test_velocity_set();
    test_args();
    return hxt_finish(comm);
}
