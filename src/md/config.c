/*
 * config.c - the halox-md configuration: the benchmark defaults, the
 * command line on top of a deck, and the final check of every field.
 *
 * The command line is read in two passes so that the deck (-in, with its
 * -var values) always comes first and every other option overrides it,
 * wherever either stands on the line.
 */
#include "md/deck.h"
#include "md/md_driver.h"
#include "md/pair/pair_styles.h"

#include "core/hxi.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hx_md_config_defaults(hx_md_config *c)
{
    memset(c, 0, sizeof *c);
    c->density = 0.8442;
    c->cells[0] = c->cells[1] = c->cells[2] = 20;
    c->mass = 1.0;
    c->temperature = 1.44;
    c->seed = 87287;
    c->velocity_mode = HX_MD_VEL_LAMMPS;
    c->velocity_loop = HX_MD_LOOP_GEOM; /* as LAMMPS's bench/in.lj */
    c->velocity_gaussian = 0;
    c->velocity_mom = 1;
    c->velocity_rot = 0;
    c->rc = 2.5;
    c->pair_style = HX_PAIR_LJ_CUT;
    memset(c->pair, 0, sizeof c->pair);
    c->pair[0] = 1.0; /* epsilon */
    c->pair[1] = 1.0; /* sigma */
    c->shift_energy = 0;
    c->types.ntypes = 1;
    c->types.create_type = 1;
    c->types.masses[0] = 1.0;
    c->skin = 0.3;
    c->neigh_every = 20;
    c->neigh_delay = 0;
    c->neigh_check = 0;
    c->dt = 0.005;
    c->steps = 100;
    c->thermo_every = 50;
    c->nve = 1;
    memset(&c->nvt, 0, sizeof c->nvt);
    memset(&c->langevin, 0, sizeof c->langevin);
    hx_md_config_thermo_one(c);
    c->transport[0] = '\0'; /* the engine's own choice */
    c->use_gpu = -1;
    c->dump_every = 0;
    c->dump_file[0] = '\0';
    c->dump_style = HX_MD_DUMP_EXTXYZ;
    c->progress = 1;
    c->stats_csv[0] = '\0';
    c->restart_file[0] = '\0';
    c->checkpoint_file[0] = '\0';
    c->checkpoint_every = 0;
    c->write_restart_file[0] = '\0';
    c->write_restart_after = 0;
    c->max_hours = 0.0;
    c->given = 0;
}

/* ------------------------------------------------- neighbour-list rules */

double hxi_md_list_cutoff(const hx_md_config *c)
{
    if (c->types.ntypes > 1)
        return hxi_pair_max_cutoff(c) + c->skin;
    return c->rc + c->skin;
}

int hxi_md_rebuild_candidate(const hx_md_config *c, int64_t ago)
{
    const int every = c->neigh_every > 0 ? c->neigh_every : 1;
    return ago >= c->neigh_delay && ago % every == 0;
}

/* ------------------------------------------------------------- checks */

static int has_nul(const char *s, size_t size)
{
    return memchr(s, '\0', size) != NULL;
}

