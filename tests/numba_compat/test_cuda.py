"""pykokkos.numba on the GPU (make test-gpu): the same Numba functions given
NumPy arrays, CuPy arrays and Cuda Views; device arrays are used where they
are (an array argument comes back as itself), results equal to the plain
Python run of each function (Numba's results; the GPU machine has no Numba)."""
import numpy as np
import pytest

import pykokkos as pk

from . import corpus  # noqa: F401  (imported under pykokkos.numba by test_differential)
from .test_differential import OURS as _OURS, same

OURS = _OURS["corpus.py"]

pytestmark = [pytest.mark.device_only]

R = np.random.default_rng(5)
CASES = {
    "saxpy": lambda: (2.5, R.random(4096), R.random(4096), np.zeros(4096)),
    "dot_prange": lambda: (R.random(4096), R.random(4096)),
    "moments": lambda: (R.random(4096),),
    "row_norms": lambda: (R.random((64, 48)), np.zeros(64)),
    "expressions": lambda: (R.random((32, 16)), R.random((32, 16))),
    "time_steps": lambda: (R.random(2048), 3),
    "slice_in_loop": lambda: (R.random((24, 20)), 3),
}


@pytest.fixture(autouse=True)
def on_cuda():
    pk.set_default_space(pk.Cuda)
    yield
    pk.set_default_space(pk.OpenMP)


def _host(x):
    if hasattr(x, "__cuda_array_interface__") and hasattr(x, "get"):
        return x.get()
    if isinstance(x, pk.View):
        return np.asarray(x)
    return x


@pytest.mark.parametrize("kind", ["numpy", "cupy", "view"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_device_arrays_pass_as_they_are(case, kind):
    args = CASES[case]()
    cp = None
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = getattr(OURS, case).py_func(*want_args)
    if kind == "cupy":
        cp = pytest.importorskip("cupy", reason="CuPy arrays are what this passes")
        mine = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    elif kind == "view":
        mine = []
        for a in args:
            if isinstance(a, np.ndarray):
                v = pk.View(list(a.shape), pk.double, space=pk.CudaSpace)
                np.asarray(v)[...] = a
                a = v
            mine.append(a)
    else:
        mine = list(args)
    got = getattr(OURS, case)(*mine)
    # New arrays come back where the call's arrays were: no copy to the host
    # when it was given device arrays.
    made = {"numpy": np.ndarray, "view": pk.View}.get(kind) or cp.ndarray
    for r in got if isinstance(got, tuple) else (got,):
        if hasattr(r, "shape") and not isinstance(r, np.generic):
            assert isinstance(r, made), f"{case} ({kind}): an array came back as {type(r).__name__}"
    same(_host(got) if not isinstance(got, tuple) else tuple(_host(x) for x in got),
         want.item() if isinstance(want, np.generic) else want, f"{case} ({kind}) result")
    for k, (g, w) in enumerate(zip(mine, want_args)):
        if isinstance(w, np.ndarray):
            same(_host(g), w, f"{case} ({kind}) argument {k} after the call")


@pytest.mark.parametrize("fused", [False, True])
def test_numpy_arguments_cross_once_per_call(fused):
    # A NumPy array a call holds gets one device copy for the call: x, read by
    # two kernels, crosses once; x, only read, does not come back (fused too:
    # a buffer no body writes is not stored back from its register); y comes
    # back once. y does not cross in: the first loop stores all of it and
    # reads none (fused too: the second loop reads only what the first stored).
    f = _OURS["corpus_more.py"].two_passes
    x, y = R.random(1 << 16), np.full(1 << 16, 3.0)
    was = pk._native.lazy_enabled()
    pk._native.set_lazy(fused)
    try:
        f(x.copy(), y.copy())  # compiled
        h2d, d2h = pk.device_copies()
        got = f(x, y)
        h2d2, d2h2 = pk.device_copies()
    finally:
        pk._native.set_lazy(was)
    assert got is y
    np.testing.assert_allclose(y, 5 * x)
    assert h2d2 - h2d == x.nbytes
    assert d2h2 - d2h == y.nbytes
