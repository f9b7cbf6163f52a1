"""MDRangePolicy, parallel_scan, and kokkos-tutorials style programs."""
import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles  # these tests compile C++ kernels


@pk.workunit
def md_fill(i, j, m, c):
    m[i][j] = i * 100 + j + c


@pk.workunit
def md_sum(i, j, acc, m):
    acc += m[i, j]


@pk.workunit
def md3(i, j, k, t):
    t[i, j, k] = i * 100 + j * 10 + k


def test_mdrange_2d_and_3d():
    m = pk.View([4, 5], pk.int64)
    pk.parallel_for(pk.MDRangePolicy([0, 0], [4, 5]), md_fill, m=m, c=7)
    expect = np.arange(4)[:, None] * 100 + np.arange(5) + 7
    np.testing.assert_array_equal(np.asarray(m), expect)
    # a sub-rectangle with a tile hint
    m2 = pk.View([4, 5], pk.int64)
    pk.parallel_for(pk.MDRangePolicy([1, 2], [3, 5], [2, 2]), md_fill, m=m2, c=0)
    e2 = np.zeros((4, 5), dtype=np.int64)
    e2[1:3, 2:5] = (np.arange(4)[:, None] * 100 + np.arange(5))[1:3, 2:5]
    np.testing.assert_array_equal(np.asarray(m2), e2)
    assert pk.parallel_reduce(pk.MDRangePolicy([0, 0], [4, 5]), md_sum, m=m) == expect.sum()
    t = pk.View([2, 3, 4], pk.int32)
    pk.parallel_for(pk.MDRangePolicy([0, 0, 0], [2, 3, 4]), md3, t=t)
    np.testing.assert_array_equal(
        np.asarray(t), np.fromfunction(lambda i, j, k: i * 100 + j * 10 + k, (2, 3, 4)))


@pk.workunit
def inclusive(i, acc, last_pass, v, out):
    acc += v[i]
    if last_pass:
        out[i] = acc


@pk.workunit
def exclusive(i: int, acc: pk.Acc[pk.int64], last_pass: bool, v: pk.View1D[pk.int64]):
    x = v[i]
    if last_pass:
        v[i] = acc
    acc += x


def test_parallel_scan_inclusive_and_exclusive():
    n = 1000
    data = (np.arange(n) % 7 - 3).astype(np.float64)
    v = pk.array(data.copy())
    out = pk.View([n], pk.double)
    total = pk.parallel_scan(n, inclusive, v=v, out=out)
    np.testing.assert_allclose(np.asarray(out), np.cumsum(data))
    assert total == data.sum()
    iv = pk.array(np.arange(1, n + 1, dtype=np.int64))
    total = pk.parallel_scan(n, exclusive, v=iv)
    assert total == n * (n + 1) // 2
    np.testing.assert_array_equal(np.asarray(iv), np.concatenate([[0], np.cumsum(np.arange(1, n))]))


# kokkos-tutorials Exercise 1-3 style: y^T A x with nested loops in a reduction
@pk.workunit
def yAx(j, acc, cols, y, x, A):
    temp2: float = 0
    for i in range(cols):
        temp2 += A[j][i] * x[i]
    acc += y[j] * temp2


@pk.workunit
def init_matrix(i, A, cols, value):
    for k in range(cols):
        A[i][k] = value + (i + k) % 3


@pk.workunit
def matvec(i, A, x, b):
    s = 0.0
    for k in range(A.extent(1)):
        s += A[i, k] * x[k]
    b[i] = s


def test_tutorial_inner_product():
    rows, cols = 64, 48
    A = pk.View([rows, cols], pk.double)
    pk.parallel_for(rows, init_matrix, A=A, cols=cols, value=1.0)
    y = pk.View([rows], pk.double)
    y.fill(1.0)
    x = pk.array(np.linspace(0, 1, cols))
    result = pk.parallel_reduce("yAx", rows, yAx, cols=cols, y=y, x=x, A=A)
    a = np.fromfunction(lambda i, k: 1.0 + (i + k) % 3, (rows, cols))
    np.testing.assert_allclose(result, np.ones(rows) @ a @ np.linspace(0, 1, cols))
    b = pk.View([rows], pk.double)
    pk.parallel_for(pk.RangePolicy(pk.OpenMP, 0, rows), matvec, A=A, x=x, b=b)
    np.testing.assert_allclose(np.asarray(b), a @ np.linspace(0, 1, cols))
    assert pk.parallel_reduce(rows, yAx, cols=cols, y=y, x=x, A=A, initial_value=1.0) == \
        result + 1.0


@pk.workunit
def running_slot(i, acc: pk.Acc[pk.int64], out):
    out[acc] = i  # the running total as a write index, as ExaMiniMD's set-up does
    acc += 1


@pk.workunit
def plain_sum(i, acc: pk.Acc[pk.double], x):
    acc += x[i]


def test_a_serial_reduction_that_reads_its_accumulator_sees_the_running_total():
    out = pk.View([300], pk.int64)
    total = pk.parallel_reduce(pk.RangePolicy(pk.Serial, 0, 300), running_slot, out=out)
    assert int(total) == 300
    np.testing.assert_array_equal(np.asarray(out), np.arange(300))
    # A body that only adds keeps the chunked form (partial sums) and the same total.
    x = np.arange(10000.0) * 0.5
    assert float(pk.parallel_reduce(10000, plain_sum, x=x)) == x.sum()
