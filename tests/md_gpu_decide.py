#!/usr/bin/env python3
"""Where a one-rank GPU run decides to rebuild its lists, end to end (one GPU).

The device-resident step decides on the GPU whether it rebuilds (LAMMPS's
every / delay / check rule). With CUDA graphs and `check yes` the rebuild's
kernels sit in the body of a conditional node that the kick-drift's last
block sets; without the node (always with `check no`) they are replayed
every candidate step and each returns at once unless the step rebuilds;
without graphs (HALOX_MD_GRAPH_STEPS=0) they are launched one by one. Steps
with nothing of the driver's between them are replayed several to a graph
(HALOX_MD_GRAPH_STEPS, 4 by default; here also 1 and 3, which cross the
rebuild periods and thermo steps differently). The same kernels run on the
same atoms every way, so all must rebuild as often and compute the same
numbers:

  check yes     --every 1 --check yes, 2,000 steps of the 16,384-atom melt:
                the same count of rebuilds, thermo rows identical as printed
  every 5       --every 5 --check yes: the same
  check no      --every 20 --check no (the deck's own rule; no node): the
                same, and one rebuild every 20 steps

Usage: md_gpu_decide.py --halox PATH
Prints SKIPPED and exits 0 where halox-md has no GPU engine or sees no GPU.
"""
import re
import sys

from checks import check, finish, gpu_halox, run_gpu as run, thermo_rows


def rebuilds(out):
    m = re.search(r"(\d+) neighbour-list rebuilds", out)
    return int(m.group(1)) if m else None


VARIANTS = (("conditional graph node (default)", {}),
            ("one step a graph", {"HALOX_MD_GRAPH_STEPS": "1"}),
            ("three steps a graph", {"HALOX_MD_GRAPH_STEPS": "3"}),
            ("plain launches", {"HALOX_MD_GRAPH_STEPS": "0"}))


def main():
    halox = gpu_halox()
    if not halox:
        return 0

    steps = 2000
    for name, rule in (("check yes", ["--every", "1", "--check", "yes"]),
                       ("every 5", ["--every", "5", "--check", "yes"]),
                       ("check no", ["--every", "20", "--check", "no"])):
        args = ["--size", "16", "--steps", str(steps), "--thermo", "200"] + rule
        ref_rows, ref_n = None, None
        for vname, env in VARIANTS:
            rc, out, err = run(halox, args, env)
            what = "%s, %s" % (name, vname)
            if not check(rc == 0, "%s: rc %d %s" % (what, rc, err.strip()[-300:])):
                continue
            rows, n = thermo_rows(out), rebuilds(out)
            if ref_rows is None:
                ref_rows, ref_n = rows, n
                check(len(rows) == steps // 200 + 1, "%s: %d thermo rows (%d)"
                      % (what, steps // 200 + 1, len(rows)))
                check(n is not None and n > 0, "%s: rebuilds counted (%s)" % (what, n))
                if name == "check no":
                    check(n == steps // 20, "%s: a rebuild every 20 steps (%s)" % (what, n))
                else:
                    check(n is not None and 0 < n < steps,
                          "%s: some steps rebuild and some do not (%s)" % (what, n))
                print("     %s: %s rebuilds in %d steps" % (name, n, steps))
                continue
            check(n == ref_n, "%s: %s rebuilds, as the default (%s)" % (what, n, ref_n))
            check(rows == ref_rows, "%s: thermo rows identical to the default's" % what)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
