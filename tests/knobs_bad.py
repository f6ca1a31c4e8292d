#!/usr/bin/env python3
"""Every HALOX_* variable given a bad value: the run does not start.

For each variable of the table (halox-md --help-env=tsv), values wrong for
its type, made here from the type and the bounds: letters, trailing junk,
out of range both ways, not finite, not 0 or a power of two, an unknown
choice, a file in a directory that does not exist, the wrong number of
fields. Each goes to a tiny CPU run of halox-md, which must exit with 2
before doing anything, printing one ERROR line that names the variable and
the value and says what it allows. halox-bench gets one of them. A run
without bad values must pass, and one with a variable halox does not read
must warn and still run.

Usage: knobs_bad.py --halox PATH --bench PATH
"""
import argparse
import os
import subprocess
import sys
import tempfile

from checks import check, finish

RUN = ["--cpu", "--size", "4", "--steps", "1", "--no-progress"]
INT_MAX = 2147483647


def table(halox):
    p = subprocess.run([halox, "--help-env=tsv"], stdout=subprocess.PIPE, text=True, timeout=60)
    rows = []
    for line in p.stdout.splitlines():
        name, kind, audience, lo, hi, flags, values = line.split("\t")
        rows.append((name, kind, audience, float(lo), float(hi), int(flags), values))
    return rows


def bad_numbers(kind, lo, hi, flags):
    """Values one number of this kind and range does not take."""
    if kind == "real":
        out = ["abc", "1.5x", "nan", "inf", "-inf", "1e300", "%g" % (hi * 10)]
        out.append("%g" % lo if flags & 1 else "%g" % (lo - 1))
        return out
    out = ["x", "1x", "1.5", " 1"]
    out.append(str(int(lo) - 1))
    if hi < INT_MAX:
        out.append(str(int(hi) + 1))
    if flags & 2:
        out.append("3")
    return out


def bad_values(row, tmp):
    name, kind, audience, lo, hi, flags, values = row
    if kind in ("int", "real"):
        return bad_numbers(kind, lo, hi, flags)
    if kind == "choice":
        first = values.split("|")[0]
        return ["no-such-choice", first.upper(), first + " "]
    if kind == "path":
        return [os.path.join(tmp, "no", "such", "dir", "x.json")]
    if kind == "ints":
        sep = [c for c in values if not (c.isupper() or c == "_")][0]
        n = values.count(sep) + 1
        out = [sep.join(["1"] * (n - 1)), sep.join(["1"] * (n + 1)), sep.join(["x"] * n)]
        out += [sep.join([v] + ["1"] * (n - 1)) for v in bad_numbers("int", lo, hi, flags)
                if v.strip() and sep not in v]
        return out
    check(False, "%s: a type this test does not know: %s" % (name, kind))
    return []


def clean_env(extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("HALOX_")}
    e.update(extra)
    return e


def refused(prog, args, name, value, what):
    """One run with name=value: exit 2, one ERROR line naming both, nothing
    on stdout."""
    p = subprocess.run([prog] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=60, env=clean_env({name: value}))
    errs = [l for l in p.stderr.splitlines() if "ERROR" in l]
    ok = (p.returncode == 2 and len(errs) == 1 and ("%s='%s'" % (name, value)) in errs[0]
          and "; give " in errs[0] and not p.stdout.strip())
    check(ok, "%s %s=%r: exit 2 and one ERROR line naming it before any work (rc %d, "
          "stderr %r, stdout %r)" % (what, name, value, p.returncode, p.stderr[-300:],
                                     p.stdout[-200:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--halox", required=True)
    ap.add_argument("--bench", required=True)
    a = ap.parse_args()

    rows = table(a.halox)
    check(len(rows) >= 20, "the table has its variables (%d)" % len(rows))
    users = [r for r in rows if r[2] == "user"]
    check(len(rows) <= 25 and len(users) <= 12,
          "at most 25 variables, 12 of them for users (%d, %d)" % (len(rows), len(users)))

    p = subprocess.run([a.halox] + RUN, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60, env=clean_env({}))
    check(p.returncode == 0, "the tiny run passes without bad values (rc %d: %s)"
          % (p.returncode, p.stderr[-300:]))

    cases = 0
    with tempfile.TemporaryDirectory(prefix="halox-knobs-") as tmp:
        for row in rows:
            values = bad_values(row, tmp)
            check(len(values) > 0, "%s: bad values to try" % row[0])
            for v in values:
                refused(a.halox, RUN, row[0], v, "halox-md")
                cases += 1
    refused(a.bench, ["--transport", "cpu", "--atoms", "1000", "--iters", "1"], "HALOX_LOG", "-5",
            "halox-bench")

    # A variable halox does not read (a removed one, say): a warning, a run.
    p = subprocess.run([a.halox] + RUN, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60, env=clean_env({"HALOX_MD_TPP": "2"}))
    check(p.returncode == 0 and "HALOX_MD_TPP set, but halox reads no such variable" in p.stderr,
          "an unknown HALOX_MD_TPP: a warning and a run (rc %d, %r)"
          % (p.returncode, p.stderr[-300:]))
    print("%d variables, %d bad values refused" % (len(rows), cases))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
