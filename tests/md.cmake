# Tests of the MD engine (src/md) and of the halox-md program.
add_library(hxmd STATIC md_util.c)
target_link_libraries(hxmd PUBLIC halox_md hxtest)
target_compile_options(hxmd PRIVATE ${HALOX_C_WARNINGS})
hx_test(test_md_forces SOURCES test_md_forces.c LIBS hxmd RANKS 1 2 4 LABELS cpu TIMEOUT 300)
hx_test(test_md_ranks SOURCES test_md_ranks.c LIBS hxmd RANKS 1 2 3 4 8 LABELS cpu TIMEOUT 300)
hx_test(test_md_energy SOURCES test_md_energy.c LIBS hxmd RANKS 1 2 LABELS cpu TIMEOUT 300)
hx_test(test_md_velocity SOURCES test_md_velocity.c LIBS hxmd RANKS 1 2 4 LABELS cpu TIMEOUT 120)
hx_test(test_md_velocity_lammps SOURCES test_md_velocity_lammps.c LIBS hxmd RANKS 1 3 LABELS cpu
        TIMEOUT 120)

# halox-md end to end: a small deck run through the program, good and bad.
# md_check.cmake runs the command after `--` and passes when the exit code
# is as expected (0, or not 0 with EXPECT=fail), the output matches REGEX,
# and a failure printed exactly one ERROR line (from rank 0 alone).
set(HX_MD_TEST_DIR ${CMAKE_CURRENT_BINARY_DIR}/md)
file(MAKE_DIRECTORY ${HX_MD_TEST_DIR})
file(WRITE ${HX_MD_TEST_DIR}/in.melt [=[
# LJ melt, sized by -var: n (cells per side), rho (density), steps
variable        n index 6
variable        rho index 0.8442
variable        steps index 50
units           lj
atom_style      atomic
lattice         fcc ${rho}
region          box block 0 ${n} 0 ${n} 0 ${n}
create_box      1 box
create_atoms    1 box
mass            1 1.0
velocity        all create 1.44 87287 loop geom
pair_style      lj/cut 2.5
pair_coeff      1 1 1.0 1.0 2.5
neighbor        0.3 bin
neigh_modify    delay 0 every 20 check no
fix             1 all nve
thermo          10
run             ${steps}
]=])
file(WRITE ${HX_MD_TEST_DIR}/md_check.cmake [=[
set(cmd)
set(take OFF)
foreach(i RANGE ${CMAKE_ARGC})
  if(take AND DEFINED CMAKE_ARGV${i})
    list(APPEND cmd "${CMAKE_ARGV${i}}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(take ON)
  endif()
endforeach()
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT ${TIMEOUT})
set(all "${out}${err}")
message("${all}")
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "halox-md did not finish (${rc}): a hang is a bug")
endif()
if(EXPECT STREQUAL "fail")
  if(rc EQUAL 0)
    message(FATAL_ERROR "halox-md exited 0; a failure was expected")
  endif()
  string(REGEX MATCHALL "ERROR" errs "${all}")
  list(LENGTH errs nerr)
  if(NOT nerr EQUAL 1)
    message(FATAL_ERROR "${nerr} ERROR lines; one (from rank 0) was expected")
  endif()
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "halox-md exited ${rc}; 0 was expected")
endif()
if(NOT all MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match: ${REGEX}")
endif()
]=])

# hx_md_cli_test(NAME RANKS n EXPECT ok|fail REGEX re [TIMEOUT s] [LABELS ...] ARGS ...)
function(hx_md_cli_test name)
  cmake_parse_arguments(T "" "RANKS;EXPECT;REGEX;TIMEOUT" "ARGS;LABELS" ${ARGN})
  if(NOT T_LABELS)
    set(T_LABELS cpu)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  math(EXPR ctest_timeout "${T_TIMEOUT} + 30")
  set(launch)
  if(HALOX_HAVE_MPI)
    set(launch ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS} ${HALOX_MPIEXEC_FLAGS})
  elseif(T_RANKS GREATER 1)
    add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -E echo
             "SKIPPED: ${T_RANKS} ranks need MPI, and this build has none")
    set_tests_properties(${name} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED" LABELS "${T_LABELS}")
    return()
  endif()
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DEXPECT=${T_EXPECT} "-DREGEX=${T_REGEX}" -DTIMEOUT=${T_TIMEOUT}
                   -P ${HX_MD_TEST_DIR}/md_check.cmake --
                   ${launch} $<TARGET_FILE:halox-md> ${T_ARGS}
           WORKING_DIRECTORY ${HX_MD_TEST_DIR})
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${ctest_timeout}
                       PROCESSORS ${T_RANKS})
  # With more than one rank, the others may still print after a failure
  # (halox-md takes SIGTERM as a request to stop), and the check counts
  # their ERROR lines: the wait stays.
  if(T_RANKS EQUAL 1)
    hx_test_mpi_env(${name} CPU QUICK_END)
  else()
    hx_test_mpi_env(${name} CPU)
  endif()
endfunction()

