#!/usr/bin/env python3
"""What halox-md and halox-bench write over, end to end: every output a
user names (HALOX_TRACE, --dump, --stats-csv, --checkpoint, halox-bench
--csv) leaves a character device or a FIFO a device or a FIFO, writes a
symbolic link's target (the link stays), refuses a directory; an output
that cannot be written (/dev/full) is an error with a non-zero exit; bad
values (--dump-every 0 with --dump, --transport bogus) are refused.
The device-node cases need root (os.mknod); otherwise they are skipped
and the FIFO cases still run.

  outputs_cases.py --halox PATH/halox-md --bench PATH/halox-bench
"""
import argparse
import os
import stat
import subprocess
import sys
import tempfile
import threading

from checks import check, finish

MD = ["--cpu", "--size", "4", "--steps", "20"]
BENCH = ["--transport", "cpu", "--iters", "2", "--warmup", "0", "--atoms", "500"]


def run(cmd, env=None, stdout=subprocess.PIPE):
    """The command's exit status and its stderr."""
    full = {k: v for k, v in os.environ.items() if k != "HALOX_TRACE"}
    full.update(env or {})
    p = subprocess.run(cmd, env=full, stdout=stdout, stderr=subprocess.PIPE, text=True,
                       timeout=120)
    return p.returncode, p.stderr


def drain(path, got):
    """A reader of the FIFO: everything until the writer closes it."""
    with open(path, "rb") as f:
        got.append(f.read())


def outputs(a, target):
    """Each named output pointed at target, as (name, command, env)."""
    return [
        ("HALOX_TRACE", [a.halox] + MD, {"HALOX_TRACE": target}),
        ("--dump", [a.halox] + MD + ["--dump", target, "--dump-every", "10"], None),
        ("--stats-csv", [a.halox] + MD + ["--stats-csv", target], None),
        ("halox-bench --csv", [a.bench] + BENCH + ["--csv", target], None),
    ]


def special_files(a, tmp):
    """A FIFO (and a device node, as root) stays what it is; each case has
    its own, so that one case's damage does not hide another's."""
    for i, (name, cmd, env) in enumerate(outputs(a, "NODE")):
        fifo = os.path.join(tmp, "fifo%d" % i)
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(target=drain, args=(fifo, got), daemon=True)
        reader.start()
        rc, err = run(*named(cmd, env, fifo))
        reader.join(30)
        check(rc == 0 and stat.S_ISFIFO(os.lstat(fifo).st_mode) and got and got[0],
              "%s to a FIFO: written through it, still a FIFO (rc %d) %s" % (name, rc, err[-200:]))
    if os.geteuid() != 0:
        print("skip the device-node cases: os.mknod needs root")
        return
    for i, (name, cmd, env) in enumerate(outputs(a, "NODE")):
        dev = os.path.join(tmp, "null%d" % i)
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        rc, err = run(*named(cmd, env, dev))
        check(rc == 0 and stat.S_ISCHR(os.lstat(dev).st_mode),
              "%s to a device node: still a device (rc %d) %s" % (name, rc, err[-200:]))


def named(cmd, env, path):
    """The command and environment with the placeholder NODE as path."""
    return ([path if w == "NODE" else w for w in cmd],
            {k: path if v == "NODE" else v for k, v in env.items()} if env else None)


def links_and_dirs(a, tmp):
    """A link's target gets the content; a directory is refused."""
    for i, (name, cmd, env) in enumerate(outputs(a, "NODE")):
        tgt, lnk = os.path.join(tmp, "target%d" % i), os.path.join(tmp, "link%d" % i)
        with open(tgt, "w") as f:
            f.write("old\n")
        os.symlink(tgt, lnk)
        rc, err = run(*named(cmd, env, lnk))
        with open(tgt) as f:
            text = f.read()
        check(rc == 0 and os.path.islink(lnk) and len(text) > 10,
              "%s to a symbolic link: the link stays, its target is written (rc %d) %s" %
              (name, rc, err[-200:]))
    tgt, lnk = os.path.join(tmp, "ck.target"), os.path.join(tmp, "ck.link")
    with open(tgt, "w") as f:
        f.write("old\n")
    os.symlink(tgt, lnk)
    rc, err = run([a.halox] + MD + ["--checkpoint", lnk, "--checkpoint-every", "10"])
    check(rc == 0 and os.path.islink(lnk) and os.path.getsize(tgt) > 256,
          "--checkpoint to a symbolic link: the link stays, its target is written (rc %d) %s" %
          (rc, err[-200:]))
    d = os.path.join(tmp, "dir")
    os.mkdir(d)
    for name, cmd, env in outputs(a, d):
        rc, err = run(cmd, env)
        check(rc != 0 and "is a directory" in err and os.path.isdir(d) and not os.listdir(d),
              "%s to a directory: refused, nothing written (rc %d) %s" % (name, rc, err[-200:]))


def full_device(tmp):
    """A device that takes no byte: as root a node of our own (code that
    renames over its output must not destroy /dev/full), else /dev/full
    (its directory is not ours to rename in)."""
    if os.geteuid() == 0:
        full = os.path.join(tmp, "full")
        os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
        return full
    return "/dev/full" if os.path.exists("/dev/full") else None


def write_errors(a, tmp):
    """A full device for stdout and for the named outputs: an error."""
    cases = [("halox-md", [a.halox] + MD + ["--thermo", "1"], None),
             ("halox-bench", [a.bench] + BENCH, None)] + outputs(a, "NODE")
    for i, (name, cmd, env) in enumerate(cases):
        sub = os.path.join(tmp, "full%d" % i)
        os.mkdir(sub)
        full = full_device(sub)
        if not full:
            print("skip the full-device cases: no /dev/full")
            return
        if "NODE" in cmd or (env and "NODE" in env.values()):
            rc, err = run(*named(cmd, env, full))
            ok = rc != 0 and full in err
            what = "%s to a full device" % name
        else:
            with open(full, "w") as out:
                rc, err = run(cmd, stdout=out)
            ok = rc != 0 and "stdout" in err
            what = "%s > a full device" % name
        check(ok and stat.S_ISCHR(os.stat(full).st_mode),
              "%s: an error (rc %d) %s" % (what, rc, err[-200:]))


def bad_values(a, tmp):
    """Options that would write nothing, or name nothing known."""
    dump = os.path.join(tmp, "none.xyz")
    rc, err = run([a.halox] + MD + ["--dump", dump, "--dump-every", "0"])
    check(rc != 0 and "--dump-every 0" in err, "--dump F --dump-every 0: refused (rc %d) %s" %
          (rc, err[-200:]))
    rc, err = run([a.bench, "--transport", "bogus"])
    check(rc == 2 and "unknown transport 'bogus'" in err and "cpu" in err,
          "halox-bench --transport bogus: refused with the known ones (rc %d) %s" %
          (rc, err[-200:]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--halox", required=True)
    p.add_argument("--bench", required=True)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        special_files(a, tmp)
        links_and_dirs(a, tmp)
        write_errors(a, tmp)
        bad_values(a, tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
