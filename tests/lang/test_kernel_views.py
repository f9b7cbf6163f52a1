"""Views inside kernels: v[i][j] and v[i, j], extent(), 2-D/3-D, layouts, NumPy
arguments, and in-kernel subviews (A[j, :]) indexed directly, bound to locals
and passed to @pk.function helpers."""
import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles  # these tests compile C++ kernels


@pk.function
def row_sum(row) -> float:
    s = 0.0
    for k in range(row.extent(0)):
        s += row[k]
    return s


@pk.function
def scale_row(row: pk.View1D[pk.double], f: float):
    for k in range(len(row)):
        row[k] = row[k] * f


@pk.function
def plane_trace(p) -> float:
    t = 0.0
    for k in range(min(p.extent(0), p.extent(1))):
        t += p[k][k]
    return t


@pk.workunit
def index_forms(i, A, B, out):
    s = 0.0
    for j in range(A.extent(1)):
        s += A[i][j] * 10 + A[i, j]
    out[i, 0] = s
    out[i, 1] = A.extent(0) * 100 + A.extent(1)
    t = 0.0
    for j in range(B.extent(1)):
        for k in range(B.extent(2)):
            t += B[i][j][k] - B[i, j, k] + B[i, j][k]
    out[i, 2] = t
    out[i, 3] = B.extent(2) + len(A) + A[-1][-2] * 1000 + len(A[i, 1:-1]) * 10000


@pk.workunit
def subviews(i, A, B, out):
    row = A[i, :]
    out[i, 0] = row_sum(row)
    out[i, 1] = row_sum(A[i, :])
    out[i, 2] = A[i, :][1] + A[i][:][2]
    out[i, 3] = row_sum(A[:, 0])
    part = A[i, 1:3]
    out[i, 4] = part[0] * 100 + part[1] + part.extent(0) * 1000
    out[i, 5] = plane_trace(B[i, :, :])
    out[i, 6] = row_sum(B[i, 1, :]) + row_sum(B[i][2])
    out[i, 7] = row.extent(0) + len(A[i, 2:])


def test_index_forms_and_extents():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    b = np.arange(3 * 4 * 5, dtype=np.float64).reshape(3, 4, 5) * 0.5
    A = pk.array(a.copy())
    B = pk.array(b.copy())
    out = pk.View([3, 4], pk.double)
    pk.parallel_for(3, index_forms, A=A, B=B, out=out)
    expect = np.zeros((3, 4))
    expect[:, 0] = a.sum(axis=1) * 11
    expect[:, 1] = 3 * 100 + 4
    expect[:, 2] = b.sum(axis=(1, 2))
    expect[:, 3] = 5 + 3 + a[-1][-2] * 1000 + len(a[0, 1:-1]) * 10000
    np.testing.assert_allclose(np.asarray(out), expect)


def test_in_kernel_subviews():
    a = np.arange(12, dtype=np.float64).reshape(3, 4) + 1
    b = np.arange(3 * 4 * 5, dtype=np.float64).reshape(3, 4, 5)
    A = pk.array(a.copy())
    B = pk.array(b.copy())
    out = pk.View([3, 8], pk.double)
    pk.parallel_for(3, subviews, A=A, B=B, out=out)
    expect = np.zeros((3, 8))
    for i in range(3):
        expect[i] = [a[i].sum(), a[i].sum(), a[i, 1] + a[i, 2], a[:, 0].sum(),
                     a[i, 1] * 100 + a[i, 2] + 2000, np.trace(b[i]),
                     b[i, 1].sum() + b[i, 2].sum(), 4 + 2]
    np.testing.assert_allclose(np.asarray(out), expect)


@pk.workunit
def scale_rows(i, A, f):
    scale_row(A[i, :], f)
    A[i, 0] += 1.0


def test_writes_through_subviews_and_layouts():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    for layout in (pk.LayoutRight, pk.LayoutLeft):
        A = pk.View([3, 4], pk.double, layout=layout)
        A[:] = a
        pk.parallel_for(3, scale_rows, A=A, f=2.0)
        expect = a * 2
        expect[:, 0] += 1
        np.testing.assert_allclose(np.asarray(A), expect)


def test_numpy_arrays_as_views_are_written_in_place():
    # A NumPy array is a view argument too; a transposed one is strided.
    a = np.arange(12, dtype=np.float64).reshape(4, 3).T
    pk.parallel_for(3, scale_rows, A=a, f=3.0)
    expect = np.arange(12, dtype=np.float64).reshape(4, 3).T * 3
    expect[:, 0] += 1
    np.testing.assert_allclose(a, expect)


@pk.workunit
def view_locals(i, A, out):
    row = A[0, :]
    best = row_sum(row)
    for k in range(1, A.extent(0)):
        row = A[k, :]              # rebinding a view local in a loop
        if row_sum(row) > best:
            best = row_sum(row)
    out[i, 0] = best
    out[i, 1] = row[i]             # the last row, used after the loop
    whole = A                      # an alias of the whole view
    col = whole[:, i]
    out[i, 2] = row_sum(col)
    tail = col[1:]
    tail[0] = tail[0]              # written through the alias chain
    out[i, 3] = tail.extent(0)


def test_view_locals_rebound_and_aliased():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    for layout in (pk.LayoutRight, pk.LayoutLeft):
        A = pk.View([3, 4], pk.double, layout=layout)
        A[:] = a
        out = pk.View([3, 4], pk.double)
        pk.parallel_for(3, view_locals, A=A, out=out)
        expect = [[a.sum(axis=1).max(), a[2, i], a[:, i].sum(), 2] for i in range(3)]
        np.testing.assert_allclose(np.asarray(out), expect)
