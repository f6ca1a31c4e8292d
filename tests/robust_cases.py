#!/usr/bin/env python3
"""halox-md ends, loudly, where a run cannot go on (tests/robust.cmake).

  stop-rank1, stop-rank0: 2 ranks, one SIGSTOPped once the run is under
      way; the other ends within HALOX_TIMEOUT_S and a few seconds, not 0,
      with HX_ERR_TIMEOUT naming the wait (rank 0 stopped: rank 1 says so).
  blowup-dt, blowup-temp: a timestep or a temperature far too large; the
      run ends not 0 with "the system blew up at step N" (step 0 where the
      start already carries atoms past the cutoff in a step), no row of nan.

Every job runs in a session of its own, and each of its ranks and its
launcher's group get SIGCONT and SIGKILL whatever happens, so nothing is
left running.
Without mpiexec the 2-rank cases print SKIPPED.
"""
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time

from checks import md_parser

TIMEOUT_S = 3  # HALOX_TIMEOUT_S of the stopped-peer cases
GRACE_S = 12  # start-up, the abort, mpiexec's teardown


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def halox_ranks(sid):
    """Pids of halox-md processes of session sid, by OMPI rank (or order)."""
    found = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if os.getsid(int(d)) != sid:
                continue
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv0 = f.read().split(b"\0")[0].decode(errors="replace")
            if not argv0.endswith("halox-md"):
                continue
            rank = None
            with open("/proc/%s/environ" % d, "rb") as f:
                for kv in f.read().split(b"\0"):
                    for key in (b"OMPI_COMM_WORLD_RANK=", b"PMI_RANK="):
                        if kv.startswith(key):
                            rank = int(kv[len(key):])
            found[rank if rank is not None else len(found)] = int(d)
        except (OSError, ValueError):
            continue
    return found


def wait_for_row(path, step, limit):
    """True once the thermo row of `step` is in the file at path."""
    t0 = time.time()
    while time.time() - t0 < limit:
        with open(path, errors="replace") as f:
            if any(line.split()[:1] == [str(step)] for line in f):
                return True
        time.sleep(0.1)
    return False


def stop_case(args, victim):
    name = "stop-rank%d" % victim
    launch = [args.mpiexec, "-n", "2"] + shlex.split(args.mpiflags)
    cmd = launch + [args.halox, "--cpu", "--size", "8", "--steps", "1000000", "--thermo", "50"]
    env = dict(os.environ, HALOX_TIMEOUT_S=str(TIMEOUT_S))
    with tempfile.TemporaryDirectory() as tmp:
        out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        with open(out, "w") as fo, open(err, "w") as fe:
            p = subprocess.Popen(cmd, stdout=fo, stderr=fe, env=env, start_new_session=True)
        stopped = None
        try:
            # Under way: a thermo row after step 0's.
            if not wait_for_row(out, 50, 40):
                fail("%s: the run did not start: %s" % (name, open(err).read()[-2000:]))
            ranks = halox_ranks(p.pid)
            if victim not in ranks:
                fail("%s: no rank %d among %s" % (name, victim, ranks))
            stopped = ranks[victim]
            os.kill(stopped, signal.SIGSTOP)
            t0 = time.time()
            try:
                rc = p.wait(timeout=TIMEOUT_S + GRACE_S)
            except subprocess.TimeoutExpired:
                fail("%s: still running %d s after rank %d stopped (HALOX_TIMEOUT_S=%d)"
                     % (name, TIMEOUT_S + GRACE_S, victim, TIMEOUT_S))
            took = time.time() - t0
        finally:
            if stopped:
                try:
                    os.kill(stopped, signal.SIGCONT)
                except OSError:
                    pass
            # mpiexec may put ranks in groups of their own: each is killed
            # by pid as well (a member of this session), then the launcher.
            for pid in list(halox_ranks(p.pid).values()) + [-p.pid]:
                try:
                    os.kill(pid, signal.SIGCONT)
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            p.wait()
        text = open(err, errors="replace").read()
    if rc == 0:
        fail("%s: exit 0 after a rank stopped" % name)
    if "HX_ERR_TIMEOUT" not in text or "waited" not in text:
        fail("%s: no named timeout in stderr:\n%s" % (name, text[-3000:]))
    print("ok %s: exit %d after %.1f s: %s" % (name, rc, took, [
        line for line in text.splitlines() if "HX_ERR_TIMEOUT" in line][0]))


def blowup_case(args, name, opts, step_limit):
    cmd = [args.halox, "--cpu", "--size", "4"] + opts
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                           start_new_session=True)
    except subprocess.TimeoutExpired:
        fail("%s: did not end in 120 s" % name)
    if r.returncode == 0:
        fail("%s: exit 0 for a run that blew up:\n%s" % (name, r.stdout[-2000:]))
    if "the system blew up at step" not in r.stderr:
        fail("%s: no word of the blow-up in stderr:\n%s" % (name, r.stderr[-2000:]))
    if "nan" in r.stdout.lower():
        fail("%s: a row of nan was printed:\n%s" % (name, r.stdout[-2000:]))
    line = [l for l in r.stderr.splitlines() if "blew up" in l][0]
    step = int(line.split("blew up at step ")[1].split(":")[0])
    if not 0 <= step <= step_limit:
        fail("%s: step %d out of 0..%d" % (name, step, step_limit))
    print("ok %s: exit %d: %s" % (name, r.returncode, line))


def main():
    args = md_parser().parse_args()
    blowup_case(args, "blowup-dt", ["--dt", "1e3", "--steps", "55", "--thermo", "5"], 55)
    blowup_case(args, "blowup-temp", ["--temp", "1e6", "--steps", "100", "--thermo", "10"], 100)
    if not args.mpiexec:
        print("SKIPPED: the stopped-peer cases need mpiexec (a build with MPI)")
        return
    stop_case(args, 1)
    stop_case(args, 0)


if __name__ == "__main__":
    main()
