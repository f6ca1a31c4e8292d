# `newton off` in halox-md (CPU engine: the full-shell plan, no force
# exchange): the force on every atom and every thermo row against newton
# on to 1e-12 relative on grids along one, two and three dimensions, for
# the melt, two types and a tilted box (test_newton); the decks of
# tests/newton_decks/ (newton off in a melt, two types, a tilted box)
# against LAMMPS's `lmp` at 1 and 3 ranks within lammps_match.py's bound;
# the same decks with newton on, the banner, --newton and bad input
# (tests/newton_cases.py).
hx_test(test_newton SOURCES test_newton.c LIBS hxmd RANKS 1 2 3 4 8 LABELS cpu TIMEOUT 300)
if(Python3_Interpreter_FOUND)
  # hx_py_launch: md.cmake's --mpiexec and --mpiflags (read before this file).
  file(GLOB hx_newton_decks ${CMAKE_CURRENT_SOURCE_DIR}/newton_decks/in.*)
  list(TRANSFORM hx_newton_decks PREPEND "--deck=")
  add_test(NAME test_newton_lammps
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/lammps_match.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch} ${hx_newton_decks})
  set_tests_properties(test_newton_lammps PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED"
                       LABELS lammps TIMEOUT 600 PROCESSORS 3)
  hx_test_mpi_env(test_newton_lammps CPU)
  add_test(NAME test_newton_md
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/newton_cases.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  set_tests_properties(test_newton_md PROPERTIES LABELS cpu TIMEOUT 600 PROCESSORS 3)
  hx_test_mpi_env(test_newton_md CPU)
endif()
