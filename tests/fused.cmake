# Tests of the nvshmem-fused and nvshmem-fused-tma transports (label gpu):
# compiled wherever CUDA, MPI and NVSHMEM are; without a GPU they exit 77
# (skipped) and say why. Several processes on one GPU need MPS (the
# transports refuse a shared GPU without it).
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI AND HALOX_HAVE_NVSHMEM)
  add_library(hxfused STATIC fused_util.c)
  target_link_libraries(hxfused PUBLIC hxsysgen CUDA::cudart)
  target_compile_options(hxfused PRIVATE ${HALOX_C_WARNINGS})
  hx_test(test_fused_exchange SOURCES test_fused_exchange.c LIBS hxfused RANKS 2 4 8
          LABELS gpu TIMEOUT 600)
  hx_test(test_fused_graph SOURCES test_fused_graph.c LIBS hxfused RANKS 2 4 8
          LABELS gpu TIMEOUT 300)
  hx_test(test_fused_stress SOURCES test_fused_stress.c LIBS hxfused RANKS 2 4 8
          LABELS gpu ARGS --cases 200 TIMEOUT 600)
endif()
