# Sourced by the GPU scripts (GPU machine, repository root, carrying .carry from
# `make gpu-carry`): builds Serial+OpenMP+CUDA Kokkos 3.4.01 from the carried sdist
# (once per machine; kokkos_setup.py applies the CUDA 13 fixes) and installs the
# carried abi3 wheel into /tmp/site. Leaves PK_* and PYTHONPATH exported for
# pykokkos with the CUDA toolchain. Logs go to $OUT (the device tool's output folder).
OUT=${OUT:-/tmp/pk-gpu-out}
mkdir -p "$OUT"
# A per-user folder (private, 0700): never a cache others could write into.
export PK_CACHE_DIR=${PK_CACHE_DIR:-/tmp/pkc-$(id -u)}
export PK_KOKKOS_SDIST=${PK_KOKKOS_SDIST:-.carry/pykokkos-base-0.0.7.tar.gz}
export PK_BUILD_JOBS=${PK_BUILD_JOBS:-$(nproc)}
export PK_KOKKOS_CUDA=1
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1

echo "$(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader);" \
  "$(nvcc --version | tail -1); $(python3 --version); $(nproc) cores"
t0=$(date +%s)
if ! python3 python/pykokkos/install/kokkos_setup.py --cuda-only > "$OUT/kokkos_setup.log" 2>&1; then
  tail -30 "$OUT/kokkos_setup.log"
  cp "$PK_CACHE_DIR"/build/build-kokkos-3.4.01-cuda/*.log "$OUT/" 2>/dev/null
  echo "KOKKOS CUDA BUILD FAILED"
  exit 1
fi
echo "CUDA Kokkos ready in $(( $(date +%s) - t0 )) s"
shopt -s nullglob
wheels=(.carry/wheels/*.whl)
if [ ${#wheels[@]} -ne 1 ]; then
  echo "expected one wheel in .carry/wheels (make gpu-carry), found ${#wheels[@]}"
  exit 1
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "${wheels[0]}" || exit 1
# mpi4py and MPICH (make gpu-carry puts their wheels in .carry/mpi), for the several-rank part.
if compgen -G ".carry/mpi/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --find-links .carry/mpi --no-compile --no-cache-dir --target /tmp/site \
    mpi4py mpich || echo "mpi4py/MPICH did not install from .carry/mpi"
  export PATH=/tmp/site/bin:$PATH
  # The machine may have another MPI (Open MPI) that mpi4py would find first: use
  # the carried MPICH, whose mpiexec launches the ranks.
  # pip --target drops a wheel's data files (MPICH's lib/ and bin/): unpack them.
  python3 - .carry/mpi/mpich-*.whl <<'PY'
import os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for m in z.namelist():
    if ".data/data/" in m and not m.endswith("/"):
        dest = "/tmp/mpich/" + m.split(".data/data/", 1)[1]
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(z.read(m))
        if "/bin/" in dest:
            os.chmod(dest, 0o755)
PY
  export PATH=/tmp/mpich/bin:$PATH
  export MPI4PY_LIBMPI=/tmp/mpich/lib/libmpi.so.12
  export LD_LIBRARY_PATH=/tmp/mpich/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
