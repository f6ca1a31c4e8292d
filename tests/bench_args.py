#!/usr/bin/env python3
"""halox-bench's options, end to end: every bad value is refused before
anything runs, with exit status 2 and one line naming the option (the
exchange benchmark, `pingpong`; `md` after argparse's usage line); good
ones run.

  bench_args.py --bench PATH/halox-bench
"""
import argparse
import subprocess
import sys

from checks import check, finish

BAD = [
    # (arguments, what the message must contain)
    (["--atoms", "-5"], "--atoms: -5 must be between 1 and"),
    (["--atoms", "32k"], "--atoms: '32k' is not a whole number"),
    (["--atoms", "1e5"], "--atoms: '1e5' is not a whole number"),
    (["--iters", "0"], "--iters: 0 must be between 1 and"),
    (["--warmup", "x"], "--warmup: 'x' is not a whole number"),
    (["--density", "abc"], "--density: 'abc' is not a finite number"),
    (["--cutoff", "0"], "--cutoff: 0 must be > 0"),
    (["--dtype", "dbl"], "--dtype takes float or double, not dbl"),
    (["--seed", "x"], "--seed: 'x' is not a whole number"),
    (["--lattice", "hcp"], "--lattice takes random or fcc, not hcp"),
    (["--tilt", "0.6"], "--tilt: 0.6 is beyond LAMMPS's limit"),
    (["--tilt", "x"], "--tilt: 'x' is not a finite number"),
    (["--grid", "1x1"], "cannot read grid \"1x1\""),
    (["--newton", "yes"], "--newton takes on, off or on,off, not yes"),
    (["--newton", "on,on"], "--newton takes on, off or on,off, not on,on"),
    (["--newton", "on,off,on"], "--newton takes on, off or on,off, not on,off,on"),
    (["--newton", ""], "--newton takes on, off or on,off, not "),
    (["--newton"], "option --newton needs a value"),
    (["--bogus"], "unknown option --bogus"),
    (["--transports", "cpu"], "unknown option --transports"),
    (["--atoms"], "option --atoms needs a value"),
    (["pingpong", "--iters"], "option --iters needs a value"),
    (["pingpong", "--iters", "0"], "--iters: 0 must be between 1 and"),
    (["pingpong", "--bytes", "8,x"], "--bytes: 'x' is not a whole number"),
    (["pingpong", "--bogus", "1"], "unknown option --bogus"),
    (["md", "--procs", "0"], "argument --procs: 0 must be at least 1"),
    (["md", "--sizes", "abc"], "argument --sizes: 'abc' is not a whole number"),
    (["md", "--steps", "0"], "argument --steps: 0 must be at least 1"),
    (["md", "--newton", "on,on"], "argument --newton: 'on,on' is not on, off or on,off"),
    (["md", "--newton", "yes"], "argument --newton: 'yes' is not on, off or on,off"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    a = ap.parse_args()
    for args, want in BAD:
        p = subprocess.run([a.bench] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=120)
        lines = [x for x in p.stderr.splitlines() if x.strip()]
        if args[0] == "md" and lines and lines[0].startswith("usage:"):
            lines = lines[-1:]  # argparse's usage, then its one line
        check(p.returncode == 2 and len(lines) == 1 and want in lines[0] and not p.stdout.strip(),
              "halox-bench %s: exit 2 and one line with \"%s\" (exit %d, %r)"
              % (" ".join(args), want, p.returncode, lines[-1] if lines else ""))
    # Good values run: a small exchange on the cpu transport, every option given.
    args = ["--atoms", "2000", "--iters", "3", "--warmup", "0", "--density", "0.8442",
            "--cutoff", "2.8", "--dtype", "double", "--seed", "7", "--lattice", "fcc",
            "--tilt", "0.2", "--transport", "cpu", "--newton", "off,on"]
    p = subprocess.run([a.bench] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    check(p.returncode == 0 and "\ncpu                            off " in p.stdout
          and "\ncpu                            on " in p.stdout,
          "halox-bench %s runs (exit %d)" % (" ".join(args), p.returncode))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
