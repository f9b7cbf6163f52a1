#!/usr/bin/env bash
# A CUDA-aware Open MPI for the GPU machine (`make gpu-carry-cuda-mpi`, here, where the package
# registries are): neither the carried MPICH wheel nor the machine's own Open MPI 4.1.6 takes
# device pointers, so the heat example's device-memory halo path has nothing to run on there.
# Builds Debian's Open MPI 4.1.4 source with CUDA support (cuda.h from NVIDIA's runtime wheel;
# Open MPI opens libcuda at run time, so no toolkit is needed here) into .carry/ompi-cuda,
# for prefix /tmp/ompi-cuda on the GPU machine (scripts/gpu/multi_gpu.sh puts it there).
# About 15 minutes on 2 cores; skipped when .carry/ompi-cuda is there.
set -euo pipefail
dest=$PWD/.carry/ompi-cuda
[ -x "$dest/bin/mpirun" ] && { echo "$dest is there"; exit 0; }
py=${PY:-.venv/bin/python}
work=$(mktemp -d /tmp/pk-ompi-XXXXXX)
trap 'rm -rf "$work"' EXIT
# The source: Debian's (a deb-src list of our own, so the system's apt set-up stays as it is).
mkdir -p "$work/apt/lists/partial" "$work/src"
echo "deb-src http://deb.debian.org/debian bookworm main" > "$work/apt/src.list"
apt=(-o Dir::Etc::SourceList="$work/apt/src.list" -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$work/apt/lists")
apt-get -qq "${apt[@]}" update
(cd "$work/src" && apt-get -qq "${apt[@]}" source --download-only openmpi=4.1.4-3)
tar -xJf "$work"/src/openmpi_4.1.4.orig.tar.xz -C "$work"
# cuda.h (driver API) for configure and the CUDA support code.
"$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux2014_x86_64 -d "$work/whl" "nvidia-cuda-runtime-cu12==12.9.79"
(cd "$work" && unzip -q -o whl/*.whl 'nvidia/cuda_runtime/include/*' && mkdir -p cuda && mv nvidia/cuda_runtime/include cuda/)
cd "$work/openmpi-4.1.4"
./configure -q --prefix=/tmp/ompi-cuda --with-cuda="$work/cuda" --disable-mpi-fortran --disable-oshmem \
  --without-ucx --without-verbs --without-ofi --with-hwloc=internal --with-libevent=internal \
  --with-pmix=internal --disable-static --enable-shared > "$work/configure.log" 2>&1 || { tail -30 "$work/configure.log"; exit 1; }
make -s -j"$(nproc)" > "$work/make.log" 2>&1 || { tail -30 "$work/make.log"; exit 1; }
make -s install DESTDIR="$work/root" > /dev/null 2>&1
strip --strip-unneeded "$work"/root/tmp/ompi-cuda/lib/*.so* "$work"/root/tmp/ompi-cuda/lib/openmpi/*.so 2>/dev/null || true
rm -rf "$work"/root/tmp/ompi-cuda/share/man "$work"/root/tmp/ompi-cuda/include
mkdir -p "$(dirname "$dest")"
mv "$work/root/tmp/ompi-cuda" "$dest"
LD_LIBRARY_PATH="$dest/lib" OPAL_PREFIX="$dest" "$dest/bin/ompi_info" --parsable --all | grep -q "opal_built_with_cuda_support:value:true" \
  || { echo "Open MPI built without CUDA support"; exit 1; }
echo "CUDA-aware Open MPI in $dest ($(du -sh "$dest" | cut -f1))"
