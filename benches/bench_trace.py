"""(i) Profiling traces: what recording costs. The same loop of launches with
and without `pk.trace.record`, eagerly and under PK_FUSE=1: tiny kernels
(10 elements: recording's cost per launch shows whole) and kernels over
2^20 doubles (a run whose kernels do work). The one-time cost of storing
each buffer's data (once per buffer, at its first launch) is not in the
loop: its disk writes are synced before the timing starts."""
from __future__ import annotations

import os
import tempfile
import time

import pykokkos as pk


@pk.workunit
def tr_axpy(i, a, x, y):
    y[i] = a * x[i] + y[i]


def _loop(n: int, launches: int) -> float:
    x, y = pk.View([n], pk.double), pk.View([n], pk.double)
    for _ in range(20):
        pk.parallel_for(n, tr_axpy, a=0.5, x=x, y=y)
        pk.parallel_for(n, tr_axpy, a=0.25, x=y, y=x)
    pk.flush()
    # A trace stores each buffer's data when it first sees it (here, in the
    # warm-up): written back to disk while the loop runs, those pages would
    # be counted as the launches' recording cost. Both modes sync alike.
    os.sync()
    t0 = time.perf_counter()
    for _ in range(launches // 2):
        pk.parallel_for(n, tr_axpy, a=0.5, x=x, y=y)
        pk.parallel_for(n, tr_axpy, a=0.25, x=y, y=x)
    pk.flush()
    return time.perf_counter() - t0


def _pair(n: int, launches: int, reps: int = 7) -> tuple[float, float]:
    """Best of `reps` rounds each, traced and untraced rounds alternating."""
    plain = traced = float("inf")
    with tempfile.TemporaryDirectory() as d:
        for _ in range(reps):
            plain = min(plain, _loop(n, launches))
            with pk.trace.record(os.path.join(d, "t.jsonl")):
                traced = min(traced, _loop(n, launches))
    return plain, traced


def main() -> dict:
    out = {}
    for lazy in (False, True):
        pk._native.set_lazy(lazy)
        mode = "lazy" if lazy else "eager"
        for size, n, launches in (("tiny", 10, 4000), ("big", 1 << 20, 400)):
            plain, traced = _pair(n, launches)
            out[f"{mode}_{size}_plain_s"] = plain
            out[f"{mode}_{size}_traced_s"] = traced
            out[f"{mode}_{size}_overhead"] = traced / plain - 1.0
    pk._native.set_lazy(False)
    return out


if __name__ == "__main__":
    for k, v in main().items():
        print(f"{k:32s} {v:10.4f}")
