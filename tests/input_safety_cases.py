#!/usr/bin/env python3
"""What a user gives halox-md, end to end (tests/input_safety.cmake):

  decks: a UTF-8 byte-order mark first, CRLF and CR-only (old Mac) line
      endings read as the same deck with LF: the same thermo rows.
  conflicts: two options that contradict each other (--cells and --size,
      --gpu and --cpu), or one the run would ignore (--temp, --seed,
      --velocity with a restart file, from --restart or a deck's
      read_restart), end with one ERROR naming both and the exit of any bad
      option; a deck's setting an option overrides is no conflict.
  tiny cutoff: lj/cut 1e-5 (with and without skin) sets up and runs step 0.
  blow-up: a timestep far too large ends non-zero with words about the
      physics (the time step), never a library call to make instead.

  input_safety_cases.py --halox PATH/halox-md --deck tests/decks/in.lj
"""
import argparse
import os
import subprocess
import sys
import tempfile

from checks import check, finish, thermo_rows

SMALL = ["--cpu", "--size", "4", "--no-progress"]

# Overrides that make the deck (tests/decks/in.lj) a small run.
DECK_RUN = ["--cpu", "--no-progress", "--size", "4", "--steps", "20", "--thermo", "10"]


def run(halox, args, cwd=None):
    """(exit status, stdout, stderr) of halox-md ARGS."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALOX_")}
    p = subprocess.run([halox] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120, cwd=cwd, env=env)
    return p.returncode, p.stdout, p.stderr


def errors(err):
    return [line for line in err.splitlines() if "ERROR" in line]


def decks(a, tmp):
    """LF, CRLF, CR-only, and each after a UTF-8 BOM: the same rows."""
    forms = {"LF": a.deck_text.encode(), "CRLF": a.deck_text.replace("\n", "\r\n").encode(),
             "CR": a.deck_text.replace("\n", "\r").encode()}
    for name in list(forms):
        forms["BOM+" + name] = b"\xef\xbb\xbf" + forms[name]
    rows = {}
    for name, text in forms.items():
        path = os.path.join(tmp, "in." + name.replace("+", "_"))
        with open(path, "wb") as f:
            f.write(text)
        rc, out, err = run(a.halox, ["-in", path] + DECK_RUN)
        rows[name] = thermo_rows(out)
        check(rc == 0 and len(rows[name]) == 3,
              "deck with %s: runs, 3 thermo rows (rc %d) %s" % (name, rc, err[-300:]))
    for name in forms:
        check(rows[name] == rows["LF"], "deck with %s: the rows of LF" % name)


def refused(a, args, want, bad_rc, cwd=None):
    """The run ends before it starts: one ERROR line holding every word of
    want, the exit status of a bad option."""
    rc, out, err = run(a.halox, args, cwd)
    errs = errors(err)
    check(rc == bad_rc and len(errs) == 1 and all(w in errs[0] for w in want),
          "%s: refused, naming %s (rc %d) %s" % (" ".join(args), " and ".join(want), rc,
                                                 err[-300:]))


def conflicts(a, tmp):
    bad_rc, _, _ = run(a.halox, ["--no-such-option"])
    check(bad_rc != 0, "an unknown option: exit %d" % bad_rc)
    refused(a, SMALL + ["--steps", "1", "--cells", "4", "4", "5"], ["--cells", "--size"], bad_rc)
    # --gpu first: without the check the later --cpu won and the run went on.
    refused(a, ["--gpu"] + SMALL + ["--steps", "1"], ["--gpu", "--cpu"], bad_rc)
    ck = os.path.join(tmp, "r.bin")
    rc, _, err = run(a.halox, SMALL + ["--steps", "10", "--checkpoint", ck,
                                       "--checkpoint-every", "10"])
    check(rc == 0 and os.path.exists(ck), "a restart file to start from (rc %d) %s"
          % (rc, err[-300:]))
    cont = ["--cpu", "--no-progress", "--restart", ck, "--steps", "5"]
    rc, _, err = run(a.halox, cont)
    check(rc == 0, "--restart alone runs (rc %d) %s" % (rc, err[-300:]))
    for opt in (["--temp", "2.0"], ["--seed", "5"], ["--velocity", "halox"]):
        refused(a, cont + opt, [opt[0], "--restart", "ignored"], bad_rc)
    deck = os.path.join(tmp, "in.restart")
    with open(deck, "w") as f:
        f.write("units lj\natom_style atomic\nread_restart %s\nfix 1 all nve\nrun 5\n" % ck)
    rc, _, err = run(a.halox, ["-in", deck, "--cpu", "--no-progress"])
    check(rc == 0, "a deck with read_restart runs (rc %d) %s" % (rc, err[-300:]))
    refused(a, ["-in", deck, "--cpu", "--temp", "2.0"], ["--temp", "read_restart", "ignored"],
            bad_rc)
    # A deck's setting under an option is an override, not a conflict.
    lf = os.path.join(tmp, "in.LF")
    rc, _, err = run(a.halox, ["-in", lf, "--cpu", "--no-progress", "--temp", "2.0", "--size",
                               "5", "--seed", "7", "--steps", "0"])
    check(rc == 0, "options over a deck's velocity and size: run (rc %d) %s" % (rc, err[-300:]))


def tiny_cutoff(a, tmp):
    """LAMMPS takes any cutoff > 0; so does halox-md, without a billion
    bins or a copy from NULL (the sanitizer build checks the latter)."""
    for skin in ("0", "0.3"):
        rc, out, err = run(a.halox, SMALL + ["--rc", "1e-5", "--skin", skin, "--steps", "0"])
        check(rc == 0 and len(thermo_rows(out)) == 1,
              "--rc 1e-5 --skin %s: step 0 (rc %d) %s" % (skin, rc, err[-300:]))
    deck = os.path.join(tmp, "in.tiny")
    with open(deck, "w") as f:
        f.write(a.deck_text.replace("lj/cut 2.5", "lj/cut 1e-5").replace("1.0 1.0 2.5", "1.0 1.0"))
    rc, out, err = run(a.halox, ["-in", deck] + DECK_RUN + ["--steps", "0"])
    check(rc == 0 and len(thermo_rows(out)) == 1,
          "pair_style lj/cut 1e-5 in a deck: step 0 (rc %d) %s" % (rc, err[-300:]))


def blowups(a):
    """However the lists are scheduled, a blow-up is told as physics."""
    for sched in (["--every", "10", "--thermo", "100"], ["--every", "1"],
                  ["--every", "100", "--check", "no"], ["--every", "20", "--check", "yes"]):
        args = SMALL + ["--dt", "1e3", "--steps", "55"] + sched
        rc, out, err = run(a.halox, args)
        errs = errors(err)
        check(rc != 0 and len(errs) == 1 and "hx_" not in errs[0]
              and ("time step may be too large" in errs[0]
                   or "timestep may be too large" in errs[0]),
              "%s: ends not 0, on the time step, no library call (rc %d) %s"
              % (" ".join(sched), rc, err[-300:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--halox", required=True)
    ap.add_argument("--deck", required=True, help="tests/decks/in.lj")
    a = ap.parse_args()
    with open(a.deck) as f:
        a.deck_text = f.read()
    with tempfile.TemporaryDirectory(prefix="halox-input-") as tmp:
        decks(a, tmp)
        conflicts(a, tmp)
        tiny_cutoff(a, tmp)
    blowups(a)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
