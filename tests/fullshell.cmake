# The full-shell plan (hx_plan_create_full, `newton off`): pairs with a home
# atom exactly once, halo images and zones, the directions' dependencies,
# the cpu transport's forward, the reverse refused.
hx_test(test_fullshell SOURCES test_fullshell.c LIBS hxsysgen RANKS 1 2 3 4 6 8 LABELS cpu)
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI)
  # Label gpu; each exits 77 without a GPU. Every GPU transport's forward
  # on full-shell host plans against the cpu transport's, bitwise, and its
  # reverse refused (test_gpu_exchange --full); the device plan
  # (hx_plan_create_device_full) against the host plan, and every device
  # transport on it (test_dplan --full).
  hx_test(test_fullshell_gpu SOURCES test_gpu_exchange.c LIBS hxgpucases ARGS --full
          RANKS 2 4 8 LABELS gpu TIMEOUT 600)
  hx_test(test_fullshell_dplan SOURCES test_dplan.c LIBS hxgpucases ARGS --full
          RANKS 2 4 8 LABELS gpu TIMEOUT 600)
endif()
