# The HALOX_* environment variables (src/core/knobs.def): the library's
# reading of them (test_knobs.c), and every variable given bad values
# through halox-md and halox-bench (knobs_bad.py: each must stop the run
# before it starts, with one error naming it).
hx_test(test_knobs SOURCES test_knobs.c RANKS 1 2 LABELS cpu TIMEOUT 60)
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND TARGET halox-md AND TARGET halox-bench)
  add_test(NAME test_knobs_bad
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/knobs_bad.py
                   --halox $<TARGET_FILE:halox-md> --bench $<TARGET_FILE:halox-bench>)
  set_tests_properties(test_knobs_bad PROPERTIES LABELS cpu TIMEOUT 60)
  hx_test_mpi_env(test_knobs_bad CPU)
endif()