hx_status hx_md_config_check(const hx_md_config *c)
{
    if (!c)
        return hxi_error(HX_ERR_INVALID, "hx_md_config_check: the config is NULL");
    if (!isfinite(c->density) || c->density <= 0.0)
        return hxi_error(HX_ERR_INVALID, "density %g must be > 0 (lattice fcc RHO, --density)",
                         c->density);
    for (int d = 0; d < 3; d++)
        if (c->cells[d] < 1 || c->cells[d] > 1000000)
            return hxi_error(HX_ERR_INVALID,
                             "cells along %c: %d must be 1 to 1000000 (region block, --cells, "
                             "--size)",
                             "xyz"[d], c -> cells[d]);
    if (!isfinite(c->mass) || c->mass <= 0.0)
        return hxi_error(HX_ERR_INVALID, "mass %g must be > 0 (mass 1 M)", c->mass);
    if (!isfinite(c->temperature) || c->temperature < 0.0)
        return hxi_error(HX_ERR_INVALID,
                         "temperature %g must be >= 0 (velocity all create T, --temp)",
                         c->temperature);
    if (c->seed == 0)
        return hxi_error(HX_ERR_INVALID, "seed must be > 0 (velocity ... SEED, --seed)");
    if (c->velocity_mode != HX_MD_VEL_LAMMPS && c->velocity_mode != HX_MD_VEL_HALOX &&
        c->velocity_mode != HX_MD_VEL_MINIMD)
        return hxi_error(HX_ERR_INVALID,
                         "velocity mode %d is unknown (--velocity lammps|halox|minimd)",
                         (int) c->velocity_mode);
    if (c->velocity_mode == HX_MD_VEL_MINIMD && c->triclinic)
        return hxi_error(HX_ERR_INVALID,
                         "--velocity minimd draws by miniMD's orthorhombic lattice sites; a "
                         "triclinic box (region prism) takes --velocity lammps or halox");
    if (c->velocity_loop != HX_MD_LOOP_ALL && c->velocity_loop != HX_MD_LOOP_LOCAL &&
        c->velocity_loop != HX_MD_LOOP_GEOM)
        return hxi_error(HX_ERR_INVALID, "velocity loop %d is unknown", (int) c->velocity_loop);
    if (c->velocity_mode == HX_MD_VEL_LAMMPS && c->seed > INT32_MAX)
        return hxi_error(HX_ERR_INVALID,
                         "seed %llu: LAMMPS's velocity seeds are ints, 1 to 2147483647 (velocity "
                         "... SEED, --seed)",
                         (unsigned long long) c->seed);
    HXI_CHECK(hxi_pair_valid(c->pair_style, c->pair, c->rc, HX_ERR_INVALID, ""));
    HXI_CHECK(hxi_md_types_check(c));
    if (c->shift_energy != 0 && c->shift_energy != 1)
        return hxi_error(HX_ERR_INVALID, "shift_energy must be 0 or 1 (--shift yes|no)");
    if (!isfinite(c->skin) || c->skin < 0.0)
        return hxi_error(HX_ERR_INVALID, "skin %g must be >= 0 (neighbor SKIN bin, --skin)",
                         c->skin);
    if (c->neigh_every < 1)
        return hxi_error(HX_ERR_INVALID,
                         "rebuild interval %d must be >= 1 (neigh_modify every N, --every)",
                         c->neigh_every);
    if (c->neigh_delay < 0 || c->neigh_delay % c->neigh_every != 0)
        return hxi_error(HX_ERR_INVALID,
                         "neighbour delay %d must be 0 or a multiple of the rebuild interval "
                         "%d (neigh_modify delay N every N, --every)",
                         c->neigh_delay, c->neigh_every);
    if (c->neigh_check != 0 && c->neigh_check != 1)
        return hxi_error(HX_ERR_INVALID, "neigh_check must be 0 or 1 (--check yes|no)");
    if (!isfinite(c->dt) || c->dt <= 0.0)
        return hxi_error(HX_ERR_INVALID, "timestep %g must be > 0 (timestep DT, --dt)", c->dt);
    if (c->steps < 0)
        return hxi_error(HX_ERR_INVALID, "steps %d must be >= 0 (run N, --steps)", c->steps);
    if (c->thermo_every < 0)
        return hxi_error(HX_ERR_INVALID, "thermo interval %d must be >= 0 (thermo N, --thermo)",
                         c->thermo_every);
    if (c->nve != 0 && c->nve != 1)
        return hxi_error(HX_ERR_INVALID, "nve must be 0 or 1 (fix ID all nve, fix ID all nvt)");
    HXI_CHECK(hxi_md_thermo_config_check(c));
    if (!has_nul(c->transport, sizeof c->transport))
        return hxi_error(HX_ERR_INVALID, "transport name is not terminated (--transport)");
    if (c->grid[0] < 0 || c->grid[1] < 0 || c->grid[2] < 0)
        return hxi_error(HX_ERR_INVALID,
                         "grid %dx%dx%d: give each count > 0, or 0 to let halox-md choose it "
                         "(--grid, processors)",
                         c->grid[0], c->grid[1], c->grid[2]);
    if (c->use_gpu < -1 || c->use_gpu > 1)
        return hxi_error(HX_ERR_INVALID, "use_gpu %d must be -1, 0 or 1 (--gpu, --cpu)",
                         c->use_gpu);
    if (!has_nul(c->dump_file, sizeof c->dump_file))
        return hxi_error(HX_ERR_INVALID, "dump file name is not terminated (--dump)");
    if (c->dump_style != HX_MD_DUMP_EXTXYZ && c->dump_style != HX_MD_DUMP_ATOM &&
        c->dump_style != HX_MD_DUMP_XYZ)
        return hxi_error(HX_ERR_INVALID, "dump style %d is unknown", (int) c->dump_style);
    if (c->dump_every < 0)
        return hxi_error(HX_ERR_INVALID, "dump interval %d must be >= 0 (--dump-every)",
                         c->dump_every);
    if (c->dump_every == 0 && c->dump_file[0] != '\0')
        return hxi_error(HX_ERR_INVALID,
                         "the dump file %s with --dump-every 0 would get no frame: give an "
                         "interval of 1 or more, or leave out --dump",
                         c->dump_file);
    if (c->dump_every > 0 && c->dump_file[0] == '\0')
        return hxi_error(HX_ERR_INVALID, "a dump every %d steps needs a file: add --dump FILE",
                         c->dump_every);
    if (c->progress != 0 && c->progress != 1)
        return hxi_error(HX_ERR_INVALID, "progress must be 0 or 1 (--no-progress)");
    if (!has_nul(c->restart_file, sizeof c->restart_file) ||
        !has_nul(c->checkpoint_file, sizeof c->checkpoint_file) ||
        !has_nul(c->write_restart_file, sizeof c->write_restart_file))
        return hxi_error(HX_ERR_INVALID, "a restart file name is not terminated");
    if (c->checkpoint_every < 0)
        return hxi_error(HX_ERR_INVALID,
                         "checkpoint interval %d must be >= 0 (restart N FILE, "
                         "--checkpoint-every)",
                         c->checkpoint_every);
    if (c->checkpoint_every > 0 && c->checkpoint_file[0] == '\0')
        return hxi_error(HX_ERR_INVALID,
                         "a checkpoint every %d steps needs a file: add --checkpoint FILE",
                         c->checkpoint_every);
    if (c->write_restart_file[0] &&
        (c->write_restart_after < 0 || c->write_restart_after > c->steps))
        return hxi_error(HX_ERR_INVALID, "write_restart after %d of %d steps",
                         c->write_restart_after, c->steps);
    if (!isfinite(c->max_hours) || c->max_hours < 0.0)
        return hxi_error(HX_ERR_INVALID, "--max-hours %g must be >= 0", c->max_hours);
    return HX_OK;
}

