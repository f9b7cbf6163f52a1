"""Keeps NumPy's OpenBLAS threads from spinning long enough to starve Kokkos'.

OpenBLAS' worker threads busy-wait for about 2^28 cycles (0.1 s) after they
start and after every threaded BLAS call before they sleep. Kokkos' OpenMP
threads use every core as well, so while an OpenBLAS thread spins, a kernel's
threads share what is left: on a 2-core machine, `pk.initialize()` right
after `import numpy` took 20 ms instead of 1 ms in half the processes, and a
reduction run right after `np.dot` took 15% longer.

OpenBLAS reads OPENBLAS_THREAD_TIMEOUT (log2 of the cycles it spins) once,
when NumPy loads it. So the value is set only when pykokkos is the one to
import NumPy, never over a value the user set, and taken out of the
environment again once NumPy is loaded (child processes see the user's
environment). 2^22 cycles (about 1.5 ms) still keeps the threads awake
between BLAS calls in a loop; a call after a longer pause wakes them, which
costs microseconds against a call big enough to be threaded.
"""

from __future__ import annotations

import os
import sys

VARIABLE = "OPENBLAS_THREAD_TIMEOUT"
SPIN_LOG2_CYCLES = "22"


def load_numpy() -> None:
    """Imports NumPy, with the short spin if this import is what loads OpenBLAS."""
    ours = "numpy" not in sys.modules and VARIABLE not in os.environ
    try:
        if ours:
            os.environ[VARIABLE] = SPIN_LOG2_CYCLES
        import numpy  # noqa: F401
    finally:
        # Only our own value goes: another thread may have set or removed it.
        if ours and os.environ.get(VARIABLE) == SPIN_LOG2_CYCLES:
            os.environ.pop(VARIABLE, None)


load_numpy()
