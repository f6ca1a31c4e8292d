#!/usr/bin/env python3
"""halox-md's timeline (HALOX_TRACE=FILE), end to end.

  off           without HALOX_TRACE no file is written and nothing is said
  bad path      a file that cannot be written: one ERROR line, non-zero exit,
                before any step
  ranks         at 1 and 2 ranks (where a launcher is given): valid JSON, one
                process per rank named "rank R", a "step" range per step on
                every rank, the engine's stages inside the steps, the set-up
                ranges, ranks on one clock (their first steps start within
                50 ms of each other)
  --gpu         the GPU engine: kernel records (the integrator and the
                forces) on named streams, on the host's clock (inside the
                run's host ranges); no CUDA call records unless asked;
                with HALOX_TRACE_API=1 the CUDA calls (launches of kernels
                or graphs) on a named row of the host thread, inside the run
  picture       bench/trace_step.py draws one step (SVG, or PNG with
                matplotlib) and names every lane
  sums          bench/trace_kernels.py (--sums) counts rank 0's step ranges
                as the run made them; a name nothing matches is an error;
                --within keeps what starts inside the named host ranges (the
                stages inside the steps; nothing inside "thermo" that lies
                outside it) and refuses a range name the trace lacks;
                --idle on a trace made here (two ranks, host ranges, kernels
                and a copy on two streams that overlap each other and the
                ranges' ends, a CUDA call): the lengths, the GPU's share and
                the idle time computed by hand

Usage: trace_cases.py --halox PATH --script bench/trace_step.py [--gpu]
                      [--sums bench/trace_kernels.py]
                      [--mpiexec PATH --mpiflags "..."]
"""
import json
import os
import subprocess
import sys
import tempfile

from checks import check, finish, md_parser, skipped


def run(a, n, args, env, cwd):
    cmd = [a.halox, "--gpu" if a.gpu else "--cpu", "--no-progress"] + args
    if n > 1:
        cmd = [a.mpiexec, "-n", str(n)] + a.mpiflags.split() + ["-x", "HALOX_TRACE"] + cmd
    e = dict(os.environ)
    e.update(env)
    return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=300, env=e)


