"""Lazy runtime (PK_FUSE=1) costs: recording one launch, and flushing 1,000
pending launches beside running the same 1,000 launches eagerly (the
difference is the lazy machinery's own cost; kernel time is the same in both);
an iterative loop that reads a reduction every iteration (a flush each time);
and a tiny chain (7 maps through fresh temporaries and a sum over 64 doubles)
read every iteration, where recording can cost more than it saves (the
adaptive bypass's cost signal decides).
"""
from __future__ import annotations

import os
import time
from typing import NamedTuple



import pykokkos as pk
from _util import per_call_us


@pk.workunit
def bump(i, v):
    v[i] = v[i] + 1.0


@pk.workunit
def scale(i, v, a):
    v[i] = a * v[i]


@pk.workunit
def total(i, acc, v):
    acc += v[i]


class Side(NamedTuple):
    """Lazy against eager, per call: medians over pairs of blocks, and in how
    many of the `pairs` lazy was the slower (for run_all's sign test)."""

    lazy: float
    eager: float
    ratio: float
    slower: int
    pairs: int


def _side_by_side(step, iters: int, reps: int = 15, settle: int = 50) -> Side:
    """Microseconds per call of `step`, lazy and eager: blocks of `iters`
    calls, lazy and eager alternating (which goes first alternates too), so
    both modes see the same machine; medians over `reps` pairs of blocks.
    One block each way before, so kernels and the adaptive bypass settle."""
    import statistics

    times: dict[bool, list[float]] = {True: [], False: []}
    ratios = []
    for lazy in (True, False):
        pk._native.set_lazy(lazy)
        for _ in range(iters):
            step()
    for rep in range(reps):
        t = {}
        for lazy in ((True, False) if rep % 2 else (False, True)):
            pk._native.set_lazy(lazy)
            # Switching modes resets the adaptive bypass: its first ~10 flushes
            # record before it settles, and its probes start frequent and
            # space out (a program pays this once; long blocks amortize the
            # probes as a long loop does).
            for _ in range(settle):
                step()
            t0 = time.perf_counter()
            for _ in range(iters):
                step()
            pk.flush()
            t[lazy] = (time.perf_counter() - t0) / iters * 1e6
            times[lazy].append(t[lazy])
        ratios.append(t[True] / t[False])
    pk._native.set_lazy(False)
    return Side(statistics.median(times[True]), statistics.median(times[False]), statistics.median(ratios),
                sum(r > 1.0 for r in ratios), len(ratios))


def _read_each_iteration(n: int = 100, iters: int = 20000) -> Side:
    """Per iteration of: a map over `n` doubles, a reduction of them, reading
    its value (past the adaptive bypass's size, fused into one kernel)."""
    v = pk.View([n], pk.double)

    def step():
        pk.parallel_for(n, scale, v=v, a=1.0)
        float(pk.parallel_reduce(n, total, v=v))

    return _side_by_side(step, iters)


def _alone_each_iteration(n: int = 1 << 15, iters: int = 2000) -> Side:
    """Per iteration of: a map over `n` doubles and one element read, then a
    reduction read at once: every flush runs one launch, nothing can fuse
    (past the adaptive bypass's size: solo.rs runs them at once)."""
    v = pk.View([n], pk.double)

    def step():
        pk.parallel_for(n, scale, v=v, a=1.0)
        v[3]
        float(pk.parallel_reduce(n, total, v=v))

    return _side_by_side(step, iters)


def _tiny_chain_step():
    """One iteration of bench_fusion's 7-map chain and sum over 64 doubles,
    its total read."""
    from bench_fusion import chain
    from bench_fusion import total as chain_total

    x, live = pk.View([64], pk.double), pk.View([64], pk.double)

    def step():
        chain(7, x, live)
        float(pk.parallel_reduce(64, chain_total, t=live))

    return step


def _tiny_chain(lazy: bool, iters: int = 3000) -> float:
    """Microseconds per iteration of the tiny chain in one mode (`--forced-fusion` runs it)."""
    step = _tiny_chain_step()
    pk._native.set_lazy(lazy)
    for _ in range(300):
        step()
    t0 = time.perf_counter()
    for _ in range(iters):
        step()
    dt = time.perf_counter() - t0
    pk.flush()
    pk._native.set_lazy(False)
    return dt / iters * 1e6


def _tiny_chain_side_by_side() -> Side:
    return _side_by_side(_tiny_chain_step(), 2000)


def _forced_fusion(plan_cache: bool, runs: int = 3) -> float:
    """Microseconds per iteration of the tiny chain always recorded and fused
    (the adaptive bypass off), in a fresh process with the plan cache on or
    off (it is read once per process); best of `runs` processes."""
    import os
    import subprocess
    import sys

    off = ["adaptive"] + (["plan_cache"] if not plan_cache else [])
    env = dict(os.environ, PK_FUSION_DISABLE=",".join(off))
    best = float("inf")
    for _ in range(runs):
        out = subprocess.run([sys.executable, __file__, "--forced-fusion"], env=env, capture_output=True,
                             text=True, check=True).stdout
        best = min(best, float(out.split()[-1]))
    return best


