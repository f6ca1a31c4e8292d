#!/usr/bin/env python3
"""Atom types on the GPU engine, end to end, at 1 and 2 ranks.

  types         a two-type deck (tests/types_decks/in.mix_lj_geometric) and
                the Kob-Andersen one (tests/decks/in.kob_andersen), 200
                steps with `dump ... atom 200` and `dump_modify sort id`:
                the last frame's types equal the CPU engine's atom by atom
                (rebuilds every few steps and, on 2 ranks, migrations on
                the way: each atom's type travels with it)
  kob-andersen  the Kob-Andersen deck as it is (300 steps): it runs, its
                thermo rows are the CPU engine's steps, and its TotEng
                stays within 1e-3 of the CPU engine's (relative, floor 1)

test_md_gpu_types compares forces, energies and thermo rows of every
style with the CPU engine's.

Usage: md_gpu_types.py --halox PATH [--mpiexec MPIEXEC --mpiflags FLAGS]
Prints SKIPPED and exits 0 without a GPU engine or a GPU; 2 ranks only
with a launcher.
"""
import os
import re
import sys
import tempfile

from checks import (check, deck_copy, deck_runner, finish, gpu_cannot_run, md_parser,
                    thermo_rows)

HERE = os.path.dirname(os.path.abspath(__file__))
DECKS = (os.path.join(HERE, "types_decks", "in.mix_lj_geometric"),
         os.path.join(HERE, "decks", "in.kob_andersen"))


def last_frame_types(path):
    """{id: type} of the dump's last frame (dump atom: id type xs ys zs)."""
    frame, on = {}, False
    with open(path) as f:
        for line in f:
            if line.startswith("ITEM: ATOMS"):
                frame, on = {}, True
            elif line.startswith("ITEM:"):
                on = False
            elif on:
                w = line.split()
                frame[int(w[0])] = int(w[1])
    return frame


def with_dump(text, steps):
    """The deck with a sorted atom dump every `steps` steps and `run steps`."""
    dump = "dump d all atom %d dump.t\ndump_modify d sort id\nrun %d\n" % (steps, steps)
    return re.sub(r"(?m)^run\s+\d+\s*$", dump.rstrip("\n"), text)


def main():
    a = md_parser(__doc__.split("\n\n")[0]).parse_args()

    halox = deck_runner(a)

    with tempfile.TemporaryDirectory() as d:
        if gpu_cannot_run(halox, DECKS[1], d):
            return 0
        ranks = [1, 2] if a.mpiexec else [1]
        for deck in DECKS:
            name, path = deck_copy(deck, d, lambda t: with_dump(t, 200))
            for n in ranks:
                got = {}
                for engine in ("--cpu", "--gpu"):
                    dump = os.path.join(d, "dump.t")
                    if os.path.exists(dump):
                        os.remove(dump)
                    rc, _, err = halox(n, path, d, engine)
                    if check(rc == 0, "types: %s %s on %d rank(s) runs (%s)"
                             % (name, engine, n, err.strip()[-300:])):
                        got[engine] = last_frame_types(dump)
                if len(got) < 2:
                    continue
                cpu, gpu = got["--cpu"], got["--gpu"]
                off = [i for i in cpu if gpu.get(i) != cpu[i]]
                check(len(cpu) > 0 and len(gpu) == len(cpu) and not off
                      and len(set(cpu.values())) > 1,
                      "types: %s on %d rank(s), step 200: %d atoms, every type the CPU "
                      "engine's (%d differ)" % (name, n, len(gpu), len(off)))
        for n in ranks:
            rows = {}
            for engine in ("--cpu", "--gpu"):
                rc, out, err = halox(n, DECKS[1], d, engine)
                if check(rc == 0, "kob-andersen: %s on %d rank(s) runs (%s)"
                         % (engine, n, err.strip()[-300:])):
                    rows[engine] = thermo_rows(out)
            if len(rows) < 2:
                continue
            cpu, gpu = rows["--cpu"], rows["--gpu"]
            steps_same = [r[0] for r in cpu] == [r[0] for r in gpu] and len(gpu) >= 2
            check(steps_same, "kob-andersen on %d rank(s): thermo rows at the CPU engine's "
                  "steps (%d rows)" % (n, len(gpu)))
            if steps_same:
                head = out_header(DECKS[1], d, n, halox)
                k = head.index("TotEng") if head and "TotEng" in head else None
                if check(k is not None, "kob-andersen: the thermo header has TotEng"):
                    worst = max(abs(float(g[k]) - float(c[k])) / max(abs(float(c[k])), 1.0)
                                for g, c in zip(gpu, cpu))
                    check(worst <= 1e-3, "kob-andersen on %d rank(s): TotEng within 1e-3 of "
                          "the CPU engine's (worst %.2e)" % (n, worst))
    return finish()


def out_header(deck, d, n, halox):
    """The thermo header's words of a 0-step run of the deck on the CPU engine."""
    with open(deck) as f:
        text = re.sub(r"(?m)^run\s+\d+\s*$", "run 0", f.read())
    path = os.path.join(d, "in.header")
    with open(path, "w") as f:
        f.write(text)
    rc, out, _ = halox(1, path, d, "--cpu")
    for line in out.splitlines():
        if re.match(r"\s*Step\s", line):
            return line.split()
    return None


if __name__ == "__main__":
    sys.exit(main())
