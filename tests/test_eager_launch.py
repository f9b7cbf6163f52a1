"""Eager launches (parallel_for / reduce / scan) checked against NumPy.

Workunits live at module level and are reused across tests: every distinct
(workunit, argument-type signature) is one C++ compile.
"""
from __future__ import annotations

import numpy as np
import pytest

import pykokkos as pk
from pykokkos.runtime._lazy import LazyNumber
from conftest import KERNEL_DTYPE_IDS, KERNEL_DTYPES

SIZES = [0, 1, 2, 17, 1000]


@pk.workunit
def axpy(i, a, x, y):
    y[i] = a * x[i] + y[i]


@pk.workunit
def dot(i, acc, x, y):
    acc += x[i] * y[i]


@pk.workunit
def isum(i, acc: pk.Acc[pk.int64], x):
    acc += x[i]


@pk.workunit
def store(i, a, out):
    out[i] = a


@pk.workunit
def setflag(i, flag, out):
    if flag:
        out[i] = 1
    else:
        out[i] = 2


@pk.workunit
def negate(i, x):
    x[i] = not x[i]


@pk.workunit
def inclusive_scan(i, acc, last_pass, v, out):
    acc += v[i]
    if last_pass:
        out[i] = acc


@pk.workunit
def exclusive_scan(i, acc, last_pass, v, out):
    if last_pass:
        out[i] = acc
    acc += v[i]


@pk.workunit
def fill1(i, v):
    v[i] = i * 10 + 1


@pk.workunit
def fill2(i, j, v):
    v[i, j] = i * 100 + j + 1


@pk.workunit
def fill3(i, j, k, v):
    v[i][j][k] = i * 10000 + j * 100 + k + 1


@pk.workunit
def bump2(i, j, v):
    v[i, j] = v[i, j] + 1


@pk.workunit
def sum2(i, j, acc, v):
    acc += v[i, j]


@pk.workunit
def fill8(i, v):
    for a in range(v.extent(1)):
        for b in range(v.extent(2)):
            for c in range(v.extent(3)):
                for d in range(v.extent(4)):
                    for e in range(v.extent(5)):
                        for f in range(v.extent(6)):
                            for g in range(v.extent(7)):
                                n = i * v.extent(1) + a
                                n = n * v.extent(2) + b
                                n = n * v.extent(3) + c
                                n = n * v.extent(4) + d
                                n = n * v.extent(5) + e
                                n = n * v.extent(6) + f
                                n = n * v.extent(7) + g
                                v[i, a, b, c, d, e, f, g] = n


def operands(np_t, n):
    """Small exact values: no overflow or rounding for any of KERNEL_DTYPES."""
    x = (np.arange(n) % 7).astype(np_t)
    y = (np.arange(n) % 5 + 1).astype(np_t)
    return x, y


def scalar_for(np_t):
    return 2.5 if np.issubdtype(np_t, np.floating) else 3


# --- parallel_for -----------------------------------------------------------------------


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("pk_t,np_t", KERNEL_DTYPES, ids=KERNEL_DTYPE_IDS)
def test_for_axpy_views(pk_t, np_t, n):
    xr, yr = operands(np_t, n)
    x, y = pk.View([n], pk_t), pk.View([n], pk_t)
    np.asarray(x)[:] = xr
    np.asarray(y)[:] = yr
    a = scalar_for(np_t)
    pk.parallel_for(n, axpy, a=a, x=x, y=y)
    expected = (np_t(a) * xr + yr).astype(np_t)
    np.testing.assert_array_equal(np.asarray(y), expected)
    np.testing.assert_array_equal(np.asarray(x), xr)  # inputs untouched


@pytest.mark.parametrize("pk_t,np_t", KERNEL_DTYPES[:3], ids=KERNEL_DTYPE_IDS[:3])
def test_for_numpy_arrays_written_in_place(pk_t, np_t):
    n = 100
    xr, yr = operands(np_t, n)
    x, y = xr.copy(), yr.copy()
    y_before = y
    a = scalar_for(np_t)
    pk.parallel_for(n, axpy, a=a, x=x, y=y)
    assert y is y_before
    np.testing.assert_array_equal(y, (np_t(a) * xr + yr).astype(np_t))
    np.testing.assert_array_equal(x, xr)


