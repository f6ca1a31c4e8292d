#!/usr/bin/env bash
# tools/gpu-check.sh - the GPU check of halox on a Linux machine with NVIDIA
# GPUs: set up and build (tools/setup.sh), the GPU tests, compute-sanitizer
# on two ranks, the exchange benchmark and the 1-against-N-GPU MD table,
# each step under a deadline, every result in one folder.
#
#   tools/gpu-check.sh [options] [OUT_DIR]
#
# OUT_DIR (else $OUT, else ./gpu-check-DATE) receives summary.txt (each
# step, its exit code and seconds), gpu-check.log (everything) and one log
# per step, bench.csv, md-bench.csv and md-table.log. Run `--help` for the
# options. Processes per GPU follow what nvidia-smi -L lists: one GPU, and
# the multi-rank runs share it under MPS (a daemon of this run's own,
# stopped at the end); several GPUs, one process per GPU (tests of more
# ranks than GPUs are left out). A step past its time or the deadline has
# its whole process group killed (tools/run-group.sh). NVLink multicast
# stays off (NVSHMEM_DISABLE_NVLS=1, NCCL_NVLS_ENABLE=0): it can take a
# host's GPUs out of service. GPU settings are never changed.
# Exit status: 0 when every step passed, 1 when one failed or was skipped,
# 2 when there is no GPU or no python3.
set -u
cd "$(dirname "$0")/.." || exit 2
. tools/run-group.sh # run_group: a step's whole process group ends with it

usage() {
  cat <<'EOF'
usage: tools/gpu-check.sh [options] [OUT_DIR]
parts (default: --tests --sanitizer --bench --md):
  --tests        every GPU test (ctest -L gpu)
  --quick        GPU tests of at most two ranks and one halox-md run
  --sanitizer    compute-sanitizer memcheck and racecheck on two ranks
  --bench        halox-bench exchange rows (every transport, --floor)
  --md           bench/md_bench.py --procs 1,N: one GPU against N, and
                 HOOMD-blue's LJ system on one GPU
  --before REV   the MD table of the tree of commit REV (built beside this
                 one) and of this tree, in rounds before, after, after,
                 before: a change's speed side by side; REV may also be a
                 folder holding a source tree (git archive REV | tar -x)
options:
  --only REGEX   with --tests or --quick: only the GPU tests REGEX matches
  --sizes LIST   atoms for --bench and --md (default $SIZES or
                 32000,256000,2048000)
  --steps N      MD steps a run for --md (default 1000)
  --deadline S   seconds for the whole check (default $DEADLINE_S or 3600)
  --build DIR    build folder (default build-gpu)
  --dry-run      print the commands, run nothing
EOF
}

parts="" dry=0 out=${OUT:-} only="" before=""
sizes=${SIZES:-32000,256000,2048000} steps=1000 deadline=${DEADLINE_S:-3600} B=build-gpu
while [ $# -gt 0 ]; do
  case $1 in
  --tests | --quick | --sanitizer | --bench | --md) parts="$parts ${1#--}" ;;
  --sizes | --steps | --deadline | --build | --only | --before)
    [ $# -ge 2 ] || { echo "gpu-check: $1 needs a value" >&2; exit 2; }
    case $1 in
    --sizes) sizes=$2 ;; --steps) steps=$2 ;; --deadline) deadline=$2 ;; --build) B=$2 ;;
    --only) only=$2 ;; --before) before=$2 ;;
    esac
    shift
    ;;
  --dry-run) dry=1 ;;
  -h | --help) usage; exit 0 ;;
  -*) echo "gpu-check: unknown option $1" >&2; usage >&2; exit 2 ;;
  *) out=$1 ;;
  esac
  shift
done
[ -n "$before" ] && parts="$parts before"
parts=${parts:-" tests sanitizer bench md"}
want() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
case "$sizes,$steps,$deadline" in
*[!0-9,]*) echo "gpu-check: --sizes, --steps and --deadline take whole numbers" >&2; exit 2 ;;
esac
if [ -n "$before" ] && ! [ -f "$before/CMakeLists.txt" ] &&
  ! git rev-parse --verify -q "$before^{commit}" >/dev/null; then
  echo "gpu-check: --before $before: neither a commit of this repository nor a source tree" >&2
  exit 2
