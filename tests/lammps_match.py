#!/usr/bin/env python3
"""Runs halox-md (CPU engine) and LAMMPS (`lmp`) on the same decks and
compares their thermo rows.

Decks: a set of our own (21) that varies density, box shape, temperature, seed,
mass, cutoff (pair_style and pair_coeff), energy shift, skin, neighbour
every/delay/check, timestep, thermo interval, every velocity keyword,
thermo_style custom with thermo_modify norm, and fix nvt (1,000 steps; a
ramped target with tchain, tloop and drag).
Each runs on 1 and 3 ranks in both programs.

What must hold:
  - the header: the same column names;
  - step 0: every column identical as printed (same lattice bit for bit,
    same velocities, so only the last digit of a sum could differ, and
    at eight significant digits none does);
  - later rows: |a - b| <= 1e-6 * max(|a|, |b|, 1) per column.
    Where that bound comes from: the two codes add forces in different
    orders, so their forces differ by a few ulps (~1e-16 relative) per
    step; in a Lennard-Jones liquid that difference grows at most as
    exp(lambda t) with a largest Lyapunov exponent lambda of a few per tau
    (about 5 at these densities and temperatures), so over the 0.5-0.6 tau
    of these decks it stays below about 1e-16 * steps * exp(3) ~ 1e-12
    relative in the thermo averages. Rows are printed to 8 significant
    digits, which adds up to 1e-8 relative. 1e-6 is the bound of the issue
    (measured: 100 steps of 16 decks stayed within 5.5e-8), 100 times the
    print resolution; the largest difference seen is printed. The floor 1
    keeps a pressure that crosses zero from asking for a relative match of
    a difference of large terms (the virial, ~|E_pair| rho ~ 5 here).
Which runs are compared, as LAMMPS documents its loop modes:
  - loop geom: the same velocities for any rank count in both programs:
    halox-md on R ranks against LAMMPS on R ranks, R = 1 and 3;
  - loop all: LAMMPS numbers create_atoms' atoms by process, so its
    velocities change with the process count; halox-md numbers them as
    one LAMMPS process does on any rank count: halox-md on 1 and 3 ranks
    against LAMMPS on 1;
  - loop local: a stream per process over its own atoms, which depends on
    the decomposition in either program: 1 rank against 1 rank only.

Deck files (--deck, as tests/decks/in.pair_*: the pair styles): each with
velocity loop geom, compared like the decks above at 1 and 3 ranks; with
--deck, only those files run.

Trajectories: `dump ID all atom|xyz N FILE` with `dump_modify ID sort id`
on a small deck: halox-md's file on 1 and 3 ranks must equal LAMMPS's
(1 process) byte for byte (LAMMPS prints coordinates to 6 digits).

Exit 0 when every comparison holds; prints SKIPPED (and exits 0) when lmp
is not installed, so that ctest reports a skip, not a pass.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from checks import md_parser

TOL = 1e-6

# name: (cells, density, temperature, seed, velocity keywords, extra lines,
#        steps, thermo)
DECKS = [
    ("in.lj", (20, 20, 20), 0.8442, 1.44, 87287, "loop geom", [], 100, 50),
    ("bench", (9, 7, 8), 0.8442, 1.44, 87287, "loop geom", [], 100, 50),
    ("all_uniform", (9, 7, 8), 0.8442, 1.44, 87287, "", [], 100, 50),
    ("all_gauss", (8, 9, 7), 0.8, 1.0, 12345, "dist gaussian loop all", [], 100, 25),
    ("local", (9, 8, 8), 0.8442, 1.44, 4711, "loop local", [], 100, 50),
    ("local_gauss_rot", (8, 8, 9), 0.85, 1.2, 991, "dist gaussian loop local mom no rot yes", [],
     100, 50),
    ("geom_gauss_rot", (10, 8, 9), 0.9, 0.8, 31337, "dist gaussian loop geom rot yes", [], 100,
     20),
    ("geom_mom_no", (9, 9, 8), 0.8442, 1.44, 5, "loop geom mom no", [], 100, 50),
    ("dense_cold", (9, 8, 10), 1.0, 0.5, 777, "loop geom", ["neighbor 0.5 bin"], 100, 50),
    ("dilute_hot", (8, 9, 9), 0.7, 3.0, 2024, "loop all sum yes units box",
     ["neighbor 0.1 bin", "neigh_modify every 1 delay 0 check yes"], 100, 10),
    ("long_box", (16, 8, 8), 0.8442, 1.44, 87287, "loop geom",
     ["neigh_modify every 2 delay 4 check yes"], 100, 50),
    ("thin_box", (4, 10, 9), 0.8442, 1.44, 87287, "loop geom", [], 100, 50),
    ("flat_box", (12, 12, 8), 0.8442, 1.0, 424242, "dist gaussian loop geom", [], 100, 50),
    ("cutoff3", (10, 10, 9), 0.8442, 1.44, 87287, "loop geom", ["pair_style lj/cut 3.0",
                                                              "pair_coeff 1 1 1.0 1.0 3.0"],
     100, 50),
    ("coeff_cut_shift", (9, 8, 8), 0.8442, 1.44, 87287, "loop geom",
     ["pair_coeff 1 1 1.2 1.05 2.2", "pair_modify shift yes"], 100, 50),
    ("mass_dt", (9, 8, 9), 0.8442, 1.44, 6502, "dist gaussian loop all mom yes rot yes",
     ["mass 1 2.0", "timestep 0.003"], 150, 50),
    ("check_no", (9, 9, 9), 0.8442, 1.44, 87287, "loop geom",
     ["neigh_modify every 10 delay 0 check no"], 100, 50),
    ("every5_check", (8, 8, 10), 0.82, 1.6, 13, "dist gaussian loop geom mom yes rot no",
     ["neigh_modify every 5 delay 10 check yes"], 100, 50),
    # thermo_style custom and thermo_modify norm: header and step 0 as printed.
    ("custom_norm_no", (6, 7, 6), 0.8442, 1.44, 87287, "loop geom",
     ["thermo_style custom step temp pe ke etotal press vol density atoms epair emol",
      "thermo_modify norm no", "mass 1 1.3"], 100, 50),
    # fix nvt (Nose-Hoover chain): 1,000 steps of the melt at T 1.0, and a
    # ramped target with every option of the chain.
    ("nvt", (6, 6, 6), 0.8442, 1.44, 87287, "loop geom",
     ["fix 1 all nvt temp 1.0 1.0 0.5", "thermo_style custom step temp pe ke etotal press"],
     1000, 100),
    ("nvt_ramp_chain", (6, 6, 7), 0.8442, 1.2, 4711, "loop geom",
     ["fix t all nvt temp 1.5 0.9 0.2 tchain 5 tloop 2 drag 0.2",
      "neigh_modify every 1 delay 0 check yes",
      "thermo_style custom step temp pe ke etotal press vol density atoms"], 500, 100),
]


def deck_text(cells, rho, temp, seed, vel, extra):
    mass = [e for e in extra if e.startswith("mass")]
    style = [e for e in extra if e.startswith("pair_style")]
    coeff = [e for e in extra if e.startswith("pair_coeff")]
    fix = [e for e in extra if e.startswith("fix ")]
    rest = [e for e in extra if e not in mass + style + coeff + fix]
    lines = [
        "units lj",
        "atom_style atomic",
        "lattice fcc %r" % rho,
        "region box block 0 %d 0 %d 0 %d" % cells,
        "create_box 1 box",
        "create_atoms 1 box",
        (mass or ["mass 1 1.0"])[0],
        ("velocity all create %r %d %s" % (temp, seed, vel)).strip(),
        (style or ["pair_style lj/cut 2.5"])[0],
        (coeff or ["pair_coeff 1 1 1.0 1.0 2.5"])[0],
        "neighbor 0.3 bin",
        "neigh_modify delay 0 every 20 check no",
    ]
    lines += rest + (fix or ["fix 1 all nve"])
    return lines


# Trajectory decks: (name, dump style, file name).
DUMPS = [("dump_atom", "atom", "traj.atom"), ("dump_xyz", "xyz", "traj.xyz")]


def deck_files(given, only, tmp):
    """(name, path, velocity loop) of each deck to compare: the files given,
    else the built-in decks written into tmp."""
    if given:
        return [(os.path.basename(p), os.path.abspath(p), "geom") for p in given]
    out = []
    for (name, cells, rho, temp, seed, vel, extra, steps, thermo) in DECKS:
        if only and name not in only:
            continue
        lines = deck_text(cells, rho, temp, seed, vel, extra)
        path = os.path.join(tmp, "in." + name)
        with open(path, "w") as f:
            f.write("\n".join(lines + ["thermo %d" % thermo, "run %d" % steps]) + "\n")
        loop = "local" if "loop local" in vel else "geom" if "loop geom" in vel else "all"
        out.append((name, path, loop))
    return out


def thermo_rows(text):
    """The thermo rows as words, the header's words first (halox-md's log
    lines, HALOX_LOG=1, skipped)."""
    rows, on = [], False
    for line in text.splitlines():
        if line.startswith("halox["):
            continue
        words = line.split()
        if words[:2] == ["Step", "Temp"]:
            on = True
            rows.append(words)
            continue
        if on:
            if line.startswith("Loop time"):
                break
            if words:
                rows.append(words)
    return rows


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:]))
    return p.stdout


def main():
    ap = md_parser(__doc__.split("\n\n")[0])
    ap.add_argument("--lmp", default=os.environ.get("HALOX_LMP", "lmp"))
    ap.add_argument("--ranks", default="1,3")
    ap.add_argument("--only", default="", help="comma-separated deck names")
    ap.add_argument("--halox-args", default="", help="more halox-md options")
    ap.add_argument("--deck", action="append", default=[],
                    help="a deck file (velocity loop geom) to compare instead of the built-in decks")
    a = ap.parse_args()

    lmp = shutil.which(a.lmp)
    if not lmp:
        print("SKIPPED: no LAMMPS program '%s' (apt-get install lammps)" % a.lmp)
        return 0
    ranks = [int(r) for r in a.ranks.split(",")]
    if not a.mpiexec:
        ranks = [1]
        print("note: no MPI launcher; 1 rank only")

    def launch(n, prog):
        if n == 1 and not a.mpiexec:
            return [prog]
        return [a.mpiexec, "-n", str(n)] + a.mpiflags.split() + [prog]

    only = set(a.only.split(",")) if a.only else None
    worst, failures, compared = 0.0, [], 0
    with tempfile.TemporaryDirectory(prefix="halox-lammps-") as tmp:
        for (name, path, loop) in deck_files(a.deck, only, tmp):
            lam = {}
            for n in ranks:
                if loop == "local" and n != 1:
                    continue
                if loop == "all" and n != 1:
                    continue
                lam[n] = thermo_rows(run(launch(n, lmp) + ["-in", path, "-log", "none",
                                                           "-echo", "none"], tmp))
            for n in ranks:
                if loop == "local" and n != 1:
                    continue
                ref_n = 1 if loop == "all" else n
                mine = thermo_rows(run(launch(n, a.halox) + ["-in", path, "--cpu"] + a.halox_args.split(),
                                      tmp))
                ref = lam[ref_n]
                what = "%s: halox-md %d rank(s) vs LAMMPS %d" % (name, n, ref_n)
                compared += 1
                if len(mine) != len(ref) or not ref:
                    failures.append("%s: %d thermo rows vs %d" % (what, len(mine), len(ref)))
                    continue
                if mine[0] != ref[0]:
                    failures.append("%s: header %s vs %s" % (what, " ".join(mine[0]),
                                                             " ".join(ref[0])))
                    continue
                for r_m, r_l in zip(mine[1:], ref[1:]):
                    if r_m[0] != r_l[0]:
                        failures.append("%s: step %s vs %s" % (what, r_m[0], r_l[0]))
                        break
                    if r_m[0] == "0":
                        if r_m != r_l:
                            failures.append("%s: step 0 differs as printed:\n  %s\n  %s" %
                                            (what, " ".join(r_m), " ".join(r_l)))
                        continue
                    for col, (x, y) in enumerate(zip(r_m[1:], r_l[1:])):
                        x, y = float(x), float(y)
                        d = abs(x - y) / max(abs(x), abs(y), 1.0)
                        worst = max(worst, d)
                        if d > TOL:
                            failures.append("%s: step %s column %d: %r vs %r (%.2e)" %
                                            (what, r_m[0], col + 1, x, y, d))
            print("%-16s loop %-5s compared at %s rank(s)" %
                  (name, loop, ",".join(str(n) for n in ranks
                                         if not (loop == "local" and n != 1))))
        for (name, style, fname) in DUMPS:
            if (only and name not in only) or a.deck:
                continue
            lines = deck_text((6, 7, 8), 0.8442, 1.44, 87287, "loop geom", [])
            path = os.path.join(tmp, "in." + name)
            with open(path, "w") as f:
                f.write("\n".join(lines + ["dump d all %s 5 %s" % (style, fname),
                                            "dump_modify d sort id", "run 10"]) + "\n")
            run(launch(1, lmp) + ["-in", path, "-log", "none", "-echo", "none"], tmp)
            with open(os.path.join(tmp, fname), "rb") as f:
                want = f.read()
            for n in ranks:
                os.remove(os.path.join(tmp, fname))
                run(launch(n, a.halox) + ["-in", path, "--cpu"] + a.halox_args.split(), tmp)
                with open(os.path.join(tmp, fname), "rb") as f:
                    got = f.read()
                compared += 1
                if got != want:
                    failures.append("%s: halox-md's %s file on %d rank(s) differs from LAMMPS's "
                                    "(%d vs %d bytes)" % (name, style, n, len(got), len(want)))
            print("%-16s dump %-5s compared at %s rank(s)" %
                  (name, style, ",".join(str(n) for n in ranks)))
    print("%d comparisons, largest difference after step 0: %.2e (bound %.0e)" %
          (compared, worst, TOL))
    if compared == 0:
        failures.append("nothing was compared")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
