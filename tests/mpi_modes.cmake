# The `mpi` transport in each mode (staged, ipc, cuda-aware where MPI has
# CUDA support) against cpu, and mode selection (label gpu): compiled
# wherever CUDA and MPI are; without a GPU it exits 77 and says why.
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI)
  hx_test(test_gpu_mpi_modes SOURCES test_gpu_mpi_modes.c LIBS hxgpucases RANKS 2 4 8
          LABELS gpu TIMEOUT 300)
endif()
