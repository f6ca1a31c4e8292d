/*
 * deck_commands.c - the commands of the deck subset (deck.h): each keyword
 * done as LAMMPS does it, or refused with the file, the line and the form
 * halox-md reads.
 */
#include "md/deck_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ commands */

static hx_status nargs(deck *d, int min, int max, const char *usage)
{
    if (d->nwords < min || d->nwords > max)
        return deck_error(d, "%s takes %s; write `%s`", d->words[0],
                          d->nwords < min ? "more arguments" : "fewer arguments", usage);
    return HX_OK;
}

/* The types a word names, as LAMMPS's bounds(): N, *, N*, *M or N*M,
 * within 1 .. the box's types (after read_restart, whose file says how
 * many, within halox-md's most; the file's count is checked at the run). */
static hx_status type_range(deck *d, const char *w, int *lo, int *hi)
{
    const int n = d->restarted ? HX_MD_MAX_TYPES : d->c.types.ntypes;
    const char *star = strchr(w, '*');
    long a = 1, b = n;
    char *end;
    if (star && strchr(star + 1, '*'))
        star = NULL, a = -1; /* two stars: refused below */
    if (!star) {
        a = strtol(w, &end, 10);
        if (end == w || *end)
            a = -1;
        b = a;
    } else {
        if (star != w) {
            a = strtol(w, &end, 10);
            if (end != star)
                a = -1;
        }
        if (star[1]) {
            b = strtol(star + 1, &end, 10);
            if (*end)
                a = -1;
        }
    }
    if (a < 1 || b > n || a > b)
        return deck_error(d,
                          "%s: atom type '%s' is out of range: the box has types 1 to %d "
                          "(I, *, I*, *J or I*J)",
                          d->words[0], deck_show(w).s, n);
    *lo = (int) a;
    *hi = (int) b;
    return HX_OK;
}

static hx_status need(deck *d, int have, const char *first)
{
    if (!have)
        return deck_error(d, "%s comes before %s; LAMMPS needs %s first", d->words[0], first,
                          first);
    return HX_OK;
}

/* The helpers above, for the pair commands (deck_pair.c). */
hx_status deck_nargs(deck *d, int min, int max, const char *usage)
{
    return nargs(d, min, max, usage);
}

hx_status deck_type_range(deck *d, const char *w, int *lo, int *hi)
{
    return type_range(d, w, lo, hi);
}

hx_status deck_need(deck *d, int have, const char *first)
{
    return need(d, have, first);
}

/* Commands that make the box, the atoms or their velocities: the restart
 * file has them. */
hx_status deck_not_restarted(deck *d)
{
    if (d->restarted)
        return deck_error(d,
                          "%s after read_restart: the restart file holds the box, the atoms and "
                          "their velocities",
                          d->words[0]);
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
                          deck_show(d->words[1]).s);
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
                          deck_show(d->words[1]).s);
    return HX_OK;
}

static hx_status cmd_mass(deck *d)
{
    double m;
    int lo, hi;
    HXI_CHECK(nargs(d, 3, 3, "mass I M"));
    HXI_CHECK(need(d, d->have_box, "create_box"));
    HXI_CHECK(type_range(d, d->words[1], &lo, &hi));
    HXI_CHECK(deck_get_double(d, "mass", d->words[2], &m));
    if (m <= 0.0)
        return deck_error(d, "mass %s must be > 0", deck_show(d->words[2]).s);
    /* LAMMPS draws velocities with the masses of the moment; a later mass
     * would leave them scaled for the old one. */
    for (int t = lo; t <= hi; t++)
        if (d->have_velocity && !d->restarted && m != d->c.types.masses[t - 1])
            return deck_error(d,
                              "mass after velocity: the velocities were created for mass %g "
                              "of type %d; put mass before velocity",
                              d->c.types.masses[t - 1], t);
    for (int t = lo; t <= hi; t++) {
        d->c.types.masses[t - 1] = m;
        d->c.types.mass_given |= 1u << (t - 1);
    }
    if (lo == 1)
        d->c.mass = m;
    d->c.given |= HX_MD_GIVEN_MASS;
    d->have_mass = d->restarted || d->c.types.mass_given + 1u == 1u << d->c.types.ntypes;
    return HX_OK;
}

/* `set type I type J`, `set type I type/fraction J FRAC SEED` and the same
 * with `group all` for `type I` (every type): LAMMPS's Set, one keyword a
 * command, applied where each atom is created (types.c). */
