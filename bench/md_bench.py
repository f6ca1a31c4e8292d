#!/usr/bin/env python3
"""halox-bench md: whole MD steps of halox-md, every transport, several sizes
and process counts, side by side in one run.

For each process count P (one process per GPU where there are enough GPUs,
otherwise P processes sharing the GPUs under MPS, which the caller starts),
each size and each transport, halox-md runs the LJ melt system and appends
one row to a CSV (halox-md --stats-csv). The table printed at the end gives
us/step (median over the stretches between rebuilds, and the mean including
rebuilds), tau/day, the speed-up of each transport over `mpi` and over
`nccl`, the strong-scaling efficiency against one process, the mean against
one process's mean, and what a rebuild costs in median steps.

--newton on,off runs each size, process count and transport once per mode
(halox-md --newton X; the CSV's and the table's column `newton`, which says
"default" where none was passed: the engine's own choice, which the GPU
engine makes by atoms per rank), so that the
full shell (off: forward alone) can be set beside the eighth shell (on:
forward + reverse); speed-ups and efficiencies compare rows of one mode.

--system slab runs an uneven system instead: a liquid slab filling the lower
40% of a box 2.5 times as tall along z (LAMMPS's melt there, n fcc cells
across with n^3 near a quarter of the size: 4 n^3 + 2 n^2 atoms, the slab's
top lattice plane included, as LAMMPS's region does; 4,200 for 4,000;
tests/balance_decks/in.slab), decomposed along z (processors 1 1 *). --balance on,off then runs each slab run with and without `balance
1.0 shift z 20 1.0` before it (column `balance`; off: the uniform
domains), so that the balanced step can be set beside the uniform one.

--system tilted runs the melt in a triclinic box instead: LAMMPS's
restricted triclinic prism of the same n cells a side with xy = xz = yz =
0.2 lx (in lattice cells, so that the lattice fills it; n a multiple of 5
keeps 0.2 n whole). --system melt,tilted runs both, side by side (column
`system`).

    halox-bench md [--sizes 4000,32000,...] [--procs 1,2] [--transports all]
                   [--steps N] [--csv FILE] [--plots DIR] [--mpirun CMD]
                   [--newton on|off|on,off] [--system melt|slab|tilted,...]
                   [--balance on|off|on,off]
"""
import argparse
import csv
import math
import os
import shlex
import subprocess
import sys
import tempfile
import time

# Atom counts and the fcc boxes that give them (4 atoms per cell).
SIZES = {
    4000: (10, 10, 10),
    32000: (20, 20, 20),
    44528: (22, 22, 23),  # the fcc box nearest to 45,000 atoms
    256000: (40, 40, 40),
    2048000: (80, 80, 80),
    16384000: (160, 160, 160),
}
GPU_TRANSPORTS = ["mpi-staged", "mpi", "nccl", "nvshmem-stream", "nvshmem-pulse",
                  "nvshmem-fused", "nvshmem-fused-tma", "auto"]
ONE = "none (1 process)"
DEFAULT = "default"  # the newton column where no --newton was passed
NONE = "-"  # the balance column of the melt (uniform, nothing to balance)
# Names for a transport in one of its modes: (transport, environment).
VARIANTS = {"mpi-staged": ("mpi", "HALOX_MPI_MODE=staged"),
            "mpi-ipc": ("mpi", "HALOX_MPI_MODE=ipc")}


def nearest_size(n):
    return min(SIZES, key=lambda s: abs(s - n))


