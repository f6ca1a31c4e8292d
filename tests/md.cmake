# Tests of the MD engine (src/md) and the halox-md program.
hx_test(test_md_forces SOURCES test_md_forces.c LIBS halox_md RANKS 1 2 4 LABELS cpu TIMEOUT 300)
hx_test(test_md_ranks SOURCES test_md_ranks.c LIBS halox_md RANKS 1 2 3 4 8 LABELS cpu TIMEOUT 300)
hx_test(test_md_energy SOURCES test_md_energy.c LIBS halox_md RANKS 1 2 LABELS cpu TIMEOUT 300)
