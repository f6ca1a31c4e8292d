#!/usr/bin/env bash
# tools/device-two.sh - the two-GPU figures and the switches kept for two
# GPUs, in one call on a machine with two GPUs (kind nvidia-h200-x2), one
# process per GPU, no MPS:
#   1. build;
#   2. halox-bench md --procs 1,2 at 32,000, 256,000 and 2,048,000 atoms
#      (nvshmem-fused, 1,000 steps): the issues' mean and median ratios and
#      a rebuild's cost in median steps;
#   3. each switch measured on two GPUs only so far against the default, at
#      256,000 and 2,048,000 atoms, two rounds in alternating order, with the
#      rebuild's phases (HALOX_LOG=1);
#   4. the exchange alone at 32,000 atoms (every transport, --floor) and the
#      put path at 256,000 atoms;
#   5. timelines of 2 GPUs at 256,000 and 2,048,000 atoms (HALOX_TRACE), kernel lengths
#      and idle time per stream (bench/trace_kernels.py --idle);
#   6. the GPU tests of one and two ranks, in the time left.
# Steps past the deadline are skipped and say so. Output under $OUT;
# $OUT/summary.txt holds the lines to read first (8 files in all come back).
#   tools/device-two.sh [deadline_seconds]   (default 560)
# SWITCHES="VAR=val ..." replaces the list of step 3; SIZES="40 80" its sizes.
set -u
. "$(dirname "$0")/device-lib.sh" # device_begin, device_build, step, note, left
device_begin device-two.log "${1:-560}" NVSHMEM_DISABLE_NVLS NCCL_NVLS_ENABLE HALOX_TIMEOUT_S \
  NVSHMEM_SYMMETRIC_SIZE
MPIRUN="$MPIRUN $XS"
MD=$B/tools/halox-md

ngpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
note "machine: $ngpu x $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(nproc) cores, $(date -u +%F)"
if [ "$ngpu" -lt 2 ]; then
  note "this machine has $ngpu GPU: device-two.sh measures one process per GPU on two (tools/device-all.sh shares one GPU under MPS)"
  exit 2
fi
device_build /tmp/device-two-build.log || exit 1

# 2. The issues' figures.
step "md bench" 150 $PY bench/md_bench.py --md $MD --procs 1,2 --steps 1000 \
  --sizes 32000,256000,2048000 --transports nvshmem-fused --csv "$OUT/md-bench.csv" \
  --mpirun "$MPIRUN"
[ -s "$OUT/md-bench.csv" ] && $PY bench/md_bench.py --report "$OUT/md-bench.csv" >>"$SUM" 2>&1

# 3. The switches, each against the default in the same rounds.
SWITCHES=${SWITCHES:-"HALOX_MD_FORCE_ROOM=0 HALOX_MD_LOCAL_LATE=1 HALOX_MD_LOCAL_LATE=2 HALOX_MD_EARLY_FORCES=1 HALOX_MD_PDL=1 HALOX_MD_PDL=3"}
one() { # one SIZE [VAR=val]: mean and median us/step, rebuild phases
  local o
  o=$(HALOX_LOG=1 run_group 60 $MPIRUN -n 2 -x HALOX_LOG env ${2:-} $MD --gpu --size $1 \
    --steps $(($1 > 60 ? 400 : 2000)) --thermo 0 --no-progress 2>&1)
  note "size $1 ${2:-default}: rc=$? $(echo "$o" | grep -E "us/step" | awk '{printf "%s ", $2}')| $(echo "$o" |
    grep -E "device rebuild," | head -1 | cut -c1-200)"
  echo "$o" | grep -iE "error|refus" | head -3
}
for s in ${SIZES:-40 80}; do
  for r in 1 2; do
    list="default $SWITCHES"
    [ $r = 2 ] && list="$(echo $list | tr ' ' '\n' | tac | tr '\n' ' ')"
    for w in $list; do
      [ "$(left)" -lt 90 ] && { note "SKIPPED size $s $w (deadline)"; continue; }
      [ "$w" = default ] && w=""
      one "$s" "$w"
    done
  done
done

# 4. The exchange alone.
step "exchange 32000 1x1x2" 60 $MPIRUN -n 2 $B/tools/halox-bench --atoms 32000 --grid 1x1x2 \
  --iters 200 --warmup 20 --floor --csv "$OUT/bench.csv"
for put in 0 1; do
  step "exchange 256000 put=$put" 60 $MPIRUN -n 2 env HALOX_FORCE_PUT=$put \
    $B/tools/halox-bench --atoms 256000 --grid 1x1x2 --transport nvshmem-fused --iters 200 \
    --warmup 20
done
grep -E "nvshmem-fused|nccl|floor" "$OUT/device-two.log" | grep -vE "^==" | tail -16 >>"$SUM"

# 5. Where a step at 256,000 and 2,048,000 atoms goes on two GPUs.
for sz in 40 80; do
  T=$OUT/trace-2gpu-size$sz.json
  if step "trace size $sz" 60 $MPIRUN -n 2 env HALOX_TRACE="$T" $MD --gpu \
    --size $sz --steps 200 --thermo 0 --no-progress; then
    echo "== size $sz" >>"$OUT/trace-kernels.txt"
    $PY bench/trace_kernels.py "$T" --idle >>"$OUT/trace-kernels.txt" 2>&1
    gzip -f "$T"
  fi
done
# 6. Tests of at most two ranks: one process per GPU, no MPS.
step "gpu tests (1 and 2 ranks)" 170 ctest --test-dir $B -L gpu -E "np4|np8" --output-on-failure -j 1 >"$OUT/ctest.log" 2>&1
grep -E "tests passed|\*\*\*|Failed" "$OUT/ctest.log" | tail -20 >>"$SUM"

note "total $(($(date +%s) - T0)) s"
echo "== summary"
cat "$SUM"