def ranks_case(a, n, tmp):
    path = os.path.join(tmp, "trace%d.json" % n)
    steps = 40
    p = run(a, n, ["--size", "8", "--steps", str(steps), "--thermo", "20"],
            {"HALOX_TRACE": path}, tmp)
    check(p.returncode == 0, "%d rank(s): rc %d %s" % (n, p.returncode, p.stderr[-300:]))
    if p.returncode != 0:
        return None
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as err:
        check(False, "%d rank(s): the trace is valid JSON (%s)" % (n, err))
        return None
    ev = d.get("traceEvents", [])
    procs = {e["pid"]: e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    check(procs == {r: "rank %d" % r for r in range(n)},
          "%d rank(s): processes %s" % (n, sorted(procs.items())))
    xs = [e for e in ev if e.get("ph") == "X"]
    check(all(e["dur"] >= 0 and e["ts"] >= -1e6 for e in xs),
          "%d rank(s): every range has a start and a non-negative length" % n)
    first = {}
    for r in range(n):
        st = sorted(e["ts"] for e in xs if e["pid"] == r and e["name"] == "step")
        check(len(st) == steps, "%d rank(s): rank %d has %d step ranges (%d)" %
              (n, r, len(st), steps))
        if st:
            first[r] = st[0]
        names = {e["name"] for e in xs if e["pid"] == r}
        want = {"lattice", "velocities", "engine set-up", "thermo"}
        if not a.gpu:
            want |= {"local forces", "integrate", "neighbour build"}
        check(want <= names, "%d rank(s): rank %d has the ranges %s" %
              (n, r, sorted(want - names) or "all"))
    if len(first) == n and n > 1:
        spread = max(first.values()) - min(first.values())
        check(spread < 50000, "%d ranks: first steps within 50 ms (%.0f us)" % (n, spread))
    if a.gpu:
        check(not any(e.get("cat") == "api" for e in xs),
              "gpu: no CUDA call records without HALOX_TRACE_API")
        kern = [e for e in xs if e.get("cat") == "kernel"]
        knames = {e["name"] for e in kern}
        check("hxg_k_kickdrift" in knames and any(k.startswith("hxg_k_force") for k in knames),
              "gpu: the integrator and force kernels are recorded (%d kernels, e.g. %s)" %
              (len(kern), sorted(knames)[:6]))
        threads = {e["args"]["name"] for e in ev
                   if e.get("ph") == "M" and e.get("name") == "thread_name"}
        check(any(t.startswith("stream ") for t in threads), "gpu: streams are named (%s)" %
              sorted(threads))
        host = [e for e in xs if e.get("cat") == "host" and e["name"] == "step"]
        if host and kern:
            lo = min(e["ts"] for e in host) - 1e6
            hi = max(e["ts"] + e["dur"] for e in host) + 1e6
            inside = sum(1 for e in kern if lo <= e["ts"] <= hi)
            check(inside >= 0.9 * len([e for e in kern if e["name"] == "hxg_k_kickdrift"]),
                  "gpu: kernels lie on the host's clock, within the run's steps (%d of %d)" %
                  (inside, len(kern)))
    return path


def api_case(a, tmp):
    path = os.path.join(tmp, "api.json")
    p = run(a, 1, ["--size", "6", "--steps", "20", "--thermo", "10"],
            {"HALOX_TRACE": path, "HALOX_TRACE_API": "1"}, tmp)
    check(p.returncode == 0, "api: rc %d %s" % (p.returncode, p.stderr[-300:]))
    if p.returncode != 0:
        return
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    api = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "api"]
    names = {e["name"] for e in api}
    check(any(n in names for n in ("cudaLaunchKernel", "cudaGraphLaunch")),
          "api: kernel or graph launches recorded (%d calls, e.g. %s)" %
          (len(api), sorted(names)[:8]))
    check(not any("_v" in n and n.rsplit("_v", 1)[1].isdigit() for n in names),
          "api: names without their version suffix")
    rows = {e["tid"]: e["args"]["name"] for e in ev
            if e.get("ph") == "M" and e.get("name") == "thread_name"}
    check(all(rows.get(e["tid"], "").startswith("CUDA calls, host thread ") for e in api),
          "api: every call on a named host-thread row (%s)" % sorted(set(rows.values())))
    steps = [e for e in ev if e.get("ph") == "X" and e.get("name") == "step"]
    if steps and api:
        lo = min(e["ts"] for e in steps) - 1e6
        hi = max(e["ts"] + e["dur"] for e in steps) + 1e6
        launches = [e for e in api if e["name"] in ("cudaLaunchKernel", "cudaGraphLaunch")]
        inside = sum(1 for e in launches if lo <= e["ts"] <= hi)
        check(inside >= 0.5 * len(launches),
              "api: launches on the host's clock, within the run (%d of %d)" %
              (inside, len(launches)))


