#!/usr/bin/env python3
"""halox-md's restart files, stops and faults, end to end (CPU engine).

  continuation  a run of 60 steps writing a checkpoint every 30, and a run
                of 40 steps writing one at 30 then continued from it for 30
                steps: the step-60 files are equal byte for byte (every x
                and v in double), at 1, 2 and 4 ranks; the 1-rank file
                continued on 4 ranks and through a deck (read_restart) on
                2 prints the same thermo rows as the original
  invisible     a run writing a checkpoint every 50 steps prints the rows
                of the run without (no rebuild is forced for a file), with
                check no and check yes, at 1 and 2 ranks
  fix nvt       a run under fix nvt (temp 1.0 1.0) writing checkpoints and
                one continued from its step-30 file: the step-60 files
                (atoms and the chain's state) equal byte for byte, at 1
                and 2 ranks; a damaged chain refused
  write_restart a deck writing the state after its first run equals the
                command line's checkpoint of the same step, byte for byte
  SIGTERM       a long run signalled mid-way: exit 143, one line naming
                the checkpoint, which continues
  --max-hours   stops in time with exit 0 and a checkpoint
  bad files     truncated, a flipped payload byte, a flipped header byte,
                another version, not a restart file, another system size,
                an unwritable directory, a full device (/dev/full), a file
                over the size limit; with valid checksums: a box that is
                not the lattice's, cells that do not hold the atoms, an
                atom far outside the box, a step near 2^63: each one
                ERROR line and a non-zero exit; the size limit leaves the
                previous checkpoint as it was. A version-1 file (no list
                positions) still continues; version-2 and version-5 files
                continue as the file they came from.
  killed rank   SIGKILL to one of 2 ranks: the run ends within 30 s, the
                launcher names the rank, no process is left
  mpirun stop   SIGTERM to mpirun of 2 ranks (32,000 atoms with Open MPI's
                grace at 3 s; --big: larger systems, at 20 s): a non-zero exit, the
                stop line, a checkpoint that continues, a stale temporary
                of an earlier write removed (an hour old, its process
                gone), a fresh one kept, none of its own left

  --gpu         the GPU engine instead: continuation within GPU_RTOL at 1
                and 2 ranks, a CPU file continued on the GPU and back, and
                the killed rank with the default transport, nvshmem-pulse,
                nccl (skipped where ranks share a GPU) and mpi

Usage: restart_cases.py --halox PATH [--gpu] [--mpiexec PATH --mpiflags "..."]
                        [--big SIZE ...]
Without a launcher the multi-rank cases are skipped (and said to be).
"""
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

from checks import check, finish, md_parser


class Runner:
    def __init__(self, a, tmp):
        self.a, self.tmp = a, tmp

    def cmd(self, n, args, engine=None):
        base = [self.a.halox, engine or self.a.engine, "--no-progress"] + args
        if n == 1 and not self.a.mpiexec:
            return base
        return [self.a.mpiexec, "-n", str(n)] + self.a.mpiflags.split() + base

    def run(self, n, args, limit=None, timeout=300, engine=None):
        def lim():
            if limit:
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        p = subprocess.run(self.cmd(n, args, engine), cwd=self.tmp, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=timeout, preexec_fn=lim)
        return p.returncode, p.stdout, p.stderr


def rows(text, first=0):
    out = []
    for line in text.splitlines():
        w = line.split()
        if len(w) == 6 and w[0].isdigit() and int(w[0]) >= first:
            out.append(w)
    return out


def same_file(tmp, a, b):
    with open(os.path.join(tmp, a), "rb") as f, open(os.path.join(tmp, b), "rb") as g:
        return f.read() == g.read()


SYS = ["--size", "8", "--thermo", "10"]


