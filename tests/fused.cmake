# Tests of the nvshmem-fused and nvshmem-fused-tma transports (label gpu):
# compiled wherever CUDA, MPI and NVSHMEM are; without a GPU they exit 77
# (skipped) and say why. Several processes on one GPU need MPS (the
# transports refuse a shared GPU without it).
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI AND (HALOX_HAVE_NVSHMEM OR HALOX_HAVE_NCCL_DEVICE))
  add_library(hxfused STATIC fused_util.c)
  target_link_libraries(hxfused PUBLIC hxsysgen CUDA::cudart)
  target_compile_options(hxfused PRIVATE ${HALOX_C_WARNINGS})
  add_executable(test_fused_exchange test_fused_exchange.c)
  target_link_libraries(test_fused_exchange PRIVATE hxfused)
  target_compile_options(test_fused_exchange PRIVATE ${HALOX_C_WARNINGS})
endif()
# nccl-dev: its exchange against cpu (one GPU per rank; where ranks share a
# GPU, NCCL's refusal makes it skip and say so), and its set-up and refusal.
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI AND HALOX_HAVE_NCCL_DEVICE)
  foreach(n 2 4)
    add_test(NAME test_ncd_exchange_np${n}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${HALOX_MPIEXEC_FLAGS}
                     $<TARGET_FILE:test_fused_exchange> --transport nccl-dev)
    set_tests_properties(test_ncd_exchange_np${n} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
                         LABELS gpu PROCESSORS ${n})
    hx_test_mpi_env(test_ncd_exchange_np${n} QUICK_END)
  endforeach()
  hx_test(test_nccl_dev SOURCES test_nccl_dev.c LIBS hxsysgen CUDA::cudart RANKS 1 2
          LABELS gpu TIMEOUT 120)
endif()
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI AND HALOX_HAVE_NVSHMEM)
  foreach(n 2 4 8)
    add_test(NAME test_fused_exchange_np${n}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${HALOX_MPIEXEC_FLAGS}
                     $<TARGET_FILE:test_fused_exchange>)
    set_tests_properties(test_fused_exchange_np${n} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
                         LABELS gpu PROCESSORS ${n})
    hx_test_mpi_env(test_fused_exchange_np${n} QUICK_END)
  endforeach()
  hx_test(test_fused_graph SOURCES test_fused_graph.c LIBS hxfused RANKS 2 4 8
          LABELS gpu TIMEOUT 300)
  hx_test(test_fused_stress SOURCES test_fused_stress.c LIBS hxfused RANKS 2 4 8
          LABELS gpu ARGS --cases 200 TIMEOUT 600)
endif()
