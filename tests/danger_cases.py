#!/usr/bin/env python3
"""Neighbour lists that lost pairs, on halox-md's CPU engine (tests/danger.cmake).

At a rebuild after some atom moved more than half the skin, the engine
counts the pairs within the cutoff that the old lists still held against
those the new lists hold at the same positions (each summed over the
ranks), and the summary says how many were lost.

  blowup-dt: a timestep of 0.5 (100 times LAMMPS's; not yet a blow-up at
      step 0) and a rebuild at step 10: every pair was lost; the run ends not 0 at step 10 with one error that names the
      build step, the largest move and the skin. Without a rebuild
      (--every 100) it still ends not 0 (the thermo check of step 50, or
      coordinates that are no longer finite).
  every-50: a normal timestep, lists kept 50 steps (check no): 3 in 1,000
      of the pairs lost at step 50; the run ends there, naming step 50 and
      step 0, with the same counts on 1, 2 and 3 ranks.
  in.lj: LAMMPS's LJ melt (every 20 check no, skin 0.3) runs to the end,
      prints LAMMPS's "Dangerous builds not checked" line with the rebuilds
      after a move over half the skin, and the pairs lost (about 1 in
      8,000 per rebuild, all near the cutoff), the same on 1 and 2 ranks.
  check-yes: with check yes the line is LAMMPS's "Dangerous builds = N":
      0 rebuilding every 2 steps, most builds every 10 steps (LAMMPS 29 Sep
      2021 counts 0 and 28 of 29 on these decks), the same on 1 and 2 ranks.

Without mpiexec the cases of several ranks print SKIPPED.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

from checks import md_parser

MISSING = re.compile(r"step (\d+): (\d+) of the (\d+) atom pairs within the cutoff 2\.5 were "
                     r"missing from the neighbour lists built at step (\d+) \(atoms moved up to "
                     r"[0-9.e+]+ since, the skin is 0\.3\): rebuild more often")
MOVED = re.compile(r"Dangerous builds not checked; rebuilds after an atom moved more than half "
                   r"the skin \(0\.15\) = (\d+)")
LOST = re.compile(r"Pairs within the cutoff the lists had missed = (\d+)")
DANGER = re.compile(r"^Dangerous builds = (\d+)$", re.M)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(args, ranks, opts, name):
    cmd = [args.halox] + opts
    if ranks > 1:
        cmd = [args.mpiexec, "-n", str(ranks)] + shlex.split(args.mpiflags) + cmd
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                              start_new_session=True)
    except subprocess.TimeoutExpired:
        fail("%s on %d rank(s): did not end in 300 s" % (name, ranks))


def run_fails(args, ranks, opts, name):
    """The run ends not 0 with one ERROR line naming lost pairs: its numbers."""
    r = run(args, ranks, opts, name)
    if r.returncode == 0:
        fail("%s on %d rank(s): exit 0 with lists that lost pairs:\n%s"
             % (name, ranks, r.stdout[-2000:]))
    errs = [line for line in r.stderr.splitlines() if "ERROR" in line]
    if len(errs) != 1:
        fail("%s on %d rank(s): %d ERROR lines, one expected:\n%s"
             % (name, ranks, len(errs), r.stderr[-3000:]))
    m = MISSING.search(errs[0])
    if not m:
        fail("%s on %d rank(s): no word of lost pairs:\n%s" % (name, ranks, errs[0]))
    print("ok %s on %d rank(s): exit %d: %s" % (name, ranks, r.returncode, errs[0]))
    return tuple(int(g) for g in m.groups())


def run_passes(args, ranks, opts, name, pattern):
    """The run ends 0; the summary line's numbers (and the pairs lost)."""
    r = run(args, ranks, opts, name)
    if r.returncode != 0:
        fail("%s on %d rank(s): exit %d:\n%s" % (name, ranks, r.returncode, r.stderr[-3000:]))
    m = pattern.search(r.stdout)
    if not m:
        fail("%s on %d rank(s): no dangerous-build line:\n%s" % (name, ranks, r.stdout[-3000:]))
    lost = LOST.search(r.stdout)
    got = (int(m.group(1)), int(lost.group(1)) if lost else 0)
    print("ok %s on %d rank(s): %s%s" % (name, ranks, m.group(0),
                                         "; " + lost.group(0) if lost else ""))
    return got


def same(name, counts):
    if len(set(counts.values())) != 1:
        fail("%s: the ranks disagree: %s" % (name, counts))


def deck(tmp, name, every, check):
    """tests/decks/in.lj on 8^3 cells for 300 steps, rebuilding as given."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "decks", "in.lj")) as f:
        text = f.read()
    text = text.replace("20*$", "8*$").replace("run             100", "run             300")
    text = text.replace("every 20 check no", "every %d check %s" % (every, check))
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def main():
    ap = md_parser()
    ap.add_argument("--lj", required=True, help="tests/decks/in.lj")
    args = ap.parse_args()
    many = [1, 2, 3] if args.mpiexec else [1]
    blow = ["--cpu", "--size", "4", "--dt", "0.5", "--steps", "50"]

    step, lost, total, built = run_fails(args, 1, blow + ["--every", "10"], "blowup-dt")
    if (step, built) != (10, 0) or lost != total or lost == 0:
        fail("blowup-dt: step %d, %d of %d lost, built at %d: expected all lost at step 10, "
             "built at 0" % (step, lost, total, built))
    r = run(args, 1, blow + ["--every", "100"], "blowup-dt-no-rebuild")
    if r.returncode == 0:
        fail("blowup-dt-no-rebuild: exit 0:\n%s" % r.stdout[-2000:])
    print("ok blowup-dt-no-rebuild: exit %d" % r.returncode)

    mild = ["--cpu", "--size", "8", "--check", "no", "--every", "50", "--steps", "100"]
    counts = {n: run_fails(args, n, mild, "every-50") for n in many}
    same("every-50", counts)
    step, lost, total, built = counts[1]
    if (step, built) != (50, 0) or not 0 < lost < total / 100:
        fail("every-50: step %d, %d of %d lost, built at %d: expected a few lost at step 50, "
             "built at 0" % (step, lost, total, built))

    lj = ["--cpu", "-in", args.lj]
    counts = {n: run_passes(args, n, lj, "in.lj", MOVED) for n in many[:2]}
    same("in.lj", counts)
    if counts[1][0] != 5 or counts[1][1] == 0:
        fail("in.lj: %s: expected 5 rebuilds after a move over half the skin, and some pairs "
             "lost" % (counts[1],))

    with tempfile.TemporaryDirectory() as tmp:
        for every, want in ((2, lambda n: n == 0), (10, lambda n: n >= 20)):
            path = deck(tmp, "in.every%d" % every, every, "yes")
            name = "check-yes-every-%d" % every
            counts = {n: run_passes(args, n, ["--cpu", "-in", path], name, DANGER)
                      for n in many[:2]}
            same(name, counts)
            if not want(counts[1][0]):
                fail("%s: %d dangerous builds" % (name, counts[1][0]))
    if not args.mpiexec:
        print("SKIPPED: the cases of several ranks need mpiexec (a build with MPI)")


if __name__ == "__main__":
    main()
