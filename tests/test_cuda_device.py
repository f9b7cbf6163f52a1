"""Device memory on the GPU: mirrors, copies, asynchronous launches, CUDA interop.

These tests need a GPU and a CUDA build of Kokkos; they are collected only when
PK_TEST_SPACE=cuda (`make test-gpu` on the GPU machine). The rest of the suite runs
there too, on the Cuda space; this module covers what only device memory has.
Each test runs eagerly and lazily (conftest's pk_mode).
"""

from __future__ import annotations

import numpy as np
import pytest

import pykokkos as pk

pytestmark = pytest.mark.device_only

N = 1 << 16


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
def bump(i, v):
    v[i] = v[i] + 1.0


@pk.workunit
def bump_by(i, v, s):
    v[i] = v[i] + s


@pk.workunit
def fill(i, a, x, y):
    y[i] = a * x[i]


class OnlyDLPack:
    """A producer with DLPack alone (no CUDA array interface)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None, **kw):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_cuda_is_the_default_space():
    assert "CUDA" in pk.config()["kokkos_config"].split()
    assert pk.config()["cuda_arch"].startswith("sm_")  # what kernels are built for
    assert pk.get_default_space() is pk.Cuda


def test_views_round_trip_through_the_device(pk_mode, rng):
    xr, yr = rng.random(N), rng.random(N)
    x, y = pk.View([N], pk.double), pk.View([N], pk.double, space=pk.CudaSpace)
    np.asarray(x)[:] = xr
    np.asarray(y)[:] = yr
    pk.parallel_for(N, axpy, a=2.0, x=x, y=y)
    np.testing.assert_array_equal(np.asarray(y), 2.0 * xr + yr)
    # The host rewrites y: the next launch must see the host copy.
    np.asarray(y)[:] = yr
    pk.parallel_for(pk.RangePolicy(pk.Cuda, 0, N), axpy, a=3.0, x=x, y=y)
    np.testing.assert_array_equal(y.data, 3.0 * xr + yr)
    # Device write, device reduce, host read, with no host round trip in between.
    pk.parallel_for(N, axpy, a=1.0, x=x, y=y)
    total = pk.parallel_reduce(N, dot, x=x, y=y)
    want = 1.0 * xr + (3.0 * xr + yr)  # the device's order of roundings
    np.testing.assert_array_equal(np.asarray(y), want)
    assert float(total) == pytest.approx(float(np.dot(xr, want)), rel=1e-12)


def test_read_only_input_rewritten_on_the_host(pk_mode, rng):
    xr = rng.random(N)
    x, out = pk.View([N], pk.double), pk.View([N], pk.double)
    np.asarray(x)[:] = 2.0 * xr
    pk.parallel_for(N, axpy, a=1.0, x=x, y=out)
    np.testing.assert_array_equal(np.asarray(out), 2.0 * xr)
    np.asarray(x)[:] = xr
    pk.parallel_for(N, axpy, a=1.0, x=x, y=out)
    np.testing.assert_array_equal(np.asarray(out), 3.0 * xr)
    np.testing.assert_array_equal(np.asarray(x), xr)


def test_two_dimensional_view(pk_mode, rng):
    mr = rng.random((300, 70))
    m = pk.View([300, 70], pk.double)
    np.asarray(m)[:] = mr
    pk.parallel_for(300, scale2d, a=0.5, m=m)
    np.testing.assert_array_equal(np.asarray(m), 0.5 * mr + np.arange(70)[None, :])


def test_numpy_arguments_are_copied_in_and_back(pk_mode, rng):
    xr, yr = rng.random(N), rng.random(N)
    xa, ya = xr.copy(), yr.copy()
    pk.parallel_for(N, axpy, a=2.0, x=xa, y=ya)
    np.testing.assert_array_equal(ya, 2.0 * xr + yr)
    np.testing.assert_array_equal(xa, xr)


def test_subviews_offset_device_pointers(pk_mode, rng):
    xr = rng.random(N)
    x, ys = pk.View([N], pk.double), pk.View([N], pk.double)
    np.asarray(x)[:] = xr
    pk.parallel_for(N - N // 2, axpy, a=1.0, x=x[N // 2 :], y=ys[N // 2 :])
    want = np.zeros(N)
    want[N // 2 :] = xr[N // 2 :]
    np.testing.assert_array_equal(np.asarray(ys), want)


def test_host_reads_keep_the_device_copy_current(pk_mode, rng):
    xr = rng.random(N)
    x, y = pk.View([N], pk.double), pk.View([N], pk.double)
    np.asarray(x)[:] = xr
    pk.parallel_for(N, axpy, a=1.0, x=x, y=y)
    pk.flush()  # lazy mode: the launch (and its copies) happen now
    h2d, d2h = pk.device_copies()
    # The first element read after a device write copies that element; the
    # next read brings y back whole, and reads leave both copies current.
    assert y[3] == xr[3]
    assert pk.device_copies()[1] - d2h == 8
    assert str(y) and float(y[N - 1]) == xr[N - 1]
    assert list(y)[:2] == list(xr[:2]) and (y == xr).all()
    pk.parallel_for(N, axpy, a=1.0, x=x, y=y)
    assert float(y[5]) == xr[5] + xr[5]
    h2d2, d2h2 = pk.device_copies()
    assert h2d2 == h2d, "a host read made the next launch copy y over again"
    assert d2h2 - d2h == N * 8 + 2 * 8  # y whole once, and one element after each device write
    # A host write (through NumPy) makes the next launch copy y over.
    np.asarray(y)[:] = 0.0
    pk.parallel_for(N, axpy, a=1.0, x=x, y=y)
    pk.flush()
    assert pk.device_copies()[0] - h2d2 == N * 8
    np.testing.assert_array_equal(np.asarray(y), xr)


def test_an_element_read_after_device_writes_copies_the_element(pk_mode):
    # A loop that reads one element after its kernels moves 8 bytes a turn;
    # reading many elements one by one brings the view back once.
    x = pk.View([N], pk.double)
    for k in range(3):
        pk.parallel_for(N, bump, v=x)
        d2h = pk.device_copies()[1]
        assert x[7] == k + 1 and x.shape == (N,)
        assert pk.device_copies()[1] - d2h == 8
        pk.parallel_for(N, bump_by, v=x, s=0.5)
        d2h = pk.device_copies()[1]
        assert float(x[N - 1]) == k + 1.5
        x[0] = x[0] - 0.5  # a read (whole: the second since the write), then a host write
        assert pk.device_copies()[1] - d2h == 8 + N * 8
        np.testing.assert_array_equal(np.asarray(x)[1:], k + 1.5)
        np.asarray(x)[1:] = k + 1.0
    d2h = pk.device_copies()[1]
    pk.parallel_for(N, bump, v=x)
    assert [x[i] for i in range(0, N, 4096)] == [4.0] * (N // 4096)
    assert pk.device_copies()[1] - d2h == 8 + N * 8


def test_an_output_a_launch_only_stores_is_not_copied_in(pk_mode, rng):
    # y (NumPy) is stored at every index and never read: it crosses back, not
    # in. Over part of its range it crosses in too (the rest keeps its values).
    xr = rng.random(N)
    y = np.full(N, 7.0)
    h2d, d2h = pk.device_copies()
    pk.parallel_for(N, fill, a=2.0, x=xr, y=y)
    pk.flush()
    assert pk.device_copies() == (h2d + N * 8, d2h + N * 8)  # x in, y back
    np.testing.assert_array_equal(y, 2.0 * xr)
    y = np.full(N, 7.0)
    h2d = pk.device_copies()[0]
    pk.parallel_for(N - 8, fill, a=2.0, x=xr, y=y)
    pk.flush()
    assert pk.device_copies()[0] - h2d == 2 * N * 8
    want = np.full(N, 7.0)
    want[: N - 8] = 2.0 * xr[: N - 8]
    np.testing.assert_array_equal(y, want)
    # Read as well as stored (axpy): copied in.
    y = np.full(N, 7.0)
    h2d = pk.device_copies()[0]
    pk.parallel_for(N, axpy, a=1.0, x=xr, y=y)
    pk.flush()
    assert pk.device_copies()[0] - h2d == 2 * N * 8
    np.testing.assert_array_equal(y, xr + 7.0)


def test_a_loop_of_launches_fusion_leaves_apart_replays_as_one_cuda_graph():
    # Ten launches over ten ranges (no two fuse) and reads, again and again,
    # in lazy mode: once learned, each iteration's launches go to the GPU as
    # one CUDA graph, patched with the iteration's scalar (and, in the second
    # half, view). Values equal NumPy's throughout.
    was = pk._native.lazy_enabled()
    pk._native.set_lazy(True)
    try:
        views = [pk.View([2000], pk.double) for _ in range(2)]
        refs = [np.zeros(2000) for _ in range(2)]
        for v in views:  # memory of its own first (a fresh one is another program)
            pk.parallel_for(2000, bump_by, v=v, s=0.0)
        pk.flush()  # (a learned flush replays only with nothing else pending)
        runs = pk._native.tape_runs()
        for it in range(40):
            which = it % 2 if it >= 20 else 0
            v, ref, s = views[which], refs[which], float(1 + it % 3)
            for k in range(10):
                pk.parallel_for(1000 + 100 * k, bump_by, v=v, s=s)
                ref[: 1000 + 100 * k] += s
            assert float(v[1999]) == ref[1999] and float(v[0]) == ref[0]
        replayed = pk._native.tape_runs() - runs
    finally:
        pk._native.set_lazy(was)
    for v, ref in zip(views, refs):
        np.testing.assert_array_equal(np.asarray(v), ref)
    assert replayed >= 30, f"{replayed} of 40 iterations replayed"


def test_back_to_back_launches_are_all_seen_by_the_host(pk_mode):
    # Launches do not wait for the GPU; a host read must still see every one.
    v = pk.View([N], pk.double)
    for _ in range(200):
        pk.parallel_for(N, bump, v=v)
    assert v[N - 1] == 200.0
    np.testing.assert_array_equal(np.asarray(v), np.full(N, 200.0))


def test_managed_memory_is_read_after_the_kernels_finish(pk_mode, rng):
    xr = rng.random(N)
    x = pk.View([N], pk.double)
    np.asarray(x)[:] = xr
    u = pk.View([N], pk.double, space=pk.CudaUVMSpace)
    np.asarray(u)[:] = 1.0
    for _ in range(50):
        pk.parallel_for(N, axpy, a=1.0, x=x, y=u)
    # No fence: reading managed memory must wait for the kernels by itself.
    np.testing.assert_allclose(np.asarray(u), 1.0 + 50 * xr, rtol=1e-13)


@pytest.fixture
def cp():
    import cupy  # the GPU machine's image has CuPy; interop is what these tests check

    return cupy


def test_cuda_array_interface_export_reads_and_writes(pk_mode, rng, cp):
    xr = rng.random(N)
    x, y = pk.View([N], pk.double), pk.View([N], pk.double)
    np.asarray(x)[:] = xr
    pk.parallel_for(N, axpy, a=2.0, x=x, y=y)
    cai = y.__cuda_array_interface__
    assert cai["shape"] == (N,) and cai["typestr"] == "<f8"
    c = cp.asarray(y)  # no copy: the view's device memory
    np.testing.assert_array_equal(cp.asnumpy(c), 2.0 * xr)
    c *= 2.0
    np.testing.assert_array_equal(np.asarray(y), 4.0 * xr)


@pk.workunit
def first_column_plus_one(i, m):
    m[i][0] = m[i][0] + 1


def test_pk_array_of_a_cupy_array_is_a_view_of_its_device_memory(pk_mode, cp):
    """Upstream's `pk.array(cupy_array)`: kernels on the Cuda space write the
    CuPy array's own memory."""
    ca = cp.zeros((N, 2), dtype=cp.int32)
    v = pk.array(ca)
    assert v.shape == (N, 2) and v.dtype is pk.int32
    pk.parallel_for(pk.RangePolicy(pk.Cuda, 0, N), first_column_plus_one, m=v)
    pk.fence()
    want = np.zeros((N, 2), dtype=np.int32)
    want[:, 0] = 1
    np.testing.assert_array_equal(cp.asnumpy(ca), want)


