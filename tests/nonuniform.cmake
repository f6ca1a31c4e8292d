# Non-uniform domains (hx_decomp_set_cuts): random cuts on every grid of
# the rank count, orthorhombic and triclinic, pairs by the zone rule
# against brute force, the cpu transport, migration, cuts changed mid-run,
# ranks that disagree, bad cuts; LAMMPS's balance shift (hx_balance_shift)
# against a transcription of LAMMPS's. The GPU transports, the device plan
# and device migration on such cuts are test_nonuniform_gpu.
add_library(hxzonecheck STATIC zone_check.c)
target_link_libraries(hxzonecheck PUBLIC hxsysgen)
target_compile_options(hxzonecheck PRIVATE $<$<COMPILE_LANGUAGE:C>:${HALOX_C_WARNINGS}>)
hx_test(test_nonuniform SOURCES test_nonuniform.c nonuniform_balance.c LIBS hxzonecheck
        RANKS 1 2 3 4 6 8 LABELS cpu)
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI)
  # Every GPU transport against cpu through changes of cuts and pulse
  # counts, the device plan against the host plan, device migration to
  # nudged cuts (label gpu; exits 77 without a GPU).
  hx_test(test_nonuniform_gpu SOURCES test_nonuniform_gpu.c LIBS hxzonecheck hxgpucases
          RANKS 2 4 8 LABELS gpu TIMEOUT 600)
endif()
