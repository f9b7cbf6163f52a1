"""pykokkos.numba's surface: decorator forms, fusion of what a jitted function
launches, argument handling, and located errors for what is outside the subset."""
import math

import numpy as np
import pytest

import pykokkos as pk
import pykokkos.numba as numba
from pykokkos.numba import float64, int64, jit, njit, prange

from . import bad_programs as bad


def _body(x, n):
    s = 0.0
    for i in prange(n):
        s += math.sqrt(x[i])
    return s


@pytest.mark.parametrize("wrap", [
    lambda f: njit(f),
    lambda f: njit(parallel=True, fastmath=True, cache=True, nogil=True)(f),
    lambda f: jit(nopython=True)(f),
    lambda f: njit("float64(float64[:], int64)")(f),
    lambda f: njit(float64(float64[:], int64), parallel=True)(f),
    lambda f: jit([float64(float64[:], int64)], nopython=True)(f),
    lambda f: numba.njit(f),
], ids=["njit(f)", "options", "jit-nopython", "string-sig", "type-sig", "sig-list", "module-attr"])
def test_decorator_forms(wrap):
    x = np.arange(1.0, 101.0)
    f = wrap(_body)
    assert isinstance(f, numba.Dispatcher)
    assert f(x, 100) == pytest.approx(np.sqrt(x).sum(), rel=1e-13)
    assert f.py_func is _body


def test_a_jitted_function_pickles_and_copies_as_itself():
    """multiprocessing hands jitted functions to its workers by pickle, as Numba allows."""
    import copy
    import pickle

    f = bad.reads_reduction_var
    assert pickle.loads(pickle.dumps(f)) is f
    assert copy.copy(f) is f and copy.deepcopy(f) is f
    # A dispatcher its function's name does not lead to (the module keeps the
    # plain function under it): a new dispatcher of that function.
    g = njit(_body)
    h = pickle.loads(pickle.dumps(g))
    assert isinstance(h, numba.Dispatcher) and h.py_func is _body
    x = np.arange(1.0, 11.0)
    assert h(x, 10) == g(x, 10) == pytest.approx(np.sqrt(x).sum(), rel=1e-13)


def test_decorator_on_def_and_keywords():
    @njit(parallel=True)
    def scale(a, k=2.0):
        out = np.empty_like(a)
        for i in prange(a.shape[0]):
            out[i] = a[i] * k
        return out

    a = np.arange(5.0)
    np.testing.assert_array_equal(scale(a), a * 2.0)
    np.testing.assert_array_equal(scale(a, k=3.0), a * 3.0)


def test_retyped_per_call_signature():
    @njit
    def total(a):
        return a.sum()

    assert total(np.arange(10)) == 45 and isinstance(total(np.arange(10)), int)
    assert total(np.arange(10.0)) == 45.0 and isinstance(total(np.arange(10.0)), float)
    assert len(total.signatures) == 2


def test_array_arguments_written_in_place_and_returned_as_themselves():
    @njit(parallel=True)
    def bump(a):
        for i in prange(a.shape[0]):
            a[i] += 1.0
        return a

    a = np.zeros(8)
    out = bump(a)
    assert out is a
    np.testing.assert_array_equal(a, np.ones(8))


def test_aliased_arguments_keep_numpy_order():
    @njit(parallel=True)
    def shift(src, dst):
        for i in prange(src.shape[0] - 1):
            dst[i] = src[i] * 2.0
        return dst.sum()

    a = np.arange(6.0)
    want = a.copy()
    want[:-1] = a[:-1] * 2.0
    assert shift(a, a) == pytest.approx(want.sum())
    np.testing.assert_array_equal(a, want)


def test_a_jitted_chain_fuses_into_one_kernel():
    @njit(parallel=True)
    def chain(x):
        y = np.sqrt(x) + 1.0
        z = y * y - x
        return np.exp(-z).sum()

    x = np.random.default_rng(3).random(4096)
    want = np.exp(-((np.sqrt(x) + 1.0) ** 2 - x)).sum()
    assert chain(x) == pytest.approx(want, rel=1e-12)
    if pk._native.lazy_enabled():
        pk._native.explain_history()
        assert chain(x) == pytest.approx(want, rel=1e-12)
        report = "".join(pk._native.explain_history())
        assert "3 launch(es) -> 1 kernel(s)" in report, report


