"""PyKokkos' array functions (pykokkos.lib: `pk.sqrt`, `pk.add`, `pk.sum`, ...).

Elementwise functions on Views of rank 1 and 2 run as kernels, so under
PK_FUSE=1 they are recorded and fused like any launch: `pk.sqrt(pk.add(a, b))`
becomes one kernel, and the temporary between them a register. Sums, means
and variances run as reductions. Result dtypes are NumPy's for the same
operands (Python numbers are weak, NEP 50). Everything else (other ranks,
broadcasting between different shapes, sorting-like functions) is computed by
NumPy on the Views' memory after their pending work ran, and returned as a
View: correct, but not a kernel.
"""

from __future__ import annotations

import linecache
import re
import sys
import math  # noqa: F401  (the generated kernels use it)
import warnings

import numpy as np

from ._kernels import workunit
from .. import _native
from ._launch import MDRangePolicy, _finish
from ._types import PATTERN, numpy_dtype
from ._views import View, array

# name -> the element expression in x (and y, or the scalar s)
UNARY = {
    "sqrt": "math.sqrt(x)",
    "exp": "math.exp(x)",
    "exp2": "math.exp2(x)",
    "log": "math.log(x)",
    "log2": "math.log2(x)",
    "log10": "math.log10(x)",
    "log1p": "math.log1p(x)",
    "sin": "math.sin(x)",
    "cos": "math.cos(x)",
    "tan": "math.tan(x)",
    "tanh": "math.tanh(x)",
    "negative": "-x",
    "positive": "x",
    "square": "x * x",
    "reciprocal": "1 / x",
    "floor": "math.floor(x)",
    "ceil": "math.ceil(x)",
    "trunc": "math.trunc(x)",
    "isnan": "math.isnan(x)",
    "isinf": "math.isinf(x)",
    "isfinite": "math.isfinite(x)",
    "logical_not": "not x",
    "sign": "x if x != x else float((x > 0) - (x < 0))",  # sign(NaN) is NaN
}
BINARY = {
    "add": "x + y",
    "subtract": "x - y",
    "multiply": "x * y",
    "divide": "x / y",
    "true_divide": "x / y",
    "floor_divide": "x // y",
    "power": "x ** y",
    "fmod": "math.fmod(x, y)",
    "greater": "x > y",
    "equal": "x == y",
    "logical_and": "(x != 0) and (y != 0)",
    "logical_or": "(x != 0) or (y != 0)",
    "logical_xor": "(x != 0) != (y != 0)",
    "fmax": "math.fmax(x, y)",
    "fmin": "math.fmin(x, y)",
    "logaddexp": "math.log(math.exp(x) + math.exp(y))",
    "logaddexp2": "math.log2(math.exp2(x) + math.exp2(y))",
}
_FLOAT_ONLY = {"floor", "ceil", "trunc", "sign", "fmod", "fmax", "fmin"}  # int inputs: NumPy on the host

_SOURCE_NAME = "<pykokkos array functions>"


def _element(expr: str, rank: int, **names: str) -> str:
    idx = "[i]" if rank == 1 else "[i][j]"
    for var, kind in names.items():
        if kind == "view":
            expr = re.sub(rf"\b{var}\b", var + idx, expr)
    return expr


def _generate() -> str:
    lines = []
    for rank, params in ((1, "i"), (2, "i, j")):
        out = "out[i]" if rank == 1 else "out[i][j]"
        for name, expr in UNARY.items():
            body = _element(expr, rank, x="view")
            lines += ["@workunit", f"def _u_{name}_{rank}({params}, x, out):", f"    {out} = {body}", ""]
        for name, expr in BINARY.items():
            for tag, kinds in (("vv", ("view", "view")), ("vs", ("view", "scalar")), ("sv", ("scalar", "view"))):
                body = _element(expr, rank, x=kinds[0], y=kinds[1])
                lines += ["@workunit", f"def _b_{name}_{tag}_{rank}({params}, x, y, out):", f"    {out} = {body}", ""]
    lines += [
        "@workunit",
        "def _r_sum_1(i, acc, x):",
        "    acc += x[i]",
        "",
        "@workunit",
        "def _r_sum_2(i, j, acc, x):",
        "    acc += x[i][j]",
        "",
        "@workunit",
        "def _r_sq_1(i, acc, m, x):",
        "    acc += (x[i] - m) * (x[i] - m)",
        "",
        "@workunit",
        "def _r_sq_2(i, j, acc, m, x):",
        "    acc += (x[i][j] - m) * (x[i][j] - m)",
        "",
    ]
    return "\n".join(lines) + "\n"


def _build() -> dict:
    # Kernels read their source through `inspect`: register the generated text
    # under its own name, as if it were a file.
    text = _generate()
    linecache.cache[_SOURCE_NAME] = (len(text), None, text.splitlines(True), _SOURCE_NAME)
    scope = {"workunit": workunit, "math": math}
    exec(compile(text, _SOURCE_NAME, "exec"), scope)
    return {k: v for k, v in scope.items() if k.startswith(("_u_", "_b_", "_r_"))}


