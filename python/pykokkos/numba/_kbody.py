"""Numba statements as PyKokkos kernel-language statements.

The kernel language already speaks most of what Numba kernels write (math,
`np.` math, ranges, while, break); what differs is rewritten here: array
metadata (`a.shape[0]` is `a.extent(0)`), iteration over arrays, enumerate and
zip, tuple assignment, NumPy's spellings of math functions and constants, and
calls to other jitted functions (which become @pk.function helpers).
"""

from __future__ import annotations

import ast
import math

import numpy as np

from . import _kelem
from ._errors import unsupported
from ._kloops import KernelLoops, _extent, lower_bound, unravel
from ._typer import Arr, Const
from ._types import MATH_FLOAT, NP_SCALARS, PK_DTYPE, pk_type  # noqa: F401  (the kernel emitters import them from here)

NP_RENAME = {
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arctan2": "atan2",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "power": "pow",
    "absolute": "abs",
    "fabs": "fabs",
    "minimum": "minimum",
    "maximum": "maximum",
    "fmin": "fmin",
    "fmax": "fmax",
}
CONSTANTS = {"pi": math.pi, "e": math.e}
# What the kernel language's math takes (src/lower/math.rs) of Python's and
# NumPy's names: the float functions the typer knows, under the kernel's names
# (`gamma` is `tgamma` there; `square` and `reciprocal` are rewritten before),
# and the predicates, rounding and fmin/fmax. A subset of math.rs on purpose:
# only names whose Python or NumPy meaning is the kernel's (NumPy's
# `remainder` is a floor modulo, the kernel's is C's).
KERNEL_MATH = {NP_RENAME.get(n, n) for n in MATH_FLOAT - {"gamma", "reciprocal", "square"}} | {
    "tgamma",
    "fmin",
    "fmax",
    "isnan",
    "isinf",
    "isfinite",
    "floor",
    "ceil",
    "trunc",
    "round",
}
# NumPy calls a kernel takes besides math: abs, complex parts, min/max, rounding, and casts.
NP_KERNEL = {"abs", "absolute", "conj", "conjugate", "real", "imag", "minimum", "maximum", "rint", "around", "float", "int"} | NP_SCALARS


def zero_of(dt: str) -> ast.expr:
    if dt == "bool":
        return ast.Constant(False)
    if dt.startswith("complex"):
        return ast.Constant(0j)
    if dt.startswith("float"):
        return ast.Constant(0.0)
    return ast.Constant(0)


