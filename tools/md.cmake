# halox-md: the Lennard-Jones MD program (driver in src/md/run.c).
add_executable(halox-md ${CMAKE_CURRENT_LIST_DIR}/halox-md.c)
target_link_libraries(halox-md PRIVATE halox_md)
target_compile_options(halox-md PRIVATE ${HALOX_C_WARNINGS})
