#!/usr/bin/env bash
# Run on the GPU machine from the repository root (see scripts/gpu/README.md):
#   1. builds Serial+OpenMP+CUDA Kokkos from the carried sdist (kokkos_setup.py --cuda-only),
#   2. compiles scripts/gpu/smoke.cpp with nvcc_wrapper for the GPU's arch, as an executable
#      and as dlopen'ed shared libraries (static and shared cudart), and runs them,
#   3. if a wheel is carried in .carry/wheels: installs it and runs host kernels through
#      `import pykokkos` with PK_KOKKOS_CUDA=1 (the nvcc toolchain path), then
#      scripts/gpu/cuda_views.py (kernels in the Cuda space on device-mirrored views).
# Logs go to $OUT (or /tmp/pk-gpu-out). Exit status: 0 only if every step passed.
set -uo pipefail
OUT=${OUT:-/tmp/pk-gpu-out}
mkdir -p "$OUT"
export PK_CACHE_DIR=${PK_CACHE_DIR:-/tmp/pkc}
export PK_KOKKOS_SDIST=${PK_KOKKOS_SDIST:-.carry/pykokkos-base-0.0.7.tar.gz}
export PK_BUILD_JOBS=${PK_BUILD_JOBS:-$(nproc)}
PREFIX=$PK_CACHE_DIR/kokkos-3.4.01-cuda
status=0
step() { echo; echo "=== $* ==="; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
since() { local d=$(( $(now_ms) - $1 )); printf "%d.%03d" $((d / 1000)) $((d % 1000)); }

step environment
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
nvcc --version | tail -2
g++ --version | head -1
cmake --version | head -1
echo "ninja $(ninja --version); $(python3 --version); $(nproc) cores"
ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
echo "arch: $ARCH"

step "Kokkos build (CUDA)"
t0=$(now_ms)
if ! python3 python/pykokkos/kokkos_setup.py --cuda-only 2>&1 | tee "$OUT/kokkos_setup.log"; then
  echo "KOKKOS CUDA BUILD FAILED"
  cp "$PK_CACHE_DIR"/build/build-kokkos-3.4.01-cuda/*.log "$OUT/" 2>/dev/null
  exit 1
fi
echo "kokkos_setup.py --cuda-only: $(since $t0) s wall"
grep -E "define KOKKOS_(VERSION|ENABLE_(SERIAL|OPENMP|CUDA|CUDA_LAMBDA)|ARCH_)" "$PREFIX/include/KokkosCore_config.h"
ls -l "$PREFIX/bin/nvcc_wrapper" "$PREFIX/lib/libkokkoscore.so"
echo "libkokkoscore.so needs: $(ldd "$PREFIX/lib/libkokkoscore.so" | grep -E 'cuda|gomp' | awk '{print $1, $3}' | tr '\n' ' ')"
echo "cudaMalloc defined inside libkokkoscore.so (static cudart): $(nm -D --defined-only "$PREFIX/lib/libkokkoscore.so" | grep -c ' cudaMalloc$')"

step "smoke program (nvcc_wrapper -arch=$ARCH)"
W="$PREFIX/bin/nvcc_wrapper"
FLAGS=(-std=c++17 -O3 -arch=$ARCH --expt-extended-lambda --expt-relaxed-constexpr -I"$PREFIX/include")
LINK=(-L"$PREFIX/lib" -Wl,-rpath,"$PREFIX/lib" -lkokkoscore)
B=/tmp/pk-smoke; mkdir -p $B
t0=$(now_ms)
"$W" "${FLAGS[@]}" -Xcompiler -fopenmp -DPK_SMOKE_MAIN scripts/gpu/smoke.cpp -o $B/smoke "${LINK[@]}" > $B/exe.log 2>&1 &
"$W" "${FLAGS[@]}" -Xcompiler -fPIC,-fopenmp -shared scripts/gpu/smoke.cpp -o $B/libsmoke_static.so "${LINK[@]}" > $B/static.log 2>&1 &
"$W" "${FLAGS[@]}" -Xcompiler -fPIC,-fopenmp -shared scripts/gpu/smoke.cpp -o $B/libsmoke_shared.so "${LINK[@]}" -cudart shared > $B/shared.log 2>&1 &
gcc -O2 scripts/gpu/smoke_loader.c -o $B/loader -ldl
wait
echo "three parallel nvcc_wrapper compiles: $(since $t0) s wall"
for v in exe static shared; do
  grep -iE "error|warning" $B/$v.log | head -5
done
for run in "$B/smoke" "$B/loader $B/libsmoke_static.so" "$B/loader $B/libsmoke_shared.so"; do
  echo "--- $run"
  if ! $run; then echo "SMOKE FAILED: $run"; status=1; fi
done
echo "libsmoke_shared.so needs: $(ldd $B/libsmoke_shared.so | grep -E 'cudart' | awk '{print $1, $3}')"

step "pykokkos host kernels through nvcc (PK_KOKKOS_CUDA=1)"
shopt -s nullglob
wheels=(.carry/wheels/*.whl)
if [ ${#wheels[@]} -eq 0 ]; then
  echo "no wheel carried in .carry/wheels: skipped"
else
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "${wheels[@]}" || status=1
  if ! PYTHONPATH=/tmp/site PK_KOKKOS_CUDA=1 PYTHONUNBUFFERED=1 python3 scripts/gpu/pk_host_kernel.py 2>&1 | tee "$OUT/pk_host_kernel.log"; then
    echo "PK HOST KERNELS FAILED"; status=1
    cp "$PK_CACHE_DIR"/failed/*.cpp "$OUT/" 2>/dev/null
  fi
  ls -la "$PK_CACHE_DIR"/kernels | head

  step "pykokkos kernels in the Cuda space with device views (cuda_views.py)"
  if ! PYTHONPATH=/tmp/site PK_KOKKOS_CUDA=1 PYTHONUNBUFFERED=1 python3 scripts/gpu/cuda_views.py 2>&1 | tee "$OUT/cuda_views.log"; then
    echo "PK CUDA VIEWS FAILED"; status=1
    cp "$PK_CACHE_DIR"/failed/*.cpp "$OUT/" 2>/dev/null
  fi

  step "eager vs fused on the Cuda space (cuda_fusion.py)"
  if ! PYTHONPATH=/tmp/site PK_KOKKOS_CUDA=1 PYTHONUNBUFFERED=1 python3 scripts/gpu/cuda_fusion.py 2>&1 | tee "$OUT/cuda_fusion.log"; then
    echo "PK CUDA FUSION FAILED"; status=1
  fi
fi

step "result"
[ $status -eq 0 ] && echo "DEVICE CHECK PASSED" || echo "DEVICE CHECK FAILED"
exit $status
