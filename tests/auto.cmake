# The auto transport against the cpu reference (falls back to cpu without a GPU).
hx_test(test_auto SOURCES test_auto.c RANKS 1 2 3 4 LIBS hxsysgen)