def test_cupy_arrays_are_used_in_place(pk_mode, cp):
    ca = cp.arange(N, dtype=cp.float64)
    cb = cp.ones(N, dtype=cp.float64)
    ptr = cb.data.ptr
    pk.parallel_for(N, axpy, a=2.0, x=ca, y=cb)
    np.testing.assert_array_equal(cp.asnumpy(cb), 2.0 * np.arange(N) + 1.0)
    assert cb.data.ptr == ptr
    cs = cp.zeros(2 * N, dtype=cp.float64)[::2]  # strided device memory
    pk.parallel_for(N, axpy, a=1.0, x=ca, y=cs)
    np.testing.assert_array_equal(cp.asnumpy(cs), np.arange(N, dtype=np.float64))


def test_dlpack_inputs_and_export(pk_mode, cp):
    ca = cp.arange(N, dtype=cp.float64)
    dz = cp.zeros(N, dtype=cp.float64)
    pk.parallel_for(N, axpy, a=1.0, x=OnlyDLPack(ca), y=OnlyDLPack(dz))
    np.testing.assert_array_equal(cp.asnumpy(dz), np.arange(N, dtype=np.float64))
    y = pk.View([N], pk.double)
    pk.parallel_for(N, axpy, a=3.0, x=ca, y=y)
    out = cp.from_dlpack(y)
    np.testing.assert_array_equal(cp.asnumpy(out), 3.0 * np.arange(N))


