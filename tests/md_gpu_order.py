#!/usr/bin/env python3
"""Where a step's kernels go, changed without changing a number, 2 ranks.

Two settings move kernels of a multi-rank step without changing what they
compute, so a run must print the same numbers as without them (600 steps
of the 16,384-atom melt, rebuilds every 20, thermo every 50, so that some
rebuild steps sum thermo):

  HALOX_MD_EARLY_FORCES=1  a device rebuild queues the local forces of its
                    step (one that sums no thermo) right behind the local
                    list, before the host has made the plan and read the
                    lists' flags; the step leaves them out. Thermo rows
                    identical; the log counts the rebuild steps whose
                    forces went early: some, and none of the 6 that sum
                    thermo. Also with 80 list slots (the build overflows,
                    grows and runs again with its forces; the log shows a
                    growth), with the local list queued after the forward
                    exchange or after the plan (HALOX_MD_LOCAL_LATE=1, 2)
                    and with plain launches (HALOX_MD_GRAPH_STEPS=0)
  HALOX_MD_PDL=1, 2, 3  the non-local forces (1), the local forces (2) or
                    both (3) launched with programmatic dependent launch:
                    their blocks start while the kernel before them (the
                    forward exchange, the kick-drift) runs and read
                    positions after it ends. Thermo rows identical, in
                    graph mode and with plain launches, and with both
                    settings. Where the 2 ranks share a GPU the engine
                    refuses PDL with a warning (its waiting blocks could
                    keep the other rank's exchange off the GPU): the test
                    checks the warning and says PDL was not exercised
  HALOX_MD_FORCE_ROOM=0  the local forces at 2 and 4 threads an atom in the
                    kernel that fills the SMs instead of the one that
                    leaves room beside it (the default with several
                    ranks): at 2 and 4 threads an atom (HALOX_MD_LANES=2,0,0
                    and 4,0,0), thermo rows identical either way (the same
                    adds in the same order), and the run's description says
                    which one ran

Usage: md_gpu_order.py --halox PATH [--mpiexec MPIEXEC --mpiflags FLAGS]
Prints SKIPPED and exits 0 without a launcher, a GPU engine or a GPU, or
where 2 ranks cannot run the nvshmem-fused transport here.
"""
import re
import sys

from checks import check, finish, thermo_rows, two_rank_fused

EARLY = re.compile(r"the local forces of (\d+) of (\d+) device rebuild steps queued")


def main():
    run = two_rank_fused(__doc__.split("\n\n")[0])
    if not run:
        return 0

    args = ["--size", "16", "--every", "20", "--check", "no", "--steps", "600", "--thermo", "50"]
    rc, out, err = run(args, {"HALOX_LOG": "1"})
    if not check(rc == 0, "default run: rc %d %s" % (rc, err.strip()[-300:])):
        return finish()
    rows = thermo_rows(out)
    check(len(rows) == 13, "default run prints 13 thermo rows (%d)" % len(rows))
    check(EARLY.search(err) is None, "default run: no local forces go early")

    early = {"HALOX_MD_EARLY_FORCES": "1"}
    pdl = {"HALOX_MD_PDL": "3"}
    for name, env in (("early", early),
                      ("early, 80 slots", dict(early, HALOX_MD_NEIGH_MAX="80")),
                      ("early, list after the forward exchange",
                       dict(early, HALOX_MD_LOCAL_LATE="1")),
                      ("early, list after the plan", dict(early, HALOX_MD_LOCAL_LATE="2")),
                      ("early, plain launches", dict(early, HALOX_MD_GRAPH_STEPS="0")),
                      ("pdl, non-local forces", {"HALOX_MD_PDL": "1"}),
                      ("pdl, local forces", {"HALOX_MD_PDL": "2"}),
                      ("pdl, both", pdl),
                      ("pdl, both, plain launches", dict(pdl, HALOX_MD_GRAPH_STEPS="0")),
                      ("pdl and early", dict(pdl, **early))):
        rc, out, err = run(args, dict(env, HALOX_LOG="1"))
        if not check(rc == 0, "%s: rc %d %s" % (name, rc, err.strip()[-300:])):
            continue
        check(thermo_rows(out) == rows, "%s: thermo rows identical to the default run" % name)
        if "HALOX_MD_PDL" in env and "ignoring HALOX_MD_PDL" in err:
            # Ranks sharing one GPU (MPS): the engine refuses PDL, whose
            # waiting blocks could keep the other rank's exchange off the GPU.
            check("share GPU" in err, "%s: the refusal says the ranks share a GPU" % name)
            print("     %s: ranks share a GPU here, so PDL is refused and not exercised" % name)
        m = EARLY.search(err)
        if "HALOX_MD_EARLY_FORCES" not in env:
            check(m is None, "%s: no local forces go early" % name)
        elif check(m is not None, "%s: the log counts the early local forces" % name):
            went, rebuilds = int(m.group(1)), int(m.group(2))
            # 30 rebuild steps (20, 40, ..., 600), 6 of them thermo steps.
            check(rebuilds >= 25 and 0 < went <= rebuilds - 6,
                  "%s: %d of %d rebuild steps had their local forces early (some, none of the "
                  "thermo steps)" % (name, went, rebuilds))
        if "HALOX_MD_NEIGH_MAX" in env:
            g = re.search(r"grown (\d+) time\(s\) during the run", err)
            check(g is not None and int(g.group(1)) >= 1,
                  "%s: the list grew during the run (%s)" % (name, g.group(1) if g else "no log"))
    room_cases(run, args)
    return finish()


ROOM = "(local forces leave room beside them)"


def room_cases(run, args):
    """HALOX_MD_FORCE_ROOM: the two local force kernels agree."""
    for tpp in ("2", "4"):
        lanes = "%s,0,0" % tpp
        rc, ref, err = run(args, {"HALOX_MD_LANES": lanes, "HALOX_MD_FORCE_ROOM": "0"})
        if not check(rc == 0, "tpp %s, room 0: rc %d %s" % (tpp, rc, err.strip()[-300:])):
            continue
        check("%s thread(s) per atom," % tpp in ref and ROOM not in ref,
              "tpp %s, room 0: the description names the kernel that fills the SMs" % tpp)
        rc, out, err = run(args, {"HALOX_MD_LANES": lanes})
        if not check(rc == 0, "tpp %s, room by default: rc %d %s" % (tpp, rc, err.strip()[-300:])):
            continue
        check("%s thread(s) per atom %s" % (tpp, ROOM) in out,
              "tpp %s: with 2 ranks the local forces leave room by default" % tpp)
        check(len(thermo_rows(out)) == 13 and thermo_rows(out) == thermo_rows(ref),
              "tpp %s: thermo rows identical with and without room" % tpp)


if __name__ == "__main__":
    sys.exit(main())
