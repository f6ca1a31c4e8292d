#!/usr/bin/env bash
# tools/device-profile.sh - where the device rebuild's time goes, on the
# 2-GPU machine: the rebuild's own breakdown (HALOX_LOG=1) at three sizes,
# then kernel durations on rank 0 (Nsight Compute, rebuild kernels only)
# at 2,048,000 atoms. Expects a build in build-device (tools/device-rebuild.sh).
set -u
OUT=${OUT:-/tmp/halox-device}; mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export HALOX_TIMEOUT_S=120 NVSHMEM_SYMMETRIC_SIZE=4G
B=build-device; MD=$B/tools/halox-md
X="-x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x HALOX_TIMEOUT_S -x NVSHMEM_SYMMETRIC_SIZE -x HALOX_LOG"
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none $X"
K='regex:hxg_k_(cell|scan|build|gather|perm|adopt|force)|hxr_k'
timeout -k 5 150 $MPIRUN -n 1 ncu --clock-control none --metrics gpu__time_duration.sum -k "$K" \
  --launch-skip 0 --launch-count 400 $MD --gpu --size 80 --steps 41 --thermo 0 --no-progress : \
  -n 1 $MD --gpu --size 80 --steps 41 --thermo 0 --no-progress >"$OUT/ncu2.log" 2>&1
python3 - "$OUT/ncu2.log" <<'PY'
import re, sys, collections
tot = collections.OrderedDict(); cnt = collections.Counter(); name = None
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"^  (?:void )?([A-Za-z_][\w:]*(?:<[^(]*>)?)\(", line)
    if m:
        name = m.group(1).replace(" ", ""); continue
    m = re.search(r"gpu__time_duration.sum\s+(\w+)\s+([\d.,]+)", line)
    if m and name:
        v = float(m.group(2).replace(",", "")) * {"ms": 1e3, "us": 1.0, "ns": 1e-3}.get(m.group(1), 1.0)
        tot[name] = tot.get(name, 0.0) + v; cnt[name] += 1; name = None
for k, v in sorted(tot.items(), key=lambda kv: -kv[1])[:40]:
    print(f"{k:48s} {cnt[k]:5d} x {v / cnt[k]:10.1f} us = {v:10.1f} us")
PY
