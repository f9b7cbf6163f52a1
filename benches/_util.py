"""Small helpers shared by the benchmarks (timing loops, environment)."""
from __future__ import annotations

import os
import statistics
import time


def _pct(sorted_xs: list, q: float) -> float:
    return sorted_xs[min(len(sorted_xs) - 1, int(q * len(sorted_xs)))]


def _timer_overhead_ns(samples: int = 20000) -> float:
    """Median cost of timing an empty lambda call the way per_call_us times fn()."""
    clock = time.perf_counter_ns
    empty = lambda: None  # noqa: E731
    xs = []
    for _ in range(samples):
        t0 = clock()
        empty()
        xs.append(clock() - t0)
    return statistics.median(xs)


_OVERHEAD_NS: float | None = None


def timed_calls_us(fn, items) -> dict:
    """Times fn(item) for each prepared item individually; see per_call_us."""
    global _OVERHEAD_NS
    if _OVERHEAD_NS is None:
        _OVERHEAD_NS = _timer_overhead_ns()
    clock = time.perf_counter_ns
    xs = []
    for it in items:
        t0 = clock()
        fn(it)
        xs.append(clock() - t0)
    xs = sorted((x - _OVERHEAD_NS) / 1e3 for x in xs)
    return {
        "median": statistics.median(xs),
        "mean": statistics.fmean(xs),
        "p99": _pct(xs, 0.99),
        "min": xs[0],
        "n": len(xs),
    }


def per_call_us(fn, calls: int = 10000, warmup: int = 200) -> dict:
    """Times `calls` individual calls of `fn()` (after `warmup` untimed ones).

    Every call is timed on its own and the figure is the median, less the
    median cost of timing an empty call (~0.1 us: clock reads + lambda call).
    Individual timing matters on this 2-core machine: when another process
    holds a core, a launch that forks/joins 2 OpenMP threads now and then waits
    a whole scheduler time slice (~4-12 ms) for its worker; 1 call in 100 like
    that would dominate any batch mean. The mean and 99th percentile are
    returned too, so those outliers stay visible.
    """
    for _ in range(warmup):
        fn()
    return timed_calls_us(lambda _: fn(), range(calls))


def kokkos_env() -> dict:
    """Environment for child processes that must find the same Kokkos as we do."""
    env = dict(os.environ)
    if "PK_KOKKOS_ROOT" not in env:
        import pykokkos as pk

        env["PK_KOKKOS_ROOT"] = pk.config()["kokkos"]
    return env


def slower_by_chance(slower: int, pairs: int) -> float:
    """One-sided sign test: the chance that the first of two equally fast
    things is slower in at least `slower` of `pairs` interleaved pairs of
    blocks. Below 0.05 the first is slower beyond the machine's noise; at or
    above, a median ratio just over 1 is a tie, not a measured slowdown."""
    from math import comb

    return sum(comb(pairs, k) for k in range(slower, pairs + 1)) / 2**pairs
