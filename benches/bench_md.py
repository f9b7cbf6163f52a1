"""(g) 2-D host kernels over 2048^2 doubles: a 2-D sum against the 1-D sum of
the same bytes (one View) and against NumPy's, and a 5-point stencil against
NumPy's slicing form of it. Best of 20 each, in one run."""
from __future__ import annotations

import time

import numpy as np

import pykokkos as pk

N = 2048


@pk.workunit
def md_sum2(i, j, acc, u):
    acc += u[i][j]


@pk.workunit
def md_sum1(i, acc, u):
    acc += u[i]


@pk.workunit
def md_stencil(i, j, a, u, out):
    if i > 0 and j > 0 and i < N - 1 and j < N - 1:
        out[i][j] = u[i][j] + a * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1] - 4.0 * u[i][j])


def _best(f, reps: int = 20) -> float:
    f()
    t = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t * 1e3


def main() -> dict:
    rng = np.random.default_rng(7)
    u, out = pk.View([N, N], pk.double), pk.View([N, N], pk.double)
    np.asarray(u)[:] = rng.random((N, N))
    flat = pk.View([N * N], pk.double)
    np.asarray(flat)[:] = np.asarray(u).ravel()
    pol = pk.MDRangePolicy([0, 0], [N, N])
    a = np.asarray(u)
    s2 = float(pk.parallel_reduce(pol, md_sum2, u=u))
    assert abs(s2 - a.sum()) <= 1e-9 * abs(a.sum()), (s2, a.sum())
    sum2 = _best(lambda: pk.parallel_reduce(pol, md_sum2, u=u))
    sum1 = _best(lambda: pk.parallel_reduce(N * N, md_sum1, u=flat))
    npsum = _best(lambda: a.sum())
    pk.parallel_for(pol, md_stencil, a=0.1, u=u, out=out)
    ref = a[1:-1, 1:-1] + 0.1 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] - 4.0 * a[1:-1, 1:-1])
    assert np.allclose(np.asarray(out)[1:-1, 1:-1], ref, rtol=1e-14, atol=0)
    sten = _best(lambda: pk.parallel_for(pol, md_stencil, a=0.1, u=u, out=out))
    npsten = _best(lambda: a[1:-1, 1:-1] + 0.1 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]
                                                 - 4.0 * a[1:-1, 1:-1]), reps=10)
    return {"sum2_ms": sum2, "sum1_ms": sum1, "sum2_over_sum1": sum2 / sum1, "numpy_sum_ms": npsum,
            "sum2_over_numpy": sum2 / npsum, "stencil_ms": sten, "numpy_stencil_ms": npsten,
            "stencil_over_numpy": sten / npsten}


if __name__ == "__main__":
    for k, v in main().items():
        print(f"{k:22} {v:10.3f}")
