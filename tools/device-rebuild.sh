#!/usr/bin/env bash
# tools/device-rebuild.sh - the device rebuild on the GPU machine, in one
# call: build, the GPU tests (under MPS where there are more ranks than
# GPUs), then halox-md on 1 and 2 GPUs (MPS stopped) at three sizes with the
# rebuild's phase times (HALOX_LOG=1). Output under $OUT.
#   [TRACE=1] [SIZES="20 40 80"] [HOST=0] tools/device-rebuild.sh [test-regex] [steps]
# HOST=0 leaves out the host-rebuild runs; MPS=0 runs the tests without
# MPS (one process per GPU: only tests of at most as many ranks as GPUs).
# TRACE=1 adds timelines of 2 GPUs (HALOX_TRACE) and pictures of a step.
set -u
. "$(dirname "$0")/run-group.sh" # run_group: a step's whole process group ends with it
OUT=${OUT:-/tmp/halox-device}; mkdir -p "$OUT"
RX=${1:-.}
STEPS=${2:-400}
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export HALOX_TIMEOUT_S=10 NVSHMEM_SYMMETRIC_SIZE=4G
B=build-device
X="-x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x HALOX_TIMEOUT_S -x NVSHMEM_SYMMETRIC_SIZE -x HALOX_LOG -x HALOX_MD_REBUILD -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"
FLAGS="--oversubscribe;--allow-run-as-root;--bind-to;none"
for v in $X; do [ "$v" = -x ] || FLAGS="$FLAGS;-x;$v"; done
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHALOX_WITH_CUDA=ON -DHALOX_WITH_MPI=ON \
  -DHALOX_WITH_NCCL=ON -DHALOX_WITH_NVSHMEM=ON "-DHALOX_MPIEXEC_FLAGS=$FLAGS" >"$OUT/cfg.log" 2>&1
cmake --build $B -j "$(nproc)" >"$OUT/build.log" 2>&1 || { grep -E "error" -A3 "$OUT/build.log" | head -40; exit 1; }
echo "build ok"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
export NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
if [ "$RX" != none ]; then
  [ "${MPS:-1}" = 1 ] && nvidia-cuda-mps-control -d
  run_group 420 ctest --test-dir $B -L gpu -R "$RX" --output-on-failure -j 1 >"$OUT/ctest.log" 2>&1
  [ "${MPS:-1}" = 1 ] && { echo quit | nvidia-cuda-mps-control; sleep 1; }
  grep -E "Test +#|tests passed|FAIL" "$OUT/ctest.log" | cut -c1-160 | head -60
fi
MD=$B/tools/halox-md
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none $X"
for s in ${SIZES:-20 40 80}; do
  echo "=== size $s: 1 GPU, 2 GPUs (device rebuild), 2 GPUs (host rebuild)"
  HALOX_LOG=1 run_group 120 $MD --gpu --size $s --steps $STEPS --thermo 0 --no-progress 2>&1 | grep -E "us/step|rebuilds," | sed 's/^/  1gpu /'
  HALOX_LOG=1 run_group 120 $MPIRUN -n 2 $MD --gpu --size $s --steps $STEPS --thermo 0 --no-progress 2>&1 | grep -E "us/step|rebuilds,|device rebuild,|rror" | sed 's/^/  2gpu /'
  [ "${HOST:-1}" = 1 ] && HALOX_MD_REBUILD=host HALOX_LOG=1 run_group 120 $MPIRUN -n 2 $MD --gpu --size $s --steps $STEPS --thermo 0 --no-progress 2>&1 | grep -E "us/step|rebuilds,|rror" | sed 's/^/  2gpu-host /'
done
# TRACE=1: timelines at 32,000 and 256,000 atoms (HALOX_TRACE) on 2 GPUs
# and on 1, with one step between rebuilds and one rebuild step drawn
# (bench/trace_step.py; PNG where matplotlib is, else SVG) and listed
# range by range (*.txt), under $OUT.
if [ "${TRACE:-}" = 1 ]; then
  PY=/opt/torch/.venv/bin/python3
  [ -x "$PY" ] || PY=$(command -v python3)
  for s in 20 40; do
    for np in 2 1; do
      T="$OUT/trace-${np}gpu-size$s.json"
      echo "=== trace, size $s, $np GPU(s) -> $T"
      HALOX_TRACE="$T" run_group 120 $MPIRUN -n $np -x HALOX_TRACE $MD --gpu --size $s --steps 100 \
        --thermo 0 --no-progress 2>&1 | grep -E "us/step|trace|rror" | sed 's/^/  /'
      run_group 60 "$PY" bench/trace_step.py "$T" --list --steps 2 \
        --out "$OUT/step-${np}gpu-size$s.png" >"$OUT/step-${np}gpu-size$s.txt"
      head -8 "$OUT/step-${np}gpu-size$s.txt" | sed 's/^/  /'
      # The step that rebuilds: the 20th start of the integrator holds step 20's rebuild.
      run_group 60 "$PY" bench/trace_step.py "$T" --list --index 19 \
        --out "$OUT/rebuild-${np}gpu-size$s.png" >"$OUT/rebuild-${np}gpu-size$s.txt"
      head -8 "$OUT/rebuild-${np}gpu-size$s.txt" | sed 's/^/  /'
      gzip -f "$T"
    done
  done
fi