def test_for_mixing_views_and_numpy_arrays():
    n = 50
    xr, yr = operands(np.float64, n)
    x = pk.array(xr.copy())
    y = yr.copy()
    pk.parallel_for(n, axpy, a=-1.5, x=x, y=y)
    np.testing.assert_allclose(y, -1.5 * xr + yr, rtol=0, atol=0)


def test_for_range_policy_touches_only_its_range():
    n = 12
    xr, yr = operands(np.float64, n)
    y = yr.copy()
    pk.parallel_for(pk.RangePolicy(3, 8), axpy, a=2.0, x=xr, y=y)
    expected = yr.copy()
    expected[3:8] = 2.0 * xr[3:8] + yr[3:8]
    np.testing.assert_array_equal(y, expected)
    # An empty range (end <= begin) does nothing.
    pk.parallel_for(pk.RangePolicy(5, 5), axpy, a=2.0, x=xr, y=y)
    pk.parallel_for(pk.RangePolicy(6, 2), axpy, a=2.0, x=xr, y=y)
    pk.parallel_for(0, axpy, a=2.0, x=xr, y=y)
    pk.parallel_for(-4, axpy, a=2.0, x=xr, y=y)  # like range(-4): nothing
    np.testing.assert_array_equal(y, expected)


def test_for_named_launch_and_fence():
    y = np.ones(9)
    pk.parallel_for("axpy_named", 9, axpy, a=1.0, x=np.arange(9.0), y=y)
    pk.fence()
    np.testing.assert_array_equal(y, np.arange(9.0) + 1)


def test_for_serial_space():
    n = 33
    xr, yr = operands(np.float64, n)
    y1 = yr.copy()
    pk.parallel_for(pk.RangePolicy(pk.Serial, 0, n), axpy, a=0.5, x=xr, y=y1)
    np.testing.assert_array_equal(y1, 0.5 * xr + yr)
    before = pk.get_default_space()
    try:
        pk.set_default_space(pk.Serial)
        assert pk.get_default_space() == pk.Serial
        y2 = yr.copy()
        pk.parallel_for(n, axpy, a=0.5, x=xr, y=y2)
        np.testing.assert_array_equal(y2, 0.5 * xr + yr)
        assert pk.parallel_reduce(n, dot, x=xr, y=yr) == float(np.dot(xr, yr))
    finally:
        pk.set_default_space(before)
    assert pk.get_default_space() == before


def test_for_bool_view():
    ref = np.array([True, False, False, True, True])
    x = pk.View([5], pk.bool)
    np.asarray(x)[:] = ref
    pk.parallel_for(5, negate, x=x)
    np.testing.assert_array_equal(np.asarray(x), ~ref)
    pk.parallel_for(5, negate, x=x)
    np.testing.assert_array_equal(np.asarray(x), ref)


# --- parallel_reduce ----------------------------------------------------------------------


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("pk_t,np_t", KERNEL_DTYPES, ids=KERNEL_DTYPE_IDS)
def test_reduce_dot(pk_t, np_t, n):
    xr, yr = operands(np_t, n)
    x, y = pk.View([n], pk_t), pk.View([n], pk_t)
    np.asarray(x)[:] = xr
    np.asarray(y)[:] = yr
    r = pk.parallel_reduce(n, dot, x=x, y=y)
    if isinstance(r, LazyNumber):  # lazy mode: the total arrives when used
        r = r._get()
    # An unannotated accumulator is a double (PyKokkos' default).
    expected = float(np.dot(xr.astype(np.float64), yr.astype(np.float64)))
    assert isinstance(r, float)
    assert r == expected


