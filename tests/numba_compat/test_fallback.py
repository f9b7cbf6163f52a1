"""What the Kokkos translation cannot take runs under the real Numba (plain
Python without it): same results as Numba, one located warning per function,
report() tells how each function ran, PK_NUMBA_STRICT=1 raises instead."""
import warnings

import numpy as np
import pytest

import pykokkos as pk
import pykokkos.numba as numba
from pykokkos.numba import _dispatch, _fallback, njit, prange

from . import bad_programs as bad

real = pytest.importorskip("numba", reason="the reference is the real Numba")


def fallbacks(seen):
    return [w for w in seen if issubclass(w.category, numba.FallbackWarning)]


def run(f, *args):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = f(*args)
    return out, fallbacks(seen)


def ran(f):
    return {r.name: r for r in numba.report()}[f.py_func.__qualname__]


def test_untranslatable_function_runs_under_numba_with_one_warning(monkeypatch):
    monkeypatch.delenv("PK_NUMBA_STRICT", raising=False)
    f = njit(bad.uses_dict.py_func)
    x = np.arange(3.0) + 4.0
    out, seen = run(f, x)
    assert out == real.njit(bad.uses_dict.py_func)(x) == 5.0
    assert len(seen) == 1
    text = str(seen[0].message)
    assert "uses_dict" in text and "bad_programs.py:9:" in text and "dict literals" in text and "numba" in text
    assert ran(f).how == "numba" and "dict literals" in ran(f).why
    again, seen = run(f, x + 1.0)
    assert again == 6.0 and not seen, "one warning per function"
    assert "uses_dict" in str(numba.report()) and "because" in str(numba.report())


def test_strict_mode_raises_the_located_error_even_after_a_fallback(monkeypatch):
    monkeypatch.delenv("PK_NUMBA_STRICT", raising=False)
    f = njit(bad.fancy_index.py_func)
    x, idx = np.arange(5.0), np.array([0, 3])
    assert run(f, x, idx)[0] == 3.0
    monkeypatch.setenv("PK_NUMBA_STRICT", "1")
    with pytest.raises(numba.UnsupportedError, match=r"bad_programs.py:\d+:\d+: .*fancy indexing"):
        f(x, idx)


@njit
def _dict_helper(v):
    d = {0: 2.0}
    return v * d[0]


@njit
def _calls_fallback_helper(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += _dict_helper(x[i])
    return s


@njit(parallel=True)
def _offloadable(x):
    s = 0.0
    for i in prange(x.shape[0]):
        s += x[i] * x[i]
    return s


@njit
def _fallback_calls_offloadable(x):
    d = {0: 1.0}
    return _offloadable(x) + d[0]


def test_calls_between_offloaded_and_fallback_functions_work_both_ways(monkeypatch):
    monkeypatch.delenv("PK_NUMBA_STRICT", raising=False)
    x = np.arange(1.0, 9.0)
    out, _ = run(_calls_fallback_helper, x)
    assert out == 2.0 * x.sum()
    assert ran(_calls_fallback_helper).how == "numba"
    out, _ = run(_fallback_calls_offloadable, x)
    assert out == float((x * x).sum() + 1.0)
    assert ran(_fallback_calls_offloadable).how == "numba"
    # Called directly, the offloadable function still runs as Kokkos kernels.
    assert _offloadable(x) == float((x * x).sum()) and ran(_offloadable).how == "kokkos"


def test_without_numba_the_fallback_is_plain_python(monkeypatch):
    monkeypatch.delenv("PK_NUMBA_STRICT", raising=False)
    monkeypatch.setattr(_fallback, "_REAL", [None])
    monkeypatch.setattr(_fallback, "_BUILDER", [])
    f = njit(bad.uses_dict.py_func)
    out, seen = run(f, np.arange(3.0))
    assert out == 1.0 and len(seen) == 1 and "runs under python" in str(seen[0].message)
    assert ran(f).how == "python"


def test_a_translator_bug_falls_back_or_is_located_in_strict_mode(monkeypatch):
    monkeypatch.delenv("PK_NUMBA_STRICT", raising=False)

    def broken(*a, **k):
        raise IndexError("list index out of range")

    monkeypatch.setattr(_dispatch, "translate", broken)
    f = njit(bad.good.py_func)
    x = np.arange(4.0)
    out, seen = run(f, x)
    assert out == 12.0 and ran(f).how == "numba"
    assert "could not translate good (IndexError" in str(seen[0].message)
    monkeypatch.setenv("PK_NUMBA_STRICT", "1")
    with pytest.raises(numba.UnsupportedError, match=r"bad_programs.py:\d+: pykokkos.numba could not translate"):
        njit(bad.good.py_func)(x)


def test_generated_code_the_toolchain_refuses_falls_back_with_arrays_as_found(monkeypatch):
    monkeypatch.delenv("PK_NUMBA_STRICT", raising=False)

    def half_run(x, out):
        out[:] = -1.0  # a first kernel ran, then the next one is refused
        raise pk.CompileError("generated kernel rejected")

    @njit
    def double_into(x, out):
        for i in range(x.shape[0]):
            out[i] += 2.0 * x[i]

    monkeypatch.setattr(_dispatch.Dispatcher, "_compile", lambda self, key, args: half_run)
    x, out = np.arange(4.0), np.ones(4)
    _, seen = run(double_into, x, out)
    np.testing.assert_array_equal(out, 1.0 + 2.0 * x)
    assert "generated kernel rejected" in str(seen[0].message) and ran(double_into).how == "numba"
    monkeypatch.setenv("PK_NUMBA_STRICT", "1")
    with pytest.raises(numba.UnsupportedError, match=r"test_fallback.py:\d+: the kernels pykokkos.numba made of "
                       r".*double_into were refused \(generated kernel rejected\)"):
        njit(double_into.py_func)(x, out)


def test_the_rest_of_numbas_api_is_numbas_own():
    assert numba.guvectorize is real.guvectorize and numba.typed is real.typed
    assert numba.vectorize is not real.vectorize and numba.stencil is not real.stencil  # run as kernels


@njit
def _apply(f, x):
    d = {0: 1.0}  # not offloaded: runs under Numba, given a jitted function
    return f(x) + d[0]


@njit
def _square(v):
    return v * v


def test_a_function_argument_reaches_numba_as_numbas_own(monkeypatch):
    monkeypatch.delenv("PK_NUMBA_STRICT", raising=False)
    out, _ = run(_apply, _square, 3.0)
    assert out == real.njit(lambda f, x: f(x) + 1.0)(real.njit(lambda v: v * v), 3.0) == 10.0
    assert ran(_apply).how == "numba"
