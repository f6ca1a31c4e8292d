# Neighbour lists that lost pairs (tests/danger_cases.py): a run whose
# lists lost more than 1 in 1,000 of the pairs within the cutoff ends with
# one error naming the step, not with wrong forces and exit 0; LAMMPS's
# LJ melt runs to the end and prints its dangerous-build line; 1, 2 and 3
# ranks count the same pairs. Deferred to the end of this directory: it
# reuses md.cmake's launcher (hx_py_launch), which comes after this file.
function(hx_danger_tests)
  if(NOT Python3_Interpreter_FOUND)
    return()
  endif()
  add_test(NAME test_md_danger
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/danger_cases.py
                   --halox $<TARGET_FILE:halox-md>
                   --lj ${CMAKE_CURRENT_SOURCE_DIR}/decks/in.lj ${hx_py_launch})
  set_tests_properties(test_md_danger PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED"
                       LABELS cpu TIMEOUT 300 PROCESSORS 3)
  hx_test_mpi_env(test_md_danger CPU)
endfunction()
cmake_language(DEFER CALL hx_danger_tests)
