"""Runs host (OpenMP) kernels through `import pykokkos` against a CUDA-enabled Kokkos
(PK_KOKKOS_CUDA=1): every kernel then goes through nvcc_wrapper. Checks results
against NumPy and prints the compile and launch times."""
from __future__ import annotations

import time

import numpy as np

import pykokkos as pk


@pk.workunit
def axpy(i, a, x, y):
    y[i] = a * x[i] + y[i]


@pk.workunit
def dot(i, acc, x, y):
    acc += x[i] * y[i]


def timed(f):
    t0 = time.perf_counter()
    r = f()
    return time.perf_counter() - t0, r


def main() -> None:
    cfg = pk.config()
    for k, v in cfg.items():
        print(f"config {k}: {v}")
    assert "CUDA" in cfg["kokkos_config"].split(), cfg["kokkos_config"]
    n = 1 << 20
    rng = np.random.default_rng(0)
    xr, yr = rng.random(n), rng.random(n)
    x, y = pk.View([n], pk.double), pk.View([n], pk.double)
    np.asarray(x)[:] = xr
    np.asarray(y)[:] = yr
    t_init, _ = timed(pk.initialize)
    print(f"pk.initialize (support library compile + Kokkos init): {t_init:.2f} s")
    t_first, _ = timed(lambda: pk.parallel_for(n, axpy, a=2.0, x=x, y=y))
    np.testing.assert_allclose(np.asarray(y), 2.0 * xr + yr)
    t_again, _ = timed(lambda: pk.parallel_for(n, axpy, a=0.0, x=x, y=y))
    print(f"axpy first call (translate + nvcc compile + load): {t_first:.2f} s; cached call {t_again * 1e6:.0f} us")
    t_first, r = timed(lambda: pk.parallel_reduce(n, dot, x=x, y=y))
    expect = float(np.dot(xr, 2.0 * xr + yr))
    assert abs(r - expect) <= 1e-9 * abs(expect), (r, expect)
    print(f"dot first call: {t_first:.2f} s; result {r:.6f} (numpy {expect:.6f})")
    print("PK HOST KERNELS VIA NVCC: PASSED")


if __name__ == "__main__":
    main()