/* -------------------------------------------------------- command line */

typedef enum opt_id {
    OPT_IN,
    OPT_VAR,
    OPT_HELP,
    OPT_STEPS,
    OPT_TRANSPORT,
    OPT_GRID,
    OPT_GPU,
    OPT_CPU,
    OPT_DUMP,
    OPT_DUMP_EVERY,
    OPT_VELOCITY,
    OPT_CELLS,
    OPT_SIZE,
    OPT_DENSITY,
    OPT_TEMP,
    OPT_RC,
    OPT_SKIN,
    OPT_DT,
    OPT_EVERY,
    OPT_CHECK,
    OPT_SHIFT,
    OPT_NEWTON,
    OPT_THERMO,
    OPT_SEED,
    OPT_NO_PROGRESS,
    OPT_STATS_CSV,
    OPT_RESTART,
    OPT_CHECKPOINT,
    OPT_CHECKPOINT_EVERY,
    OPT_MAX_HOURS,
    OPT_COUNT
} opt_id;

typedef struct cli_option {
    const char *name;
    const char *alias; /* or NULL */
    int nvals;
    opt_id id;
} cli_option;

static const cli_option options[] = {
    {"-in", "-i", 1, OPT_IN},
    {"-var", "-v", 2, OPT_VAR},
    {"--help", "-h", 0, OPT_HELP},
    {"--steps", NULL, 1, OPT_STEPS},
    {"--transport", NULL, 1, OPT_TRANSPORT},
    {"--grid", NULL, 1, OPT_GRID},
    {"--gpu", NULL, 0, OPT_GPU},
    {"--cpu", NULL, 0, OPT_CPU},
    {"--dump", NULL, 1, OPT_DUMP},
    {"--dump-every", NULL, 1, OPT_DUMP_EVERY},
    {"--velocity", NULL, 1, OPT_VELOCITY},
    {"--cells", NULL, 3, OPT_CELLS},
    {"--size", NULL, 1, OPT_SIZE},
    {"--density", NULL, 1, OPT_DENSITY},
    {"--temp", NULL, 1, OPT_TEMP},
    {"--rc", NULL, 1, OPT_RC},
    {"--skin", NULL, 1, OPT_SKIN},
    {"--dt", NULL, 1, OPT_DT},
    {"--every", NULL, 1, OPT_EVERY},
    {"--check", NULL, 1, OPT_CHECK},
    {"--shift", NULL, 1, OPT_SHIFT},
    {"--newton", NULL, 1, OPT_NEWTON},
    {"--thermo", NULL, 1, OPT_THERMO},
    {"--seed", NULL, 1, OPT_SEED},
    {"--no-progress", NULL, 0, OPT_NO_PROGRESS},
    {"--stats-csv", NULL, 1, OPT_STATS_CSV},
    {"--restart", NULL, 1, OPT_RESTART},
    {"--checkpoint", NULL, 1, OPT_CHECKPOINT},
    {"--checkpoint-every", NULL, 1, OPT_CHECKPOINT_EVERY},
    {"--max-hours", NULL, 1, OPT_MAX_HOURS},
};

