# Atom types on the GPU engine (label gpu): every pair style and mixing
# rule on the two-type decks (tests/types_decks/) and the Kob-Andersen
# mixture (tests/decks/in.kob_andersen) against the CPU engine at 1 and 2
# ranks: step-0 forces and energies, thermo rows within the float bound,
# types atom by atom after rebuilds and migrations (test_md_gpu_types);
# end to end, a sorted dump's types after 200 steps equal to the CPU
# engine's and the Kob-Andersen deck run as it is (md_gpu_types.py). Both
# skip (77, or SKIPPED) without a GPU.
if(HALOX_HAVE_CUDA AND TARGET halox_md AND EXISTS ${PROJECT_SOURCE_DIR}/src/md/gpu/engine.c)
  file(GLOB hx_gpu_types_decks ${CMAKE_CURRENT_SOURCE_DIR}/types_decks/in.*)
  list(APPEND hx_gpu_types_decks ${CMAKE_CURRENT_SOURCE_DIR}/decks/in.kob_andersen)
  hx_test(test_md_gpu_types SOURCES test_md_gpu_types.c LIBS hxmd RANKS 1 2 LABELS gpu
          ARGS ${hx_gpu_types_decks} TIMEOUT 900)
  if(Python3_Interpreter_FOUND)
    add_test(NAME test_md_gpu_types_e2e
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md_gpu_types.py
                     --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
    set_tests_properties(test_md_gpu_types_e2e PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED"
                         LABELS gpu TIMEOUT 600 PROCESSORS 2)
    hx_test_mpi_env(test_md_gpu_types_e2e)
  endif()
endif()
