#!/usr/bin/env bash
# Installs a halox build into a temporary prefix, then builds the examples
# outside the tree against it, as another code would: examples/cpu with
# CMake (find_package(halox)) and with pkg-config, and runs both (2 ranks
# where MPI is built); examples/cuda with CMake where the build has CUDA,
# run where a GPU is visible. Removes the prefix after.
#   tools/check-install.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: tools/check-install.sh BUILD_DIR}
say() { printf 'check-install: %s\n' "$*"; }
prefix=$(mktemp -d /tmp/halox-prefix.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
say "installed $build into $prefix"

run() { # run PROGRAM: 2 ranks where the package has MPI and mpirun exists
  if grep -q 'set(halox_HAVE_MPI ON)' "$prefix"/lib*/cmake/halox/haloxConfig.cmake &&
     command -v mpirun >/dev/null; then
    mpirun --allow-run-as-root --oversubscribe -n 2 "$@"
  else
    "$@"
  fi
}

cmake -S examples/cpu -B "$prefix/ex-cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/ex-cmake" >/dev/null
say "examples/cpu with find_package(halox):"
run "$prefix/ex-cmake/halox_example"

libdir=$(dirname "$(ls "$prefix"/lib*/pkgconfig/halox.pc)")/..
static=$([ -e "$libdir/libhalox.a" ] && [ ! -e "$libdir/libhalox.so" ] && echo --static || true)
export PKG_CONFIG_PATH="$libdir/pkgconfig"
${CC:-cc} -std=c11 examples/cpu/halox_example.c $(pkg-config $static --cflags --libs halox) -lm \
  -Wl,-rpath,"$libdir" -o "$prefix/ex-pkgconfig"
say "examples/cpu with pkg-config $static:"
run "$prefix/ex-pkgconfig"

if grep -q 'set(halox_HAVE_CUDA ON)' "$prefix"/lib*/cmake/halox/haloxConfig.cmake; then
  cmake -S examples/cuda -B "$prefix/ex-cuda" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$prefix/ex-cuda" >/dev/null
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    say "examples/cuda (auto):"
    run "$prefix/ex-cuda/halox_cuda_example"
  else
    say "examples/cuda built; not run: no GPU visible here"
  fi
fi
say "ok"
