#!/usr/bin/env python3
"""Sums the ranges of a halox-md trace (HALOX_TRACE=FILE) by name.

  trace_kernels.py TRACE.json [NAME,NAME...] [--rank R] [--cat kernel|api|...]
                   [--within RANGE,RANGE...]

For one rank (default 0): per name, how many ranges, their mean and median
length and their total, in microseconds, largest total first. NAME,...
keeps the names that contain one of the given strings (hxg_k_build keeps
both list builds, say); --cat keeps one category (the GPU engine's kernels
are "kernel", the CUDA calls that HALOX_TRACE_API=1 adds are "api");
--within keeps the records that start inside one of the host's ranges
whose name is one of RANGE,... (the rebuild's phases: migrate, sort, plan,
set_plan, forward, lists). What a kernel costs, summed from a run, without
a profiler: e.g. the list builds of every rebuild of a run,
    HALOX_TRACE=t.json halox-md --gpu --size 16 --steps 400 --thermo 0
    trace_kernels.py t.json hxg_k_build
and the host's CUDA calls in the migration and the plan of a rebuild,
    HALOX_TRACE=t.json HALOX_TRACE_API=1 mpirun -n 2 halox-md --gpu ...
    trace_kernels.py t.json --cat api --within migrate,plan
"""
import argparse
import bisect
import json
import statistics
import sys
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("names", nargs="?", default="")
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--cat")
    ap.add_argument("--within", default="")
    a = ap.parse_args()
    try:
        with open(a.trace) as f:
            d = json.load(f)
    except (OSError, ValueError) as err:
        sys.exit("trace_kernels.py: cannot read %s: %s" % (a.trace, err))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    want = [w for w in a.names.split(",") if w]
    inside = set(w for w in a.within.split(",") if w)
    spans = sorted((float(e["ts"]), float(e["ts"]) + float(e["dur"]))
                   for e in ev if e.get("ph") == "X" and e.get("pid") == a.rank
                   and e.get("cat") == "host" and e.get("name") in inside)
    starts = [t0 for t0, _ in spans]
    sums = defaultdict(list)
    for e in ev:
        if e.get("ph") != "X" or e.get("pid") != a.rank:
            continue
        if a.cat and e.get("cat") != a.cat:
            continue
        if inside:
            k = bisect.bisect_right(starts, float(e["ts"])) - 1
            if k < 0 or float(e["ts"]) > spans[k][1]:
                continue
        name = e.get("name", "")
        if want and not any(w in name for w in want):
            continue
        sums[name].append(float(e["dur"]))
    if inside and not spans:
        sys.exit("trace_kernels.py: rank %d has no host range named %s in %s"
                 % (a.rank, ",".join(sorted(inside)), a.trace))
    if not sums:
        sys.exit("trace_kernels.py: no range of rank %d matches in %s" % (a.rank, a.trace))
    print("%-60s %7s %10s %10s %12s" % ("name (rank %d)" % a.rank, "count", "mean us", "median us",
                                        "total us"))
    for name, v in sorted(sums.items(), key=lambda kv: -sum(kv[1])):
        print("%-60s %7d %10.2f %10.2f %12.1f" % (name[:60], len(v), statistics.mean(v),
                                                   statistics.median(v), sum(v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