def test_reduce_numpy_arguments_and_initial_value():
    xr, yr = operands(np.float64, 64)
    assert pk.parallel_reduce(64, dot, x=xr, y=yr) == float(np.dot(xr, yr))
    r = pk.parallel_reduce(64, dot, initial_value=10.0, x=xr, y=yr)
    assert r == 10.0 + float(np.dot(xr, yr))


def test_reduce_range_policy():
    xr, yr = operands(np.float64, 40)
    r = pk.parallel_reduce(pk.RangePolicy(5, 31), dot, x=xr, y=yr)
    assert r == float(np.dot(xr[5:31], yr[5:31]))


@pytest.mark.parametrize("n", [0, 1, 1001])
def test_reduce_int64_accumulator_is_exact(n):
    # Values beyond 2**53 in total: a double accumulator would round them.
    x = (np.arange(n, dtype=np.int64) + 1) * (2**40 + 1)
    r = pk.parallel_reduce(n, isum, x=x)
    assert isinstance(r, int)
    assert r == int(x.sum()) == sum(int(v) for v in x)


# --- parallel_scan -------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_scan_inclusive_and_exclusive(n):
    v = (np.arange(n) % 9 + 1).astype(np.float64)
    out = np.full(n, -1.0)
    total = pk.parallel_scan(n, inclusive_scan, v=v, out=out)
    np.testing.assert_array_equal(out, np.cumsum(v))
    assert total == float(v.sum())
    out2 = pk.View([n], pk.double)
    total2 = pk.parallel_scan(n, exclusive_scan, v=pk.array(v), out=out2)
    np.testing.assert_array_equal(np.asarray(out2), np.concatenate([[0.0], np.cumsum(v)[:-1]])[:n])
    assert total2 == float(v.sum())


# --- scalars ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value,out_dtype,expected",
    [
        (2**40 + 3, np.int64, 2**40 + 3),  # Python int wider than int32
        (-7, np.float64, -7.0),  # Python int into a double view
        (0.1, np.float64, 0.1),  # Python float
        (np.float32(0.1), np.float64, float(np.float32(0.1))),  # keeps its float32 value
        (np.float64(-2.75), np.float32, -2.75),
        (np.int16(-300), np.int64, -300),
        (np.int64(-(2**62)), np.int64, -(2**62)),
        (np.uint64(2**63 + 5), np.uint64, 2**63 + 5),  # above int64's range
        (np.uint8(250), np.int32, 250),
        (True, np.float64, 1.0),  # Python bool
    ],
    ids=["pyint-big", "pyint-to-double", "pyfloat", "np.float32", "np.float64", "np.int16", "np.int64",
         "np.uint64", "np.uint8", "pybool"],
)
def test_scalar_arguments(value, out_dtype, expected):
    out = np.zeros(4, out_dtype)
    pk.parallel_for(4, store, a=value, out=out)
    np.testing.assert_array_equal(out, np.full(4, expected, out_dtype))


@pytest.mark.parametrize(
    "flag,expected",
    [(True, 1), (False, 2), (np.bool_(True), 1), (np.bool_(False), 2), (1, 1), (0, 2), (np.int32(5), 1)],
    ids=["True", "False", "np.True_", "np.False_", "int1", "int0", "np.int32"],
)
def test_bool_and_truthy_scalars(flag, expected):
    out = np.zeros(3, np.int32)
    pk.parallel_for(3, setflag, flag=flag, out=out)
    np.testing.assert_array_equal(out, [expected] * 3)


def test_numpy_scalar_promotion_matches_numpy():
    # NumPy scalars are strongly typed; Python numbers are weak (NEP 50).
    xr = np.arange(10, dtype=np.float32) / 3
    y = np.zeros(10, np.float32)
    pk.parallel_for(10, axpy, a=np.float32(1.1), x=xr, y=y)
    np.testing.assert_array_equal(y, np.float32(1.1) * xr + np.zeros(10, np.float32))


# --- multi-dimensional views ------------------------------------------------------------------

LAYOUTS = [pk.LayoutRight, pk.LayoutLeft]
LAYOUT_IDS = ["right", "left"]


