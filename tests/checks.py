"""What the end-to-end test scripts of tests/ share: named checks that are
counted, the exit status they give, and the GPU scripts' way of running
halox-md and reading its thermo rows (imported from the scripts' own
folder)."""
import argparse
import os
import re
import shlex
import subprocess

FAILS = []


def check(ok, what):
    """Prints the check as ok or FAIL; a failure is counted."""
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        FAILS.append(what)
    return ok


def finish():
    """The exit status: 1 if any check failed, with a count."""
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("all checks passed")
    return 0


def run_gpu(halox, args, env=None, timeout=600):
    """halox-md --gpu --no-progress ARGS with env added to the environment:
    (exit status, stdout, stderr)."""
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([halox, "--gpu", "--no-progress"] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=timeout, env=e)
    return p.returncode, p.stdout, p.stderr


def thermo_rows(out):
    """The thermo table's rows as lists of words, as printed (the log's
    lines, HALOX_LOG=1, skipped where they fall among them)."""
    rows, on = [], False
    for line in out.splitlines():
        if line.startswith("halox["):
            continue
        if re.match(r"\s*Step\s", line):
            on = True
            continue
        if on and re.match(r"\s*\d+\s", line):
            rows.append(line.split())
        elif on:
            on = False
    return rows


def skipped(what, err):
    """Prints the SKIPPED line of a script whose `what` cannot run here,
    with the last line of its error output."""
    print("SKIPPED: %s cannot run here: %s" % (what, (err.strip().splitlines() or ["?"])[-1]))


def gpu_halox():
    """The halox-md of a GPU script's --halox, or None (with SKIPPED printed)
    where it has no GPU engine or sees no GPU."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--halox", required=True)
    a = ap.parse_args()
    rc, _, err = run_gpu(a.halox, ["--size", "5", "--steps", "0"])
    if rc != 0:
        skipped("halox-md --gpu", err)
        return None
    return a.halox


def md_parser(description=None):
    """The options every halox-md test script takes: --halox (the program),
    --mpiexec (the launcher; "" for none) and --mpiflags; the script adds
    its own."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--halox", required=True, help="the halox-md program")
    ap.add_argument("--mpiexec", default="", help="MPI launcher; none: 1 rank only")
    ap.add_argument("--mpiflags", default="")
    return ap


def deck_runner(a):
    """run(n, deck, folder, engine) -> (exit status, stdout, stderr): halox-md
    (a.halox) on n ranks (through a.mpiexec where n > 1) with -in deck,
    the engine flag (--cpu or --gpu) and --no-progress, in folder."""
    def run(n, deck, folder, engine):
        launch = [a.halox] if n == 1 else \
            [a.mpiexec, "-n", str(n)] + shlex.split(a.mpiflags) + [a.halox]
        p = subprocess.run(launch + ["-in", deck, engine, "--no-progress"], cwd=folder,
                           capture_output=True, text=True, timeout=600)
        return p.returncode, p.stdout, p.stderr
    return run


def gpu_cannot_run(run, deck, folder):
    """True, with SKIPPED printed, where halox-md --gpu cannot run deck on
    one rank here (run: a deck_runner)."""
    rc, _, err = run(1, deck, folder, "--gpu")
    if rc != 0:
        skipped("halox-md --gpu", err)
    return rc != 0


def deck_copy(deck, folder, edit):
    """deck's text passed through edit, written under its own name in
    folder; (name, path)."""
    name = os.path.basename(deck)
    with open(deck) as f:
        text = edit(f.read())
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text)
    return name, path


def two_rank_fused(description):
    """For a script that runs halox-md --gpu on 2 ranks with nvshmem-fused:
    parses --halox, --mpiexec and --mpiflags and returns run(args, env) ->
    (exit status, stdout, stderr), or None (with SKIPPED printed) without a
    launcher or where 2 ranks cannot run that transport here."""
    a = md_parser(description).parse_args()
    if not a.mpiexec:
        print("SKIPPED: no MPI launcher (2 ranks needed)")
        return None
    launch = [a.mpiexec, "-n", "2"] + shlex.split(a.mpiflags)

    def run(args, env):
        e = dict(os.environ)
        e.update(env)
        cmd = launch + [a.halox, "--gpu", "--no-progress", "--transport", "nvshmem-fused"] + args
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=600, env=e)
        return p.returncode, p.stdout, p.stderr

    rc, _, err = run(["--size", "5", "--steps", "0"], {})
    if rc != 0:
        skipped("2 ranks of halox-md --gpu with nvshmem-fused", err)
        return None
    return run
