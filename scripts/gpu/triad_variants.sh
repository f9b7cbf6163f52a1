#!/usr/bin/env bash
# GPU machine, repository root, after the CUDA Kokkos exists (make test-gpu builds it):
# builds and runs triad_variants.cpp (triad code shapes vs copy bandwidth, launch costs).
set -euo pipefail
PREFIX=${PK_CACHE_DIR:-/tmp/pkc-$(id -u)}/kokkos-3.4.01-cuda
ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
"$PREFIX/bin/nvcc_wrapper" -std=c++17 -O3 -arch=$ARCH --fmad=false --expt-extended-lambda \
  -I"$PREFIX/include" -Xcompiler -fopenmp scripts/gpu/triad_variants.cpp -o /tmp/triad_variants \
  -L"$PREFIX/lib" -Wl,-rpath,"$PREFIX/lib" -lkokkoscore
/tmp/triad_variants
