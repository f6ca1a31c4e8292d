#!/usr/bin/env python3
"""Every relative markdown link in README.md and docs/*.md resolves to a
file of the tree, and every `docs/...` file the docs, raw outputs, sources,
tests and tools name exists (renamed or removed raw outputs leave no dangling
citation). Usage: doc_links.py ROOT
"""
import glob
import os
import re
import sys

from checks import check, finish

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
NAMED = re.compile(r"\bdocs/[\w./-]+\.(?:md|txt|csv|png|json|gz)\b")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
SPAN = re.compile(r"`[^`\n]*`")


def links(path):
    """The link targets of a markdown file, code blocks and spans left out."""
    text = SPAN.sub("", FENCE.sub("", open(path, errors="replace").read()))
    return [m.group(1) for m in LINK.finditer(text)]


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
    print("%d links in %d pages, %d docs/ paths named" % (n, len(pages), named))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
