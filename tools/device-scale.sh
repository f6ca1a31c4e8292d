#!/usr/bin/env bash
# tools/device-scale.sh - size and set-up on one GPU, in one call: build
# this tree (and, when a source tree BEFORE is given, that one too, for the
# force kernel before and after), the one-GPU list tests, then halox-md
# --gpu at 2,048,000 atoms (stage times, memory per atom; the lists sized
# from the density against the former 216 slots, alternately) and at the
# large sizes asked for (100 steps each: set-up time, bytes per atom,
# us/step, atom-steps/s). Output under $OUT.
#   [EXTRA=1] [LATE="size ..."] tools/device-scale.sh [BEFORE_DIR|-] [size ...]  (default 335)
# EXTRA=1: also the installed package with its CUDA example, and a GPU run
# continued from a checkpoint; LATE: sizes run after those; QUICK=1: no
# tests, and one 2,048,000-atom run.
set -u
OUT=${OUT:-/tmp/halox-device}; mkdir -p "$OUT"
. "$(dirname "$0")/run-group.sh"
BEFORE=${1:--}
shift || true
SIZES=${*:-335}
LATE=${LATE:-}
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
T0=$(date +%s)
echo "machine: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1), $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GB host, $(date -u +%F)"
build() { # build SRC DIR
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHALOX_WITH_CUDA=ON \
    -DHALOX_WITH_MPI=ON -DHALOX_WITH_NCCL=ON -DHALOX_WITH_NVSHMEM=ON >"$OUT/cfg-$(basename "$2").log" 2>&1 &&
    cmake --build "$2" -j "$(nproc)" >"$OUT/build-$(basename "$2").log" 2>&1
}
build . build-scale || { echo "build FAILED"; grep -E "error" -A3 "$OUT/build-build-scale.log" | head -30; exit 1; }
if [ "$BEFORE" != - ]; then
  build "$BEFORE" build-before || { echo "build of $BEFORE FAILED"; BEFORE=-; }
fi
echo "builds ok ($(($(date +%s) - T0)) s)"
[ "${QUICK:-}" = 1 ] || run_group 300 ctest --test-dir build-scale -R "test_md_gpu_lists|test_md_gpu_np1|test_md_gpu_default_np1|test_md_gpu_small_np1|test_md_gpu_lanes1_np1" \
  --output-on-failure -j 1 >"$OUT/ctest-scale.log" 2>&1
grep -E "Test +#|tests passed|^ok|FAIL|default room" "$OUT/ctest-scale.log" | cut -c1-200
md() { # md BUILD SIZE STEPS: one run, its summary lines
  HALOX_LOG=1 run_group 240 "$1/tools/halox-md" --gpu --size "$2" --steps "$3" --thermo 0 \
    --no-progress 2>&1 | grep -E "atoms, fcc|bytes per atom|us/step|atom-steps|set-up|^  (local|neigh|integr)|lists of|grow|rror" | cut -c1-260
}
echo "=== 2,048,000 atoms, 400 steps: lists sized from the density, then the former 216 slots, twice"
for r in 1 2; do
  echo "--- default room"; md build-scale 80 400
  [ "${QUICK:-}" = 1 ] && break
  echo "--- 216 slots"; HALOX_MD_NEIGH_MAX=216 md build-scale 80 400
  [ "$BEFORE" != - ] && { echo "--- before"; md build-before 80 400; }
done
for s in $SIZES; do
  echo "=== size $s ($((4 * s * s * s)) atoms), 100 steps"
  md build-scale "$s" 100
  echo "    ($(($(date +%s) - T0)) s so far)"
done
if [ "${EXTRA:-}" = 1 ]; then
  echo "=== the installed package and its examples, CUDA example on this GPU"
  run_group 150 tools/check-install.sh build-scale >"$OUT/check-install.log" 2>&1
  echo "check-install rc=$?"; grep -iE "cuda|example|ok|FAIL|error" "$OUT/check-install.log" | tail -12 | cut -c1-200
  echo "=== GPU restart: 40 steps in one run, and 20 + 20 through a checkpoint"
  R=$(mktemp -d)
  run_group 60 build-scale/tools/halox-md --gpu --size 10 --steps 40 --thermo 20 --no-progress 2>&1 |
    grep -E "^ +(20|40) |rror" | sed 's/^/  one run   /'
  run_group 60 build-scale/tools/halox-md --gpu --size 10 --steps 20 --thermo 20 --checkpoint "$R/h.rst" \
    --no-progress 2>&1 | grep -E "^ +20 |rror" | sed 's/^/  first 20  /'
  run_group 60 build-scale/tools/halox-md --gpu --restart "$R/h.rst" --steps 20 --thermo 20 --no-progress 2>&1 |
    grep -E "^ +(20|40) |read restart|rror" | sed 's/^/  continued /'
  rm -rf "$R"
fi
for s in $LATE; do
  echo "=== size $s ($((4 * s * s * s)) atoms), 100 steps"
  md build-scale "$s" 100
done
echo "total $(($(date +%s) - T0)) s"
