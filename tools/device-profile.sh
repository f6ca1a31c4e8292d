#!/usr/bin/env bash
# tools/device-profile.sh - kernel durations of the rebuild (Nsight Compute,
# rebuild and force kernels only) at 2,048,000 atoms: one GPU, and rank 0 of
# two (PROFILE2=0 leaves that out). Expects a build in build-device
# (tools/device-rebuild.sh). Output under $OUT, summed by bench/ncu_sum.py.
#   [PROFILE1=0] [PROFILE2=0] [DETAIL="40 80"] tools/device-profile.sh
set -u
. "$(dirname "$0")/run-group.sh" # run_group: a step's whole process group ends with it
OUT=${OUT:-/tmp/halox-device}; mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export HALOX_TIMEOUT_S=120 NVSHMEM_SYMMETRIC_SIZE=4G
B=build-device; MD=$B/tools/halox-md
X="-x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x HALOX_TIMEOUT_S -x NVSHMEM_SYMMETRIC_SIZE"
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none $X"
K='regex:hxg_k_(cell|scan|build|gather|perm|adopt|force)|hxr_k'
NCU="ncu --clock-control none --metrics gpu__time_duration.sum -k $K --launch-skip 0"
RUN="--gpu --size 80 --steps 41 --thermo 0 --no-progress"
if [ "${PROFILE1:-1}" = 1 ]; then
  run_group 120 $NCU --launch-count 200 $MD $RUN >"$OUT/ncu1.log" 2>&1
  echo "== one GPU, 2,048,000 atoms"
  python3 bench/ncu_sum.py "$OUT/ncu1.log" 24
fi
if [ "${PROFILE2:-1}" = 1 ]; then
  run_group 150 $MPIRUN -n 1 $NCU --launch-count 400 $MD $RUN : -n 1 $MD $RUN >"$OUT/ncu2.log" 2>&1
  echo "== rank 0 of two GPUs, 2,048,000 atoms"
  python3 bench/ncu_sum.py "$OUT/ncu2.log" 30
fi
# DETAIL="40 80": Nsight Compute's full sections (throughput, memory, warp
# stalls) of one list build and one force kernel of one GPU at each size,
# as text under $OUT (ncu-detail-size*.txt).
for s in ${DETAIL:-}; do
  run_group 200 ncu --clock-control none --set full -k 'regex:hxg_k_(build|force)' \
    --launch-skip 1 --launch-count 2 $MD --gpu --size "$s" --steps 21 --thermo 0 --no-progress \
    >"$OUT/ncu-detail-size$s.txt" 2>&1
  echo "== full sections, one GPU, size $s: $OUT/ncu-detail-size$s.txt"
  grep -E "hxg_k_|Duration|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Registers Per|Compute \(SM\) Throughput" \
    "$OUT/ncu-detail-size$s.txt" | head -40
done
