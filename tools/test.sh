#!/usr/bin/env bash
# Sets up, builds and runs every test: the full build (CUDA code compiled
# where nvcc exists; GPU tests skip without a GPU and say why), then the CPU
# tests again under AddressSanitizer and UndefinedBehaviorSanitizer.
#   tools/test.sh            # both
#   HALOX_TEST_SANITIZE=0 tools/test.sh   # the full build only
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

tools/setup.sh build
ctest --test-dir build --output-on-failure -j "$jobs"

if [ "${HALOX_TEST_SANITIZE:-1}" = 1 ]; then
  tools/setup.sh build-asan -DHALOX_SANITIZE=ON -DHALOX_WITH_CUDA=OFF -DCMAKE_BUILD_TYPE=Debug
  # Open MPI keeps some allocations until exit; leaks are checked by the
  # one-process tests, which run without MPI's own allocations in the way.
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  ctest --test-dir build-asan --output-on-failure -j "$jobs" -L cpu
fi
