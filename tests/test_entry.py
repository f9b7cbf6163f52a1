"""pk.parallel_for / pk.parallel_reduce are native entries (src/python/entry.rs):
the common call launches directly, every other form goes to the Python forms
in runtime/_launch.py. Each form here gives what NumPy or hand counting says, eager and
lazy, and wrong calls get the Python forms' errors."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import pykokkos as pk

N = 17


@pk.workunit
def fill(i, v, x):
    v[i] = x * i


@pk.workunit
def total(i, acc, v):
    acc += v[i]


@pk.workunit
def biggest(i, acc, v):
    acc = max(acc, v[i])  # noqa: F841 (a reducer's accumulator)


@pk.workunit
def add_one(i, v):
    v[i] = v[i] + 1.0


def plain(i, v):
    v[i] = 1.0


def _expected():
    return 2.0 * np.arange(N)


def test_every_form_routes_to_the_same_launch():
    # Run eager and lazy (conftest's pk_mode).
    v = pk.View([N], pk.double)
    pk.parallel_for(N, fill, v=v, x=2.0)
    np.testing.assert_array_equal(np.asarray(v), _expected())
    # A name, a RangePolicy, explicit fusion lists: the Python forms.
    pk.parallel_for("named", pk.RangePolicy(0, N), add_one, v=v)
    pk.parallel_for(N, [add_one, add_one], args_0={"v": v}, args_1={"v": v})
    np.testing.assert_array_equal(np.asarray(v), _expected() + 3.0)
    ref = float(np.sum(_expected() + 3.0))
    assert float(pk.parallel_reduce(N, total, v=v)) == ref
    assert float(pk.parallel_reduce("named", N, total, v=v)) == ref
    assert float(pk.parallel_reduce(N, total, v=v, initial_value=5.0)) == ref + 5.0
    assert float(pk.parallel_reduce(N, total, v=v, reducer=pk.Sum)) == ref
    assert float(pk.parallel_reduce(N, biggest, v=v, reducer=pk.Max)) == float(np.max(_expected() + 3.0))


def test_a_total_is_a_number_eager_and_lazy(pk_mode):
    v = pk.View([N], pk.double)
    pk.parallel_for(N, fill, v=v, x=1.0)
    r = pk.parallel_reduce(N, total, v=v)
    assert (type(r).__name__ == "LazyNumber") == (pk_mode == "lazy")
    assert r + 1.0 == float(np.sum(np.arange(N))) + 1.0


def test_wrong_calls_get_the_python_forms_errors():
    v = pk.View([N], pk.double)
    with pytest.raises(TypeError, match=r"takes \(\[name,\] policy, workunit"):
        pk.parallel_for(N)
    with pytest.raises(TypeError, match=r"takes \(\[name,\] policy, workunit"):
        pk.parallel_reduce()
    with pytest.raises(TypeError, match="not decorated with @pk.workunit"):
        pk.parallel_for(N, plain, v=v)
    with pytest.raises(TypeError, match="needs a @pk.workunit function"):
        pk.parallel_for(N, 3, v=v)
    with pytest.raises(TypeError, match="needs the keyword argument 'x'"):
        pk.parallel_for(N, fill, v=v)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        pk.parallel_for(N, fill, v=v, x=1.0, y=2.0)


def test_a_kernel_error_names_the_callers_line(pk_mode):
    @pk.workunit
    def bad(i, v):
        v[i] = v  # a view used as a number

    v = pk.View([N], pk.double)
    line = sys._getframe().f_lineno + 2
    with pytest.raises(pk.KernelTypeError) as info:
        pk.parallel_for(N, bad, v=v)
        pk.flush()  # lazy mode translates it here
    assert "'bad'" in str(info.value)
    if pk_mode == "lazy":  # raised by the flush: the message names the launch
        assert f"launched at {__file__}:{line}" in str(info.value)
    else:  # raised by the call itself: no frame of ours between
        assert info.traceback[-1].path == __import__("pathlib").Path(__file__)
        assert info.traceback[-1].lineno + 1 == line


def test_the_entries_leak_no_references():
    v = pk.View([N], pk.double)
    pk.parallel_for(N, fill, v=v, x=1.0)
    before = sys.getrefcount(v), sys.getrefcount(fill)
    for _ in range(100):
        pk.parallel_for(N, fill, v=v, x=1.0)
        pk.parallel_reduce(N, total, v=v)
    assert (sys.getrefcount(v), sys.getrefcount(fill)) == before
