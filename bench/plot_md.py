#!/usr/bin/env python3
"""Plots of a halox-bench md CSV: us/step against atoms per transport, and
the speed-up over `mpi` against atoms, one panel per process count. Rows of
a newton mode (column `newton`, halox-bench md --newton) make series of
their own ("nvshmem-fused newton off"), set against `mpi` of that mode.

    plot_md.py md-bench.csv OUTDIR
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def mode(r):
    """The row's newton mode, "" where none was passed (or before the column)."""
    n = r.get("newton") or "default"
    return "" if n == "default" else f" newton {n}"


def main(path, outdir):
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        r["series"] = r["transport"] + mode(r)
    os.makedirs(outdir, exist_ok=True)
    procs = sorted({int(r["ranks"]) for r in rows})
    # One colour per transport in every panel.
    names = sorted({r["series"] for r in rows})
    colour = {t: f"C{i % 10}" for i, t in enumerate(names)}
    for p in procs:
        sub = [r for r in rows if int(r["ranks"]) == p]
        trans = sorted({r["series"] for r in sub})
        fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
        for t in trans:
            pts = sorted((int(r["atoms"]), float(r["us_step_median"]))
                         for r in sub if r["series"] == t)
            ax[0].plot([a for a, _ in pts], [u for _, u in pts], marker="o", label=t,
                       color=colour[t])
            # Baseline: the fastest CPU-orchestrated mpi mode at each size,
            # of the same newton mode.
            m = next(mode(r) for r in sub if r["series"] == t)
            base = {}
            for r in sub:
                if r["transport"] in ("mpi", "mpi-staged", "mpi-ipc") and mode(r) == m:
                    a, u = int(r["atoms"]), float(r["us_step_median"])
                    base[a] = min(base.get(a, u), u)
            sp = [(a, base[a] / u) for a, u in pts if a in base]
            if sp and not t.startswith("mpi"):
                ax[1].plot([a for a, _ in sp], [s for _, s in sp], marker="o", label=t,
                           color=colour[t])
        ax[0].set_xscale("log")
        ax[0].set_yscale("log")
        ax[0].set_xlabel("atoms")
        ax[0].set_ylabel("us per MD step (median)")
        ax[0].set_title(f"halox-md, {p} process(es)")
        ax[0].grid(True, which="both", alpha=0.3)
        ax[0].legend(fontsize=8)
        ax[1].set_xscale("log")
        ax[1].axhline(1.0, color="gray", lw=0.8)
        ax[1].set_xlabel("atoms")
        ax[1].set_ylabel("speed-up over the fastest mpi mode")
        ax[1].set_title("speed-up over the CPU-orchestrated baseline")
        ax[1].grid(True, which="both", alpha=0.3)
        if ax[1].lines:
            ax[1].legend(fontsize=8)
        fig.tight_layout()
        out = os.path.join(outdir, f"md-{p}proc.png")
        fig.savefig(out, dpi=110)
        print(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