static hx_status cmd_set(deck *d)
{
    static const char usage[] = "set type I|group all type J | type/fraction J FRAC SEED";
    hx_md_types *t = &d->c.types;
    hx_md_type_set s = {1, t->ntypes, 0, 1.0, 0};
    long long to, seed = 0;
    HXI_CHECK(deck_not_restarted(d));
    HXI_CHECK(nargs(d, 5, 7, usage));
    HXI_CHECK(need(d, d->have_atoms, "create_atoms"));
    if (strcmp(d->words[1], "type") == 0)
        HXI_CHECK(type_range(d, d->words[2], &s.lo, &s.hi));
    else if (strcmp(d->words[1], "group") != 0 || strcmp(d->words[2], "all") != 0)
        return deck_error(d, "set %s %s: halox-md selects atoms by type or the group all (%s)",
                          deck_show(d->words[1]).s, deck_show(d->words[2]).s, usage);
    if (strcmp(d->words[3], "type") == 0)
        HXI_CHECK(nargs(d, 5, 5, usage));
    else if (strcmp(d->words[3], "type/fraction") == 0)
        HXI_CHECK(nargs(d, 7, 7, usage));
    else
        return deck_error(d, "set keyword '%s': halox-md sets type and type/fraction (%s)",
                          deck_show(d->words[3]).s, usage);
    HXI_CHECK(deck_get_int(d, "the atom type", d->words[4], LLONG_MIN, LLONG_MAX, &to));
    if (to < 1 || to > t->ntypes)
        return deck_error(d, "set: atom type %s is out of range: the box has types 1 to %d",
                          deck_show(d->words[4]).s, t->ntypes);
    if (d->nwords == 7) {
        HXI_CHECK(deck_get_double(d, "fraction", d->words[5], &s.fraction));
        if (!(s.fraction >= 0.0 && s.fraction <= 1.0))
            return deck_error(d, "set: fraction %s must be 0 to 1 (%s)", deck_show(d->words[5]).s,
                              usage);
        HXI_CHECK(deck_get_int(d, "seed", d->words[6], 1, INT_MAX, &seed));
    }
    if (d->have_velocity)
        return deck_error(d, "set after velocity: the velocities were created for the types' "
                             "masses before it; put set before velocity");
    if (t->nsets == HX_MD_MAX_SETS)
        return deck_error(d, "more than %d set commands", HX_MD_MAX_SETS);
    s.to = (int) to;
    s.seed = (int) seed;
    t->sets[t->nsets++] = s;
    return HX_OK;
}

/* `processors PX PY PZ`: the rank grid, `*` for a count halox-md
 * chooses (as LAMMPS's); --grid overrides it. */
static hx_status cmd_processors(deck *d)
{
    HXI_CHECK(nargs(d, 4, 4, "processors PX PY PZ (a count or *)"));
    for (int k = 0; k < 3; k++) {
        const char *w = d->words[1 + k];
        int n = 0;
        if (strcmp(w, "*") != 0)
            HXI_CHECK(deck_get_int32(d, "processors count (or *)", w, 1, &n));
        d->c.grid[k] = n;
    }
    return HX_OK;
}

static hx_status cmd_neighbor(deck *d)
{
    double skin;
    HXI_CHECK(nargs(d, 3, 3, "neighbor SKIN bin"));
    HXI_CHECK(deck_get_double(d, "skin", d->words[1], &skin));
    if (skin < 0.0)
        return deck_error(d, "neighbor: skin %s must be >= 0", deck_show(d->words[1]).s);
    if (strcmp(d->words[2], "bin") != 0)
        return deck_error(d, "neighbor style '%s': halox-md bins (neighbor SKIN bin)",
                          deck_show(d->words[2]).s);
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
                              deck_show(k).s);
        if (!v)
            return deck_error(d, "neigh_modify %s has no value", k);
        if (strcmp(k, "every") == 0)
            HXI_CHECK(deck_get_int32(d, "every", v, 1, &d->c.neigh_every));
        else if (strcmp(k, "delay") == 0)
            HXI_CHECK(deck_get_int32(d, "delay", v, 0, &d->c.neigh_delay));
        else
            HXI_CHECK(deck_get_yes_no(d, "check", v, &d->c.neigh_check));
    }
    if (d->c.neigh_delay % d->c.neigh_every != 0)
        return deck_error(d, "neigh_modify: delay %d must be 0 or a multiple of every %d",
                          d->c.neigh_delay, d->c.neigh_every);
    return HX_OK;
}

