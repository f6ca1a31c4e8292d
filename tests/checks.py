"""What the end-to-end test scripts of tests/ share: named checks that are
counted, and the exit status they give (imported from the scripts' own
folder)."""

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
