# Triclinic decks in halox-md (CPU engine; LAMMPS's region prism): the
# thermo rows of tests/triclinic_decks/ (LJ melts tilted in xy, in xy xz
# yz with the box keywords, every tilt at LAMMPS's limit) against LAMMPS's
# `lmp` at 1 and 3 ranks within lammps_match.py's bound; then dumps with
# LAMMPS's triclinic header byte for byte, units box, a restart continued
# bit for bit and bad input (tests/triclinic_cases.py).
if(Python3_Interpreter_FOUND)
  # hx_py_launch: md.cmake's --mpiexec and --mpiflags (read before this file).
  file(GLOB hx_tri_decks ${CMAKE_CURRENT_SOURCE_DIR}/triclinic_decks/in.*)
  list(TRANSFORM hx_tri_decks PREPEND "--deck=")
  add_test(NAME test_triclinic_lammps
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/lammps_match.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch} ${hx_tri_decks})
  set_tests_properties(test_triclinic_lammps PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED"
                       LABELS lammps TIMEOUT 600 PROCESSORS 3)
  hx_test_mpi_env(test_triclinic_lammps CPU)
  add_test(NAME test_triclinic_md
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/triclinic_cases.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  set_tests_properties(test_triclinic_md PROPERTIES LABELS cpu TIMEOUT 600 PROCESSORS 3)
  hx_test_mpi_env(test_triclinic_md CPU)
endif()
