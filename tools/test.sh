#!/usr/bin/env bash
# Sets up, builds and runs every test:
#  1. the full build (CUDA code compiled where nvcc exists; GPU tests skip
#     where there is no GPU and say why), all tests, with LAMMPS installed
#     for the comparison against it; then it, a static build without
#     CUDA and (where nvcc exists) a static build with CUDA installed into
#     temporary prefixes, with the examples built against each (CMake and
#     pkg-config) and run;
#  2. the CPU tests again under AddressSanitizer and UndefinedBehaviorSanitizer;
#  3. a clang build without MPI (one process, as where no MPI is
#     installed): the deck reader's libFuzzer target for 60 s, then its
#     CPU tests.
# HALOX_TEST_SANITIZE=0 or HALOX_TEST_FUZZ=0 leave out step 2 or 3.
#
# On few cores the order saves time: the small static build comes first,
# so that its set-up installs what every build needs and apt is free to
# install LAMMPS and clang beside the full build; the builds of steps 1-3
# after it compile at the lowest priority beside the full build's tests,
# which mostly wait (process start-up, MPI) and keep the CPU they ask for;
# the fuzzer, one process, runs beside step 2, whose tests yield to it.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
say() { printf 'test: %s\n' "$*"; }
sanitize=${HALOX_TEST_SANITIZE:-1}
fuzz=${HALOX_TEST_FUZZ:-1}
cuda=0
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda=1
fi
logs=$(mktemp -d /tmp/halox-test.XXXXXX)
# stop_tree PID: ends a background job and every process it started.
stop_tree() {
  local child children
  children=$(ps -o pid= --ppid "$1" 2>/dev/null || true)
  kill "$1" 2>/dev/null || true
  for child in $children; do
    stop_tree "$child"
  done
}
bg_jobs=()
# On the way out (a failure stops the script), no build is left running.
trap 'for p in "${bg_jobs[@]}"; do stop_tree "$p"; done; rm -rf "$logs"' EXIT
# finish PID LOG WHAT: waits for a job started in the background, shows
# its output, and stops here if it failed.
finish() {
  local rc=0 p left=()
  wait "$1" || rc=$?
  for p in "${bg_jobs[@]}"; do
    [ "$p" = "$1" ] || left+=("$p")
  done
  bg_jobs=("${left[@]}")
  cat "$2"
  if [ "$rc" != 0 ]; then
    say "$3 failed (exit $rc)"
    exit "$rc"
  fi
}
root_apt() { command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; }

# The library as another code uses it: installed into a temporary prefix,
# the examples built outside the tree with find_package(halox) and with
# pkg-config, and run; here for a static libhalox without CUDA.
say "a static libhalox without CUDA installed; the examples against it"
tools/setup.sh build-static -DBUILD_SHARED_LIBS=OFF -DHALOX_WITH_CUDA=OFF -DBUILD_TESTING=OFF
tools/check-install.sh build-static

# LAMMPS itself, for test_lammps_match (thermo rows against lmp's), and
# clang for the fuzz target: installed beside the full build.
extra_packages() {
  if ! command -v lmp >/dev/null; then
    if root_apt; then
      say "installing LAMMPS (Debian package lammps) for test_lammps_match"
      { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lammps >/dev/null 2>&1 ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lammps >/dev/null; }; } ||
        say "apt-get could not install lammps: test_lammps_match will skip"
    else
      say "no lmp (LAMMPS) and no apt-get as root: test_lammps_match will skip"
    fi
  fi
  if [ "$fuzz" = 1 ] && ! command -v clang >/dev/null && root_apt; then
    say "installing clang for the fuzz target"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null
  fi
}
extra_packages >"$logs/packages" 2>&1 &
packages=$!
bg_jobs+=("$packages")
tools/setup.sh build
finish "$packages" "$logs/packages" "installing LAMMPS or clang"

# The builds of the later steps, at the lowest priority (their processes
# inherit it) beside the tests below.
later_builds() {
  renice -n 19 -p "$BASHPID" >/dev/null || true
  if [ "$cuda" = 1 ]; then
    tools/setup.sh build-static-cuda -DBUILD_SHARED_LIBS=OFF -DBUILD_TESTING=OFF -DHALOX_WITH_NCCL_DEV=ON
  fi
  if [ "$sanitize" = 1 ]; then
    # -O1, as the sanitizers' documentation advises: twice as fast as -O0,
    # and a Debug build still (asserts on).
    tools/setup.sh build-asan -DHALOX_SANITIZE=ON -DHALOX_WITH_CUDA=OFF -DCMAKE_BUILD_TYPE=Debug \
      "-DCMAKE_C_FLAGS_DEBUG=-g -O1"
  fi
  if [ "$fuzz" = 1 ] && command -v clang >/dev/null; then
    CC=clang tools/setup.sh build-fuzz -DHALOX_FUZZ=ON -DHALOX_WITH_CUDA=OFF -DHALOX_WITH_MPI=OFF
  fi
}
say "building the later steps' builds in the background (their output follows the tests)"
later_builds >"$logs/builds" 2>&1 &
builds=$!
bg_jobs+=("$builds")

say "all tests of the full build"
ctest --test-dir build --output-on-failure -j "$jobs"
say "the full build installed; the examples against it"
tools/check-install.sh build
say "the builds made in the background:"
finish "$builds" "$logs/builds" "a build of the later steps"
# A static libhalox with CUDA (NCCL and NVSHMEM where found) needs its
# dependencies spelled out to a C program; the CUDA example links it.
if [ "$cuda" = 1 ]; then
  say "a static libhalox with CUDA (and the experimental nccl-dev, where NCCL 2.28 is) installed; the examples against it"
  tools/check-install.sh build-static-cuda
fi

if [ "$sanitize" = 1 ]; then
  # Open MPI keeps allocations of its own until exit; they are suppressed by
  # name, so leaks of halox's own code are still reported.
  export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
  export ASAN_OPTIONS=abort_on_error=1:fast_unwind_on_malloc=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
have_clang=0
if [ "$fuzz" = 1 ] && command -v clang >/dev/null; then
  have_clang=1
fi

# The fuzzer, one process for 60 s, runs beside the sanitizer pass, whose
# tests run at a lower priority (nice 10): the fuzzer keeps a core to
# itself, and makes as many runs as it would alone.
if [ "$have_clang" = 1 ]; then
  say "fuzzing the deck reader for 60 s in the background (its output follows the next tests)"
  ctest --test-dir build-fuzz --output-on-failure -L fuzz >"$logs/fuzz" 2>&1 &
  fuzzing=$!
  bg_jobs+=("$fuzzing")
fi
if [ "$sanitize" = 1 ]; then
  # Label large: runs whose size alone sets them apart (their code runs in
  # smaller tests here too).
  say "CPU tests under AddressSanitizer and UndefinedBehaviorSanitizer"
  nice -n 10 ctest --test-dir build-asan --output-on-failure -j "$jobs" -L cpu -LE large
fi

if [ "$have_clang" = 1 ]; then
  say "the fuzzing of the deck reader:"
  finish "$fuzzing" "$logs/fuzz" "fuzzing the deck reader"
  say "CPU tests of a build without MPI (the multi-rank ones skip and say why)"
  ctest --test-dir build-fuzz --output-on-failure -j "$jobs" -L cpu
elif [ "$fuzz" = 1 ]; then
  say "no clang: the libFuzzer run is left out (fuzz_deck_main ran the target above)"
fi