void hx_md_config_usage(FILE *out, const char *prog)
{
    hx_md_config d;
    hx_md_config_defaults(&d);
    fprintf(out,
            "usage: %s [-in DECK [-var NAME VALUE]...] [options]\n"
            "\n"
            "Lennard-Jones MD on the halox halo exchange. Without -in it runs the LJ melt\n"
            "benchmark: %dx%dx%d fcc cells (%d atoms) at density %g, T %g, %d steps.\n"
            "The deck is read first; every other option overrides it, in any order.\n"
            "\n"
            "input\n"
            "  -in, -i FILE          LAMMPS input deck (units lj, fcc, pair styles, fix nve;\n"
            "                        fix nvt, fix langevin)\n"
            "  -var, -v NAME VALUE   set an index variable of the deck (repeatable)\n"
            "run\n"
            "  --steps N             time steps (run N)\n"
            "  --transport NAME      halo transport: cpu, mpi, nccl, nvshmem-..., auto\n"
            "                        (default: the engine's choice)\n"
            "  --grid AxBxC          rank grid, e.g. 2x2x1 (default: chosen for the ranks)\n"
            "  --gpu | --cpu         GPU (float) or CPU (double) engine (default: GPU if any)\n"
            "  --velocity MODE       initial velocities: lammps (LAMMPS's velocity create,\n"
            "                        with the deck's loop and dist; loop geom without a\n"
            "                        deck), halox (per atom, any rank count) or minimd\n"
            "                        (miniMD's generator) (default lammps)\n"
            "  --seed N              velocity seed (default %llu)\n"
            "system\n"
            "  --cells NX NY NZ      fcc unit cells (region block 0 NX 0 NY 0 NZ)\n"
            "  --size N              cubic: N N N cells\n"
            "  --density RHO         reduced density (lattice fcc RHO)\n"
            "  --temp T              initial temperature (velocity all create T)\n"
            "  --rc RC               pair cutoff (pair_style STYLE RC)\n"
            "  --shift yes|no        shift the pair energy to 0 at the cutoff\n"
            "  --skin S              neighbour skin (neighbor S bin)\n"
            "  --every N             rebuild lists every N steps (neigh_modify every N)\n"
            "  --check yes|no        rebuild only when an atom moved half the skin\n"
            "  --newton on|off       newton off: full-shell halo, no force exchange (newton\n"
            "                        on|off in a deck) (default: on; the GPU engine with\n"
            "                        several ranks: off below 100,000 atoms per rank)\n"
            "  --dt DT               time step (timestep DT)\n"
            "output\n"
            "  --thermo N            thermo row every N steps (0: first and last only)\n"
            "  --dump FILE           extended XYZ trajectory\n"
            "  --dump-every N        trajectory interval (default 100 with --dump)\n"
            "  --no-progress         no progress line\n"
            "  --stats-csv FILE      append a row of timings (us/step, stages) to FILE\n"
            "restart files\n"
            "  --restart FILE        continue from a restart file: its atoms, box, step,\n"
            "                        mass, pair and timestep (options given here win);\n"
            "                        any rank count, either engine\n"
            "  --checkpoint FILE     write the state to FILE (the last one kept as\n"
            "                        FILE.prev) every --checkpoint-every N steps, and when\n"
            "                        stopped by SIGTERM, SIGINT or --max-hours\n"
            "  --checkpoint-every N  checkpoint interval (default 0: only when stopped)\n"
            "  --max-hours H         stop cleanly (checkpoint, exit 0) before H hours\n"
            "  --version             version, build and what it was built with\n"
            "  --help-env            the HALOX_* environment variables it reads\n"
            "  -h, --help            this text\n",
            prog ? prog : "halox-md", d.cells[0], d.cells[1], d.cells[2],
            4 * d.cells[0] * d.cells[1] * d.cells[2], d.density, d.temperature, d.steps,
            (unsigned long long) d.seed);
    fprintf(out, "\ntransports built:");
    for (int i = 0; i < hx_transport_count(); i++)
        fprintf(out, " %s", hx_transport_name_at(i));
    fprintf(out, "\n");
}

