"""PyKokkos' array functions (pk.sqrt, pk.add, pk.sum, ...) against NumPy on
the same data: every elementwise function as a kernel on rank-1 Views, a
sample on rank-2 Views and with Python numbers on either side, reductions,
result dtypes, and the fusion of a chain of them into one kernel."""
from __future__ import annotations

import numpy as np
import pytest

import pykokkos as pk
from pykokkos.runtime._arrays import BINARY, UNARY

pytestmark = [pytest.mark.compiles, pytest.mark.eager_only]  # lazy: the fusion test

X = np.linspace(0.25, 3.0, 12)
Y = np.linspace(-1.5, 2.0, 12)


def view(a):
    v = pk.View(list(a.shape), a.dtype.type)
    np.asarray(v)[...] = a
    return v


def close(got, want):
    got = np.asarray(got)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    np.testing.assert_allclose(got.astype(float), np.asarray(want).astype(float), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions_match_numpy(name):
    with np.errstate(all="ignore"):
        want = getattr(np, name)(X)
    close(getattr(pk, name)(view(X)), want)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_functions_match_numpy(name):
    with np.errstate(all="ignore"):
        want = getattr(np, name)(X, Y)
    close(getattr(pk, name)(view(X), view(Y)), want)


@pytest.mark.parametrize("name", ["subtract", "divide", "power", "greater"])
def test_numbers_on_either_side_and_rank_two(name):
    f, g = getattr(pk, name), getattr(np, name)
    with np.errstate(all="ignore"):
        close(f(view(X), 2.5), g(X, 2.5))
        close(f(1.5, view(Y)), g(1.5, Y))
        m, n = X.reshape(3, 4), Y.reshape(3, 4)
        close(f(view(m), view(n)), g(m, n))


def test_integer_operands_follow_numpys_result_types():
    i = np.arange(1, 9, dtype=np.int32)
    for name in ("add", "multiply", "divide", "floor_divide", "power"):
        close(getattr(pk, name)(view(i), 3), getattr(np, name)(i, 3))
    close(pk.sqrt(view(i)), np.sqrt(i))
    close(pk.floor(view(i)), np.floor(i))  # a float-only kernel: NumPy on the host


def test_math_functions_of_numbers_are_numbers():
    # Upstream's later pk.sqrt/pk.log return a number for a number, so
    # `A[0][0] = pk.sqrt(x)` stores it (a 1-element View could not be stored).
    for x in (np.float64(2.0), 2.0, np.float32(0.5), np.int64(9), 3):
        for name in ("sqrt", "log", "exp", "sin", "floor"):
            got, want = getattr(pk, name)(x), getattr(np, name)(x)
            assert np.ndim(got) == 0 and not isinstance(got, pk.View), (name, x)
            assert got == pytest.approx(want, rel=1e-6) and np.asarray(got).dtype == np.asarray(want).dtype
    a = pk.View([2, 2], pk.double)
    a[0][0] = pk.sqrt(np.float64(2.0))
    assert a[0][0] == pytest.approx(np.sqrt(2.0), rel=1e-15)


def test_reductions():
    x, m = view(X), view(X.reshape(3, 4))
    assert float(pk.sum(x)) == pytest.approx(X.sum(), rel=1e-14)
    assert float(pk.sum(m)) == pytest.approx(X.sum(), rel=1e-14)
    assert pk.mean(x) == pytest.approx(X.mean(), rel=1e-14)
    assert pk.var(m) == pytest.approx(X.var(), rel=1e-13)
    assert float(pk.dot(x, view(Y))) == pytest.approx(np.dot(X, Y), rel=1e-13)
    np.testing.assert_allclose(np.asarray(pk.sum(m, axis=0)), X.reshape(3, 4).sum(axis=0))
    assert pk.argmax(x) == np.argmax(X)
    assert pk.transpose(m).shape == (4, 3) and pk.iinfo(pk.int32).max == 2**31 - 1
    np.testing.assert_array_equal(np.asarray(pk.col(m, 2)), X.reshape(3, 4)[:, 2])
    np.testing.assert_array_equal(np.asarray(pk.index(x, view(np.array([3, 0, 3], np.int32)))), X[[3, 0, 3]])
    np.testing.assert_array_equal(np.asarray(pk.broadcast_view(2.5, m)), np.full((3, 4), 2.5))


def test_a_chain_of_array_functions_is_one_kernel_under_fusion():
    pk._native.set_lazy(True)
    pk._native.explain_history()
    try:
        a, b = view(X), view(Y)
        total = float(pk.sum(pk.sqrt(pk.add(pk.multiply(a, a), pk.multiply(b, b)))))
        report = pk.explain(show=False)
    finally:
        pk._native.set_lazy(False)
    assert total == pytest.approx(np.sqrt(X * X + Y * Y).sum(), rel=1e-13)
    assert "flush: 5 launch(es) -> 1 kernel(s)" in report, report
    assert "dead temporaries kept in registers" in report
    assert "test_arrays.py" in report  # launches name the user's line, not the package's
