# GPU transport tests (label gpu): compiled wherever CUDA is; without a GPU
# they exit 77 (skipped) and say why.
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI)
  hx_test(test_gpu_exchange SOURCES test_gpu_exchange.c LIBS hxsysgen RANKS 2 4 8
          LABELS gpu TIMEOUT 600)
  hx_test(test_gpu_timeout SOURCES test_gpu_timeout.c LIBS hxsysgen RANKS 2 4
          LABELS gpu TIMEOUT 300)
endif()
