"""How NumPy calls are typed inside jitted functions (Numba's rules):
ufuncs by their loops, reductions, allocations, np.array literals, reshape."""

from __future__ import annotations

import ast

import numpy as np

from ._errors import unsupported
from ._types import (
    ALLOC,
    MATH_FLOAT,
    MATH_INT,
    NONE,
    PRED,
    RANGE,
    REDUCE,
    SCALAR_TYPES,
    Arr,
    Tup,
    _show,
    as_float,
    join,
    promote,
    ufunc_out,
)


# NumPy functions typed here besides the ufuncs (the rest is refused).
KNOWN = (
    MATH_FLOAT
    | MATH_INT
    | PRED
    | ALLOC
    | REDUCE
    | SCALAR_TYPES
    | {
        "where",
        "ndindex",
        "array",
        "asarray",
        "sort",
        "reshape",
        "linspace",
        "abs",
        "absolute",
        "negative",
        "sign",
        "conj",
        "conjugate",
        "minimum",
        "maximum",
        "fmin",
        "fmax",
        "add",
        "subtract",
        "multiply",
        "divide",
        "true_divide",
        "real",
        "imag",
        "round",
        "around",
        "rint",
        "float_",
        "int_",
        "bool_",
        "intp",
        "cumsum",
    }
)


