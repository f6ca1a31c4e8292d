# Core tests (decomp, plan, migrate, cpu transport, bad input): CPU only.
# Each grid of a test runs at the rank counts whose product it is (see
# sysgen.c); 6 and 8 ranks bring grids with 3 and 4 pulses along a dimension.
add_library(hxsysgen STATIC sysgen.c oracle.c)
target_link_libraries(hxsysgen PUBLIC hxtest)
target_compile_options(hxsysgen PRIVATE $<$<COMPILE_LANGUAGE:C>:${HALOX_C_WARNINGS}>)

hx_test(test_decomp SOURCES test_decomp.c LIBS hxsysgen RANKS 1 LABELS cpu)
hx_test(test_node_map SOURCES test_node_map.c RANKS 1 2 4 LABELS cpu)
hx_test(test_halo SOURCES test_halo.c LIBS hxsysgen RANKS 1 2 3 4 6 8 LABELS cpu)
hx_test(test_pairs SOURCES test_pairs.c LIBS hxsysgen RANKS 1 2 3 4 6 8 LABELS cpu)
hx_test(test_reverse SOURCES test_reverse.c LIBS hxsysgen RANKS 1 2 3 4 6 8 LABELS cpu)
hx_test(test_migrate SOURCES test_migrate.c LIBS hxsysgen RANKS 1 2 3 4 6 8 LABELS cpu)
hx_test(test_badinput SOURCES test_badinput.c LIBS hxsysgen RANKS 1 2 3 4 LABELS cpu)
# One rank alone gives bad coordinates: every rank must fail, none may hang.
hx_test(test_badinput_onebad SOURCES test_badinput.c LIBS hxsysgen RANKS 2 3 4 LABELS cpu
        ARGS --one-bad-rank TIMEOUT 60)
