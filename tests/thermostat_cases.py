#!/usr/bin/env python3
"""fix langevin in halox-md (CPU engine), end to end.

LAMMPS draws fix langevin's noise from one random stream per process, so
its trajectories change with the process count and cannot be matched atom
for atom; halox-md hashes the noise from the seed, the atom id and the step.
What must hold:
  - the temperature: over 20,000 steps of 256 atoms at T 1.0 (after 2,000
    to settle), the mean of the thermo temperature is within 3 standard
    errors (block averages, 20 blocks) of what the Langevin equation
    gives: every one of the 3N degrees of freedom at T, the centre of mass
    included (fix langevin zero no), so sum m v^2 / (3N - 3), the thermo
    temperature, averages T 3N / (3N - 3);
  - decomposition: the thermo rows on 1 and 2 ranks agree within
    lammps_match.py's bound over the first 1,000 steps (the forces differ
    in the order of their sums, by ulps, and the liquid is chaotic: later
    rows part, as in fix nve), while another seed parts at once;
  - a ramp: fix langevin 1.0 2.0 ends near 2.0.

Exits 0 when all hold (tests/checks.py counts the checks).
"""
import math
import os
import subprocess
import sys
import tempfile

from checks import check, finish, md_parser, thermo_rows

TOL = 1e-6
DECK = """units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 1.0 4928459 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify every 1 delay 0 check yes
fix 1 all nve
fix 2 all langevin {t0} {t1} 0.5 {seed}
thermo_style custom step temp pe etotal press atoms
thermo 100
run {steps}
"""


def rows(text):
    """The thermo rows as lists of numbers."""
    return [[float(x) for x in r] for r in thermo_rows(text)]


def main():
    a = md_parser(__doc__.split("\n\n")[0]).parse_args()

    def run(n, tmp, **kw):
        path = os.path.join(tmp, "in.langevin")
        with open(path, "w") as f:
            f.write(DECK.format(**kw))
        cmd = [a.halox, "-in", path, "--cpu"]
        if a.mpiexec:
            cmd = [a.mpiexec, "-n", str(n)] + a.mpiflags.split() + cmd
        p = subprocess.run(cmd, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=300)
        if p.returncode != 0:
            raise RuntimeError("%s failed (%d):\n%s" % (" ".join(cmd), p.returncode,
                                                        p.stdout[-2000:]))
        return rows(p.stdout)

    with tempfile.TemporaryDirectory(prefix="halox-langevin-") as tmp:
        one = run(1, tmp, t0=1.0, t1=1.0, seed=48279, steps=20000)
        natoms = one[0][5]
        temps = [r[1] for r in one if r[0] > 2000]
        nb = 20
        size = len(temps) // nb
        blocks = [sum(temps[i * size:(i + 1) * size]) / size for i in range(nb)]
        mean = sum(blocks) / nb
        sd = math.sqrt(sum((b - mean) ** 2 for b in blocks) / (nb - 1))
        se = sd / math.sqrt(nb)
        want = 1.0 * 3 * natoms / (3 * natoms - 3)
        check(abs(mean - want) < 3 * se and se < 0.02,
              "fix langevin 1.0: mean temperature %.5f over %d rows within 3 standard errors "
              "(%.5f) of %.5f" % (mean, len(temps), se, want))

        if a.mpiexec:
            two = run(2, tmp, t0=1.0, t1=1.0, seed=48279, steps=1000)
            worst = 0.0
            for r1, r2 in zip(one[:11], two):
                for x, y in zip(r1[1:], r2[1:]):
                    worst = max(worst, abs(x - y) / max(abs(x), abs(y), 1.0))
            check(len(two) == 11 and worst <= TOL,
                  "1 vs 2 ranks, steps 0-1000: %d rows, largest difference %.2e (bound %.0e)"
                  % (len(two), worst, TOL))
        other = run(1, tmp, t0=1.0, t1=1.0, seed=48280, steps=100)
        check(abs(other[1][1] - one[1][1]) > 1e-3,
              "another seed: T %r at step 100, not %r" % (other[1][1], one[1][1]))

        ramp = run(1, tmp, t0=1.0, t1=2.0, seed=7, steps=4000)
        end = sum(r[1] for r in ramp[-10:]) / 10
        check(1.7 < end < 2.2, "fix langevin 1.0 2.0: the last 10 rows average %.4f" % end)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