def continuation(r, ranks):
    full_out = {}
    for n in ranks:
        rc1, out, _ = r.run(n, SYS + ["--steps", "60", "--checkpoint", "full%d.rst" % n,
                                      "--checkpoint-every", "30"])
        rc2, _, _ = r.run(n, SYS + ["--steps", "40", "--checkpoint", "half%d.rst" % n,
                                    "--checkpoint-every", "30"])
        rc3, _, _ = r.run(n, ["--restart", "half%d.rst" % n, "--steps", "30", "--thermo", "10",
                              "--checkpoint", "cont%d.rst" % n, "--checkpoint-every", "30"])
        check(rc1 == rc2 == rc3 == 0, "continuation at %d rank(s): the runs succeed" % n)
        if rc1 == rc2 == rc3 == 0:
            check(same_file(r.tmp, "full%d.rst" % n, "cont%d.rst" % n),
                  "continuation at %d rank(s): step-60 state equal byte for byte" % n)
        full_out[n] = out
    # Another rank count, and a deck.
    want = rows(full_out[ranks[0]], 30)
    if len(ranks) > 1:
        rc, out, err = r.run(ranks[-1], ["--restart", "half1.rst", "--steps", "30", "--thermo",
                                         "10"])
        check(rc == 0 and rows(out, 30) == want,
              "the 1-rank file continued on %d ranks prints the original rows" % ranks[-1])
    with open(os.path.join(r.tmp, "in.cont"), "w") as f:
        f.write("read_restart half1.rst\nneighbor 0.3 bin\n"
                "neigh_modify delay 0 every 20 check no\nfix 1 all nve\nthermo 10\nrun 30\n")
    n = 2 if len(ranks) > 1 else 1
    rc, out, err = r.run(n, ["-in", "in.cont"])
    check(rc == 0 and rows(out, 30) == want,
          "read_restart in a deck on %d rank(s) prints the original rows" % n)


def invisible(r, ranks):
    for sched in (["--every", "20", "--check", "no"], ["--every", "2", "--check", "yes"]):
        for n in ranks[:2]:
            base = ["--size", "6", "--steps", "120", "--thermo", "10"] + sched
            rc1, out1, _ = r.run(n, base)
            rc2, out2, _ = r.run(n, base + ["--checkpoint", "inv.rst", "--checkpoint-every", "50"])
            check(rc1 == rc2 == 0 and len(rows(out1)) == 13 and rows(out1) == rows(out2),
                  "%s at %d rank(s): checkpoints every 50 steps leave every row as it was" %
                  (" ".join(sched), n))


# Restart files as src/md/restart_header.c lays them out: header fields and checksums.
HDR = 256
FNV0, FNVP = 0xcbf29ce484222325, 0x100000001b3


def fnv(data, h=FNV0):
    for i in range(0, len(data), 8):
        h ^= int.from_bytes(data[i:i + 8], "little")
        h = (h * FNVP) & 0xFFFFFFFFFFFFFFFF
    return h


def reseal(b, payload=None):
    """A file with both checksums made valid again (payload: new records)."""
    b = bytearray(b[:HDR]) + (payload if payload is not None else b[HDR:])
    b[160:168] = struct.pack("<Q", len(b) - HDR)
    b[168:176] = struct.pack("<Q", fnv(bytes(b[HDR:])))
    b[248:256] = struct.pack("<Q", fnv(bytes(b[:248])))
    return bytes(b)


def as_version2(b):
    """A version-3 file of lj/cut as version 2 wrote it (no pair style)."""
    h = bytearray(b)
    h[8:12] = struct.pack("<I", 2)
    h[200:248] = bytes(48)
    return reseal(h)


def as_version1(b):
    """A version-3 file of 9 values an atom as version 1 wrote it."""
    width = struct.unpack("<I", b[176:180])[0]
    recs = b[HDR:]
    n = len(recs) // (8 * width)
    out = bytearray()
    for k in range(n):
        out += recs[8 * width * k:8 * width * k + 48]
    h = bytearray(b[:HDR])
    h[8:12] = struct.pack("<I", 1)
    h[176:248] = bytes(72)
    return reseal(h, out)


def as_version5(b):
    """A version-6 file without cuts as version 5 wrote it (the same bytes
    but the version)."""
    h = bytearray(b)
    h[8:12] = struct.pack("<I", 5)
    return reseal(h)


