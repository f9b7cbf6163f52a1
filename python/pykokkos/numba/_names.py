"""What the free names of a jitted function mean: modules (numpy, math, numba),
builtins, other jitted functions, and global constants Numba freezes."""

from __future__ import annotations

import ast
import builtins
import math
import types

import numpy as np

from ._errors import Source, unsupported

BUILTINS = {"range", "len", "min", "max", "abs", "int", "float", "bool", "complex", "round", "enumerate", "zip", "print"}
DTYPES = {
    "float64": "float64",
    "float32": "float32",
    "int64": "int64",
    "int32": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint64": "uint64",
    "uint32": "uint32",
    "uint16": "uint16",
    "uint8": "uint8",
    "bool_": "bool",
    "bool": "bool",
    "complex128": "complex128",
    "complex64": "complex64",
    "float_": "float64",
    "double": "float64",
    "intp": "int64",
    "int_": "int64",
    "float": "float64",
    "int": "int64",
    "complex": "complex128",
    "boolean": "bool",
    "b1": "bool",
    "f8": "float64",
    "f4": "float32",
    "i8": "int64",
    "i4": "int32",
}


def _is_prange(obj) -> bool:
    return getattr(obj, "__name__", None) == "prange" and (getattr(obj, "__module__", "") or "").split(".")[0] in ("numba", "pykokkos")


def _is_numba_module(obj) -> bool:
    return isinstance(obj, types.ModuleType) and obj.__name__ in ("numba", "pykokkos.numba")


class Names:
    def __init__(self, fn, ctx: Source, is_helper):
        self.ctx = ctx
        self.globals = dict(fn.__globals__)
        if fn.__closure__:
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    self.globals[name] = cell.cell_contents
                except ValueError:
                    pass
        self.is_helper = is_helper

    def lookup(self, name):
        if name == "__pk_numpy__":  # _normalize.NUMPY
            return np
        if name in self.globals:
            return self.globals[name]
        return getattr(builtins, name, None)

    def module_of(self, e) -> str | None:
        """'np', 'math' or 'numba' when e names that module."""
        if isinstance(e, ast.Name):
            v = self.lookup(e.id)
            if v is np:
                return "np"
            if v is math:
                return "math"
            if _is_numba_module(v):
                return "numba"
        return None

    def callee(self, f):
        """(kind, what) for a called expression: builtin, np, math, helper; None if unknown."""
        if isinstance(f, ast.Name):
            v = self.lookup(f.id)
            if _is_prange(v):
                return ("builtin", "prange")
            if self.is_helper(v):
                return ("helper", v)
            if getattr(v, "__pk_stencil__", False):
                return ("stencil", v)
            if getattr(v, "__pk_vectorize__", False):
                return ("vectorize", v)
            if v is getattr(builtins, f.id, None) and f.id in BUILTINS:
                return ("builtin", f.id)
            if isinstance(v, np.ufunc) or getattr(v, "__module__", "") == "numpy":
                return ("np", v.__name__)
            if getattr(v, "__module__", None) == "math":
                return ("math", f.id)
            return None
        if isinstance(f, ast.Attribute):
            m = self.module_of(f.value)
            if m == "numba" and f.attr == "prange":
                return ("builtin", "prange")
            if m in ("np", "math"):
                return (m, f.attr)
        return None

    def constant(self, name):
        """A global number, tuple or array the function reads (frozen at compile time)."""
        v = self.globals.get(name)
        if isinstance(v, (bool, int, float, complex, np.generic, np.ndarray)):
            return v
        if isinstance(v, tuple) and all(isinstance(x, (bool, int, float, complex)) for x in v):
            return v
        return None

    def dtype_name(self, e) -> str:
        """The dtype an expression names: np.float64, numba.int32, 'f8', float, ..."""
        if isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value in DTYPES:
            return DTYPES[e.value]
        if (
            isinstance(e, ast.Attribute)
            and e.attr in DTYPES
            and (self.module_of(e.value) in ("np", "numba") or isinstance(e.value, ast.Name) and e.value.id == "np")
        ):
            return DTYPES[e.attr]
        if isinstance(e, ast.Name):
            v = self.lookup(e.id)
            if v in (float, int, bool, complex):
                return DTYPES[v.__name__]
            if isinstance(v, type) and issubclass(v, np.generic):
                return np.dtype(v).name
            if hasattr(v, "__pk_numba_dtype__"):
                return v.__pk_numba_dtype__
        if isinstance(e, ast.Attribute) and self.module_of(e.value) == "numba":
            v = getattr(self.lookup(e.value.id), e.attr, None)
            if hasattr(v, "__pk_numba_dtype__"):
                return v.__pk_numba_dtype__
        raise unsupported(self.ctx, e, "this does not name a dtype (write np.float64, np.int32, ...)")
