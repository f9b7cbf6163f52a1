"""`import pykokkos` shortens the idle spin of NumPy's OpenBLAS threads (see
pykokkos/runtime/_openblas.py) when it is the one to load NumPy, leaving the
environment as it was. Each case runs in a fresh interpreter: OpenBLAS reads
its settings once."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

# The children run without PK_FUSE: one run of each test, not one per mode.
pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/task"),
              pytest.mark.eager_only]

# CPU seconds of the threads other than the main one (OpenBLAS' workers:
# nothing here starts Kokkos) 0.3 s after the imports, and how many there are.
# A fresh OpenBLAS worker spins about 0.1 s before it sleeps unless told
# otherwise; told 2^22 cycles, about 2 ms. schedstat counts nanoseconds (stat
# counts clock ticks of 10 ms).
IDLE_CPU = """
import os, time
time.sleep(0.3)
cpu, workers = 0.0, 0
for tid in os.listdir("/proc/self/task"):
    if int(tid) == os.getpid():
        continue
    workers += 1
    try:
        cpu += int(open(f"/proc/self/task/{tid}/schedstat").read().split()[0]) * 1e-9
    except OSError:
        f = open(f"/proc/self/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        cpu += (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'), cpu, workers)
"""


def _fresh(imports: str, **env: str) -> tuple[str, float, int]:
    e = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_THREAD_TIMEOUT", "OMP_NUM_THREADS")}
    # Two OpenBLAS threads (one worker) whatever the machine: the worker's
    # spin is then the same size on 2 cores and on 64.
    e["OPENBLAS_NUM_THREADS"] = "2"
    e.update(env)
    out = subprocess.run([sys.executable, "-c", imports + IDLE_CPU], env=e, capture_output=True, text=True,
                         check=True).stdout.split()
    return out[0], float(out[1]), int(out[2])


def test_pykokkos_first_shortens_the_spin_and_restores_the_environment():
    seen, ours, workers = _fresh("import pykokkos, numpy\n")
    assert seen == "None"  # child processes inherit the user's environment
    # The control: NumPy first, so OpenBLAS starts with its own spin.
    _, control, control_workers = _fresh("import numpy, pykokkos\n")
    if control_workers == 0 or control < 0.02:
        pytest.skip("this NumPy starts no spinning BLAS worker (not OpenBLAS, or one CPU)")
    assert workers == control_workers
    assert ours < control / 4


@pytest.mark.parametrize("imports, env, expected", [
    ("import pykokkos\n", {"OPENBLAS_THREAD_TIMEOUT": "9"}, "9"),  # the user's value stays
    ("import numpy, pykokkos\n", {}, "None"),  # NumPy first: nothing to do, nothing set
])
def test_environment_left_as_the_user_set_it(imports, env, expected):
    assert _fresh(imports, **env)[0] == expected
