"""The demo of `make demo`: real kernels through the whole pipeline, with the
time split into its stages (first call: parse + translate + compile + load;
later calls: launch only) and compared with NumPy doing the same work.

Then a program of 8 elementwise kernels and a reduction runs eagerly and fused
(PK_FUSE=1: launches are recorded, then fused by the rules in fusion-rules/ into
one Kokkos kernel whose dead temporaries never touch memory), with the explain
report of what was fused and why.
"""
from __future__ import annotations

import os
import time

import numpy as np

import pykokkos as pk

N = 1 << 22


@pk.workunit
def scale(i, a, x, y):
    y[i] = a * x[i]


@pk.workunit
def add(i, x, y, z):
    z[i] = x[i] + y[i]


@pk.workunit
def triad(i, s, x, y, z):
    z[i] = x[i] + s * y[i]


@pk.workunit
def dot(i, acc, x, y):
    acc += x[i] * y[i]


@pk.workunit
def matvec(j, acc, A, x, y):
    row: float = 0.0
    for k in range(A.extent(1)):
        row += A[j][k] * x[k]
    acc += y[j] * row


def timed(f, reps=1):
    t0 = time.perf_counter()
    for _ in range(reps):
        r = f()
    return (time.perf_counter() - t0) / reps, r


def main() -> None:
    cfg = pk.config()
    print(f"pykokkos-fuse demo: Kokkos {cfg['kokkos_config']} at {cfg['kokkos']}")
    print(f"kernel cache: {cfg['cache']}   threads: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(all cores)')}\n")
    rng = np.random.default_rng(0)
    xs, ys = rng.random(N), rng.random(N)
    x, y, z, w = pk.array(xs.copy()), pk.array(ys.copy()), pk.View([N], pk.double), pk.View([N], pk.double)

    program = [
        ("scale", lambda: pk.parallel_for(N, scale, a=2.0, x=x, y=w), lambda: np.multiply(2.0, xs)),
        ("add", lambda: pk.parallel_for(N, add, x=x, y=w, z=z), lambda: xs + 2.0 * xs),
        ("triad", lambda: pk.parallel_for(N, triad, s=3.0, x=x, y=y, z=z), lambda: xs + 3.0 * ys),
        ("dot", lambda: pk.parallel_reduce(N, dot, x=x, y=y), lambda: float(np.dot(xs, ys))),
    ]
    print(f"{'kernel':8} {'first call (compile/load)':>26} {'launch+run':>12} {'NumPy':>10} {'vs NumPy':>9}")
    for name, run, ref in program:
        first, _ = timed(run)
        warm, got = timed(run, reps=20)
        t_np, want = timed(ref, reps=20)
        if name == "dot":
            assert abs(got - want) <= 1e-9 * abs(want), (got, want)
        print(f"{name:8} {first * 1e3:23.1f} ms {warm * 1e3:9.3f} ms {t_np * 1e3:7.3f} ms {t_np / warm:8.2f}x")
    assert np.allclose(np.asarray(z), xs + 3.0 * ys)

    n = 1024
    A = pk.array(rng.random((n, n)))
    v, u = pk.array(rng.random(n)), pk.array(rng.random(n))
    first, _ = timed(lambda: pk.parallel_reduce(n, matvec, A=A, x=v, y=u))
    warm, got = timed(lambda: pk.parallel_reduce(n, matvec, A=A, x=v, y=u), reps=20)
    want = float(np.asarray(u) @ (np.asarray(A) @ np.asarray(v)))
    assert abs(got - want) <= 1e-9 * abs(want)
    print(f"{'yAx':8} {first * 1e3:23.1f} ms {warm * 1e3:9.3f} ms   (nested loop in a reduce over a 2-D view)")

    tiny = pk.View([1], pk.double)
    for _ in range(1000):
        pk.parallel_for(1, scale, a=1.0, x=tiny, y=tiny)
    per, _ = timed(lambda: pk.parallel_for(1, scale, a=1.0, x=tiny, y=tiny), reps=20000)
    print(f"\nlaunch overhead of a cached kernel on 1 element: {per * 1e6:.2f} us")
    print("first-call time = parse + type inference + C++ generation + compile (or disk-cache hit) + load;")
    print("run `PK_LOG=info make demo` to see each stage's span and duration.")

    fused_demo()


@pk.workunit
def step(i, a, x, y):
    y[i] = a * x[i] + 1.0


@pk.workunit
def norm2(i, acc, x):
    acc += x[i] * x[i]


def program(x):
    """A chain of 8 elementwise kernels whose temporaries die, then a norm."""
    cur = x
    for _ in range(8):
        nxt = pk.View([N], pk.double)
        pk.parallel_for(N, step, a=0.5, x=cur, y=nxt)
        cur = nxt
    return float(pk.parallel_reduce(N, norm2, x=cur))


def fused_demo() -> None:
    x = pk.View([N], pk.double)
    np.asarray(x)[:] = np.linspace(0.0, 1.0, N)
    times = {}
    results = {}
    for mode in ("eager", "fused"):
        pk._native.set_lazy(mode == "fused")
        program(x)  # compile (first time) / warm up
        times[mode], results[mode] = timed(lambda: program(x), reps=5)
    pk._native.set_lazy(False)
    assert results["eager"] == results["fused"] or abs(results["eager"] - results["fused"]) <= 1e-12 * results["eager"]
    print(f"\n8 elementwise kernels + a reduction over {N:,} doubles (temporaries die):")
    print(f"  eager (9 kernels, 8 temporaries in memory): {times['eager'] * 1e3:8.1f} ms")
    print(f"  fused (PK_FUSE=1):                          {times['fused'] * 1e3:8.1f} ms   "
          f"speedup {times['eager'] / times['fused']:.1f}x, same result {results['fused']:.6e}")
    print("  where it went (pk.explain()):")
    for line in pk.explain(show=False).splitlines():
        print("   ", line)


if __name__ == "__main__":
    main()