def positive(text):
    """A whole number >= 1 (argparse type)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number")
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v} must be at least 1")
    return v


def positives(text):
    """A comma-separated list of whole numbers >= 1 (argparse type)."""
    return [positive(x) for x in text.split(",")]


# What the slab and the tilted melt share with LAMMPS's in.lj after the box.
MELT = """mass 1 1.0
velocity all create 1.44 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify every 20 delay 0 check no
fix 1 all nve
"""

# The uneven system (--system slab): the slab deck of tests/balance_decks,
# n fcc cells across and 2.5 n tall, the lower 40% (n cells) filled; its
# balance threshold 1.0 balances, 1e9 never does (uniform domains).
SLAB = """units lj
atom_style atomic
processors 1 1 *
lattice fcc 0.8442
region box block 0 {n} 0 {n} 0 {h}
create_box 1 box
region slab block INF INF INF INF 0 {n}
create_atoms 1 region slab
""" + MELT + """balance {thresh} shift z 20 1.0
run 100
"""


def slab_deck(folder, atoms, balance):
    """The slab deck of about `atoms` atoms (4 n^3), balanced or not, as a
    file in folder; its path."""
    n = max(4, round((atoms / 4) ** (1 / 3)))
    path = os.path.join(folder, f"in.slab{n}{balance}")
    with open(path, "w") as f:
        f.write(SLAB.format(n=n, h=5 * n / 2, thresh="1.0" if balance == "on" else "1e9"))
    return path


# The melt in a triclinic box (--system tilted): LAMMPS's in.lj with its box
# a prism tilted by t lattice cells along xy, xz and yz.
TILTED = """units lj
atom_style atomic
lattice fcc 0.8442
region box prism 0 {n} 0 {n} 0 {n} {t} {t} {t}
create_box 1 box
create_atoms 1 box
""" + MELT + """run 100
"""


def tilted_deck(folder, atoms):
    """The tilted melt of SIZES[atoms] cells (cubic), as a file in folder; its
    path. The tilt is 0.2 of the edge, rounded to whole cells."""
    n = SIZES[atoms][0]
    path = os.path.join(folder, f"in.tilted{n}")
    with open(path, "w") as f:
        f.write(TILTED.format(n=n, t=round(0.2 * n)))
    return path


def systems(text):
    """melt, slab or tilted, comma separated, each once (argparse type)."""
    names = text.split(",")
    if any(m not in ("melt", "slab", "tilted") for m in names) or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"'{text}' is not melt, slab or tilted (comma separated)")
    return names


def newtons(text):
    """on, off or both, comma separated, each once (argparse type)."""
    modes = text.split(",")
    if not modes or any(m not in ("on", "off") for m in modes) or len(set(modes)) != len(modes):
        raise argparse.ArgumentTypeError(f"'{text}' is not on, off or on,off")
    return modes


def parse():
    p = argparse.ArgumentParser(prog="halox-bench md", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=positives, default=[4000, 32000, 45000, 256000, 2048000],
                   help="atom counts (each rounded to the nearest fcc box)")
    p.add_argument("--procs", type=positives, default=None,
                   help="process counts, e.g. 1,2 (default: 1 and the GPU count)")
    p.add_argument("--transports", default="all")
    p.add_argument("--steps", type=positive, default=1000)
    p.add_argument("--every", type=positive, default=20, help="neighbour-list rebuild interval")
    p.add_argument("--csv", default="md-bench.csv")
    p.add_argument("--plots", default=None, help="folder for PNG plots (needs matplotlib)")
    p.add_argument("--mpirun", default="mpirun --allow-run-as-root --oversubscribe")
    p.add_argument("--md", default=None, help="path of halox-md")
    p.add_argument("--extra", default="", help="extra halox-md arguments")
    p.add_argument("--cpu", action="store_true", help="the CPU engine instead of the GPU one")
    p.add_argument("--newton", type=newtons, default=[DEFAULT],
                   help="on, off or on,off: halox-md --newton per run (default: none passed)")
    p.add_argument("--system", type=systems, default=["melt"],
                   help="melt: the LJ melt; slab: a liquid slab in 40%% of the box along z; "
                        "tilted: the melt in a triclinic box (comma separated: each)")
    p.add_argument("--balance", type=newtons, default=None,
                   help="on, off or on,off (--system slab): balance before the run or not")
    p.add_argument("--report", metavar="CSV", help="only print the table of an existing CSV")
    return p.parse_args()


def gpu_count():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
        return sum(1 for line in out.splitlines() if line.startswith("GPU"))
    except OSError:
        return 0


def built_transports(md):
    out = subprocess.run([md, "--help"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "transports built" in line:
            return line.split(":", 1)[1].split()
    return []


def main():
    a = parse()
    if a.report:
        report(list(csv.DictReader(open(a.report))), [])
        return 0
    here = os.path.dirname(os.path.abspath(__file__))
    md = a.md or os.path.join(here, "..", "build", "tools", "halox-md")
    if not os.access(md, os.X_OK):
        sys.exit(f"halox-bench md: no halox-md at {md}: build first (tools/setup.sh)")
    ngpu = gpu_count()
    procs = a.procs if a.procs else sorted({1, max(ngpu, 1)})
    sizes = sorted({nearest_size(s) for s in a.sizes})
    have = built_transports(md)
    if a.cpu:
        transports = ["cpu"]
    elif a.transports == "all":
        transports = [t for t in GPU_TRANSPORTS if VARIANTS.get(t, (t,))[0] in have] or ["cpu"]
    else:
        transports = a.transports.split(",")
    if a.balance and "slab" not in a.system:
        sys.exit("halox-bench md: --balance needs --system slab (the melt is even)")
    configs = []
    for p in procs:
        for s in sizes:
            # One process has no halo: every transport would time the same run.
            for t in ([ONE] if p == 1 and not a.cpu else transports):
                for m in a.system:
                    balances = (a.balance or ["off", "on"]) if m == "slab" else [NONE]
                    configs += [(p, s, t, n, b, m) for n in a.newton for b in balances]
    if os.path.exists(a.csv):
        os.remove(a.csv)
    print(f"halox-bench md: {len(configs)} runs, {a.steps} steps each, GPUs seen: {ngpu}, "
          f"processes {procs}", flush=True)
    started = time.time()
    failures = []
    decks = tempfile.TemporaryDirectory(prefix="halox-bench-md-")
    for i, (p, s, t, newton, bal, sysname) in enumerate(configs):
        cmd = shlex.split(a.mpirun) + ["-n", str(p)]
        for var in ("NVSHMEM_DISABLE_NVLS", "NCCL_NVLS_ENABLE", "CUDA_MPS_PIPE_DIRECTORY",
                    "CUDA_MPS_LOG_DIRECTORY", "NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"):
            if var in os.environ:
                cmd += ["-x", var]
        name, env = VARIANTS.get(t, (t, None))
        if env:
            cmd += ["-x", env]
        system = (["-in", slab_deck(decks.name, s, bal)] if sysname == "slab" else
                  ["-in", tilted_deck(decks.name, s)] if sysname == "tilted" else
                  ["--cells", *map(str, SIZES[s])])
        cmd += [md, *system, "--steps", str(a.steps), "--every", str(a.every), "--thermo", "0",
                "--no-progress", "--stats-csv", a.csv]
        if a.cpu:
            cmd += ["--cpu"]
        elif t == ONE:
            cmd += ["--gpu"]  # one process: no halo, the engine's own choice
        else:
            cmd += ["--gpu", "--transport", name]
        if newton != DEFAULT:
            cmd += ["--newton", newton]
        cmd += shlex.split(a.extra)
        done = time.time() - started
        eta = "" if i == 0 else f", ETA {done / i * (len(configs) - i):.0f} s"
        mode = "" if newton == DEFAULT else f", newton {newton}"
        mode += "" if bal == NONE else f", slab, balance {bal}"
        mode += ", tilted" if sysname == "tilted" else ""
        print(f"[{i + 1}/{len(configs)}] {p} proc, {s} atoms, {t}{mode}{eta}", flush=True)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            lines = (r.stderr + r.stdout).strip().splitlines()
            tail = [x for x in lines if "ERROR" in x][:1] or lines[-3:]
            failures.append((p, s, t, newton, bal, sysname, " | ".join(tail)))
            print(f"    failed: {' | '.join(tail)}", flush=True)
        else:
            label_last(a.csv, t if name != t or t == ONE else None,
                       {"newton": (newton, DEFAULT), "balance": (bal, NONE),
                        "system": (sysname, "melt")})
    decks.cleanup()
    rows = list(csv.DictReader(open(a.csv))) if os.path.exists(a.csv) else []
    report(rows, failures)
    if a.plots and rows:
        subprocess.run([sys.executable, os.path.join(here, "plot_md.py"), a.csv, a.plots])
    return 1 if not rows else 0


def label_last(path, label, cols):
    """Gives the last row (halox-md's, of the run just made) its value of
    each column of cols ({name: (value, value of rows before the column)}:
    newton, balance, system), which halox-md does not write, and names it after the
    variant that made it (mpi-staged...) where label is given."""
    with open(path) as f:
        rows = list(csv.reader(f))
    for name, (value, before) in cols.items():
        if name not in rows[0]:
            rows[0].append(name)
            for r in rows[1:-1]:
                r.append(before)
        at = rows[0].index(name)
        rows[-1] += [""] * (at + 1 - len(rows[-1]))
        rows[-1][at] = value
    if label:
        rows[-1][rows[0].index("transport")] = label
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)


def rebuild_steps(r):
    """What one rebuild costs, in median steps: the mean's excess over the
    median, over the run, per rebuild."""
    steps, rebuilds = int(r["steps"]), int(r["rebuilds"])
    median, mean = float(r["us_step_median"]), float(r["us_step_mean"])
    if rebuilds <= 0 or median <= 0:
        return "-"
    return f"{(mean - median) * steps / rebuilds / median:.1f}"


def newton_of(r):
    """A row's newton mode; "default" in a CSV of before the column."""
    return r.get("newton") or DEFAULT


def balance_of(r):
    """A row's balance (slab runs: on or off); "-" for the melt and in a
    CSV of before the column."""
    return r.get("balance") or NONE


def system_of(r):
    """A row's system (melt, slab or tilted); a CSV of before the column:
    slab where it has a balance, else melt."""
    return r.get("system") or ("slab" if balance_of(r) != NONE else "melt")


def report(rows, failures):
    def key(r):
        return (int(r["ranks"]), int(r["atoms"]), newton_of(r), balance_of(r), system_of(r),
                r["transport"])
    by = {key(r): r for r in rows}
    # One process's run of the same size and modes (any mode where that has none).
    one, one_mean = {}, {}
    for r in sorted(rows, key=lambda r: newton_of(r) == DEFAULT):
        if int(r["ranks"]) == 1:
            for k in ((int(r["atoms"]), newton_of(r), balance_of(r), system_of(r)),
                      (int(r["atoms"]), system_of(r))):
                one.setdefault(k, float(r["us_step_median"]))
                one_mean.setdefault(k, float(r["us_step_mean"]))
    print()
    print(f"{'procs':>5} {'atoms':>9} {'newton':<7} {'balance':<7} {'system':<6} "
          f"{'transport':<18} {'us/step':>9} {'mean':>9} {'tau/day':>9} {'vs mpi':>7} "
          f"{'vs nccl':>7} {'eff':>6} {'mean/1':>7} {'rebuild':>8} {'/melt':>9}")
    for k in sorted(by):
        r = by[k]
        p, n, nm, bl, sy, t = k
        us = float(r["us_step_median"])
        # The baseline is the fastest CPU-orchestrated mpi mode measured.
        cands = [by[k] for k in ((p, n, nm, bl, sy, "mpi"), (p, n, nm, bl, sy, "mpi-staged"),
                                 (p, n, nm, bl, sy, "mpi-ipc")) if k in by]
        mpi = min(cands, key=lambda r: float(r["us_step_median"])) if cands else None
        nccl = by.get((p, n, nm, bl, sy, "nccl"))
        vs_mpi = f"{float(mpi['us_step_median']) / us:.2f}" if mpi and p > 1 else "-"
        vs_nccl = f"{float(nccl['us_step_median']) / us:.2f}" if nccl and p > 1 else "-"
        base = (n, nm, bl, sy) if (n, nm, bl, sy) in one else (n, sy)
        eff = f"{one[base] / (p * us) * 100:.0f}%" if base in one and p > 1 else "-"
        # What a user sees: the mean with rebuilds against one process's.
        vs_one = (f"{float(r['us_step_mean']) / one_mean[base]:.2f}"
                  if base in one_mean and p > 1 else "-")
        # A tilted row against the melt's of the same run: median/mean.
        melt = by.get((p, n, nm, bl, "melt", t)) if sy == "tilted" else None
        vs_melt = (f"{us / float(melt['us_step_median']):.2f}/"
                   f"{float(r['us_step_mean']) / float(melt['us_step_mean']):.2f}"
                   if melt else "-")
        print(f"{p:>5} {n:>9} {nm:<7} {bl:<7} {sy:<6} {t:<18} {us:>9.1f} "
              f"{float(r['us_step_mean']):>9.1f} {float(r['tau_day']):>9.0f} {vs_mpi:>7} "
              f"{vs_nccl:>7} {eff:>6} {vs_one:>7} {rebuild_steps(r):>8} {vs_melt:>9}")
    for p, n, t, nm, bl, sy, why in failures:
        print(f"{p:>5} {n:>9} {nm:<7} {bl:<7} {sy:<6} {t:<18} failed: {why}")
    print("(mean/1: the mean us/step with rebuilds against one process's of the same newton, "
          "balance and system; rebuild: what one rebuild costs, in median steps; balance: the "
          "slab's domains balanced before the run or uniform, - otherwise; /melt: a tilted "
          "row's median and mean against the melt's of the same run)")


if __name__ == "__main__":
    sys.exit(main())
