# Tests of the nvshmem-fused and nvshmem-fused-tma transports (label gpu):
# compiled wherever CUDA, MPI and NVSHMEM are; without a GPU they exit 77
# (skipped) and say why. Several processes on one GPU need MPS (the
# transports refuse a shared GPU without it).
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI AND HALOX_HAVE_NVSHMEM)
  hx_test(test_fused_exchange SOURCES test_fused_exchange.c LIBS hxsysgen RANKS 2 4 8
          LABELS gpu TIMEOUT 600)
  hx_test(test_fused_graph SOURCES test_fused_graph.c LIBS hxsysgen RANKS 2 4 8
          LABELS gpu TIMEOUT 300)
  hx_test(test_fused_stress SOURCES test_fused_stress.c LIBS hxsysgen RANKS 2 4 8
          LABELS gpu ARGS --cases 200 TIMEOUT 600)
endif()
