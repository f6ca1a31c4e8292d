#!/usr/bin/env python3
"""The rebuild decision voted on the GPU against the host's, 2 ranks, end to end.

With several ranks in graph mode and `check yes` checked every step, the
GPU engine decides each rebuild by a vote over the ranks on the device
(hx_transport_vote) and replays the steps from a CUDA graph; the host
decision (here with the kernels launched one by one,
HALOX_MD_GRAPH_STEPS=0, so not in graph mode) reads the half-skin flag
back each step and agrees on it over MPI. Both run the same kernels on the
same atoms, so they must rebuild at the same steps and print identical
thermo rows:

  vote          2,000 steps of the 16,384-atom melt, --every 1 --check yes,
                thermo every 200: the voted run says it votes, rebuilds as
                often as the host decision (some steps rebuild, some do not)
                and prints the same rows
  delay 3       the same melt as a LAMMPS deck with `neigh_modify every 1
                delay 3 check yes`: the steps right after a rebuild are not
                voted on; the same against the host decision
  timed         HALOX_MD_TIMERS=1 (every step launched kernel by kernel,
                each vote waited for): the same

Usage: md_gpu_vote.py --halox PATH [--mpiexec MPIEXEC --mpiflags FLAGS]
Prints SKIPPED and exits 0 without a launcher, a GPU engine or a GPU, or
where 2 ranks cannot run the nvshmem-fused transport here.
"""
import os
import re
import shutil
import sys
import tempfile

from checks import check, finish, thermo_rows, two_rank_fused


DECK = """units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 16 0 16 0 16
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 3.0 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify every 1 delay 3 check yes
fix 1 all nve
thermo 200
run %d
"""


def rebuilds(out):
    m = re.search(r"(\d+) neighbour-list rebuilds", out)
    return int(m.group(1)) if m else None


def main():
    run = two_rank_fused(__doc__.split("\n\n")[0])
    if not run:
        return 0

    steps = 2000
    tmp = tempfile.mkdtemp(prefix="halox-vote-")
    deck = os.path.join(tmp, "in.melt")
    with open(deck, "w") as f:
        f.write(DECK % steps)
    flags = ["--size", "16", "--steps", str(steps), "--thermo", "200", "--every", "1",
             "--check", "yes"]
    cases = (("vote", flags, {}),
             ("delay 3", ["-in", deck], {}),
             ("timed", flags, {"HALOX_MD_TIMERS": "1"}))
    refs = {}
    for name, args, env in cases:
        key = tuple(args)
        if key not in refs:
            rc, out, err = run(args, {"HALOX_MD_GRAPH_STEPS": "0"})
            if not check(rc == 0, "%s, host decision: rc %d %s" % (name, rc, err.strip()[-300:])):
                continue
            n = rebuilds(out)
            check("voted on the GPU" not in out,
                  "%s, host decision: the engine does not vote" % name)
            check(n is not None and 0 < n < steps,
                  "%s, host decision: some steps rebuild and some do not (%s)" % (name, n))
            print("     %s: %s rebuilds in %d steps (host decision)" % (name, n, steps))
            refs[key] = (thermo_rows(out), n)
        ref_rows, ref_n = refs[key]
        rc, out, err = run(args, env)
        if not check(rc == 0, "%s: rc %d %s" % (name, rc, err.strip()[-300:])):
            continue
        check("rebuild decisions voted on the GPU" in out, "%s: the engine votes" % name)
        rows, n = thermo_rows(out), rebuilds(out)
        check(len(rows) == steps // 200 + 1, "%s: %d thermo rows (%d)"
              % (name, steps // 200 + 1, len(rows)))
        check(n == ref_n, "%s: %s rebuilds, as the host decision (%s)" % (name, n, ref_n))
        check(rows == ref_rows, "%s: thermo rows identical to the host decision's" % name)
    shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
