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

  trace_kernels.py TRACE.json --idle [--within RANGE,...] [--rank R]

For each host range name (default: the rebuild's phases), how long the
ranges last and how much of that the rank's GPU work (kernels, copies,
fills, on any stream) covers: what is left is time the GPU had nothing of
this rank's to run, e.g. waiting for the host between a wait and the next
launch. Mean us per range, and the median of the ranges' lengths and of
their idle times (a run's first rebuild, which allocates, weighs on the
means alone).

  trace_kernels.py TRACE.json --chain [--rank R]

The chain of a multi-rank step between rebuilds with the fused transport,
median over the steps that hold exactly it (a step: from one start of the
kick-drift kernel to the next; steps with a rebuild or thermo sums hold
more kernels and are left out): the kick-drift, the forward exchange, the
non-local forces (the force kernel on the forward exchange's stream), the
reverse exchange, then the next kick-drift; each one's length and the gap
from the end of the one before to its start (negative where it started
before that one ended, as a kernel launched with programmatic dependent
launch may); and the local forces beside them. What a change in how the
step is launched saves shows as gaps.
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
    ap.add_argument("--idle", action="store_true")
    ap.add_argument("--chain", action="store_true")
    a = ap.parse_args()
    try:
        with open(a.trace) as f:
            d = json.load(f)
    except (OSError, ValueError) as err:
        sys.exit("trace_kernels.py: cannot read %s: %s" % (a.trace, err))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    if a.idle:
        return idle(ev, a)
    if a.chain:
        return chain(ev, a.rank)
    want = [w for w in a.names.split(",") if w]
    inside = set(w for w in a.within.split(",") if w)
    spans = spans_of(ev, a.rank, ("host",), inside)
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


PHASES = "drain,migrate,sort,plan,set_plan,forward,lists"
DEVICE = ("kernel", "memcpy", "memset")


def spans_of(ev, rank, cats, names=None):
    """(start, end) of rank's ranges of the categories cats (and, given
    names, of those names), in order of start."""
    return sorted((float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in ev
                  if e.get("ph") == "X" and e.get("pid") == rank and e.get("cat") in cats
                  and (names is None or e.get("name") in names))


def merged(intervals):
    """Sorted (start, end) pairs as disjoint intervals covering the same time."""
    out = []
    for t0, t1 in sorted(intervals):
        if out and t0 <= out[-1][1]:
            out[-1][1] = max(out[-1][1], t1)
        else:
            out.append([t0, t1])
    return out


def covered(busy, ends, t0, t1):
    """How much of [t0, t1] the disjoint intervals busy (ends: their ends) cover."""
    k = bisect.bisect_right(ends, t0)
    total = 0.0
    while k < len(busy) and busy[k][0] < t1:
        total += min(busy[k][1], t1) - max(busy[k][0], t0)
        k += 1
    return total


def idle(ev, a):
    names = [w for w in (a.within or PHASES).split(",") if w]
    busy = merged(spans_of(ev, a.rank, DEVICE))
    ends = [t1 for _, t1 in busy]
    rows = []
    for name in names:
        spans = spans_of(ev, a.rank, ("host",), (name,))
        if spans:
            length = [t1 - t0 for t0, t1 in spans]
            gpu = [covered(busy, ends, t0, t1) for t0, t1 in spans]
            idle_us = [t - g for t, g in zip(length, gpu)]
            rows.append((name, len(spans), statistics.mean(length), statistics.mean(gpu),
                         statistics.median(length), statistics.median(idle_us)))
    if not rows:
        sys.exit("trace_kernels.py: rank %d has no host range named %s" % (a.rank, ",".join(names)))
    if not busy:
        print("(rank %d has no GPU records: run halox-md --gpu)" % a.rank)
    print("%-20s %7s %10s %10s %10s %7s %10s %10s" % (
        "range (rank %d)" % a.rank, "count", "mean us", "GPU us", "idle us", "idle %",
        "median us", "med idle"))
    for name, n, length, gpu, med, med_idle in rows:
        print("%-20s %7d %10.2f %10.2f %10.2f %7.1f %10.2f %10.2f" % (
            name, n, length, gpu, length - gpu,
            100.0 * (length - gpu) / length if length > 0 else 0.0, med, med_idle))
    return 0


KD, FWD, REV, FORCE = "hxg_k_kickdrift", "fz_forward", "fz_reverse", "hxg_k_force"


def chain(ev, rank):
    kern = sorted((e for e in ev if e.get("ph") == "X" and e.get("pid") == rank
                   and e.get("cat") == "kernel"), key=lambda e: float(e["ts"]))
    kd = [e for e in kern if e.get("name") == KD]
    rows = defaultdict(list)
    steps = []
    for a, b in zip(kd, kd[1:]):
        t0, t1 = float(a["ts"]), float(b["ts"])
        inside = [e for e in kern if t0 < float(e["ts"]) < t1]
        fwd = [e for e in inside if FWD in e.get("name", "")]
        rev = [e for e in inside if REV in e.get("name", "")]
        force = [e for e in inside if e.get("name") == FORCE]
        if len(inside) != 4 or len(fwd) != 1 or len(rev) != 1 or len(force) != 2:
            continue
        nl = [e for e in force if e.get("tid") == fwd[0].get("tid")]
        loc = [e for e in force if e.get("tid") != fwd[0].get("tid")]
        if len(nl) != 1 or len(loc) != 1:
            continue
        links = [("kick-drift", a), ("forward", fwd[0]), ("non-local forces", nl[0]),
                 ("reverse", rev[0]), ("next kick-drift", b)]
        end = None
        for name, e in links:
            start = float(e["ts"])
            if end is not None:
                rows[name + " gap"].append(start - end)
            if name != "next kick-drift":
                rows[name].append(float(e["dur"]))
            end = start + float(e["dur"])
        rows["local forces"].append(float(loc[0]["dur"]))
        steps.append(t1 - t0)
    if not steps:
        sys.exit("trace_kernels.py: rank %d has no step of kick-drift, forward, non-local and "
                 "local forces and reverse alone (a multi-rank --gpu run with nvshmem-fused)"
                 % rank)
    print("chain of rank %d, median of %d steps between rebuilds: us" % (rank, len(steps)))
    print("%-22s %10s %10s" % ("", "gap before", "length"))
    for name in ("kick-drift", "forward", "non-local forces", "reverse", "next kick-drift"):
        gap = rows.get(name + " gap")
        length = rows.get(name)
        print("%-22s %10s %10s" % (name, "%.2f" % statistics.median(gap) if gap else "",
                                   "%.2f" % statistics.median(length) if length else ""))
    print("%-22s %10s %10.2f" % ("local forces (beside)", "", statistics.median(rows["local forces"])))
    print("%-22s %10s %10.2f" % ("step", "", statistics.median(steps)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
