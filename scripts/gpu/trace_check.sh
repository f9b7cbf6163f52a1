#!/usr/bin/env bash
# On the GPU machine (after device_setup.sh): the demo traced on the Cuda space, then
# the trace tools on it: summary, replay unfused and fused on Cuda, compile-only.
set -uo pipefail
source scripts/gpu/device_setup.sh
T="$OUT/demo_cuda.jsonl"
rc=0
PK_FUSE=1 PK_TRACE="$T" python3 -c "
import runpy, sys
import pykokkos as pk
pk.set_default_space(pk.Cuda)
sys.argv = ['examples/demo.py']
runpy.run_path('examples/demo.py', run_name='__main__')
" > "$OUT/demo_cuda.log" 2>&1 || { tail -20 "$OUT/demo_cuda.log"; rc=1; }
python3 -m pykokkos trace summary "$T" --top 5 || rc=1
python3 -m pykokkos replay "$T" --space Cuda --both --repeat 2 || rc=1
python3 -m pykokkos replay "$T" --space Cuda --compile-only || rc=1
exit $rc
