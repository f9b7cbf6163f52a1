"""The byte bound `trace summary` compares kernels with: the best rate of a
parallel copy kernel over 2^25 doubles on this machine (bytes read plus
written), in the default execution space."""

from __future__ import annotations

import time

from ..runtime._kernels import workunit
from ..runtime._launch import fence, parallel_for
from ..runtime._views import View


@workunit
def _copy(i, dst, src):
    dst[i] = src[i]


def copy_bandwidth(n: int = 1 << 25, reps: int = 5) -> float:
    src, dst = View([n], float), View([n], float)
    src.fill(1.0)
    parallel_for(n, _copy, dst=dst, src=src)  # compiles, touches the memory
    fence()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        parallel_for(n, _copy, dst=dst, src=src)
        fence()
        best = min(best, time.perf_counter() - t0)
    return 2 * 8 * n / best / 1e9
