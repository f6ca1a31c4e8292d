# Triclinic boxes (LAMMPS's restricted triclinic): pairs by the zone rule,
# halo images and migration across tilted faces, bad tilts and cutoffs.
# The GPU transports' and the device plan's triclinic cases are in
# test_gpu_exchange and test_dplan (gpu.cmake, rebuild.cmake).
hx_test(test_triclinic SOURCES test_triclinic.c LIBS hxzonecheck RANKS 1 2 3 4 6 8 LABELS cpu)
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI)
  # Device migration across tilted faces, and the device plan on its
  # result (label gpu; exits 77 without a GPU).
  hx_test(test_triclinic_gpu SOURCES test_triclinic_gpu.c LIBS hxsysgen CUDA::cudart
          RANKS 1 2 4 8 LABELS gpu TIMEOUT 600)
endif()
