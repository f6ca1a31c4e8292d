# What a user gives halox-md (tests/input_safety_cases.py): decks with a
# byte-order mark or CR line endings, options that contradict each other
# or that a restart would ignore, a tiny cutoff, and a blow-up told as
# physics. One rank: these are about reading input, not about ranks.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND TARGET halox-md)
  add_test(NAME test_input_safety
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/input_safety_cases.py
                   --halox $<TARGET_FILE:halox-md>
                   --deck ${CMAKE_CURRENT_SOURCE_DIR}/decks/in.lj)
  set_tests_properties(test_input_safety PROPERTIES LABELS cpu TIMEOUT 180)
  hx_test_mpi_env(test_input_safety CPU QUICK_END)
endif()
