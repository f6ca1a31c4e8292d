# tools/device-lib.sh - sourced by the device scripts that run under a
# deadline (device-all.sh, device-two.sh): their set-up, build and steps.
#   device_begin LOG DEADLINE VAR...  output under $OUT (LOG the whole
#       output, summary.txt the lines to read first); NVLink multicast off;
#       PY, B (the build folder), FLAGS (CTest's mpiexec flags) and XS
#       (mpirun's) passing each VAR to every rank, MPIRUN (without XS)
#   device_build BUILD_LOG  configure and build B with every backend
#   left  seconds to the deadline;  note LINE...  print and keep in summary
#   step NAME SECONDS command...  run it as a group (run-group.sh) within
#       SECONDS and the deadline; skipped, saying so, under 20 s left;
#       returns the command's status
. "$(dirname "${BASH_SOURCE[0]}")/run-group.sh"

device_begin() {
  local v
  DEADLINE=$2
  OUT=${OUT:-/tmp/halox-device}
  mkdir -p "$OUT"
  SUM=$OUT/summary.txt
  : >"$SUM"
  exec > >(tee -a "$OUT/$1") 2>&1
  T0=$(date +%s)
  # NVLink multicast stays off, always.
  export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
  export HALOX_TIMEOUT_S=10 NVSHMEM_SYMMETRIC_SIZE=4G
  PY=/opt/torch/.venv/bin/python3
  [ -x "$PY" ] || PY=$(command -v python3)
  B=build-device
  FLAGS="--oversubscribe;--allow-run-as-root;--bind-to;none"
  XS=""
  shift 2
  for v in "$@"; do
    FLAGS="$FLAGS;-x;$v"
    XS="$XS -x $v"
  done
  MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none"
}

left() { echo $((DEADLINE - ($(date +%s) - T0))); }
note() { echo "$*" | tee -a "$SUM"; }

device_build() {
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHALOX_PYTHON="$PY" \
    -DHALOX_WITH_CUDA=ON -DHALOX_WITH_MPI=ON -DHALOX_WITH_NCCL=ON -DHALOX_WITH_NVSHMEM=ON \
    "-DHALOX_MPIEXEC_FLAGS=$FLAGS" | sed -n '/feature summary/,/sanitize/p'
  cmake --build $B -j "$(nproc)" >"$1" 2>&1 || {
    note "build FAILED"
    grep -E "error" -A3 "$1" | head -30
    return 1
  }
  note "build ok ($(($(date +%s) - T0)) s)"
}

step() {
  local name=$1 tmo=$2 t1 rc
  shift 2
  if [ "$(left)" -lt 20 ]; then
    note "SKIPPED $name (deadline)"
    return 1
  fi
  [ "$tmo" -gt "$(($(left) - 10))" ] && tmo=$(($(left) - 10))
  t1=$(date +%s)
  echo "== $name: $*"
  run_group "$tmo" "$@"
  rc=$?
  note "$name: rc=$rc ($(($(date +%s) - t1)) s)"
  return $rc
}
