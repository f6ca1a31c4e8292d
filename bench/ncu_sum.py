#!/usr/bin/env python3
"""Sums kernel durations from an Nsight Compute log made with
`ncu --metrics gpu__time_duration.sum`: one line per kernel (template
arguments kept), launches, mean and total microseconds, largest total first.

    bench/ncu_sum.py NCU_LOG [TOP]
"""
import collections
import re
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    tot = collections.OrderedDict()
    cnt = collections.Counter()
    name = None
    scale = {"ms": 1e3, "us": 1.0, "ns": 1e-3, "s": 1e6}
    with open(sys.argv[1], errors="replace") as f:
        for line in f:
            m = re.match(r"^  (?:void )?([A-Za-z_][\w:]*(?:<[^(]*>)?)\(", line)
            if m:
                name = m.group(1).replace(" ", "")
                continue
            m = re.search(r"gpu__time_duration.sum\s+(\w+)\s+([\d.,]+)", line)
            if m and name:
                v = float(m.group(2).replace(",", "")) * scale.get(m.group(1), 1.0)
                tot[name] = tot.get(name, 0.0) + v
                cnt[name] += 1
                name = None
    for k, v in sorted(tot.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{k:48s} {cnt[k]:5d} x {v / cnt[k]:10.1f} us = {v:10.1f} us")


if __name__ == "__main__":
    main()
