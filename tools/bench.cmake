add_executable(halox-bench ${CMAKE_CURRENT_LIST_DIR}/halox-bench.c
                           ${CMAKE_CURRENT_LIST_DIR}/bench_options.c
                           ${CMAKE_CURRENT_LIST_DIR}/bench_field.c
                           ${CMAKE_CURRENT_LIST_DIR}/bench_floor.c)
target_link_libraries(halox-bench PRIVATE halox_internal m)
target_include_directories(halox-bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_options(halox-bench PRIVATE ${HALOX_C_WARNINGS})
if(HALOX_HAVE_CUDA)
  # --field allocates its device array itself.
  target_link_libraries(halox-bench PRIVATE CUDA::cudart)
endif()
# halox-bench md runs bench/md_bench.py: from the source tree, or, once
# installed, from <prefix>/share/halox next to the program's bin.
target_compile_definitions(halox-bench PRIVATE
  HALOX_BENCH_MD_SCRIPT="${PROJECT_SOURCE_DIR}/bench/md_bench.py"
  HALOX_BENCH_MD_SCRIPT_INSTALLED="../${CMAKE_INSTALL_DATADIR}/halox/md_bench.py")
if(HALOX_HAVE_NVSHMEM)
  # halox-bench pingpong and --floor use the fused transports' probe.
  target_compile_definitions(halox-bench PRIVATE HALOX_HAVE_NVSHMEM)
endif()
