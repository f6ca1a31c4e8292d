#!/usr/bin/env python3
"""halox-md's `balance` and `fix balance` (CPU engine), in three parts.

--part lammps: the same decks in halox-md and LAMMPS (`lmp`) at 2, 3 and
4 ranks: an 8x8x8 fcc melt split along z (`processors 1 1 *`) with first
`balance 1.0 z FRACS` (uneven cuts: the uneven system, since halox-md
fills the whole box) then `balance 1.0 shift z 20 1.0`; the same split
along x and y (`balance 1.0 x ... y ...`, then `shift xy 10 1.05`);
`shift xyz` over a grid of one domain along x and y (LAMMPS counts its
rounds there too); a `balance 9.5 ...` below its threshold; `fix
balance` every 50 steps after uneven cuts, in the orthorhombic box and in
a triclinic one. Every line of the balance reports (iteration count,
loads, imbalance factors, cuts; not the time) must be the same as
printed, and the thermo rows within lammps_match.py's bound (step 0 as
printed).

--part md: `fix lb all balance 100 1.0 shift z 10 1.05` over 300 steps at
2, 3 and 4 ranks: the thermo rows within the bound of the run without it,
the atom count intact, and the log (HALOX_LOG=1) showing the rebalances;
a run continued from a restart file written after rebalances gives the
straight run's rows.

--part drift: the slab drifting up the box (tests/slab_drift.py) in
halox-md and LAMMPS: on 4 uniform domains along z, where the lower rank
empties mid-run and the upper one fills, and under fix balance at 2, 3
and 4 ranks. The thermo rows within lammps_match.py's bound of LAMMPS's
(step 0 as printed) and of the uniform run's, the atom count intact,
and halox-md's dump after every rebuild (every 5 steps) holding each id
once; on the uniform domains the dump shows domain 0 full at step 0 and
empty at the end, the top one the reverse.

--part bad: bad input fails with one clear message each, within a
timeout (never a hang): cuts not increasing, a cut count that does not
fit the grid, a domain thinner than the cutoff allows, rcb, weight, out,
and fix balance rcb.

--part lammps and --part drift print SKIPPED (exit 0) when lmp is not
installed.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import slab_drift
from checks import md_parser
from lammps_match import TOL, thermo_rows


def head():
    """tests/balance_decks/in.skew up to its balance lines, 8x8x8 cells,
    the grid left to a format field {procs}."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "balance_decks", "in.skew")
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith(("#", "balance", "thermo", "run")):
                continue
            if line.startswith("processors"):
                line = "processors {procs}\n"
            out.append(line.replace("variable n index 20", "variable n index 8"))
    return "".join(out)


HEAD = head()
LINE = HEAD.count("\n") + 1  # the deck line of the first balance or fix balance

# name: ranks -> (processors, balance lines)
Z_CUTS = {2: "0.3", 3: "0.2 0.4", 4: "0.15 0.3 0.45"}
# Off the lattice planes (every 0.05 of 10 cells): an atom exactly on a cut
# is owned by its height here and by its lamda coordinate in LAMMPS, which
# may round to either side in a triclinic box.
TRI_CUTS = {2: "0.32", 3: "0.22 0.41", 4: "0.17 0.32 0.47"}
XY = {2: ("2 1 1", "x 0.3"), 3: ("3 1 1", "x 0.2 0.4"), 4: ("2 2 1", "x 0.3 y 0.6")}


def lammps_decks(n):
    px, cuts = XY[n]
    xy = "x" if n < 4 else "xy"
    return {
        "slab_z": ("1 1 *", ["balance 1.0 z %s" % Z_CUTS[n], "balance 1.0 shift z 20 1.0"]),
        "block_xy": (px, ["balance 1.0 %s" % cuts, "balance 1.0 shift %s 10 1.05" % xy]),
        "lattice_z": ("1 1 *", ["balance 1.0 shift z 20 1.0"]),
        "xyz": ("1 1 *", ["balance 1.0 z %s" % Z_CUTS[n], "balance 1.0 shift xyz 20 1.01"]),
        "below": ("1 1 *", ["balance 1.0 z %s" % Z_CUTS[n], "balance 9.5 shift z 20 1.0"]),
        "fix_z": ("1 1 *", ["balance 1.0 z %s" % Z_CUTS[n],
                            "fix lb all balance 50 1.0 shift z 10 1.05"]),
        "tri_fix": (None, None),
    }


