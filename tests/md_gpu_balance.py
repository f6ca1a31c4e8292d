#!/usr/bin/env python3
"""balance and fix balance on the GPU engine, end to end, at 2 to 4 ranks,
and ranks that own no atoms.

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
  fix balance    the same slab with `fix 2 all balance 100 1.0 shift z 20
                 1.0` after the balance, over 300 steps, at 2, 3 and 4 ranks
                 (the slab spreads into the empty part of the box, so the
                 cuts move at every rebalance) on both engines: the same
                 balance report, thermo rows within the bounds above (the
                 Volume column included), the GPU engine's census after
                 every rebuild (HALOX_MD_CHECK=atoms: atom count and id
                 checksum), the rebalances logged (HALOX_LOG=1) as many as
                 the CPU engine's and the cuts moved at each; at 3 ranks
                 also through the host path (HALOX_MD_REBUILD=host).
  empty rank     the same slab on uniform domains (thresh 1e9: the balance
                 never acts), over 300 steps on both engines, where the
                 upper rank owns no atom all run (its halo holds atoms) at
                 2 and 3 ranks; at 3 also with the fix balance above, whose
                 first rebalance, at the run's set-up before the engine
                 starts, fills rank 2 (the imbalance it logs is 1.5 or
                 more, the later ones below). The rows within the bounds
                 above, the census after every rebuild.
  drift          the slab drifting up the box (tests/slab_drift.py, 2,176
                 atoms, 1,000 steps): on 4 uniform domains, where rank 0
                 empties mid-run and rank 3 fills, and under fix balance at
                 2, 3 and 4 ranks, on both engines. The rows within the
                 bounds above, the census after every rebuild, the GPU
                 engine's dump (every 100 steps) with each id once a frame,
                 showing domain 0 empty at the end and the top one filled
                 (TotEng within the CPU engine's own change of it over the
                 run, 1.5e-2: the run is 1,000 steps of a melting lattice);
                 under fix balance as many rebalances as the CPU engine's.
  pulses         the slab at n 6 on 3 ranks, `fix lb all balance 100 1.0
                 shift z 1 1.0` over 400 steps: one iteration leaves the
                 cuts swinging (by the shift's bisection, whatever the
                 velocities' seed), so that the thinnest domain crosses rc +
                 skin and the pulse count along z goes from 2 to 1 at step
                 100 and back to 2 at step 300 (the GPU engine's own log
                 shows both; every rank keeps 37 atoms or more), on every GPU
                 transport this build has; at n 10 on 4 ranks (down at 100,
                 up at 200, down at 300), on mpi and nvshmem-fused, where
                 the move at step 200 takes a bound past its old neighbour
                 and the atoms go through the host once (logged). Each run
                 has the census after every rebuild and its rows within
                 the bounds of the CPU engine's.

Usage: md_gpu_balance.py --halox PATH --mpiexec MPIEXEC [--mpiflags FLAGS]
Prints SKIPPED and exits 77 without a GPU engine, a GPU or a launcher.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

import slab_drift
from checks import check, finish, md_parser, skipped, thermo_rows

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def report(out):
    """The balance report's lines (iterations, loads, imbalance, cuts)."""
    return [l.strip() for l in out.splitlines()
            if re.match(r"\s+(iteration count|initial/final|[xyz] cuts:)", l)]


def header(out):
    """The thermo table's first header line as words ([] where none)."""
    return next((l.split() for l in out.splitlines() if re.match(r"\s*Step\s", l)), [])


