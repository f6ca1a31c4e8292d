#!/bin/bash
# device-md-gpu.sh - on a GPU machine: build halox-md with CUDA, run the GPU
# engine's tests (1 process; then 2 and 4 processes on one GPU under MPS)
# and its timings. $OUT (default ./md-gpu-out) gets summary.txt, the test
# logs and logs.tgz with every other log (at most 8 files come back).
#
#   tools/device-md-gpu.sh [BUDGET_S] [STAGES]
#
# BUDGET_S (default 280): wall-clock budget; a stage that would not fit in
# what is left is skipped and says so. STAGES (default "t1 time mps sizes
# sweep"): which stages to run, in that order:
#   t1     test_md_gpu* with 1 process
#   time   HOOMD-blue's LJ benchmark system (64,000 atoms, density 1.0,
#          rc 2.5, buffer 0.4, dt 0.005, lists checked every step)
#   mps    test_md_gpu* with 2 and 4 processes on one GPU under MPS, and a
#          2-rank timing
#   sizes  32,000 / 256,000 / 2,048,000 atoms at density 0.8442 (LJ melt)
#   sweep  threads per atom, timers and graphs at 64,000 atoms
#   san    compute-sanitizer memcheck on small runs (device and host rebuilds)
# Keeps NVLink multicast off (NVSHMEM_DISABLE_NVLS=1, NCCL_NVLS_ENABLE=0).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/md-gpu-out}
LOG=$(mktemp -d /tmp/md-gpu-logs.XXXX)
mkdir -p "$OUT"
BUDGET=${1:-280}
STAGES=${2:-"t1 time mps sizes sweep san"}
T0=$(date +%s)
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
PY=/opt/torch/.venv/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
B=build-dev
MPIRUN="mpirun --allow-run-as-root --oversubscribe"
SUMMARY=$OUT/summary.txt
finish() {
  tar czf "$OUT/logs.tgz" -C "$LOG" . 2>/dev/null
  cp "$LOG"/test_*.log "$OUT"/ 2>/dev/null
  echo; cat "$SUMMARY"
}
trap finish EXIT

left() { echo $((BUDGET - ($(date +%s) - T0))); }
note() { echo "$*" | tee -a "$SUMMARY"; }
# fits SECONDS: true when that much time is left
fits() { [ "$(left)" -gt "$1" ]; }

note "== $(date -u +%FT%TZ) $(nvidia-smi -L 2>/dev/null | head -1)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader \
  >>"$SUMMARY" 2>&1

# ---- build (Release; only what the GPU engine's runs need)
if ! cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHALOX_PYTHON="$PY" \
     -DHALOX_WITH_CUDA=ON -DHALOX_WITH_MPI=ON >"$LOG/cmake.log" 2>&1; then
  tail -40 "$LOG/cmake.log"; exit 1
fi
grep -A6 "feature summary" "$LOG/cmake.log" | tee -a "$SUMMARY"
if ! ninja -C $B -j16 halox-md test_md_gpu test_md_gpu_pulses test_md_gpu_default \
     >"$LOG/build.log" 2>&1; then
  grep -E "error|FAILED" "$LOG/build.log" | head -40; exit 1
fi
note "build done at $(( $(date +%s) - T0 )) s"
MD=$B/tools/halox-md

# One halox-md run: LABEL ENV-ASSIGNMENTS -- ARGS...; keeps the log and
# puts the us/step line and stage table in the summary.
md() {
  local label=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  fits 25 || { note "SKIP $label (time)"; return; }
  local log=$LOG/md_$label.log
  env "${envs[@]}" timeout $(( $(left) - 10 )) $MPIRUN -n 1 $MD --gpu --no-progress "$@" \
    >"$log" 2>&1
  local rc=$?
  note "-- $label (rc $rc) ${envs[*]} halox-md $*"
  grep -E "gpu engine|us/step|rebuilds|^ +(local|non-local|halo|neigh|migrate|integrate|other|total)" \
    "$log" | sed 's/^/   /' >>"$SUMMARY"
  tail -3 "$log" | grep -i error >>"$SUMMARY"
}

