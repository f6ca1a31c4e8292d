#!/usr/bin/env bash
# tools/device-all.sh - the whole GPU check in one call, on a machine with
# an NVIDIA GPU: build everything, start MPS, run every GPU test (several
# processes on the GPU), compute-sanitizer on two processes, the exchange
# benchmark, halox-bench md with plots, and the HOOMD-blue LJ system. Steps
# past the deadline are skipped and say so. Never touches GPU settings.
#
#   tools/device-all.sh [deadline_seconds] [quick]   (output under $OUT)
# quick: the build, the GPU tests and one default halox-md run on 2
# processes, no benchmarks.
set -u
. "$(dirname "$0")/device-lib.sh" # device_begin, device_build, step, note, left
QUICK=${2:-}
device_begin device.log "${1:-560}" NVSHMEM_DISABLE_NVLS NCCL_NVLS_ENABLE CUDA_MPS_PIPE_DIRECTORY \
  CUDA_MPS_LOG_DIRECTORY HALOX_TIMEOUT_S NVSHMEM_SYMMETRIC_SIZE \
  NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE

note "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(nproc) cores, $(date -u +%F)"
device_build "$OUT/build.log" || exit 1

export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
export NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && note "MPS started: several processes share the one GPU"

step "gpu tests" 360 ctest --test-dir $B -L gpu --output-on-failure -j 1
grep -E "tests passed|Failed|Skipped|\*\*\*" "$OUT/device.log" | grep -vE "^\s*$" | tail -40 >>"$SUM"
step "auto test" 40 ctest --test-dir $B -R test_auto --output-on-failure
# The GPU engine's multi-rank graph mode, with its output kept: which
# transports ran, steps replayed, step-100 thermo, and the withheld step.
step "md gpu graph np2" 60 sh -c "$MPIRUN -n 2 $XS $B/tests/test_md_gpu >$OUT/md-gpu-np2.log 2>&1; $MPIRUN -n 2 $XS $B/tests/test_md_gpu --withhold >>$OUT/md-gpu-np2.log 2>&1"
grep -E "neigh_modify|replayed|skipped|FAIL|checks passed|withheld" "$OUT/md-gpu-np2.log" \
  | cut -c1-240 | head -40 >>"$SUM"
step "halox-md default np2" 60 $MPIRUN -n 2 $XS $B/tools/halox-md --gpu --size 20 --steps 400 \
  --thermo 100 --no-progress
grep -E "gpu engine|us/step" "$OUT/device.log" | tail -3 | cut -c1-200 >>"$SUM"
if [ "$QUICK" = quick ]; then
  echo quit | nvidia-cuda-mps-control
  note "total $(($(date +%s) - T0)) s (quick)"
  cat "$SUM"
  exit 0
fi
step "memcheck fused+pulse np2" 60 $MPIRUN -n 2 $XS compute-sanitizer --tool memcheck --error-exitcode 9 \
  $B/tests/test_gpu_exchange --grid 1x1x2
step "racecheck fused np2" 60 $MPIRUN -n 2 $XS compute-sanitizer --tool racecheck --error-exitcode 9 \
  $B/tests/test_fused_exchange --grid 1x1x2 --steps 2
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/device.log" | sort | uniq -c >>"$SUM"

: >"$OUT/bench.csv"
bench() { # bench NP GRID ATOMS
  step "bench $2 $3" 60 $MPIRUN -n $1 $XS $B/tools/halox-bench --atoms $3 --grid $2 \
    --iters 200 --warmup 20 --floor --csv /tmp/b.csv
  if [ -f /tmp/b.csv ]; then
    if [ -s "$OUT/bench.csv" ]; then tail -n +2 /tmp/b.csv >>"$OUT/bench.csv"; else cat /tmp/b.csv >>"$OUT/bench.csv"; fi
    rm -f /tmp/b.csv
  fi
}
for n in 4000 32000 256000 2048000; do bench 2 1x1x2 $n; done

step "md bench" 200 $PY bench/md_bench.py --md $B/tools/halox-md --procs 1,2 --steps 200 \
  --sizes 4000,32000,45000,256000,2048000 --csv "$OUT/md-bench.csv" \
  --transports mpi-staged,mpi,nvshmem-stream,nvshmem-pulse,nvshmem-fused,nvshmem-fused-tma,auto \
  --mpirun "$MPIRUN"
$PY bench/md_bench.py --report "$OUT/md-bench.csv" >>"$SUM" 2>&1
$PY bench/plot_md.py "$OUT/md-bench.csv" "$OUT" >>"$SUM" 2>&1

step "hoomd lj 64000" 40 $B/tools/halox-md --gpu --density 1.0 --cells 20 20 40 --rc 2.5 --skin 0.4 \
  --dt 0.005 --temp 1.2 --every 1 --check yes --thermo 0 --steps 3000 --no-progress
grep -E "us/step" "$OUT/device.log" | tail -2 >>"$SUM"
for n in 32000 2048000; do bench 8 2x2x2 $n; done

echo quit | nvidia-cuda-mps-control
note "total $(($(date +%s) - T0)) s"
echo "== summary"
cat "$SUM"
