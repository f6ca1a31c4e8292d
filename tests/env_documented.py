#!/usr/bin/env python3
"""Every HALOX_* environment variable the sources read is in the one table
of docs/environment.md, and the table names no variable nothing reads.

Scans src/, tools/, bench/, include/ and tests/ for string literals and
environment lookups naming HALOX_* variables. Usage: env_documented.py ROOT
"""
import os
import re
import sys

from checks import check, finish


def used(root):
    names = {}
    pat = re.compile(r"""["'](HALOX_[A-Z0-9_]+)["']""")
    for top in ("src", "tools", "bench", "include", "tests"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith((".c", ".h", ".cu", ".cuh", ".py", ".sh")):
                    continue
                path = os.path.join(d, f)
                if os.path.abspath(path) == os.path.abspath(__file__):
                    continue
                for m in pat.finditer(open(path, errors="replace").read()):
                    names.setdefault(m.group(1), os.path.relpath(path, root))
    return names


def documented(root):
    rows = set()
    for line in open(os.path.join(root, "docs", "environment.md")):
        m = re.match(r"\|\s*`(HALOX_[A-Z0-9_]+)`\s*\|", line)
        if m:
            rows.add(m.group(1))
    return rows


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    names, rows = used(root), documented(root)
    check(len(names) >= 10, "the scan finds the variables the sources read (%d)" % len(names))
    for n in sorted(set(names) - rows):
        check(False, "%s (read in %s) has no row in docs/environment.md" % (n, names[n]))
    for n in sorted(rows - set(names)):
        check(False, "docs/environment.md has a row for %s, which nothing reads" % n)
    print("%d variables read, %d rows" % (len(names), len(rows)))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
