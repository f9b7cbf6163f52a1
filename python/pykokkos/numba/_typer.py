"""Types of a jitted function's names, from the types of one call's arguments.

Numba types every variable once for the whole function (the join of what is
assigned to it); we do the same, with NumPy's promotion between dtypes. The
types decide what becomes a kernel (loops over arrays), what stays on the host
(scalar statements), how kernel locals are declared and what accumulators hold.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from ._errors import unsupported
from ._names import DTYPES, Names


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
    "sqrt", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "fabs", "cbrt", "erf", "erfc", "gamma",
    "lgamma", "pow", "atan2", "hypot", "fmod", "copysign", "degrees", "radians", "arcsin", "arccos",
    "arctan", "arcsinh", "arccosh", "arctanh", "arctan2", "power", "square", "reciprocal",
}
MATH_INT = {"floor", "ceil", "trunc"}
PRED = {"isnan", "isinf", "isfinite"}
ALLOC = {"empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like", "copy", "arange"}
REDUCE = {"sum", "prod", "min", "max", "amin", "amax", "mean", "argmin", "argmax", "dot", "vdot"}
SCALAR_TYPES = {"float64", "float32", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16",
                "uint8", "bool_", "complex128", "complex64", "float_", "double", "intp"}


def promote(a: str, b: str) -> str:
    return np.result_type(np.dtype(a), np.dtype(b)).name


_UFUNC_OF = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "true_divide",
             ast.FloorDiv: "floor_divide", ast.Mod: "remainder", ast.Pow: "power", ast.BitAnd: "bitwise_and",
             ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor", ast.LShift: "left_shift",
             ast.RShift: "right_shift"}


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
    from pykokkos._types import numpy_dtype
    from pykokkos._views import View
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


class Typer:
    """Walks a function body until the types of its names stop changing."""

    def __init__(self, names: Names, params: dict, helper_return):
        self.names = names
        self.env = dict(params)
        self.returns = None
        self.helper_return = helper_return

    def run(self, body: list[ast.stmt]):
        for _ in range(4):
            before = dict(self.env)
            self.stmts(body)
            if before == self.env:
                break
        bad = [k for k, v in self.env.items() if v == "conflict"]
        if bad:
            raise unsupported(self.names.ctx, self.first_store(body, bad[0]),
                              f"'{bad[0]}' holds values of different kinds (an array and a number, or arrays "
                              "of different ranks); Numba rejects this too")
        return self.env

    def first_store(self, body, name):
        for node in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(node, ast.Name) and node.id == name:
                return node
        return body[0]

    def bind(self, target, ty):
        if isinstance(target, ast.Name):
            t = join(self.env.get(target.id), ty)
            if t == "conflict":
                raise unsupported(self.names.ctx, target, f"'{target.id}' holds values of different types "
                                  f"({_show(self.env.get(target.id))} and {_show(ty)})")
            self.env[target.id] = t
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = ty.items if isinstance(ty, Tup) else None
            if items is None and isinstance(ty, Arr):
                items = (Arr(ty.dtype, ty.ndim - 1) if ty.ndim > 1 else ty.dtype,) * len(target.elts)
            if items is None or len(items) != len(target.elts):
                raise unsupported(self.names.ctx, target, "cannot unpack this value into these names")
            for t, i in zip(target.elts, items):
                self.bind(t, i)

    def stmts(self, body):
        for s in body:
            self.stmt(s)

    def stmt(self, s):
        if isinstance(s, ast.Assign):
            ty = self.expr(s.value)
            for t in s.targets:
                self.bind(t, ty)
        elif isinstance(s, ast.AnnAssign) and s.value is not None:
            self.bind(s.target, self.expr(s.value))
        elif isinstance(s, ast.AugAssign):
            if isinstance(s.target, ast.Name):
                self.bind(s.target, self.expr(ast.BinOp(s.target, s.op, s.value)))
            else:
                self.expr(s.value)
        elif isinstance(s, ast.For):
            it = self.expr(s.iter)
            self.bind(s.target, self.element(it, s.iter))
            self.stmts(s.body)
            self.stmts(s.orelse)
        elif isinstance(s, ast.While):
            self.expr(s.test)
            self.stmts(s.body)
        elif isinstance(s, ast.If):
            self.expr(s.test)
            self.stmts(s.body)
            self.stmts(s.orelse)
        elif isinstance(s, ast.Return):
            ty = self.expr(s.value) if s.value is not None else NONE
            t = ty if self.returns is None else join(self.returns, ty)
            if t == "conflict":
                raise unsupported(self.names.ctx, s, f"returns values of different types ({_show(self.returns)} "
                                  f"and {_show(ty)}; an optional value is not supported)")
            self.returns = t
        elif isinstance(s, ast.Expr):
            self.expr(s.value)

    def element(self, it, node):
        """The loop variable's type when iterating over `it`."""
        if it == RANGE:
            return "int64"
        if isinstance(it, Arr):
            return it.dtype if it.ndim == 1 else Arr(it.dtype, it.ndim - 1)
        if isinstance(it, Tup) and it.items:
            t = it.items[0]
            for i in it.items[1:]:
                t = join(t, i)
            return t
        raise unsupported(self.names.ctx, node, "a loop must run over range(...), prange(...), an array, "
                          "enumerate(...) or zip(...)")

    def expr(self, e):  # noqa: C901  (one case per node kind)
        n = self.names
        if isinstance(e, ast.Constant):
            if e.value is None:
                return NONE
            ty = scalar_of(e.value)
            if isinstance(e.value, str):
                return STR  # the text of a print (anywhere else an error where it is used)
            if ty is None:
                raise unsupported(n.ctx, e, f"constants of type {type(e.value).__name__} are not supported")
            return ty
        if isinstance(e, ast.Name):
            if e.id in self.env:
                return self.env[e.id]
            g = n.constant(e.id)
            if g is not None:
                return type_of_value(g)
            v = n.lookup(e.id)
            if n.is_helper(v) or dtype_value(v) is not None:  # passed on as a value
                return Const(v)
            return None
        if isinstance(e, ast.BinOp):
            return self.binop(e.op, self.expr(e.left), self.expr(e.right))
        if isinstance(e, ast.UnaryOp):
            t = self.expr(e.operand)
            if isinstance(e.op, ast.Not):
                return "bool"
            if isinstance(e.op, ast.USub) and t == "bool":
                return "int64"
            return t
        if isinstance(e, ast.Compare):
            tys = [self.expr(x) for x in [e.left, *e.comparators]]
            arrs = [t for t in tys if isinstance(t, Arr)]
            return Arr("bool", max(a.ndim for a in arrs)) if arrs else "bool"
        if isinstance(e, ast.BoolOp):
            t = None
            for v in e.values:
                t = join(t, self.expr(v))
            return t
        if isinstance(e, ast.IfExp):
            self.expr(e.test)
            return join(self.expr(e.body), self.expr(e.orelse))
        if isinstance(e, ast.Tuple):
            return Tup(tuple(self.expr(x) for x in e.elts))
        if isinstance(e, ast.Subscript):
            return self.subscript(e)
        if isinstance(e, ast.Attribute):
            return self.attribute(e)
        if isinstance(e, ast.Call):
            return self.call(e)
        return None

    def binop(self, op, a, b):
        if a is None or b is None:
            return None
        if isinstance(a, Arr) or isinstance(b, Arr):
            da = a.dtype if isinstance(a, Arr) else a
            db = b.dtype if isinstance(b, Arr) else b
            nd = max(x.ndim for x in (a, b) if isinstance(x, Arr))
            out = ufunc_out(_UFUNC_OF.get(type(op), ""), [da, db])
            return Arr(out, nd) if out is not None else None
        if not isinstance(a, str) or not isinstance(b, str) or a in (RANGE, NONE, STR) or b in (RANGE, NONE, STR):
            return None
        return scalar_binop(op, a, b)

    def subscript(self, e):
        base = self.expr(e.value)
        idx = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
        if isinstance(base, Tup):
            if isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, int):
                return base.items[e.slice.value]
            if isinstance(e.slice, ast.Slice):
                bounds = [b.value if isinstance(b, ast.Constant) else (-b.operand.value if isinstance(
                    b, ast.UnaryOp) and isinstance(b.op, ast.USub) and isinstance(b.operand, ast.Constant) else
                    "?") if b is not None else None for b in (e.slice.lower, e.slice.upper, e.slice.step)]
                if "?" in bounds:
                    raise unsupported(self.names.ctx, e, "a slice of a tuple needs constant bounds")
                return Tup(base.items[slice(*bounds)])
            t = None
            for i in base.items:
                t = join(t, i)
            return t
        if isinstance(base, Arr):
            if len(idx) == 1 and isinstance(self.expr(idx[0]), Tup):  # a[idx] with idx a tuple of indices
                idx = [ast.Constant(0)] * len(self.expr(idx[0]).items)
            for i in idx:
                self.expr(i)
            if len(idx) > base.ndim:
                raise unsupported(self.names.ctx, e, f"{len(idx)} indices into a {base.ndim}-d array")
            kept = base.ndim - len(idx) + sum(isinstance(i, ast.Slice) for i in idx)
            if any(isinstance(self.expr(i), Arr) for i in idx):
                raise unsupported(self.names.ctx, e, "indexing with arrays (fancy indexing) is not supported")
            return base.dtype if kept == 0 else Arr(base.dtype, kept)
        return None

    def attribute(self, e):
        if self.names.module_of(e.value) in ("np", "numba") and e.attr in DTYPES:
            return Const(getattr(np, e.attr, None) or np.dtype(DTYPES[e.attr]).type)
        base = self.expr(e.value)
        if isinstance(base, Arr):
            if e.attr == "shape":
                return Tup(("int64",) * base.ndim)
            if e.attr in ("size", "ndim"):
                return "int64"
            if e.attr == "T":
                return base
            if e.attr in ("real", "imag"):
                return Arr(np.dtype(base.dtype).type(0).real.dtype.name, base.ndim)
            if e.attr == "flat":
                return Arr(base.dtype, 1)
        if isinstance(base, str) and e.attr in ("real", "imag"):
            return np.dtype(base).type(0).real.dtype.name
        return None

    def call(self, e):  # noqa: C901
        n = self.names
        args = [self.expr(a) for a in e.args]
        kw = {k.arg: self.expr(k.value) for k in e.keywords if k.arg != "dtype"}
        f = e.func
        if isinstance(f, ast.Attribute) and isinstance(self.expr(f.value), Arr):
            a = self.expr(f.value)
            if f.attr in ("sum", "prod", "min", "max", "mean", "argmin", "argmax"):
                return self.reduce_type(f.attr, a)
            if f.attr == "copy":
                return a
            if f.attr == "reshape" and args:
                return self.reshaped(a, args[0] if len(args) == 1 else Tup(tuple(args)), e)
            if f.attr == "astype":
                return Arr(n.dtype_name(e.args[0]), a.ndim)
            return None
        name = n.callee(f)
        if name is None:
            return None
        kind, fn = name
        if kind == "helper":
            return self.helper_return(fn, args, e)
        if kind == "builtin":
            if fn in ("range", "prange"):
                return RANGE
            if fn == "len":
                return "int64"
            if fn in ("abs",):
                return args[0] if not (isinstance(args[0], str) and args[0].startswith("complex")) else \
                    np.dtype(args[0]).type(0).real.dtype.name
            if fn in ("min", "max"):
                t = None
                for a in args:
                    t = join(t, a)
                return t
            if fn == "int":
                return "int64"
            if fn == "float":
                return "float64"
            if fn == "bool":
                return "bool"
            if fn == "complex":
                return "complex128"
            if fn == "round":
                return "int64" if len(args) == 1 else args[0]
            if fn == "enumerate":
                el = self.element(args[0], e)
                return Tup((Tup(("int64", el)),))
            if fn == "zip":
                return Tup((Tup(tuple(self.element(a, e) for a in args)),))
            return None
        if kind == "math":
            if fn in MATH_INT:
                return "int64"
            if fn in PRED:
                return "bool"
            return "float64"
        if kind == "np":
            return self.numpy_call(fn, args, kw, e)
        return None

    def numpy_call(self, fn, args, kw, e):
        n = self.names
        arr = next((a for a in args if isinstance(a, Arr)), None)
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
        if fn == "linspace" and len(e.args) >= 2:
            dkw = next((k.value for k in e.keywords if k.arg == "dtype"), None)
            return Arr(self.names.dtype_name(dkw) if dkw is not None else "float64", 1)
        if fn == "sort" and len(args) == 1 and isinstance(args[0], Arr):
            return args[0]
        if fn in REDUCE:
            if fn in ("dot", "vdot"):
                return promote(args[0].dtype, args[1].dtype)
            return self.reduce_type(fn, args[0])
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
        if out is None:
            return None
        nd = max((a.ndim for a in args if isinstance(a, Arr)), default=0)
        return Arr(out, nd) if nd else out

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
            return Arr(self.names.dtype_name(dkw), t.ndim) if dkw is not None else t
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
            dt = self.names.dtype_name(dkw)
        return Arr(dt or "float64", nd) if items or dkw is not None else None

    def dtype_of(self, t):
        return t.dtype if isinstance(t, Arr) else t

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
        n = self.names
        call = e
        if fn in ("empty_like", "zeros_like", "ones_like", "full_like", "copy"):
            a = args[0]
            dt = kw.get("dtype")
            dkw = next((k.value for k in call.keywords if k.arg == "dtype"), None)
            if fn == "full_like" and len(call.args) > 2:
                dkw = call.args[2]
            elif fn != "full_like" and len(call.args) > 1:
                dkw = call.args[1]
            dt = n.dtype_name(dkw) if dkw is not None else a.dtype
            return Arr(dt, a.ndim)
        if fn == "arange":
            dt = args[0]
            for a in args[1:]:
                dt = promote(dt, a)
            dkw = next((k.value for k in call.keywords if k.arg == "dtype"), None)
            return Arr(n.dtype_name(dkw) if dkw is not None else ("int64" if dt in ("int64", "bool") else dt), 1)
        shape = args[0]
        if not (isinstance(shape, Tup) or isinstance(shape, str) and np.dtype(shape).kind in "iub"):
            raise unsupported(self.names.ctx, e, f"np.{fn} needs a shape of integers (its type here: {_show(shape)})")
        nd = len(shape.items) if isinstance(shape, Tup) else 1
        pos = 2 if fn == "full" else 1
        dkw = next((k.value for k in call.keywords if k.arg == "dtype"), None)
        if dkw is None and len(call.args) > pos:
            dkw = call.args[pos]
        if dkw is not None:
            dt = n.dtype_name(dkw)
        elif fn == "full":
            dt = args[1] if args[1] != "bool" else "bool"
            dt = "float64" if dt == "float64" else dt
        else:
            dt = "float64"
        return Arr(dt, nd)
