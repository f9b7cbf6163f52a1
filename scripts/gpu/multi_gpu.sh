#!/usr/bin/env bash
# Several GPUs of one host (`make bench-gpus`, on the GPU machine, carrying .carry): which GPUs
# and links are here, which MPI libraries and whether they are CUDA-aware, then
# benches/bench_gpus.py (the heat example and conjugate gradients on 1, 2, 4 GPUs, eager and
# fused, each halo path the library allows) with the carried MPICH and, where one was carried,
# a CUDA-aware Open MPI.
# Usage: bash scripts/gpu/multi_gpu.sh [--gpus 4] [--sizes 8192,20480] [--steps 100] [--programs heat,cg]
set -uo pipefail
source scripts/gpu/device_setup.sh
nvidia-smi -L
nvidia-smi topo -m 2>/dev/null | head -8
rc=0
echo "== carried MPICH ($(mpichversion 2>/dev/null | head -1 | tr -s ' '))"
python3 benches/bench_gpus.py "$@" 2>&1 | tee "$OUT/bench_gpus_mpich.log" || rc=1
# The machine's own Open MPI (4.1.6 there on 2026-11-26, built without CUDA): whether it is CUDA-aware.
if command -v ompi_info > /dev/null; then
  echo "== the machine's Open MPI ($(ompi_info --version 2>/dev/null | head -1)):" \
    "$(ompi_info --parsable --all 2>/dev/null | grep -m1 'opal_built_with_cuda_support:value' || echo 'no CUDA support query')"
fi
# A CUDA-aware Open MPI, built by `make gpu-carry-cuda-mpi` (scripts/gpu/build_cuda_mpi.sh) for this
# prefix: the halo rows go to MPI as device memory (ob1 with the smcuda transport: CUDA IPC between
# the GPUs of one host), and through host copies for comparison.
if [ -x .carry/ompi-cuda/bin/mpirun ]; then
  rm -rf /tmp/ompi-cuda && cp -a .carry/ompi-cuda /tmp/ompi-cuda
  echo "== carried CUDA-aware Open MPI: $(/tmp/ompi-cuda/bin/ompi_info --parsable --all 2>/dev/null | grep -m1 'opal_built_with_cuda_support:value')"
  PATH="/tmp/ompi-cuda/bin:$PATH" LD_LIBRARY_PATH="/tmp/ompi-cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    OPAL_PREFIX=/tmp/ompi-cuda MPI4PY_LIBMPI=/tmp/ompi-cuda/lib/libmpi.so.40 \
    MPIEXEC="mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl smcuda,self" \
    python3 benches/bench_gpus.py "$@" 2>&1 | tee "$OUT/bench_gpus_openmpi_cuda.log" || rc=1
else
  echo "== no CUDA-aware MPI carried (make gpu-carry-cuda-mpi): the device-memory halo path did not run"
fi
exit $rc
