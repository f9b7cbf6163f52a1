#!/usr/bin/env bash
# GPU machine, repository root, carrying .carry (make gpu-carry): CUDA Kokkos from the
# carried sdist, the carried wheel, then scripts/gpu/cuda_fusion.py. Exit 0 only if it passed.
set -uo pipefail
export PK_CACHE_DIR=${PK_CACHE_DIR:-/tmp/pkc}
export PK_KOKKOS_SDIST=${PK_KOKKOS_SDIST:-.carry/pykokkos-base-0.0.7.tar.gz}
export PK_BUILD_JOBS=${PK_BUILD_JOBS:-$(nproc)}
nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader
python3 python/pykokkos/kokkos_setup.py --cuda-only > /tmp/kokkos_setup.log 2>&1 || { tail -30 /tmp/kokkos_setup.log; exit 1; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .carry/wheels/*.whl || exit 1
PYTHONPATH=/tmp/site PK_KOKKOS_CUDA=1 PYTHONUNBUFFERED=1 python3 scripts/gpu/cuda_fusion.py
