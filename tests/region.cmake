# LAMMPS's create_atoms T region ID in halox-md (CPU engine;
# tests/region_cases.py): a slab, a block and two types in two regions
# against LAMMPS's `lmp` at 1 to 3 ranks (a rank empty at the start),
# the slab balanced at 2 to 4 and 8 ranks, bad input refused, and the slab's
# restart file continued.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND HALOX_HAVE_MPI)
  # The launcher as md.cmake gives it (this file is read before md.cmake).
  string(REPLACE ";" " " hx_reg_flags "${HALOX_MPIEXEC_FLAGS}")
  foreach(part lammps balance bad restart)
    add_test(NAME test_region_${part}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/region_cases.py
                     --part ${part} --halox $<TARGET_FILE:halox-md>
                     --mpiexec ${MPIEXEC_EXECUTABLE} "--mpiflags=${hx_reg_flags}")
    set_tests_properties(test_region_${part} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED"
                         LABELS cpu TIMEOUT 600 PROCESSORS 4)
    hx_test_mpi_env(test_region_${part} CPU)
  endforeach()
  set_tests_properties(test_region_lammps test_region_balance PROPERTIES LABELS lammps)
endif()
