# The full-shell plan (hx_plan_create_full, `newton off`): pairs with a home
# atom exactly once, halo images and zones, the directions' dependencies,
# the cpu transport's forward, the reverse refused. The GPU transports' and
# the device plan's full-shell cases are test_fullshell_gpu (label gpu;
# exits 77 without a GPU).
hx_test(test_fullshell SOURCES test_fullshell.c LIBS hxsysgen RANKS 2 3 4 6 8 LABELS cpu)
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI)
  hx_test(test_fullshell_gpu SOURCES test_fullshell_gpu.c LIBS hxgpucases CUDA::cudart
          RANKS 1 2 4 8 LABELS gpu TIMEOUT 600)
endif()