def sealed_cases(r, data):
    def put(fmt, at, *v):
        b = bytearray(data)
        b[at:at + struct.calcsize(fmt)] = struct.pack(fmt, *v)
        return reseal(b)

    width = struct.unpack("<I", data[176:180])[0]
    far = bytearray(data)
    far[HDR:HDR + 8] = struct.pack("<d", 1e9)
    made = {
        "box.rst": (put("<d", 80, 1e300), "is not that of 8 cells"),
        "cells.rst": (put("<i", 40, 7), "fcc cells hold at most"),
        "far.rst": (reseal(far), "atom 0 is not finite or lies far outside the box"),
        "step.rst": (put("<q", 24, (1 << 63) - 10), "the step must be at most"),
        "style.rst": (put("<i", 200, 99), "pair style 99 is unknown"),
        "sigma.rst": (put("<d", 136, -1.0), "lj/cut sigma -1 must be > 0"),
        "rc.rst": (put("<d", 120, 0.0), "cutoff 0 must be > 0"),
    }
    for name, (blob, want) in made.items():
        with open(os.path.join(r.tmp, name), "wb") as f:
            f.write(blob)
        rc, out, err = r.run(1, ["--restart", name, "--steps", "10"])
        errs = [l for l in err.splitlines() if "ERROR" in l]
        check(rc != 0 and len(errs) == 1 and want in errs[0],
              "checksums valid, %s: one ERROR line with '%s' (exit %d)" % (name, want, rc))
    check(width == 9, "the CPU engine's checkpoint holds the list positions (%d values)" % width)
    with open(os.path.join(r.tmp, "v1.rst"), "wb") as f:
        f.write(as_version1(data))
    rc, out, err = r.run(1, ["--restart", "v1.rst", "--steps", "20", "--thermo", "10"])
    check(rc == 0 and len(rows(out)) == 3, "a version-1 file continues (exit %d)" % rc)
    with open(os.path.join(r.tmp, "v2.rst"), "wb") as f:
        f.write(as_version2(data))
    rc, out2, err = r.run(1, ["--restart", "v2.rst", "--steps", "20", "--thermo", "10"])
    rc3, out3, err = r.run(1, ["--restart", "half1.rst", "--steps", "20", "--thermo", "10"])
    check(rc == 0 and rc3 == 0 and rows(out2) == rows(out3) and len(rows(out2)) == 3,
          "a version-2 file continues as the version-3 file it came from (exit %d)" % rc)
    with open(os.path.join(r.tmp, "v5.rst"), "wb") as f:
        f.write(as_version5(data))
    rc, out5, err = r.run(1, ["--restart", "v5.rst", "--steps", "20", "--thermo", "10"])
    check(rc == 0 and rows(out5) == rows(out3) and len(rows(out5)) == 3,
          "a version-5 file continues as the version-6 file it came from (exit %d)" % rc)


NVT_DECK = """units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 6 0 6 0 6
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 1.44 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0
neighbor 0.3 bin
neigh_modify delay 0 every 20 check no
fix 1 all nvt temp 1.0 1.0 0.5
thermo 10
run 60
"""
NVT_CONT = """read_restart {src}
neighbor 0.3 bin
neigh_modify delay 0 every 20 check no
fix 1 all nvt temp 1.0 1.0 0.5
thermo 10
run 30
"""