@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUT_IDS)
def test_rank1_fill(layout):
    v = pk.View([13], pk.int64, layout=layout)
    pk.parallel_for(13, fill1, v=v)
    np.testing.assert_array_equal(np.asarray(v), np.arange(13) * 10 + 1)


@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUT_IDS)
def test_rank2_mdrange(layout):
    v = pk.View([5, 7], pk.int32, layout=layout)
    pk.parallel_for(pk.MDRangePolicy([0, 0], [5, 7]), fill2, v=v)
    i, j = np.indices((5, 7))
    expected = i * 100 + j + 1
    np.testing.assert_array_equal(np.asarray(v), expected)
    for (a, b) in [(0, 0), (4, 6), (3, 1)]:
        assert v[a, b] == expected[a, b]
    r = pk.parallel_reduce(pk.MDRangePolicy([0, 0], [5, 7]), sum2, v=v)
    assert r == float(expected.sum())
    # A sub-range leaves the rest alone.
    v.fill(0)
    pk.parallel_for(pk.MDRangePolicy([1, 2], [4, 5]), fill2, v=v)
    part = np.zeros((5, 7), np.int32)
    part[1:4, 2:5] = expected[1:4, 2:5]
    np.testing.assert_array_equal(np.asarray(v), part)
    assert pk.parallel_reduce(pk.MDRangePolicy([1, 2], [4, 5]), sum2, v=v) == float(part.sum())


@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("shape", [(2, 9000), (9000, 3), (300, 301)], ids=["few_rows", "short_rows", "square"])
def test_rank2_mdrange_split_into_tasks(layout, shape):
    """Past the in-place size a 2-D host for (and sum) runs in tasks of rows,
    of pieces of rows when there are few, or of several short rows (in the
    order the layout stores them): every item exactly once, sub-ranges
    included."""
    v = pk.View(list(shape), pk.int32, layout=layout)
    i, j = np.indices(shape)
    expected = i * 100 + j + 1
    pk.parallel_for(pk.MDRangePolicy([0, 0], list(shape)), fill2, v=v)
    np.testing.assert_array_equal(np.asarray(v), expected)
    pk.parallel_for(pk.MDRangePolicy([0, 0], list(shape)), bump2, v=v)
    np.testing.assert_array_equal(np.asarray(v), expected + 1)
    # Sums run in the same tasks, each into partial sums of its own (exact here).
    assert pk.parallel_reduce(pk.MDRangePolicy([0, 0], list(shape)), sum2, v=v) == float((expected + 1).sum())
    assert pk.parallel_reduce(pk.MDRangePolicy([1, 2], [shape[0] - 1, shape[1] - 1]), sum2, v=v) \
        == float((expected + 1)[1:-1, 2:-1].sum())
    v.fill(0)
    lo, hi = [1, 2], [shape[0] - 1, shape[1] - 1]
    pk.parallel_for(pk.MDRangePolicy(lo, hi), fill2, v=v)
    part = np.zeros(shape, np.int32)
    part[1:-1, 2:-1] = expected[1:-1, 2:-1]
    np.testing.assert_array_equal(np.asarray(v), part)


def test_empty_mdrange():
    v = pk.View([0, 5], pk.int32)
    pk.parallel_for(pk.MDRangePolicy([0, 0], [0, 5]), fill2, v=v)
    assert pk.parallel_reduce(pk.MDRangePolicy([0, 0], [0, 5]), sum2, v=v) == 0.0
    w = pk.View([3, 4], pk.int32)
    pk.parallel_for(pk.MDRangePolicy([0, 0], [3, 0]), fill2, v=w)
    np.testing.assert_array_equal(np.asarray(w), np.zeros((3, 4), np.int32))


@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUT_IDS)
def test_rank3_mdrange(layout):
    shape = (3, 4, 5)
    v = pk.View(list(shape), pk.float64, layout=layout)
    pk.parallel_for(pk.MDRangePolicy([0, 0, 0], list(shape)), fill3, v=v)
    i, j, k = np.indices(shape)
    np.testing.assert_array_equal(np.asarray(v), i * 10000 + j * 100 + k + 1)


