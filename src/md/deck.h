/*
 * deck.h - how halox-md learns what to run: a LAMMPS input deck (a small,
 * strict subset of the LAMMPS input language) and the halox-md command line.
 *
 * Order of precedence, lowest first: hx_md_config_defaults(), the deck,
 * then every other command-line option, wherever it stands on the line.
 *
 * The deck subset (anything else is HX_ERR_PARSE, naming file, line and
 * command):
 *   units lj                      atom_style atomic
 *   lattice fcc RHO               region ID block 0 NX 0 NY 0 NZ [units lattice|box]
 *   region ID prism 0 NX 0 NY 0 NZ XY XZ YZ [units lattice|box] (a triclinic
 *     box: LAMMPS's tilt limits, tilts that make the edges fcc lattice
 *     vectors; docs/md-triclinic.md)
 *   create_box N ID               create_atoms T box | create_atoms T region ID
 *   mass I M                      velocity all create T SEED [dist uniform|gaussian]
 *                                   [loop all|local|geom] [mom yes|no] [rot yes|no]
 *                                   [sum no|yes] [units box|lattice]
 *   pair_style STYLE ... RC       pair_coeff I J PARAMS... [RC]
 *   pair_modify [shift yes|no] [mix geometric|arithmetic|sixthpower]
 *   set type I|group all type J | type/fraction J FRAC SEED
 *                                 neighbor SKIN bin
 *   neigh_modify [every N] [delay N] [check yes|no]
 *   newton on|off [on|off]        (the pair setting; off: the full shell, no
 *                                   force exchange; unset: see --newton)
 *   fix ID all nve                timestep DT
 *   fix ID all nvt temp TSTART TSTOP TDAMP [tchain N] [tloop N] [drag D]
 *   fix ID all langevin TSTART TSTOP DAMP SEED
 *   thermo N                      dump ID all atom|xyz N FILE
 *   thermo_style one | custom step temp epair emol pe ke etotal press vol
 *                                   density atoms xy xz yz lx ly lz
 *   thermo_modify norm yes|no [flush yes|no]
 *   dump_modify ID sort id        run N [pre yes|no] [post yes|no]
 *   read_restart FILE             write_restart FILE
 *   restart N FILE | restart 0
 *   variable NAME index VALUE     variable NAME equal FORMULA
 * (I, J: an atom type or LAMMPS's ranges *, N*, *M, N*M), with LAMMPS's
 * lexical rules: `#` comments, a trailing `&` continues a line,
 * "..." and '...' quote one word (no substitution or comment inside), and
 * $x, ${name} and $(formula) are substituted before the line is split into
 * words. Formulas: numbers, + - * / ^, unary signs, parentheses, v_name.
 *
 * A deck says what LAMMPS would run: a setting the deck leaves out takes
 * LAMMPS's default, not the benchmark's (thermo 0, timestep 0.005, neighbor
 * 0.3 bin, neigh_modify every 1 delay 0 check yes, pair_modify shift no, no
 * velocity command: atoms start at rest, no fix nve: nve = 0, thermo_style
 * one, thermo_modify norm yes). fix nvt integrates as fix nve does (nve = 1,
 * so both are refused together); with fix nvt or fix langevin the deck has
 * one run (each LAMMPS run starts the target's ramp again). The run-time
 * fields (transport, grid, use_gpu, velocity_mode, progress) are not deck
 * matters and keep what cfg held; dump_every/dump_file/dump_style change
 * only when the deck has a dump command. Each keyword is done as LAMMPS
 * does it (velocity create exactly: velocity_lammps.c) or refused.
 *
 * Several `run` commands: the first ends the set-up and later ones add their
 * steps; after the first run only `variable` and `run` are accepted, since
 * halox-md runs one set-up.
 */
#ifndef HALOX_MD_DECK_H
#define HALOX_MD_DECK_H

#include "halox.h"
#include "md/md_config.h"

#include <stddef.h>
#include <stdio.h>

/* Reads the deck at path into cfg (see above). vars: nvars "name=value"
 * strings from -var, defined as index-style variables before the deck is
 * read, so that they win over the deck's `variable NAME index ...` as in
 * LAMMPS. cfg is written only on success. HX_ERR_IO when the file cannot be
 * read, HX_ERR_PARSE ("path:line: ...") for a deck halox-md cannot run,
 * HX_ERR_INVALID for a malformed vars entry. */
hx_status hx_md_deck_read(const char *path, hx_md_config *cfg, const char *const *vars, int nvars);
/* The same from memory: len bytes of text (any bytes; no terminator
 * needed); name is used in messages. */
hx_status hx_md_deck_parse(const char *text, size_t len, const char *name, hx_md_config *cfg,
                           const char *const *vars, int nvars);

/* What the command line asked for besides the config. */
typedef struct hx_md_cli {
    int help;         /* -h or --help seen: print usage, run nothing */
    const char *deck; /* the -in FILE read (points into argv), or NULL */
} hx_md_cli;

/* Applies the halox-md command line (argv[0] is the program, as in main) to
 * cfg: first the deck (-in FILE, with every -var NAME VALUE), then all other
 * options in the order given, then hx_md_config_check(). cfg is written
 * only on success. HX_ERR_INVALID for a bad option or value; the deck's own
 * statuses pass through. With -h anywhere, sets cli->help and returns HX_OK
 * having read nothing. */
hx_status hx_md_config_apply_args(hx_md_config *cfg, int argc, char **argv, hx_md_cli *cli);

/* Checks every field of a config for a value the engine cannot run
 * (HX_ERR_INVALID, naming the field and the command-line option). */
hx_status hx_md_config_check(const hx_md_config *cfg);

/* Writes the command-line help. */
void hx_md_config_usage(FILE *out, const char *prog);

#endif /* HALOX_MD_DECK_H */
