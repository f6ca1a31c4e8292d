# Triclinic boxes (LAMMPS's restricted triclinic): pairs by the zone rule,
# halo images and migration across tilted faces, bad tilts and cutoffs.
# CPU only; the GPU comparisons with triclinic cases are in gpu.cmake and
# rebuild.cmake.
hx_test(test_triclinic SOURCES test_triclinic.c LIBS hxsysgen RANKS 1 2 3 4 6 8 LABELS cpu)
