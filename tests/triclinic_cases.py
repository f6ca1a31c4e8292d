#!/usr/bin/env python3
"""Triclinic decks in halox-md (CPU engine), end to end, besides the thermo
rows that lammps_match.py compares (tests/triclinic_md.cmake runs it on
tests/triclinic_decks/):

  dumps         `dump ID all atom|xyz N FILE` with `dump_modify ID sort id`
                in a box tilted in xy, xz and yz: the triclinic header
                ("ITEM: BOX BOUNDS xy xz yz pp pp pp", the bounding box's
                bounds and the tilts) equal to LAMMPS's, and the whole file
                (lamda coordinates xs ys zs; x y z) byte for byte, at 1 and
                3 ranks against LAMMPS on 1 process
  loop all      `velocity all create ... dist gaussian rot yes` (loop all,
                LAMMPS's default: the ids of create_atoms' loop) at 1 and 3
                ranks against LAMMPS on 1 process, lammps_match.py's bound
  regions       tests/triclinic_decks/in.tri_region (create_atoms T region
                ID of two block regions in the tilted box) with `velocity
                ... loop all` and a dump sorted by id: the dump byte for
                byte and the atom count as LAMMPS's (1 process) at 1 and 3
                ranks
  units box     the same box given in box units prints the rows of the
                lattice-units deck
  restart       a run of 60 steps writing a checkpoint every 30, and one of
                40 steps continued from its step-30 file for 30 steps: the
                step-60 files equal byte for byte (version 6, the tilts in
                the header), at 1 and 3 ranks; the file continued through a
                deck (read_restart) prints the original rows
  bad input     a tilt beyond LAMMPS's limit, a box too thin for rc + skin
                between its tilted faces, tilts that do not fit the lattice,
                create_atoms region of the prism box's own region: each one
                ERROR line naming what to change (the deck's file and line
                where it is the deck's)

Exit 0 when every check holds; the LAMMPS comparisons print SKIPPED and
are left out where lmp is not installed.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, finish, md_parser, thermo_rows

DECK = """units lj
atom_style atomic
lattice fcc 0.8442
region box prism 0 {nx} 0 {ny} 0 {nz} {tilt}
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 1.44 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify delay 0 every 20 check no
fix 1 all nve
"""


def deck(tmp, name, tail, nx=6, ny=7, nz=8, tilt="-1 1.5 0.5"):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(DECK.format(nx=nx, ny=ny, nz=nz, tilt=tilt) + tail)
    return name


class Runner:
    def __init__(self, a, tmp):
        self.a, self.tmp = a, tmp

    def launch(self, n, prog):
        if n == 1 and not self.a.mpiexec:
            return [prog]
        return [self.a.mpiexec, "-n", str(n)] + self.a.mpiflags.split() + [prog]

    def run(self, cmd):
        p = subprocess.run(cmd, cwd=self.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=600)
        return p.returncode, p.stdout, p.stderr

    def halox(self, n, args, engine="--cpu"):
        return self.run(self.launch(n, self.a.halox) + [engine, "--no-progress"] + args)

    def read(self, name):
        with open(os.path.join(self.tmp, name), "rb") as f:
            return f.read()


def dumps(r, ranks, lmp):
    for style in ("atom", "xyz"):
        name = deck(r.tmp, "in.dump_" + style,
                    "dump d all %s 25 traj.%s\ndump_modify d sort id\nthermo 50\nrun 50\n" %
                    (style, style))
        rc, out, err = r.run(r.launch(1, lmp) + ["-in", name, "-log", "none", "-echo", "none"])
        if not check(rc == 0, "LAMMPS writes the %s dump (exit %d)" % (style, rc)):
            continue
        want = r.read("traj." + style)
        for n in ranks:
            os.remove(os.path.join(r.tmp, "traj." + style))
            rc, out, err = r.halox(n, ["-in", name])
            got = r.read("traj." + style) if rc == 0 else b""
            if style == "atom":
                head = [l for l in got.split(b"\n")[:8]]
                check(head == want.split(b"\n")[:8] and b"BOX BOUNDS xy xz yz pp pp pp" in got,
                      "dump atom at %d rank(s): LAMMPS's triclinic header" % n)
            check(got == want, "dump %s at %d rank(s): LAMMPS's file byte for byte (%d vs %d "
                  "bytes)" % (style, n, len(got), len(want)))


def loop_all(r, ranks, lmp):
    name = deck(r.tmp, "in.all", "thermo 50\nrun 100\n")
    path = os.path.join(r.tmp, name)
    with open(path) as f:
        text = f.read().replace("87287 loop geom", "87287 dist gaussian rot yes")
    with open(path, "w") as f:
        f.write(text)
    rc, out, _ = r.run(r.launch(1, lmp) + ["-in", name, "-log", "none", "-echo", "none"])
    want = thermo_rows(out)
    for n in ranks:
        rc2, out2, err = r.halox(n, ["-in", name])
        got = thermo_rows(out2)
        ok = rc == rc2 == 0 and len(got) == len(want) == 3 and got[0] == want[0]
        for g, w in zip(got[1:], want[1:]):
            ok = ok and all(abs(float(x) - float(y)) <= 1e-6 * max(abs(float(x)), abs(float(y)), 1)
                            for x, y in zip(g, w))
        check(ok, "loop all at %d rank(s): LAMMPS's rows (1 process) %s" % (n, err.strip()[-200:]))


def regions(r, ranks, lmp):
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "triclinic_decks", "in.tri_region")) as f:
        text = f.read().replace("4711 loop geom", "4711 dist gaussian")
    text = text.replace("thermo          50", "dump d all atom 25 traj.region\n"
                        "dump_modify d sort id\nthermo 25").replace("run             200", "run 50")
    with open(os.path.join(r.tmp, "in.region_all"), "w") as f:
        f.write(text)
    rc, out, _ = r.run(r.launch(1, lmp) + ["-in", "in.region_all", "-log", "none", "-echo",
                                           "none"])
    if not check(rc == 0, "LAMMPS runs in.region_all (exit %d)" % rc):
        return
    want, atoms = r.read("traj.region"), [w[-1] for w in thermo_rows(out)]
    for n in ranks:
        os.remove(os.path.join(r.tmp, "traj.region"))
        rc, out, err = r.halox(n, ["-in", "in.region_all"])
        got = r.read("traj.region") if rc == 0 else b""
        check(got == want and [w[-1] for w in thermo_rows(out)] == atoms,
              "create_atoms region in a prism box at %d rank(s): LAMMPS's %s atoms, its dump "
              "(loop all) byte for byte (%d vs %d bytes) %s" %
              (n, atoms[:1], len(got), len(want), err.strip()[-200:]))


def units_box(r):
    a = (4 / 0.8442) ** (1.0 / 3.0)
    lat = deck(r.tmp, "in.lat", "thermo 50\nrun 100\n", tilt="-1 1.5 0.5 units lattice")
    box = deck(r.tmp, "in.box", "thermo 50\nrun 100\n")
    with open(os.path.join(r.tmp, box)) as f:
        text = f.read()
    given = "region box prism 0 %r 0 %r 0 %r %r %r %r units box" % (
        6 * a, 7 * a, 8 * a, -1 * a, 1.5 * a, 0.5 * a)
    text = "\n".join(given if l.startswith("region") else l for l in text.split("\n"))
    with open(os.path.join(r.tmp, box), "w") as f:
        f.write(text)
    rc1, out1, _ = r.halox(1, ["-in", lat])
    rc2, out2, err2 = r.halox(1, ["-in", box])
    check(rc1 == rc2 == 0 and thermo_rows(out1) == thermo_rows(out2) and thermo_rows(out1),
          "units box prints the rows of units lattice (exit %d %s)" % (rc2, err2.strip()[-200:]))


def restart(r, ranks):
    name = deck(r.tmp, "in.rst", "thermo 10\nrun 100\n")
    full = {}
    for n in ranks:
        rc1, out, _ = r.halox(n, ["-in", name, "--steps", "60", "--checkpoint", "full%d.rst" % n,
                                  "--checkpoint-every", "30"])
        rc2, _, _ = r.halox(n, ["-in", name, "--steps", "40", "--checkpoint", "half%d.rst" % n,
                                "--checkpoint-every", "30"])
        rc3, _, err = r.halox(n, ["--restart", "half%d.rst" % n, "--steps", "30", "--thermo",
                                  "10", "--checkpoint", "cont%d.rst" % n, "--checkpoint-every",
                                  "30"])
        ok = check(rc1 == rc2 == rc3 == 0, "restart at %d rank(s): the runs succeed %s" %
                   (n, err.strip()[-300:]))
        if ok:
            a, b = r.read("full%d.rst" % n), r.read("cont%d.rst" % n)
            check(a == b, "restart at %d rank(s): the step-60 state equal byte for byte" % n)
            check(a[8:12] == (6).to_bytes(4, sys.byteorder) and a[152:160] != bytes(8),
                  "restart at %d rank(s): a version 6 file with the tilts" % n)
        full[n] = [w for w in thermo_rows(out) if int(w[0]) >= 30]
    with open(os.path.join(r.tmp, "in.cont"), "w") as f:
        f.write("read_restart half1.rst\nneighbor 0.3 bin\n"
                "neigh_modify delay 0 every 20 check no\nfix 1 all nve\nthermo 10\nrun 30\n")
    n = ranks[-1]
    rc, out, err = r.halox(n, ["-in", "in.cont"])
    check(rc == 0 and thermo_rows(out) == full[ranks[0]],
          "read_restart of the 1-rank file on %d rank(s) prints the original rows" % n)


def bad_input(r):
    cases = [
        ("in.skew", dict(tilt="3.5 0 0"), "--cpu",
         "in.skew:5: create_box: region box's tilt xy = 5.87859 is beyond LAMMPS's limit "
         "|xy| <= lx / 2"),
        ("in.thin", dict(nx=4, ny=4, nz=4, tilt="2 2 0"), "--cpu",
         "in.thin:15: run: the triclinic box is 5.48554 thick along x"),
        ("in.nofit", dict(tilt="0.5 0 0"), "--cpu", "in.nofit:5: create_box: region box's "
         "tilts xy 0.5, xz 0, yz 0 do not fit the fcc lattice"),
    ]
    for name, kw, engine, want in cases:
        deck(r.tmp, name, "thermo 50\nrun 10\n", **kw)
        rc, out, err = r.halox(1, ["-in", name], engine=engine)
        errs = [l for l in err.splitlines() if "ERROR" in l]
        ok = rc != 0 and len(errs) == 1 and want in errs[0]
        check(ok, "%s: one ERROR line: %s%s" %
              (name, want, "" if ok else " (exit %d: %s)" % (rc, " | ".join(errs)[-300:])))
    path = os.path.join(r.tmp, "in.region")
    with open(path, "w") as f:
        f.write(DECK.format(nx=6, ny=7, nz=8, tilt="1 0 0").replace(
            "create_atoms 1 box", "create_atoms 1 region box") + "run 10\n")
    rc, out, err = r.halox(1, ["-in", "in.region"])
    check(rc != 0 and "in.region:6: create_atoms 1 region box: the prism box's own region" in err,
          "create_atoms region of the prism box's own region: refused naming the line (exit %d)"
          % rc)


def main():
    ap = md_parser(__doc__.split("\n\n")[0])
    ap.add_argument("--lmp", default=os.environ.get("HALOX_LMP", "lmp"))
    a = ap.parse_args()
    ranks = [1, 3] if a.mpiexec else [1]
    if not a.mpiexec:
        print("note: no MPI launcher; 1 rank only")
    lmp = shutil.which(a.lmp)
    with tempfile.TemporaryDirectory(prefix="halox-tri-") as tmp:
        r = Runner(a, tmp)
        if lmp:
            dumps(r, ranks, lmp)
            loop_all(r, ranks, lmp)
            regions(r, ranks, lmp)
        else:
            print("SKIPPED (dumps against LAMMPS): no LAMMPS program '%s'" % a.lmp)
        units_box(r)
        restart(r, ranks)
        bad_input(r)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
