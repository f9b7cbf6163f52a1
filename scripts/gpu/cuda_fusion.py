"""Fusion on the GPU (run on the device machine with PK_KOKKOS_CUDA=1; see
scripts/gpu/README.md): eager vs fused (PK_FUSE machinery, switched in-process)
on the Cuda space, checked against each other and NumPy, with figures:
k = 2, 4, 8 elementwise chains over 2^27 doubles whose temporaries die, the
BabelStream copy/mul/add/triad/dot sequence, and many small launches."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

import pykokkos as pk

N = 1 << 27


# The same workunits as the CPU benchmark (benches/bench_fusion.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benches"))
from bench_fusion import add, copy, dot, mul, step, tiny, triad  # noqa: E402


def lazy(on):
    pk._native.set_lazy(on)


def best(f, reps):
    t = float("inf")
    for _ in range(reps):
        pk.fence()
        t0 = time.perf_counter()
        f()
        pk.fence()
        t = min(t, time.perf_counter() - t0)
    return t


def chain(k, x, out):
    cur = x
    for j in range(k):
        nxt = out if j == k - 1 else pk.View([N], pk.double)
        pk.parallel_for(N, step, a=1.0001, x=cur, y=nxt)
        cur = nxt


def main() -> int:
    pk.set_default_space(pk.Cuda)
    ok = True
    x = pk.View([N], pk.double)
    np.asarray(x)[:] = 1.0
    print(f"N = 2^27 doubles on {pk.get_default_space()}")
    for k in (2, 4, 8):
        res = {}
        times = {}
        for mode in (False, True):
            lazy(mode)
            out = pk.View([N], pk.double)

            def run():
                chain(k, x, out)
                pk.flush()

            t0 = time.perf_counter()
            run()
            first = time.perf_counter() - t0
            times[mode] = best(run, 5)
            res[mode] = np.asarray(out).copy()
            print(f"  chain k={k} {'fused' if mode else 'eager'}: first call {first:.2f} s, best {times[mode] * 1e3:.3f} ms")
        lazy(False)
        same = np.array_equal(res[False], res[True])
        want = 1.0
        for _ in range(k):
            want = 1.0001 * want + 1.0
        same = same and np.allclose(res[True], want)
        ok &= same
        print(f"chain k={k}: eager {times[False] * 1e3:.3f} ms, fused {times[True] * 1e3:.3f} ms, "
              f"speedup {times[False] / times[True]:.2f}x (ideal {k}), results equal: {same}")
    print(pk.explain(show=False).splitlines()[0])

    arrs = {}
    tb = {}
    vals = {}
    for mode in (False, True):
        lazy(mode)
        a, b, c = (pk.View([N], pk.double) for _ in range(3))
        np.asarray(a)[:] = 0.1
        np.asarray(b)[:] = 0.2
        np.asarray(c)[:] = 0.0

        def seq():
            pk.parallel_for(N, copy, a=a, c=c)
            pk.parallel_for(N, mul, s=0.4, b=b, c=c)
            pk.parallel_for(N, add, a=a, b=b, c=c)
            pk.parallel_for(N, triad, s=0.4, a=a, b=b, c=c)
            return float(pk.parallel_reduce(N, dot, a=a, b=b))

        seq()
        tb[mode] = best(seq, 5)
        vals[mode] = seq()
        arrs[mode] = [np.asarray(v).copy() for v in (a, b, c)]
    lazy(False)
    same = all(np.allclose(u, v, rtol=1e-12) for u, v in zip(arrs[False], arrs[True])) and abs(vals[False] - vals[True]) <= 1e-9 * abs(vals[False])
    ok &= same
    print(f"BabelStream copy,mul,add,triad,dot: eager {tb[False] * 1e3:.3f} ms, fused {tb[True] * 1e3:.3f} ms, "
          f"speedup {tb[False] / tb[True]:.2f}x (ideal 2), results equal: {same}")

    launches = 20000
    tm = {}
    for mode in (False, True):
        lazy(mode)
        v = pk.View([10], pk.double)
        for _ in range(64):  # compiles the kernels a full region needs
            pk.parallel_for(10, tiny, v=v)
        pk.flush()
        v[0] = 1.0
        t0 = time.perf_counter()
        for _ in range(launches):
            pk.parallel_for(10, tiny, v=v)
        got = v[0]
        tm[mode] = time.perf_counter() - t0
        ok &= got == launches + 1
    lazy(False)
    print(f"{launches} launches of a 10-element kernel + 1 read: eager {tm[False]:.3f} s, fused {tm[True]:.3f} s, "
          f"speedup {tm[False] / tm[True]:.2f}x")
    print("PK CUDA FUSION:", "PASSED" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
