# cmake --install: libhalox (shared or static), include/halox.h, halox-md,
# halox-bench with its scripts, the docs; a CMake package (halox::halox,
# find_package(halox 0.2)) and halox.pc for pkg-config.
include(CMakePackageConfigHelpers)

set(HALOX_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/halox)
install(TARGETS halox EXPORT haloxTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT haloxTargets NAMESPACE halox:: DESTINATION ${HALOX_CMAKE_DIR})

# The programs find libhalox next to them, wherever the prefix goes.
set_target_properties(halox-md halox-bench PROPERTIES
  INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${HALOX_NVSHMEM_LIBDIR}")
install(TARGETS halox-md halox-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/bench/md_bench.py ${PROJECT_SOURCE_DIR}/bench/plot_md.py
        DESTINATION ${CMAKE_INSTALL_DATADIR}/halox)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png")

# What the package tells a consumer about this build.
set(HALOX_TRANSPORTS cpu)
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI)
  list(APPEND HALOX_TRANSPORTS mpi)
endif()
if(HALOX_HAVE_NCCL)
  list(APPEND HALOX_TRANSPORTS nccl)
endif()
if(HALOX_HAVE_NVSHMEM)
  list(APPEND HALOX_TRANSPORTS nvshmem-stream nvshmem-pulse nvshmem-fused nvshmem-fused-tma)
endif()
list(APPEND HALOX_TRANSPORTS auto)
foreach(dep MPI CUDA NCCL NVSHMEM)
  if(HALOX_HAVE_${dep})
    set(HALOX_PKG_HAVE_${dep} ON)
  else()
    set(HALOX_PKG_HAVE_${dep} OFF)
  endif()
endforeach()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/haloxConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/haloxConfig.cmake
                              INSTALL_DESTINATION ${HALOX_CMAKE_DIR})
# 0.x: a minor version may change the API, so only the same minor matches.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/haloxConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/haloxConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/haloxConfigVersion.cmake
        DESTINATION ${HALOX_CMAKE_DIR})

# pkg-config: Libs.private and Requires.private carry what a static
# libhalox needs from its dependencies (a shared one needs nothing more).
set(_private "-lm")
if(HALOX_HAVE_MPI)
  foreach(_l ${MPI_C_LIBRARIES})
    string(APPEND _private " ${_l}")
  endforeach()
endif()
if(HALOX_HAVE_CUDA)
  string(APPEND _private " -L${CUDAToolkit_LIBRARY_DIR} -lcudart -lcuda -lstdc++ -ldl -lpthread -lrt")
endif()
if(HALOX_HAVE_NCCL)
  string(APPEND _private " ${HALOX_NCCL_LIBRARY}")
endif()
if(HALOX_HAVE_NVSHMEM)
  # The host library is shared and usually outside the loader's path (a
  # Python wheel's lib/, say): the program gets its folder as an rpath.
  string(APPEND _private " ${HALOX_NVSHMEM_DEVICE} ${HALOX_NVSHMEM_HOST} -Wl,-rpath,${HALOX_NVSHMEM_LIBDIR}")
endif()
set(HALOX_PC_LIBS_PRIVATE "${_private}")
set(HALOX_PC_CFLAGS_MPI "")
if(HALOX_HAVE_MPI)
  foreach(_d ${MPI_C_INCLUDE_DIRS})
    string(APPEND HALOX_PC_CFLAGS_MPI " -I${_d}")
  endforeach()
endif()
# The prefix is found from where halox.pc lies, so that an install with
# --prefix (or a moved prefix) still describes itself.
set(HALOX_PC_UP "")
string(REPLACE "/" ";" _parts "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
foreach(_p ${_parts})
  string(APPEND HALOX_PC_UP "../")
endforeach()
string(REGEX REPLACE "/$" "" HALOX_PC_UP "${HALOX_PC_UP}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/halox.pc.in ${CMAKE_CURRENT_BINARY_DIR}/halox.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/halox.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