def bounds(what, out_g, out_c, early=100, drifting=False):
    """Rows at the CPU engine's steps; each value up to step `early`
    within 2e-3 of the CPU engine's (relative, floor 1), TotEng within
    1e-3 at every row; where drifting (a run whose own TotEng moves more
    than that), within the CPU engine's own change of it over the run."""
    g, c = thermo_rows(out_g), thermo_rows(out_c)
    check(len(g) >= 2 and [r[0] for r in g] == [r[0] for r in c],
          "%s: thermo rows at the CPU engine's steps (%s)" % (what, [r[0] for r in g]))
    head = header(out_c)
    k = head.index("TotEng") if "TotEng" in head else None
    worst_tot, worst_early, tol_tot = 0.0, 0.0, 1e-3
    if drifting and k is not None and c:
        tot = [float(r[k]) for r in c]
        tol_tot = max(tol_tot, (max(tot) - min(tot)) / max(max(abs(t) for t in tot), 1.0))
    for rg_, rc_ in zip(g, c):
        rel = [abs(float(x) - float(y)) / max(abs(float(y)), 1.0)
               for x, y in zip(rg_[1:], rc_[1:])]
        if int(rc_[0]) <= early:
            worst_early = max(worst_early, max(rel))
        if k is not None:
            worst_tot = max(worst_tot, rel[k - 1])
    check(k is not None and worst_early <= 2e-3 and worst_tot <= tol_tot,
          "%s: rows within the bounds: steps 0-%d worst %.2e (2e-3), TotEng worst %.2e (%.1e)"
          % (what, early, worst_early, worst_tot, tol_tot))


def logged(out):
    """fix balance's log lines (HALOX_LOG=1): the pulses along z of each."""
    return [int(m.group(1)) for m in re.finditer(r"fix balance: imbalance .* pulses \d+ \d+ (\d+)",
                                                   out)]


GPU_ENV = {"HALOX_LOG": "1", "HALOX_MD_CHECK": "atoms"}


def fix_deck(deck):
    """The deck with `fix 2 all balance 100 1.0 shift z 20 1.0` after its
    balance line, run over 300 steps."""
    return re.sub(r"(?m)^(balance .*)$", r"\1\nfix 2 all balance 100 1.0 shift z 20 1.0",
                  deck).replace("run 200", "run 300")


def both(halox, what, args, n, env, after_gpu=None):
    """The run on the GPU engine (env) and on the CPU engine (HALOX_LOG=1):
    (GPU stdout, stderr, CPU stdout, stderr) where both ran, else None.
    after_gpu, where given, is called between the two runs once the GPU
    engine's has run (to read what it wrote before the CPU run writes
    over it)."""
    rc, out_g, err = halox(args, "--gpu", n, env)
    if rc == 0 and after_gpu:
        after_gpu()
    rc_c, out_c, err_c = halox(args, "--cpu", n, {"HALOX_LOG": "1"})
    check(rc == 0 and rc_c == 0, "%s: both engines run (exits %d, %d)%s"
          % (what, rc, rc_c, "" if rc == 0 and rc_c == 0 else
             ": " + (err if rc else err_c).strip()[-400:]))
    return (out_g, err, out_c, err_c) if rc == 0 and rc_c == 0 else None


def fix_balance(halox, tmp, deck):
    """The slab under fix balance at 2, 3 and 4 ranks on both engines."""
    with open(os.path.join(tmp, "in.fix"), "w") as f:
        f.write(fix_deck(deck))
    args = ["-in", "in.fix", "-var", "n", "10", "-var", "thresh", "1.0"]
    for n, env in ((2, {}), (3, {}), (4, {}), (3, {"HALOX_MD_REBUILD": "host"})):
        what = "fix balance at %d ranks%s" % (n, " (host path)" if env else "")
        e = dict(GPU_ENV)
        e.update(env)
        ran = both(halox, what, args, n, e)
        if not ran:
            continue
        out_g, err, out_c, err_c = ran
        check(report(out_g) == report(out_c) and len(report(out_c)) >= 5,
              "%s: the balance report is the CPU engine's" % what)
        hg, hc = header(out_g), header(out_c)
        check("gpu engine" in out_g and hg == hc and hg[-1:] == ["Volume"],
              "%s: the GPU engine runs it, with thermo_style one's Volume column (%s)"
              % (what, " ".join(hg)))
        bounds(what, out_g, out_c)
        lg, lc = logged(out_g + err), logged(out_c + err_c)
        moved = re.search(r"fix balance moved the cuts (\d+) time", out_g + err)
        check(len(lg) == len(lc) and len(lg) >= 4 and moved and int(moved.group(1)) >= 3,
              "%s: %d rebalances logged (CPU engine %d), cuts moved %s time(s) on the GPU"
              % (what, len(lg), len(lc), moved.group(1) if moved else "no"))


def imbalances(out):
    """fix balance's log lines (HALOX_LOG=1): the imbalance before each."""
    return [float(m.group(1)) for m in re.finditer(r"fix balance: imbalance ([0-9.]+)", out)]


