#!/usr/bin/env bash
# tools/device-mpi-modes.sh - on a machine with an NVIDIA GPU: builds
# libhalox, test_gpu_mpi_modes, test_gpu_timeout and halox-bench; runs the
# mpi-mode test at 2, 4 and 8 processes under MPS (and at 2 without MPS:
# CUDA IPC between processes of one GPU either way), the timeout test at 2
# (auto picks the ipc mode there), and halox-bench for 32,000 and 2,048,000
# atoms on grid 1x1x2 with 2 processes: the mpi modes beside nvshmem-pulse.
# Everything goes to $OUT (default /tmp/halox-device): device.log (all
# output), summary.txt, bench.csv.
#
#   tools/device-mpi-modes.sh [deadline_seconds]    (default 220)
#
# Steps past the deadline are skipped. Never touches GPU settings; starts
# MPS as the user and stops it before the no-MPS step.
set -u
DEADLINE=${1:-220}
OUT=${OUT:-/tmp/halox-device}
mkdir -p "$OUT"
LOG=$OUT/device.log
SUM=$OUT/summary.txt
: >"$SUM"
exec > >(tee -a "$LOG") 2>&1
T0=$(date +%s)
left() { echo $((DEADLINE - ($(date +%s) - T0))); }

# NVLink multicast stays off, always (it can take shared GPUs out of service).
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export HALOX_TIMEOUT_S=${HALOX_TIMEOUT_S:-5}
PY=/opt/torch/.venv/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
B=build-mpimodes

echo "== machine"
nvidia-smi -L
nproc
ompi_info 2>/dev/null | grep -i "cuda" | head -3

echo "== build"
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHALOX_PYTHON="$PY" \
  -DHALOX_WITH_CUDA=ON -DHALOX_WITH_MPI=ON -DHALOX_WITH_NVSHMEM=ON 2>&1 | grep -E "halox|MPI  |CUDA |NVSHMEM|Error|error"
if ! cmake --build $B -j 16 --target halox test_gpu_mpi_modes test_gpu_timeout halox-bench; then
  echo "RESULT build FAILED" | tee -a "$SUM"
  exit 1
fi
echo "RESULT build ok ($(( $(date +%s) - T0 )) s)" >>"$SUM"

echo "== MPS"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "MPS control daemon started"
sleep 1
if ! ls $CUDA_MPS_PIPE_DIRECTORY | grep -q '^control'; then
  echo "no control pipe seen: letting the nvshmem transports share the GPU anyway"
  export HALOX_ALLOW_SHARED_GPU=1
fi

MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none"
XS="-x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x HALOX_TIMEOUT_S"
[ -n "${HALOX_ALLOW_SHARED_GPU:-}" ] && XS="$XS -x HALOX_ALLOW_SHARED_GPU"

# run NAME SECONDS command...: output to the log; verdict lines to the summary.
run() {
  local name=$1 tmo=$2
  shift 2
  if [ "$(left)" -lt 10 ]; then
    echo "RESULT $name SKIPPED (deadline)" | tee -a "$SUM"
    return
  fi
  [ "$tmo" -gt "$(left)" ] && tmo=$(left)
  echo "== $name: $*"
  local t1=$(date +%s)
  timeout -k 5 "$tmo" "$@" >/tmp/run.out 2>&1
  local rc=$?
  cat /tmp/run.out
  echo "RESULT $name rc=$rc ($(( $(date +%s) - t1 )) s)" >>"$SUM"
  grep -E "checks passed|checks FAILED|SKIPPED|not run|FAIL |Error|HX_ERR_|ran every case|FAILED a case|auto runs|mode," /tmp/run.out \
    | sort | uniq -c | sed 's/^/    /' | head -30 >>"$SUM"
}

T=$B/tests/test_gpu_mpi_modes
run modes_np2 40 $MPIRUN -n 2 $XS $T

echo "== bench"
: >"$OUT/bench.csv"
for n in 32000 2048000; do
  run bench_$n 50 $MPIRUN -n 2 $XS $B/tools/halox-bench --atoms $n --grid 1x1x2 \
    --transport mpi,nvshmem-pulse --no-put --iters 200 --warmup 20 --csv /tmp/bench_$n.csv
  grep -E "^#|^transport|^pulse|^[0-9]|^[a-z]" /tmp/run.out | grep -v "^halox\[" >>"$SUM"
  if [ -f /tmp/bench_$n.csv ]; then
    if [ -s "$OUT/bench.csv" ]; then tail -n +2 /tmp/bench_$n.csv >>"$OUT/bench.csv"; else cat /tmp/bench_$n.csv >>"$OUT/bench.csv"; fi
  fi
done

run modes_np4 40 $MPIRUN -n 4 $XS $T
run modes_np8 60 $MPIRUN -n 8 $XS $T
run timeout_np2 30 $MPIRUN -n 2 $XS $B/tests/test_gpu_timeout

echo "== MPS stop"
echo quit | nvidia-cuda-mps-control
sleep 1
unset HALOX_ALLOW_SHARED_GPU CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
XS="-x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x HALOX_TIMEOUT_S"
run modes_np2_nomps 30 $MPIRUN -n 2 $XS $T --grid 1x1x2

echo "== summary"
cat "$SUM"
echo "total $(( $(date +%s) - T0 )) s"