def nvt_continuation(r, ranks):
    with open(os.path.join(r.tmp, "in.nvt"), "w") as f:
        f.write(NVT_DECK)
    for n in ranks[:2]:
        with open(os.path.join(r.tmp, "in.nvtc"), "w") as f:
            f.write(NVT_CONT.format(src="nh%d.rst" % n))
        ck = ["--checkpoint-every", "30", "--checkpoint"]
        rc1, out1, _ = r.run(n, ["-in", "in.nvt"] + ck + ["nf%d.rst" % n])
        rc2, _, _ = r.run(n, ["-in", "in.nvt", "--steps", "40"] + ck + ["nh%d.rst" % n])
        rc3, out3, _ = r.run(n, ["-in", "in.nvtc"] + ck + ["nc%d.rst" % n])
        check(rc1 == rc2 == rc3 == 0 and same_file(r.tmp, "nf%d.rst" % n, "nc%d.rst" % n) and
              rows(out1, 30) == rows(out3, 30),
              "fix nvt at %d rank(s): the continued run's rows and step-60 file (with the "
              "chain) equal the original's" % n)
    data = bytearray(open(os.path.join(r.tmp, "nh1.rst"), "rb").read())
    data[-8] ^= 0x01
    with open(os.path.join(r.tmp, "nvtbad.rst"), "wb") as f:
        f.write(bytes(data))
    rc, _, err = r.run(1, ["--restart", "nvtbad.rst", "--steps", "5"])
    errs = [l for l in err.splitlines() if "ERROR" in l]
    check(rc != 0 and len(errs) == 1 and "thermostat's checksum" in errs[0],
          "a damaged chain: one ERROR line (exit %d)" % rc)


def write_restart(r):
    with open(os.path.join(r.tmp, "in.write"), "w") as f:
        f.write("units lj\natom_style atomic\nlattice fcc 0.8442\n"
                "region box block 0 8 0 8 0 8\ncreate_box 1 box\ncreate_atoms 1 box\n"
                "mass 1 1.0\nvelocity all create 1.44 87287 loop geom\n"
                "pair_style lj/cut 2.5\npair_coeff 1 1 1.0 1.0 2.5\nneighbor 0.3 bin\n"
                "neigh_modify delay 0 every 20 check no\nfix 1 all nve\n"
                "run 30\nwrite_restart deck.rst\nrun 10\n")
    rc, _, err = r.run(1, ["-in", "in.write"])
    check(rc == 0 and same_file(r.tmp, "deck.rst", "half1.rst"),
          "write_restart after run 30 equals --checkpoint's step-30 file byte for byte")


def pair_styles(r):
    """A file carries the pair style and its parameters: a deck that reads
    it back without pair commands continues the run bit for bit, at 1 and
    2 ranks; a new pair_style there needs its pair_coeff."""
    head = ("units lj\natom_style atomic\nlattice fcc 0.8442\n"
            "region box block 0 6 0 6 0 6\ncreate_box 1 box\ncreate_atoms 1 box\n"
            "mass 1 1.0\nvelocity all create 1.44 87287 loop geom\n")
    tail = "neighbor 0.3 bin\nneigh_modify delay 0 every 1 check yes\nfix 1 all nve\nthermo 10\n"
    styles = {"morse": "pair_style morse 2.5\npair_coeff * * 1.0 4.0 1.1\npair_modify shift yes\n",
              "yukawa": "pair_style yukawa 2.0 2.5\npair_coeff 1 1 20.0 2.2\n"}
    for style, pair in styles.items():
        with open(os.path.join(r.tmp, "in.w_" + style), "w") as f:
            f.write(head + pair + tail + "run 30\nwrite_restart %s.rst\nrun 20\n" % style)
        with open(os.path.join(r.tmp, "in.r_" + style), "w") as f:
            f.write("read_restart %s.rst\n" % style + tail + "run 20\n")
        rc, whole, _ = r.run(1, ["-in", "in.w_" + style])
        for n in ([1, 2] if r.a.mpiexec else [1]):
            rc2, cont, err = r.run(n, ["-in", "in.r_" + style])
            check(rc == 0 and rc2 == 0 and rows(cont, 31) == rows(whole, 31) and
                  len(rows(cont, 31)) == 2,
                  "pair_style %s: read_restart continues the run at %d rank(s) (exit %d)" %
                  (style, n, rc2))
    with open(os.path.join(r.tmp, "in.r_new"), "w") as f:
        f.write("read_restart morse.rst\npair_style soft 1.5\n" + tail + "run 20\n")
    rc, _, err = r.run(1, ["-in", "in.r_new"])
    errs = [l for l in err.splitlines() if "ERROR" in l]
    check(rc != 0 and len(errs) == 1 and "run comes before pair_coeff" in errs[0],
          "read_restart, then pair_style without pair_coeff: one ERROR line (%s)" % errs)