def test_dlpack_exports_name_the_gpu_kernels_run_on(pk_mode, cp):
    y = pk.View([N], pk.double)
    pk.parallel_for(N, axpy, a=1.0, x=cp.ones(N), y=y)
    assert y.__dlpack_device__() == (2, pk._native.device_id())
    assert cp.from_dlpack(y).device.id == pk._native.device_id()


def test_a_tensor_on_another_gpu_is_refused(pk_mode, cp):
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs a second GPU (nvidia-h100-x2)")
    other = (pk._native.device_id() + 1) % cp.cuda.runtime.getDeviceCount()
    with cp.cuda.Device(other):
        elsewhere = cp.zeros(N, dtype=cp.float64)
    with pytest.raises(TypeError, match=f"on GPU {other} passed to a kernel that runs on GPU"):
        pk.parallel_for(N, bump, v=OnlyDLPack(elsewhere))
        pk.flush()


def test_cupy_arrays_are_refused_by_host_kernels(cp):
    ca = cp.zeros(8, dtype=cp.float64)
    with pytest.raises(TypeError, match="Cuda space"):
        pk.parallel_for(pk.RangePolicy(pk.OpenMP, 0, 8), bump, v=ca)
        pk.flush()


def test_a_row_handed_out_copies_the_row_not_the_view(pk_mode):
    # What mpi4py does with a halo row of a large GPU View: the buffer protocol
    # on a subview brings only its bytes over, and what was written into them
    # goes back to the device when the export ends.
    R, C = 512, 256
    m = pk.View([R, C], pk.double, layout=pk.LayoutRight)  # a row is one run of memory
    pk.parallel_for(R, scale2d, a=1.0, m=m)  # on the device: m[i][j] = j
    pk.flush()
    h2d, d2h = pk.device_copies()
    with memoryview(m[3]) as row:
        np.testing.assert_array_equal(np.asarray(row), np.arange(C))
    with memoryview(m[4]) as row:
        np.asarray(row)[:] = -1.0  # a message received into row 4
    assert pk.device_copies()[1] - d2h == 2 * C * 8  # two rows came back, not the View
    pk.parallel_for(R, scale2d, a=2.0, m=m)  # m = 2 m + j, row 4 included
    pk.flush()
    assert pk.device_copies()[0] - h2d <= 2 * C * 8  # and went back as rows
    want = np.tile(3.0 * np.arange(C), (R, 1))
    want[4] = -2.0 + np.arange(C)
    np.testing.assert_array_equal(np.asarray(m), want)


