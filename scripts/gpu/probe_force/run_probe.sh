# Where ExaMiniMD's GPU time goes, next to C++ (issue 46). On the GPU machine, repository root,
# carrying .carry (make gpu-carry, then make gpu-carry-md): bash scripts/gpu/probe_force/run_probe.sh
# 1. our force kernel (its NVRTC form, generated for the real views) on the real neighbour list
#    of 256,000 atoms: as built, with read-only loads (__ldg), with 256-thread blocks, --fmad off/on;
# 2. ExaMiniMD at 16,384 atoms eager and fused, traced: flushes, recording, planning;
# 3. the 256,000-atom eager loop traced without blocking: launch calls that waited, host time.
set -u
R=$(pwd); P=$R/scripts/gpu/probe_force; D=/tmp/pf; mkdir -p $D
source scripts/gpu/device_setup.sh > "$OUT/setup.log" 2>&1 || { tail -20 "$OUT/setup.log"; exit 1; }
python3 - <<PY
import sys; sys.path.insert(0, "benches"); import bench_examinimd as b
open("$D/in.lj", "w").write(b.INPUT.format(n=${NCELL:-40}, steps=100))
PY
PK_EXA_SPACE=Cuda python3 $P/dump.py $R/.carry/md/pykokkos/examples/ExaMiniMD/standalone $D -il $D/in.lj --fill | tail -2
python3 $P/variants.py $D
ARCH=$(python3 -c "import pykokkos as pk; print(pk.config()['cuda_arch'])")
for v in ${VARIANTS:-base base_lb256 ldg ldg_lb256 i32 ldg_i32}; do
  for fmad in ${FMADS:-false true}; do
    cp $D/$v.cu $D/kernel.cu
    nvcc -std=c++17 -O3 -arch=$ARCH --fmad=$fmad -I$D -o $D/p_${v}_${fmad} $P/main.cu -lnvrtc -lcuda 2> $D/nvcc.log || { tail -5 $D/nvcc.log; continue; }
    b=128; [[ $v == *lb256 ]] && b=256
    $D/p_${v}_${fmad} $D $b "$v fmad=$fmad"
    [ "$fmad" = false ] && $D/p_${v}_${fmad} $D $b "$v NVRTC" nvrtc $ARCH
  done
done
# The context's cache preference as Kokkos sets it, then the kernel's own (the runtime's fix).
cp $D/base.cu $D/kernel.cu
nvcc -std=c++17 -O3 -arch=$ARCH --fmad=false -I$D -o $D/p_cache $P/main.cu -lnvrtc -lcuda 2> $D/nvcc.log || tail -5 $D/nvcc.log
PROBE_DEVICE_SHARED=1 $D/p_cache $D 128 "context prefers shared"
PROBE_DEVICE_SHARED=1 PROBE_FUNC_L1=1 $D/p_cache $D 128 "... kernel prefers L1"
PROBE_DEVICE_SHARED=1 $D/p_cache $D 128 "NVRTC, context shared" nvrtc $ARCH
PROBE_DEVICE_SHARED=1 PROBE_FUNC_L1=1 $D/p_cache $D 128 "NVRTC, ... kernel L1" nvrtc $ARCH
# The same harness inside one Python process, before pykokkos starts and after the whole program.
cp $D/base.cu $D/kernel.cu
nvcc -std=c++17 -O3 -arch=$ARCH --fmad=false -I$D -Xcompiler -fPIC -shared -DPK_PROBE_LIB -o $D/libprobe.so $P/main.cu -lnvrtc -lcuda 2> $D/nvcc.log || tail -5 $D/nvcc.log
PK_EXA_SPACE=Cuda python3 $P/inproc.py $D/libprobe.so $D $R/.carry/md/pykokkos/examples/ExaMiniMD/standalone -il $D/in.lj --fill | grep -E "in process|PERFORMANCE"
[ -n "${FORCE_ONLY:-}" ] && exit 0
# ExaMiniMD at 16,384 atoms, eager and fused, traced (not blocking): where the fused run's time goes.
python3 - <<PY
import sys; sys.path.insert(0, "benches"); import bench_examinimd as b
open("$D/in16.lj", "w").write(b.INPUT.format(n=16, steps=100))
PY
cd $R/.carry/md/pykokkos/examples/ExaMiniMD/standalone
for m in 0 1; do
  for k in 1 2; do PK_EXA_SPACE=Cuda PK_FUSE=$m python3 src/main.py -il $D/in16.lj --fill | tail -1; done
  PK_TRACE=$D/t16_$m.jsonl PK_EXA_SPACE=Cuda PK_FUSE=$m python3 src/main.py -il $D/in16.lj --fill | tail -1
done
python3 $P/flushes.py $D/t16_0.jsonl $D/t16_1.jsonl
cp $D/t16_0.jsonl $D/t16_1.jsonl "$OUT/"  # for python -m pykokkos trace summary here
# ExaMiniMD at 256,000 atoms, eager, traced without blocking: which launch calls wait for the GPU.
cd $R/.carry/md/pykokkos/examples/ExaMiniMD/standalone
PK_TRACE=$D/t256_0.jsonl PK_EXA_SPACE=Cuda PK_FUSE=0 python3 src/main.py -il $D/in.lj --fill | tail -1
python3 $P/stalls.py $D/t256_0.jsonl
