#!/usr/bin/env bash
# `make fuzz-gpu` on the GPU machine (carrying .carry): the differential fuzzer (tests/test_fuzz.py:
# random programs eager, fused and unfused against NumPy) with the Cuda space as the default
# space, 3000 new programs per test (PK_FUZZ_EXAMPLES). Device-only states (a View whose only
# copy is on the GPU) are what it adds over the host's `make fuzz`.
set -uo pipefail
source scripts/gpu/device_setup.sh
export PK_TEST_SPACE=cuda PK_FUZZ_RANDOM=1 PK_FUZZ_EXAMPLES=${PK_FUZZ_EXAMPLES:-3000}
python3 -m pytest -q -p no:cacheprovider -p no:benchmark -n 4 tests/test_fuzz.py "$@" 2>&1 | tee "$OUT/fuzz_gpu.log"
exit "${PIPESTATUS[0]}"
