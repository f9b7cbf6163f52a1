"""The GPU forms of Numba loops (pykokkos/numba/_rows.py, _serial_gpu.py),
run here on the host by making the runtime choose them: a loop over rows as
one team per row, serial reductions and running sums as parallel kernels.
Each gives real Numba's results (up to the order of its additions) and each
program must translate to the form FORMS names; loops that carry values
between iterations must not."""
import importlib.util
import pathlib
import sys
import types

import numpy as np
import pytest

import pykokkos.numba as pkn
from pykokkos.numba import rt

try:
    import numba as numba_real
except ImportError:  # the GPU machine has no Numba: each program as plain Python is the reference
    numba_real = types.ModuleType("python_engine")
    numba_real.njit = numba_real.jit = lambda *a, **k: a[0] if a and callable(a[0]) else (lambda f: f)
    numba_real.prange = range

HERE = pathlib.Path(__file__).parent


def load(engine, name):
    saved = sys.modules.get("numba")
    sys.modules["numba"] = engine
    try:
        spec = importlib.util.spec_from_file_location(name, HERE / "gpu_forms.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        if saved is None:
            del sys.modules["numba"]
        else:
            sys.modules["numba"] = saved


REAL = load(numba_real, "numba_gpu_forms")
OURS = load(pkn, "pykokkos_gpu_forms")


def same(got, want, what):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), what
        for k, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{what}[{k}]")
        return
    if want is None:
        assert got is None, f"{what}: {got!r} instead of None"
        return
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape, what
    else:
        assert type(got) is type(want) or isinstance(want, float) and isinstance(got, float), what
    single = np.asarray(want).dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5 if single else 1e-11, atol=0, err_msg=what)


@pytest.mark.parametrize("gpu", [True, False], ids=["gpu-form", "host-form"])
@pytest.mark.parametrize("case", sorted(REAL.CASES))
def test_the_gpu_form_gives_numbas_results(case, gpu, monkeypatch):
    monkeypatch.setenv("PK_NUMBA_STRICT", "1")
    monkeypatch.setattr(rt, "teams", lambda: gpu)
    monkeypatch.setattr(rt, "serial_on_gpu", lambda: gpu)
    args = REAL.CASES[case]()
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = getattr(REAL, case)(*args)
    got = getattr(OURS, case)(*mine)
    same(got, want, f"{case} result")
    for k, (g, w) in enumerate(zip(mine, args)):
        if isinstance(w, np.ndarray):
            same(g, w, f"{case} argument {k} after the call")
    source = getattr(OURS, case).pk_source(*args)
    form = REAL.FORMS[case]
    if form is None:
        assert "pk.TeamThreadRange" not in source and "pk.parallel_scan" not in source \
            and "rt.serial_on_gpu" not in source, f"{case} carries values between iterations:\n{source}"
    else:
        assert form in source, f"{case} has no {form}:\n{source}"


def test_host_kernels_keep_numbas_order_bit_for_bit():
    """Off the GPU the loops keep their order: equal bits, not only close (on a
    GPU machine too, with host kernels asked for)."""
    import pykokkos as pk
    saved = pk.get_default_space()
    pk.set_default_space(pk.OpenMP)
    try:
        assert not rt.teams()
        a = np.random.default_rng(1).random((33, 1000))
        out, want = np.zeros(33), np.zeros(33)
        OURS.row_norms(a, out)
        REAL.row_norms(a, want)
        np.testing.assert_array_equal(out, want)
        x = a.ravel()
        np.testing.assert_array_equal(OURS.cumulative(x), REAL.cumulative(x))
        assert OURS.sum2d(a) == REAL.sum2d(a)
    finally:
        pk.set_default_space(saved)