HOOMD=(--density 1.0 --cells 20 20 40 --rc 2.5 --skin 0.4 --dt 0.005 --temp 1.2
       --every 1 --check yes --thermo 0)

for stage in $STAGES; do
  case $stage in
  t1)
    fits 100 || { note "SKIP t1 (time)"; continue; }
    timeout $(( $(left) - 60 )) ctest --test-dir $B -R 'md_gpu.*_np1$' --output-on-failure \
      --timeout 200 >"$LOG/test_np1.log" 2>&1
    note "-- tests, 1 process (rc $?)"
    grep -E "tests passed|Passed|Failed|\*\*\*|SKIP" "$LOG/test_np1.log" | sed 's/^/   /' \
      >>"$SUMMARY"
    ;;
  time)
    md hoomd64k HALOX_MD_GRAPH=1 -- "${HOOMD[@]}" --steps 5000
    md hoomd64k_nograph HALOX_MD_GRAPH=0 -- "${HOOMD[@]}" --steps 5000
    md hoomd64k_notimers HALOX_MD_TIMERS=0 -- "${HOOMD[@]}" --steps 5000
    ;;
  mps)
    fits 90 || { note "SKIP mps (time)"; continue; }
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
    export NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1
    mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
    nvidia-cuda-mps-control -d && note "MPS started"
    timeout $(( $(left) - 40 )) ctest --test-dir $B -R 'md_gpu.*_np[24]$' --output-on-failure \
      --timeout 240 >"$LOG/test_mps.log" 2>&1
    note "-- tests, 2 and 4 processes on one GPU under MPS (rc $?)"
    grep -E "tests passed|Passed|Failed|\*\*\*|skipped:" "$LOG/test_mps.log" | sed 's/^/   /' \
      >>"$SUMMARY"
    if fits 45; then
      timeout $(( $(left) - 25 )) $MPIRUN -n 2 $MD --gpu --no-progress --size 40 --steps 500 \
        --thermo 0 >"$LOG/md_mps_np2_256k.log" 2>&1
      note "-- 2 ranks under MPS, 256,000 atoms (rc $?)"
      grep -E "gpu engine|us/step|^ +(local|non-local|halo|neigh|migrate|integrate|other)" \
        "$LOG/md_mps_np2_256k.log" | sed 's/^/   /' >>"$SUMMARY"
    fi
    echo quit | nvidia-cuda-mps-control
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    ;;
  sizes)
    md melt32k -- --size 20 --steps 5000 --thermo 0
    md melt256k -- --size 40 --steps 2000 --thermo 0
    md melt2048k -- --size 80 --steps 300 --thermo 0
    ;;
  sweep)
    for t in 2 8; do
      md hoomd64k_tpp$t HALOX_MD_TPP=$t -- "${HOOMD[@]}" --steps 3000
    done
    md hoomd64k_hostrebuild HALOX_MD_HOST_REBUILD=1 -- "${HOOMD[@]}" --steps 1000
    md melt32k_tpp4 HALOX_MD_TPP=4 -- --size 20 --steps 5000 --thermo 0
    md melt256k_tpp2 HALOX_MD_TPP=2 -- --size 40 --steps 2000 --thermo 0
    md hoomd62k_cube -- --density 1.0 --size 25 --rc 2.5 --skin 0.4 \
      --dt 0.005 --temp 1.2 --every 1 --check yes --thermo 0 --steps 3000
    ;;
  san)
    for v in 0 1; do
      fits 40 || { note "SKIP san $v (time)"; continue; }
      HALOX_MD_HOST_REBUILD=$v timeout $(( $(left) - 20 )) $MPIRUN -n 1 compute-sanitizer \
        --tool memcheck --error-exitcode 9 $MD --gpu --no-progress --size 6 --steps 60 --every 1 --check yes \
        --thermo 20 >"$LOG/san_$v.log" 2>&1
      note "-- compute-sanitizer memcheck, HALOX_MD_HOST_REBUILD=$v (rc $?)"
      grep -E "ERROR SUMMARY|Invalid|error" "$LOG/san_$v.log" | head -5 | sed 's/^/   /' \
        >>"$SUMMARY"
    done
    ;;
  esac
done
note "== done at $(( $(date +%s) - T0 )) s"
