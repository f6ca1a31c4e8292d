#!/usr/bin/env python3
"""The GPU engine's neighbour-list room and memory, end to end (one GPU).

  width         the default list room, the old fixed 216 slots and the
                smallest room the lattice fits (80): thermo rows identical as
                printed, since the room changes where a list ends, never
                what it holds or its order
  lanes         the list build with 1, 2 and 4 lanes per atom against the
                default (8 at this size): the same lists in the same order,
                so thermo rows identical as printed
  regrowth      with 80 slots the liquid outgrows the list: the device
                rebuild halts, the list grows and the halted steps run again;
                the log must show at least one such growth during the run
                and the thermo rows must still be identical, with the steps
                replayed from CUDA graphs and with plain launches
  no fit        a system larger than the memory allowed (HALOX_MD_GPU_BYTES)
                is refused before it allocates: one ERROR line naming the
                GPUs it needs, a non-zero exit

Usage: md_gpu_lists.py --halox PATH
Prints SKIPPED and exits 0 where halox-md has no GPU engine or sees no GPU.
"""
import re
import sys

from checks import check, finish, gpu_halox, run_gpu as run, thermo_rows


def main():
    halox = gpu_halox()
    if not halox:
        return 0

    # 16,384 atoms of the melt, 600 steps (rebuilds every 20): the lattice has
    # 78 neighbours per atom within rc + skin, the liquid more.
    base = ["--size", "16", "--steps", "600", "--thermo", "50"]
    rc, ref, err = run(halox, base, {"HALOX_LOG": "1"})
    check(rc == 0, "default run (rc %d): %s" % (rc, err.strip()[-300:]))
    rows = thermo_rows(ref)
    check(len(rows) == 13, "default run prints 13 thermo rows (%d)" % len(rows))
    m = re.search(r"lists of (\d+) slots per atom, largest neighbour count (\d+)", err)
    check(m is not None, "the log gives the lists' room and the largest count")
    if m:
        print("     default room %s slots, largest count %s" % (m.group(1), m.group(2)))
        check(int(m.group(2)) > 80, "the liquid has an atom with more than 80 neighbours "
              "(%s), so 80 slots must grow" % m.group(2))
    m = re.search(r"(\d+) bytes per atom on the GPU", ref)
    check(m is not None and int(m.group(1)) <= 800,
          "at most 800 bytes per atom on the GPU (%s)" % (m.group(1) if m else "?"))

    for name, env in (("216 slots", {"HALOX_MD_NEIGH_MAX": "216"}),
                      ("80 slots, graphs", {"HALOX_MD_NEIGH_MAX": "80"}),
                      ("80 slots, plain launches", {"HALOX_MD_NEIGH_MAX": "80",
                                                     "HALOX_MD_GRAPH_STEPS": "0"}),
                      ("a thread per atom", {"HALOX_MD_LANES": "0,0,1"}),
                      ("2 lanes per atom", {"HALOX_MD_LANES": "0,0,2"}),
                      ("4 lanes per atom", {"HALOX_MD_LANES": "0,0,4"})):
        env = dict(env, HALOX_LOG="1")
        rc, out, err = run(halox, base, env)
        check(rc == 0, "%s: rc %d %s" % (name, rc, err.strip()[-300:]))
        check(thermo_rows(out) == rows, "%s: thermo rows identical to the default run" % name)
        if name.startswith("80"):
            g = re.search(r"grown (\d+) time\(s\) during the run", err)
            check(g is not None and int(g.group(1)) >= 1,
                  "%s: the list grew during the run (%s)" % (name, g.group(1) if g else "no log"))

    # 2,048,000 atoms against 200 MB: refused before allocating.
    rc, out, err = run(halox, ["--size", "80", "--steps", "10"],
                       {"HALOX_MD_GPU_BYTES": "200000000"})
    errs = [l for l in err.splitlines() if "ERROR" in l]
    check(rc != 0, "too large a system: non-zero exit (%d)" % rc)
    check(len(errs) == 1 and re.search(r"needs about \d+ GPUs", errs[0]) is not None,
          "too large a system: one ERROR line naming the GPUs it needs: %s" % errs)

    return finish()


if __name__ == "__main__":
    sys.exit(main())
