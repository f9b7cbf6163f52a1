"""Reading one reduction's total runs, in the same flush, the other pending
reductions over the same range that need nothing else pending and whose
kernels built before: they hold
results, so they run anyway, and together they are one multi-value reduction
(one pass). Built-in reducers (pk.Max, pk.Min, pk.Prod, ...) join sums in it.
Results equal NumPy's and eager mode's."""
from __future__ import annotations

import numpy as np
import pytest

import pykokkos as pk

pytestmark = pytest.mark.eager_only  # each test sets its own mode

N = 301


@pk.workunit
def total(i, acc, v):
    acc += v[i]


@pk.workunit
def biggest(i, acc, v):
    if v[i] > acc:
        acc = v[i]


@pk.workunit
def smallest(i, acc, v):
    acc = min(acc, v[i])


@pk.workunit
def fill(i, v, x):
    v[i] = x + i


def _views():
    x, y, z = (pk.View([N], pk.double) for _ in range(3))
    np.asarray(x)[:] = np.sin(np.arange(N))
    np.asarray(y)[:] = np.cos(np.arange(N)) * 3.0
    return x, y, z


def _program():
    x, y, z = _views()
    a = pk.parallel_reduce(N, total, v=x)
    b = pk.parallel_reduce(N, biggest, v=x, reducer=pk.Max)
    c = pk.parallel_reduce(N, smallest, v=y, reducer=pk.Min)
    d = pk.parallel_reduce(N - 1, total, v=y)  # another range: not taken along
    pk.parallel_for(N, fill, v=z, x=0.5)
    e = pk.parallel_reduce(N, total, v=z)  # needs the pending fill: not taken along
    first = float(a)
    pending_after_first = pk.pending()
    return first, pending_after_first, [float(b), float(c), float(d), float(e)]


def test_one_read_runs_the_sibling_reductions_in_one_kernel(lazy):
    # Siblings are taken along once their kernels built (a compile error of
    # one is reported at its own read): the program ran once before, eagerly.
    pk._native.set_lazy(False)
    _program()
    pk._native.set_lazy(True)
    pk._native.explain_history()
    first, pending, rest = _program()
    xs, ys = np.sin(np.arange(N)), np.cos(np.arange(N)) * 3.0
    want = [xs.max(), ys.min(), ys[: N - 1].sum(), (0.5 + np.arange(N)).sum()]
    assert np.isclose(first, xs.sum(), rtol=1e-13)
    assert rest[:2] == want[:2]  # max and min are exact
    assert np.allclose(rest[2:], want[2:], rtol=1e-13)
    # a, b and c ran in the first flush; d (other range), the fill and e did not.
    assert pending == 3
    history = pk._native.explain_history()
    assert "flush: 3 launch(es) -> 1 kernel(s)" in history[0], history[0]
    assert "fused(total+biggest+smallest)" in history[0], history[0]


def test_eager_gives_the_same_totals():
    lazy_first, _, lazy_rest = None, None, None
    pk._native.set_lazy(True)
    try:
        lazy_first, _, lazy_rest = _program()
    finally:
        pk.flush()
        pk._native.set_lazy(False)
    first, pending, rest = _program()
    assert pending == 0
    assert np.isclose(first, lazy_first, rtol=1e-13)
    assert rest[:2] == lazy_rest[:2]
    assert np.allclose(rest[2:], lazy_rest[2:], rtol=1e-13)


@pk.workunit
def broken(i, acc, v):
    acc += v  # a view used as a number: a type error when it is translated


def test_a_sibling_that_never_built_is_not_taken_along(lazy):
    """Its error belongs to its own read, not to another result's."""
    x, y, _ = _views()
    a = pk.parallel_reduce(N, total, v=x)
    b = pk.parallel_reduce(N, broken, v=y)
    assert np.isclose(float(a), np.sin(np.arange(N)).sum(), rtol=1e-13)
    assert pk.pending() == 1
    with pytest.raises(pk.KernelTypeError):
        float(b)


@pytest.mark.host_only("on the GPU the one pass sums in Kokkos' order, each kernel alone in its own")
@pytest.mark.parametrize("n", [97, 4099, (1 << 16) + 3])
def test_fused_siblings_sum_in_the_order_of_their_own_kernels(n):
    """The one pass keeps each total's partial sums as its own kernel does
    (chunks, four partials each), so the totals equal eager mode's bit for
    bit, not just up to summation order. (Found: the pass updated a struct in
    memory per item, summing in another order and slower than the three
    passes it replaced.)"""
    x = pk.View([n], pk.double)
    np.asarray(x)[:] = np.random.default_rng(n).standard_normal(n) * 1e3

    def run():
        a = pk.parallel_reduce(n, total, v=x)
        b = pk.parallel_reduce(n, biggest, v=x, reducer=pk.Max)
        c = pk.parallel_reduce(n, smallest, v=x, reducer=pk.Min)
        return float(a), float(b), float(c)

    pk._native.set_lazy(False)
    eager = run()
    pk._native.set_lazy(True)
    try:
        pk._native.explain_history()
        fused = run()
        assert "-> 1 kernel(s)" in pk._native.explain_history()[0]
    finally:
        pk.flush()
        pk._native.set_lazy(False)
    assert fused == eager
    xs = np.asarray(x)
    assert eager[1:] == (xs.max(), xs.min())
    assert np.isclose(eager[0], xs.sum(), rtol=1e-12)
