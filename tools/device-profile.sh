#!/usr/bin/env bash
# Rebuild profile on the GPU machine: build, the single-rank GPU tests, and
# halox-md at three sizes with the list build's lanes forced either way.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 HALOX_TIMEOUT_S=10 NVSHMEM_SYMMETRIC_SIZE=4G
B=build-device
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHALOX_WITH_CUDA=ON -DHALOX_WITH_MPI=ON -DHALOX_WITH_NCCL=ON -DHALOX_WITH_NVSHMEM=ON >$OUT/cfg.log 2>&1
cmake --build $B -j 32 >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
MD=$B/tools/halox-md
timeout 300 ctest --test-dir $B -R "md_gpu" -E withhold --output-on-failure 2>&1 | grep -E "tests passed|Passed|Failed|FAIL" | head -30
for s in 20 40 80; do for l in 1 8; do
  echo "=== 1 GPU size $s lanes $l"; HALOX_MD_BUILD_LANES=$l timeout 120 $MD --gpu --size $s --steps 200 --thermo 100 --no-progress 2>&1 | grep -E "^ +(100|200) |us/step"
done; done
timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:"hxg_k_" --launch-skip 0 --launch-count 16 $MD --gpu --size 80 --steps 21 --thermo 0 --no-progress >$OUT/ncu.log 2>&1
grep -E "^  [a-z_]+.*hxg_k_|gpu__time_duration" $OUT/ncu.log | sed -E "s/\(.*//" | head -60
