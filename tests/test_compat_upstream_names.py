"""Call forms upstream PyKokkos' own tests and examples use (checked against its
test suite, fetched outside our tree): the array functions' keyword names,
matmul's errors, `pykokkos.linalg.l3_blas.dgemm`, the upstream module path of
the dtypes, and a bare `printf` in kernels and in a workload's main. Values
are checked against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import pykokkos as pk


def test_array_functions_take_upstreams_keyword_names():
    x = np.arange(1.0, 11.0)
    v = pk.array(x)
    np.testing.assert_allclose(pk.sqrt(view=v), np.sqrt(x))
    np.testing.assert_allclose(pk.log(view=v, profiler_name="log"), np.log(x))
    np.testing.assert_allclose(pk.add(viewA=v, viewB=v), x + x)
    assert pk.mean(view=v) == pytest.approx(x.mean())
    assert pk.var(view=v) == pytest.approx(x.var())
    assert float(pk.dot(viewA=v, viewB=v)) == pytest.approx(x @ x)
    for dt in (np.float64, np.float32):  # sign(NaN) is NaN, as in NumPy
        s = np.array([-5.0, 4.5, np.nan, 0.0], dtype=dt)
        np.testing.assert_array_equal(pk.sign(view=pk.array(s)), np.sign(s))


def test_matmul_mismatches_raise_upstreams_runtime_errors():
    b = pk.array(np.full((10, 1), 2.0))
    with pytest.raises(RuntimeError) as e:
        pk.matmul(pk.array(np.arange(11.0)), b)
    assert e.value.args[0] == "Input operand 1 has a mismatch in its core dimension (Size 11 is different from 10)"
    np.testing.assert_allclose(pk.matmul(pk.array(np.arange(10.0)), b), np.arange(10.0) @ np.full((10, 1), 2.0))
    a1, a2 = pk.array(np.ones(4)), pk.array(np.ones((3, 3)))
    for p, q in ((a1, a2), (a2, a1)):
        with pytest.raises(RuntimeError) as e:
            pk.np_matmul(p, q)
        assert e.value.args[0] == f"Matrix dimensions are not compatible for multiplication: {p.shape} and {q.shape}"
    m, n = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(pk.np_matmul(pk.array(m), pk.array(n)), m @ n)


def test_dgemm_from_upstreams_linalg_module():
    from pykokkos.linalg.l3_blas import dgemm

    rng = np.random.default_rng(4)
    a, b, c = rng.random((11, 7)), rng.random((7, 5)), rng.random((11, 5))
    got = dgemm(alpha=1.5, view_a=pk.array(a), view_b=pk.array(b), beta=0.5, view_c=pk.array(c))
    assert got.shape == (11, 5)
    np.testing.assert_allclose(np.asarray(got), 1.5 * a @ b + 0.5 * c, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(dgemm(2.0, pk.array(a), pk.array(b))), 2.0 * a @ b, rtol=1e-13)
    with pytest.raises(ValueError, match="does not match"):
        dgemm(1.0, pk.array(a), pk.array(c))


def test_dtypes_under_upstreams_module_path():
    from pykokkos.interface.data_types import float64, int32

    assert int32 is pk.int32 and float64 is pk.float64
    assert pk.View([3], int32).dtype is pk.int32
    # Upstream's dtypes are classes, and its tests parse str(dtype) as one.
    assert str(pk.asarray(pk.pi).dtype).split(".")[-1][:-2] == str(np.asarray(np.pi).dtype)


@pk.workunit
def bare_printf(i: int, x: pk.View1D[pk.double]):
    printf("x[%d] = %.1f\n", i, x[i])  # noqa: F821  (upstream's translator provides it)


@pk.workload
class PrintsInMain:
    def __init__(self):
        self.n = 3

    @pk.main
    def run(self):
        printf("n = %d\n", self.n)  # noqa: F821


def test_a_bare_printf_prints_from_kernels_and_from_main(capfd):
    pk.parallel_for(pk.RangePolicy(pk.Serial, 0, 2), bare_printf, x=pk.array(np.array([1.5, 2.5])))
    pk.fence()
    pk.execute(pk.ExecutionSpace.Default, PrintsInMain())
    out = capfd.readouterr().out
    assert "x[0] = 1.5\nx[1] = 2.5\n" in out and "n = 3\n" in out


SCALE = 100.0  # a module global the member of the same name below hides


@pk.workload
class BareMembers:
    """Workunits naming the workload's fields without `self.`, which the C++
    functor upstream generates resolves as members."""

    def __init__(self, n):
        self.n: int = n
        self.SCALE: float = 2.5
        self.a: pk.View1D[pk.double] = pk.View([n], pk.double)
        self.total: float = 0.0

    @pk.main
    def run(self):
        pk.parallel_for(self.n, self.fill)
        self.total = pk.parallel_reduce(self.n, self.add_up)

    @pk.workunit
    def fill(self, i: int):
        a[i] = SCALE * i  # noqa: F821

    @pk.workunit
    def add_up(self, i: int, acc: pk.Acc[pk.double]):
        n = 1  # a local hides the member
        acc += a[i] + n  # noqa: F821


def test_workload_fields_by_their_bare_names():
    w = BareMembers(10)
    pk.execute(pk.ExecutionSpace.Default, w)
    np.testing.assert_allclose(np.asarray(w.a), 2.5 * np.arange(10))
    assert float(w.total) == pytest.approx(2.5 * 45 + 10)


def _twice_plus_square(x):
    return 2.0 * x + _square(x)


def _square(x):
    return x * x


def log(x):  # noqa: F811  a module function named as a math function
    return -1.0


@pk.workunit
def calls_plain_helpers(i: int, a: pk.View1D[pk.double], b: pk.View1D[pk.double]):
    b[i] = _twice_plus_square(a[i]) + log(1.0)


def test_plain_module_functions_are_kernel_helpers():
    # Upstream #435: functions of the kernel's module need no @pk.function,
    # helpers of helpers included; `log` in a kernel stays the math function.
    a, b = pk.array(np.arange(6.0)), pk.View([6], pk.double)
    pk.parallel_for(6, calls_plain_helpers, a=a, b=b)
    x = np.arange(6.0)
    np.testing.assert_allclose(np.asarray(b), 2 * x + x * x + np.log(1.0))
    assert _twice_plus_square(2.0) == 8.0  # still a Python function


def test_a_reloaded_module_runs_its_edited_workunit(tmp_path, monkeypatch):
    # Upstream #415: the kernel is compiled from the source the reload read.
    import importlib
    import sys

    body = "import pykokkos as pk\n\n\n@pk.workunit\ndef k(i: int, v: pk.View1D[pk.double]):\n    v[i] = {} * i\n"
    mod = tmp_path / "pk_reload_probe.py"
    mod.write_text(body.format("1.0"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # edits within one second, same size
    sys.modules.pop("pk_reload_probe", None)
    m = importlib.import_module("pk_reload_probe")
    v = pk.View([4], pk.double)
    for factor in ("1.0", "7.0", "-2.5"):
        mod.write_text(body.format(factor))
        m = importlib.reload(m)
        pk.parallel_for(4, m.k, v=v)
        np.testing.assert_allclose(np.asarray(v), float(factor) * np.arange(4))
    sys.modules.pop("pk_reload_probe", None)


@pk.workunit
def doubles_int32(i: int, arr: pk.View1D[pk.int32]):
    arr[i] = arr[i] * 2


def test_a_view_of_another_dtype_names_the_dtype_expected():
    # Newer PyKokkos (upstream #424): "expects a View with dtype int32".
    from pykokkos.interface.parallel_dispatch import convert_arrays

    with pytest.raises(TypeError, match="expects a View with dtype int32"):
        pk.parallel_for(4, doubles_int32, arr=pk.array(np.ones(4, dtype=np.int64)))
        pk.fence()
    kw = {"arr": np.ones(4, dtype=np.int32)}
    convert_arrays(kw, doubles_int32, pk.ExecutionSpace.OpenMP)
    assert kw["arr"].dtype is pk.int32
    pk.parallel_for(4, doubles_int32, **kw)
    np.testing.assert_array_equal(np.asarray(kw["arr"]), [2, 2, 2, 2])


def test_the_space_groupings_of_newer_pykokkos():
    # Newer examples branch on `pk.get_default_space() in pk.DeviceExecutionSpace`.
    space = pk.get_default_space()
    groups = (pk.DeviceExecutionSpace, pk.HostParallelExecutionSpace, pk.HostSerialExecutionSpace)
    assert sum(space in g for g in groups) == 1
    assert (space in pk.DeviceExecutionSpace) == (space is pk.Cuda)
    assert pk.OpenMP in pk.HostParallelExecutionSpace and pk.Serial in pk.HostSerialExecutionSpace


def test_a_space_is_named_by_its_upstream_value():
    # Upstream's ExecutionSpace values are the names; ExaMiniMD picks its space
    # with `pk.ExecutionSpace(os.environ["PK_EXA_SPACE"])`.
    for name in ("Serial", "OpenMP", "Cuda", "Debug", "Default"):
        assert pk.ExecutionSpace(name) is getattr(pk.ExecutionSpace, name)
    with pytest.raises(ValueError, match="HIP"):
        pk.ExecutionSpace("HIP")  # not built here


def test_masks_and_index_arrays_select_as_numpy_does():
    # GaussianNB.py: `X[y == c, :]` on a View; upstream's Views are NumPy arrays.
    ref = np.arange(12.0).reshape(6, 2)
    X, y = pk.array(ref.copy()), np.array([0, 1, 0, 2, 1, 0])
    for key in [(y == 0, slice(None)), y == 1, [5, 0, 0], (Ellipsis, 1), (2, Ellipsis), (slice(1, 4), [1])]:
        got, want = X[key], ref[key]
        np.testing.assert_array_equal(np.asarray(got), want)
        assert isinstance(got, pk.View) and tuple(got.shape) == want.shape
    sel = X[y == 0, :]
    sel[0][0] = -1.0  # a copy, as NumPy's advanced indexing gives
    assert np.asarray(X)[0, 0] == 0.0
    X[y == 2] = 9.0
    np.testing.assert_array_equal(np.asarray(X)[3], [9.0, 9.0])


def test_array_takes_a_space_and_workunits_may_live_in_functions():
    def scaled(n, s):
        @pk.workunit
        def inner(i, a, s):  # upstream #299: a workunit defined inside a function
            a[i] = a[i] * s + i

        a = pk.array(np.ones(n), space=pk.HostSpace)
        pk.parallel_for(n, inner, a=a, s=s)
        return np.asarray(a)

    np.testing.assert_array_equal(scaled(4, 2.0), np.ones(4) * 2.0 + np.arange(4))
    np.testing.assert_array_equal(scaled(3, 3.0), np.ones(3) * 3.0 + np.arange(3))
    v = pk.array(np.arange(3.0), space=pk.get_default_space())
    assert isinstance(v, pk.View) and np.asarray(v).tolist() == [0.0, 1.0, 2.0]
