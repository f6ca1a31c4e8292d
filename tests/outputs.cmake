# What halox-md and halox-bench write over (outputs_cases.py): a device
# node or a FIFO named as an output stays one, a symbolic link's target is
# written, a directory is refused, a write error (/dev/full) is a non-zero
# exit, and options that would write nothing are refused.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND TARGET halox-md AND TARGET halox-bench)
  add_test(NAME test_outputs
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/outputs_cases.py
                   --halox $<TARGET_FILE:halox-md> --bench $<TARGET_FILE:halox-bench>)
  set_tests_properties(test_outputs PROPERTIES LABELS cpu TIMEOUT 180)
  hx_test_mpi_env(test_outputs CPU)
endif()
