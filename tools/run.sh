#!/usr/bin/env bash
# Sets up, builds and runs the main job: the classic LJ melt benchmark
# (32,000 atoms, 100 steps) with halox-md, on every GPU where there are GPUs
# (one rank each), else on CPU ranks. Extra arguments go to halox-md, e.g.
#   tools/run.sh --steps 1000 --transport nccl
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh build >&2

# NVLink multicast stays off: it can take a host's GPUs out of service.
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
mpirun=(mpirun)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
ngpu=0
command -v nvidia-smi >/dev/null && ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$ngpu" -gt 0 ] && build/tools/halox-md --help 2>/dev/null | grep -q -- "--gpu"; then
  echo "run: $ngpu GPU(s): one rank per GPU" >&2
  set -x
  exec "${mpirun[@]}" -n "$ngpu" -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE build/tools/halox-md --gpu "$@"
fi
ranks=$(nproc)
[ "$ranks" -gt 8 ] && ranks=8
echo "run: no GPU: $ranks CPU rank(s)" >&2
if command -v mpirun >/dev/null; then
  set -x
  exec "${mpirun[@]}" --oversubscribe -n "$ranks" build/tools/halox-md --cpu "$@"
fi
set -x
exec build/tools/halox-md --cpu "$@"