def main():
    ap = md_parser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--sums")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if a.gpu:
            p = run(a, 1, ["--size", "5", "--steps", "0"], {}, tmp)
            if p.returncode != 0:
                skipped("halox-md --gpu", p.stderr)
                return 0
        p = run(a, 1, ["--size", "6", "--steps", "10"], {}, tmp)
        check(p.returncode == 0 and not os.listdir(tmp) and "trace" not in p.stdout,
              "off: no file, no message (%s)" % os.listdir(tmp))
        bad = os.path.join(tmp, "no", "such", "dir", "t.json")
        p = run(a, 1, ["--size", "6", "--steps", "10"], {"HALOX_TRACE": bad}, tmp)
        errs = [l for l in p.stderr.splitlines() if "ERROR" in l]
        check(p.returncode != 0 and len(errs) == 1 and "HALOX_TRACE" in errs[0]
              and "Step" not in p.stdout,
              "bad path: one ERROR line before any step (%s)" % errs)
        paths = [ranks_case(a, 1, tmp)]
        if a.gpu:
            api_case(a, tmp)
        if a.mpiexec:
            paths.append(ranks_case(a, 2, tmp))
        else:
            print("skip 2 ranks: no launcher given")
        for path in [p for p in paths if p]:
            out = path[:-5] + ".svg"
            q = subprocess.run([sys.executable, a.script, path, "--out", out], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=120)
            ok = q.returncode == 0 and os.path.getsize(out) > 1000 if os.path.exists(out) else False
            with open(out) if os.path.exists(out) else open(os.devnull) as f:
                svg = f.read()
            check(ok and "rank 0 host" in svg, "picture of %s: %s" %
                  (os.path.basename(path), (q.stdout + q.stderr).strip().splitlines()[:3]))
        if a.sums and paths[0]:
            sums_case(a.sums, paths[0])
        if a.sums:
            idle_case(a.sums, tmp)
            chain_case(a.sums, tmp)
    return finish()


