# The thermostats' arithmetic as both engines run it (md/thermostat_math.h):
# the GPU engine's one scale by the product of a half step's factors
# against the CPU engine's scale by each, and the noise's hash.
hx_test(test_md_thermostat_math SOURCES test_md_thermostat_math.c LIBS hxmd LABELS cpu TIMEOUT 60)

# fix nvt and fix langevin on the GPU engine (tests/md_gpu_thermostat.py,
# label gpu): fix nvt against the CPU engine's thermo rows over 1,000
# steps at 1 and 2 ranks, fix langevin's mean temperature over 20,000
# steps and its noise against the CPU engine's, and a GPU restart file
# with fix nvt's chain continued on both engines. Without a GPU it exits
# 77 (skipped). Python3 and hx_py_launch come from tests/md.cmake.
if(Python3_Interpreter_FOUND AND HALOX_HAVE_CUDA AND TARGET halox_md
   AND EXISTS ${PROJECT_SOURCE_DIR}/src/md/gpu/engine.c)
  add_test(NAME test_md_gpu_thermostat
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md_gpu_thermostat.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  set_tests_properties(test_md_gpu_thermostat PROPERTIES SKIP_RETURN_CODE 77 LABELS gpu
                       TIMEOUT 900 PROCESSORS 2)
  hx_test_mpi_env(test_md_gpu_thermostat)
endif()
