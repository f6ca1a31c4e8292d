# The device rebuild (label gpu): the plan built on the device against the
# host plan. Compiled wherever CUDA and MPI are; without a GPU it exits 77
# (skipped) and says why. 8 ranks on fewer GPUs need MPS (see
# tools/device-all.sh).
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI)
  hx_test(test_dplan SOURCES test_dplan.c LIBS hxgpucases RANKS 2 4 8 LABELS gpu TIMEOUT 600)
endif()
