"""Fusion benchmarks (PK_FUSE=1 with the fusion engine vs eager), one run:
(a) chains of k = 2, 4, 8 elementwise kernels over 2^24 doubles whose
    temporaries die (ideal: bytes eager / bytes fused);
(b) BabelStream's copy, mul, add, triad, dot sequence, repeated;
(c) 100,000 launches of a 10-element kernel followed by one read;
(d) compile time of a new fused region;
(e) a map whose output is still referenced when the reduction of it flushes
    (the common shape: the reduction stores to a View), eager vs fused, and a
    dot product beside np.dot.
"""
from __future__ import annotations

import time

import numpy as np

import pykokkos as pk

N = 1 << 24


@pk.workunit
def step(i, a, x, y):
    y[i] = a * x[i] + 1.0


@pk.workunit
def copy(i, a, c):
    c[i] = a[i]


@pk.workunit
def mul(i, s, b, c):
    b[i] = s * c[i]


@pk.workunit
def add(i, a, b, c):
    c[i] = a[i] + b[i]


@pk.workunit
def triad(i, s, a, b, c):
    a[i] = b[i] + s * c[i]


@pk.workunit
def dot(i, acc, a, b):
    acc += a[i] * b[i]


@pk.workunit
def tiny(i, v):
    v[i] = v[i] + 1.0


def lazy(on: bool) -> None:
    pk._native.set_lazy(on)


def chain(k: int, x, out) -> None:
    """k maps x -> t1 -> ... -> out; every intermediate dies at once."""
    n = x.shape[0]
    cur = x
    for j in range(k):
        nxt = out if j == k - 1 else pk.View([n], pk.double)
        pk.parallel_for(n, step, a=1.0001, x=cur, y=nxt)
        cur = nxt
    del cur, nxt


def best(f, reps: int) -> float:
    t = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


def bench_chains(reps: int = 5) -> dict:
    out = {}
    x = pk.View([N], pk.double)
    np.asarray(x)[:] = 1.0
    res_e, res_f = pk.View([N], pk.double), pk.View([N], pk.double)
    for k in (2, 4, 8):
        lazy(False)
        chain(k, x, res_e)
        t_e = best(lambda: chain(k, x, res_e), reps)
        lazy(True)
        chain(k, x, res_f)
        pk.flush()  # compile the fused region once

        def fused():
            chain(k, x, res_f)
            pk.flush()

        t_f = best(fused, reps)
        lazy(False)
        assert np.array_equal(np.asarray(res_e), np.asarray(res_f))
        # Eager moves 16 bytes per element per kernel (read + write); fused reads x, writes out.
        out[f"chain{k}_eager_ms"] = t_e * 1e3
        out[f"chain{k}_fused_ms"] = t_f * 1e3
        out[f"chain{k}_speedup"] = t_e / t_f
        out[f"chain{k}_ideal"] = (16.0 * k) / 16.0
    return out


def babel_sequence(a, b, c, s):
    pk.parallel_for(N, copy, a=a, c=c)
    pk.parallel_for(N, mul, s=s, b=b, c=c)
    pk.parallel_for(N, add, a=a, b=b, c=c)
    pk.parallel_for(N, triad, s=s, a=a, b=b, c=c)
    return float(pk.parallel_reduce(N, dot, a=a, b=b))


def bench_babel(reps: int = 5) -> dict:
    arrays = []
    for mode in (False, True):
        lazy(mode)
        a, b, c = (pk.View([N], pk.double) for _ in range(3))
        np.asarray(a)[:] = 0.1
        np.asarray(b)[:] = 0.2
        np.asarray(c)[:] = 0.0
        babel_sequence(a, b, c, 0.4)
        arrays.append((a, b, c))
    lazy(False)
    t_e = best(lambda: babel_sequence(*arrays[0], 0.4), reps)
    lazy(True)
    t_f = best(lambda: babel_sequence(*arrays[1], 0.4), reps)
    report = pk.explain(show=False)
    lazy(False)
    for u, v in zip(arrays[0], arrays[1]):
        assert np.allclose(np.asarray(u), np.asarray(v), rtol=1e-12)
    # Bytes: copy 16, mul 16, add 24, triad 24, dot 16 = 96 per element eager.
    # Fused (all five in one pass): read a, b, c once, write a, b, c once = 48.
    kernels = report.splitlines()[0].split("-> ")[1].split(" ")[0]
    return {"babel_eager_ms": t_e * 1e3, "babel_fused_ms": t_f * 1e3, "babel_speedup": t_e / t_f,
            "babel_ideal": 96.0 / 48.0, "babel_fused_kernels": int(kernels)}


def bench_many_small(launches: int = 100_000) -> dict:
    out = {}
    for mode in (False, True):
        lazy(mode)
        v = pk.View([10], pk.double)
        for _ in range(64):  # compiles the kernels a full region needs (timed apart below)
            pk.parallel_for(10, tiny, v=v)
        pk.flush()
        # Twice, the second timed: the first may compile what only a run this
        # long needs (the looping kernel of folded repeats, on a cold cache).
        for _ in range(2):
            v[0] = 1.0
            t0 = time.perf_counter()
            for _ in range(launches):
                pk.parallel_for(10, tiny, v=v)
            value = v[0]
            out["many_fused_s" if mode else "many_eager_s"] = time.perf_counter() - t0
            assert value == launches + 1
    lazy(False)
    out["many_speedup"] = out["many_eager_s"] / out["many_fused_s"]
    return out


