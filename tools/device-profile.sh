#!/usr/bin/env bash
# Baseline profile of the rebuild (one call on the 2-GPU machine).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 HALOX_TIMEOUT_S=10 NVSHMEM_SYMMETRIC_SIZE=4G
B=build-device
nvidia-smi topo -m | head -5
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHALOX_WITH_CUDA=ON -DHALOX_WITH_MPI=ON -DHALOX_WITH_NCCL=ON -DHALOX_WITH_NVSHMEM=ON >$OUT/cfg.log 2>&1
cmake --build $B -j 32 >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
MD=$B/tools/halox-md
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x HALOX_TIMEOUT_S -x NVSHMEM_SYMMETRIC_SIZE -x HALOX_LOG -x HALOX_MD_HOST_REBUILD"
for s in 20 40 80; do
  echo "=== 1 GPU size $s"; HALOX_LOG=1 timeout 120 $MD --gpu --size $s --steps 200 --thermo 0 --no-progress 2>&1 | grep -E "us/step|rebuild|Neigh|neigh|Pair|Comm|Other|Modify|Output" 
  echo "=== 1 GPU host rebuild size $s"; HALOX_LOG=1 HALOX_MD_HOST_REBUILD=1 timeout 120 $MD --gpu --size $s --steps 200 --thermo 0 --no-progress 2>&1 | grep -E "us/step|rebuild"
  echo "=== 2 GPU size $s"; HALOX_LOG=1 timeout 120 $MPIRUN -n 2 $MD --gpu --size $s --steps 200 --thermo 0 --no-progress 2>&1 | grep -E "us/step|rebuild"
done
echo "=== ncu 1 GPU size 80"
timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:"hxg_k_" --launch-skip 0 --launch-count 40 $MD --gpu --size 80 --steps 41 --thermo 0 --no-progress >$OUT/ncu.log 2>&1
grep -E "^  [a-z_]+.*hxg_k_|gpu__time_duration" $OUT/ncu.log | sed -E "s/\(.*//" | head -120
