#!/usr/bin/env python3
"""Triclinic decks on the GPU engine, end to end, at 1 and 3 ranks.

Each deck of tests/triclinic_decks (LJ melts tilted in xy; in xy, xz and
yz; every tilt at LAMMPS's limit; atoms in a region of a prism box) runs on
the GPU engine and on the CPU engine, whose rows equal LAMMPS's (test_triclinic_lammps);
with a sorted atom dump at its last step. What must hold:
  - the same thermo header and rows at the same steps;
  - step 0 every column within 1e-5 relative (floor 1) of the CPU
    engine's: the lattice and velocities are the same, the GPU engine
    sums in float;
  - later rows every column within 1e-3 relative (floor 1; the bound of
    test_md_gpu after 100 steps): float forces move the trajectory off the
    double one by a few ulps a step, which a liquid amplifies;
  - the dump's box header (LAMMPS's triclinic one, tilts included) equal to
    the CPU engine's line for line, and the same atoms in it.

Usage: md_gpu_triclinic.py --halox PATH [--mpiexec MPIEXEC --mpiflags FLAGS]
Prints SKIPPED and exits 0 without a GPU engine or a GPU; 3 ranks only
with a launcher.
"""
import glob
import os
import re
import sys
import tempfile

from checks import (check, deck_copy, deck_runner, finish, gpu_cannot_run, md_parser,
                    thermo_rows)

HERE = os.path.dirname(os.path.abspath(__file__))
DECKS = sorted(glob.glob(os.path.join(HERE, "triclinic_decks", "in.*")))


def with_dump(text):
    """The deck with a sorted atom dump at its run's last step."""
    m = re.search(r"(?m)^run\s+(\d+)\s*$", text)
    steps = int(m.group(1))
    dump = "dump d all atom %d dump.t\ndump_modify d sort id\nrun %d" % (steps, steps)
    return text[:m.start()] + dump + text[m.end():]


def last_frame(path):
    """(box header lines, ids) of the dump's last frame."""
    box, ids, part = [], [], None
    with open(path) as f:
        for line in f:
            if line.startswith("ITEM: TIMESTEP"):
                box, ids, part = [], [], None
            if line.startswith("ITEM:"):
                part = line.split()[1]
                if part == "BOX":
                    box.append(line.rstrip("\n"))
                continue
            if part == "BOX":
                box.append(line.rstrip("\n"))
            elif part == "ATOMS":
                ids.append(int(line.split()[0]))
    return box, ids


def worst(cpu, gpu, rows):
    """The largest relative difference (floor 1) over the given rows."""
    w = 0.0
    for k in rows:
        for a, b in zip(cpu[k][1:], gpu[k][1:]):
            fa, fb = float(a), float(b)
            w = max(w, abs(fa - fb) / max(abs(fa), abs(fb), 1.0))
    return w


def compare(name, n, cpu, gpu):
    out_c, frame_c = cpu
    out_g, frame_g = gpu
    rc, rg = thermo_rows(out_c), thermo_rows(out_g)
    same = [r[0] for r in rc] == [r[0] for r in rg] and len(rg) >= 2
    if not check(same, "%s on %d rank(s): thermo rows at the CPU engine's steps (%d rows)"
                 % (name, n, len(rg))):
        return
    w0, wl = worst(rc, rg, [0]), worst(rc, rg, range(1, len(rc)))
    check(w0 <= 1e-5, "%s on %d rank(s): step 0 within 1e-5 of the CPU engine (worst %.2e)"
          % (name, n, w0))
    check(wl <= 1e-3, "%s on %d rank(s): later rows within 1e-3 of the CPU engine (worst %.2e)"
          % (name, n, wl))
    check(frame_g[0] == frame_c[0] and len(frame_c[0]) == 4 and "xy xz yz" in frame_c[0][0],
          "%s on %d rank(s): the dump's triclinic box header is the CPU engine's (%s)"
          % (name, n, " | ".join(frame_g[0])))
    check(frame_g[1] == frame_c[1] and len(frame_c[1]) > 0,
          "%s on %d rank(s): the dump holds the CPU engine's %d atoms"
          % (name, n, len(frame_c[1])))


def main():
    a = md_parser(__doc__.split("\n\n")[0]).parse_args()

    run = deck_runner(a)

    def halox(n, deck, d, engine):
        dump = os.path.join(d, "dump.t")
        if os.path.exists(dump):
            os.remove(dump)
        rc, out, err = run(n, deck, d, engine)
        frame = last_frame(dump) if rc == 0 and os.path.exists(dump) else ([], [])
        return rc, out, err, frame

    with tempfile.TemporaryDirectory() as d:
        if gpu_cannot_run(run, DECKS[0], d):
            return 0
        ranks = [1, 3] if a.mpiexec else [1]
        for deck in DECKS:
            name, path = deck_copy(deck, d, with_dump)
            for n in ranks:
                got = {}
                for engine in ("--cpu", "--gpu"):
                    rc, out, err, frame = halox(n, path, d, engine)
                    if check(rc == 0, "%s %s on %d rank(s) runs (%s)"
                             % (name, engine, n, err.strip()[-300:])):
                        got[engine] = (out, frame)
                if len(got) == 2:
                    compare(name, n, got["--cpu"], got["--gpu"])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