class NumpyTyping:
    """Typer's NumPy calls (a mixin: self.names, self.expr come from Typer)."""

    def numpy_call(self, fn, args, kw, e):
        n = self.names
        arr = next((a for a in args if isinstance(a, Arr)), None)
        uf = getattr(np, fn, None)
        if isinstance(uf, np.ufunc) and (len(e.args) > uf.nin or any(k.arg == "out" for k in e.keywords)):
            raise unsupported(
                n.ctx,
                e,
                f"np.{fn} with an output argument is supported as a statement (np.{fn}(..., out)); as a value write out[:] = np.{fn}(...)",
            )
        if fn == "ndindex":
            nd = len(args[0].items) if len(args) == 1 and isinstance(args[0], Tup) else len(args)
            return Tup((Tup(("int64",) * nd),))
        if fn in SCALAR_TYPES:
            return n.dtype_name(ast.Attribute(ast.Name("np"), fn))
        if fn in ALLOC:
            return self.alloc_type(fn, args, kw, e)
        if fn in ("array", "asarray") and e.args:
            return self.array_type(e)
        if fn == "reshape" and len(args) == 2 and isinstance(args[0], Arr):
            return self.reshaped(args[0], args[1], e)
        if fn == "cumsum" and len(args) == 1 and isinstance(args[0], Arr) and not kw:
            k = np.dtype(args[0].dtype).kind
            return Arr("int64" if k in "bi" else ("uint64" if k == "u" else args[0].dtype), 1)
        if fn == "linspace" and len(e.args) >= 2:
            dkw = next((k.value for k in e.keywords if k.arg == "dtype"), None)
            return Arr(self.dtype_arg(dkw) if dkw is not None else "float64", 1)
        if fn == "histogram":  # (counts, edges) of an integer number of bins
            given = dict(zip(("a", "bins", "range"), args)) | kw
            if (
                not isinstance(given.get("a"), Arr)
                or set(given) - {"a", "bins", "range"}
                or not (isinstance(given.get("bins", "int64"), str) and np.dtype(given.get("bins", "int64")).kind in "iu")
            ):
                raise unsupported(n.ctx, e, "np.histogram is supported with an integer number of bins (and range=)")
            return Tup((Arr("int64", 1), Arr("float64", 1)))
        if fn == "sort" and len(args) == 1 and isinstance(args[0], Arr):
            return args[0]
        if fn in REDUCE:
            if fn in ("dot", "vdot"):
                return promote(args[0].dtype, args[1].dtype)
            return self.axis_type(self.reduce_type(fn, args[0]), args[0], axis_arg(e, 1))
        if fn == "where":
            t = join(self.dtype_of(args[1]), self.dtype_of(args[2]))
            nd = max((a.ndim for a in args if isinstance(a, Arr)), default=0)
            return Arr(t, nd) if nd else t
        if fn in PRED:
            return Arr("bool", arr.ndim) if arr else "bool"
        out = None
        if isinstance(getattr(np, fn, None), np.ufunc) and fn not in PRED:
            out = ufunc_out(fn, [self.dtype_of(a) for a in args])
        elif fn in MATH_FLOAT:
            d = args[0].dtype if isinstance(args[0], Arr) else args[0]
            out = as_float(d) if d is not None else None
            if fn in ("power", "pow", "arctan2", "atan2", "hypot", "copysign", "fmod") and len(args) == 2:
                d2 = args[1].dtype if isinstance(args[1], Arr) else args[1]
                out = promote(d, d2) if fn == "power" else as_float(promote(d, d2))
        elif fn in MATH_INT:
            out = as_float(args[0].dtype if arr else args[0])
        elif fn in ("abs", "absolute", "negative", "sign", "conj", "conjugate"):
            out = args[0].dtype if isinstance(args[0], Arr) else args[0]
        elif fn in ("minimum", "maximum", "fmin", "fmax", "add", "subtract", "multiply"):
            out = promote(self.dtype_of(args[0]), self.dtype_of(args[1]))
        elif fn in ("divide", "true_divide"):
            out = as_float(promote(self.dtype_of(args[0]), self.dtype_of(args[1])))
        elif fn in ("real", "imag"):
            out = np.dtype(self.dtype_of(args[0])).type(0).real.dtype.name
        elif not isinstance(getattr(np, fn, None), np.ufunc) and fn not in KNOWN:
            # Anything else NumPy has would run as NumPy on the host, untyped: refused here.
            raise unsupported(self.names.ctx, e, f"np.{fn} is not supported by pykokkos.numba")
        if out is None:
            return None
        nd = max((a.ndim for a in args if isinstance(a, Arr)), default=0)
        return Arr(out, nd) if nd else out

    def dtype_arg(self, e) -> str:
        """The dtype a dtype= argument names; `x.dtype` of any array the function has is x's."""
        if isinstance(e, ast.Attribute) and e.attr == "dtype":
            t = self.expr(e.value)
            if isinstance(t, Arr):
                return t.dtype
        return self.names.dtype_name(e)

    def reshaped(self, a: Arr, shape, e):
        if isinstance(shape, Tup) and all(isinstance(x, str) and np.dtype(x).kind in "iu" for x in shape.items):
            return Arr(a.dtype, len(shape.items))
        if isinstance(shape, str) and np.dtype(shape).kind in "iu":
            return Arr(a.dtype, 1)
        raise unsupported(self.names.ctx, e, "reshape needs a shape of integers")

    def array_type(self, e):
        """np.array of a (nested) list display or of an array, as Numba types it."""
        src = e.args[0]
        dkw = next((k.value for k in e.keywords if k.arg == "dtype"), e.args[1] if len(e.args) > 1 else None)
        if not isinstance(src, (ast.List, ast.Tuple)):
            t = self.expr(src)
            if not isinstance(t, Arr):
                return None
            return Arr(self.dtype_arg(dkw), t.ndim) if dkw is not None else t
        nd, items = 0, [src]
        while items and all(isinstance(x, (ast.List, ast.Tuple)) for x in items):
            nd += 1
            items = [y for x in items for y in x.elts]
        dt = None
        for x in items:
            t = self.expr(x)
            if not isinstance(t, str) or t in (RANGE, NONE):
                return None
            dt = t if dt is None else promote(dt, t)
        if dkw is not None:
            dt = self.dtype_arg(dkw)
        return Arr(dt or "float64", nd) if items or dkw is not None else None

    def dtype_of(self, t):
        return t.dtype if isinstance(t, Arr) else t

    def axis_type(self, elem, a, axis):
        """A reduction along one axis of an n-d array is an (n-1)-d array."""
        if axis is None or not isinstance(a, Arr) or a.ndim == 1 or elem is None:
            return elem
        return Arr(elem, a.ndim - 1)

    def reduce_type(self, fn, a):
        if not isinstance(a, Arr):
            return None
        if fn in ("argmin", "argmax"):
            return "int64"
        if fn == "mean":
            return as_float(a.dtype)
        if fn in ("sum", "prod"):
            k = np.dtype(a.dtype).kind
            return "int64" if k in "bi" else ("uint64" if k == "u" else a.dtype)
        return a.dtype

    def alloc_type(self, fn, args, kw, e):
        call = e
        if fn in ("empty_like", "zeros_like", "ones_like", "full_like", "copy"):
            a = args[0]
            dt = kw.get("dtype")
            dkw = next((k.value for k in call.keywords if k.arg == "dtype"), None)
            if fn == "full_like" and len(call.args) > 2:
                dkw = call.args[2]
            elif fn != "full_like" and len(call.args) > 1:
                dkw = call.args[1]
            dt = self.dtype_arg(dkw) if dkw is not None else a.dtype
            return Arr(dt, a.ndim)
        if fn == "arange":
            dt = args[0]
            for a in args[1:]:
                dt = promote(dt, a)
            dkw = next((k.value for k in call.keywords if k.arg == "dtype"), None)
            return Arr(self.dtype_arg(dkw) if dkw is not None else ("int64" if dt in ("int64", "bool") else dt), 1)
        shape = args[0]
        if not (isinstance(shape, Tup) or isinstance(shape, str) and np.dtype(shape).kind in "iub"):
            raise unsupported(self.names.ctx, e, f"np.{fn} needs a shape of integers (its type here: {_show(shape)})")
        nd = len(shape.items) if isinstance(shape, Tup) else 1
        pos = 2 if fn == "full" else 1
        dkw = next((k.value for k in call.keywords if k.arg == "dtype"), None)
        if dkw is None and len(call.args) > pos:
            dkw = call.args[pos]
        if dkw is not None:
            dt = self.dtype_arg(dkw)
        elif fn == "full":
            dt = args[1] if args[1] != "bool" else "bool"
            dt = "float64" if dt == "float64" else dt
        else:
            dt = "float64"
        return Arr(dt, nd)


def axis_arg(e: ast.Call, at: int):
    """The axis argument of a reduction call (keyword or the positional at `at`), or None."""
    kw = next((k.value for k in e.keywords if k.arg == "axis"), None)
    return kw if kw is not None else (e.args[at] if len(e.args) > at else None)
