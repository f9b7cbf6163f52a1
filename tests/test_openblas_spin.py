"""`import pykokkos` shortens the idle spin of NumPy's OpenBLAS threads (see
pykokkos/_openblas.py) when it is the one to load NumPy, leaving the
environment as it was. Each case runs in a fresh interpreter: OpenBLAS reads
its settings once."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/task")

# CPU time of the threads other than the main one (OpenBLAS' workers: nothing
# here starts Kokkos) by 0.3 s after the imports. A fresh OpenBLAS worker spins
# about 0.1 s unless told otherwise (0.05 s or more of CPU on an idle 2-core
# machine); told to sleep after 2^22 cycles, it burns under a clock tick.
IDLE_CPU = """
import os, time
time.sleep(0.3)
other = 0.0
for tid in os.listdir("/proc/self/task"):
    if int(tid) != os.getpid():
        f = open(f"/proc/self/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        other += (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'), other)
"""


def _fresh(imports: str, **env: str) -> tuple[str, float]:
    e = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_THREAD_TIMEOUT", "OPENBLAS_NUM_THREADS",
                                                          "OMP_NUM_THREADS")}
    e.update(env)
    out = subprocess.run([sys.executable, "-c", imports + IDLE_CPU], env=e, capture_output=True, text=True,
                         check=True).stdout.split()
    return out[0], float(out[1])


def test_pykokkos_first_shortens_the_spin_and_restores_the_environment():
    seen, spin = _fresh("import pykokkos, numpy\n")
    assert seen == "None"  # child processes inherit the user's environment
    assert spin < 0.03


@pytest.mark.parametrize("imports, env, expected", [
    ("import pykokkos\n", {"OPENBLAS_THREAD_TIMEOUT": "9"}, "9"),  # the user's value stays
    ("import numpy, pykokkos\n", {}, "None"),  # NumPy first: nothing to do, nothing set
])
def test_environment_left_as_the_user_set_it(imports, env, expected):
    assert _fresh(imports, **env)[0] == expected