hx_md_cli_test(test_md_cli_run RANKS 2 EXPECT ok
  REGEX "Step +Temp +E_pair +E_mol +TotEng +Press.*\n +0   1.44 .*\n +50 .*Loop time of [0-9.e-]+ on 2 procs for 50 steps with 864 atoms.*atom-steps/s"
  ARGS -in in.melt --cpu --dump melt.xyz --dump-every 25)
# Box 3 cells = 5.04 wide: the 2.8 halo cutoff is not below half of it.
hx_md_cli_test(test_md_cli_cutoff RANKS 2 EXPECT fail
  REGEX "ERROR: .*cutoff 2.8 is not below half the box length"
  ARGS -in in.melt -var n 3)
# 4 atoms (1 cell at density 0.01, box 7.4) over 3 ranks along x: one is
# empty, which the CPU engine runs (as LAMMPS; the GPU engine too,
# tests/md_gpu_balance.py "empty rank").
hx_md_cli_test(test_md_cli_few_atoms RANKS 3 EXPECT ok
  REGEX "Loop time of [0-9.e-]+ on 3 procs for 50 steps with 4 atoms"
  ARGS -in in.melt -var n 1 -var rho 0.01 --grid 3x1x1 --cpu)
hx_md_cli_test(test_md_cli_density RANKS 2 EXPECT fail
  REGEX "ERROR: .*density -0.8442"
  ARGS -in in.melt -var rho -0.8442)
hx_md_cli_test(test_md_cli_density_zero RANKS 1 EXPECT fail
  REGEX "ERROR: .*density 0"
  ARGS -in in.melt -var rho 0)
# The CPU engine always moves its halo with the cpu transport: another name
# is refused, never silently replaced (a device transport, one this build
# lacks, a misspelt one); cpu and auto run.
hx_md_cli_test(test_md_cli_transport_typo RANKS 1 EXPECT fail
  REGEX "ERROR: --transport nvshmem-fusd: no such transport; this build has cpu"
  ARGS -in in.melt --cpu --transport nvshmem-fusd)
hx_md_cli_test(test_md_cli_transport_device RANKS 1 EXPECT fail
  REGEX "ERROR: --transport nccl (moves device memory|is not built into this halox-md: it needs)"
  ARGS -in in.melt --cpu --transport nccl)
hx_md_cli_test(test_md_cli_transport_auto RANKS 2 EXPECT ok
  REGEX "cpu engine \\(double\\).*Loop time of [0-9.e-]+ on 2 procs for 50 steps"
  ARGS -in in.melt --cpu --transport auto)
# miniMD's own published run (its README, "out.lj.miniMD": 864,000 atoms,
# 60^3 cells, 100 steps, every 20, printing "100 7.310629e-01 -5.712170e+00
# 1.204577e+00"): with miniMD's velocities, halox-md must print the same
# temperature, energy and pressure at step 100 to miniMD's 7 digits. This
# checks the miniMD velocity mode, the integrator, the neighbour-list
# schedule and the thermo definitions against an independent code.
# Label large: the sanitizer pass of tools/test.sh leaves it out (under
# AddressSanitizer its 864,000 atoms take minutes, and the memory it walks
# is the same code's as test_md_cli_minimd's below at 4,000 atoms).
hx_md_cli_test(test_md_cli_minimd60 RANKS 2 EXPECT ok LABELS cpu large
  REGEX "\n +100 +0\\.731062(8[5-9]|9[0-4])[0-9]* +-5\\.712170[0-4][0-9]* +0 +-4\\.[0-9]+ +1\\.20457(6[5-9]|7[0-4])[0-9]*"
  TIMEOUT 560 ARGS --velocity minimd --size 60 --steps 100 --thermo 50 --cpu)
# The same command on 10^3 cells: it runs to the end, for the sanitizers.
hx_md_cli_test(test_md_cli_minimd RANKS 2 EXPECT ok
  REGEX "\n +100 +[0-9.]+ +-[0-9.]+ +0 +-[0-9.]+ +-?[0-9.]+ *\n.*Loop time of [0-9.e-]+ on 2 procs for 100 steps with 4000 atoms"
  ARGS --velocity minimd --size 10 --steps 100 --thermo 50 --cpu)

# Thermostats and thermo_style custom: fix nvt runs on the CPU engine
# with LAMMPS's columns (the GPU engine's: tests/md_gpu_thermostat.cmake);
# what does not run is refused, one error each.
# in.nvt: in.melt with fix ${fix} (nvt by default), a line ${also} and
# thermo_style custom, at lines 17 to 21.
file(READ ${HX_MD_TEST_DIR}/in.melt hx_melt)
string(REPLACE "fix             1 all nve\n" [=[variable        fix index "nvt temp 1.0 1.0 0.5"
variable        also index "thermo 50"
fix             1 all ${fix}
${also}
thermo_style    custom step temp pe ke etotal press vol density atoms
]=] hx_nvt "${hx_melt}")
file(WRITE ${HX_MD_TEST_DIR}/in.nvt "${hx_nvt}")
hx_md_cli_test(test_md_cli_nvt RANKS 2 EXPECT ok
  REGEX "Step +Temp +PotEng +KinEng +TotEng +Press +Volume +Density +Atoms *\n +0 +1\.44 +-6\.7733681 +2\.1575 +-4\.6158681 +-5\.0210763 +1023\.4542 +0\.8442 +864 *\n.*Loop time of [0-9.e-]+ on 2 procs for 50 steps"
  ARGS -in in.nvt --cpu)
