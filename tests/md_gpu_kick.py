#!/usr/bin/env python3
"""A multi-rank step's closing kick left to the next step, 2 ranks, end to end.

In graph mode without votes, the GPU engine does not launch a step's
closing kick (v += dt/2m f with the halo-side forces added to f); the next
step's kick-drift does it first, with the same float operations in the same
order, so that each replayed step is one kernel shorter. Thermo steps close
themselves (their kinetic energy needs whole velocities), and whatever
reads velocities or forces (thermo, gather for a restart file or a dump)
applies an open kick first. So a run must compute the same numbers as one
whose kernels are launched one by one (HALOX_MD_GRAPH_STEPS=0: no graph
mode, every step launches its own closing kick):

  thermo 100    1,000 steps of the 16,384-atom melt (every 20 check no):
                the run says it leaves the kick to the next step; thermo
                rows identical as printed
  thermo 7      300 steps, thermo rows off the rebuild period: the same
  checkpoints   300 steps, thermo only at the ends, a restart file every
                50 steps (each write applies the open kick mid-run): the
                last restart file (x and v of every atom, in double) the
                same bytes
  timed         HALOX_MD_TIMERS=1 (timed steps launched kernel by kernel):
                the same rows

Usage: md_gpu_kick.py --halox PATH [--mpiexec MPIEXEC --mpiflags FLAGS]
Prints SKIPPED and exits 0 without a launcher, a GPU engine or a GPU, or
where 2 ranks cannot run the nvshmem-fused transport here.
"""
import os
import shutil
import sys
import tempfile

from checks import check, finish, thermo_rows, two_rank_fused

FUSED = "closing kick in the next step's kick-drift"


def main():
    run = two_rank_fused(__doc__.split("\n\n")[0])
    if not run:
        return 0

    tmp = tempfile.mkdtemp(prefix="halox-kick-")
    melt = ["--size", "16", "--every", "20", "--check", "no"]
    cases = (("thermo 100", melt + ["--steps", "1000", "--thermo", "100"], {}, None),
             ("thermo 7", melt + ["--steps", "300", "--thermo", "7"], {}, None),
             ("checkpoints", melt + ["--steps", "300", "--thermo", "0", "--checkpoint-every",
                                     "50"], {}, "ckpt"),
             ("timed", melt + ["--steps", "300", "--thermo", "50"], {"HALOX_MD_TIMERS": "1"},
              None))
    for name, args, env, ckpt in cases:
        got = {}
        for fuse in ("0", "1"):
            extra = []
            if ckpt:
                path = os.path.join(tmp, "%s.%s" % (ckpt, fuse))
                extra = ["--checkpoint", path]
            e = dict(env)
            if fuse == "0":
                e["HALOX_MD_GRAPH_STEPS"] = "0"
            how = "graph mode" if fuse == "1" else "plain launches"
            rc, out, err = run(args + extra, e)
            if not check(rc == 0, "%s, %s: rc %d %s" % (name, how, rc, err.strip()[-300:])):
                break
            says = FUSED in out
            check(says == (fuse == "1"), "%s, %s: the engine %s it leaves the kick to the next "
                  "step" % (name, how, "says" if fuse == "1" else "does not say"))
            data = None
            if ckpt and os.path.exists(path):
                with open(path, "rb") as f:
                    data = f.read()
            got[fuse] = (thermo_rows(out), data)
        if len(got) < 2:
            continue
        rows0, data0 = got["0"]
        rows1, data1 = got["1"]
        check(len(rows1) >= 2 and rows1 == rows0,
              "%s: thermo rows identical with the kick left to the next step and with plain "
              "launches (%d rows)" % (name, len(rows1)))
        if ckpt:
            check(data0 is not None and data1 is not None and len(data1) > 256
                  and data1 == data0,
                  "%s: the last restart file the same bytes (%s bytes)"
                  % (name, len(data1) if data1 else None))
    shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
