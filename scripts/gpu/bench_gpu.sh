#!/usr/bin/env bash
# `make bench-gpu` on the GPU machine: benches/bench_gpu.py (launch overhead, triad vs
# copy bandwidth, eager vs fused) after the same setup as `make test-gpu`.
set -uo pipefail
source scripts/gpu/device_setup.sh
python3 benches/bench_gpu.py 2>&1 | tee "$OUT/bench_gpu.log"
exit "${PIPESTATUS[0]}"
