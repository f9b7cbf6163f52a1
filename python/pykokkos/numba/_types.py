"""The types pykokkos.numba gives values, and Numba's rules between them:
arrays (dtype, rank), tuples, constants a translation specializes on (dtypes,
jitted functions), and the dtype of arithmetic on arrays (Numba's ufunc loop
choice) and on scalars (Numba's integer widening)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from ..runtime._types import WIRE


@dataclass(frozen=True)
class Arr:
    dtype: str
    ndim: int


@dataclass(frozen=True)
class Tup:
    items: tuple


@dataclass(frozen=True)
class Const:
    """An argument the translation specializes on: a dtype or a jitted function
    passed as a value (Numba compiles once per such value too)."""

    value: object


RANGE = "range"
NONE = "none"
STR = "str"

MATH_FLOAT = {
    "sqrt",
    "exp",
    "exp2",
    "log",
    "log2",
    "log10",
    "log1p",
    "expm1",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "fabs",
    "cbrt",
    "erf",
    "erfc",
    "gamma",
    "lgamma",
    "pow",
    "atan2",
    "hypot",
    "fmod",
    "copysign",
    "degrees",
    "radians",
    "arcsin",
    "arccos",
    "arctan",
    "arcsinh",
    "arccosh",
    "arctanh",
    "arctan2",
    "power",
    "square",
    "reciprocal",
}
MATH_INT = {"floor", "ceil", "trunc"}
PRED = {"isnan", "isinf", "isfinite"}
ALLOC = {"empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like", "copy", "arange"}
REDUCE = {"sum", "prod", "min", "max", "amin", "amax", "mean", "argmin", "argmax", "dot", "vdot"}
# The core's dtype names (`bool` for np.bool_), and NumPy's scalar type names
# of them (`bool_`).
DTYPES = frozenset(WIRE["dtypes"])
NP_SCALARS = frozenset("bool_" if n == "bool" else n for n in DTYPES)
SCALAR_TYPES = NP_SCALARS | {"float_", "double", "intp"}


def promote(a: str, b: str) -> str:
    return np.result_type(np.dtype(a), np.dtype(b)).name


_UFUNC_OF = {
    ast.Add: "add",
    ast.Sub: "subtract",
    ast.Mult: "multiply",
    ast.Div: "true_divide",
    ast.FloorDiv: "floor_divide",
    ast.Mod: "remainder",
    ast.Pow: "power",
    ast.BitAnd: "bitwise_and",
    ast.BitOr: "bitwise_or",
    ast.BitXor: "bitwise_xor",
    ast.LShift: "left_shift",
    ast.RShift: "right_shift",
}


def ufunc_out(name: str, dtypes: list) -> str | None:
    """The output dtype of NumPy ufunc `name` on these input dtypes as Numba
    types it: the first of the ufunc's loops the inputs cast to safely, where
    an integer may cast to any float when integers and floats are mixed (so
    float32 ** 2 stays float32 while np.sqrt of an int32 is float64)."""
    uf = getattr(np, name, None)
    if not isinstance(uf, np.ufunc) or None in dtypes or len(dtypes) != uf.nin:
        return None
    ins = [np.dtype(d) for d in dtypes]
    mixed = any(t.kind in "iu" for t in ins) and any(t.kind in "fc" for t in ins)

    def castable(src, dst):
        return (mixed and src.kind in "iu" and dst.kind in "fc") or np.can_cast(src, dst, "safe")

    for loop in uf.types:
        inputs, outputs = loop.split("->")
        if any(c in "OemM" for c in inputs + outputs):
            continue
        if all(castable(t, np.dtype(c)) for t, c in zip(ins, inputs)):
            return np.dtype(outputs[0]).name
    return None


def scalar_binop(op, a: str, b: str) -> str:
    """Numba's scalar arithmetic: integers widen to int64 (uint64 when both
    are unsigned), `/` gives a float, a float to an integer power keeps its
    width, floats promote as NumPy does."""
    ka, kb = np.dtype(a).kind, np.dtype(b).kind
    if isinstance(op, ast.Div):
        return as_float(promote(a, b)) if "f" in ka + kb or "c" in ka + kb else "float64"
    if ka in "biu" and kb in "biu":
        if ka == kb == "b" and isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return "bool"
        return "uint64" if ka == kb == "u" else "int64"
    if isinstance(op, ast.Pow) and ka in "fc" and kb in "biu":
        return a
    return promote(a, b)


def as_float(dt: str) -> str:
    """The dtype NumPy's float functions return for dt (ints and bools give float64)."""
    k = np.dtype(dt).kind
    return dt if k in "fc" else "float64"


def scalar_of(value) -> str | None:
    """The Numba type of a Python or NumPy scalar value."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, complex):
        return "complex128"
    if isinstance(value, np.generic):
        return value.dtype.name
    return None


def dtype_value(value) -> str | None:
    """The dtype name of np.float64, np.dtype('f4'), float, ... (None for anything else)."""
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        try:
            return np.dtype(value).name
        except TypeError:
            return None
    return None


def _view_type(value):
    """(dtype name, ndim) of a pykokkos View (a View argument is used as it is)."""
    from pykokkos.runtime._types import numpy_dtype
    from pykokkos.runtime._views import View

    if isinstance(value, View):
        return numpy_dtype(value._dtype_code).name, len(value.shape)
    return None


def type_of_value(value):
    if dtype_value(value) is not None or hasattr(value, "py_func") and hasattr(value, "pk_source"):
        return Const(value)
    if isinstance(value, np.ndarray):
        if value.dtype.fields is not None or value.dtype.kind not in "biufc":
            return None
        return Arr(value.dtype.name, value.ndim)
    if isinstance(value, tuple):
        items = tuple(type_of_value(v) for v in value)
        return Tup(items) if all(i is not None for i in items) else None
    view = _view_type(value)
    if view is not None:
        return Arr(*view)
    if hasattr(value, "__cuda_array_interface__") and hasattr(value, "dtype") and hasattr(value, "ndim"):
        dt = np.dtype(value.dtype)  # CuPy and other device arrays: used where they are
        return Arr(dt.name, int(value.ndim)) if dt.kind in "biufc" and dt.fields is None else None
    return scalar_of(value)


def _show(t) -> str:
    return f"{t.ndim}-d {t.dtype} array" if isinstance(t, Arr) else str(t)


def join(a, b):
    """One type for a name assigned both: arrays must agree, numbers promote."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    if isinstance(a, str) and isinstance(b, str) and a not in (RANGE, NONE, STR) and b not in (RANGE, NONE, STR):
        return promote(a, b)
    if isinstance(a, Arr) and isinstance(b, Arr) and a.ndim == b.ndim:
        return Arr(promote(a.dtype, b.dtype), a.ndim)
    return "conflict"


PK_DTYPE = {
    "float64": "pk.float64",
    "float32": "pk.float32",
    "int64": "pk.int64",
    "int32": "pk.int32",
    "int16": "pk.int16",
    "int8": "pk.int8",
    "uint64": "pk.uint64",
    "uint32": "pk.uint32",
    "uint16": "pk.uint16",
    "uint8": "pk.uint8",
    "bool": "pk.bool",
    "complex128": "pk.complex128",
    "complex64": "pk.complex64",
}


def pk_type(dt: str) -> ast.expr:
    return ast.parse(PK_DTYPE[dt], mode="eval").body
