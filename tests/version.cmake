# The version: hx_version_string against halox.h and the build, and the
# programs' --version (which answers before MPI starts).
add_executable(test_version test_version.c)
target_link_libraries(test_version PRIVATE hxtest)
target_compile_definitions(test_version PRIVATE HALOX_PROJECT_VERSION="${PROJECT_VERSION}")
add_test(NAME test_version COMMAND test_version)
foreach(prog halox-md halox-bench)
  add_test(NAME test_version_${prog} COMMAND ${prog} --version)
  set_tests_properties(test_version_${prog} PROPERTIES
    PASS_REGULAR_EXPRESSION "^${prog}: halox ${PROJECT_VERSION} \\(git [^,]+, [^)]+\\); transports: cpu")
endforeach()
# halox-bench --list: every transport halox knows, built or with what a
# build needs for it (nccl-dev's line, whichever this build gives).
add_test(NAME test_bench_list COMMAND halox-bench --list)
set_tests_properties(test_bench_list PROPERTIES LABELS cpu TIMEOUT 60
  PASS_REGULAR_EXPRESSION "nccl-dev +(built.+its exchange has not yet run|not built: needs CUDA, NCCL 2.28)")

# halox-bench's options: bad values refused with one line, good ones run.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME test_bench_args
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/bench_args.py
                   --bench $<TARGET_FILE:halox-bench>)
  set_tests_properties(test_bench_args PROPERTIES LABELS cpu TIMEOUT 300)
  hx_test_mpi_env(test_bench_args CPU)
endif()

# hx_init's request for eager CUDA module loading (test_init.c).
add_executable(test_init test_init.c)
target_link_libraries(test_init PRIVATE hxtest)
target_compile_options(test_init PRIVATE $<$<COMPILE_LANGUAGE:C>:${HALOX_C_WARNINGS}>)
add_test(NAME test_init COMMAND test_init)
set_tests_properties(test_version test_version_halox-md test_version_halox-bench test_init
  PROPERTIES LABELS cpu TIMEOUT 60)
hx_test_mpi_env(test_init CPU)

# The exports of a shared libhalox: exactly the HX_API functions of halox.h.
get_target_property(_halox_type halox TYPE)
if(Python3_Interpreter_FOUND AND CMAKE_NM AND _halox_type STREQUAL "SHARED_LIBRARY")
  add_test(NAME test_exports
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/exports.py
                   ${PROJECT_SOURCE_DIR}/include/halox.h $<TARGET_FILE:halox> ${CMAKE_NM})
  set_tests_properties(test_exports PROPERTIES LABELS cpu TIMEOUT 60)
endif()