def test_numpy_fortran_array_as_layout_left_argument():
    a = np.zeros((6, 3), np.int32, order="F")
    pk.parallel_for(pk.MDRangePolicy([0, 0], [6, 3]), fill2, v=a)
    i, j = np.indices((6, 3))
    np.testing.assert_array_equal(a, i * 100 + j + 1)


@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUT_IDS)
def test_rank8(layout):
    shape = [2, 3, 2, 1, 2, 3, 1, 2]
    v = pk.View(shape, pk.int64, layout=layout)
    assert v.rank() == 8
    pk.parallel_for(shape[0], fill8, v=v)
    np.testing.assert_array_equal(np.asarray(v), np.arange(np.prod(shape)).reshape(shape))


# --- subviews in kernels --------------------------------------------------------------------


def test_contiguous_subview_in_kernel():
    base = pk.View([10], pk.double)
    base.fill(1.0)
    sub = base[2:6]
    x = np.arange(4.0)
    pk.parallel_for(4, axpy, a=10.0, x=x, y=sub)
    expected = np.ones(10)
    expected[2:6] = 10.0 * x + 1.0
    np.testing.assert_array_equal(np.asarray(base), expected)


def test_strided_subview_in_kernel():
    base = pk.View([20], pk.double)
    sub = base[1:20:3]  # 1, 4, ..., 19
    n = len(sub)
    assert n == 7
    x = np.arange(1.0, n + 1)
    pk.parallel_for(n, axpy, a=2.0, x=x, y=sub)
    expected = np.zeros(20)
    expected[1:20:3] = 2.0 * x
    np.testing.assert_array_equal(np.asarray(base), expected)
    assert pk.parallel_reduce(n, dot, x=x, y=sub) == float(np.dot(x, 2.0 * x))


def test_column_subview_and_strided_numpy_array_in_kernel():
    m = pk.View([5, 4], pk.double)  # LayoutRight: a column is strided
    col = m[:, 2]
    x = np.arange(5.0)
    pk.parallel_for(5, axpy, a=3.0, x=x, y=col)
    expected = np.zeros((5, 4))
    expected[:, 2] = 3.0 * x
    np.testing.assert_array_equal(np.asarray(m), expected)
    arr = np.zeros(12)
    pk.parallel_for(6, axpy, a=1.0, x=np.arange(6.0), y=arr[::2])
    exp2 = np.zeros(12)
    exp2[::2] = np.arange(6.0)
    np.testing.assert_array_equal(arr, exp2)


def test_2d_block_subview_in_kernel():
    m = pk.View([6, 8], pk.int32)
    block = m[1:4, 2:7]
    pk.parallel_for(pk.MDRangePolicy([0, 0], [3, 5]), fill2, v=block)
    i, j = np.indices((3, 5))
    expected = np.zeros((6, 8), np.int32)
    expected[1:4, 2:7] = i * 100 + j + 1
    np.testing.assert_array_equal(np.asarray(m), expected)


def test_workunit_reused_with_several_signatures():
    # One workunit, three argument-type signatures; each stays usable.
    for np_t, a in [(np.float64, 1.5), (np.int32, 2), (np.float64, 0.5), (np.int32, 4)]:
        xr, yr = operands(np_t, 20)
        y = yr.copy()
        pk.parallel_for(20, axpy, a=a, x=xr, y=y)
        np.testing.assert_array_equal(y, (np_t(a) * xr + yr).astype(np_t))


@pk.workunit
def set_one(i, v):
    v[i] = 1.0


def test_a_launch_on_a_view_the_machine_cannot_hold_raises_memory_error():
    big = pk.View([2**58], pk.double)  # 2^61 bytes: no host or device holds it
    with pytest.raises(MemoryError, match="cannot allocate"):
        pk.parallel_for(10, set_one, v=big)
        pk.flush()  # lazily the launch runs (and fails) here
    ok = pk.View([10], pk.double)
    pk.parallel_for(10, set_one, v=ok)
    assert np.asarray(ok).sum() == 10.0
