# Tests of the device rebuild (src/rebuild/) and of the plan summaries it
# relies on. test_plan_summary is a core test (CPU only); test_dmigrate
# needs a GPU (label gpu) and exits 77 (skipped) without one.
hx_test(test_plan_summary SOURCES test_plan_summary.c LIBS hxsysgen RANKS 1 2 3 4 8 LABELS cpu)
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI)
  # Migration of device arrays against hx_migrate, on every grid of the
  # rank count; --transport NAME picks the transport (default: the first
  # of nvshmem-fused, mpi, nccl that can be created). dmigrate_util.c holds
  # its fixture: the context, the device arrays, the check against hx_migrate.
  # (Not at 3 ranks: 3 processes on 2 GPUs under MPS ran past 400 s in
  # test_dplan as in test_auto, an issue of its own.)
  hx_test(test_dmigrate SOURCES test_dmigrate.c dmigrate_util.c LIBS hxgpucases CUDA::cudart
          RANKS 1 2 4 8 LABELS gpu TIMEOUT 600)
  # 1,100,000 atoms a rank: more blocks (4,297) than one pass of the scan
  # of the class counts takes (16 x 256), so its carry between passes runs.
  hx_test(test_dmigrate_big SOURCES test_dmigrate.c dmigrate_util.c LIBS hxgpucases CUDA::cudart
          RANKS 2 LABELS gpu ARGS --atoms 1100000 --grid 1x1x2 TIMEOUT 600)
  # The plan built on the device against the host plan.
  hx_test(test_dplan SOURCES test_dplan.c LIBS hxgpucases RANKS 2 4 8 LABELS gpu TIMEOUT 600)
endif()
