#!/usr/bin/env python3
"""halox-bench --newton, end to end on the cpu transport: with on,off every
row comes in both modes, the full-shell rows (newton off: forward alone)
with twice the eighth shell's pulses and about twice its halo atoms on a
1x1x2 grid, the CSV saying each row's mode; with off alone, no row of on;
at 1 rank and, with a launcher, at 2. Then halox-bench md on the CPU
engine with --newton on,off (a row of each mode, column newton) and its
--report of a CSV from before the columns (newton "default"); and with
--system slab --balance off,on (column balance), and with --system
melt,tilted (column system, a tilted row set beside the melt's).

  bench_newton.py --bench PATH/halox-bench --halox PATH/halox-md
                  [--mpiexec CMD --mpiflags FLAGS]
"""
import argparse
import csv
import os
import shlex
import subprocess
import sys
import tempfile

from checks import check, finish

SMALL = ["--transport", "cpu", "--atoms", "4000", "--iters", "5", "--warmup", "1"]


def run(launch, args):
    p = subprocess.run(launch + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=120)
    return p.returncode, p.stdout, p.stderr


def rows_of(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def case_both(launch, ranks, tmp):
    """--newton on,off --field: both modes, side by side, and the CSV."""
    path = os.path.join(tmp, "both%d.csv" % ranks)
    grid = ["--grid", "1x1x%d" % ranks]
    rc, out, err = run(launch, SMALL + grid + ["--newton", "on,off", "--field", "--csv", path])
    what = "%d rank(s), --newton on,off" % ranks
    if not check(rc == 0, "%s runs (exit %d: %s)" % (what, rc, err.strip()[-300:])):
        return
    check("\ncpu                            on " in out and "\ncpu                            off " in out,
          "%s: the table has a cpu row of each mode" % what)
    rows = {(r["transport"], r["newton"]): r for r in rows_of(path)}
    check(set(rows) == {("cpu", "on"), ("cpu", "off"), ("cpu +field", "on"),
                        ("cpu +field", "off")}, "%s: CSV rows %s" % (what, sorted(rows)))
    on, off = rows.get(("cpu", "on")), rows.get(("cpu", "off"))
    if not (on and off):
        return
    check(on["status"] == "HX_OK" and off["status"] == "HX_OK",
          "%s: both rows ran (%s, %s)" % (what, on["status"], off["status"]))
    check(int(off["pulses"]) == 2 * int(on["pulses"]),
          "%s: full shell has twice the pulses (%s against %s)" % (what, off["pulses"],
                                                                   on["pulses"]))
    h_on, h_off = int(on["halo_atoms"]), int(off["halo_atoms"])
    ok = h_on == h_off == 0 if ranks == 1 else 1.6 * h_on < h_off < 2.4 * h_on
    check(ok, "%s: halo atoms %d (off) against %d (on)" % (what, h_off, h_on))


def case_off(launch, ranks, tmp):
    """--newton off alone: off rows only."""
    path = os.path.join(tmp, "off%d.csv" % ranks)
    rc, out, err = run(launch, SMALL + ["--newton", "off", "--csv", path])
    what = "%d rank(s), --newton off" % ranks
    if check(rc == 0, "%s runs (exit %d: %s)" % (what, rc, err.strip()[-300:])):
        modes = [(r["newton"], r["status"]) for r in rows_of(path)]
        check(modes == [("off", "HX_OK")], "%s: one row of off (%s)" % (what, modes))
        check("one step = forward alone" in out and "newton on:" not in out,
              "%s: the header names the full shell alone" % what)


def md_rows(out):
    """The report's rows: (procs, newton, transport) of each."""
    rows = []
    for line in out.splitlines():
        f = line.split()
        if len(f) > 6 and f[0].isdigit() and f[1].isdigit():
            rows.append((int(f[0]), f[2], f[5]))
    return rows


def case_md(a, tmp):
    """halox-bench md --cpu --newton on,off at 1 and 2 ranks; the report of
    its CSV with the newton column taken out."""
    path = os.path.join(tmp, "md.csv")
    mpirun = " ".join([shlex.quote(a.mpiexec)] + shlex.split(a.mpiflags))
    rc, out, err = run([a.bench], ["md", "--cpu", "--md", a.halox, "--sizes", "4000", "--procs",
                                   "1,2", "--steps", "20", "--newton", "on,off", "--csv", path,
                                   "--mpirun", mpirun])
    if not check(rc == 0, "md --newton on,off runs (exit %d: %s)" % (rc, err.strip()[-300:])):
        return
    want = [(p, n, "default") for p in (1, 2) for n in ("off", "on")]
    check(md_rows(out) == want, "md: a row per process count and mode %s" % md_rows(out))
    rows = rows_of(path)
    check([r["newton"] for r in rows] == ["on", "off", "on", "off"],
          "md: the CSV's newton column %s" % [r.get("newton") for r in rows])
    check("newton off: full shell" in rows[1]["how"] and "newton off" not in rows[0]["how"],
          "md: halox-md ran each mode (its how column)")
    check([r["balance"] for r in rows] == ["-"] * 4, "md: the melt's balance column is -")
    old = os.path.join(tmp, "old.csv")
    with open(path) as f, open(old, "w", newline="") as g:
        csv.writer(g).writerows(r[:-3] for r in csv.reader(f))  # before the three columns
    rc, out, err = run([a.bench], ["md", "--report", old])
    check(rc == 0 and md_rows(out) == [(1, "default", "default"), (2, "default", "default")],
          "md --report of a CSV without the column (exit %d, %s)" % (rc, md_rows(out)))


def case_slab(a, tmp):
    """halox-bench md --cpu --system slab --balance off,on at 2 ranks: a row
    of each, the slab's atoms, the balance column; --balance without the
    slab refused."""
    path = os.path.join(tmp, "slab.csv")
    mpirun = " ".join([shlex.quote(a.mpiexec)] + shlex.split(a.mpiflags))
    rc, out, err = run([a.bench], ["md", "--cpu", "--md", a.halox, "--sizes", "4000", "--procs",
                                   "2", "--steps", "20", "--system", "slab", "--balance",
                                   "off,on", "--csv", path, "--mpirun", mpirun])
    if not check(rc == 0, "md --system slab runs (exit %d: %s)" % (rc, err.strip()[-300:])):
        return
    rows = rows_of(path)
    check([(r["ranks"], r["atoms"], r["balance"]) for r in rows] ==
          [("2", "4200", "off"), ("2", "4200", "on")],
          "md slab: a row of each balance, 4,200 atoms (n 10) on 2 ranks %s"
          % [(r["ranks"], r["atoms"], r.get("balance")) for r in rows])
    bal = [l.split()[3] for l in out.splitlines()
           if len(l.split()) > 5 and l.split()[0] == "2" and l.split()[1] == "4200"]
    check(bal == ["off", "on"], "md slab: the table's balance column %s" % bal)
    rc, _, err = run([a.bench], ["md", "--cpu", "--md", a.halox, "--balance", "on"])
    check(rc != 0 and "--balance needs --system slab" in err,
          "md --balance without --system slab refused (exit %d: %s)" % (rc, err.strip()[-200:]))


def case_tilted(a, tmp):
    """halox-bench md --cpu --system melt,tilted at 2 ranks: a row of each
    system, the tilted one set beside the melt's (column /melt)."""
    path = os.path.join(tmp, "tilted.csv")
    mpirun = " ".join([shlex.quote(a.mpiexec)] + shlex.split(a.mpiflags))
    rc, out, err = run([a.bench], ["md", "--cpu", "--md", a.halox, "--sizes", "4000", "--procs",
                                   "2", "--steps", "20", "--system", "melt,tilted", "--csv", path,
                                   "--mpirun", mpirun])
    if not check(rc == 0, "md --system melt,tilted runs (exit %d: %s)"
                 % (rc, err.strip()[-300:])):
        return
    rows = rows_of(path)
    check([(r["atoms"], r["system"]) for r in rows] == [("4000", "melt"), ("4000", "tilted")],
          "md: a row of each system, 4,000 atoms %s"
          % [(r["atoms"], r.get("system")) for r in rows])
    table = [l.split() for l in out.splitlines()
             if len(l.split()) > 6 and l.split()[0] == "2" and l.split()[1] == "4000"]
    check([t[4] for t in table] == ["melt", "tilted"] and table[0][-1] == "-"
          and "/" in table[1][-1], "md: the table's system and /melt columns %s" % table)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--halox", required=True)
    ap.add_argument("--mpiexec", default="")
    ap.add_argument("--mpiflags", default="")
    a = ap.parse_args()
    launches = [(1, [a.bench])]
    if a.mpiexec:
        launches.append((2, [a.mpiexec, "-n", "2"] + shlex.split(a.mpiflags) + [a.bench]))
    else:
        print("SKIPPED: 2 ranks: no MPI launcher")
    with tempfile.TemporaryDirectory() as tmp:
        for ranks, launch in launches:
            case_both(launch, ranks, tmp)
            case_off(launch, ranks, tmp)
        if a.mpiexec:
            case_md(a, tmp)
            case_slab(a, tmp)
            case_tilted(a, tmp)
        else:
            print("SKIPPED: halox-bench md: no MPI launcher")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