/* Finds the option argv[i] names. "--name=value" gives the value inline
 * for options of one value. */
static hx_status find_option(const char *arg, const cli_option **out, const char **inline_val)
{
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    size_t n = eq ? (size_t) (eq - arg) : strlen(arg);
    *inline_val = NULL;
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        const cli_option *o = &options[i];
        if ((strlen(o->name) == n && strncmp(arg, o->name, n) == 0) ||
            (o->alias && strlen(o->alias) == n && strncmp(arg, o->alias, n) == 0)) {
            if (eq && o->nvals != 1)
                return hxi_error(HX_ERR_INVALID, "option %s takes %d values, not '=VALUE'", o->name,
                                 o->nvals);
            *out = o;
            *inline_val = eq ? eq + 1 : NULL;
            return HX_OK;
        }
    }
    if (arg[0] != '-')
        return hxi_error(HX_ERR_INVALID,
                         "unexpected argument '%s': the deck is given with -in FILE; see --help",
                         arg);
    return hxi_error(HX_ERR_INVALID, "unknown option '%s'; see --help", arg);
}

static hx_status opt_double(const char *opt, const char *text, double *out)
{
    return hxi_parse_double(opt, text, out);
}

static hx_status opt_int(const char *opt, const char *text, long lo, long hi, int *out)
{
    long v;
    HXI_CHECK(hxi_parse_long(opt, text, lo, hi, &v));
    *out = (int) v;
    return HX_OK;
}

static hx_status opt_yes_no(const char *opt, const char *text, int *out)
{
    if (strcmp(text, "yes") == 0)
        *out = 1;
    else if (strcmp(text, "no") == 0)
        *out = 0;
    else
        return hxi_error(HX_ERR_INVALID, "%s: '%s' must be yes or no", opt, text);
    return HX_OK;
}

/* A file name into a fixed buffer of `size` bytes. */
static hx_status opt_file(const char *opt, const char *text, char *dst, size_t size)
{
    size_t len = strlen(text);
    if (len == 0 || len >= size)
        return hxi_error(HX_ERR_INVALID, "%s: a file name of 1 to %zu characters", opt, size - 1);
    memcpy(dst, text, len + 1);
    return HX_OK;
}

