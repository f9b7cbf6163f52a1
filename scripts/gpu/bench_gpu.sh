#!/usr/bin/env bash
# `make bench-gpu` on the GPU machine: benches/bench_gpu.py (launch overhead, triad vs
# copy bandwidth, eager vs fused) after the same setup as `make test-gpu`.
set -uo pipefail
source scripts/gpu/device_setup.sh
python3 benches/bench_gpu.py 2>&1 | tee "$OUT/bench_gpu.log"
rc=${PIPESTATUS[0]}
# pykokkos.numba on the GPU, checked against Numba's outputs recorded by `make gpu-carry`.
if [ -f .carry/numba_ref.json ]; then
  python3 benches/bench_numba.py --cuda --ref .carry/numba_ref.json 2>&1 | tee "$OUT/bench_numba.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
fi
exit "$rc"