@pytest.fixture
def strict(monkeypatch):
    monkeypatch.setenv("PK_NUMBA_STRICT", "1")


def test_unsupported_construct_names_file_line_and_caret(strict):
    with pytest.raises(numba.UnsupportedError) as info:
        bad.uses_dict(np.ones(3))
    msg = str(info.value)
    assert "bad_programs.py:9:" in msg and "^" in msg and "d = {" in msg


def test_reading_a_reduction_variable_in_the_loop_is_refused(strict):
    with pytest.raises(numba.UnsupportedError, match=r"bad_programs.py:18:.*reduction variable 's'"):
        bad.reads_reduction_var(np.ones(4))


def test_fancy_indexing_is_refused(strict):
    with pytest.raises(numba.UnsupportedError, match="fancy indexing"):
        bad.fancy_index(np.ones(4), np.array([0, 1]))


def test_a_numpy_function_kernels_lack_is_a_located_error(strict):
    with pytest.raises(numba.UnsupportedError, match=r"bad_programs.py:4\d:\d+: np.sinc is not supported"):
        bad.unknown_ufunc_in_kernel(np.ones(4), np.zeros(4))


def _row_max(x):
    return x.max(axis=1)


def _axis_reductions(a, b):
    return a.max(axis=0), np.min(a, axis=1), np.mean(b, axis=2), b.prod(axis=0), np.amax(b, axis=-1)


def test_reductions_along_an_axis_numba_lacks_give_numpys_results(strict):
    # Numba types only sum, argmin and argmax with an axis (the differential
    # corpus checks those); the others give NumPy's values and dtypes.
    rng = np.random.default_rng(3)
    a, b = rng.random((5, 4)), rng.integers(1, 4, (3, 4, 2)).astype(np.int32)
    got, want = njit(_axis_reductions)(a, b), _axis_reductions(a, b)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12)
    with pytest.raises(ValueError, match="zero-size"):
        njit(_row_max)(np.zeros((3, 0)))


@numba.stencil
def _blur(a):
    return (a[-1] + a[0] + a[1]) / 3


@numba.stencil
def _shifted_by(a, k):
    return a[k]


def _blur_twice(a):
    return _blur(_blur(a))


def _blur_in_a_set(a):
    return len({1, 2}) * _blur(a)  # a set literal: no kernel takes it


def test_a_stencil_called_from_python_and_from_fallback_code_gives_numbas_results():
    real = pytest.importorskip("numba")
    a = np.random.default_rng(5).random(12)
    want = real.stencil(_blur.py_func)(a)
    np.testing.assert_allclose(_blur(a), want, rtol=1e-14)
    np.testing.assert_allclose(njit(_blur_twice)(a), real.stencil(_blur.py_func)(want), rtol=1e-14)
    with pytest.warns(numba.FallbackWarning, match="set literals"):
        got = njit(_blur_in_a_set)(a)
    np.testing.assert_allclose(got, 2 * want, rtol=1e-14)


def test_a_stencil_index_that_is_not_a_constant_needs_a_neighborhood(strict):
    with pytest.raises(numba.UnsupportedError, match="needs the neighborhood= option"):
        njit(_uses_shifted)(np.zeros(5), 1)


def _uses_shifted(a, k):
    return _shifted_by(a, k)


@numba.vectorize(["float64(float64, float64)", "float32(float32, float32)"])
def _hypot_ufunc(a, b):
    return math.sqrt(a * a + b * b)


