"""The demo of `make demo`: real kernels through the whole pipeline, with the
time split into its stages (first call: parse + translate + compile + load;
later calls: launch only) and compared with NumPy doing the same work.

Then the same many-small-kernels program runs eagerly and lazily (PK_FUSE=1:
launches recorded into a DAG and flushed when a result is read). Fusion of the
recorded launches into fewer kernels is not implemented yet, so the lazy run
shows the recording/flush machinery's cost, not fusion's gains.
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

    # Eager vs lazy on a stream of small launches followed by one read.
    a, b = pk.View([64], pk.double), pk.View([64], pk.double)
    steps = 20000

    def stream():
        for k in range(steps):
            pk.parallel_for(64, scale, a=1.0 + 1e-6, x=a if k % 2 else b, y=b if k % 2 else a)
        return float(pk.parallel_reduce(64, dot, x=a, y=b))

    pk.parallel_for(64, scale, a=1.0, x=a, y=b)
    t_eager, r_eager = timed(stream)
    pk._native.set_lazy(True)
    t0 = time.perf_counter()
    for k in range(steps):
        pk.parallel_for(64, scale, a=1.0 + 1e-6, x=a if k % 2 else b, y=b if k % 2 else a)
    t_record = time.perf_counter() - t0
    r_lazy = float(pk.parallel_reduce(64, dot, x=a, y=b))
    t_lazy = time.perf_counter() - t0
    pk._native.set_lazy(False)
    assert r_lazy == r_eager
    print(f"\n{steps} launches of a 64-element kernel, then one read:")
    print(f"  eager: {t_eager * 1e3:8.1f} ms")
    print(f"  lazy:  {t_lazy * 1e3:8.1f} ms  (recording {t_record / steps * 1e6:.2f} us/launch, "
          f"flush {(t_lazy - t_record) * 1e3:.1f} ms)   eager/lazy = {t_eager / t_lazy:.2f}x")
    print("  results identical; kernel fusion (fewer, bigger kernels) is the next step of the runtime.")


if __name__ == "__main__":
    main()