class _Kernels(dict):
    """The generated kernels, built at the first array function call (not at import)."""

    def __missing__(self, key):
        if not self:
            self.update(_build())
            return self[key]
        raise KeyError(key)


_K = _Kernels()


def _user_frame():
    """The caller outside this package: launches name the user's line."""
    f = sys._getframe(2)
    while f.f_back is not None and f.f_globals.get("__name__", "").partition(".")[0] == "pykokkos":
        f = f.f_back
    return f


def parallel_for(policy, kernel, **kw) -> None:
    f = _user_frame()
    _native.launch(PATTERN["parallel_for"], policy, kernel.__pk_workunit__, kw, None, False, None, None, f.f_code, f.f_lasti)


def parallel_reduce(policy, kernel, **kw):
    f = _user_frame()
    return _finish(
        _native.launch(PATTERN["parallel_reduce"], policy, kernel.__pk_workunit__, kw, None, False, None, None, f.f_code, f.f_lasti), None
    )


def _host(x):
    """The NumPy array of a View (pending work run first) or of anything else."""
    return np.asarray(x)


def _result_dtype(fn_name: str, *operands) -> np.dtype:
    samples = [np.ones(1, _np_dtype(o)) if isinstance(o, View) else o for o in operands]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(getattr(np, fn_name)(*samples)).dtype


def _policy(shape):
    return shape[0] if len(shape) == 1 else MDRangePolicy([0, 0], list(shape))


def _new(shape, dtype: np.dtype) -> View:
    return array(np.zeros(shape, dtype)) if dtype == np.float16 else View(list(shape), dtype.type)


def _np_dtype(v) -> np.dtype:
    return numpy_dtype(v.dtype.value)


def _is_view(v) -> bool:
    return isinstance(v, View)


def _unary(name: str):
    # Upstream's parameter names (`pk.sqrt(view=v)`); its profiler labels are accepted and unused.
    def fn(view, out=None, profiler_name=None):
        x = view
        if not _is_view(x) and np.ndim(x) == 0 and out is None:  # a number: a number, as upstream's
            with np.errstate(all="ignore"):
                return getattr(np, name)(x)
        if not _is_view(x):
            x = array(np.asarray(x))
        dt = _result_dtype(name, x)
        if x.ndim not in (1, 2) or (name in _FLOAT_ONLY and not np.issubdtype(_np_dtype(x), np.floating)):
            return array(getattr(np, name)(_host(x)))
        out = _new(x.shape, dt) if out is None else out
        parallel_for(_policy(x.shape), _K[f"_u_{name}_{x.ndim}"], x=x, out=out)
        return out

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"`pk.{name}(x)`: NumPy's {name}, elementwise, as a kernel."
    return fn


def _binary(name: str):
    def fn(viewA, viewB, out=None, profiler_name=None):
        x, y = viewA, viewB
        xv, yv = _is_view(x), _is_view(y)
        if not xv and not yv:
            return getattr(np, name)(x, y)
        if not xv and not np.isscalar(x):
            x, xv = array(np.asarray(x)), True
        if not yv and not np.isscalar(y):
            y, yv = array(np.asarray(y)), True
        shape = (x if xv else y).shape
        dt = _result_dtype(name, x, y)
        floats = all(np.issubdtype(_np_dtype(v), np.floating) for v in (x, y) if _is_view(v))
        if len(shape) not in (1, 2) or (xv and yv and x.shape != y.shape) or (name in _FLOAT_ONLY and not floats):
            return array(np.asarray(getattr(np, name)(_host(x) if xv else x, _host(y) if yv else y)))
        tag = "vv" if xv and yv else ("vs" if xv else "sv")
        out = _new(shape, dt) if out is None else out
        parallel_for(_policy(shape), _K[f"_b_{name}_{tag}_{len(shape)}"], x=x, y=y, out=out)
        return out

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"`pk.{name}(x, y)`: NumPy's {name}, elementwise, as a kernel (Views or numbers)."
    return fn


FUNCTIONS = {name: _unary(name) for name in UNARY}
FUNCTIONS.update({name: _binary(name) for name in BINARY})


def sum(view, axis=None, profiler_name=None):  # noqa: A001  (PyKokkos' name)
    """`pk.sum(x)`: a reduction kernel (with `axis`, NumPy's sum as a View)."""
    x = view
    if axis is not None or not _is_view(x) or x.ndim not in (1, 2) or _np_dtype(x) == np.bool_:
        r = np.sum(_host(x), axis=axis)
        return array(r) if isinstance(r, np.ndarray) else r
    return parallel_reduce(_policy(x.shape), _K[f"_r_sum_{x.ndim}"], x=x)