def sigterm_in_loop(p, start_limit, into_loop, end_limit):
    """SIGTERM to process p once its run is in its loop (the thermo header
    is out, then `into_loop` seconds), not while it starts (a slow start,
    as under sanitizers, would take the signal before the handler is
    installed). Returns its whole stdout, its stderr and the seconds from
    the signal to its end."""
    head = ""
    deadline = time.time() + start_limit
    while "Step" not in head and time.time() < deadline and p.poll() is None:
        head += p.stdout.readline()
    time.sleep(into_loop)
    t0 = time.time()
    p.send_signal(signal.SIGTERM)
    try:
        out, err = p.communicate(timeout=end_limit)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    return head + out, err, time.time() - t0


def stops(r):
    # SIGTERM: run the program directly, so that its own exit code shows.
    p = subprocess.Popen([r.a.halox, "--cpu", "--no-progress", "--size", "10", "--steps",
                          "10000000", "--thermo", "0", "--checkpoint", "sig.rst"], cwd=r.tmp,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err, _ = sigterm_in_loop(p, 120, 0.5, 60)
    lines = [l for l in err.splitlines() if l.strip()]
    check(p.returncode == 128 + signal.SIGTERM and len(lines) == 1 and
          "stopped by SIGTERM" in lines[0] and "sig.rst" in lines[0],
          "SIGTERM: exit %d and one line naming the checkpoint (%r)" % (p.returncode, err[-200:]))
    rc, out, _ = r.run(1, ["--restart", "sig.rst", "--steps", "5"])
    check(rc == 0 and len(rows(out)) >= 2, "the SIGTERM checkpoint continues")
    t0 = time.time()
    rc, out, err = r.run(1, ["--size", "10", "--steps", "10000000", "--thermo", "0",
                             "--checkpoint", "mh.rst", "--max-hours", "0.0005"])
    took = time.time() - t0
    check(rc == 0 and "stopped by --max-hours" in err and os.path.exists(
        os.path.join(r.tmp, "mh.rst")) and took < 30,
        "--max-hours 0.0005 (1.8 s): exit %d after %.1f s with a checkpoint" % (rc, took))


def dead_pid():
    """The process id of a process that has ended."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def mpirun_stop(r, size, grace_flags=()):
    """SIGTERM to mpirun of a 2-rank run that checkpoints ahead: a non-zero
    exit, the stop line, a checkpoint that continues, the stale temporary of
    an earlier write removed with a line, a fresh one (perhaps another
    host's writer) kept, and no temporary of its own left."""
    name = "mp%d.rst" % size
    stale = "%s.tmp.%d" % (name, dead_pid())
    fresh = "%s.tmp.%d" % (name, dead_pid())
    for f in (stale, fresh):
        open(os.path.join(r.tmp, f), "wb").write(b"x" * 4096)
    # An hour old: stale. One just written may be another host's writer.
    old = time.time() - 3600
    os.utime(os.path.join(r.tmp, stale), (old, old))
    cmd = [r.a.mpiexec, "-n", "2"] + r.a.mpiflags.split() + list(grace_flags) + [
        r.a.halox, "--cpu", "--no-progress", "--size", str(size), "--steps", "10000000",
        "--thermo", "0", "--checkpoint", name, "--checkpoint-every", "200"]
    p = subprocess.Popen(cmd, cwd=r.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    out, err, took = sigterm_in_loop(p, 600, 2.0, 120)
    stop = [l for l in err.splitlines() if "stopped by SIGTERM" in l]
    left = [f for f in os.listdir(r.tmp) if f.startswith(name + ".tmp")]
    check(p.returncode != 0 and len(stop) == 1 and name in stop[0] and left == [fresh] and
          ("removed %s" % stale) in out,
          "%d atoms, SIGTERM to mpirun %s: exit %d after %.1f s, the stop line, the stale "
          "temporary removed, a fresh one kept, none of its own left (%r)" %
          (4 * size ** 3, " ".join(grace_flags), p.returncode, took, (stop or [err[-300:]])[0]))
    rc, out, err = r.run(1, ["--restart", name, "--steps", "1", "--thermo", "1"], timeout=900)
    check(rc == 0 and len(rows(out)) == 2, "%d atoms: the stop's checkpoint continues" %
          (4 * size ** 3))
    for f in os.listdir(r.tmp):
        if f.startswith(name):
            os.remove(os.path.join(r.tmp, f))


def open_mpi_grace(r, seconds):
    """mpirun's flag that gives a stop `seconds`, where mpirun is Open MPI's
    (its own default, 1 s, may be set lower around this test)."""
    v = subprocess.run([r.a.mpiexec, "--version"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True).stdout
    open_mpi = "Open MPI" in v or "OpenRTE" in v
    return ["--mca", "odls_base_sigkill_timeout", str(seconds)] if open_mpi else []


def bad_files(r):
    src = os.path.join(r.tmp, "half1.rst")
    data = open(src, "rb").read()

    def variant(name, blob):
        with open(os.path.join(r.tmp, name), "wb") as f:
            f.write(blob)

    def flip(at):
        b = bytearray(data)
        b[at] ^= 0x01
        return bytes(b)

    variant("trunc.rst", data[:len(data) // 2])
    variant("payload.rst", flip(len(data) - 1000))
    variant("header.rst", flip(30))
    ver = bytearray(data)
    ver[8] = 7
    variant("version.rst", bytes(ver))
    variant("text.rst", b"units lj\n")
    cases = [
        (["--restart", "trunc.rst"], "truncated"),
        (["--restart", "payload.rst"], "atoms' checksum does not match"),
        (["--restart", "header.rst"], "header's checksum does not match"),
        (["--restart", "version.rst"], "version 7; this halox-md reads versions 1 to 6"),
        (["--restart", "text.rst"], "not a restart file"),
        (["--restart", "missing.rst"], "cannot open restart file missing.rst"),
        (["--restart", "half1.rst", "--size", "9"], "but the run asks for 9x9x9 cells"),
        (["--size", "8", "--checkpoint", "/no/such/dir/c.rst", "--checkpoint-every", "5"],
         "cannot create /no/such/dir/c.rst.tmp"),
        (["--size", "8", "--checkpoint", "/dev/full", "--checkpoint-every", "5"],
         "No space left on device"),
    ]
    for args, want in cases:
        rc, out, err = r.run(1, args + ["--steps", "10"])
        errs = [l for l in err.splitlines() if "ERROR" in l]
        check(rc != 0 and len(errs) == 1 and want in errs[0],
              "%s: one ERROR line with '%s' (exit %d)" % (" ".join(args), want, rc))
    # A write that fails (over the file-size limit) keeps the old file.
    big = ["--size", "40", "--steps", "4", "--every", "2", "--thermo", "0", "--checkpoint",
           "big.rst", "--checkpoint-every", "2"]
    rc, _, _ = r.run(1, big)
    shutil.copy(os.path.join(r.tmp, "big.rst"), os.path.join(r.tmp, "big.keep"))
    rc2, out, err = r.run(1, big, limit=8 << 20)
    errs = [l for l in err.splitlines() if "ERROR" in l]
    left = [f for f in os.listdir(r.tmp) if f.startswith("big.rst.tmp")]
    check(rc == 0 and rc2 != 0 and len(errs) == 1 and "File too large" in errs[0] and
          same_file(r.tmp, "big.rst", "big.keep") and not left,
          "a write over the size limit: one ERROR line, the old file intact, no temporary left")
    sealed_cases(r, data)


def close_rows(got, want, rtol):
    """Thermo rows of the same steps, every value within rtol (floor 1)."""
    if len(got) != len(want) or not want:
        return False, "%d rows against %d" % (len(got), len(want))
    worst = 0.0
    for g, w in zip(got, want):
        if g[0] != w[0]:
            return False, "step %s against %s" % (g[0], w[0])
        for x, y in zip(g[1:], w[1:]):
            worst = max(worst, abs(float(x) - float(y)) / max(1.0, abs(float(y))))
    return worst <= rtol, "largest relative difference %.2e" % worst


# The GPU engine computes in float and sorts atoms by cell: a continued run
# orders the atoms of a cell differently, so the force sums round
# differently. 30 steps (0.15 tau) after a restart the rows agree to about
# 1e-6 (7 digits, as measured on an H200); the bound leaves room for the
# chaotic growth of such differences.
GPU_RTOL = 1e-4


def gpu_continuation(r, ranks):
    for n in ranks:
        rc1, out, err1 = r.run(n, SYS + ["--steps", "60"])
        rc2, _, err2 = r.run(n, SYS + ["--steps", "30", "--checkpoint", "g%d.rst" % n,
                                       "--checkpoint-every", "30"])
        rc3, cont, err3 = r.run(n, ["--restart", "g%d.rst" % n, "--steps", "30", "--thermo",
                                    "10"])
        check(rc1 == rc2 == rc3 == 0, "gpu continuation at %d rank(s): the runs succeed %s" %
              (n, (err1 + err2 + err3).strip()[-300:]))
        ok, how = close_rows(rows(cont, 40), rows(out, 40), GPU_RTOL)
        check(ok, "gpu continuation at %d rank(s): steps 40-60 within %g (%s)" %
              (n, GPU_RTOL, how))
    # Across engines: a CPU file continued on the GPU, and back.
    rc1, ref, _ = r.run(1, SYS + ["--steps", "60"], engine="--cpu")
    rc2, _, _ = r.run(1, SYS + ["--steps", "30", "--checkpoint", "c.rst", "--checkpoint-every",
                                "30"], engine="--cpu")
    rc3, onto_gpu, _ = r.run(1, ["--restart", "c.rst", "--steps", "30", "--thermo", "10"])
    rc4, back, _ = r.run(1, ["--restart", "g1.rst", "--steps", "30", "--thermo", "10"],
                         engine="--cpu")
    ok1, how1 = close_rows(rows(onto_gpu, 40), rows(ref, 40), GPU_RTOL)
    ok2, how2 = close_rows(rows(back, 40), rows(ref, 40), GPU_RTOL)
    check(rc1 == rc2 == rc3 == rc4 == 0 and ok1 and ok2,
          "a CPU file continued on the GPU (%s) and a GPU file on the CPU (%s)" % (how1, how2))


# How a transport refuses processes that share a GPU (nccl: NCCL allows one
# rank per GPU); such a case is skipped where the ranks share one.
REFUSED_SHARED_GPU = "refuses two ranks on one GPU"


def skip_refused(what, out):
    """Prints the skip and returns True when the run refused a shared GPU."""
    lines = [l for l in out.splitlines() if REFUSED_SHARED_GPU in l]
    if lines:
        print("skip %s: %s" % (what, lines[0].strip()))
    return bool(lines)


def wait_usable(r, what):
    """After a killed rank, until a one-rank run starts again (at most 30 s):
    an MPS server refuses new clients (cudaErrorDevicesUnavailable) while it
    recovers from the killed one, which would fail the next case for a
    reason that is not halox's."""
    t0 = time.time()
    while time.time() - t0 < 30:
        p = subprocess.run(r.cmd(1, ["--size", "5", "--steps", "1", "--thermo", "0"]),
                           cwd=r.tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=60)
        if p.returncode == 0:
            if time.time() - t0 > 1:
                print("note: after %s the GPU took new processes again after %.1f s" %
                      (what, time.time() - t0))
            return
        time.sleep(1.0)
    print("note: after %s the GPU did not take a new process for 30 s" % what)


def killed_rank(r, transport=None):
    tag = "--stats-csv=kill-%d.csv" % os.getpid()  # marks this run's processes
    extra = ["--transport", transport] if transport else []
    what = "killed rank" + (" (%s)" % transport if transport else "")
    p = subprocess.Popen(r.cmd(2, ["--size", "12", "--steps", "10000000", "--thermo", "0",
                                   tag] + extra), cwd=r.tmp, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    ranks, deadline = [], time.time() + 120
    while len(ranks) < 2 and time.time() < deadline and p.poll() is None:
        time.sleep(0.5)
        pids = subprocess.run(["pgrep", "-f", "halox-md.*" + tag.replace("=", ".")],
                              stdout=subprocess.PIPE, text=True).stdout.split()
        ranks = [int(x) for x in pids if int(x) != p.pid]
    time.sleep(3.0 if r.a.engine == "--gpu" else 1.0)  # into the run loop
    check(len(ranks) == 2, "%s: 2 rank processes found (%s)" % (what, pids))
    if not ranks:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return
    try:
        os.kill(max(ranks), signal.SIGKILL)
    except ProcessLookupError:  # the run ended by itself: a refusal, or say how
        out, _ = p.communicate()
        if not skip_refused(what, out):
            errors = [l for l in out.splitlines() if "ERROR" in l or "rror" in l]
            check(False, "%s: the run ended before a rank was killed (exit %s): %s" %
                  (what, p.returncode, "\n".join(errors[:5]) or out.strip()[-600:]))
        return
    t0 = time.time()
    try:
        out, _ = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        out += "\n(still running after 30 s)"
    took = time.time() - t0
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", "halox-md.*" + tag.replace("=", ".")],
                          stdout=subprocess.PIPE, text=True).stdout.split()
    if skip_refused(what, out):
        return
    check(p.returncode != 0 and took < 30 and "rank" in out and not left,
          "%s: the run ends in %.1f s (exit %s), the launcher names the rank, "
          "%d processes left" % (what, took, p.returncode, len(left)))
    if left:
        for x in left:
            os.kill(int(x), signal.SIGKILL)
    if r.a.engine == "--gpu":
        wait_usable(r, what)


def main():
    ap = md_parser(__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", action="store_true",
                    help="the GPU engine: continuation within GPU_RTOL at 1 and 2 ranks and "
                         "across engines, and a killed rank with each GPU transport")
    ap.add_argument("--big", type=int, nargs="*", default=[],
                    help="lattice sizes (--size) of more SIGTERM-to-mpirun cases, with "
                         "Open MPI's grace raised to 60 s (50: 500,000 atoms, 80: 2,048,000)")
    a = ap.parse_args()
    a.halox = os.path.abspath(a.halox)
    a.engine = "--gpu" if a.gpu else "--cpu"
    with tempfile.TemporaryDirectory(prefix="halox-restart-") as tmp:
        r = Runner(a, tmp)
        if a.gpu:
            rc, _, err = r.run(1, ["--size", "5", "--steps", "0"])
            if rc != 0:
                why = [l for l in err.splitlines() if "ERROR" in l] or ["exit %d" % rc]
                print("SKIPPED: halox-md --gpu cannot run here: %s" % why[0])
                return 0
            gpu_continuation(r, [1, 2] if a.mpiexec else [1])
            if a.mpiexec:
                for t in (None, "nvshmem-pulse", "nccl", "mpi"):
                    killed_rank(r, t)
            return finish()
        ranks = [1, 2, 4] if a.mpiexec else [1]
        if not a.mpiexec:
            print("note: no MPI launcher: continuation at 1 rank only, no killed-rank case")
        continuation(r, ranks)
        invisible(r, ranks)
        nvt_continuation(r, ranks)
        write_restart(r)
        pair_styles(r)
        stops(r)
        bad_files(r)
        if a.mpiexec:
            killed_rank(r)
            mpirun_stop(r, 20, open_mpi_grace(r, 3))
            for size in a.big:
                mpirun_stop(r, size, open_mpi_grace(r, 20))
        elif a.big:
            print("SKIPPED: --big needs an MPI launcher")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