def _flush_vs_eager(make_views, n: int, reps: int = 5) -> tuple[float, float]:
    """Best total seconds for n launches: (lazy record+flush, eager)."""
    best_lazy = best_eager = float("inf")
    for _ in range(reps):
        views = make_views()
        pk._native.set_lazy(True)
        t0 = time.perf_counter()
        for v in views:
            pk.parallel_for(10, bump, v=v)
        t1 = time.perf_counter()
        pk.flush()
        t2 = time.perf_counter()
        pk._native.set_lazy(False)
        best_lazy = min(best_lazy, t2 - t1)
        views = make_views()
        t0 = time.perf_counter()
        for v in views:
            pk.parallel_for(10, bump, v=v)
        best_eager = min(best_eager, time.perf_counter() - t0)
    return best_lazy, best_eager


UNREAD_STREAM = r"""
import sys, time
import pykokkos as pk

@pk.workunit
def halo(i, out, x, y, shift, phase):
    out[i] = x[i] + y[i] * shift + phase

x, y, table = pk.View([64], pk.double), pk.View([64], pk.double), pk.View([2000, 64], pk.double)
pk.parallel_for(64, halo, out=table[0, :], x=x, y=y, shift=0.0, phase=0)  # built before the clock
pk.flush()
t0 = time.perf_counter()
for k in range(2000):
    for phase in range(6):  # six launches over six ranges a step, as a halo exchange's
        pk.parallel_for(40 + phase, halo, out=table[k, :], x=x, y=y, shift=0.5 * phase, phase=phase)
float(table[1999, 0])
print((time.perf_counter() - t0) / 12000 * 1e6)
"""


def _unread_stream(reps: int = 3) -> tuple[float, float]:
    """A fresh program's 12,000 launches that nothing reads until the end (a
    time loop whose results are read afterwards), per launch with the final
    read, PK_FUSE=1 and eager in alternated fresh processes (what a program
    pays once: the learning is in it), medians."""
    import statistics
    import subprocess
    import sys

    import tempfile

    times: dict[str, list[float]] = {"1": [], "0": []}
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "unread_stream.py")  # a file: workunits need their source
        with open(script, "w") as f:
            f.write(UNREAD_STREAM)
        for _ in range(reps):
            for mode in times:
                out = subprocess.run([sys.executable, script], env=dict(os.environ, PK_FUSE=mode),
                                     capture_output=True, text=True, check=True).stdout
                times[mode].append(float(out.split()[-1]))
    return statistics.median(times["1"]), statistics.median(times["0"])


def main(calls: int = 5000) -> dict:
    v = pk.View([10], pk.double)
    pk.parallel_for(10, bump, v=v)  # compile once, eagerly
    pk.parallel_for(10, scale, v=v, a=2.0)
    eager = per_call_us(lambda: pk.parallel_for(10, scale, v=v, a=2.0), calls=calls)

    pk._native.set_lazy(True)
    # Independent views, so the DAG grows without chains; flushed in batches.
    pool = [pk.View([10], pk.double) for _ in range(calls + 200)]
    it = iter(pool)
    rec = per_call_us(lambda: pk.parallel_for(10, scale, v=next(it), a=2.0), calls=calls)
    pk.flush()
    pk._native.set_lazy(False)

    n = 1000
    chain_lazy, chain_eager = _flush_vs_eager(lambda: [v] * n, n)
    indep_lazy, indep_eager = _flush_vs_eager(lambda: [pk.View([10], pk.double) for _ in range(n)], n)
    sides = {
        "loop_read": _read_each_iteration(),
        "loop_mid": _read_each_iteration(1 << 18, 200),
        "alone": _alone_each_iteration(),
        "tiny_chain": _tiny_chain_side_by_side(),
    }
    cached, uncached = _forced_fusion(True), _forced_fusion(False)
    stream_lazy, stream_eager = _unread_stream()
    rows = {}
    for name, side in sides.items():
        rows[f"{name}_lazy_us"] = side.lazy
        rows[f"{name}_eager_us"] = side.eager
        rows[f"{name}_lazy_over_eager"] = side.ratio
        # run_all's verdict for the never-slower rows (a sign test).
        rows[f"{name}_lazy_over_eager_pairs"] = [side.slower, side.pairs]
    return {
        **rows,
        "forced_fused_cached_us": cached,
        "forced_fused_uncached_us": uncached,
        "plan_cache_speedup": uncached / cached,
        "record_us": rec["median"],
        "record_p99_us": rec["p99"],
        "eager_launch_us": eager["median"],
        "flush1000_chain_ms": chain_lazy * 1e3,
        "eager1000_chain_ms": chain_eager * 1e3,
        "flush_overhead_chain_us": (chain_lazy - chain_eager) / n * 1e6,
        "flush1000_indep_ms": indep_lazy * 1e3,
        "eager1000_indep_ms": indep_eager * 1e3,
        "flush_overhead_indep_us": (indep_lazy - indep_eager) / n * 1e6,
        "unread_stream_lazy_us": stream_lazy,
        "unread_stream_eager_us": stream_eager,
        "unread_stream_lazy_over_eager": stream_lazy / stream_eager,
    }


if __name__ == "__main__":
    import sys

    if "--forced-fusion" in sys.argv:
        print(_tiny_chain(True))
        sys.exit(0)
    for k, val in main().items():
        print(f"{k:28} {val}" if isinstance(val, list) else f"{k:28} {val:10.3f}")
