#!/usr/bin/env bash
# `make test-gpu` on the GPU machine (see scripts/gpu/README.md): the whole pytest suite
# with the Cuda space as the default space (PK_TEST_SPACE=cuda), in parallel over the
# machine's cores. tests/test_cuda_device.py runs only here; host-only tests (the host
# toolchain's precompiled header, a build without CUDA) are deselected.
# Exit status: pytest's (0 only if tests ran and all passed).
set -uo pipefail
source scripts/gpu/device_setup.sh
# The random-program test compiles a kernel per new region (about 0.1 s through NVRTC);
# 200 examples here, 3000 in `make fuzz-gpu` (scripts/gpu/fuzz_gpu.sh).
export PK_FUZZ_EXAMPLES=${PK_FUZZ_EXAMPLES:-200}
export PK_TEST_SPACE=cuda
t0=$(date +%s)
python3 -m pytest -q -p no:cacheprovider -p no:benchmark -n "${PK_TEST_JOBS:-$(nproc)}" --dist loadfile \
  --junitxml="$OUT/junit.xml" "$@" tests 2>&1 | tee "$OUT/pytest.log"
rc=${PIPESTATUS[0]}
echo "pytest on the Cuda space: exit $rc in $(( $(date +%s) - t0 )) s"
cp "$PK_CACHE_DIR"/failed/*.cpp "$OUT/" 2>/dev/null
# Several ranks on the Cuda space: each on its node-local GPU, result equal to NumPy's and to one rank's.
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
if python3 -c "import mpi4py" 2>/dev/null && command -v mpiexec > /dev/null; then
  if [ "$gpus" -ge 2 ]; then echo "$gpus GPUs: 2 ranks, one GPU each"; else
    echo "only $gpus GPU here: both ranks share GPU 0 (one GPU per rank needs a 2-GPU machine, nvidia-h200-x2)"; fi
  # pykokkos.mpi.exchange on every path this machine offers (tests/mpi_ranks/halo_paths.py).
  for fuse in 0 1; do
    out=$(cd tests/mpi_ranks && PK_TEST_SPACE=cuda PK_FUSE=$fuse timeout 300 mpiexec -n 2 python3 -m mpi4py halo_paths.py 2>&1)
    echo "$out" | tee -a "$OUT/mpi.log" | tail -4
    [ "$(echo "$out" | grep -c 'halo path ipc ok')" = 2 ] && [ "$(echo "$out" | grep -c 'halo path host ok')" = 2 ] || rc=1
  done
  # Halo rows by CUDA IPC (pykokkos.mpi.exchange's path between the GPUs of one host) and by host copies.
  for run in "0 ipc" "1 ipc" "0 host" "1 host"; do
    set -- $run; fuse=$1; halos=$2
    out=$(PK_FUSE=$fuse mpiexec -n 2 python3 -m mpi4py examples/mpi/heat2d.py 512 50 --cuda --halos $halos --check --speedup 2>&1)
    echo "$out" | tee -a "$OUT/mpi.log" | tail -7
    echo "$out" | grep -q "equal to NumPy's run" && echo "$out" | grep -q "halos: $halos" || rc=1
    # With two GPUs each rank must have its own (describe() prints each rank's).
    if [ "$gpus" -ge 2 ] && ! { echo "$out" | grep -q ", GPU 0," && echo "$out" | grep -q ", GPU 1,"; }; then
      echo "FAILED: the 2 ranks did not take GPU 0 and GPU 1"; rc=1
    fi
  done
else
  echo "mpi4py/mpiexec missing (make gpu-carry puts them in .carry/mpi): the several-rank part did not run"
fi
exit $rc
