"""pykokkos.numba against real Numba: every corpus program (eager and lazy, as
conftest runs every test), compared on its results and on every array argument after the call."""
import importlib.util
import pathlib
import sys
import types

import numpy as np
import pytest

import pykokkos.numba as pkn  # noqa: E402

try:
    import numba as numba_real
except ImportError:
    # The GPU machine has no Numba (no network there, and llvmlite's wheel is over
    # the carry limit): the reference is then each program run as plain Python,
    # which is what Numba's results must equal too.
    numba_real = types.ModuleType("python_engine")
    numba_real.njit = numba_real.jit = lambda *a, **k: a[0] if a and callable(a[0]) else (lambda f: f)
    numba_real.prange = range

HERE = pathlib.Path(__file__).parent


def load(engine, name, file="corpus.py"):
    """A corpus file with `import numba` resolving to `engine`."""
    saved = sys.modules.get("numba")
    sys.modules["numba"] = engine
    try:
        spec = importlib.util.spec_from_file_location(name, HERE / file)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        if saved is None:
            del sys.modules["numba"]
        else:
            sys.modules["numba"] = saved


FILES = ("corpus.py", "corpus_more.py")
REAL = {f: load(numba_real, "numba_" + f[:-3], f) for f in FILES}
OURS = {f: load(pkn, "pykokkos_" + f[:-3], f) for f in FILES}


def same(got, want, what):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), what
        for k, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{what}[{k}]")
        return
    single = np.asarray(want).dtype in (np.float32, np.complex64)
    if isinstance(want, np.generic):  # the plain-Python reference gives NumPy scalars
        want = want.item()
    if want is None:
        assert got is None, f"{what}: {got!r} instead of None"
        return
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), f"{what}: {type(got).__name__} instead of an array"
        assert got.shape == want.shape and got.dtype == want.dtype, f"{what}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    else:
        assert type(got) is type(want) or (isinstance(want, float) and isinstance(got, float)), \
            f"{what}: {type(got).__name__} instead of {type(want).__name__}"
    # float32 arithmetic may round differently in one operation of a chain
    # (C++ promotes pow(float, int) to double where Numba's loop stays float32).
    np.testing.assert_allclose(got, want, rtol=4e-6 if single else 1e-10, atol=1e-6 if single else 1e-12,
                               err_msg=what)


@pytest.mark.parametrize("file,case", [(f, c) for f in FILES for c in sorted(REAL[f].CASES)])
def test_corpus(file, case, monkeypatch):
    # Strict: every corpus program must run as Kokkos kernels, not fall back to Numba.
    monkeypatch.setenv("PK_NUMBA_STRICT", "1")
    args = REAL[file].CASES[case]()
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = getattr(REAL[file], case)(*args)
    got = getattr(OURS[file], case)(*mine)
    same(got, want, f"{case} result")
    for k, (g, w) in enumerate(zip(mine, args)):
        if isinstance(w, np.ndarray):
            same(g, w, f"{case} argument {k} after the call")
