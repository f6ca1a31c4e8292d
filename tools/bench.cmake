add_executable(halox-bench ${CMAKE_CURRENT_LIST_DIR}/halox-bench.c)
target_link_libraries(halox-bench PRIVATE halox m)
target_include_directories(halox-bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_options(halox-bench PRIVATE ${HALOX_C_WARNINGS})
