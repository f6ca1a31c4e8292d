"""The drifting slab (tests/balance_decks/in.slab at n 8 with `velocity
all set NULL NULL 2.0 sum yes`): the liquid moves up the box along z, so
on uniform domains the lower rank empties mid-run and the upper ones
fill; under fix balance the cuts follow it. Shared by balance_cases.py
(against LAMMPS) and md_gpu_balance.py (GPU engine against CPU engine).
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 1000
DUMP = "d.atom"


def deck(procs, fix, dump_every=100):
    """The deck on `processors procs` (thresh 1e9: the balance never
    acts), lists every 5 steps (the drift moves an atom 0.08 sigma in 5
    steps, half the skin with the thermal motion), a dump every
    dump_every steps (id type xs ys zs; 5: after every rebuild), fix
    balance every 100 steps where fix."""
    with open(os.path.join(HERE, "balance_decks", "in.slab")) as f:
        text = f.read()
    text = text.replace("variable n index 20", "variable n index 8")
    text = text.replace("variable thresh index 1.0", "variable thresh index 1e9")
    text = text.replace("processors 1 1 *", "processors %s" % procs)
    text = re.sub(r"(?m)^(velocity all create .*)$",
                  r"\1\nvelocity all set NULL NULL 2.0 sum yes", text)
    text = re.sub(r"neigh_modify every \d+", "neigh_modify every 5", text)
    extra = "fix lb all balance 100 1.0 shift z 10 1.05\n" if fix else ""
    return re.sub(r"(?m)^run \d+$",
                  "%sdump d all atom %d %s\nrun %d" % (extra, dump_every, DUMP, STEPS), text)


def frames(path, n):
    """The dump's frames as (step, atoms per z-domain of n uniform ones,
    ids 1..N each once)."""
    out = []
    with open(path) as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].startswith("ITEM: TIMESTEP"):
            i += 1
            continue
        step, na = int(lines[i + 1]), int(lines[i + 3])
        count, ids = [0] * n, []
        for row in lines[i + 9:i + 9 + na]:
            w = row.split()
            ids.append(int(w[0]))
            z = float(w[4]) % 1.0
            count[min(int(z * n), n - 1)] += 1
        out.append((step, count, sorted(ids) == list(range(1, na + 1))))
        i += 9 + na
    return out


def emptied(fr):
    """Whether domain 0 owned atoms at the first frame and none at the
    last, and the top domain none at the first and some at the last."""
    return (len(fr) >= 2 and fr[0][1][0] > 0 and fr[-1][1][0] == 0 and fr[0][1][-1] == 0 and
            fr[-1][1][-1] > 0)
