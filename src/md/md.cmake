# halox_md: the Lennard-Jones engine of halox-md, a static library on top of
# libhalox. Sources are globbed with CONFIGURE_DEPENDS so that files added
# later join the build without editing this file. The driver is in md/, the
# CPU engine in cpu/; the GPU engine (gpu/*.c, gpu/*.cu) is built only with
# CUDA.
file(GLOB HALOX_MD_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c
     ${CMAKE_CURRENT_LIST_DIR}/cpu/*.c ${CMAKE_CURRENT_LIST_DIR}/pair/*.c)

set(HALOX_MD_GPU_SOURCES)
if(HALOX_HAVE_CUDA)
  file(GLOB HALOX_MD_GPU_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/gpu/*.cu
       ${CMAKE_CURRENT_LIST_DIR}/gpu/*.c)
endif()

add_library(halox_md STATIC ${HALOX_MD_SOURCES} ${HALOX_MD_GPU_SOURCES})
target_include_directories(halox_md PUBLIC ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(halox_md PUBLIC halox_internal m)
target_compile_options(halox_md PRIVATE $<$<COMPILE_LANGUAGE:C>:${HALOX_C_WARNINGS}>)
set_target_properties(halox_md PROPERTIES POSITION_INDEPENDENT_CODE ON)

# Set-up (the lattice, the velocities) runs on the host's threads where
# OpenMP is found (OMP_NUM_THREADS as usual); without it the same loops run
# on one thread and give the same atoms.
find_package(OpenMP COMPONENTS C)
if(OpenMP_C_FOUND)
  target_link_libraries(halox_md PUBLIC OpenMP::OpenMP_C)
endif()

# The driver selects the GPU engine only where one was built.
if(HALOX_HAVE_CUDA AND EXISTS ${CMAKE_CURRENT_LIST_DIR}/gpu/engine.c)
  target_compile_definitions(halox_md PRIVATE HALOX_MD_GPU_ENGINE)
  set_target_properties(halox_md PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
  # HALOX_TRACE records kernels and copies through CUPTI where it is found.
  if(TARGET CUDA::cupti)
    target_compile_definitions(halox_md PRIVATE HALOX_HAVE_CUPTI)
    target_link_libraries(halox_md PRIVATE CUDA::cupti)
  endif()
endif()

# The pair kernel's and the neighbour search's chunk loops are written to be
# vectorised: -O3 where the build optimises, and -fno-trapping-math so that
# the cutoff test may become a select (the values computed are the same;
# only FP exception flags may differ, and halox reads none).
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  set_source_files_properties(
    ${CMAKE_CURRENT_LIST_DIR}/cpu/force_pair.c ${CMAKE_CURRENT_LIST_DIR}/cpu/neighbor.c
    PROPERTIES COMPILE_OPTIONS "-fno-trapping-math;$<$<NOT:$<CONFIG:Debug>>:-O3>")
endif()
