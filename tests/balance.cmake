# LAMMPS's balance and fix balance in halox-md (CPU engine;
# tests/balance_cases.py): the balance reports and thermo rows against
# LAMMPS's `lmp` at 2, 3 and 4 ranks, fix balance against the run without
# it, and bad input refused without a hang.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND HALOX_HAVE_MPI)
  # The launcher as md.cmake gives it (this file is read before md.cmake).
  string(REPLACE ";" " " hx_bal_flags "${HALOX_MPIEXEC_FLAGS}")
  foreach(part lammps md bad)
    add_test(NAME test_balance_${part}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/balance_cases.py
                     --part ${part} --halox $<TARGET_FILE:halox-md>
                     --mpiexec ${MPIEXEC_EXECUTABLE} "--mpiflags=${hx_bal_flags}")
    set_tests_properties(test_balance_${part} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED"
                         LABELS cpu TIMEOUT 600 PROCESSORS 4)
    hx_test_mpi_env(test_balance_${part} CPU)
  endforeach()
  set_tests_properties(test_balance_lammps PROPERTIES LABELS lammps)
endif()