@pytest.mark.parametrize("space", [pk.CudaSpace, pk.CudaUVMSpace])
def test_fill_runs_on_the_device_and_converts_as_numpy(pk_mode, space, monkeypatch):
    # ExaMiniMD zeroes its forces with `f.fill(0)` every step: on the device a
    # kernel fills the view, with no copy to the host and back (a managed
    # view would migrate its pages).
    from pykokkos.runtime import _fill

    filled = []
    real = _fill.fill
    monkeypatch.setattr(_fill, "fill", lambda v, x, dt: filled.append(real(v, x, dt)) or filled[-1])
    cases = [
        ((7,), pk.double, 2.5),
        ((5, 3), pk.double, 0),
        ((4, 3, 2), pk.float, 1.0 / 3.0),
        ((6, 2), pk.int32, 7.9),
        ((9,), pk.uint8, 200),
        ((3,), pk.bool, 1),
        ((0, 3), pk.double, 1.0),
    ]
    for shape, dtype, value in cases:
        v = pk.View(list(shape), dtype, space=space)
        if v.rank() == 1:
            pk.parallel_for(shape[0], bump, v=v)  # the device copy is the newer one
        v.fill(value)
        want = np.empty(shape, np.asarray(v).dtype)
        want.fill(value)
        np.testing.assert_array_equal(np.asarray(v), want)
    assert len(filled) >= 3 and all(filled)  # at least the three rank-1 views, filled there
    sub = pk.View([6, 4], pk.double, space=space)
    pk.parallel_for(6, scale2d, a=1.0, m=sub)  # columns j
    sub[:, 1].fill(-2.0)  # strided: only that column
    want = np.tile(np.arange(4.0), (6, 1))
    want[:, 1] = -2.0
    np.testing.assert_array_equal(np.asarray(sub), want)
    ints = pk.View([3], pk.int32, space=space)
    pk.parallel_for(3, bump, v=ints)
    with pytest.raises(OverflowError):  # as NumPy's fill
        ints.fill(2**40)


