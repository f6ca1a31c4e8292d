# Tests of the GPU engine of halox-md (label gpu). Built wherever CUDA and
# the GPU engine are; without a GPU they exit 77 (skipped) and say why.
# Several ranks on one GPU need MPS for the NVSHMEM transports (see
# tools/gpu-check.sh, which starts it on a machine of one GPU); nccl
# refuses that setting and is skipped.
if(HALOX_HAVE_CUDA AND TARGET halox_md AND EXISTS ${PROJECT_SOURCE_DIR}/src/md/gpu/engine.c)
  # 4,000 atoms, grid chosen for the ranks.
  hx_test(test_md_gpu SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 1 2 4 LABELS gpu TIMEOUT 900)
  # Two pulses along x (domains 2.52 wide, halo cutoff 2.8): forwarding.
  hx_test(test_md_gpu_pulses SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 4 LABELS gpu
          ARGS --cells 6 --grid 4x1x1 TIMEOUT 900)
  # The smallest box the cutoff allows (6.72 for a halo cutoff of 2.8): four
  # cells along a periodic dimension, so the list build meets each cell
  # under two images.
  hx_test(test_md_gpu_small SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 1 2 LABELS gpu
          ARGS --cells 4 TIMEOUT 900)
  # The list build with one thread per atom (chosen by size from 256 atoms
  # per SM, 288 where every atom is a home atom in cell order: 33,792 and
  # 38,016 on an H200): the same lists as the lane groups. newton on, so
  # that the halo atoms' walks (the eighth shell's) take the one-thread
  # build too.
  hx_test(test_md_gpu_lanes1 SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 1 2 LABELS gpu
          ARGS --build-lanes 1 --newton on TIMEOUT 900)
  # One thread per atom with a ring of 4 slots a lane, the list build's
  # room for stores ahead of its warp: few rows fit, so the build takes the
  # walk that tests the room at each hit, and most hits go to the list
  # directly. newton on, as the test above.
  hx_test(test_md_gpu_ring4 SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 1 2 LABELS gpu
          ARGS --build-lanes 1 --ring 4 --newton on TIMEOUT 900)
  # Device against host-path rebuilds, 1,000 steps of 32,000 atoms.
  hx_test(test_md_gpu_rebuilds SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 2 4 LABELS gpu
          ARGS --compare-rebuilds --cells 20 --steps 1000 TIMEOUT 900)
  # Arrays without margin: device rebuilds grow them mid-run.
  hx_test(test_md_gpu_tight SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 2 4 LABELS gpu
          ARGS --tight --steps 200 TIMEOUT 900)
  # The default system, 32,000 atoms.
  hx_test(test_md_gpu_default SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 1 2 LABELS gpu
          ARGS --cells 20 TIMEOUT 900)
  # newton: the runs above leave it to the GPU engine, which takes newton
  # off at their sizes (fewer than 100,000 atoms per rank: the full-shell
  # plan, no reverse exchange). The same checks with each said outright:
  # newton on (the eighth shell) at 2 and 4 ranks and with two pulses
  # along x, newton off at 3 ranks (a 3x1x1 grid); the step-0 forces of
  # either against the CPU engine's newton on. Then 1,000 steps of 32,000
  # atoms, newton on against newton off (--compare-newton).
  hx_test(test_md_gpu_newton_on SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 2 4 LABELS gpu
          ARGS --newton on TIMEOUT 900)
  hx_test(test_md_gpu_pulses_on SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 4 LABELS gpu
          ARGS --newton on --cells 6 --grid 4x1x1 TIMEOUT 900)
  hx_test(test_md_gpu_newton_off SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 3 LABELS gpu
          ARGS --newton off TIMEOUT 900)
  hx_test(test_md_gpu_newton_series SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 2 4 LABELS gpu
          ARGS --compare-newton --cells 20 --steps 1000 TIMEOUT 900)
  # A triclinic box (tilts 2, 1, -2 lattice cells: xy, xz, yz): the cells
  # made along heights, images across tilted faces in the list build, the
  # minimum image and the halo's shifts; the engine's own newton and grid
  # at 1, 2 and 4 ranks, newton on along x (images along y and z carry
  # the tilts), newton off along z (the pulses carry them).
  hx_test(test_md_gpu_tilt SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 1 2 4 LABELS gpu
          ARGS --tilt 2,1,-2 TIMEOUT 900)
  hx_test(test_md_gpu_tilt_on SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 2 LABELS gpu
          ARGS --tilt 2,1,-2 --newton on --grid 2x1x1 TIMEOUT 900)
  hx_test(test_md_gpu_tilt_z SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 3 LABELS gpu
          ARGS --tilt 2,1,-2 --newton off --grid 1x1x3 TIMEOUT 900)
  # The cell lists' one-launch scan against the host's prefix sum.
  hx_test(test_gpu_scan SOURCES test_gpu_scan.c LIBS hxmd LABELS gpu TIMEOUT 300)
  # Graph mode (nvshmem-fused) with a rank that withholds one replayed step:
  # the timeout comes back at the next rebuild on every rank, nothing hangs.
  hx_test(test_md_gpu_withhold SOURCES test_md_gpu.c md_gpu_faults.c LIBS hxmd RANKS 2 4 LABELS gpu
          ARGS --withhold TIMEOUT 300)