def test_a_vectorized_function_called_from_python_is_a_ufunc():
    real = pytest.importorskip("numba")
    want = real.vectorize(["float64(float64, float64)", "float32(float32, float32)"])(_hypot_ufunc.py_func)
    a, b = np.random.default_rng(2).random((2, 3, 4))
    for x, y in ((a, b), (a.astype(np.float32), b.astype(np.float32)), ([3.0, 5.0], 4.0)):
        got, exp = _hypot_ufunc(x, y), want(x, y)
        assert got.dtype == exp.dtype and got.shape == exp.shape
        np.testing.assert_allclose(got, exp, rtol=1e-6)
    assert _hypot_ufunc(3.0, 4.0) == want(3.0, 4.0) and type(_hypot_ufunc(3.0, 4.0)) is type(want(3.0, 4.0))
    out = np.empty_like(a)
    assert _hypot_ufunc(a, b, out=out) is out
    np.testing.assert_allclose(out, want(a, b))
    np.testing.assert_allclose(_hypot_ufunc.reduce(a[0]), want.reduce(a[0]))  # Numba's own ufunc's methods
    with pytest.raises(Exception) as numbas:  # no loop for complex numbers: the error Numba gives
        want(np.array([1 + 2j]), 1.0)
    with pytest.raises(numbas.type):
        _hypot_ufunc(np.array([1 + 2j]), 1.0)


def test_the_runtimes_short_forms_make_what_the_general_ones_make():
    """Generated code takes shortcuts on every call (an int for a range from 0,
    one native call for a new array); each must stand for the general form."""
    from pykokkos.numba import rt

    for dtype in ("float64", "float32", "int32", "int64", "bool", "complex128"):
        short, general = rt.zeros((3, 4), dtype), pk.View([3, 4], getattr(pk, dtype), layout=pk.LayoutRight)
        assert (short.shape, short.dtype, short.layout) == (general.shape, general.dtype, general.layout)
        assert type(short) is pk.View and not np.asarray(short).any()
    assert rt.zeros(np.int64(5), "float64").shape == (5,)
    assert rt.upto(7) == 7 and (rt.upto(np.int64(7)).begin, rt.upto(np.int64(7)).end) == (0, 7)
    assert [rt.ran(rt.upto(n)) for n in (-2, 0, 1)] == [False, False, True]
    assert [rt.ran(pk.RangePolicy(0, n)) for n in (-2, 0, 1)] == [False, False, True]

    @njit(parallel=True)
    def shifted(x, lo, hi):
        y = np.zeros(x.shape[0])
        for i in prange(hi):
            y[i] = x[i] * 2.0
        for i in prange(lo, hi):
            y[i] += 1.0
        for i in prange(hi - lo - 8):  # an empty range: nothing runs
            y[i] = -1.0
        return y

    x = np.arange(6.0)
    want = x * 2.0
    want[2:5] += 1.0
    assert np.array_equal(shifted(x, 2, 5), np.where(np.arange(6) < 5, want, 0.0))
    assert shifted.last_ran == "kokkos"


def _first_over(a, limit):
    """A serial loop that leaves several scalars (a bool, an int, a float32)
    and may return from inside the loop."""
    found = False
    count = 0
    total = np.float32(0.0)
    for i in range(a.shape[0]):
        total += a[i]
        if a[i] > limit:
            found = True
            count += 1
        if count > 2:
            return -1.0
    if found:
        return float(total) + count
    return float(total)


def test_a_serial_blocks_outputs_come_back_as_numbas():
    """A serial loop runs as one work item (rt.serial in one native call);
    its scalars, of each type, and an early return give Numba's values."""
    real = pytest.importorskip("numba")
    ours, want = njit(_first_over), real.njit(_first_over)
    for a, limit in [(np.arange(5, dtype=np.float32), 3.0), (np.arange(9, dtype=np.float32), 4.5),
                     (np.linspace(0, 1, 7, dtype=np.float32), 2.0), (np.zeros(0, np.float32), 0.0)]:
        got, expect = ours(a, limit), want(a, limit)
        assert type(got) is type(expect) and got == expect, (a, limit, got, expect)
    assert ours.last_ran == "kokkos" and "rt.serial(" in ours.pk_source(a, limit)


def _smooth_with(kernel, outs):
    """A serial loop whose free variables are named as rt.serial's own parameters."""
    total = 0.0
    for i in range(outs.shape[0]):
        for k in range(kernel.shape[0]):
            if i + k < outs.shape[0]:
                total += kernel[k] * outs[i + k]
    return total