static hx_status opt_positive(const char *opt, const char *text, int allow_zero, double *out)
{
    HXI_CHECK(opt_double(opt, text, out));
    if (*out < 0.0 || (*out == 0.0 && !allow_zero))
        return hxi_error(HX_ERR_INVALID, "%s: %s must be %s 0", opt, text, allow_zero ? ">=" : ">");
    return HX_OK;
}

/* One option of pass 2 (everything but -in and -var). */
static hx_status apply_option(hx_md_config *c, const cli_option *o, char **v, int *dump_given,
                              int *dump_every_given)
{
    const char *n = o->name;
    switch (o->id) {
    case OPT_IN:
    case OPT_VAR:
    case OPT_HELP:
        return HX_OK;
    case OPT_STEPS:
        return opt_int(n, v[0], 0, INT_MAX, &c->steps);
    case OPT_TRANSPORT: {
        size_t len = strlen(v[0]);
        if (len == 0 || len >= sizeof c->transport)
            return hxi_error(HX_ERR_INVALID, "--transport: a name of 1 to %zu characters",
                             sizeof c->transport - 1);
        for (size_t i = 0; i < len; i++) {
            char ch = v[0][i];
            if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'))
                return hxi_error(HX_ERR_INVALID,
                                 "--transport '%s': names are lower-case letters, digits, "
                                 "'-' and '_' (cpu, mpi, nccl, nvshmem-fused, ...)",
                                 v[0]);
        }
        memcpy(c->transport, v[0], len + 1);
        return HX_OK;
    }
    case OPT_GRID:
        return hx_grid_parse(v[0], c->grid);
    case OPT_GPU:
        c->use_gpu = 1;
        return HX_OK;
    case OPT_CPU:
        c->use_gpu = 0;
        return HX_OK;
    case OPT_DUMP:
        HXI_CHECK(opt_file(n, v[0], c->dump_file, sizeof c->dump_file));
        *dump_given = 1;
        return HX_OK;
    case OPT_DUMP_EVERY:
        *dump_every_given = 1;
        return opt_int(n, v[0], 0, INT_MAX, &c->dump_every);
    case OPT_VELOCITY:
        if (strcmp(v[0], "lammps") == 0)
            c->velocity_mode = HX_MD_VEL_LAMMPS;
        else if (strcmp(v[0], "halox") == 0)
            c->velocity_mode = HX_MD_VEL_HALOX;
        else if (strcmp(v[0], "minimd") == 0)
            c->velocity_mode = HX_MD_VEL_MINIMD;
        else
            return hxi_error(HX_ERR_INVALID, "--velocity '%s': lammps, halox or minimd", v[0]);
        return HX_OK;
    case OPT_CELLS:
        for (int d = 0; d < 3; d++)
            HXI_CHECK(opt_int(n, v[d], 1, 1000000, &c->cells[d]));
        c->given |= HX_MD_GIVEN_SIZE;
        return HX_OK;
    case OPT_SIZE:
        HXI_CHECK(opt_int(n, v[0], 1, 1000000, &c->cells[0]));
        c->cells[1] = c->cells[2] = c->cells[0];
        c->given |= HX_MD_GIVEN_SIZE;
        return HX_OK;
    case OPT_DENSITY:
        c->given |= HX_MD_GIVEN_DENSITY;
        return opt_positive(n, v[0], 0, &c->density);
    case OPT_TEMP:
        return opt_positive(n, v[0], 1, &c->temperature);
    case OPT_RC:
        c->given |= HX_MD_GIVEN_RC;
        return opt_positive(n, v[0], 0, &c->rc);
    case OPT_SKIN:
        return opt_positive(n, v[0], 1, &c->skin);
    case OPT_DT:
        c->given |= HX_MD_GIVEN_DT;
        return opt_positive(n, v[0], 0, &c->dt);
    case OPT_EVERY:
        return opt_int(n, v[0], 1, INT_MAX, &c->neigh_every);
    case OPT_CHECK:
        return opt_yes_no(n, v[0], &c->neigh_check);
    case OPT_SHIFT:
        c->given |= HX_MD_GIVEN_SHIFT;
        return opt_yes_no(n, v[0], &c->shift_energy);
    case OPT_NEWTON:
        if (strcmp(v[0], "on") != 0 && strcmp(v[0], "off") != 0)
            return hxi_error(HX_ERR_INVALID, "%s: '%s' must be on or off", n, v[0]);
        c->newton_off = strcmp(v[0], "off") == 0;
        c->given |= HX_MD_GIVEN_NEWTON;
        return HX_OK;
    case OPT_THERMO:
        return opt_int(n, v[0], 0, INT_MAX, &c->thermo_every);
    case OPT_SEED: {
        char *end;
        unsigned long long s;
        errno = 0;
        s = strtoull(v[0], &end, 10);
        if (v[0][0] < '0' || v[0][0] > '9' || *end != '\0' || errno == ERANGE || s == 0)
            return hxi_error(HX_ERR_INVALID, "--seed: '%s' must be a whole number > 0", v[0]);
        c->seed = (uint64_t) s;
        return HX_OK;
    }
    case OPT_NO_PROGRESS:
        c->progress = 0;
        return HX_OK;
    case OPT_STATS_CSV:
        return opt_file(n, v[0], c->stats_csv, sizeof c->stats_csv);
    case OPT_RESTART:
        return opt_file(n, v[0], c->restart_file, sizeof c->restart_file);
    case OPT_CHECKPOINT:
        return opt_file(n, v[0], c->checkpoint_file, sizeof c->checkpoint_file);
    case OPT_CHECKPOINT_EVERY:
        return opt_int(n, v[0], 0, INT_MAX, &c->checkpoint_every);
    case OPT_MAX_HOURS:
        return opt_positive(n, v[0], 0, &c->max_hours);
    case OPT_COUNT:
        break;
    }
    return hxi_error(HX_ERR_INVALID, "option %s is not handled", n);
}