def empty_rank(halox, tmp, deck):
    """The slab on uniform domains (thresh 1e9: the balance never acts),
    where the upper rank owns no atom all run, at 2 and 3 ranks; at 3
    with fix balance too, whose first rebalance (at the run's set-up)
    fills it; both engines."""
    with open(os.path.join(tmp, "in.empty_fix"), "w") as f:
        f.write(fix_deck(deck))
    with open(os.path.join(tmp, "in.empty"), "w") as f:
        f.write(deck.replace("run 200", "run 300"))
    for n, name in ((2, "in.empty"), (3, "in.empty"), (3, "in.empty_fix")):
        fix = name == "in.empty_fix"
        what = "empty rank at %d ranks%s" % (n, " (fix balance)" if fix else "")
        args = ["-in", name, "-var", "n", "10", "-var", "thresh", "1e9"]
        ran = both(halox, what, args, n, GPU_ENV)
        if not ran:
            continue
        out_g, err, out_c, err_c = ran
        check(report(out_g) == report(out_c), "%s: the balance report is the CPU engine's" % what)
        check("gpu engine" in out_g, "%s: the GPU engine runs it" % what)
        bounds(what, out_g, out_c)
        ig, ic = imbalances(out_g + err), imbalances(out_c + err_c)
        # With rank n - 1 empty the most loaded rank holds at least 1 / (n - 1)
        # of the atoms: an imbalance of n / (n - 1) or more.
        if fix:
            check(len(ig) == len(ic) >= 2 and ig[0] >= 1.5 and max(ig[1:]) < 1.5,
                  "%s: rank 2 empty at the first rebalance (imbalance %s >= 1.5), filled "
                  "after it (below 1.5), as on the CPU engine (%s)" % (what, ig, ic))
        else:
            check(not ig and not ic, "%s: no rebalance logged (%s, %s)" % (what, ig, ic))


