#!/usr/bin/env bash
# Several GPUs of one host (`make bench-gpus`, on the GPU machine, carrying .carry): which GPUs
# and links are here, which MPI libraries and whether they are CUDA-aware, then
# benches/bench_gpus.py (the heat example on 1 and 2 GPUs, eager and fused, each halo path
# the library allows) with the carried MPICH and, where the machine has one, its own Open MPI.
# Usage: bash scripts/gpu/multi_gpu.sh [N] [STEPS]
set -uo pipefail
source scripts/gpu/device_setup.sh
nvidia-smi -L
nvidia-smi topo -m 2>/dev/null | head -8
rc=0
echo "== carried MPICH ($(mpichversion 2>/dev/null | head -1 | tr -s ' '))"
python3 benches/bench_gpus.py "$@" 2>&1 | tee "$OUT/bench_gpus_mpich.log" || rc=1
# The machine's own Open MPI, if it has one: mpi4py's wheels load either library.
lib=$(find /usr /opt -name 'libmpi.so.40' 2>/dev/null | head -1)
if [ -n "$lib" ]; then
  prefix=$(dirname "$(dirname "$lib")")
  run=$(command -v "$prefix/bin/mpirun" || true)
  aware=$("$prefix/bin/ompi_info" --parsable --all 2>/dev/null | grep -m1 'mpi_built_with_cuda_support:value' || true)
  echo "== Open MPI at $prefix ($("$prefix/bin/ompi_info" --version 2>/dev/null | head -1)); ${aware:-no CUDA support query}"
  if [ -n "$run" ]; then
    PATH="$prefix/bin:$PATH" LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      MPI4PY_LIBMPI="$lib" MPIEXEC="$run --allow-run-as-root --oversubscribe" \
      python3 benches/bench_gpus.py "$@" 2>&1 | tee "$OUT/bench_gpus_openmpi.log" || rc=1
  else
    echo "no mpirun beside it: not run"
  fi
else
  echo "== no Open MPI on this machine: the device-memory path needs a CUDA-aware MPI library"
fi
exit $rc