endif()

# End to end on the GPU engine (Python scripts beside this file; Python3
# and hx_py_launch come from tests/md.cmake, included before this file):
# - md_gpu_lists.py: the default room, 216 and 80 slots, and the list
#   build's lanes give the same thermo rows; 80 slots grow mid-run (graphs
#   and plain launches); a system over the memory allowed is refused with
#   the GPUs it needs;
# - md_gpu_decide.py: one rank's rebuild decision in a conditional graph
#   node, with other steps a graph launch, in plain launches: the same
#   rebuild count and thermo rows;
# - md_gpu_vote.py: 2 ranks' rebuild decision voted on the GPU against the
#   host's (MPI, plain launches): the same rebuild count and thermo rows;
# - md_gpu_kick.py: 2 ranks' closing kick left to the next step's
#   kick-drift (graph mode) against launched on its own (plain launches):
#   the same thermo rows and restart file bytes;
# - md_gpu_batch.py: 2 ranks' steps between checks replayed 4 and 7 to a
#   graph launch against one a launch: the same thermo rows and restart
#   file bytes;
# - md_gpu_order.py: 2 ranks' rebuild-step local forces queued behind the
#   local list, and non-local forces launched with PDL, against the
#   default order: the same thermo rows;
# - md_gpu_stretch.py: the timed stretches (marked on the device on one
#   rank, synchronised on 2): the stretches the driver's rule counts;
# - trace_cases.py --gpu: the timeline's CUPTI kernel records on the
#   host's clock;
# - restart_cases.py --gpu: continuation within the stated float bound at
#   1 and 2 ranks and across engines, and a rank killed mid-run under each
#   GPU transport.
if(Python3_Interpreter_FOUND AND HALOX_HAVE_CUDA AND TARGET halox_md
   AND EXISTS ${PROJECT_SOURCE_DIR}/src/md/gpu/engine.c)
  add_test(NAME test_md_gpu_lists
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md_gpu_lists.py
                   --halox $<TARGET_FILE:halox-md>)
  add_test(NAME test_md_gpu_decide
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md_gpu_decide.py
                   --halox $<TARGET_FILE:halox-md>)
  add_test(NAME test_md_gpu_vote
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md_gpu_vote.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  add_test(NAME test_md_gpu_trace
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/trace_cases.py --gpu
                   --halox $<TARGET_FILE:halox-md> --script ${PROJECT_SOURCE_DIR}/bench/trace_step.py
                   --sums ${PROJECT_SOURCE_DIR}/bench/trace_kernels.py)
  add_test(NAME test_md_gpu_kick
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md_gpu_kick.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  add_test(NAME test_md_gpu_batch
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md_gpu_batch.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  add_test(NAME test_md_gpu_order
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md_gpu_order.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  add_test(NAME test_md_gpu_stretch
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md_gpu_stretch.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  add_test(NAME test_md_gpu_restart
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/restart_cases.py --gpu
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  set_tests_properties(test_md_gpu_lists test_md_gpu_decide test_md_gpu_vote test_md_gpu_trace
                       test_md_gpu_kick test_md_gpu_batch test_md_gpu_order test_md_gpu_stretch
                       test_md_gpu_restart PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED" LABELS gpu TIMEOUT 600)
  set_tests_properties(test_md_gpu_trace PROPERTIES TIMEOUT 300)
  set_tests_properties(test_md_gpu_restart test_md_gpu_vote test_md_gpu_kick test_md_gpu_batch
                       test_md_gpu_order test_md_gpu_stretch PROPERTIES PROCESSORS 2)
endif()

# Triclinic decks on the GPU engine (tests/triclinic_decks) against the
# CPU engine at 1 and 3 ranks: thermo rows within float's bounds, the
# dump's triclinic header line for line (md_gpu_triclinic.py).
if(HALOX_HAVE_CUDA AND TARGET halox_md AND EXISTS ${PROJECT_SOURCE_DIR}/src/md/gpu/engine.c
   AND Python3_Interpreter_FOUND)
  add_test(NAME test_md_gpu_triclinic
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/md_gpu_triclinic.py
                   --halox $<TARGET_FILE:halox-md> ${hx_py_launch})
  set_tests_properties(test_md_gpu_triclinic PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED"
                       LABELS gpu TIMEOUT 600 PROCESSORS 3)
  hx_test_mpi_env(test_md_gpu_triclinic)
endif()