/* LAMMPS's newton FLAG or newton PAIR BOND (on|off each): the pair
 * setting is the first; halox-md has no bonds, so the second is read and
 * has nothing to set. */
static hx_status cmd_newton(deck *d)
{
    HXI_CHECK(nargs(d, 2, 3, "newton on|off [on|off]"));
    for (int i = 1; i < d->nwords; i++)
        if (strcmp(d->words[i], "on") != 0 && strcmp(d->words[i], "off") != 0)
            return deck_error(d, "newton: '%s' must be on or off (newton on|off [on|off])",
                              deck_show(d->words[i]).s);
    d->c.newton_off = strcmp(d->words[1], "off") == 0;
    d->c.given |= HX_MD_GIVEN_NEWTON;
    return HX_OK;
}

static hx_status cmd_timestep(deck *d)
{
    double dt;
    HXI_CHECK(nargs(d, 2, 2, "timestep DT"));
    HXI_CHECK(deck_get_double(d, "timestep", d->words[1], &dt));
    if (dt <= 0.0)
        return deck_error(d, "timestep %s must be > 0", deck_show(d->words[1]).s);
    d->c.dt = dt;
    d->c.given |= HX_MD_GIVEN_DT;
    return HX_OK;
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
                          deck_show(d->words[3]).s, usage);
    HXI_CHECK(nargs(d, 6, 6, usage));
    if (!deck_is_name(d->words[1], strlen(d->words[1])))
        return deck_error(d, "dump ID '%s' must be letters, digits and _",
                          deck_show(d->words[1]).s);
    if (strcmp(d->words[2], "all") != 0)
        return deck_error(d, "dump group '%s': halox-md has the group all only",
                          deck_show(d->words[2]).s);
    HXI_CHECK(need(d, d->have_box, "create_box"));
    if (d->have_dump)
        return deck_error(d, "a second dump: halox-md writes one trajectory");
    HXI_CHECK(deck_get_int32(d, "the dump interval", d->words[4], 1, &every));
    file = d->words[5];
    if (file[0] == '\0' || strlen(file) >= sizeof d->c.dump_file)
        return deck_error(d, "dump file name must have 1 to %zu bytes", sizeof d->c.dump_file - 1);
    if (strchr(file, '*') || strchr(file, '%'))
        return deck_error(d,
                          "dump file '%s': one file per step or per rank ('*', '%%') is "
                          "not supported",
                          deck_show(file).s);
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
                          deck_show(d->words[1]).s, deck_show(d->words[1]).s);
    for (int i = 2; i < d->nwords; i += 2) {
        const char *k = d->words[i];
        const char *v = i + 1 < d->nwords ? d->words[i + 1] : NULL;
        if (strcmp(k, "sort") != 0)
            return deck_error(d, "dump_modify keyword '%s' is not supported (%s)", deck_show(k).s,
                              usage);
        if (!v || strcmp(v, "id") != 0)
            return deck_error(d, "dump_modify sort %s: halox-md writes atoms in id order only (%s)",
                              v ? deck_show(v).s : "(nothing)", usage);
    }
    if (d->nwords == 2)
        return deck_error(d, "dump_modify takes a keyword (%s)", usage);
    return HX_OK;
}

