# halox-bench --newton (tests/bench_newton.py): the exchange benchmark with
# the eighth-shell plan (forward + reverse) and the full-shell one (forward
# alone) side by side on the cpu transport, at 1 and 2 ranks; halox-bench
# md --cpu --newton on,off and its report of a CSV without the column.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND TARGET halox-bench AND TARGET halox-md)
  set(hx_bn_launch)
  if(HALOX_HAVE_MPI)
    # The launcher as md.cmake gives it (this file is read before md.cmake).
    string(REPLACE ";" " " hx_bn_flags "${HALOX_MPIEXEC_FLAGS}")
    set(hx_bn_launch --mpiexec ${MPIEXEC_EXECUTABLE} "--mpiflags=${hx_bn_flags}")
  endif()
  add_test(NAME test_bench_newton
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/bench_newton.py
                   --bench $<TARGET_FILE:halox-bench> --halox $<TARGET_FILE:halox-md>
                   ${hx_bn_launch})
  set_tests_properties(test_bench_newton PROPERTIES LABELS cpu TIMEOUT 300 PROCESSORS 2)
  hx_test_mpi_env(test_bench_newton CPU)
endif()
