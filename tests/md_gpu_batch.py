#!/usr/bin/env python3
"""Several steps between checks in one CUDA graph launch, 2 ranks, end to end.

In graph mode the GPU engine replays the steps between two checks (rebuild
candidates, thermo steps) HALOX_MD_GRAPH_STEPS to a graph launch: the same
kernels in the same order as one step a launch (HALOX_MD_GRAPH_STEPS=1),
so a run must compute the same numbers either way:

  thermo 100    1,000 steps of the 16,384-atom melt (every 20 check no):
                thermo rows identical as printed with 1, 4 (the default)
                and 7 steps a launch (7 does not divide the 19 steps
                between rebuilds); with 4 and 7 the log says steps were
                replayed that many to a launch, with 1 that none were
  thermo 7      300 steps, thermo rows off the rebuild period: the same
                (no run of quiet steps is 7 long: none go 7 to a launch)
  checkpoints   300 steps, a restart file every 50 steps: the last restart
                file (x and v of every atom, in double) the same bytes

Usage: md_gpu_batch.py --halox PATH [--mpiexec MPIEXEC --mpiflags FLAGS]
Prints SKIPPED and exits 0 without a launcher, a GPU engine or a GPU, or
where 2 ranks cannot run the nvshmem-fused transport here.
"""
import os
import re
import shutil
import sys
import tempfile

from checks import check, finish, thermo_rows, two_rank_fused

BATCHED = re.compile(r"(\d+) steps replayed from CUDA graphs on rank 0, (\d+) of them (\d+) to a launch")


def main():
    run = two_rank_fused(__doc__.split("\n\n")[0])
    if not run:
        return 0

    tmp = tempfile.mkdtemp(prefix="halox-batch-")
    melt = ["--size", "16", "--every", "20", "--check", "no"]
    # (name, arguments, restart file, whether 7 steps a launch find room:
    # with thermo every 7 steps no run of quiet steps is 7 long)
    cases = (("thermo 100", melt + ["--steps", "1000", "--thermo", "100"], None, True),
             ("thermo 7", melt + ["--steps", "300", "--thermo", "7"], None, False),
             ("checkpoints", melt + ["--steps", "300", "--thermo", "0", "--checkpoint-every",
                                     "50"], "ckpt", True))
    for name, args, ckpt, room7 in cases:
        got = {}
        for k in ("1", "4", "7"):
            extra = []
            if ckpt:
                path = os.path.join(tmp, "%s.%s" % (ckpt, k))
                extra = ["--checkpoint", path]
            env = {"HALOX_MD_GRAPH_STEPS": k, "HALOX_LOG": "1"}
            what = "%s, HALOX_MD_GRAPH_STEPS=%s" % (name, k)
            rc, out, err = run(args + extra, env)
            if not check(rc == 0, "%s: rc %d %s" % (what, rc, err.strip()[-300:])):
                break
            m = BATCHED.search(err)
            if check(m is not None, "%s: the log counts the steps replayed" % what):
                replayed, batched, per = int(m.group(1)), int(m.group(2)), int(m.group(3))
                if k == "1":
                    check(batched == 0 and replayed > 0, "%s: %d steps replayed, none batched (%d)"
                          % (what, replayed, batched))
                else:
                    some = batched > 0 or (k == "7" and not room7)
                    check(per == int(k) and some and batched % per == 0 and batched <= replayed,
                          "%s: %d of %d replayed steps went %d to a launch"
                          % (what, batched, replayed, per))
            data = None
            if ckpt and os.path.exists(path):
                with open(path, "rb") as f:
                    data = f.read()
            got[k] = (thermo_rows(out), data)
        if len(got) < 3:
            continue
        rows1, data1 = got["1"]
        for k in ("4", "7"):
            rows, data = got[k]
            check(len(rows) >= 2 and rows == rows1,
                  "%s: thermo rows identical with %s steps a launch and with 1 (%d rows)"
                  % (name, k, len(rows)))
            if ckpt:
                check(data is not None and data1 is not None and len(data) > 256 and data == data1,
                      "%s: the last restart file the same bytes with %s steps a launch and "
                      "with 1" % (name, k))
    shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
