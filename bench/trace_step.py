#!/usr/bin/env python3
"""Draws one step of a halox-md trace (HALOX_TRACE=FILE) as a timeline.

  trace_step.py TRACE.json [--out step.png|step.svg] [--anchor NAME]
                [--index K] [--steps N] [--from US --to US]

One lane per rank and thread (the host thread, then each GPU stream), one
bar per range, coloured by name, labelled where it is wide enough. The
window runs from the K-th start of the anchor on rank 0 to its (K+N)-th
start: by default the integrator kernel (hxg_k_kickdrift) where the trace
has kernels, else the driver's "step" range, and K the middle one, so the
window shows a step between rebuilds as the GPU ran it. --from/--to give
the window in microseconds instead. --list prints every range in the
window, lane by lane: start (us from the window's start), length, name.
Writes PNG with matplotlib, SVG
without it (or when the name ends in .svg). Prints what the window holds:
per lane, the busy time and the largest gap.
"""
import argparse
import json
import sys
from collections import defaultdict

PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac", "#86bcb6", "#d37295"]


def load(path):
    with open(path) as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    names = {}
    for e in ev:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e.get("tid", 0))] = e["args"]["name"]
    bars = [e for e in ev if e.get("ph") == "X"]
    return bars, names


def window(bars, a):
    if a.frm is not None and a.to is not None:
        return a.frm, a.to, "given"
    anchor = a.anchor
    if anchor is None:
        anchor = "hxg_k_kickdrift" if any(b["name"] == "hxg_k_kickdrift" for b in bars) else "step"
    starts = sorted(b["ts"] for b in bars if b["name"] == anchor and b["pid"] == 0)
    if len(starts) < a.steps + 1:
        sys.exit("trace_step.py: rank 0 has %d '%s' ranges, fewer than %d" %
                 (len(starts), anchor, a.steps + 1))
    k = a.index if a.index is not None else (len(starts) - a.steps) // 2
    k = max(0, min(k, len(starts) - a.steps - 1))
    return starts[k], starts[k + a.steps], "%s #%d" % (anchor, k)


def lanes_of(bars, t0, t1):
    lanes = defaultdict(list)
    for b in bars:
        s, e = b["ts"], b["ts"] + b["dur"]
        if e < t0 or s > t1 or b["name"] in ("trace start",):
            continue
        lanes[(b["pid"], b["tid"])].append(b)
    return dict(sorted(lanes.items()))


def summary(lanes, names, t0, t1):
    for key, bs in lanes.items():
        iv = sorted((max(b["ts"], t0), min(b["ts"] + b["dur"], t1)) for b in bs)
        busy, gap, end = 0.0, 0.0, t0
        for s, e in iv:
            if s > end:
                gap = max(gap, s - end)
            if e > end:
                busy += e - max(s, end)
                end = e
        gap = max(gap, t1 - end)
        print("  rank %d %-12s busy %8.1f us of %8.1f, largest gap %7.1f us, %d ranges" %
              (key[0], names.get(key, "tid %d" % key[1]), busy, t1 - t0, gap, len(bs)))


def listing(lanes, names, t0):
    for key, bs in lanes.items():
        print("  rank %d %s:" % (key[0], names.get(key, "tid %d" % key[1])))
        for b in sorted(bs, key=lambda b: b["ts"]):
            print("    %9.1f %8.1f  %s" % (b["ts"] - t0, b["dur"], b["name"]))


def colours(lanes):
    seen = {}
    for bs in lanes.values():
        for b in bs:
            if b["name"] not in seen:
                seen[b["name"]] = PALETTE[len(seen) % len(PALETTE)]
    return seen


def draw_svg(path, lanes, names, t0, t1, title):
    col = colours(lanes)
    W, left, lh = 1400, 170, 26
    H = 60 + lh * len(lanes)
    sx = (W - left - 20) / max(t1 - t0, 1e-9)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="18" font-size="13">%s</text>' % esc(title)]
    for row, (key, bs) in enumerate(lanes.items()):
        y = 34 + row * lh
        out.append('<text x="6" y="%d">rank %d %s</text>' %
                   (y + 15, key[0], esc(names.get(key, "tid %d" % key[1]))))
        for b in bs:
            s = max(b["ts"], t0)
            e = min(b["ts"] + b["dur"], t1)
            x, w = left + (s - t0) * sx, max((e - s) * sx, 0.5)
            out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s">'
                       '<title>%s %.1f us</title></rect>' %
                       (x, y, w, lh - 6, col[b["name"]], esc(b["name"]), b["dur"]))
            if w > 7 * len(b["name"]):
                out.append('<text x="%.1f" y="%d" fill="white">%s</text>' %
                           (x + 2, y + 14, esc(b["name"])))
    out.append('<text x="%d" y="%d">%.1f us</text>' % (W - 90, H - 6, t1 - t0))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def draw_png(path, lanes, names, t0, t1, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    col = colours(lanes)
    fig, ax = plt.subplots(figsize=(16, 1 + 0.45 * len(lanes)))
    for row, (key, bs) in enumerate(lanes.items()):
        for b in bs:
            s = max(b["ts"], t0)
            e = min(b["ts"] + b["dur"], t1)
            ax.broken_barh([(s - t0, max(e - s, 0.01))], (row - 0.4, 0.8),
                           facecolors=col[b["name"]])
            if (e - s) > (t1 - t0) * 0.012 * max(len(b["name"]), 4) / 4:
                ax.text(s - t0, row, " " + b["name"], va="center", fontsize=7, color="white",
                        clip_on=True)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels(["rank %d %s" % (k[0], names.get(k, "tid %d" % k[1])) for k in lanes])
    ax.invert_yaxis()
    ax.set_xlim(0, t1 - t0)
    ax.set_xlabel("us")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--out", default="step.png")
    ap.add_argument("--anchor")
    ap.add_argument("--index", type=int)
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--from", dest="frm", type=float)
    ap.add_argument("--to", type=float)
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    bars, names = load(a.trace)
    t0, t1, how = window(bars, a)
    lanes = lanes_of(bars, t0, t1)
    title = "%s: %.1f us from %.1f (%s)" % (a.trace, t1 - t0, t0, how)
    print(title)
    summary(lanes, names, t0, t1)
    if a.list:
        listing(lanes, names, t0)
    out = a.out
    if out.endswith(".png"):
        try:
            draw_png(out, lanes, names, t0, t1, title)
        except ImportError:
            out = out[:-4] + ".svg"
            print("no matplotlib: writing %s instead" % out)
            draw_svg(out, lanes, names, t0, t1, title)
    else:
        draw_svg(out, lanes, names, t0, t1, title)
    print("wrote", out)


if __name__ == "__main__":
    main()