def drift(halox, tmp):
    """The drifting slab on uniform domains (4 ranks) and under fix
    balance (2, 3, 4 ranks) on both engines."""
    for n, procs, fix in ((4, "1 1 4", False), (2, "1 1 *", True), (3, "1 1 *", True),
                          (4, "1 1 *", True)):
        what = "drifting slab at %d ranks%s" % (n, " under fix balance" if fix else "")
        name = "in.drift%d%s" % (n, "f" if fix else "")
        with open(os.path.join(tmp, name), "w") as f:
            f.write(slab_drift.deck(procs, fix))
        fr = []  # the GPU engine's dump, read before the CPU run writes its own
        ran = both(halox, what, ["-in", name], n, GPU_ENV, lambda: fr.extend(
            slab_drift.frames(os.path.join(tmp, slab_drift.DUMP), n)))
        if not ran:
            continue
        out_g, err, out_c, err_c = ran
        check("gpu engine" in out_g, "%s: the GPU engine runs it" % what)
        bounds(what, out_g, out_c, drifting=True)
        check(len(fr) == slab_drift.STEPS // 100 + 1 and all(f[2] for f in fr),
              "%s: %d dump frames of the GPU engine, each id once in each" % (what, len(fr)))
        if not fix:
            check(slab_drift.emptied(fr), "%s: domain 0 empties and the top one fills (%s)"
                  % (what, [f[1] for f in fr]))
        ig, ic = imbalances(out_g + err), imbalances(out_c + err_c)
        check(len(ig) == len(ic) == (slab_drift.STEPS // 100 + 1 if fix else 0),
              "%s: %d rebalances logged (CPU engine %d)" % (what, len(ig), len(ic)))


def pulse_case(halox, tmp, deck, n, cells, transports):
    """The slab of `cells` at n ranks under `fix lb all balance 100 1.0
    shift z 1 1.0` over 400 steps on each transport built: the pulse
    counts along z the GPU engine logged and its log's end, per transport
    run."""
    pd = re.sub(r"(?m)^(balance .*)$", r"\1\nfix lb all balance 100 1.0 shift z 1 1.0",
                deck).replace("run 200", "run 400")
    name = "in.pulse%d" % n
    with open(os.path.join(tmp, name), "w") as f:
        f.write(pd)
    args = ["-in", name, "-var", "n", str(cells), "-var", "thresh", "1.0"]
    rc_c, out_c, err_c = halox(args, "--cpu", n)
    check(rc_c == 0, "pulses at %d ranks: the CPU engine runs (exit %d%s)"
          % (n, rc_c, ": " + err_c.strip()[-300:] if rc_c else ""))
    ran = {}
    for t in transports:
        rc, out, err = halox(args + ["--transport", t], "--gpu", n, GPU_ENV)
        # A transport this build or this machine cannot give (nccl where
        # processes share a GPU) is noted, not run.
        if rc != 0 and any(w in err for w in ("is not built into", "cannot run here",
                                              "processes share GPU")):
            print("note: %s skipped: %s" % (t, [l for l in err.splitlines() if l.strip()][-1]))
            continue
        what = "pulses at %d ranks with %s" % (n, t)
        check(rc == 0 and "gpu engine" in out, "%s: the GPU engine runs it (exit %d%s)"
              % (what, rc, ": " + err.strip()[-400:] if rc else ""))
        if rc != 0:
            continue
        p = logged(out + err)
        down = any(b < a_ for a_, b in zip(p, p[1:]))
        up = any(b > a_ for a_, b in zip(p, p[1:]))
        check(down and up, "%s: the pulse count along z changed both ways (%s)" % (what, p))
        if rc_c == 0:
            bounds(what, out, out_c)
        ran[t] = out + err
    check("mpi" in ran and "nvshmem-fused" in ran,
          "pulses at %d ranks: mpi and nvshmem-fused among the transports run (%s)"
          % (n, sorted(ran)))
    return ran


def pulses(halox, tmp, deck):
    """The pulse count along z changing both ways under fix balance: at 3
    ranks (n 6: down at step 100, up at 300) through the device migration
    on every GPU transport built; at 4 ranks (n 10: down at 100, up at
    200, down at 300), where the move at step 200 takes a bound past its
    old neighbour, so that the atoms go through the host once, on mpi and
    nvshmem-fused."""
    pulse_case(halox, tmp, deck, 3, 6,
               ("mpi", "nvshmem-fused", "nvshmem-fused-tma", "nvshmem-pulse", "nvshmem-stream",
                "nccl", "nccl-dev"))
    for t, out in pulse_case(halox, tmp, deck, 4, 10, ("mpi", "nvshmem-fused")).items():
        host = re.search(r"the atoms through the host (\d+) time", out)
        check(host and int(host.group(1)) >= 1,
              "pulses at 4 ranks with %s: a rebuild through the host (%s time(s))"
              % (t, host.group(1) if host else "no"))


def main():
    a = md_parser(__doc__.split("\n\n")[0]).parse_args()
    if not a.mpiexec:
        print("SKIPPED: no MPI launcher: the balance needs 2 ranks")
        return SKIP

    def halox(args, engine, n=2, env=None):
        cmd = [a.mpiexec, "-n", str(n)] + shlex.split(a.mpiflags) + [a.halox, engine,
                                                                      "--no-progress"]
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.run(cmd + args, cwd=tmp, capture_output=True, text=True, timeout=300,
                           env=e)
        return p.returncode, p.stdout, p.stderr

    with tempfile.TemporaryDirectory(prefix="halox-gpu-balance-") as tmp:
        with open(os.path.join(HERE, "balance_decks", "in.slab")) as f:
            deck = re.sub(r"(?m)^run\s+\d+", "run 200", f.read())
        with open(os.path.join(tmp, "in.slab"), "w") as f:
            f.write(deck)
        args = ["-in", "in.slab", "-var", "n", "10", "-var", "thresh", "1.0"]
        rc, out_g, err = halox(args, "--gpu")
        if rc != 0 and ("CUDA device" in err or "no GPU engine" in err or "cannot run" in err):
            skipped("halox-md --gpu", err)
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
        check(len(thermo_rows(out_g)) == 3, "the balanced slab: 3 thermo rows")
        bounds("the balanced slab", out_g, out_c)
        fix_balance(halox, tmp, deck)
        empty_rank(halox, tmp, deck)
        drift(halox, tmp)
        pulses(halox, tmp, deck)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