hx_md_cli_test(test_md_cli_nvt_nve RANKS 1 EXPECT fail
  REGEX "ERROR: .*in.nvt:20: fix 2 nve with fix 1 nvt: both integrate"
  ARGS -in in.nvt --cpu -var also "fix 2 all nve")
hx_md_cli_test(test_md_cli_nvt_notemp RANKS 1 EXPECT fail
  REGEX "ERROR: .*in.nvt:19: fix nvt needs its target first"
  ARGS -in in.nvt --cpu -var fix "nvt tchain 3")
hx_md_cli_test(test_md_cli_nvt_tdamp RANKS 1 EXPECT fail
  REGEX "ERROR: .*in.nvt:19: fix nvt: the damping TDAMP 0 must be > 0"
  ARGS -in in.nvt --cpu -var fix "nvt temp 1.0 1.0 0")
hx_md_cli_test(test_md_cli_thermo_keyword RANKS 1 EXPECT fail
  REGEX "ERROR: .*in.nvt:20: thermo_style custom keyword 'cpu' is not supported"
  ARGS -in in.nvt --cpu -var also "thermo_style custom step cpu")

# Same deck, same numbers: halox-md's CPU engine against LAMMPS's own `lmp`
# on decks of lammps_match.py, at 1 and 3 ranks; skips where lmp is not
# installed (tools/test.sh installs the Debian package where it can).
find_package(Python3 COMPONENTS Interpreter)
# The launcher the end-to-end scripts use for several ranks.
set(hx_py_launch)
if(HALOX_HAVE_MPI)
  string(REPLACE ";" " " mpiflags "${HALOX_MPIEXEC_FLAGS}")
  set(hx_py_launch --mpiexec ${MPIEXEC_EXECUTABLE} "--mpiflags=${mpiflags}")
endif()
if(Python3_Interpreter_FOUND)
  add_test(NAME test_lammps_match
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/lammps_match.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  set_tests_properties(test_lammps_match PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED"
                       LABELS lammps TIMEOUT 900 PROCESSORS 3)
  hx_test_mpi_env(test_lammps_match CPU)
  # Every pair style (tests/decks/in.pair_*: morse, yukawa, soft,
  # lj/smooth/linear, and WCA as lj/cut shifted at 2^(1/6)) the same way.
  file(GLOB hx_pair_decks ${CMAKE_CURRENT_SOURCE_DIR}/decks/in.pair_*)
  list(TRANSFORM hx_pair_decks PREPEND "--deck=")
  add_test(NAME test_lammps_pair
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/lammps_match.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch} ${hx_pair_decks})
  set_tests_properties(test_lammps_pair PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED"
                       LABELS lammps TIMEOUT 600 PROCESSORS 3)
  hx_test_mpi_env(test_lammps_pair CPU)
endif()

# fix langevin (tests/thermostat_cases.py): the mean temperature over
# 20,000 steps, the same rows on 1 and 2 ranks, a ramp.
if(Python3_Interpreter_FOUND)
  add_test(NAME test_md_langevin
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/thermostat_cases.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  set_tests_properties(test_md_langevin PROPERTIES LABELS cpu TIMEOUT 300 PROCESSORS 2)
  hx_test_mpi_env(test_md_langevin CPU)
endif()

# Restart files, stops and faults, end to end (tests/restart_cases.py):
# continuation bit for bit at 1, 2 and 4 ranks, write_restart, SIGTERM,
# --max-hours, every bad file, a killed rank.
if(Python3_Interpreter_FOUND)
  add_test(NAME test_md_restart
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/restart_cases.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  set_tests_properties(test_md_restart PROPERTIES LABELS cpu TIMEOUT 900 PROCESSORS 4)
  # Its bad files each run one rank; its killed rank's check (the run ends
  # in time, naming the rank, no process left) holds as well with SIGKILL
  # at once as after the wait.
  hx_test_mpi_env(test_md_restart CPU QUICK_END)
endif()

# halox-md's timeline (HALOX_TRACE, tests/trace_cases.py): off by default, a
# bad path refused before the run, ranks on one clock, the stages of every
# step, and bench/trace_step.py's picture of one step.
if(Python3_Interpreter_FOUND)
  add_test(NAME test_md_trace
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/trace_cases.py
                   --halox $<TARGET_FILE:halox-md> --script ${PROJECT_SOURCE_DIR}/bench/trace_step.py
                   --sums ${PROJECT_SOURCE_DIR}/bench/trace_kernels.py
                   ${hx_py_launch})
  set_tests_properties(test_md_trace PROPERTIES LABELS cpu TIMEOUT 300 PROCESSORS 2)
  hx_test_mpi_env(test_md_trace CPU)
endif()
