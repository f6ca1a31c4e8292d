# LAMMPS's balance and fix balance in halox-md (tests/balance_cases.py,
# the CPU engine; md_gpu_balance.py, the GPU engine): the balance reports and thermo rows against
# LAMMPS's `lmp` at 2, 3 and 4 ranks, fix balance against the run without
# it, and bad input refused without a hang.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND HALOX_HAVE_MPI)
  # The launcher as md.cmake gives it (this file is read before md.cmake).
  string(REPLACE ";" " " hx_bal_flags "${HALOX_MPIEXEC_FLAGS}")
  foreach(part lammps md drift bad)
    add_test(NAME test_balance_${part}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/balance_cases.py
                     --part ${part} --halox $<TARGET_FILE:halox-md>
                     --mpiexec ${MPIEXEC_EXECUTABLE} "--mpiflags=${hx_bal_flags}")
    set_tests_properties(test_balance_${part} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED"
                         LABELS cpu TIMEOUT 600 PROCESSORS 4)
    hx_test_mpi_env(test_balance_${part} CPU)
  endforeach()
  set_tests_properties(test_balance_lammps test_balance_drift PROPERTIES LABELS lammps)
  # balance and fix balance on the GPU engine (tests/md_gpu_balance.py,
  # label gpu): the balanced slab at 2 ranks, fix balance at 2, 3 and 4
  # and the pulse count changing under it on every GPU transport, against
  # the CPU engine. Without a GPU it exits 77 (skipped).
  if(HALOX_HAVE_CUDA AND EXISTS ${PROJECT_SOURCE_DIR}/src/md/gpu/engine.c)
    add_test(NAME test_md_gpu_balance
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md_gpu_balance.py
                     --halox $<TARGET_FILE:halox-md> --mpiexec ${MPIEXEC_EXECUTABLE}
                     "--mpiflags=${hx_bal_flags}")
    set_tests_properties(test_md_gpu_balance PROPERTIES SKIP_RETURN_CODE 77 LABELS gpu
                         TIMEOUT 600 PROCESSORS 4)
    hx_test_mpi_env(test_md_gpu_balance)
  endif()
endif()
