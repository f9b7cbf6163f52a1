"""Kernels in the CUDA space with device-mirrored Views (run on the GPU machine with
PK_KOKKOS_CUDA=1, see scripts/gpu/README.md). Checks results against NumPy, then
prints launch overhead and triad bandwidth (against a CuPy device copy if CuPy imports)."""
from __future__ import annotations

import statistics
import time

import numpy as np

import pykokkos as pk
from pykokkos import _native


@pk.workunit
def axpy(i, a, x, y):
    y[i] = a * x[i] + y[i]


@pk.workunit
def dot(i, acc, x, y):
    acc += x[i] * y[i]


@pk.workunit
def scale2d(i, a, m):
    for j in range(m.extent(1)):
        m[i][j] = a * m[i][j] + j


@pk.workunit
def triad(i, s, a, b, c):
    a[i] = b[i] + s * c[i]


def timed(f):
    t0 = time.perf_counter()
    r = f()
    return time.perf_counter() - t0, r


def main() -> None:
    cfg = pk.config()
    assert "CUDA" in cfg["kokkos_config"].split(), cfg["kokkos_config"]
    pk.set_default_space(pk.Cuda)
    assert pk.get_default_space() is pk.Cuda
    n = 1 << 20
    rng = np.random.default_rng(0)
    xr, yr = rng.random(n), rng.random(n)
    x, y = pk.View([n], pk.double), pk.View([n], pk.double, space=pk.CudaSpace)
    np.asarray(x)[:] = xr
    np.asarray(y)[:] = yr

    t, _ = timed(lambda: pk.parallel_for(n, axpy, a=2.0, x=x, y=y))
    print(f"axpy on Cuda, first call (compile + run): {t:.2f} s")
    np.testing.assert_allclose(np.asarray(y), 2.0 * xr + yr)
    print("axpy (default space Cuda): OK")
    # Explicit Cuda policy, host write in between (host copy newer -> copied in).
    np.asarray(y)[:] = yr
    pk.parallel_for(pk.RangePolicy(pk.Cuda, 0, n), axpy, a=3.0, x=x, y=y)
    np.testing.assert_allclose(y.data, 3.0 * xr + yr)
    print("axpy (RangePolicy(pk.Cuda)) after host write: OK")

    t, r = timed(lambda: pk.parallel_reduce(n, dot, x=x, y=y))
    expect = float(np.dot(xr, 3.0 * xr + yr))
    assert abs(r - expect) <= 1e-9 * abs(expect), (r, expect)
    print(f"dot on Cuda: {r:.6f} (numpy {expect:.6f}), first call {t:.2f} s: OK")

    # Device write, then device read, then host read: no host round trip needed in between.
    pk.parallel_for(n, axpy, a=1.0, x=x, y=y)
    r2 = pk.parallel_reduce(n, dot, x=x, y=y)
    yy = 4.0 * xr + yr
    np.testing.assert_allclose(np.asarray(y), yy)
    assert abs(r2 - float(np.dot(xr, yy))) <= 1e-9 * abs(r2)
    print("device write -> device reduce -> host read: OK")

    # A read-only input (x) changed on the host between launches is copied in again.
    x2 = pk.View([n], pk.double)
    np.asarray(x)[:] = 2.0 * xr
    pk.parallel_for(n, axpy, a=1.0, x=x, y=x2)
    np.testing.assert_allclose(np.asarray(x2), 2.0 * xr)
    np.asarray(x)[:] = xr
    pk.parallel_for(n, axpy, a=1.0, x=x, y=x2)
    np.testing.assert_allclose(np.asarray(x2), 3.0 * xr)
    np.testing.assert_array_equal(np.asarray(x), xr)
    print("read-only input rewritten on the host between launches: OK")

    m = pk.View([300, 70], pk.double)
    mr = rng.random((300, 70))
    np.asarray(m)[:] = mr
    pk.parallel_for(300, scale2d, a=0.5, m=m)
    np.testing.assert_allclose(np.asarray(m), 0.5 * mr + np.arange(70)[None, :])
    print("2-D view kernel: OK")

    xa, ya = xr.copy(), yr.copy()
    pk.parallel_for(n, axpy, a=2.0, x=xa, y=ya)
    np.testing.assert_allclose(ya, 2.0 * xr + yr)
    np.testing.assert_array_equal(xa, xr)
    print("NumPy arrays as arguments (copied in and back): OK")

    # Subview: device pointer + offset.
    ys = pk.View([n], pk.double)
    sub = ys[n // 2:]
    pk.parallel_for(n - n // 2, axpy, a=1.0, x=x[n // 2:], y=sub)
    expect = np.zeros(n)
    expect[n // 2:] = xr[n // 2:]
    np.testing.assert_allclose(np.asarray(ys), expect)
    print("subviews (device pointer + offset): OK")

    # Lazy mode: recorded Cuda launches run at the host read.
    _native.set_lazy(True)
    z = pk.View([n], pk.double)
    pk.parallel_for(n, axpy, a=1.0, x=x, y=z)
    pk.parallel_for(n, axpy, a=1.0, x=x, y=z)
    np.testing.assert_allclose(np.asarray(z), 2.0 * xr)
    _native.set_lazy(False)
    print("lazy mode on Cuda: OK")

    try:
        u = pk.View([n], pk.double, space=pk.CudaUVMSpace)
        np.asarray(u)[:] = 1.0
        pk.parallel_for(n, axpy, a=1.0, x=x, y=u)
        np.testing.assert_allclose(np.asarray(u), 1.0 + xr)
        print("CudaUVMSpace view: OK")
    except Exception as e:  # noqa: BLE001
        print(f"CudaUVMSpace view: FAILED {e!r}")

    cp = None
    try:
        import cupy as cp  # type: ignore
    except Exception as e:  # noqa: BLE001
        print(f"cupy not importable: {e!r}")
    if cp is not None:
        try:
            cai = y.__cuda_array_interface__
            c = cp.asarray(y)
            np.testing.assert_allclose(cp.asnumpy(c), yy)
            c *= 2.0  # writes device memory: the host sees it at the next host read
            np.testing.assert_allclose(np.asarray(y), 2.0 * yy)
            print(f"__cuda_array_interface__ with CuPy (read and write): OK {cai['typestr']} {cai['shape']}")
        except Exception as e:  # noqa: BLE001
            print(f"__cuda_array_interface__: FAILED {e!r}")
        try:
            ca = cp.arange(n, dtype=cp.float64)
            cb = cp.ones(n, dtype=cp.float64)
            ptr = cb.data.ptr
            pk.parallel_for(n, axpy, a=2.0, x=ca, y=cb)  # in place on CuPy's memory
            cp.cuda.runtime.deviceSynchronize()
            np.testing.assert_allclose(cp.asnumpy(cb), 2.0 * np.arange(n) + 1.0)
            assert cb.data.ptr == ptr
            cs = cp.zeros(2 * n, dtype=cp.float64)[::2]  # strided device view
            pk.parallel_for(n, axpy, a=1.0, x=ca, y=cs)
            cp.cuda.runtime.deviceSynchronize()
            np.testing.assert_allclose(cp.asnumpy(cs), np.arange(n))
            pk._native.set_lazy(True)
            pk.parallel_for(n, axpy, a=1.0, x=ca, y=cb)  # foreign memory: runs before the call returns
            cp.cuda.runtime.deviceSynchronize()
            np.testing.assert_allclose(cp.asnumpy(cb), 3.0 * np.arange(n) + 1.0)
            pk._native.set_lazy(False)
            print("CuPy arrays as kernel arguments (in place, strided, lazy): OK")

            class OnlyDLPack:  # a producer with DLPack alone (no CUDA array interface)
                def __init__(self, a):
                    self.a = a

                def __dlpack__(self, stream=None, **kw):
                    return self.a.__dlpack__()

                def __dlpack_device__(self):
                    return self.a.__dlpack_device__()

            dz = cp.zeros(n, dtype=cp.float64)
            pk.parallel_for(n, axpy, a=1.0, x=OnlyDLPack(ca), y=OnlyDLPack(dz))
            cp.cuda.runtime.deviceSynchronize()
            np.testing.assert_allclose(cp.asnumpy(dz), np.arange(n))
            out = cp.from_dlpack(y)  # a device view exported through DLPack
            np.testing.assert_allclose(cp.asnumpy(out), np.asarray(y))
            print("DLPack: CUDA tensors as kernel arguments, device views exported: OK")
        except Exception as e:  # noqa: BLE001
            pk._native.set_lazy(False)
            print(f"CuPy arrays as kernel arguments: FAILED {e!r}")

    # Launch overhead: a cached 1-element kernel on device-resident views.
    one_x, one_y = pk.View([1], pk.double), pk.View([1], pk.double)
    pk.parallel_for(1, axpy, a=1.0, x=one_x, y=one_y)
    ts = []
    for _ in range(2000):
        t0 = time.perf_counter()
        pk.parallel_for(1, axpy, a=1.0, x=one_x, y=one_y)
        ts.append(time.perf_counter() - t0)
    print(f"GPU launch overhead, cached 1-element kernel (+fence), median of 2000: "
          f"{statistics.median(ts) * 1e6:.1f} us (min {min(ts) * 1e6:.1f} us)")

    N = 1 << 27
    a, b, c = pk.View([N], pk.double), pk.View([N], pk.double), pk.View([N], pk.double)
    t, _ = timed(lambda: pk.parallel_for(N, triad, s=3.0, a=a, b=b, c=c))
    print(f"triad first call (compile + device allocation): {t:.2f} s")
    best = float("inf")
    for _ in range(20):
        t0 = time.perf_counter()
        pk.parallel_for(N, triad, s=3.0, a=a, b=b, c=c)
        best = min(best, time.perf_counter() - t0)
    gbs = 3 * 8 * N / best / 1e9
    print(f"triad over 2^27 doubles, best of 20: {best * 1e3:.3f} ms = {gbs:.0f} GB/s (3 x 8 B per element)")
    if cp is not None:
        src = cp.random.random(N)
        dst = cp.empty_like(src)
        cp.cuda.Device().synchronize()
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        cbest = float("inf")
        for _ in range(20):
            start.record()
            dst[...] = src
            stop.record()
            stop.synchronize()
            cbest = min(cbest, cp.cuda.get_elapsed_time(start, stop) / 1e3)
        cgbs = 2 * 8 * N / cbest / 1e9
        print(f"CuPy device-to-device copy of 2^27 doubles, best of 20: {cbest * 1e3:.3f} ms = "
              f"{cgbs:.0f} GB/s (read + write)")
        print(f"triad / copy bandwidth: {gbs / cgbs:.2f}")
    print("PK CUDA VIEWS: PASSED")


if __name__ == "__main__":
    main()