fi

# The machine: its GPUs and its Python.
ngpu=0
command -v nvidia-smi >/dev/null && ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "$ngpu" -eq 0 ]; then
  echo "gpu-check: no NVIDIA GPU found (nvidia-smi -L lists none)" >&2
  exit 2
fi
PY=$(command -v python3) || { echo "gpu-check: no python3 on PATH" >&2; exit 2; }
gpu=$(nvidia-smi -L | sed -n 's/^GPU 0: \(.*\) (UUID.*/\1/p')
# One GPU: several processes share it under MPS; else one process a GPU.
mps=0
[ "$ngpu" -eq 1 ] && mps=1
np=$ngpu
[ "$np" -eq 1 ] && np=2
out=${out:-./gpu-check-$(date -u +%F)}
[ $dry = 1 ] || { mkdir -p "$out" && out=$(cd "$out" && pwd); } || exit 2
SUM=$out/summary.txt
T0=$(date +%s)
failed=0

if [ $dry = 1 ]; then
  note() { echo "$*"; }
else
  : >"$SUM"
  exec > >(tee -a "$out/gpu-check.log") 2>&1
  note() { echo "$*" | tee -a "$SUM"; }
fi
left() { echo $((deadline - ($(date +%s) - T0))); }

# step NAME SECONDS command...: runs the command as its own process group
# within SECONDS and the deadline, its output in NAME.log; one summary row.
step() {
  local name=$1 tmo=$2 t1 rc
  shift 2
  if [ $dry = 1 ]; then
    printf '[%s] ' "$name"
    printf '%q ' "$@"
    echo
    return 0
  fi
  if [ "$(left)" -lt 30 ]; then
    note "$(printf '%-28s %8s %7s' "$name" skipped -) (deadline)"
    failed=1
    return 1
  fi
  [ "$tmo" -gt "$(($(left) - 10))" ] && tmo=$(($(left) - 10))
  t1=$(date +%s)
  echo "== $name: $*"
  run_group "$tmo" "$@" >"$out/$name.log" 2>&1
  rc=$?
  note "$(printf '%-28s %8s %7s' "$name" "$rc" "$(($(date +%s) - t1))")  $name.log"
  [ $rc = 0 ] || failed=1
  return $rc
}