def mean(view, axis=None, profiler_name=None):
    x = view
    if axis is not None or not _is_view(x) or x.ndim not in (1, 2):
        r = np.mean(_host(x), axis=axis)
        return array(r) if isinstance(r, np.ndarray) else r
    return float(sum(x)) / x.size


def var(view, axis=None, profiler_name=None):
    x = view
    if axis is not None or not _is_view(x) or x.ndim not in (1, 2):
        r = np.var(_host(x), axis=axis)
        return array(r) if isinstance(r, np.ndarray) else r
    m = mean(x)
    return float(parallel_reduce(_policy(x.shape), _K[f"_r_sq_{x.ndim}"], m=m, x=x)) / x.size


def dot(viewA, viewB):
    """`pk.dot(x, y)` of two 1-D Views: one fused multiply-and-sum kernel."""
    x, y = viewA, viewB
    if _is_view(x) and _is_view(y) and x.ndim == y.ndim == 1 and x.shape == y.shape:
        return sum(FUNCTIONS["multiply"](x, y))
    r = np.dot(_host(x), _host(y))
    return array(r) if isinstance(r, np.ndarray) else r


def _via_numpy(name: str, np_name: str | None = None):
    """A function computed by NumPy on the Views' memory, returned as a View."""
    np_fn = getattr(np, np_name or name)

    def fn(*args, **kwargs):
        args = [_host(a) if _is_view(a) else a for a in args]
        r = np_fn(*args, **kwargs)
        return array(np.ascontiguousarray(r)) if isinstance(r, np.ndarray) and r.ndim > 0 else r

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"`pk.{name}`: NumPy's {np_name or name} on the Views' memory (not a kernel)."
    return fn


for _name in (
    "matmul",
    "transpose",
    "hstack",
    "reshape",
    "ravel",
    "expand_dims",
    "unique",
    "in1d",
    "searchsorted",
    "argmax",
    "linspace",
    "logspace",
    "zeros_like",
    "ones_like",
    "full_like",
    "round",
    "isclose",
    "all",
    "any",
):
    FUNCTIONS[_name] = _via_numpy(_name, "isin" if _name == "in1d" else None)


def _inner(a, b) -> tuple[int, int]:
    """The lengths matrix multiplication pairs: a's last, b's first of its last two."""
    return a.shape[-1], b.shape[0] if len(b.shape) == 1 else b.shape[-2]


def matmul(viewA, viewB, profiler_name=None):
    """`pk.matmul(a, b)`: NumPy's matmul; mismatched lengths raise upstream's RuntimeError."""
    a, b = (v if _is_view(v) else np.asarray(v) for v in (viewA, viewB))
    if a.shape and b.shape and _inner(a, b)[0] != _inner(a, b)[1]:
        raise RuntimeError(f"Input operand 1 has a mismatch in its core dimension (Size {a.shape[0]} is different from {b.shape[0]})")
    return _matmul(a, b)


def np_matmul(viewA, viewB, profiler_name=None):
    """`pk.np_matmul(a, b)`: NumPy's matmul (upstream's stops at 2-D); mismatched lengths
    raise upstream's RuntimeError."""
    a, b = (v if _is_view(v) else np.asarray(v) for v in (viewA, viewB))
    if a.shape and b.shape and _inner(a, b)[0] != _inner(a, b)[1]:
        raise RuntimeError(f"Matrix dimensions are not compatible for multiplication: {viewA.shape} and {viewB.shape}")
    return _matmul(a, b)


_matmul = FUNCTIONS["matmul"]
FUNCTIONS.update(matmul=matmul, np_matmul=np_matmul)
FUNCTIONS["find_max"] = _via_numpy("find_max", "max")
FUNCTIONS.update(sum=sum, mean=mean, var=var, dot=dot)


def copyto(dst, src) -> None:
    """`pk.copyto(dst, src)`: NumPy's copyto into a View."""
    np.copyto(_host(dst), _host(src) if _is_view(src) else src)


def iinfo(t):
    return np.iinfo(_numpy_type(t))


def finfo(t):
    return np.finfo(_numpy_type(t))


def _numpy_type(t):
    from ._types import DataType

    return numpy_dtype(t.value) if isinstance(t, DataType) else t


def col(view, j: int) -> View:
    """`pk.col(m, j)`: column j of a 2-D View, as a new 1-D View."""
    return array(np.ascontiguousarray(_host(view)[:, int(j)]))


def index(view, indices) -> View:
    """`pk.index(a, idx)`: a[idx] elementwise (gather), as a new View."""
    return array(_host(view)[_host(indices)])


def broadcast_view(val, view) -> View:
    """`val` (a View or number) stretched to `view`'s shape, as a new View."""
    return array(np.ascontiguousarray(np.broadcast_to(_host(val) if _is_view(val) else val, view.shape)))


FUNCTIONS.update(copyto=copyto, iinfo=iinfo, finfo=finfo, col=col, index=index, broadcast_view=broadcast_view)