/* Two options of one command line that contradict each other, or one
 * that the run would ignore, are refused: the run must not settle them
 * silently. (A deck's setting that an option overrides is no conflict.) */
static const struct option_conflict {
    opt_id a, b;
    const char *why;
} conflicts[] = {
    {OPT_CELLS, OPT_SIZE, "both set the number of cells; give one"},
    {OPT_GPU, OPT_CPU, "ask for two engines; give one"},
};

/* Options that only shape the velocities created at the start: a restart
 * file brings its own. */
static const opt_id velocity_options[] = {OPT_TEMP, OPT_SEED, OPT_VELOCITY};

/* seen[id]: the option as the command line spelt it, or NULL. */
static hx_status check_conflicts(const char *const *seen, const hx_md_config *c)
{
    const char *restart = seen[OPT_RESTART]    ? "--restart FILE"
                          : c->restart_file[0] ? "read_restart in the deck"
                                               : NULL;
    for (size_t i = 0; i < sizeof conflicts / sizeof conflicts[0]; i++) {
        const struct option_conflict *k = &conflicts[i];
        if (seen[k->a] && seen[k->b])
            return hxi_error(HX_ERR_INVALID, "%s and %s %s", seen[k->a], seen[k->b], k->why);
    }
    for (size_t i = 0; restart && i < sizeof velocity_options / sizeof velocity_options[0]; i++)
        if (seen[velocity_options[i]])
            return hxi_error(HX_ERR_INVALID,
                             "%s with %s: the restart file holds the velocities, so %s would "
                             "be ignored; drop it",
                             seen[velocity_options[i]], restart, seen[velocity_options[i]]);
    return HX_OK;
}

