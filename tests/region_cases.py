#!/usr/bin/env python3
"""halox-md's `create_atoms T region ID` (CPU engine), in three parts.

--part lammps: the same decks in halox-md and LAMMPS (`lmp`) at 1, 2 and
3 ranks: a liquid slab filling 8 of 20 cells along z (`region slab block
INF INF INF INF 0 8`, `processors 1 1 *`: at 3 ranks the top rank starts
with no atom), a block in x and y (`units box` bounds, a grid along x and
y), two types in two regions (two create_atoms commands), and a tilted
prism region (EDGE for zlo) under a block of another type, each with
`velocity ... loop geom` and `loop all` (the latter with the ranks
along z: LAMMPS's ids are those of one process's loop there). The thermo rows within
lammps_match.py's bound (step 0 as printed), and a `dump ... atom` with
`dump_modify sort id` of step 0 equal to LAMMPS's byte for byte.

--part balance: the slab with `balance 1.1 shift z 20 1.0` at 2, 3, 4 and 8
ranks: every line of the balance reports (cuts, imbalance factors, not
the time) as LAMMPS prints it, and the thermo rows within the bound.

--part bad: a region not defined, a region outside the box, a prism
region with an INF bound and one whose bounds do not increase: one clear
error each, naming the deck's line.

--part restart: the slab's restart file, written at step 100 on 2 ranks,
continued to step 200 on 2 and 3 ranks: the rows of steps 100-200 as the
run that went straight through printed them (the file holds fewer atoms
than the lattice's sites). Then the slab with `balance 1.1 shift z 20
1.0` on 2 ranks: its file (version 6) holds the cuts; continued on 2
ranks it prints the straight run's rows and writes at step 200 the
straight run's file byte for byte (atoms and cuts); a `balance 1.0 shift
z 20 1.0` after read_restart starts from the file's cuts (initial
imbalance below 1.1); on 3 ranks (another grid) a note says the domains
are uniform and the same balance starts from them (initial imbalance
above 2). The file's cuts damaged (a flipped byte) or its version set to
5 (which holds no cuts) with the header resealed: one ERROR line each.

--part lammps and --part balance print SKIPPED (exit 0) when lmp is not
installed.
"""
import os
import struct
import sys

from balance_cases import compare_rows, reports, run_parts
from lammps_match import TOL, thermo_rows
from restart_cases import fnv

HEAD = """units lj
atom_style atomic
processors {procs}
lattice fcc 0.8442
region box block 0 {nx} 0 {ny} 0 {nz}
create_box {ntypes} box
"""

TAIL = """velocity all create 1.44 87287 loop {loop}
pair_style lj/cut 2.5
{coeffs}
neighbor 0.3 bin
neigh_modify every 20 delay 0 check no
fix 1 all nve
"""

ONE = "pair_coeff 1 1 1.0 1.0 2.5"
TWO = "pair_coeff 1 1 1.0 1.0 2.5\npair_coeff 2 2 0.5 0.88 2.5\npair_coeff 1 2 1.5 0.8 2.5"

# name: (cells, grid at 1/2/3 ranks, ntypes, region and create_atoms lines, masses, coeffs)
SYSTEMS = {
    "slab": ((8, 8, 20), ("1 1 *",) * 3, 1,
             ["region slab block INF INF INF INF 0 8", "create_atoms 1 region slab"],
             ["mass 1 1.0"], ONE),
    "block_xy": ((10, 10, 6), ("1 1 1", "2 1 1", "3 1 1"), 1,
                 ["region blk block 0 9.0 2.5 12.0 INF INF units box",
                  "create_atoms 1 region blk"], ["mass 1 1.0"], ONE),
    "two_types": ((8, 8, 16), ("1 1 *",) * 3, 2,
                  ["region lo block INF INF INF INF 0 4", "region hi block INF INF INF INF 8 12",
                   "create_atoms 1 region lo", "create_atoms 2 region hi"],
                  ["mass 1 1.0", "mass 2 2.0"], TWO),
    "prism": ((8, 8, 12), ("1 1 *",) * 3, 2,
              ["region p prism 0.5 6 1 6.5 EDGE 9 1.5 1 -0.5",
               "region q block INF INF INF INF 9.5 EDGE", "create_atoms 1 region p",
               "create_atoms 2 region q"], ["mass 1 1.0", "mass 2 2.0"], TWO),
}