def bench_compile() -> dict:
    """Compile time of never-seen kernels: a module with a fresh constant is
    written to a temporary folder each run, so nothing is in the disk cache."""
    import importlib.util
    import os
    import tempfile

    salt = f"{time.time_ns() % 10**9}.0"
    src = f"""
import pykokkos as pk

@pk.workunit
def fresh_a(i, x, y):
    y[i] = x[i] * 1.5 - {salt}

@pk.workunit
def fresh_b(i, x, y):
    y[i] = x[i] * x[i] + {salt}

@pk.workunit
def fresh_c(i, x, y):
    y[i] = x[i] - {salt}

@pk.workunit
def fresh_d(i, x, y):
    y[i] = x[i] * {salt}
"""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "fresh_kernels.py")
        with open(path, "w") as f:
            f.write(src)
        spec = importlib.util.spec_from_file_location("fresh_kernels", path)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        x, t, z = (pk.View([64], pk.double) for _ in range(3))
        lazy(False)
        t0 = time.perf_counter()
        pk.parallel_for(64, m.fresh_a, x=x, y=t)
        pk.parallel_for(64, m.fresh_b, x=t, y=z)
        t_single = (time.perf_counter() - t0) / 2
        lazy(True)
        t0 = time.perf_counter()
        pk.parallel_for(64, m.fresh_c, x=x, y=t)
        pk.parallel_for(64, m.fresh_d, x=t, y=z)
        pk.flush()
        t_region = time.perf_counter() - t0
        lazy(False)
    return {"compile_single_s": t_single, "compile_region_s": t_region}


@pk.workunit
def twice(i, x, t):
    t[i] = 2.0 * x[i]


@pk.workunit
def total(i, acc, t):
    acc += t[i]


def bench_live_reduce() -> dict:
    x, t, y = pk.View([N]), pk.View([N]), pk.View([N])
    x.fill(1.5)
    y.fill(2.0)

    def shape():
        pk.parallel_for(N, twice, x=x, t=t)
        return float(pk.parallel_reduce(N, total, t=t))  # t is alive but not demanded

    def shape_read():  # the program reads t after the total: deferring t's map cannot pay
        r = shape()
        return r + t[0]

    def best(f, k=7):
        f()
        ts = []
        for _ in range(k):
            s = time.perf_counter()
            f()
            ts.append(time.perf_counter() - s)
        return min(ts) * 1e3

    eager, eager_read = best(shape), best(shape_read)
    pk._native.set_lazy(True)
    try:
        fused, fused_read = best(shape), best(shape_read)
    finally:
        pk._native.set_lazy(False)
    xa, ya = np.asarray(x), np.asarray(y)
    # Pairs of blocks, each the best of five calls, for run_all's sign test:
    # this machine's memory bandwidth drifts by several percent over seconds,
    # and the two sit at the same bound. A pause before each block: OpenBLAS'
    # threads spin for 0.1 s after each np.dot (this module imports NumPy
    # before pykokkos, so it keeps its long spin: _openblas.py), and OpenMP's
    # briefly after each kernel, taking a core from the other's block.
    def block(f):
        time.sleep(0.2)
        return best(f, 5)

    pairs = [(block(lambda: float(pk.parallel_reduce(N, dot, a=x, b=y))), block(lambda: float(np.dot(xa, ya))))
             for _ in range(9)]
    dot_pk, dot_np = min(p for p, _ in pairs), min(n for _, n in pairs)
    return {"live_eager_ms": eager, "live_fused_ms": fused, "live_fused_speedup": eager / fused,
            "live_read_eager_ms": eager_read, "live_read_fused_ms": fused_read,
            "live_read_speedup": eager_read / fused_read,
            "dot_pk_ms": dot_pk, "dot_numpy_ms": dot_np, "dot_pk_over_numpy": dot_pk / dot_np,
            "dot_pk_over_numpy_pairs": [sum(p > n for p, n in pairs), len(pairs)]}


@pk.workunit
def stat_max(i, acc, x):
    if x[i] > acc:
        acc = x[i]


@pk.workunit
def stat_min(i, acc, x):
    acc = min(acc, x[i])


def bench_statistics() -> dict:
    """max, min and sum of one View, each total read in turn: three passes
    eagerly; fused, the first read takes the other two along (one pass, three
    totals, each joined by its own reducer)."""
    x = pk.View([N])
    np.asarray(x)[:] = np.sin(np.arange(N) * 1e-3)

    def stats():
        hi = pk.parallel_reduce(N, stat_max, x=x, reducer=pk.Max)
        lo = pk.parallel_reduce(N, stat_min, x=x, reducer=pk.Min)
        s = pk.parallel_reduce(N, total, t=x)
        return float(hi), float(lo), float(s)

    stats()  # compiles
    eager = best(stats, 7) * 1e3
    pk._native.set_lazy(True)
    try:
        stats()  # lazy mode's first pass (a mode switch starts its state over)
        fused = best(stats, 7) * 1e3
    finally:
        pk._native.set_lazy(False)
    return {"stats_eager_ms": eager, "stats_fused_ms": fused, "stats_speedup": eager / fused}


def main() -> dict:
    r = {}
    r.update(bench_live_reduce())
    r.update(bench_statistics())
    r.update(bench_compile())
    r.update(bench_many_small())
    r.update(bench_chains())
    r.update(bench_babel())
    return r


if __name__ == "__main__":
    for k, v in main().items():
        print(f"{k:24} {v:12.3f}")
