#!/usr/bin/env bash
# Installs what halox needs where it is missing, then configures and builds.
#   tools/setup.sh [BUILD_DIR] [extra cmake args...]
# Debian/Ubuntu packages: cmake, ninja, Open MPI, pkg-config (apt-get, as root).
# Python: nvidia-nvshmem-cu13==3.4.5 when a CUDA compiler is present (pip).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true

say() { printf 'setup: %s\n' "$*"; }

need_apt=()
command -v cmake >/dev/null || need_apt+=(cmake)
command -v ninja >/dev/null || need_apt+=(ninja-build)
command -v mpicc >/dev/null || need_apt+=(openmpi-bin libopenmpi-dev)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
if [ ${#need_apt[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    say "installing ${need_apt[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    say "missing ${need_apt[*]}; install them (as root: apt-get install ${need_apt[*]})"
    say "continuing: halox builds without MPI, on one process"
  fi
fi

nvcc=$(command -v nvcc || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
if [ -n "$nvcc" ]; then
  if ! python3 -c 'import nvidia.nvshmem' 2>/dev/null; then
    say "installing NVSHMEM headers and libraries (pip nvidia-nvshmem-cu13==3.4.5)"
    python3 -m pip install -q nvidia-nvshmem-cu13==3.4.5 ||
      say "pip could not install NVSHMEM: the nvshmem-* transports will not be built"
  fi
else
  say "no CUDA compiler found: building the CPU parts only"
fi

gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
say "configuring $build"
cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" | sed -n '/feature summary/,/^-- $/p'
say "building $build"
cmake --build "$build" -j "$(nproc)"
