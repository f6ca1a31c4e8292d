# Runs that cannot go on end loudly (tests/robust_cases.py): a stopped peer
# is a named timeout within HALOX_TIMEOUT_S, not a hang; a system that blew
# up is an error naming the step, not rows of nan and exit 0. Reuses
# md.cmake's launcher (hx_py_launch: included before this file).
if(Python3_Interpreter_FOUND)
  add_test(NAME test_robust
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/robust_cases.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  set_tests_properties(test_robust PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED"
                       LABELS cpu TIMEOUT 120 PROCESSORS 2)
endif()
if(TEST test_robust)
  hx_test_mpi_env(test_robust CPU)
endif()
