"""Special functions outside kernels: `pk.cyl_bessel_j0(x)`, `pk.erfcx(z)`,
`pk.expint1(v)`, ... on numbers, NumPy arrays and Views.

They are the functions kernels call (src/codegen/special.hpp): each call runs
one elementwise kernel, so a kernel and the host give the same bits, and
under PK_FUSE=1 the call is recorded and fused like any launch. Result dtypes
are SciPy's: float32 stays float32, integers become float64, complex stays
complex, and the Hankel functions are complex (complex64 from float32).
"""

from __future__ import annotations

import linecache

import numpy as np

from ._kernels import workunit
from ._types import WIRE
from ._views import View, array

# erf and erfc, then the kernels' own special functions (src/lower/math.rs).
NAMES = ("erf", "erfc", *WIRE["special_functions"])
_SOURCE_NAME = "<pykokkos special functions>"
_kernels: dict = {}


def _kernel(name: str, rank: int):
    if not _kernels:
        idx = {1: ("i", "[i]"), 2: ("i, j", "[i][j]")}
        text = "".join(
            f"@workunit\ndef _sf_{n}_{r}({p}, x, out):\n    out{ix} = {n}(x{ix})\n\n" for n in NAMES for r, (p, ix) in idx.items()
        )
        # Kernels read their source through `inspect`: register the text as a file.
        linecache.cache[_SOURCE_NAME] = (len(text), None, text.splitlines(True), _SOURCE_NAME)
        scope = {"workunit": workunit}
        exec(compile(text, _SOURCE_NAME, "exec"), scope)
        _kernels.update({k: v for k, v in scope.items() if k.startswith("_sf_")})
    return _kernels[f"_sf_{name}_{rank}"]


def result_dtype(name: str, dt: np.dtype) -> np.dtype:
    dt = np.dtype(dt)
    if dt.kind == "c":
        return np.dtype(np.complex64 if dt.itemsize <= 8 else np.complex128)
    single = dt.kind == "f" and dt.itemsize <= 4
    if name.startswith("cyl_bessel_h"):
        return np.dtype(np.complex64 if single else np.complex128)
    return np.dtype(np.float32 if single else np.float64)


def _apply(name: str, x, out):
    from ._arrays import parallel_for, _policy  # (the array functions import this module)

    if not isinstance(x, View):
        host = np.asarray(x)
        if host.dtype.kind not in "biufc":
            raise TypeError(f"pk.{name}() takes numbers, not {host.dtype} values")
        # The kernel's argument dtype: a supported View dtype of the same kind.
        if host.dtype.kind == "f" and host.dtype.itemsize < 4:
            host = host.astype(np.float32)
        x = array(np.ascontiguousarray(host))
    shape = tuple(x.shape)
    if len(shape) not in (1, 2):  # other ranks: the kernel over the flattened elements
        flat = array(np.ascontiguousarray(np.asarray(x)).reshape(-1))
        r = _apply(name, flat, None)
        if out is None:
            return array(np.asarray(r).reshape(shape))
        np.asarray(out)[...] = np.asarray(r).reshape(shape)
        return out
    want = result_dtype(name, _np(x))
    if out is None:
        out = View(list(shape), want.type)
    else:
        have = np.asarray(out).dtype if not isinstance(out, View) else _np(out)
        if want.kind == "c" and have.kind != "c":
            raise TypeError(f"pk.{name}() has a {want} result: out= is {have}")
        if tuple(np.shape(out)) != shape:
            raise ValueError(f"pk.{name}(): out= has shape {tuple(np.shape(out))}, the argument {shape}")
    parallel_for(shape[0] if len(shape) == 1 else _policy(shape), _kernel(name, len(shape)), x=x, out=out)
    return out


def _np(v: View) -> np.dtype:
    from ._types import numpy_dtype

    return numpy_dtype(v.dtype.value)


def _function(name: str):
    def fn(view, out=None, profiler_name=None):
        if not isinstance(view, View) and np.ndim(view) == 0 and out is None:
            # A number gives a number (a NumPy scalar of SciPy's dtype).
            r = np.asarray(_apply(name, np.asarray([view]), None))
            return r[0]
        return _apply(name, view, out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"`pk.{name}(x)`: scipy.special's function, elementwise (a kernel); on a number, a number. Also callable inside workunits."
    return fn


FUNCTIONS = {name: _function(name) for name in NAMES}