def deck(name, nranks, loop="geom", extra=(), steps=200):
    cells, grids, ntypes, fill, masses, coeffs = SYSTEMS[name]
    procs = grids[nranks - 1] if nranks <= 3 else grids[-1]
    if loop == "all":
        # LAMMPS tags each process's new atoms in turn: the ids are those
        # of one process's loop (halox-md's) when the ranks split z alone.
        procs = "1 1 *"
    text = HEAD.format(procs=procs, nx=cells[0], ny=cells[1], nz=cells[2], ntypes=ntypes)
    text += "\n".join(fill + masses) + "\n" + TAIL.format(loop=loop, coeffs=coeffs)
    return text + "\n".join(list(extra) + ["thermo 50", "run %d" % steps]) + "\n"


def part_lammps(r, lmp, failures):
    worst = 0.0
    for name in SYSTEMS:
        for loop in ("geom", "all"):
            for n in (1, 2, 3):
                text = deck(name, n, loop)
                _, lam, _ = r.run(n, lmp, text, ["-log", "none", "-echo", "none"])
                _, mine, _ = r.run(n, r.a.halox, text, ["--cpu"])
                what = "%s loop %s at %d ranks" % (name, loop, n)
                worst = max(worst, compare_rows(what, thermo_rows(mine), thermo_rows(lam),
                                                failures))
                print("%-9s loop %-4s %d ranks: thermo alike" % (name, loop, n))
        dump = ["dump d all atom 10 dump.atom", "dump_modify d sort id"]
        r.run(1, lmp, deck(name, 1, extra=dump, steps=0), ["-log", "none", "-echo", "none"])
        want = open(os.path.join(r.tmp, "dump.atom"), "rb").read()
        for n in (1, 3):
            os.remove(os.path.join(r.tmp, "dump.atom"))
            r.run(n, r.a.halox, deck(name, n, extra=dump, steps=0), ["--cpu"])
            got = open(os.path.join(r.tmp, "dump.atom"), "rb").read()
            if got != want:
                failures.append("%s: the dump at step 0 on %d ranks differs from LAMMPS's "
                                "(%d vs %d bytes)" % (name, n, len(got), len(want)))
        print("%-9s dump at step 0 alike at 1 and 3 ranks" % name)
    print("largest relative thermo difference: %.2e (bound %.0e)" % (worst, TOL))


def part_balance(r, lmp, failures):
    # 8 ranks: the slab's 17 lattice planes cannot split evenly (no cut
    # splits a plane), so the least imbalance is above 1, as LAMMPS's.
    for n in (2, 3, 4, 8):
        text = deck("slab", n, extra=["balance 1.1 shift z 20 1.0"])
        _, lam, _ = r.run(n, lmp, text, ["-log", "none", "-echo", "none"])
        _, mine, _ = r.run(n, r.a.halox, text, ["--cpu"])
        what = "slab balanced at %d ranks" % n
        if reports(mine) != reports(lam) or len(reports(lam)) < 4:
            failures.append("%s: balance reports differ:\n  %s\nLAMMPS:\n  %s" %
                            (what, "\n  ".join(reports(mine)), "\n  ".join(reports(lam))))
        compare_rows(what, thermo_rows(mine), thermo_rows(lam), failures)
        print("%s: %d report lines alike" % (what, len(reports(lam))))


BAD = [
    (["create_atoms 1 region nowhere"], 7, "create_atoms: no region 'nowhere'"),
    (["region far block INF INF INF INF 25 30", "create_atoms 1 region far"], 8,
     "create_atoms 1 region far: the region (z from"),
    (["region p prism INF 4 0 4 0 4 1 0 0", "create_atoms 1 region p"], 8,
     "create_atoms 1 region p: a prism with an INF bound along x"),
    (["region p prism 0 4 2 2 0 4 1 0 0", "create_atoms 1 region p"], 8,
     "the prism's ylo is not below its yhi"),
]


def part_bad(r, failures):
    for lines, line, want in BAD:
        text = HEAD.format(procs="1 1 *", nx=8, ny=8, nz=20, ntypes=1) + "\n".join(lines)
        text += "\nmass 1 1.0\n" + TAIL.format(loop="geom", coeffs=ONE) + "run 10\n"
        rc, out, path = r.run(2, r.a.halox, text, ["--cpu"], ok=False)
        errors = set(l for l in out.splitlines() if "ERROR" in l)
        where = "%s:%d:" % (os.path.basename(path), line)
        if rc == 0 or len(errors) != 1 or want not in out or where not in out:
            failures.append("%s: exit %d, want one error at %s with %r:\n%s" %
                            (lines, rc, where, want, out[-1200:]))
        print("refused: %s" % " / ".join(lines))