@pk.workunit
def index_2d(i, m):
    for j in range(m.extent(1)):
        m[i][j] = 10.0 * i + j


@pytest.mark.parametrize("layout", ["left", "right"])
def test_resize_of_views_kernels_wrote_copies_on_the_device(pk_mode, layout, rng):
    """Kokkos::resize's way: the kept elements move GPU to GPU, nothing comes
    back to the host; a column change of a row-major view (one copy per row)
    takes the host way; both equal NumPy's copy of the kept block."""
    lay = pk.LayoutLeft if layout == "left" else pk.LayoutRight
    v = pk.View([N], pk.double, layout=lay)
    m = pk.View([1000, 3], pk.double, layout=lay)
    pk.parallel_for(N, bump, v=v)
    pk.parallel_for(1000, index_2d, m=m)
    want_m = np.add.outer(10.0 * np.arange(1000), np.arange(3.0))
    for vsize, size in ((N + 100, 1500), (N // 2, 700)):
        pk.flush()
        h2d, d2h = pk.device_copies()
        v.resize(0, vsize)
        m.resize(0, size)
        assert pk.device_copies() == (h2d, d2h), "a resize went through the host"
        assert m.layout is lay and v.shape == (vsize,) and m.shape == (size, 3)
        keep = min(size, want_m.shape[0])
        grown = np.zeros((size, 3))
        grown[:keep] = want_m[:keep]
        want_m = grown
        pk.parallel_for(size, bump_row0, m=m)
        want_m[:, 0] += 1.0
    np.testing.assert_array_equal(np.asarray(m), want_m)
    np.testing.assert_array_equal(np.asarray(v), np.ones(N // 2))
    # Columns of a row-major view of 100 rows (a copy per row, past 64): the host way.
    r = pk.View([100, 3], pk.double, layout=pk.LayoutRight)
    pk.parallel_for(100, index_2d, m=r)
    r.resize(1, 5)
    want_r = np.zeros((100, 5))
    want_r[:, :3] = np.add.outer(10.0 * np.arange(100), np.arange(3.0))
    np.testing.assert_array_equal(np.asarray(r), want_r)


@pk.workunit
def bump_row0(i, m):
    m[i][0] = m[i][0] + 1.0


def test_gpu_memory_of_dropped_views_is_reused_and_starts_zeroed(pk_mode):
    """Dropped views' GPU memory goes back to a pool (memory/pool.rs), not to
    cudaFree: every new view still starts at zero, and what a dropped view's
    queued kernels wrote never shows in the view that gets its block."""
    for k in range(12):
        n = N + 64 * (k % 3)  # sizes within one class share blocks
        v = pk.View([n], pk.double)
        for _ in range(k % 4 + 1):
            pk.parallel_for(n, bump, v=v)
        assert float(v[n - 1]) == k % 4 + 1
        w = pk.View([n], pk.double)
        pk.parallel_for(n, bump_by, v=w, s=0.5)
        np.testing.assert_array_equal(np.asarray(w), 0.5)
        del v, w
