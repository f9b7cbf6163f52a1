"""Keeps NumPy's OpenBLAS threads from spinning long enough to starve Kokkos'.

OpenBLAS' worker threads busy-wait for about 2^28 cycles (0.1 s) after they
start and after every threaded BLAS call before they sleep. Kokkos' OpenMP
threads use every core as well, so while an OpenBLAS thread spins, a kernel's
threads share what is left: on a 2-core machine, `pk.initialize()` right
after `import numpy` took 20 ms instead of 1 ms in half the processes, and a
reduction run right after `np.dot` took 15% longer (benches/bench_fusion.py
and bench_compile.py show both).

OpenBLAS reads OPENBLAS_THREAD_TIMEOUT (log2 of the cycles it spins) once,
when NumPy loads it: so this only acts when pykokkos is imported before
NumPy, and never overrides a value the user set. 2^22 cycles (about 1.5 ms)
still keeps the threads awake between BLAS calls in a loop; a call after a
longer pause wakes them, which costs microseconds against a call big enough
to be threaded.
"""
from __future__ import annotations

import os
import sys

SPIN_LOG2_CYCLES = "22"


def shorten_spin() -> None:
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", SPIN_LOG2_CYCLES)


shorten_spin()
