#!/usr/bin/env python3
"""Atom types in halox-md (CPU engine), beyond the thermo comparisons of
test_types_lammps:
  - `set type/fraction` gives LAMMPS's types atom by atom: the step-0
    frame of `dump ... atom` with `dump_modify sort id` on 1 and 3 ranks
    equals LAMMPS's (where lmp is installed);
  - a mixture's restart file continues bit for bit on the same rank
    count: the extended XYZ frames (10 digits) after it equal those of
    the uninterrupted run;
  - an old one-type restart file (version 3) still reads;
  - bad input: one ERROR line each, with the file, the line and the form;
    --gpu with two types: not refused for its types (the GPU engine runs
    mixtures: test_md_gpu_types).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from checks import md_parser

BASE = """units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 5 0 5 0 5
create_box 2 box
create_atoms 1 box
set type 1 type/fraction 2 0.3 4242
mass 1 1.0
mass 2 3.0
velocity all create 1.44 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0
pair_coeff 2 2 0.7 1.1 2.7
pair_modify shift yes
neighbor 0.3 bin
neigh_modify delay 0 every 1 check yes
fix 1 all nve
thermo 20
"""

FAILS = 0


def check(ok, what):
    global FAILS
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    FAILS += 0 if ok else 1


def main():
    a = md_parser(__doc__).parse_args()

    def launch(n):
        if n == 1 or not a.mpiexec:
            return [a.halox]
        return [a.mpiexec, "-n", str(n)] + a.mpiflags.split() + [a.halox]

    def halox(n, deck, d, extra=(), engine="--cpu"):
        path = os.path.join(d, "in.t")
        with open(path, "w") as f:
            f.write(deck)
        return subprocess.run(launch(n) + ["-in", path, engine, "--no-progress"] + list(extra),
                              cwd=d, capture_output=True, text=True, timeout=300)

    ranks = [1, 3] if a.mpiexec else [1]
    with tempfile.TemporaryDirectory() as d:
        # set type/fraction atom by atom against LAMMPS.
        deck = BASE + "dump d all atom 100 dump.t\ndump_modify d sort id\nrun 0\n"
        frames = []
        for n in ranks:
            p = halox(n, deck, d)
            check(p.returncode == 0, "dump of a mixture on %d rank(s)" % n)
            frames.append(open(os.path.join(d, "dump.t")).read())
        types = [ln.split()[1] for ln in frames[0].splitlines()[9:]]
        check(types.count("2") > 0 and types.count("1") > 0, "both types drawn (%d of %d type 2)"
              % (types.count("2"), len(types)))
        check(all(f == frames[0] for f in frames), "the same types on every rank count")
        if shutil.which("lmp"):
            with open(os.path.join(d, "in.t"), "w") as f:
                f.write(deck)
            subprocess.run(["lmp", "-in", "in.t", "-log", "none", "-screen", "none"], cwd=d,
                           check=True, timeout=300)
            check(open(os.path.join(d, "dump.t")).read() == frames[0],
                  "set type/fraction: LAMMPS's types atom by atom")
        else:
            print("note: lmp not installed; the types are not compared with LAMMPS")

        # A mixture's restart continues bit for bit.
        whole = BASE + "run 100\n"
        split = BASE + "run 40\nwrite_restart mix.rst\nrun 60\n"
        cont = ("units lj\natom_style atomic\nread_restart mix.rst\nneighbor 0.3 bin\n"
                "neigh_modify delay 0 every 1 check yes\nfix 1 all nve\nthermo 20\nrun 60\n")
        xyz = ["--dump", "traj.xyz", "--dump-every", "20"]
        p = halox(ranks[-1], whole, d, xyz)
        ref = open(os.path.join(d, "traj.xyz")).read().split("Step=")
        p2 = halox(ranks[-1], split, d)
        p3 = halox(ranks[-1], cont, d, xyz)
        got = open(os.path.join(d, "traj.xyz")).read().split("Step=")
        check(p.returncode == 0 and p2.returncode == 0 and p3.returncode == 0,
              "a mixture written and read back")
        check(len(got) > 2 and ref[-3:] == got[-3:],
              "the continued run repeats the original bit for bit (steps 60-100)")

        # An old one-type file (version 3) still reads.
        one = BASE.replace("create_box 2", "create_box 1").replace(
            "set type 1 type/fraction 2 0.3 4242\n", "").replace("mass 2 3.0\n", "").replace(
            "pair_coeff 2 2 0.7 1.1 2.7\n", "") + "run 20\nwrite_restart one.rst\n"
        p = halox(1, one, d)
        path = os.path.join(d, "one.rst")
        b = bytearray(open(path, "rb").read())
        b[8:12] = struct.pack("<I", 3)
        h = 0xcbf29ce484222325
        for i in range(0, 248, 8):
            h ^= struct.unpack("<Q", bytes(b[i:i + 8]))[0]
            h = (h * 0x100000001b3) & 0xffffffffffffffff
        b[248:256] = struct.pack("<Q", h)
        open(path, "wb").write(bytes(b))
        p = halox(1, cont.replace("mix.rst", "one.rst"), d)
        check(p.returncode == 0 and "read restart file" in p.stdout,
              "a version 3 (one type) restart file reads")

        # Bad input: one clear error each, naming the file, the line, the form.
        run = "run 10\n"
        bad = [
            (BASE.replace("mass 2 3.0", "mass 3 3.0") + run, "in.t:9: mass: atom type '3' is out of range"),
            (BASE.replace("lj/cut 2.5", "morse 2.5").replace("pair_coeff 1 1 1.0 1.0", "pair_coeff 1 1 1.0 4.0 1.1")
             .replace("pair_coeff 2 2 0.7 1.1 2.7", "pair_coeff 2 2 1.0 4.0 1.1") + run,
             "in.t:19: run: pair_coeff 1 2 is not set: pair_style morse does not mix"),
            (BASE.replace("mass 2 3.0\n", "") + run, "in.t:9: velocity comes before mass"),
            (BASE.replace("pair_modify shift yes", "pair_modify mix harmonic") + run,
             "in.t:14: pair_modify mix 'harmonic': the rules are geometric"),
            (BASE.replace("pair_coeff 2 2 0.7 1.1 2.7", "pair_coeff 2 2 0.7 -1.1") + run,
             "in.t:13: pair_coeff: sigma -1.1 must be > 0"),
            (BASE.replace("lj/cut 2.5", "morse 2.5").replace("pair_coeff 1 1 1.0 1.0", "pair_coeff * * 1.0 0 1.1")
             .replace("pair_coeff 2 2 0.7 1.1 2.7\n", "") + run, "in.t:12: pair_coeff: alpha 0 must be > 0"),
            (BASE.replace("create_atoms 1 box", "create_atoms 3 box") + run,
             "in.t:6: create_atoms 3: the box has atom types 1 to 2"),
        ]
        for deck, want in bad:
            p = halox(1, deck, d)
            errs = [ln for ln in p.stderr.splitlines() if "ERROR" in ln]
            check(p.returncode != 0 and len(errs) == 1 and want in errs[0],
                  "bad input: %s (%s)" % (want, errs))
        # The GPU engine runs a mixture: --gpu is not refused for its types
        # (where this build or host has no GPU engine, for that alone).
        p = halox(1, BASE + run, d, engine="--gpu")
        errs = [ln for ln in p.stderr.splitlines() if "ERROR" in ln]
        check(not any("atom type" in ln or "create_box" in ln for ln in errs),
              "--gpu with two types is not refused for its types (%s)" % errs)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