hx_status hx_md_config_apply_args(hx_md_config *cfg, int argc, char **argv, hx_md_cli *cli)
{
    hx_md_config c;
    hx_md_cli out = {0, NULL};
    char **vars = NULL;
    const char *seen[OPT_COUNT] = {NULL};
    int nvars = 0;
    int dump_given = 0, dump_every_given = 0;
    hx_status st = HX_OK;
    if (!cfg || argc < 0 || (argc > 0 && !argv))
        return hxi_error(HX_ERR_INVALID, "hx_md_config_apply_args: %s",
                         cfg ? "argv is NULL" : "the config is NULL");
    for (int i = 1; i < argc; i++) {
        if (argv[i] && (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)) {
            out.help = 1;
            if (cli)
                *cli = out;
            return HX_OK;
        }
    }
    c = *cfg;
    if (argc > 1) {
        vars = calloc((size_t) argc, sizeof *vars);
        if (!vars)
            return hxi_error(HX_ERR_NOMEM, "out of memory reading the command line");
    }

    /* Pass 1: the shape of the line, the deck and its variables. */
    for (int i = 1; i < argc; i++) {
        const cli_option *o;
        const char *inl;
        if (!argv[i]) {
            st = hxi_error(HX_ERR_INVALID, "argv[%d] is NULL", i);
            goto done;
        }
        HXI_CHECK_GOTO(find_option(argv[i], &o, &inl), st, done);
        if (!inl && i + o->nvals >= argc) {
            st = hxi_error(HX_ERR_INVALID, "option %s needs %d value%s", argv[i], o->nvals,
                           o->nvals == 1 ? "" : "s");
            goto done;
        }
        if (!seen[o->id])
            seen[o->id] = o->name;
        if (o->id == OPT_IN) {
            if (out.deck) {
                st = hxi_error(HX_ERR_INVALID, "-in is given twice (%s and %s); give one deck",
                               out.deck, inl ? inl : argv[i + 1]);
                goto done;
            }
            out.deck = inl ? inl : argv[i + 1];
        } else if (o->id == OPT_VAR) {
            size_t ln = strlen(argv[i + 1]), lv = strlen(argv[i + 2]);
            char *s = malloc(ln + lv + 2);
            if (!s) {
                st = hxi_error(HX_ERR_NOMEM, "out of memory reading the command line");
                goto done;
            }
            memcpy(s, argv[i + 1], ln);
            s[ln] = '=';
            memcpy(s + ln + 1, argv[i + 2], lv + 1);
            vars[nvars++] = s;
            if (strchr(argv[i + 1], '=') || argv[i + 1][0] == '\0') {
                st = hxi_error(HX_ERR_INVALID,
                               "-var '%s': write -var NAME VALUE, NAME of letters, digits and _",
                               argv[i + 1]);
                goto done;
            }
        }
        if (!inl)
            i += o->nvals;
    }
    if (nvars > 0 && !out.deck) {
        st = hxi_error(HX_ERR_INVALID,
                       "-var %s is given but there is no deck to use it: add "
                       "-in FILE",
                       vars[0]);
        goto done;
    }
    if (out.deck)
        HXI_CHECK_GOTO(hx_md_deck_read(out.deck, &c, (const char *const *) vars, nvars), st, done);

    /* Pass 2: every other option, in order, over the deck. */
    for (int i = 1; i < argc; i++) {
        const cli_option *o;
        const char *inl;
        HXI_CHECK_GOTO(find_option(argv[i], &o, &inl), st, done);
        if (inl) {
            char *v[1] = {(char *) inl};
            HXI_CHECK_GOTO(apply_option(&c, o, v, &dump_given, &dump_every_given), st, done);
        } else {
            HXI_CHECK_GOTO(apply_option(&c, o, argv + i + 1, &dump_given, &dump_every_given), st,
                           done);
            i += o->nvals;
        }
    }
    if (dump_given && !dump_every_given && c.dump_every == 0)
        c.dump_every = 100;
    for (int i = 1; i < argc && out.deck; i++)
        if (strcmp(argv[i], "--restart") == 0 || strncmp(argv[i], "--restart=", 10) == 0) {
            st = hxi_error(HX_ERR_INVALID,
                           "--restart with a deck (-in %s): name the file in the deck "
                           "(read_restart FILE, in place of lattice, region, create_box, "
                           "create_atoms and velocity), or run without a deck",
                           out.deck);
            goto done;
        }
    HXI_CHECK_GOTO(check_conflicts(seen, &c), st, done);
    HXI_CHECK_GOTO(hx_md_config_check(&c), st, done);
    *cfg = c;
    if (cli)
        *cli = out;
done:
    for (int i = 0; i < nvars; i++)
        free(vars[i]);
    free(vars);
    return st;
}