def tri_deck(n):
    """tests/decks/in.tri_melt, 10 cells tilted by 2, split along z with
    uneven cuts, then fix balance every 50 steps: a rebuild forced off the
    every-20 schedule (as LAMMPS's), in a triclinic box."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "decks", "in.tri_melt")
    out = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            if w[0] == "variable":
                line = line.replace("index 40", "index 10").replace("index 8", "index 2")
            if w[0] == "run":
                line = "run 200\n"
            out.append(line)
            if w[0] == "units":
                out.append("processors 1 1 *\n")
            if w[0] == "fix":
                out.append("balance 1.0 z %s\nfix lb all balance 50 1.0 shift z 10 1.02\n" %
                           TRI_CUTS[n])
    return "".join(out)


def deck(procs, lines, steps=100, thermo=50):
    return HEAD.format(procs=procs) + "\n".join(lines) + "\nthermo %d\nrun %d\n" % (thermo, steps)


def reports(text):
    """The balance report lines, without the time."""
    keys = ("Balancing", "  iteration count", "  initial/final", "  x cuts", "  y cuts",
            "  z cuts")
    return [l.rstrip() for l in text.splitlines() if l.startswith(keys)]


def compare_rows(what, mine, ref, failures):
    if len(mine) != len(ref) or not ref:
        failures.append("%s: %d thermo rows vs %d" % (what, len(mine), len(ref)))
        return 0.0
    worst = 0.0
    for r_m, r_l in zip(mine[1:], ref[1:]):
        if r_m[0] == "0" and r_m != r_l:
            failures.append("%s: step 0 differs: %s vs %s" % (what, r_m, r_l))
        for x, y in zip(r_m[1:], r_l[1:]):
            x, y = float(x), float(y)
            d = abs(x - y) / max(abs(x), abs(y), 1.0)
            worst = max(worst, d)
            if d > TOL:
                failures.append("%s: step %s: %r vs %r (%.2e)" % (what, r_m[0], x, y, d))
    return worst


class Runner:
    def __init__(self, a, tmp):
        self.a, self.tmp, self.n = a, tmp, 0

    def launch(self, n, prog):
        return [self.a.mpiexec, "-n", str(n)] + self.a.mpiflags.split() + [prog]

    def run(self, n, prog, text, args=(), env=None, ok=True):
        self.n += 1
        path = os.path.join(self.tmp, "in.%d" % self.n)
        with open(path, "w") as f:
            f.write(text)
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.run(self.launch(n, prog) + ["-in", path] + list(args), cwd=self.tmp,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=300, env=e)
        if ok and p.returncode != 0:
            raise RuntimeError("%s -in %s failed (%d):\n%s" % (prog, path, p.returncode,
                                                               p.stdout[-2000:]))
        return p.returncode, p.stdout, path


def part_lammps(r, lmp, failures):
    worst = 0.0
    for n in (2, 3, 4):
        for name, (procs, lines) in lammps_decks(n).items():
            text = tri_deck(n) if name == "tri_fix" else deck(procs, lines)
            _, lam, _ = r.run(n, lmp, text, ["-log", "none", "-echo", "none"])
            _, mine, _ = r.run(n, r.a.halox, text, ["--cpu"])
            what = "%s at %d ranks" % (name, n)
            if reports(mine) != reports(lam) or len(reports(lam)) < 7:
                failures.append("%s: balance reports differ:\n  %s\nLAMMPS:\n  %s" %
                                (what, "\n  ".join(reports(mine)), "\n  ".join(reports(lam))))
            worst = max(worst, compare_rows(what, thermo_rows(mine), thermo_rows(lam), failures))
            print("%-10s %d ranks: %d report lines alike" % (name, n, len(reports(lam))))
    print("largest relative thermo difference: %.2e (bound %.0e)" % (worst, TOL))


def part_md(r, failures):
    fix = "fix lb all balance 100 1.0 shift z 10 1.05"
    for n in (2, 3, 4):
        _, plain, _ = r.run(n, r.a.halox, deck("1 1 *", [], 300, 100), ["--cpu"])
        _, bal, _ = r.run(n, r.a.halox, deck("1 1 *", [fix], 300, 100), ["--cpu"],
                          {"HALOX_LOG": "1"})
        what = "fix balance at %d ranks" % n
        rows = thermo_rows(bal)
        if rows and rows[0][-1] != "Volume":
            failures.append("%s: no Volume column (LAMMPS's thermo_style one adds it)" % what)
        compare_rows(what, [r[:-1] for r in rows], thermo_rows(plain), failures)
        if "with 2048 atoms" not in bal:
            failures.append("%s: the atom count changed:\n%s" % (what, bal[-1500:]))
        count = bal.count("fix balance: imbalance")
        if count < 2:
            failures.append("%s: %d rebalances logged (want the set-up's and more)" % (what,
                                                                                        count))
        print("%s: %d rebalances, thermo alike" % (what, count))
    # A run continued from a restart file written after rebalances: the
    # file holds the cuts (version 6), restored on the same grid; the
    # continued run's fix balance starts from them at its set-up, and its
    # rows are the straight run's.
    _, straight, _ = r.run(3, r.a.halox, deck("1 1 *", [fix], 300, 50), ["--cpu"])
    r.run(3, r.a.halox, deck("1 1 *", [fix], 150, 50) + "write_restart r.bin\n", ["--cpu"])
    cont = "\n".join(["read_restart r.bin", "processors 1 1 *",
                      "neigh_modify every 20 delay 0 check no", "fix 1 all nve", fix,
                      "thermo 50", "run 150"]) + "\n"
    _, after, _ = r.run(3, r.a.halox, cont, ["--cpu"])
    rows = thermo_rows(straight)
    compare_rows("fix balance continued from a restart file", thermo_rows(after),
                 rows[:1] + [row for row in rows[1:] if int(row[0]) >= 150], failures)
    print("fix balance continued from a restart file: thermo alike")


def part_drift(r, lmp, failures):
    uniform = None
    for n, procs, fix in ((4, "1 1 4", False), (2, "1 1 *", True), (3, "1 1 *", True),
                          (4, "1 1 *", True)):
        what = "drifting slab at %d ranks%s" % (n, " under fix balance" if fix else "")
        _, lam, _ = r.run(n, lmp, slab_drift.deck(procs, fix), ["-log", "none", "-echo", "none"])
        # halox-md dumps after every rebuild (every 5 steps): ids intact.
        _, mine, _ = r.run(n, r.a.halox, slab_drift.deck(procs, fix, 5), ["--cpu"],
                           {"HALOX_LOG": "1"})
        # One rebalance at the set-up and one every 100 steps.
        count = mine.count("fix balance: imbalance")
        if count != (slab_drift.STEPS // 100 + 1 if fix else 0):
            failures.append("%s: %d rebalances logged" % (what, count))
        rows, ref = thermo_rows(mine), thermo_rows(lam)
        worst = compare_rows(what, rows, ref, failures)
        if uniform is None:
            uniform = rows
        else:  # the cuts moving change nothing beyond the bound (fix balance adds Volume)
            worst = max(worst, compare_rows(what + " against the uniform run",
                                            [row[:len(uniform[0])] for row in rows], uniform,
                                            failures))
        if len(ref) != slab_drift.STEPS // 100 + 2 or "with 2176 atoms" not in mine:
            failures.append("%s: %d LAMMPS rows, atom count line %s" %
                            (what, len(ref), "with 2176 atoms" in mine))
        fr = slab_drift.frames(os.path.join(r.tmp, slab_drift.DUMP), n)
        if len(fr) != slab_drift.STEPS // 5 + 1 or not all(f[2] for f in fr):
            failures.append("%s: %d dump frames, ids intact in %d" %
                            (what, len(fr), sum(1 for f in fr if f[2])))
        if not fix and not slab_drift.emptied(fr):
            failures.append("%s: domain 0 does not empty, or the top one fill: %s" %
                            (what, [f[1] for f in fr[::20]]))
        print("%s: rows within %.2e of LAMMPS's (and the uniform run's), %d frames with ids "
              "intact, %d rebalances, atoms per uniform domain %s -> %s" %
              (what, worst, len(fr), count, fr[0][1] if fr else None, fr[-1][1] if fr else None))


BAD = [
    (2, "1 1 *", ["balance 1.0 z 0.4 0.2"], [], "must increase strictly", True),
    (2, "1 1 *", ["balance 1.0 z 0.3 0.6"], [],
     "balance (deck line %d) z: 2 fractions for 2 domains" % LINE, False),
    (2, "1 1 *", ["balance 1.0 z 0.1"], [],
     "balance (deck line %d): the new cuts along z cannot be used" % LINE, False),
    (2, "1 1 *", ["balance 1.0 rcb"], [], "balance rcb is not supported", True),
    (2, "1 1 *", ["balance 1.0 shift z 20 1.0 weight time 0.8"], [],
     "balance weight is not supported", True),
    (2, "1 1 *", ["balance 1.0 shift z 20 1.0 out bal.txt"], [], "balance out is not supported",
     True),
    (2, "1 1 *", ["balance 0.5 shift z 20 1.0"], [], "must be >= 1.0", True),
    (2, "1 1 *", ["balance 1.0 shift zz 20 1.0"], [], "names z twice", True),
    (2, "1 1 *", ["fix lb all balance 100 1.0 rcb"], [], "fix balance rcb is not supported", True),
    (2, "1 1 *", ["fix lb all balance 100 1.0 shift z 0 1.05"], [], "NITER", True),
]


def part_bad(r, failures):
    for n, procs, lines, args, want, at_deck in BAD:
        try:
            rc, out, path = r.run(n, r.a.halox, deck(procs, lines, 10, 10), args, ok=False)
        except subprocess.TimeoutExpired:
            failures.append("%s: hangs" % lines)
            continue
        errors = [l for l in out.splitlines() if "ERROR" in l]
        if rc == 0 or want not in out or len(set(errors)) != 1:
            failures.append("%s %s: exit %d, want one error with %r:\n%s" %
                            (lines, args, rc, want, out[-1200:]))
        elif at_deck and "%s:%d:" % (os.path.basename(path), LINE) not in out:
            failures.append("%s: the message names no file and line:\n%s" % (lines, out))
        print("refused: %s %s" % (" ".join(lines), " ".join(args)))


def run_parts(doc, parts, lammps_parts, prefix, ranks):
    """A cases script's main: --part NAME runs parts[NAME](r, lmp, failures)
    with a Runner in a temporary folder, prints every failure and returns
    the exit status. SKIPPED (exit 0) without an MPI launcher, or without
    lmp for a part in lammps_parts."""
    ap = md_parser(doc.split("\n\n")[0])
    ap.add_argument("--lmp", default=os.environ.get("HALOX_LMP", "lmp"))
    ap.add_argument("--part", choices=tuple(parts), required=True)
    a = ap.parse_args()
    if not a.mpiexec:
        print("SKIPPED: no MPI launcher (%s ranks needed)" % ranks)
        return 0
    lmp = shutil.which(a.lmp)
    if a.part in lammps_parts and not lmp:
        print("SKIPPED: no LAMMPS program '%s' (apt-get install lammps)" % a.lmp)
        return 0
    failures = []
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        parts[a.part](Runner(a, tmp), lmp, failures)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def main():
    return run_parts(__doc__, {"lammps": part_lammps,
                               "md": lambda r, lmp, failures: part_md(r, failures),
                               "drift": part_drift,
                               "bad": lambda r, lmp, failures: part_bad(r, failures)},
                     ("lammps", "drift"), "halox-balance-", "2 to 4")


if __name__ == "__main__":
    sys.exit(main())