def sums_case(script, path):
    q = subprocess.run([sys.executable, script, path, "step"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    rows = [l.split() for l in q.stdout.splitlines()[1:]]
    step = [r for r in rows if r and r[0] == "step"]
    check(q.returncode == 0 and len(step) == 1 and step[0][1] == "40",
          "sums: 40 step ranges on rank 0 (%s)" % (q.stdout + q.stderr).strip()[-200:])
    q = subprocess.run([sys.executable, script, path, "no such range"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    check(q.returncode != 0 and "no range" in q.stderr,
          "sums: a name nothing matches is refused (rc %d)" % q.returncode)
    with open(path) as f:
        xs = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and e["pid"] == 0]
    thermo = [e for e in xs if e["name"] == "thermo"]
    q = subprocess.run([sys.executable, script, path, "--within", "thermo"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    got = sum(int(l.split()[-4]) for l in q.stdout.splitlines()[1:] if l.split())
    want = sum(1 for e in xs if any(t["ts"] <= e["ts"] <= t["ts"] + t["dur"] for t in thermo))
    check(q.returncode == 0 and got == want and want > 0,
          "sums: --within thermo keeps the %d ranges that start inside it (%d; %s)" %
          (want, got, q.stderr.strip()[-200:]))
    q = subprocess.run([sys.executable, script, path, "--within", "no such range"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    check(q.returncode != 0 and "no host range" in q.stderr,
          "sums: --within a range the trace lacks is refused (rc %d)" % q.returncode)


def idle_case(script, tmp):
    """trace_kernels.py --idle on a trace whose answer is known: rank 0's
    "plan" ranges [100, 200], [300, 350] and [500, 520] us; its GPU busy
    over [90, 140] (two kernels on two streams), [180, 220] (a copy) and
    [310, 320]; so the plan ranges last 170 / 3 us on average (median 50),
    the GPU covers 60, 10 and 0 of them (70 / 3 on average), idle 40, 40
    and 20 (100 / 3 on average, median 40); the "sort" range [400, 410]
    none of it. Rank 1's kernel and rank 0's CUDA call count for nothing."""
    def x(pid, cat, name, ts, dur, tid=1):
        return {"ph": "X", "pid": pid, "tid": tid, "cat": cat, "name": name, "ts": ts, "dur": dur}
    ev = [x(0, "host", "plan", 100, 100), x(0, "host", "plan", 300, 50), x(0, "host", "plan", 500, 20),
          x(0, "host", "sort", 400, 10), x(0, "kernel", "k1", 90, 30, 7),
          x(0, "kernel", "k2", 110, 30, 8), x(0, "memcpy", "c", 180, 40, 7),
          x(0, "kernel", "k3", 310, 10, 7), x(1, "kernel", "other", 100, 300, 7),
          x(0, "api", "cudaLaunchKernel", 150, 5)]
    path = os.path.join(tmp, "idle.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)
    q = subprocess.run([sys.executable, script, path, "--idle", "--within", "plan,sort"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    rows = {l.split()[0]: [float(v) for v in l.split()[1:]] for l in q.stdout.splitlines()[1:]
            if l.split()}
    check(q.returncode == 0 and rows.get("plan") == [3, 56.67, 23.33, 33.33, 58.8, 50.0, 40.0]
          and rows.get("sort") == [1, 10.0, 0.0, 10.0, 100.0, 10.0, 10.0],
          "idle: the ranges' length, GPU share and idle time as computed by hand (%s)"
          % (q.stdout + q.stderr).strip()[-300:])
    q = subprocess.run([sys.executable, script, path, "--idle", "--within", "lists"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    check(q.returncode != 0 and "no host range" in q.stderr,
          "idle: a range the trace lacks is refused (rc %d)" % q.returncode)


def chain_case(script, tmp):
    """trace_kernels.py --chain on a trace whose answer is known: rank 0's
    kick-drift (stream 1) starts at 0, 28, 54, 100 and 130 us; the steps
    hold the forward exchange, the non-local forces and the reverse on
    stream 2 and the local forces on stream 1 (in the first starting after
    the non-local ones, so that only the stream tells them apart), the
    second with its non-local forces starting 1 us before the forward ends
    (PDL); the third holds a rebuild's kernel too and is left out. Medians
    of the other three: kick-drift 2, forward gap 1 length 6, non-local gap
    1 length 5, reverse gap 1 length 9, next kick-drift gap 3, local forces
    9, step 28 (means would differ). Rank 1's kernels count for nothing."""
    def k(pid, tid, name, ts, dur):
        return {"ph": "X", "pid": pid, "tid": tid, "cat": "kernel", "name": name, "ts": ts,
                "dur": dur}
    kd, fwd, rev, force = "hxg_k_kickdrift", "hxi_k_fz_forward", "hxi_k_fz_reverse", "hxg_k_force"
    ev = [k(0, 1, kd, 0, 2), k(0, 2, fwd, 3, 7), k(0, 1, force, 12, 9), k(0, 2, force, 11, 5),
          k(0, 2, rev, 17, 9),
          k(0, 1, kd, 28, 2), k(0, 2, fwd, 31, 6), k(0, 1, force, 31, 9), k(0, 2, force, 36, 6),
          k(0, 2, rev, 43, 8),
          k(0, 1, kd, 54, 2), k(0, 2, "hxr_k_classify", 57, 3), k(0, 2, fwd, 61, 7),
          k(0, 1, force, 61, 9), k(0, 2, force, 69, 5), k(0, 2, rev, 75, 9),
          k(0, 1, kd, 100, 2), k(0, 2, fwd, 103, 6), k(0, 1, force, 104, 9),
          k(0, 2, force, 110, 4), k(0, 2, rev, 115, 12),
          k(0, 1, kd, 130, 2), k(1, 2, fwd, 5, 1)]
    path = os.path.join(tmp, "chain.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)
    q = subprocess.run([sys.executable, script, path, "--chain"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    got = {}
    for line in q.stdout.splitlines()[2:]:
        name, _, rest = line.partition("  ")
        got[name.strip()] = [float(v) for v in rest.split()]
    want = {"kick-drift": [2.0], "forward": [1.0, 6.0], "non-local forces": [1.0, 5.0],
            "reverse": [1.0, 9.0], "next kick-drift": [3.0], "local forces (beside)": [9.0],
            "step": [28.0]}
    check(q.returncode == 0 and "median of 3 steps" in q.stdout and got == want,
          "chain: the gaps and lengths as computed by hand (%s)" % (q.stdout + q.stderr)[-400:])
    q = subprocess.run([sys.executable, script, path, "--chain", "--rank", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    check(q.returncode != 0 and "no step" in q.stderr,
          "chain: a rank without such steps is refused (rc %d)" % q.returncode)


if __name__ == "__main__":
    sys.exit(main())
