#!/bin/bash
# make bench-md on the GPU machine (issue 46): the C++ Kokkos ExaMiniMD built with the
# CUDA Kokkos against PyKokkos' Python ExaMiniMD on the Cuda space, eager and fused.
# Both programs travel in .carry/md (`make gpu-carry-md CXXMD=<dir> PYMD=<dir>` here,
# after `make gpu-carry`); they are other people's code, never committed.
# Usage (repository root, carrying .carry): bash scripts/gpu/bench_md.sh [--sizes 40:100,16:100] [--runs 3]
set -u
source scripts/gpu/device_setup.sh > "$OUT/setup.log" 2>&1 || { tail -20 "$OUT/setup.log"; exit 1; }
tail -3 "$OUT/setup.log"
for d in .carry/md/ExaMiniMD .carry/md/pykokkos/examples/ExaMiniMD/standalone; do
  [ -d "$d" ] || { echo "missing $d: run make gpu-carry-md here first"; exit 1; }
done
# Two CPUs local to the GPU the runs use (CUDA_VISIBLE_DEVICES' first, else 0: its PCI
# device's local_cpulist; sysfs names the PCI domain in 4 digits) that this machine lends us.
gpu=${CUDA_VISIBLE_DEVICES:-0}
gpu=${gpu%%,*}
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i "$gpu" 2>/dev/null)
bus=$(python3 -c "import sys; d, r = sys.argv[1].strip().lower().split(':', 1); print(f'{int(d, 16):04x}:{r}')" "$bus" 2>/dev/null)
list=$(cat "/sys/bus/pci/devices/$bus/local_cpulist" 2>/dev/null || true)
cpus=$(python3 -c "import os, sys
s = sys.argv[1].strip()
c = [x for p in s.split(',') if p for x in range(int(p.split('-')[0]), int(p.split('-')[-1]) + 1)]
print(','.join(map(str, [x for x in c if x in os.sched_getaffinity(0)][:2])))" "$list" 2>/dev/null)
echo "GPU $gpu at $bus; CPUs local to it: ${list:-unknown}; runs pinned to: ${cpus:-none}"
python3 benches/bench_examinimd.py --space Cuda ${cpus:+--cpus $cpus} --cxx .carry/md/ExaMiniMD --py .carry/md/pykokkos "$@"
