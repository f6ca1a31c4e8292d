# GPU transport tests (label gpu): compiled wherever CUDA is; without a GPU
# they exit 77 (skipped) and say why.
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI)
  # Grids, boxes and the walk over plans that the GPU transport tests share.
  add_library(hxgpucases STATIC gpucases.c)
  target_link_libraries(hxgpucases PUBLIC hxsysgen CUDA::cudart)
  target_compile_options(hxgpucases PRIVATE ${HALOX_C_WARNINGS})
  hx_test(test_gpu_exchange SOURCES test_gpu_exchange.c LIBS hxgpucases RANKS 2 4 8
          LABELS gpu TIMEOUT 600)
  # hx_transport_vote of every transport that has it, against the OR on
  # the host; a vote one rank sits out times out with a clear error.
  hx_test(test_vote SOURCES test_vote.c LIBS hxsysgen CUDA::cudart RANKS 2 4
          LABELS gpu TIMEOUT 300)
  hx_test(test_gpu_timeout SOURCES test_gpu_timeout.c LIBS hxsysgen RANKS 2 4
          LABELS gpu TIMEOUT 300)
endif()
