# Atom types and mixtures in halox-md (CPU engine): every pair style and
# every mixing rule on two-type decks (tests/types_decks/) and the
# Kob-Andersen mixture (tests/decks/in.kob_andersen) against LAMMPS at 1
# and 3 ranks (lammps_match.py's bound); set type/fraction atom by atom,
# a mixture's restart file, an old one-type file, and bad input
# (types_cases.py); the deck and the mixing rules alone (test_types_mix).
if(Python3_Interpreter_FOUND)
  # hx_py_launch: md.cmake's --mpiexec and --mpiflags (read before this file).
  file(GLOB hx_types_decks ${CMAKE_CURRENT_SOURCE_DIR}/types_decks/in.*)
  list(APPEND hx_types_decks ${CMAKE_CURRENT_SOURCE_DIR}/decks/in.kob_andersen)
  list(TRANSFORM hx_types_decks PREPEND "--deck=")
  add_test(NAME test_types_lammps
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/lammps_match.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch} ${hx_types_decks})
  set_tests_properties(test_types_lammps PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED"
                       LABELS lammps TIMEOUT 600 PROCESSORS 3)
  hx_test_mpi_env(test_types_lammps CPU)
  add_test(NAME test_types
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/types_cases.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  set_tests_properties(test_types PROPERTIES LABELS cpu TIMEOUT 600 PROCESSORS 3)
  hx_test_mpi_env(test_types CPU)
endif()

# The deck's types and the pairs a run uses, without LAMMPS (deck.cmake's
# reader sources, and the lattice for set type/fraction's sites).
hx_test(test_types_mix SOURCES test_types_mix.c ${HX_DECK_SOURCES}
        ${PROJECT_SOURCE_DIR}/src/md/lattice.c LABELS cpu)
