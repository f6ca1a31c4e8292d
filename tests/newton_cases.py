#!/usr/bin/env python3
"""`newton off` in halox-md (CPU engine), end to end, besides the thermo
rows that lammps_match.py compares with LAMMPS (tests/newton.cmake runs it
on tests/newton_decks/) and the forces that test_newton compares:

  on vs off     each deck of tests/newton_decks/ (a melt, two types, a
                tilted box) with `newton on` instead prints the same rows
                to the last printed digit (the sums are the same, in
                another order), at 1 and 3 ranks
  banner        without a newton line the run says `newton on`; with
                `newton off` it says `newton off` and the engine line names
                the full shell; --newton on|off overrides the deck
  restart       a newton off run of 60 steps writing a checkpoint every
                30, and one of 30 steps continued from the step-30 file of
                another: the step-60 files equal byte for byte
  bad input     `newton`, `newton maybe`, `newton on off on`, `newton off
                of`, --newton yes: each one ERROR line naming what to change (the deck's file and
                line where it is the deck's)

Exit 0 when every check holds.
"""
import os
import sys
import tempfile

from checks import check, finish, md_parser, thermo_rows

HERE = os.path.dirname(os.path.abspath(__file__))
DECKS = ["in.newton_melt", "in.newton_types", "in.newton_tri"]
# Rows are printed to 8 significant digits: one step of the last digit.
PRINTED = 1e-7



def small_deck():
    """tests/newton_decks/in.newton_melt for 10 steps, its newton line a
    {newton} to fill."""
    with open(os.path.join(HERE, "newton_decks", "in.newton_melt")) as f:
        lines = f.read().split("\n")
    out = ["{newton}" if l.startswith("newton") else l for l in lines if not l.startswith("#")]
    return "\n".join("run 10" if l.startswith("run") else l for l in out)


SMALL = small_deck()


class Runner:
    def __init__(self, a, tmp):
        self.a, self.tmp = a, tmp

    def halox(self, n, args, engine="--cpu"):
        import subprocess
        pre = [] if n == 1 and not self.a.mpiexec else \
            [self.a.mpiexec, "-n", str(n)] + self.a.mpiflags.split()
        p = subprocess.run(pre + [self.a.halox, engine, "--no-progress"] + args, cwd=self.tmp,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=600)
        return p.returncode, p.stdout, p.stderr

    def write(self, name, text):
        with open(os.path.join(self.tmp, name), "w") as f:
            f.write(text)
        return name


def close(a, b):
    return all(len(x) == len(y) and all(
        abs(float(u) - float(v)) <= PRINTED * max(abs(float(u)), abs(float(v)), 1e-300)
        for u, v in zip(x, y)) for x, y in zip(a, b)) and len(a) == len(b)


def on_vs_off(r, ranks):
    for deck in DECKS:
        with open(os.path.join(HERE, "newton_decks", deck)) as f:
            text = f.read()
        lines = text.split("\n")
        on = "\n".join("newton on" if l.startswith("newton") else l for l in lines)
        off_name = r.write(deck, text)
        on_name = r.write(deck + "_on", on)
        for n in ranks:
            rc1, out1, err1 = r.halox(n, ["-in", off_name])
            rc2, out2, err2 = r.halox(n, ["-in", on_name])
            rows1, rows2 = thermo_rows(out1), thermo_rows(out2)
            check(rc1 == rc2 == 0 and len(rows1) >= 3 and close(rows1, rows2),
                  "%s at %d rank(s): newton off prints newton on's rows (exit %d %d %s)" %
                  (deck, n, rc1, rc2, (err1 + err2).strip()[-300:]))


def banner(r, ranks):
    n = ranks[-1]
    plain = r.write("in.plain", SMALL.format(newton=""))
    off = r.write("in.off", SMALL.format(newton="newton off"))
    rc, out, _ = r.halox(n, ["-in", plain])
    check(rc == 0 and "check no, newton on," in out and "newton off" not in out,
          "no newton line: the banner says newton on (exit %d)" % rc)
    rc, out, _ = r.halox(n, ["-in", off])
    check(rc == 0 and "check no, newton off," in out and
          "(newton off: full shell, no force exchange)" in out,
          "newton off: the banner and the engine line say so (exit %d)" % rc)
    rc, out, _ = r.halox(n, ["-in", off, "--newton", "on"])
    check(rc == 0 and "newton on," in out and "full shell" not in out,
          "--newton on overrides the deck's newton off (exit %d)" % rc)
    rc, out, _ = r.halox(n, ["-in", plain, "--newton=off"])
    check(rc == 0 and "newton off," in out and "full shell" in out,
          "--newton=off without a newton line (exit %d)" % rc)


def restart(r, ranks):
    n = ranks[-1]
    off = r.write("in.restart", SMALL.format(newton="newton off"))
    base = ["-in", off, "--thermo", "30", "--checkpoint-every", "30"]
    rc1, _, _ = r.halox(n, base + ["--steps", "60", "--checkpoint", "a.restart"])
    rc2, _, _ = r.halox(n, base + ["--steps", "30", "--checkpoint", "b.restart"])
    rc3, _, err = r.halox(n, ["--restart", "b.restart", "--newton", "off", "--steps", "30",
                              "--checkpoint", "c.restart", "--checkpoint-every", "30"])
    same = False
    if rc1 == rc2 == rc3 == 0:
        with open(os.path.join(r.tmp, "a.restart"), "rb") as a, \
                open(os.path.join(r.tmp, "c.restart"), "rb") as c:
            same = a.read() == c.read()
    check(same, "newton off at %d rank(s): a continued run's step-60 file is the original's "
          "(exit %d %d %d %s)" % (n, rc1, rc2, rc3, err.strip()[-200:]))


def bad_input(r):
    cases = [
        ("in.none", "newton", [], "--cpu",
         "in.none:3: newton takes more arguments; write `newton on|off [on|off]`"),
        ("in.maybe", "newton maybe", [], "--cpu",
         "in.maybe:3: newton: 'maybe' must be on or off (newton on|off [on|off])"),
        ("in.three", "newton on off on", [], "--cpu",
         "in.three:3: newton takes fewer arguments; write `newton on|off [on|off]`"),
        ("in.of", "newton off of", [], "--cpu",
         "in.of:3: newton: 'of' must be on or off"),
        ("in.opt", "", ["--newton", "yes"], "--cpu", "--newton: 'yes' must be on or off"),
    ]
    for name, line, extra, engine, want in cases:
        r.write(name, SMALL.format(newton=line))
        rc, out, err = r.halox(1, ["-in", name] + extra, engine=engine)
        errs = [l for l in err.splitlines() if "ERROR" in l]
        ok = rc != 0 and len(errs) == 1 and want in errs[0]
        check(ok, "%s: one ERROR line: %s%s" %
              (name, want, "" if ok else " (exit %d: %s)" % (rc, " | ".join(errs)[-300:])))


def main():
    a = md_parser(__doc__.split("\n\n")[0]).parse_args()
    ranks = [1, 3] if a.mpiexec else [1]
    if not a.mpiexec:
        print("note: no MPI launcher; 1 rank only")
    with tempfile.TemporaryDirectory(prefix="halox-newton-") as tmp:
        r = Runner(a, tmp)
        on_vs_off(r, ranks)
        banner(r, ranks)
        restart(r, ranks)
        bad_input(r)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
