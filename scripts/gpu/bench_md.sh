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
python3 benches/bench_examinimd.py --space Cuda --cxx .carry/md/ExaMiniMD --py .carry/md/pykokkos "$@"
