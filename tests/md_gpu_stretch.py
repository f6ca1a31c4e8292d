#!/usr/bin/env python3
"""The timed stretches of a GPU run: marked on the device, or synchronised.

With rebuilds on a fixed schedule (`check no`), halox-md times the steps
between two rebuilds as one stretch and prints the median of their
per-step times. On one rank the GPU engine marks each stretch's ends in
its queued work (events) and reads the device times after the loop, so
nothing waits for the GPU at a stretch's ends; with several ranks they are
timed as the CPU engine times them, by synchronising the device and the
ranks around each. Either way it must time the stretches that hold no step
with output after it (thermo, restart file). For 1 rank (marked), and for
2 with an MPI launcher (synchronised):

  thermo 0      400 steps, every 20: 20 stretches
  thermo 30     thermo steps inside some stretches: those are not timed
  checkpoints   a restart file every 50 steps: the stretches holding
                such a step are not timed

each: the stretch count printed equals the count the driver's rule gives,
and a positive median.

Usage: md_gpu_stretch.py --halox PATH [--mpiexec MPIEXEC --mpiflags FLAGS]
Prints SKIPPED and exits 0 without a GPU engine or a GPU; the 2-rank runs
are left out (and say so) without a launcher or where 2 ranks cannot run
nvshmem-fused here.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from checks import check, finish, md_parser, skipped

MEDIAN = re.compile(r"us/step\s+([0-9.]+)\s+\(median of the (\d+) stretches between rebuilds\)")


def expected(steps, every, thermo, ckpt_every):
    """Stretches timed by the driver's rule (run.c): one starts at each
    step s with s % every == 1 (and room for it), ends after the step
    before the next rebuild, and counts if no step in it was a thermo step
    (thermo > 0 and s % thermo == 0, or the last step) or had a restart
    file written after it."""
    n, clean = 0, False
    for s in range(1, steps + 1):
        if s % every == 1 and s + every - 2 <= steps:
            clean = True
        want = s == steps or (thermo > 0 and s % thermo == 0)
        writes = ckpt_every > 0 and s % ckpt_every == 0
        clean = clean and not want and not writes
        if clean and (s + 1) % every == 0:
            n += 1
            clean = False
    return n


def main():
    a = md_parser(__doc__.split("\n\n")[0]).parse_args()

    def run(launch, args, env=None):
        """halox-md --gpu ARGS under the launch command (none: 1 rank):
        (exit status, stdout, stderr)."""
        e = dict(os.environ)
        e.update(env or {})
        ranks = ["--transport", "nvshmem-fused"] if launch else []
        p = subprocess.run(launch + [a.halox, "--gpu", "--no-progress"] + ranks + args,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=600, env=e)
        return p.returncode, p.stdout, p.stderr

    rc, _, err = run([], ["--size", "5", "--steps", "0"])
    if rc != 0:
        skipped("halox-md --gpu", err)
        return 0
    launchers = [("1 rank", [])]
    if not a.mpiexec:
        print("2 ranks: not run (no MPI launcher)")
    else:
        two = [a.mpiexec, "-n", "2"] + shlex.split(a.mpiflags)
        rc, _, err = run(two, ["--size", "5", "--steps", "0"])
        if rc == 0:
            launchers.append(("2 ranks", two))
        else:
            print("2 ranks: not run (nvshmem-fused cannot run here: %s)"
                  % (err.strip().splitlines() or ["?"])[-1])

    tmp = tempfile.mkdtemp(prefix="halox-stretch-")
    steps, every = 400, 20
    melt = ["--size", "10", "--steps", str(steps), "--every", str(every), "--check", "no"]
    cases = (("thermo 0", ["--thermo", "0"], 0, 0),
             ("thermo 30", ["--thermo", "30"], 30, 0),
             ("checkpoints", ["--thermo", "0", "--checkpoint-every", "50"], 0, 50))
    for who, launch in launchers:
        for name, args, thermo, ckpt in cases:
            want_n = expected(steps, every, thermo, ckpt)
            extra = ["--checkpoint", os.path.join(tmp, "ckpt")] if ckpt else []
            rc, out, err = run(launch, melt + args + extra)
            what = "%s, %s" % (who, name)
            if not check(rc == 0, "%s: rc %d %s" % (what, rc, err.strip()[-300:])):
                continue
            m = MEDIAN.search(out)
            if not check(m is not None, "%s: prints the median of the stretches" % what):
                continue
            median, n = float(m.group(1)), int(m.group(2))
            check(n == want_n, "%s: %d stretches timed, %d by the rule" % (what, n, want_n))
            check(median > 0, "%s: median %.3f us a step" % (what, median))
    shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