def part_restart(r, failures):
    straight = thermo_rows(r.run(2, r.a.halox, deck("slab", 2, steps=200), ["--cpu"])[1])
    r.run(2, r.a.halox, deck("slab", 2, steps=100) + "write_restart slab.rst\n", ["--cpu"])
    cont = "read_restart slab.rst\n" + "\n".join(TAIL.format(loop="geom", coeffs=ONE).split(
        "\n")[1:]) + "thermo 50\nrun 100\n"
    for n in (2, 3):
        rows = thermo_rows(r.run(n, r.a.halox, cont, ["--cpu"])[1])[1:]
        want = [row for row in straight[1:] if float(row[0]) >= 100]
        if rows != want or len(want) < 3:
            failures.append("slab restart continued on %d ranks: rows %s, want %s" %
                            (n, rows, want))
        print("slab restart continued on %d ranks: %d rows as the straight run" % (n, len(rows)))
    balanced_restart(r, failures)


def imbalance(text):
    """The initial imbalance factor of the first balance report."""
    for l in text.splitlines():
        if l.startswith("  initial/final imbalance factor"):
            return float(l.split("=")[1].split()[0])
    return None


def balanced_restart(r, failures):
    bal = ["balance 1.1 shift z 20 1.0"]
    straight = r.run(2, r.a.halox, deck("slab", 2, extra=bal, steps=200) +
                     "write_restart b200.rst\n", ["--cpu"])[1]
    r.run(2, r.a.halox, deck("slab", 2, extra=bal, steps=100) + "write_restart b100.rst\n",
          ["--cpu"])
    tail = "\n".join(TAIL.format(loop="geom", coeffs=ONE).split("\n")[1:])
    cont = "read_restart b100.rst\n" + tail + "thermo 50\nrun 100\nwrite_restart c200.rst\n"
    out = r.run(2, r.a.halox, cont, ["--cpu"])[1]
    want = [row for row in thermo_rows(straight)[1:] if float(row[0]) >= 100]
    same = open(os.path.join(r.tmp, "b200.rst"), "rb").read() == open(
        os.path.join(r.tmp, "c200.rst"), "rb").read()
    if thermo_rows(out)[1:] != want or len(want) < 3 or not same or "note:" in out:
        failures.append("balanced slab continued on 2 ranks: rows %s, want %s; step-200 files "
                        "equal: %s\n%s" % (thermo_rows(out)[1:], want, same, out[-800:]))
    print("balanced slab continued on 2 ranks: the straight run's rows and step-200 file")
    rebal = cont.replace("thermo 50", "balance 1.0 shift z 20 1.0\nthermo 50")
    for n, ok in ((2, lambda f: f is not None and f < 1.1),
                  (3, lambda f: f is not None and f > 2.0)):
        out = r.run(n, r.a.halox, rebal, ["--cpu"])[1]
        note = "holds the domains' cuts of grid 1x1x2; with another rank grid (grid 1x1x3)"
        if not ok(imbalance(out)) or (note in out) != (n == 3):
            failures.append("balance after read_restart on %d ranks: initial imbalance %s, "
                            "note %s:\n%s" % (n, imbalance(out), note in out, out[-1500:]))
        print("balance after read_restart on %d ranks: initial imbalance %s" %
              (n, imbalance(out)))
    damaged_cuts(r, failures)


def damaged_cuts(r, failures):
    data = open(os.path.join(r.tmp, "b100.rst"), "rb").read()
    flip = bytearray(data)
    flip[256 + 20] ^= 1
    old = bytearray(data)
    old[8:12] = struct.pack("<I", 5)
    old[248:256] = struct.pack("<Q", fnv(bytes(old[:248])))
    for name, blob, want in (("flip.rst", flip, "the domains' cuts' checksum does not match"),
                             ("old.rst", old, "inconsistent header")):
        with open(os.path.join(r.tmp, name), "wb") as f:
            f.write(bytes(blob))
        rc, out, _ = r.run(2, r.a.halox, "read_restart %s\nrun 10\n" % name, ["--cpu"],
                           ok=False)
        errors = set(l for l in out.splitlines() if "ERROR" in l)
        if rc == 0 or len(errors) != 1 or want not in out:
            failures.append("%s: exit %d, want one error with %r:\n%s" %
                            (name, rc, want, out[-1200:]))
        print("refused: %s (%s)" % (name, want))


def main():
    return run_parts(__doc__, {"lammps": part_lammps, "balance": part_balance,
                               "bad": lambda r, lmp, failures: part_bad(r, failures),
                               "restart": lambda r, lmp, failures: part_restart(r, failures)},
                     ("lammps", "balance"), "halox-region-", "1 to 4")


if __name__ == "__main__":
    sys.exit(main())