# Environment of every rank: passed through mpirun and CTest's mpiexec.
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export HALOX_TIMEOUT_S=${HALOX_TIMEOUT_S:-10} NVSHMEM_SYMMETRIC_SIZE=${NVSHMEM_SYMMETRIC_SIZE:-4G}
pass=(NVSHMEM_DISABLE_NVLS NCCL_NVLS_ENABLE HALOX_TIMEOUT_S NVSHMEM_SYMMETRIC_SIZE)
if [ $mps = 1 ]; then
  mpsdir=$out/mps
  # A socket path longer than about 100 bytes does not work.
  [ ${#mpsdir} -gt 80 ] && mpsdir=$(mktemp -d -u /tmp/halox-mps.XXXXXX)
  export CUDA_MPS_PIPE_DIRECTORY=$mpsdir/pipe CUDA_MPS_LOG_DIRECTORY=$mpsdir/log
  # Every process may use the whole GPU.
  export NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1
  pass+=(CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE)
fi
mpirun=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
flags=$(printf '%s;' "${mpirun[@]:1}")
for v in "${pass[@]}"; do
  mpirun+=(-x "$v")
  flags="$flags-x;$v;"
done

rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || rev="$rev with local changes"
note "# gpu-check $(date -u +%FT%TZ), $rev"
note "# $ngpu x $gpu, driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null |
  head -1), $(nproc) cores; $np processes$([ $mps = 1 ] && echo " sharing the GPU under MPS" ||
  echo ", one a GPU")"
note "# parts:$parts; sizes $sizes; deadline $deadline s; results in $out"
note "$(printf '%-28s %8s %7s' step rc seconds)"

cfg=(-DHALOX_WITH_CUDA=ON -DHALOX_PYTHON="$PY" "-DHALOX_MPIEXEC_FLAGS=${flags%;}")
if want before; then
  # REV's tree and its halox-md, built beside this one's once this one is
  # configured (tools/setup.sh has then installed what both need).
  gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  bb=$B-before
  case $bb in /*) ;; *) bb=$PWD/$bb ;; esac
  # Beside its build, so that a second check rebuilds nothing (cp -p and
  # git archive keep the files' times).
  bsrc=$bb-src
  bcmd=(cmake -S "$bsrc" -B "$bb" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cfg[@]}")
  if [ $dry = 1 ]; then
    get="git archive $before | tar -x -C $bsrc"
    [ -f "$before/CMakeLists.txt" ] && get="cp -Rp $before/. $bsrc"
    echo "[build-before] $get; ${bcmd[*]};" \
      "cmake --build $B-before --target halox-md"
  else
    rm -rf "$bsrc" && mkdir -p "$bsrc"
    if [ -f "$before/CMakeLists.txt" ]; then
      cp -Rp "$before/." "$bsrc"
    else
      git archive "$before" | tar -x -C "$bsrc"
    fi
    (
      until [ -f "$B/CMakeCache.txt" ] || [ -f "$out/build.done" ]; do sleep 2; done
      # shellcheck disable=SC2016 # the inner shell expands them
      run_group "$(left)" bash -c 'b=$1 && shift && "$@" && cmake --build "$b" -j "$(nproc)" \
        --target halox-md' _ "$bb" "${bcmd[@]}" >"$out/build-before.log" 2>&1
      echo $? >"$out/build-before.rc"
    ) &
    bpid=$!
  fi
fi
step build 1800 tools/setup.sh "$B" "${cfg[@]}"
brc=$?
[ $dry = 1 ] || : >"$out/build.done"
[ $brc = 0 ] || [ $dry = 1 ] || { [ -n "${bpid:-}" ] && wait "$bpid"; exit 1; }
MD=$B/tools/halox-md
command -v mpirun >/dev/null || [ $dry = 1 ] || note "# no mpirun: the multi-rank steps fail"

# shellcheck disable=SC2317 # run by the EXIT trap
mps_stop() { echo quit | nvidia-cuda-mps-control >/dev/null 2>&1; }
if [ $mps = 1 ]; then
  if [ $dry = 1 ]; then
    echo "[mps] mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY;" \
      "nvidia-cuda-mps-control -d; at the end: echo quit | nvidia-cuda-mps-control"
  else
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    if nvidia-cuda-mps-control -d; then
      trap mps_stop EXIT
      note "# MPS started: pipe $CUDA_MPS_PIPE_DIRECTORY"
    else
      note "# MPS did not start: ranks time-slice the GPU, the NVSHMEM transports refuse"
    fi
  fi
fi
# Ctrl-C or a kill ends the running step's whole group too.
trap '[ -n "${RUN_GROUP_PID:-}" ] && kill -TERM -- -"$RUN_GROUP_PID" 2>/dev/null; exit 130' INT TERM

# Tests of more ranks than GPUs need MPS; with several GPUs they are left out.
skip=()
for n in 4 8; do
  if { [ $mps = 0 ] && [ "$n" -gt "$ngpu" ]; } || want quick; then skip+=("_np$n\$"); fi
done
exclude=()
[ ${#skip[@]} -gt 0 ] && exclude=(-E "$(IFS='|'; echo "${skip[*]}")")
[ -n "$only" ] && exclude+=(-R "$only")
if want tests || want quick; then
  step gpu-tests 3600 ctest --test-dir "$B" -L gpu "${exclude[@]}" --output-on-failure -j 1
  [ $dry = 1 ] || grep -E "tests passed|\(Failed\)|\(Timeout\)|Not Run" "$out/gpu-tests.log" |
    sed 's/^/    /' | tee -a "$SUM"
fi
if want quick; then
  step halox-md 120 "${mpirun[@]}" -n "$np" "$MD" --gpu --size 20 --steps 400 --thermo 100 --no-progress
fi

if want sanitizer; then
  if command -v compute-sanitizer >/dev/null || [ $dry = 1 ]; then
    step memcheck 300 "${mpirun[@]}" -n 2 compute-sanitizer --tool memcheck --error-exitcode 9 \
      "$B/tests/test_gpu_exchange" --grid 1x1x2
    step racecheck 300 "${mpirun[@]}" -n 2 compute-sanitizer --tool racecheck --error-exitcode 9 \
      "$B/tests/test_fused_exchange" --grid 1x1x2 --steps 2
  else
    note "# no compute-sanitizer on PATH: memcheck and racecheck left out"
  fi
fi

if want bench; then
  # Two ranks on 1x1x2; then 8 ranks on 2x2x2 (or 4 on 1x2x2) where there
  # are that many GPUs, or under MPS on one.
  grids=("2 1x1x2")
  if [ $mps = 1 ] || [ "$ngpu" -ge 8 ]; then grids+=("8 2x2x2"); elif [ "$ngpu" -ge 4 ]; then grids+=("4 1x2x2"); fi
  [ $dry = 1 ] || mkdir -p "$out/bench"
  for g in "${grids[@]}"; do
    for n in ${sizes//,/ }; do
      step "bench-${g#* }-$n" 180 "${mpirun[@]}" -n "${g% *}" "$B/tools/halox-bench" --atoms "$n" \
        --grid "${g#* }" --iters 200 --warmup 20 --floor --csv "$out/bench/${g#* }-$n.csv"
    done
  done
  # One CSV with one header.
  [ $dry = 1 ] || awk 'FNR > 1 || NR == 1' "$out"/bench/*.csv >"$out/bench.csv" 2>/dev/null
fi

# The MD table's transport: nvshmem-fused, else nccl, else mpi, as built.
t=nvshmem-fused
if [ $dry = 0 ] && { want md || want before; } && ! "$MD" --help 2>/dev/null | grep -A1 "transports built" | grep -qw "$t"; then
  t=nccl
  "$MD" --help 2>/dev/null | grep -A1 "transports built" | grep -qw "$t" || t=mpi
fi
if want md; then
  step md-bench 1800 "$PY" bench/md_bench.py --md "$MD" --procs "1,$np" --sizes "$sizes" \
    --steps "$steps" --transports "$t" --csv "$out/md-bench.csv" --mpirun "${mpirun[*]}"
  step md-table 60 "$PY" bench/md_bench.py --report "$out/md-bench.csv"
  step hoomd-lj 120 "$MD" --gpu --density 1.0 --cells 20 20 40 --rc 2.5 --skin 0.4 --dt 0.005 \
    --temp 1.2 --every 1 --check yes --thermo 0 --steps 3000 --no-progress
  [ $dry = 1 ] || grep -hE "us/step" "$out/hoomd-lj.log" | sed 's/^/    /' | tee -a "$SUM"
fi

if want before; then
  if [ $dry = 0 ]; then
    wait "$bpid"
    note "$(printf '%-28s %8s %7s' build-before "$(cat "$out/build-before.rc")" -)  build-before.log"
  fi
  # Rounds in opposite orders, so that a drift of the machine shows.
  for r in before:1 after:1 after:2 before:2; do
    w=${r%:*} md=$MD
    [ "$w" = before ] && md=$B-before/tools/halox-md
    step "md-$w-${r#*:}" 900 "$PY" bench/md_bench.py --md "$md" --procs "1,$np" --sizes "$sizes" \
      --steps "$steps" --transports "$t" --csv "$out/md-$w-${r#*:}.csv" \
      --mpirun "${mpirun[*]}"
    [ $dry = 1 ] || grep -E "^ +[0-9]+ +[0-9]+ " "$out/md-$w-${r#*:}.log" | sed "s/^/    $w /" |
      tee -a "$SUM"
  done
fi

if [ $dry = 1 ]; then
  echo "dry run: nothing ran; results would go to $out"
  exit 0
fi
note "# total $(($(date +%s) - T0)) s; $([ $failed = 0 ] && echo "every step passed" || echo "a step failed or was skipped")"
exit $failed