def test_a_serial_block_may_read_variables_named_kernel_and_outs():
    real = pytest.importorskip("numba")
    ours, want = njit(_smooth_with), real.njit(_smooth_with)
    kernel, outs = np.array([0.25, 0.5, 0.25]), np.arange(10.0)
    assert ours(kernel, outs) == want(kernel, outs)
    assert ours.last_ran == "kokkos"


def test_a_first_call_that_raises_leaves_the_next_one_a_first_call():
    """The program's own error on the first call (before every kernel ran)
    gives no verdict: the next call is a first call again, runs as Kokkos,
    and later calls take the native path (they once ran with no verdict and
    never reached it)."""

    @njit
    def quotients(a, d):
        s = 0
        for i in range(a.shape[0]):
            s += a[i] // d
        return s

    a = np.arange(10)
    with pytest.raises(ZeroDivisionError):  # as Numba raises (error_model "python")
        quotients(a, 0)
    assert quotients.last_ran is None
    assert quotients(a, 2) == 20 and quotients.last_ran == "kokkos"
    slow = []
    inner = quotients._call_slow
    quotients._call_slow = lambda *args, **kw: slow.append(1) or inner(*args, **kw)
    assert quotients(a, 3) == 12 and not slow


def test_repeated_calls_take_the_native_path_and_give_what_the_python_path_gives():
    """A call with the argument types of one that ran as Kokkos goes to the
    translated body natively (src/python/numba_call.rs), skipping the
    Dispatcher's Python path: it must hand back exactly what that path does
    (the caller's own array, a tuple of a new array and a Python number),
    keep NumPy order for arguments that share memory, and leave every other
    kind of call (keywords, read-only or 0-d arrays, new dtypes) to the
    Python path."""

    @njit(parallel=True)
    def axpy(a, x, y):
        for i in prange(x.shape[0]):
            y[i] += a * x[i]
        return y

    @njit(parallel=True)
    def stats(x, k):
        out = np.empty_like(x)
        s = 0.0
        for i in prange(x.shape[0]):
            out[i] = x[i] * k
            s += x[i]
        return out, s

    slow = {"n": 0}
    for f in (axpy, stats):
        inner = f._call_slow

        def counted(*args, _inner=inner, **kwargs):
            slow["n"] += 1
            return _inner(*args, **kwargs)

        f._call_slow = counted

    rng = np.random.default_rng(5)
    for call in range(3):
        x, y = rng.random(100), rng.random(100)
        want = y + 2.5 * x
        assert axpy(2.5, x, y) is y
        np.testing.assert_array_equal(y, want)
        out, s = stats(x, 3.0)
        assert type(out) is np.ndarray and type(s) is float
        np.testing.assert_array_equal(out, x * 3.0)
        assert s == pytest.approx(x.sum(), rel=1e-13)
    assert slow["n"] == 2, "only the first call of each signature takes the Python path"
    assert axpy.last_ran == "kokkos" and axpy.last_key == (float, ("A", "<f8", 1), ("A", "<f8", 1))

    # Interleaved halves of one array (strided: their launches run in order
    # on either path).
    a = np.arange(12.0)
    b = a.copy()
    for _ in range(2):
        axpy(1.0, a[::2], a[1::2])
        b[1::2] += b[::2]
        np.testing.assert_array_equal(a, b)

    # What goes the Python way, and still gives the right result.
    before = slow["n"]
    x, y = rng.random(10), rng.random(10)
    want = y + 2.0 * x
    assert axpy(2.0, x, y=y) is y  # a keyword
    np.testing.assert_array_equal(y, want)
    ro = x.copy()
    ro.flags.writeable = False
    out, s = stats(ro, 2.0)  # read-only: the signature's, but rt.call's Python path wraps it
    np.testing.assert_array_equal(out, ro * 2.0)
    x32 = x.astype(np.float32)
    for _ in range(2):  # a new dtype: Python once, then native
        out, s = stats(x32, 2.0)
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, x32 * np.float32(2.0))
    assert slow["n"] == before + 2  # the keyword call, and the first float32 one
