#!/usr/bin/env python3
"""balance on the GPU engine, end to end, at 2 ranks.

  balanced slab  tests/balance_decks/in.slab at n 10 (a liquid slab in the
                 lower 40% of the box along z, 4,000 atoms, 2 ranks along z)
                 with `balance 1.0 shift z 20 1.0` before a 200-step run, on
                 the CPU and the GPU engine: the same balance report (it is
                 computed on the host from the same atoms, before either
                 engine starts: the cuts must have moved onto the slab), the
                 GPU engine named in the run's engine line, thermo rows at
                 the same steps, each value at steps 0 and 100 within 2e-3
                 of the CPU engine's (relative, floor 1; test_md_gpu's bound
                 after 100 steps is 1e-3 for 4,000 atoms of the fcc melt)
                 and the conserved TotEng within 1e-3 at every row.
  fix balance    `--gpu` with fix balance is refused with one ERROR line.

Usage: md_gpu_balance.py --halox PATH --mpiexec MPIEXEC [--mpiflags FLAGS]
Prints SKIPPED and exits 77 without a GPU engine, a GPU or a launcher.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

from checks import check, finish, md_parser, thermo_rows

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def report(out):
    """The balance report's lines (iterations, loads, imbalance, cuts)."""
    return [l.strip() for l in out.splitlines()
            if re.match(r"\s+(iteration count|initial/final|[xyz] cuts:)", l)]


def main():
    a = md_parser(__doc__.split("\n\n")[0]).parse_args()
    if not a.mpiexec:
        print("SKIPPED: no MPI launcher: the balance needs 2 ranks")
        return SKIP

    def halox(args, engine):
        cmd = [a.mpiexec, "-n", "2"] + shlex.split(a.mpiflags) + [a.halox, engine, "--no-progress"]
        p = subprocess.run(cmd + args, cwd=tmp, capture_output=True, text=True, timeout=600)
        return p.returncode, p.stdout, p.stderr

    with tempfile.TemporaryDirectory(prefix="halox-gpu-balance-") as tmp:
        with open(os.path.join(HERE, "balance_decks", "in.slab")) as f:
            deck = re.sub(r"(?m)^run\s+\d+", "run 200", f.read())
        with open(os.path.join(tmp, "in.slab"), "w") as f:
            f.write(deck)
        args = ["-in", "in.slab", "-var", "n", "10", "-var", "thresh", "1.0"]
        rc, out_g, err = halox(args, "--gpu")
        if rc != 0 and ("CUDA device" in err or "no GPU engine" in err or "cannot run" in err):
            print("SKIPPED: halox-md --gpu cannot run here: %s" % err.strip().splitlines()[-1])
            return SKIP
        check(rc == 0, "balanced slab on the GPU engine runs (exit %d: %s)" % (rc, err.strip()[-300:]))
        rc_c, out_c, err_c = halox(args, "--cpu")
        check(rc_c == 0, "balanced slab on the CPU engine runs (exit %d: %s)"
              % (rc_c, err_c.strip()[-300:]))
        if rc != 0 or rc_c != 0:
            return finish()
        rg, rcpu = report(out_g), report(out_c)
        zc = [l for l in rg if l.startswith("z cuts:")]
        moved = bool(zc) and zc[0].split()[3] != "0.50000000"
        check(rg == rcpu and len(rg) >= 5 and moved,
              "the balance report is the CPU engine's and moved the cut (%s)" % " | ".join(rg))
        check("gpu engine" in out_g, "the run's engine line names the GPU engine")
        g, c = thermo_rows(out_g), thermo_rows(out_c)
        check([r[0] for r in g] == [r[0] for r in c] and len(g) == 3,
              "thermo rows at the CPU engine's steps (%s)" % [r[0] for r in g])
        head = [l.split() for l in out_c.splitlines() if re.match(r"\s*Step\s", l)]
        k = head[0].index("TotEng") if head and "TotEng" in head[0] else None
        worst_tot, worst_early = 0.0, 0.0
        for rg_, rc_ in zip(g, c):
            rel = [abs(float(x) - float(y)) / max(abs(float(y)), 1.0)
                   for x, y in zip(rg_[1:], rc_[1:])]
            if int(rc_[0]) <= 100:
                worst_early = max(worst_early, max(rel))
            if k is not None:
                worst_tot = max(worst_tot, rel[k - 1])
        check(k is not None and worst_early <= 2e-3 and worst_tot <= 1e-3,
              "rows within the bounds: steps 0-100 worst %.2e (2e-3), TotEng worst %.2e (1e-3)"
              % (worst_early, worst_tot))
        fixd = deck.replace("balance ${thresh} shift z 20 1.0",
                            "fix lb all balance 100 1.0 shift z 10 1.1")
        with open(os.path.join(tmp, "in.fix"), "w") as f:
            f.write(fixd)
        rc, _, err = halox(["-in", "in.fix", "-var", "n", "10"], "--gpu")
        errs = [l for l in err.splitlines() if "ERROR" in l]
        check(rc != 0 and len(errs) == 1 and "fix balance: the GPU engine keeps" in errs[0],
              "--gpu with fix balance: one ERROR line (exit %d: %s)" % (rc, " | ".join(errs)))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
