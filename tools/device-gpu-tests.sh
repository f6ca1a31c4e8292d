#!/usr/bin/env bash
# tools/device-gpu-tests.sh - on a machine with one (or more) NVIDIA GPUs:
# builds libhalox with the GPU transports, runs the gpu tests at 2, 4 and 8
# processes on the GPU(s) under MPS, compute-sanitizer (memcheck, racecheck)
# on a 2-process run, and halox-bench on grid 1x1x2 with 2 processes for
# 4k, 32k, 256k and 2048k atoms. Everything goes to $OUT (default
# /tmp/halox-device): device.log (all output), summary.txt, bench.csv.
#
#   tools/device-gpu-tests.sh [deadline_seconds]    (default 440)
#
# Steps past the deadline are skipped, most valuable first. Never touches
# GPU settings; starts MPS as the user and stops it at the end.
set -u
DEADLINE=${1:-440}
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
B=build-device

echo "== machine"
nvidia-smi -L
nvidia-smi topo -m
nproc
ompi_info 2>/dev/null | grep -i "cuda" | head -3

echo "== build"
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHALOX_PYTHON="$PY" \
  -DHALOX_WITH_CUDA=ON -DHALOX_WITH_MPI=ON -DHALOX_WITH_NVSHMEM=ON 2>&1 | grep -E "halox|MPI  |CUDA |NCCL |NVSHMEM|Error|error" 
if ! cmake --build $B -j 16 --target halox test_gpu_exchange test_gpu_timeout halox-bench; then
  echo "RESULT build FAILED" | tee -a "$SUM"
  exit 1
fi
echo "RESULT build ok ($(( $(date +%s) - T0 )) s)" >>"$SUM"

echo "== MPS"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "MPS control daemon started"
sleep 1
ls -la $CUDA_MPS_PIPE_DIRECTORY
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
  if [ "$(left)" -lt 15 ]; then
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
  grep -E "checks passed|checks FAILED|SKIPPED|not run|FAIL |ERROR SUMMARY|RACECHECK SUMMARY|Error|HX_ERR_TIMEOUT|ran every case|FAILED a case" /tmp/run.out \
    | sort | uniq -c | sed 's/^/    /' | head -30 >>"$SUM"
}

E=$B/tests/test_gpu_exchange
TT=$B/tests/test_gpu_timeout
run exchange_np2 90 $MPIRUN -n 2 $XS $E
run timeout_np2 60 $MPIRUN -n 2 $XS $TT

echo "== bench"
: >"$OUT/bench.csv"
for n in 4000 32000 256000 2048000; do
  run bench_$n 60 $MPIRUN -n 2 $XS $B/tools/halox-bench --atoms $n --grid 1x1x2 --iters 200 --warmup 20 --csv /tmp/bench_$n.csv
  grep -E "^#|^transport|^pulse|^[0-9]|^[a-z]" /tmp/run.out | grep -v "^halox\[" >>"$SUM"
  if [ -f /tmp/bench_$n.csv ]; then
    if [ -s "$OUT/bench.csv" ]; then tail -n +2 /tmp/bench_$n.csv >>"$OUT/bench.csv"; else cat /tmp/bench_$n.csv >>"$OUT/bench.csv"; fi
  fi
done

run exchange_np4 90 $MPIRUN -n 4 $XS $E
run exchange_np8 120 $MPIRUN -n 8 $XS $E
run timeout_np4 60 $MPIRUN -n 4 $XS $TT
# NVSHMEM "full" multi-process mode (the default under MPS here is "limited").
run exchange_np2_fullmpg 60 $MPIRUN -n 2 $XS -x NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1 $E --grid 1x1x2
export HALOX_TIMEOUT_S=60
run memcheck_np2 80 $MPIRUN -n 2 $XS compute-sanitizer --tool memcheck --error-exitcode 9 $E --grid 1x1x2
run racecheck_np2 60 $MPIRUN -n 2 $XS compute-sanitizer --tool racecheck --error-exitcode 9 $E --grid 1x1x2 --transport nvshmem-pulse
export HALOX_TIMEOUT_S=5

echo "== MPS stop"
echo quit | nvidia-cuda-mps-control
sleep 1
# Without MPS: which transports accept two processes on one GPU.
unset HALOX_ALLOW_SHARED_GPU CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
XS="-x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x HALOX_TIMEOUT_S"
run exchange_np2_nomps 40 $MPIRUN -n 2 $XS $E --grid 1x1x2

echo "== summary"
cat "$SUM"
echo "total $(( $(date +%s) - T0 )) s"
