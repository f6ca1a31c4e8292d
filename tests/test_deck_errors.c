/*
 * test_deck_errors.c - test_deck's rejected decks: every bad line or deck
 * gets its status and a message naming the file and the line, and leaves
 * the configuration as it was; the reader's bounds on work and counts.
 */
#include "test_deck.h"

#include <stdio.h>
#include <string.h>

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
     "t.in:11: a second velocity create"},
    {"velocity all create 1.0 2147483648", HX_ERR_PARSE, "t.in:10: velocity: seed must be"},
    {"velocity all create 1.0 5 loop", HX_ERR_PARSE, "t.in:10: velocity keyword 'loop' has no"},
    {"velocity all ramp vz 0 1 z 0 5", HX_ERR_PARSE, "t.in:10: velocity style 'ramp'"},
    {"velocity all set 1 0 0\nvelocity all create 1.0 5", HX_ERR_PARSE,
     "t.in:11: velocity create after velocity set"},
    {"velocity all set v_vz 0 0", HX_ERR_PARSE, "t.in:10: velocity set v_vz: halox-md sets"},
    {"velocity all set 1 0", HX_ERR_PARSE, "t.in:10: velocity takes more arguments"},
    {"velocity all set 1 0 x", HX_ERR_PARSE, "t.in:10: velocity: component 'x' is not"},
    {"velocity all set 1 0 0 sum maybe", HX_ERR_PARSE, "t.in:10: velocity: sum must be yes"},
    {"velocity all set 1 0 0 units cm", HX_ERR_PARSE, "t.in:10: velocity: units must be"},
    {"velocity all set 1 0 0 loop all", HX_ERR_PARSE, "t.in:10: velocity set keyword 'loop'"},
    {"velocity all set 1 0 0 sum", HX_ERR_PARSE, "t.in:10: velocity keyword 'sum' has no"},
    {"velocity all set 1.5e308 0 0", HX_ERR_PARSE, "t.in:10: velocity set: component 1.5e308"},
    {"velocity all set 1 0 0\nvelocity all set 1 0 0\nvelocity all set 1 0 0\n"
     "velocity all set 1 0 0\nvelocity all set 1 0 0",
     HX_ERR_PARSE, "t.in:14: more than 4 velocity set"},
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

void test_errors(void)
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
        HXT_FAILS(deck_parse_text("variable x equal 3\nrun 1\n", &c, x2, 1), HX_ERR_PARSE,
                  "t.in:1: variable x is index-style (perhaps from -var)");
        HXT_FAILS(deck_parse_text(HEAD "run 1", &c, bad1, 1), HX_ERR_INVALID, "-var '=3'");
        HXT_FAILS(deck_parse_text(HEAD "run 1", &c, bad2, 1), HX_ERR_INVALID, "-var 'noequals'");
        HXT_FAILS(deck_parse_text(HEAD "run 1", &c, twice, 2), HX_ERR_INVALID,
                  "-var x is given twice");
    }

    /* Count bounds: variables and regions. */
    {
        size_t n = 0;
        for (int i = 0; i < 257; i++)
            n += (size_t) snprintf(text + n, sizeof text - n, "variable v%d index %d\n", i, i);
        HXT_FAILS(deck_parse_text(text, &c, NULL, 0), HX_ERR_PARSE,
                  "t.in:257: more than 256 variables");
        n = (size_t) snprintf(text, sizeof text, "lattice fcc 1\n");
        for (int i = 0; i < 17; i++)
            n += (size_t) snprintf(text + n, sizeof text - n, "region r%d block 0 1 0 1 0 1\n", i);
        HXT_FAILS(deck_parse_text(text, &c, NULL, 0), HX_ERR_PARSE,
                  "t.in:18: more than 16 regions");
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
        HXT_FAILS(deck_parse_text(text, &c, NULL, 0), HX_ERR_PARSE, "too much work");
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
        HXT_FAILS(deck_parse_text(text, &c, NULL, 0), HX_ERR_PARSE,
                  "t.in:2: the command grows past 65536 bytes");
    }
}
