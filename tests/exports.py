"""libhalox exports exactly what include/halox.h declares HX_API: every
declared function is a defined dynamic symbol of the shared library, and
the library defines no other (no internal hxi_* function, nothing of the
static libraries linked into it).
    exports.py HALOX_H LIBHALOX_SO [NM]"""
import re
import subprocess
import sys

from checks import check, finish


def main():
    header, lib = sys.argv[1], sys.argv[2]
    nm = sys.argv[3] if len(sys.argv) > 3 else "nm"
    with open(header) as f:
        text = f.read()
    declared = set(re.findall(r"^HX_API\b[^(;]*?\b(hx_\w+)\s*\(", text, re.M))
    out = subprocess.run([nm, "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    # Lines are "ADDRESS TYPE NAME"; versioned names carry "@...".
    exported = {ln.split()[-1].split("@")[0] for ln in out.splitlines() if len(ln.split()) >= 3}
    check(len(declared) > 40, "halox.h declares %d HX_API functions" % len(declared))
    missing = sorted(declared - exported)
    check(not missing, "every HX_API function is exported (missing: %s)" % " ".join(missing[:10]))
    extra = sorted(exported - declared)
    check(not extra, "nothing else is exported (%d others: %s)" % (len(extra), " ".join(extra[:10])))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
