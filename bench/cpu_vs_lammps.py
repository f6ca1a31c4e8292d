#!/usr/bin/env python3
"""halox-md's CPU engine against LAMMPS's lj/cut/opt (`lmp -sf opt`), side
by side in one run, on the LJ benchmark deck (tests/decks/in.lj, 100 steps,
neighbour lists every 20 steps).

For each case (atoms, ranks) the two programs run in turn, --repeat times,
and the best of each is kept (the least disturbed run on a shared machine).
Printed per case, in seconds over the 100 steps (the average over ranks, as
both programs print it):
  force loop     halox-md: local + non-local forces; LAMMPS: Pair
  neighbour      halox-md: neighbour build;          LAMMPS: Neigh
  loop           both: Loop time
and the ratio halox-md / LAMMPS of each (below 1: halox-md is faster).

  bench/cpu_vs_lammps.py --halox build/tools/halox-md [--mpiexec mpiexec]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DECK = os.path.join(HERE, "..", "tests", "decks", "in.lj")
CASES = [(32000, 1), (32000, 2), (256000, 2)]


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit("%s failed:\n%s" % (" ".join(cmd), p.stdout[-3000:]))
    return p.stdout


def halox_times(out):
    def stage(name):
        m = re.search(r"^\s*%s\s+([0-9.eE+-]+)" % re.escape(name), out, re.M)
        if not m:
            sys.exit("halox-md printed no '%s' row:\n%s" % (name, out[-2000:]))
        return float(m.group(1))
    loop = float(re.search(r"Loop time of ([0-9.eE+-]+)", out).group(1))
    return stage("local forces") + stage("non-local forces"), stage("neighbour build"), loop


def lammps_times(out):
    def row(name):
        m = re.search(r"^%s\s+\|\s*[0-9.eE+-]+\s*\|\s*([0-9.eE+-]+)" % name, out, re.M)
        if not m:
            sys.exit("LAMMPS printed no '%s' row:\n%s" % (name, out[-2000:]))
        return float(m.group(1))
    loop = float(re.search(r"Loop time of ([0-9.eE+-]+)", out).group(1))
    return row("Pair"), row("Neigh"), loop


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--halox", required=True)
    ap.add_argument("--lmp", default="lmp")
    ap.add_argument("--mpiexec", default="", help="MPI launcher (needed for 2 ranks)")
    ap.add_argument("--mpiflags", default="")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default="", help="e.g. 32000x1,256000x2")
    a = ap.parse_args()
    lmp = shutil.which(a.lmp)
    if not lmp:
        sys.exit("no LAMMPS program '%s' (apt-get install lammps)" % a.lmp)
    cases = CASES
    if a.cases:
        cases = [tuple(int(v) for v in c.split("x")) for c in a.cases.split(",")]

    def launch(n, prog):
        if n == 1 and not a.mpiexec:
            return [prog]
        if not a.mpiexec:
            sys.exit("%d ranks need --mpiexec" % n)
        return [a.mpiexec, "-n", str(n)] + a.mpiflags.split() + [prog]

    print("halox-md CPU engine vs LAMMPS lj/cut/opt (-sf opt), in.lj, 100 steps, "
          "best of %d, seconds" % a.repeat)
    print("%9s %5s | %-22s | %-22s | %-22s" % ("atoms", "ranks", "force loop  halox  lmp",
                                                 "neighbour  halox  lmp", "loop  halox  lmp"))
    for atoms, ranks in cases:
        cells = round((atoms / 4) ** (1 / 3))
        if 4 * cells ** 3 != atoms:
            sys.exit("%d atoms is not 4 n^3" % atoms)
        x = cells / 20
        if x != int(x):
            sys.exit("%d atoms: in.lj scales 20^3 cells by whole numbers" % atoms)
        var = ["-var", "x", str(int(x)), "-var", "y", str(int(x)), "-var", "z", str(int(x))]
        best_h, best_l = None, None
        for _ in range(a.repeat):
            h = halox_times(run(launch(ranks, a.halox) + ["-in", DECK, "--cpu"] + var))
            l = lammps_times(run(launch(ranks, lmp) + ["-sf", "opt", "-in", DECK, "-log",
                                                       "none", "-echo", "none"] + var))
            best_h = h if best_h is None else tuple(min(p, q) for p, q in zip(best_h, h))
            best_l = l if best_l is None else tuple(min(p, q) for p, q in zip(best_l, l))
        cols = ["%6.3f %6.3f %5.2fx" % (hh, ll, hh / ll) for hh, ll in zip(best_h, best_l)]
        print("%9d %5d | %s" % (atoms, ranks, " | ".join(cols)))
        sys.stdout.flush()
    print("ratio = halox-md time / LAMMPS time (below 1: halox-md is faster)")


if __name__ == "__main__":
    main()
