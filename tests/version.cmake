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
set_tests_properties(test_version test_version_halox-md test_version_halox-bench PROPERTIES
  LABELS cpu TIMEOUT 60)