static hx_status cmd_run(deck *d)
{
    int n;
    HXI_CHECK(nargs(d, 2, 6, "run N [pre yes|no] [post yes|no]"));
    HXI_CHECK(deck_get_int32(d, "the number of steps", d->words[1], 0, &n));
    for (int i = 2; i < d->nwords; i += 2) {
        int unused;
        /* pre/post only change what LAMMPS prints. */
        if (strcmp(d->words[i], "pre") != 0 && strcmp(d->words[i], "post") != 0)
            return deck_error(d, "run keyword '%s' is not supported (pre, post)",
                              deck_show(d->words[i]).s);
        if (i + 1 == d->nwords)
            return deck_error(d, "run %s has no value (yes or no)", d->words[i]);
        HXI_CHECK(deck_get_yes_no(d, d->words[i], d->words[i + 1], &unused));
    }
    if (!d->ran) {
        HXI_CHECK(need(d, d->have_box, "create_box"));
        HXI_CHECK(need(d, d->have_atoms, "create_atoms"));
        HXI_CHECK(need(d, d->have_mass, "mass"));
        HXI_CHECK(need(d, d->have_pair_style, "pair_style"));
        HXI_CHECK(deck_pair_ready(d));
        /* After read_restart without a new pair_style or cutoff, the
         * file's cutoff is used (set when the file is read). */
        if (d->rc_coeff > 0.0 || d->rc_global > 0.0)
            d->c.rc = d->rc_coeff > 0.0 ? d->rc_coeff : d->rc_global;
        /* With several types each pair keeps its own cutoff (types.rc)
         * and rc is pair_style's, for the pairs that gave none. */
        if (d->c.types.ntypes > 1 && d->rc_global > 0.0)
            d->c.rc = d->rc_global;
        HXI_CHECK(deck_box_ready(d));
        d->c.steps = 0;
        d->ran = 1;
    } else {
        HXI_CHECK(deck_fix_next_run(d));
    }
    if (n > INT_MAX - d->c.steps)
        return deck_error(d, "runs add up to more than %d steps", INT_MAX);
    d->c.steps += n;
    return HX_OK;
}

/* `read_restart FILE`: the box, the atoms (x, v), the step, the mass,
 * the pair style and coefficients and the timestep come from FILE (read
 * when the run starts); commands after it may change the latter, as in
 * LAMMPS. Neighbour settings, fix nve, thermo and output are the deck's. */
static hx_status cmd_read_restart(deck *d)
{
    HXI_CHECK(nargs(d, 2, 2, "read_restart FILE"));
    if (d->restarted)
        return deck_error(d, "a second read_restart");
    if (d->have_lattice || d->have_box || d->nregions > 0)
        return deck_error(d,
                          "read_restart after %s: the restart file makes the box; use one "
                          "or the other",
                          d->have_box       ? "create_box"
                          : d->have_lattice ? "lattice"
                                            : "region");
    if (strlen(d->words[1]) >= sizeof d->c.restart_file)
        return deck_error(d, "read_restart: the file name is longer than %zu bytes",
                          sizeof d->c.restart_file - 1);
    snprintf(d->c.restart_file, sizeof d->c.restart_file, "%s", d->words[1]);
    d->restarted = 1;
    d->have_lattice = d->have_box = d->have_atoms = d->have_mass = 1;
    d->have_pair_style = d->have_pair_coeff = 1;
    d->have_velocity = 1;
    return HX_OK;
}

/* A restart file name: LAMMPS's '*' (the step) and '%' (MPI-IO) forms
 * are refused; halox-md keeps the previous file as FILE.prev instead. */
static hx_status restart_name(deck *d, const char *w, char *dst, size_t size)
{
    if (w[0] == '\0' || strlen(w) >= size)
        return deck_error(d, "%s: the file name must have 1 to %zu bytes", d->words[0], size - 1);
    if (strchr(w, '*') || strchr(w, '%'))
        return deck_error(d,
                          "%s: file names with '*' or '%%' (one file per step, MPI-IO) are "
                          "not supported; halox-md keeps the previous file as FILE.prev",
                          d->words[0]);
    snprintf(dst, size, "%s", w);
    return HX_OK;
}

/* `write_restart FILE`: the state after the steps of the runs so far. */
static hx_status cmd_write_restart(deck *d)
{
    HXI_CHECK(nargs(d, 2, 2, "write_restart FILE"));
    HXI_CHECK(need(d, d->have_atoms, "create_atoms"));
    if (d->c.write_restart_file[0])
        return deck_error(d, "a second write_restart: halox-md writes one per deck");
    HXI_CHECK(
        restart_name(d, d->words[1], d->c.write_restart_file, sizeof d->c.write_restart_file));
    d->c.write_restart_after = d->ran ? d->c.steps : 0;
    return HX_OK;
}

