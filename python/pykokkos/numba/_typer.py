"""Types of a jitted function's names, from the types of one call's arguments.

Numba types every variable once for the whole function (the join of what is
assigned to it); we do the same, with Numba's rules between dtypes (_types.py).
The types decide what becomes a kernel (loops over arrays), what stays on the
host (scalar statements), how kernel locals are declared and what accumulators hold.
"""

from __future__ import annotations

import ast

import numpy as np

from ._errors import unsupported
from ._names import DTYPES, Names
from ._typer_np import NumpyTyping, axis_arg
from ._types import (  # noqa: F401  (the types other modules take from here)
    ALLOC,
    MATH_FLOAT,
    MATH_INT,
    NONE,
    PRED,
    RANGE,
    REDUCE,
    SCALAR_TYPES,
    STR,
    _UFUNC_OF,
    Arr,
    Const,
    Tup,
    _show,
    _view_type,
    as_float,
    dtype_value,
    join,
    promote,
    scalar_binop,
    scalar_of,
    type_of_value,
    ufunc_out,
)


class Typer(NumpyTyping):
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
            raise unsupported(
                self.names.ctx,
                self.first_store(body, bad[0]),
                f"'{bad[0]}' holds values of different kinds (an array and a number, or arrays of different ranks); Numba rejects this too",
            )
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
                raise unsupported(
                    self.names.ctx,
                    target,
                    f"'{target.id}' holds values of different types ({_show(self.env.get(target.id))} and {_show(ty)})",
                )
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
                raise unsupported(
                    self.names.ctx,
                    s,
                    f"returns values of different types ({_show(self.returns)} and {_show(ty)}; an optional value is not supported)",
                )
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
        raise unsupported(self.names.ctx, node, "a loop must run over range(...), prange(...), an array, enumerate(...) or zip(...)")

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
                bounds = [
                    b.value
                    if isinstance(b, ast.Constant)
                    else (
                        -b.operand.value
                        if isinstance(b, ast.UnaryOp) and isinstance(b.op, ast.USub) and isinstance(b.operand, ast.Constant)
                        else "?"
                    )
                    if b is not None
                    else None
                    for b in (e.slice.lower, e.slice.upper, e.slice.step)
                ]
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
            mask = self.expr(idx[0]) if len(idx) == 1 else None
            if isinstance(mask, Arr) and mask.dtype == "bool" and mask.ndim == 1 == base.ndim:
                return Arr(base.dtype, 1)  # a[m]: the elements where the mask is true
            if any(isinstance(self.expr(i), Arr) for i in idx):
                raise unsupported(
                    self.names.ctx, e, "indexing with arrays (fancy indexing) is not supported (a boolean mask of a 1-d array is)"
                )
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
                return self.axis_type(self.reduce_type(f.attr, a), a, axis_arg(e, 0))
            if f.attr == "copy":
                return a
            if f.attr == "reshape" and args:
                return self.reshaped(a, args[0] if len(args) == 1 else Tup(tuple(args)), e)
            if f.attr == "astype":
                return Arr(self.dtype_arg(e.args[0]), a.ndim)
            return None
        name = n.callee(f)
        if name is None:
            return None
        kind, fn = name
        if kind == "helper":
            return self.helper_return(fn, args, e)
        if kind == "stencil":
            return self.stencil_type(fn, args, kw, e)
        if kind == "vectorize":
            return self.vectorize_type(fn, args, e)
        if kind == "builtin":
            if fn in ("range", "prange"):
                return RANGE
            if fn == "len":
                return "int64"
            if fn in ("abs",):
                return (
                    args[0]
                    if not (isinstance(args[0], str) and args[0].startswith("complex"))
                    else np.dtype(args[0]).type(0).real.dtype.name
                )
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

    def stencil_type(self, st, args, kw, e):
        """A stencil's result: out= when given, else a new array of the kernel's
        value type, shaped as the first argument."""
        if "out" in kw:
            return kw["out"]
        elem, _, ndim = st.functions(tuple(a.ndim if isinstance(a, Arr) else None for a in args), self.names.ctx, e)
        dt = self.helper_return(elem, list(args) + ["int64"] * ndim, e)
        return Arr(dt, ndim) if isinstance(dt, str) else None

    def vectorize_type(self, vec, args, e):
        """A @vectorize function's result: its element type, over the arguments' broadcast rank."""
        dts = [a.dtype if isinstance(a, Arr) else a for a in args]
        if any(not isinstance(d, str) for d in dts):
            return None
        try:
            elem_args, fixed = vec.loop(dts)
        except TypeError as err:
            raise unsupported(self.names.ctx, e, str(err)) from None
        dt = fixed or self.helper_return(vec.scalar, list(elem_args), e)
        nd = max((a.ndim for a in args if isinstance(a, Arr)), default=0)
        return Arr(dt, nd) if nd and isinstance(dt, str) else dt
