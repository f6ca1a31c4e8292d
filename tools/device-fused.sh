#!/usr/bin/env bash
# tools/device-fused.sh - on a machine with an NVIDIA GPU: builds libhalox
# with the fused transports, starts MPS, runs the nvshmem-fused tests at 2, 4
# and 8 processes on the GPU, compute-sanitizer (memcheck, racecheck) on a
# 2-process run, the ping-pong floor, and halox-bench for 4k, 32k, 256k and
# 2048k atoms on grids 1x1x2 (2 processes) and 2x2x2 (8 processes) with all
# transports (launched and graph-replayed rows, force modes, --floor). Stops
# MPS. Everything goes to $OUT (default /tmp/halox-fused): device.log (all
# output), summary.txt (verdicts and the bench tables), bench.csv.
#
#   tools/device-fused.sh [deadline_seconds] [steps...]   (default 400, all)
#
# steps: tests2 pingpong bench2 tests48 sanitizer bench8 timeout (the last
# also runs the shared gpu tests), in this order of value; steps past the
# deadline are skipped. Never touches GPU settings.
set -u
. "$(dirname "$0")/run-group.sh" # run_group: a step's whole process group ends with it
DEADLINE=${1:-400}
shift || true
STEPS=${*:-"tests2 pingpong bench2 tests48 sanitizer bench8 timeout"}
OUT=${OUT:-/tmp/halox-fused}
mkdir -p "$OUT"
LOG=$OUT/device.log
SUM=$OUT/summary.txt
: >"$SUM"
exec > >(tee -a "$LOG") 2>&1
T0=$(date +%s)
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
want() { case " $STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# NVLink multicast stays off, always.
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export HALOX_TIMEOUT_S=${HALOX_TIMEOUT_S:-10}
export NVSHMEM_SYMMETRIC_SIZE=${NVSHMEM_SYMMETRIC_SIZE:-2G}
PY=/opt/torch/.venv/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
B=build-fused-device

echo "== machine"
nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader

echo "== build"
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHALOX_PYTHON="$PY" \
  -DHALOX_WITH_CUDA=ON -DHALOX_WITH_MPI=ON -DHALOX_WITH_NVSHMEM=ON 2>&1 |
  grep -E "MPI  |CUDA |NCCL |NVSHMEM|Error|error"
if ! cmake --build $B -j 16 --target halox test_fused_exchange test_fused_graph \
  test_fused_stress test_gpu_timeout test_gpu_exchange halox-bench; then
  echo "RESULT build FAILED" | tee -a "$SUM"
  exit 1
fi
echo "RESULT build ok ($(($(date +%s) - T0)) s)" >>"$SUM"

echo "== MPS"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "MPS control daemon started"
sleep 1
# Full multi-process mode: every process may use the whole GPU.
export NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none"
XS="-x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY"
XS="$XS -x HALOX_TIMEOUT_S -x NVSHMEM_SYMMETRIC_SIZE -x NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"

# run NAME SECONDS command...: output to the log; verdict lines to the summary.
run() {
  local name=$1 tmo=$2
  shift 2
  if [ "$(left)" -lt 12 ]; then
    echo "RESULT $name SKIPPED (deadline)" | tee -a "$SUM"
    return
  fi
  [ "$tmo" -gt "$(left)" ] && tmo=$(($(left) - 5))
  echo "== $name: $*"
  local t1=$(date +%s)
  run_group "$tmo" "$@" >/tmp/run.out 2>&1
  local rc=$?
  cat /tmp/run.out
  echo "RESULT $name rc=$rc ($(($(date +%s) - t1)) s)" >>"$SUM"
  grep -E "checks passed|checks FAILED|SKIPPED|not run|FAIL|ERROR SUMMARY|RACECHECK SUMMARY|Error|HX_ERR|ran every|cases clean|user graph|withheld" /tmp/run.out |
    sed 's/\(.\{300\}\).*/\1.../' | sort | uniq -c | sed 's/^/    /' | head -40 >>"$SUM"
}

T=$B/tests
: >"$OUT/bench.csv"
bench() { # bench NP GRID ATOMS
  local np=$1 grid=$2 n=$3 it=200
  [ "$n" -ge 2000000 ] && it=100
  run bench_${grid}_$n 75 $MPIRUN -n $np $XS $B/tools/halox-bench --atoms $n --grid $grid \
    --iters $it --warmup 20 --floor --csv /tmp/bench.csv
  grep -E "^#|^[a-z]" /tmp/run.out | grep -v "^halox\[" | cut -c1-150 >>"$SUM"
  if [ -f /tmp/bench.csv ]; then
    if [ -s "$OUT/bench.csv" ]; then tail -n +2 /tmp/bench.csv >>"$OUT/bench.csv"; else cat /tmp/bench.csv >>"$OUT/bench.csv"; fi
    rm -f /tmp/bench.csv
  fi
}

if want tests2; then
  run graph_np2 40 $MPIRUN -n 2 $XS $T/test_fused_graph
  run exchange_np2 60 $MPIRUN -n 2 $XS $T/test_fused_exchange
  run stress_np2 60 $MPIRUN -n 2 $XS $T/test_fused_stress --cases 200
fi
if want pingpong; then
  run pingpong 30 $MPIRUN -n 2 $XS $B/tools/halox-bench pingpong
  grep -E "^#|^ +[0-9]" /tmp/run.out >>"$SUM"
fi
if want bench2; then
  for n in 4000 32000 256000 2048000; do bench 2 1x1x2 $n; done
fi
if want tests48; then
  run exchange_np4 60 $MPIRUN -n 4 $XS $T/test_fused_exchange
  run exchange_np8 90 $MPIRUN -n 8 $XS $T/test_fused_exchange
  run graph_np4 40 $MPIRUN -n 4 $XS $T/test_fused_graph
  run graph_np8 40 $MPIRUN -n 8 $XS $T/test_fused_graph
  run stress_np4 60 $MPIRUN -n 4 $XS $T/test_fused_stress --cases 200
  run stress_np8 80 $MPIRUN -n 8 $XS $T/test_fused_stress --cases 200
fi
if want sanitizer; then
  run memcheck_np2 90 $MPIRUN -n 2 $XS compute-sanitizer --tool memcheck --error-exitcode 9 \
    $T/test_fused_exchange --grid 1x1x2 --steps 4
  run racecheck_np2 60 $MPIRUN -n 2 $XS compute-sanitizer --tool racecheck --error-exitcode 9 \
    $T/test_fused_exchange --grid 1x1x2 --steps 2
fi
if want bench8; then
  for n in 4000 32000 256000 2048000; do bench 8 2x2x2 $n; done
fi
if want timeout; then
  # The shared tests cover the fused transports too (default force mode).
  run gpu_exchange_np2 40 $MPIRUN -n 2 $XS $T/test_gpu_exchange
  run gpu_exchange_np8 60 $MPIRUN -n 8 $XS $T/test_gpu_exchange
  run timeout_np2 40 $MPIRUN -n 2 $XS $T/test_gpu_timeout
fi

echo "== MPS stop"
echo quit | nvidia-cuda-mps-control
sleep 1

echo "== summary"
cat "$SUM"
echo "total $(($(date +%s) - T0)) s"
