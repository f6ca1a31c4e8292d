#!/usr/bin/env python3
"""Every relative markdown link in README.md and docs/*.md resolves to a
file of the tree, and every `docs/...` file the docs, raw outputs, sources,
tests and tools name exists (renamed or removed raw outputs leave no dangling
citation). Every HALOX_* name in README.md and docs/*.md (but the dated
history, docs/performance*.md) is a variable of docs/environment.md's
tables or a CMake option or cache variable of the build (a `HALOX_WITH_*`
stands for the names it begins); a variable of its renamed-and-removed
table may be named only with "removed" or "renamed" within 80 characters
of it, in the same paragraph. Usage: doc_links.py ROOT
"""
import glob
import os
import re
import sys

from checks import check, finish
from env_documented import NAME, ROW, split_doc

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
NAMED = re.compile(r"\bdocs/[\w./-]+\.(?:md|txt|csv|png|json|gz)\b")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
SPAN = re.compile(r"`[^`\n]*`")


def links(path):
    """The link targets of a markdown file, code blocks and spans left out."""
    text = SPAN.sub("", FENCE.sub("", open(path, errors="replace").read()))
    return [m.group(1) for m in LINK.finditer(text)]


def env_tables(root):
    """(the variables of docs/environment.md's tables, those of its
    renamed-and-removed table)."""
    parts = split_doc(open(os.path.join(root, "docs", "environment.md")).read())
    if not check(parts is not None, "docs/environment.md has its generated tables"):
        return set(), set()
    kept, gone = parts[2].split("### Renamed")[0], parts[2].split("### Renamed")[-1]
    gone = gone.split("###")[0].splitlines()
    return (set(ROW.findall(parts[1] + kept)),
            {n for line in gone if line.startswith("|") for n in re.findall(NAME, line.split("|")[1])})


def cmake_names(root):
    """The HALOX_* options and cache variables of the build."""
    decl = re.compile(r"\b(?:option|find_program)\(\s*(%s)|\bset\(\s*(%s)\s[^)]*\bCACHE\s+(?!INTERNAL)"
                      % (NAME, NAME))
    names = set()
    paths = [os.path.join(root, "CMakeLists.txt")]
    for top in ("cmake", "src", "tests", "tools"):
        paths += glob.glob(os.path.join(root, top, "**", "*.cmake"), recursive=True)
        paths += glob.glob(os.path.join(root, top, "**", "CMakeLists.txt"), recursive=True)
    for path in paths:
        for m in decl.finditer(open(path, errors="replace").read()):
            names.add(m.group(1) or m.group(2))
    return names


def near(text, start, end, reach=80):
    """The text within reach characters of text[start:end], cut at blank
    lines (the paragraph's ends)."""
    lo = text.rfind("\n\n", max(0, start - reach), start)
    hi = text.find("\n\n", end, end + reach)
    return text[lo + 2 if lo >= 0 else max(0, start - reach):hi if hi >= 0 else end + reach]


def knob_names(root, pages):
    """Checks the HALOX_* names of the pages that describe what halox does
    now (not environment.md, not the dated history); returns how many."""
    known, gone = env_tables(root)
    known |= cmake_names(root)
    check(len(known) >= 20, "the variables and options are found (%d)" % len(known))
    seen = 0
    for page in pages:
        if re.match(r"performance.*\.md$|environment\.md$", os.path.basename(page)):
            continue
        text = open(page, errors="replace").read()
        for m in re.finditer(NAME, text):
            seen += 1
            name = m.group(0)
            where = "%s:%d: %s" % (os.path.relpath(page, root),
                                   text.count("\n", 0, m.start()) + 1, name)
            if text.startswith("_*", m.end()):
                ok, why = any(k.startswith(name + "_") for k in known), "_* names nothing"
            elif name in gone:
                ok = re.search(r"\b(?:removed|renamed)\b", near(text, m.start(), m.end()))
                why = " is renamed or removed (docs/environment.md), named as if it were not"
            else:
                ok, why = name in known, " is not in docs/environment.md's tables nor a CMake option"
            if not ok:
                check(False, where + why)
    check(seen >= 20, "the pages' HALOX_* names are found (%d)" % seen)
    return seen


def relative(target):
    return not re.match(r"^[a-z][a-z0-9+.-]*:|^#", target)


def sources(root):
    """Files that may name docs/...: the docs and raw outputs, sources, tests
    and tools."""
    for top in ("src", "tests", "tools", "bench", "include", "examples"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith((".c", ".h", ".cu", ".cuh", ".py", ".sh", ".cmake", ".txt")):
                    yield os.path.join(d, f)
    yield from glob.glob(os.path.join(root, "*.md"))
    yield from glob.glob(os.path.join(root, "docs", "*.md"))
    yield from glob.glob(os.path.join(root, "docs", "results", "*"))


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    n = 0
    for page in pages:
        for target in filter(relative, links(page)):
            n += 1
            path = os.path.normpath(os.path.join(os.path.dirname(page), target.split("#")[0]))
            check(os.path.exists(path), "%s links to %s" % (os.path.relpath(page, root), target))
    named = 0
    for src in sources(root):
        for name in sorted(set(NAMED.findall(open(src, errors="replace").read()))):
            named += 1
            if not os.path.exists(os.path.join(root, name)):
                check(False, "%s names %s, which does not exist" % (os.path.relpath(src, root), name))
    check(n >= 10, "the scan finds the pages' links (%d)" % n)
    knobs = knob_names(root, pages)
    print("%d links in %d pages, %d docs/ paths named, %d HALOX_* names"
          % (n, len(pages), named, knobs))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