/* `restart N FILE` (every N steps) or `restart 0` (none). */
static hx_status cmd_restart(deck *d)
{
    static const char usage[] = "restart N FILE | restart 0";
    int every;
    if (d->nwords >= 2 && strcmp(d->words[1], "0") == 0) {
        HXI_CHECK(nargs(d, 2, 2, usage));
        d->c.checkpoint_every = 0;
        d->c.checkpoint_file[0] = '\0';
        return HX_OK;
    }
    if (d->nwords == 4)
        return deck_error(d,
                          "restart N FILE1 FILE2 (two files in turn) is not supported: "
                          "halox-md keeps the previous file as FILE.prev (%s)",
                          usage);
    HXI_CHECK(nargs(d, 3, 3, usage));
    HXI_CHECK(deck_get_int32(d, "the restart interval", d->words[1], 1, &every));
    HXI_CHECK(restart_name(d, d->words[2], d->c.checkpoint_file, sizeof d->c.checkpoint_file));
    d->c.checkpoint_every = every;
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
    if (!deck_is_name(name, strlen(name)))
        return deck_error(d, "variable name '%s' must be letters, digits and _ (at most %d)",
                          deck_show(name).s, DECK_MAX_NAME - 1);
    v = deck_var_find(d, name, strlen(name));
    if (strcmp(d->words[2], "index") == 0) {
        /* As LAMMPS: an index variable that exists (from -var, or earlier)
         * keeps its value; later values would need `next`, which halox-md
         * does not read, so only the first counts. */
        if (v && v->style != VAR_INDEX)
            return deck_error(d, "variable %s is equal-style; it cannot become index-style",
                              deck_show(name).s);
        if (v)
            return HX_OK;
        return deck_var_add(d, name, VAR_INDEX, d->words[3], NULL);
    }
    if (strcmp(d->words[2], "equal") == 0) {
        char *copy;
        if (d->nwords != 4)
            return deck_error(d,
                              "variable %s equal takes one formula; quote it when it has "
                              "spaces",
                              deck_show(name).s);
        if (!v)
            return deck_var_add(d, name, VAR_EQUAL, d->words[3], NULL);
        if (v->style != VAR_EQUAL)
            return deck_error(d,
                              "variable %s is index-style (perhaps from -var); it cannot "
                              "become equal-style",
                              deck_show(name).s);
        copy = malloc(strlen(d->words[3]) + 1);
        if (!copy)
            return hxi_error(HX_ERR_NOMEM, "out of memory for the value of variable %s",
                             deck_show(name).s);
        strcpy(copy, d->words[3]);
        free(v->value);
        v->value = copy;
        return HX_OK;
    }
    return deck_error(d, "variable style '%s' is not supported (index, equal)",
                      deck_show(d->words[2]).s);
}

typedef struct deck_command {
    const char *name;
    hx_status (*run)(deck *d);
} deck_command;

static const deck_command commands[] = {
    {"units", cmd_units},
    {"atom_style", cmd_atom_style},
    {"lattice", deck_cmd_lattice},
    {"region", deck_cmd_region},
    {"create_box", deck_cmd_create_box},
    {"create_atoms", deck_cmd_create_atoms},
    {"mass", cmd_mass},
    {"velocity", deck_cmd_velocity},
    {"set", cmd_set},
    {"pair_style", deck_pair_style},
    {"pair_coeff", deck_pair_coeff},
    {"pair_modify", deck_pair_modify},
    {"processors", cmd_processors},
    {"balance", deck_cmd_balance},
    {"neighbor", cmd_neighbor},
    {"neigh_modify", cmd_neigh_modify},
    {"newton", cmd_newton},
    {"fix", deck_cmd_fix},
    {"timestep", cmd_timestep},
    {"thermo", deck_cmd_thermo},
    {"thermo_style", deck_cmd_thermo_style},
    {"thermo_modify", deck_cmd_thermo_modify},
    {"dump", cmd_dump},
    {"dump_modify", cmd_dump_modify},
    {"read_restart", cmd_read_restart},
    {"write_restart", cmd_write_restart},
    {"restart", cmd_restart},
    {"variable", cmd_variable},
    {"run", cmd_run},
};

/* The command names, comma-separated, for the error that lists them. */
static const char *command_names(void)
{
    static char names[512];
    if (!names[0])
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     commands[i].name);
    return names;
}

hx_status deck_run_command(deck *d)
{
    const char *cmd = d->words[0];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(cmd, commands[i].name) != 0)
            continue;
        if (d->ran && commands[i].run != cmd_run && commands[i].run != cmd_variable &&
            commands[i].run != cmd_write_restart)
            return deck_error(d,
                              "%s after the first run: halox-md runs one set-up, and later "
                              "runs only add steps; move it before the first run",
                              cmd);
        return commands[i].run(d);
    }
    return deck_error(d, "unsupported command '%s' (halox-md reads: %s)", deck_show(cmd).s,
                      command_names());
}