class KernelBody(KernelLoops, ast.NodeTransformer):
    """Rewrites one kernel's statements; `fresh` makes names no user name clashes with."""

    def __init__(self, tr, env, fresh, parallel_index=None, index_lb=None):
        self.tr = tr  # the translation: names, helpers, errors
        self.env = env
        self.fresh = fresh
        # The prange loop's index when this is its body (updates of memory every
        # iteration shares are atomic there).
        self.parallel_index = parallel_index
        # Lower bounds of the loop indices in scope (see _kloops.lower_bound).
        self.bounds: dict = {parallel_index: index_lb} if parallel_index is not None and index_lb is not None else {}
        # Statements a reduction inside the statement being visited needs first.
        self.pending: list | None = None

    def ty(self, e):
        return self.tr.type_of(e, self.env)

    def err(self, node, msg):
        return unsupported(self.tr.ctx, node, msg)

    # -- expressions -------------------------------------------------------
    def visit_BinOp(self, e):
        """Scalar arithmetic in Numba's types: operands cast to the result's
        type (int8 * int8 computes in int64, int / int in float64)."""
        ty = self.ty(e)
        node = self.generic_visit(e)
        if not isinstance(ty, str) or ty not in PK_DTYPE or ty == "bool":
            return node
        for side, orig in (("left", e.left), ("right", e.right)):
            ot = self.ty(orig)
            if isinstance(ot, str) and ot in PK_DTYPE and ot != ty and not isinstance(orig, ast.Constant):
                setattr(node, side, ast.Call(pk_type(ty), [getattr(node, side)], []))
        return node

    def visit_Attribute(self, e):
        t = self.ty(e.value)
        if isinstance(t, Arr):
            if e.attr == "ndim":
                return ast.copy_location(ast.Constant(t.ndim), e)
            if e.attr == "size":
                v = self.visit(e.value)
                prod = None
                for d in range(t.ndim):
                    ext = _extent(v, d)
                    prod = ext if prod is None else ast.BinOp(prod, ast.Mult(), ext)
                return ast.copy_location(prod, e)
            if e.attr == "shape":
                raise self.err(e, "use a.shape[k] or unpack a.shape inside a kernel")
        m = self.tr.names.module_of(e.value)
        if m == "np" and e.attr in CONSTANTS:
            return ast.copy_location(ast.Constant(CONSTANTS[e.attr]), e)
        if m in ("np", "math") and e.attr in ("inf", "nan"):
            return ast.copy_location(ast.Attribute(ast.Name("pk", ast.Load()), e.attr, ast.Load()), e)
        return self.generic_visit(e)

    def visit_Subscript(self, e):
        # a.flat[k]: the element at C-order position k
        if isinstance(e.value, ast.Attribute) and e.value.attr == "flat" and isinstance(self.ty(e.value.value), Arr):
            base = self.visit(e.value.value)
            idx = unravel(base, self.visit(e.slice), self.ty(e.value.value).ndim)
            return ast.copy_location(ast.Subscript(base, idx, e.ctx), e)
        # a.shape[k]
        if isinstance(e.value, ast.Attribute) and e.value.attr == "shape" and isinstance(self.ty(e.value.value), Arr):
            return ast.copy_location(_extent(self.visit(e.value.value), e.slice), e)
        t = self.ty(e.value)
        if isinstance(t, Arr):
            idx = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
            if any(isinstance(i, ast.Slice) for i in idx) and not all(
                isinstance(i, ast.Slice) and i.lower is None and i.upper is None and i.step is None for i in idx if isinstance(i, ast.Slice)
            ):
                raise self.err(e, "slices with bounds inside a kernel are not supported; index elements instead")
            if any(isinstance(self.ty(i), Arr) for i in idx if not isinstance(i, ast.Slice)):
                raise self.err(e, "indexing with an array (a mask or indices) inside a kernel is not supported")
            if len(idx) < t.ndim:
                # a[i] of a 2-D array is its row: the kernel language's subview a[i, :]
                idx = [*idx, *[ast.Slice() for _ in range(t.ndim - len(idx))]]
            e = ast.copy_location(ast.Subscript(e.value, ast.Tuple(idx, ast.Load()) if len(idx) > 1 else idx[0], e.ctx), e)
            e = self.generic_visit(e)
            return self._wrapped(e)
        return self.generic_visit(e)

    def _wrapped(self, e):
        """Negative indices count from the end, as in Numba: an index that may be
        negative becomes `i + extent if i < 0 else i` (a constant one, extent - k)."""
        idx = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
        out = []
        for d, i in enumerate(idx):
            if isinstance(i, ast.Slice):
                out.append(i)
                continue
            lb = lower_bound(i, self.bounds)
            if lb is not None and lb >= 0:
                out.append(i)
            elif isinstance(i, ast.Constant) and isinstance(i.value, int):
                out.append(ast.BinOp(_extent(e.value, d), ast.Add(), i))
            elif self.ty(i) in PK_DTYPE and np.dtype(self.ty(i)).kind == "u":
                out.append(i)
            else:
                wrapped = ast.BinOp(i, ast.Add(), _extent(e.value, d))
                test = ast.Compare(i, [ast.Lt()], [ast.Constant(0)])
                out.append(ast.IfExp(test, wrapped, i))
        e.slice = ast.Tuple(out, ast.Load()) if len(out) > 1 else out[0]
        return ast.fix_missing_locations(e)

    def _printf(self, e):
        """print(...) inside a kernel: pk.printf with one conversion per argument
        (text as it is, integers %lld, floats %g), separated by spaces as print does."""
        fmt, args = [], []
        for a in e.args:
            ty = self.ty(a)
            if isinstance(a, ast.Constant) and isinstance(a.value, str):
                fmt.append(a.value.replace("%", "%%"))
            elif isinstance(ty, str) and ty in PK_DTYPE and np.dtype(ty).kind in "biu":
                fmt.append("%lld")
                args.append(ast.Call(pk_type("int64"), [a], []))
            elif isinstance(ty, str) and ty in PK_DTYPE and np.dtype(ty).kind == "f":
                fmt.append("%g")
                args.append(ast.Call(pk_type("float64"), [a], []))
            else:
                raise self.err(a, "print() inside a kernel takes text, integers and floats")
        if e.keywords:
            raise self.err(e, "print() inside a kernel takes no keyword arguments")
        text = " ".join(fmt) + "\n"
        return ast.Call(ast.Attribute(ast.Name("pk", ast.Load()), "printf", ast.Load()), [ast.Constant(text), *args], [])

    def _reduction(self, e, kind):
        """A whole-array reduction inside a kernel: its loop goes before the statement."""
        x, fn = None, None
        if (
            kind is None
            and isinstance(e.func, ast.Attribute)
            and not e.args
            and not e.keywords
            and e.func.attr in _kelem._REDUCERS
            and isinstance(self.ty(e.func.value), Arr)
        ):
            x, fn = e.func.value, e.func.attr
        elif (
            kind is not None
            and kind[0] == "np"
            and kind[1] in _kelem._REDUCERS
            and len(e.args) == 1
            and not e.keywords
            and isinstance(self.ty(e.args[0]), Arr)
        ):
            x, fn = e.args[0], kind[1]
        if x is None:
            return None
        if self.pending is None:
            raise self.err(e, f"{fn}() of an array inside a kernel is supported in assignments, returns and expression statements")
        pre, value = _kelem.reduce_expr(self, fn, x, e)
        self.pending.extend(pre)
        return ast.copy_location(value, e)

    def _hoisting(self, s, visit):
        """Visits a simple statement; reductions it holds run just before it."""
        outer, self.pending = self.pending, []
        try:
            r = visit(s)
            pre = self.pending
        finally:
            self.pending = outer
        if not pre:
            return r
        return pre + (r if isinstance(r, list) else [r])

    def visit_Expr(self, s):
        return self._hoisting(s, self.generic_visit)

    def visit_AnnAssign(self, s):
        return self._hoisting(s, self.generic_visit)

    def visit_Name(self, e):
        if e.id in self.env or not isinstance(e.ctx, ast.Load):
            return e
        v = self.tr.names.constant(e.id)
        if v is not None and not hasattr(v, "shape") and not isinstance(v, tuple):
            return ast.copy_location(ast.Constant(v.item() if hasattr(v, "item") else v), e)
        return e

    def visit_Call(self, e):
        kind = self.tr.names.callee(e.func)
        if (
            kind is None
            and isinstance(e.func, ast.Attribute)
            and (e.func.attr == "extent" or isinstance(e.func.value, ast.Name) and e.func.value.id == "pk")
        ):
            return e  # written by an earlier rewrite
        reduced = self._reduction(e, kind)
        if reduced is not None:
            return reduced
        if kind is None:
            if isinstance(e.func, ast.Attribute) and isinstance(self.ty(e.func.value), Arr):
                raise self.err(e, f"the array method .{e.func.attr}() is not supported inside a kernel")
            raise self.err(
                e, f"cannot call {ast.unparse(e.func)} inside a kernel (only math, NumPy math, builtins and other @njit functions)"
            )
        k, what = kind
        e = self.generic_visit(e)
        if k == "vectorize":
            return ast.copy_location(vectorized_call(self.tr, what, e.args, [self.ty(a) for a in e.args], e, lambda a: a), e)
        if k == "helper":
            tys = [self.ty(a) for a in e.args]
            name = self.tr.device_helper(what, tys, e)
            # A dtype or function argument is part of the helper's translation, not a parameter.
            args = [a for a, ty in zip(e.args, tys) if not isinstance(ty, Const)]
            return ast.copy_location(ast.Call(ast.Name(name, ast.Load()), args, []), e)
        if k == "builtin":
            if what == "len":
                return ast.copy_location(_extent(e.args[0], 0), e)
            if what == "prange":
                return ast.copy_location(ast.Call(ast.Name("range", ast.Load()), e.args, []), e)
            if what == "print":
                return ast.copy_location(self._printf(e), e)
            if what == "round" and len(e.args) == 1:
                return ast.copy_location(
                    ast.Call(
                        ast.Name("int", ast.Load()),
                        [ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "rint", ast.Load()), e.args, [])],
                        [],
                    ),
                    e,
                )
            if what == "complex":
                return e
            return e
        if k == "np":
            if what == "square":
                x = e.args[0]
                return ast.copy_location(ast.BinOp(x, ast.Mult(), x), e)
            if what == "sign":
                x = e.args[0]
                return ast.copy_location(ast.parse(f"(({ast.unparse(x)}) > 0) - (({ast.unparse(x)}) < 0)", mode="eval").body, e)
            name = NP_RENAME.get(what, what)
            if name not in KERNEL_MATH and name not in PK_DTYPE and name not in NP_KERNEL:
                raise self.err(
                    e,
                    f"np.{what} is not supported inside a kernel (math functions, abs, "
                    "minimum/maximum, real/imag, conj, round and dtype casts are)",
                )
            return ast.copy_location(ast.Call(ast.Attribute(ast.Name("np", ast.Load()), name, ast.Load()), e.args, e.keywords), e)
        if k == "math" and what not in KERNEL_MATH and what != "gamma":
            raise self.err(e, f"math.{what} is not supported inside a kernel")
        if k == "math" and what == "gamma":
            return ast.copy_location(ast.Call(ast.Attribute(ast.Name("math", ast.Load()), "tgamma", ast.Load()), e.args, []), e)
        return e

    # -- statements --------------------------------------------------------
    def visit_Assign(self, s):
        return self._hoisting(s, self._assign)

    def _assign(self, s):
        if len(s.targets) == 1 and isinstance(s.targets[0], ast.Subscript) and isinstance(self.ty(s.targets[0]), Arr):
            return _kelem.expand(self, s, s.targets[0], s.value, None)
        if len(s.targets) == 1 and isinstance(s.targets[0], (ast.Tuple, ast.List)):
            return self._unpack(s, s.targets[0], s.value)
        if len(s.targets) > 1:
            out = []
            for t in s.targets:
                out.append(ast.copy_location(ast.Assign([t], s.value), s))
            return [self.visit(x) for x in out]
        return self.generic_visit(s)

    def _unpack(self, s, target, value):
        names = target.elts
        if isinstance(value, ast.Attribute) and value.attr == "shape":
            vals = [_extent(value.value, d) for d in range(len(names))]
        elif isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(names):
            vals = list(value.elts)
            # a, b = b, a: read every value before any name changes
            temps = []
            for v in vals:
                tmp = self.fresh("t")
                self.env[tmp] = self.ty(v)
                temps.append(ast.copy_location(ast.Assign([ast.Name(tmp, ast.Store())], v), s))
            out = temps + [ast.copy_location(ast.Assign([n], ast.Name(t.targets[0].id, ast.Load())), s) for n, t in zip(names, temps)]
            return [self.visit(ast.fix_missing_locations(x)) for x in out]
        else:
            raise self.err(s, "inside a kernel, unpack only a.shape or a tuple written out (a, b = x, y)")
        out = [ast.copy_location(ast.Assign([n], v), s) for n, v in zip(names, vals)]
        return [self.visit(ast.fix_missing_locations(x)) for x in out]

    def visit_Assert(self, s):
        raise self.err(s, "assert inside a loop is not supported by pykokkos.numba (assert before the loop)")

    def visit_AugAssign(self, s):
        return self._hoisting(s, self._augassign)

    def _augassign(self, s):
        if isinstance(self.ty(s.target), Arr):
            return _kelem.expand(self, s, s.target, s.value, s.op)
        return self.generic_visit(s)

    def visit_Return(self, s):
        return self._hoisting(s, self.generic_visit)

    def _stmts(self, body):
        out = []
        for x in body:
            r = self.visit(x)
            out.extend(r if isinstance(r, list) else [r])
        return out


def assigned_names(body) -> dict:
    """Names stored in these statements, with the first node storing each."""
    out: dict = {}
    for node in ast.walk(ast.Module(body=list(body), type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.setdefault(node.id, node)
    return out


def read_names(body) -> set:
    return {n.id for node in body for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def loop_vars(body) -> set:
    """Names only ever bound by `for` loops of the kernel language's range form."""
    out = set()
    for node in ast.walk(ast.Module(body=list(body), type_ignores=[])):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out


def vectorized_call(t, vec, args, tys, node, element) -> ast.expr:
    """A @vectorize function's element in a kernel: its @pk.function applied to
    element(a) of each argument, cast to the result a signature fixes."""
    dts = [ty.dtype if isinstance(ty, Arr) else ty for ty in tys]
    try:
        elem_args, fixed = vec.loop(dts)
    except TypeError as err:
        raise unsupported(t.ctx, node, str(err)) from None
    fname = t.device_helper(vec.scalar, list(elem_args), node)
    out: ast.expr = ast.Call(ast.Name(fname, ast.Load()), [element(a) for a in args], [])
    if fixed is not None and fixed != t.helper_return(vec.scalar, list(elem_args), node):
        out = ast.Call(pk_type(fixed), [out], [])
    return out
