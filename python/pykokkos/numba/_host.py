"""The host side of a translated function: its statements in order, with
kernels launched where the loops and array expressions were."""

from __future__ import annotations

import ast

import numpy as np

from . import _arrayexpr, _hostmake, _loops, _reduce, _serial, _serial_gpu
from ._arrayexpr import call, name
from ._errors import UnsupportedError, unsupported
from ._normalize import NUMPY
from ._typer import ALLOC, REDUCE, Arr, Const, Tup
from ._typer_np import axis_arg

ARRAY_METHODS_REDUCE = {"sum", "prod", "min", "max", "mean", "argmin", "argmax"}


def _has_loop(s) -> bool:
    return any(isinstance(x, (ast.For, ast.While)) for x in ast.walk(s))


class HostBody:
    def __init__(self, t):
        self.t = t

    def err(self, node, msg):
        return unsupported(self.t.ctx, node, msg)

    def is_prange(self, s) -> bool:
        return isinstance(s, ast.For) and isinstance(s.iter, ast.Call) and self.t.names.callee(s.iter.func) == ("builtin", "prange")

    def has_prange(self, s) -> bool:
        return any(self.is_prange(x) for x in ast.walk(s))

    def block(self, stmts) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        run: list[ast.stmt] = []

        def end_run():
            if run:
                out.extend(self.serial_or_host(list(run)))
                run.clear()

        for s in stmts:
            if self.is_prange(s):
                end_run()
                out.extend(_loops.prange(self.t, s))
            elif isinstance(s, (ast.For, ast.While, ast.If)) and self.has_prange(s):
                end_run()
                out.append(self.control(s))
            elif isinstance(s, (ast.For, ast.While)) or (isinstance(s, ast.If) and _has_loop(s)):
                run.append(s)
            else:
                end_run()
                out.extend(self.stmt(s))
        end_run()
        return out

    def serial_or_host(self, stmts) -> list[ast.stmt]:
        """Loops as one serial kernel; a loop whose whole-array statements no
        kernel can hold (bounded slices such as u[1:-1, 1:-1] = ..., an array
        rebound each step) runs on the host instead, each statement a kernel
        (the usual time-step loop around stencils and array updates)."""
        try:
            par = self.serial_on_gpu(stmts)
            ser = _serial.serial(self.t, stmts)
            return ser if par is None else [ast.If(call("rt.serial_on_gpu", []), par, ser)]
        except UnsupportedError:
            if not any(self.has_array_stmt(s) for s in stmts):
                raise
        out: list[ast.stmt] = []
        for s in stmts:
            try:
                out.extend(_serial.serial(self.t, [s]))
            except UnsupportedError:
                if not self.has_array_stmt(s):
                    raise
                out.append(self.control(s))
        return out

    def serial_on_gpu(self, stmts):
        """The parallel form of a serial loop over GPU data, or None (the loop runs as written)."""
        if len(stmts) != 1:
            return None
        try:
            return _serial_gpu.parallel(self.t, stmts[0])
        except UnsupportedError:
            return None

    def has_array_stmt(self, s) -> bool:
        t = self.t
        for n in ast.walk(s):
            if isinstance(n, ast.Assign):
                vt = t.type_of(n.value)  # an array, or arrays swapped (p, c = c, p)
                if isinstance(vt, Arr) or isinstance(vt, Tup) and any(isinstance(x, Arr) for x in vt.items):
                    return True
            if isinstance(n, ast.Call) and (t.names.callee(n.func) or ("",))[0] in ("stencil", "helper"):
                return True  # a helper no kernel can hold runs as host code, its own statements kernels
            if isinstance(n, ast.AugAssign) and isinstance(t.type_of(n.target), Arr):
                return True
        return False

    def control(self, s):
        """A host loop or branch around kernels: Python runs it."""
        pre: list[ast.stmt] = []
        if isinstance(s, ast.For):
            it = self.expr(s.iter, pre)
            if s.orelse:
                raise self.err(s, "for ... else is not supported")
            return _seq(pre, ast.For(s.target, it, self.block(s.body) or [ast.Pass()], []))
        if isinstance(s, ast.While):
            if pre or _needs_pre(self, s.test):
                raise self.err(s.test, "a while test around a prange loop must be a plain scalar condition")
            return ast.While(self.expr(s.test, pre), self.block(s.body) or [ast.Pass()], [])
        test = self.expr(s.test, pre)
        return _seq(pre, ast.If(test, self.block(s.body) or [ast.Pass()], self.block(s.orelse)))

    def stmt(self, s) -> list[ast.stmt]:
        t = self.t
        pre: list[ast.stmt] = []
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            tgt = s.targets[0]
            vt = t.type_of(s.value)
            if isinstance(tgt, ast.Name) and isinstance(vt, Arr) and _elementwise(self, s.value):
                return _arrayexpr.assign(t, None, s.value, new=tgt.id)
            if isinstance(tgt, ast.Subscript) and isinstance(t.type_of(tgt), Arr):
                value = s.value
                if not isinstance(vt, Arr) and _needs_pre(self, value):
                    value = self.expr(value, pre)
                return pre + _arrayexpr.assign(t, tgt, value)
        if isinstance(s, ast.AugAssign) and isinstance(t.type_of(s.target), Arr):
            return _arrayexpr.assign(t, s.target, s.value, op=s.op)
        if isinstance(
            s,
            (
                ast.Global,
                ast.Nonlocal,
                ast.Import,
                ast.ImportFrom,
                ast.ClassDef,
                ast.FunctionDef,
                ast.With,
                ast.Try,
                ast.Raise,
                ast.Delete,
                ast.AsyncFunctionDef,
            ),
        ):
            if isinstance(s, ast.Raise):
                return [s]
            raise self.err(s, f"'{type(s).__name__}' statements are not supported in jitted functions")
        new = _Rewrite(self, pre).visit(s)
        return pre + [new]

    def expr(self, e, pre):
        return _Rewrite(self, pre).visit(e)


def _axis_only(e, at: int) -> bool:
    """A reduction call whose only option is its axis (keyword or the positional at `at`)."""
    kws = [k.arg for k in e.keywords]
    return (kws == ["axis"] and len(e.args) == at) or (not kws and len(e.args) == at + 1)


def _seq(pre, node):
    return pre + [node] if pre else node


def _needs_pre(hb, e) -> bool:
    p: list = []
    _Rewrite(hb, p).visit(_arrayexpr._copy(e))
    return bool(p)


def _elementwise(hb, e) -> bool:
    """An array expression computed elementwise (not an allocation, a slice or a name)."""
    if isinstance(e, (ast.Name, ast.Subscript, ast.Attribute)):  # a.T, a.real: the host computes them
        return False
    if isinstance(e, ast.Call):
        kind = hb.t.names.callee(e.func)
        if kind is not None and kind[0] == "np" and kind[1] in ALLOC:
            return False
        if kind is not None and kind[0] == "helper":
            return False
        if isinstance(e.func, ast.Attribute) and e.func.attr == "copy":
            return False
    return True


class _Rewrite(ast.NodeTransformer):
    """Host expressions: reductions, allocations and helper calls become launches."""

    def __init__(self, hb, pre):
        self.hb, self.t, self.pre = hb, hb.t, pre

    def visit_Call(self, e):
        t = self.t
        f = e.func
        if isinstance(f, ast.Attribute) and isinstance(t.type_of(f.value), Arr):
            if f.attr in ARRAY_METHODS_REDUCE and not e.args and not e.keywords:
                return _reduce.reduce(t, f.attr, f.value, self.pre, e)
            if f.attr in ARRAY_METHODS_REDUCE and _axis_only(e, 0):
                return self._along_axis(f.attr, f.value, axis_arg(e, 0), e)
            if f.attr == "copy":
                return self._materialize(ast.BinOp(f.value, ast.Mult(), ast.Constant(1)), e, t.type_of(f.value))
            if f.attr == "astype" and len(e.args) == 1:  # a new array: a kernel casting each element
                return self._materialize(e, e, t.type_of(e))
            if f.attr == "reshape" and e.args and not e.keywords:
                shape = e.args[0] if len(e.args) == 1 else ast.Tuple(list(e.args), ast.Load())
                return call("rt.reshape", [self.visit(f.value), self.visit(shape)])
            if f.attr == "sort" and not e.args and not e.keywords:
                ty = t.type_of(f.value)
                tmp = t.fresh("a")
                t.env[tmp] = ty
                self.pre.append(ast.Assign([name(tmp, ast.Store())], call("rt.sorted_copy", [self.visit(f.value)])))
                self.pre.extend(_arrayexpr.assign(t, ast.Subscript(f.value, ast.Slice(), ast.Load()), name(tmp)))
                return ast.Constant(None)
            if f.attr == "fill" and len(e.args) == 1:
                self.pre.extend(_arrayexpr.assign(t, ast.Subscript(f.value, ast.Slice(), ast.Load()), e.args[0]))
                return ast.Constant(None)
            raise self.hb.err(e, f"the array method .{f.attr}() is not supported")
        kind = t.names.callee(f)
        if kind is None:
            raise self.hb.err(e, f"cannot call {ast.unparse(f)} from a jitted function")
        k, what = kind
        if k == "np" and what in REDUCE and what not in ("dot", "vdot") and e.args and _axis_only(e, 1):
            return self._along_axis(what, e.args[0], axis_arg(e, 1), e)
        if k == "np" and what in REDUCE:
            if e.keywords or (len(e.args) != 1 and what not in ("dot", "vdot")):
                raise self.hb.err(e, f"np.{what} with an axis or options is not supported; reduce the whole array")
            arg = tuple(e.args) if what in ("dot", "vdot") else e.args[0]
            return _reduce.reduce(t, what, arg, self.pre, e)
        if k == "np" and what in ALLOC:
            return self._alloc(what, e)
        if k == "np" and what in ("array", "asarray") and e.args:
            ty = t.type_of(e)
            if isinstance(e.args[0], (ast.List, ast.Tuple)):
                return call("rt.array", [self.visit(e.args[0]), ast.Constant(ty.dtype)])
            if what == "asarray" and ty == t.type_of(e.args[0]):
                return self.visit(e.args[0])
            return (
                self._materialize(ast.BinOp(e.args[0], ast.Mult(), ast.Constant(1)), e, ty)
                if ty.dtype != "bool"
                else self._materialize(e.args[0], e, ty)
            )
        if k == "np" and what == "reshape" and len(e.args) == 2:
            return call("rt.reshape", [self.visit(e.args[0]), self.visit(e.args[1])])
        if k == "np" and what == "cumsum" and len(e.args) == 1:
            return _hostmake.cumsum(self, e)
        if k == "np" and what == "linspace":
            ty = t.type_of(e)
            args = [self.visit(a) for a in e.args]
            num = args[2] if len(args) > 2 else next((self.visit(k.value) for k in e.keywords if k.arg == "num"), ast.Constant(50))
            return call("rt.linspace", [args[0], args[1], num, ast.Constant(ty.dtype)])
        if k == "np" and what == "histogram":
            given = dict(zip(("a", "bins", "range"), e.args)) | {kw.arg: kw.value for kw in e.keywords}
            return call(
                "rt.histogram",
                [
                    call("rt.flat", [self.visit(given["a"])]),
                    self.visit(given.get("bins", ast.Constant(10))),
                    self.visit(given.get("range", ast.Constant(None))),
                ],
            )
        if k == "np" and what == "sort" and len(e.args) == 1:
            return call("rt.sorted_copy", [self.visit(e.args[0])])
        if k == "stencil":
            return _hostmake.apply_stencil(self, what, e)
        if k == "vectorize" and not isinstance(t.type_of(e), Arr):  # on numbers: the function, called
            tys = [t.type_of(a) for a in e.args]
            elem_args, fixed = what.loop(tys)
            value = ast.Call(name(t.host_helper(what.scalar, list(elem_args), e)), [self.visit(a) for a in e.args], [])
            return call(f"np.{fixed}", [value]) if fixed else value
        if k == "helper":
            tys = [t.type_of(a) for a in e.args]
            fname = t.host_helper(what, tys, e)
            # A dtype or function argument is part of the helper's translation, not a parameter.
            args = [self.visit(a) for a, ty in zip(e.args, tys) if not isinstance(ty, Const)]
            return ast.copy_location(ast.Call(name(fname), args, []), e)
        if isinstance(t.type_of(e), Arr):
            return self._materialize(e, e, t.type_of(e))
        return self.generic_visit(e)

    def visit_BinOp(self, e):
        """Scalar arithmetic as Numba types it, not as NumPy scalars would:
        integers as Python ints (Numba widens them to int64), float64 as
        Python floats (dividing by zero raises), float32 as np.float32."""
        ty = self.t.type_of(e)
        if isinstance(ty, Arr):
            return self._materialize(e, e, ty)
        node = self.generic_visit(e)
        if not isinstance(ty, str) or ty in ("range", "none") or np.dtype(ty).kind not in "iuf":
            return node
        kind = np.dtype(ty).kind
        cast = "int" if kind in "iu" else ("float" if ty == "float64" else f"np.{ty}")
        for side, orig in (("left", e.left), ("right", e.right)):
            ot = self.t.type_of(orig)
            if isinstance(orig, ast.Constant) and (kind != "f" or ty == "float64"):
                continue
            if isinstance(ot, str) and (ot != ty or kind in "iu"):
                setattr(node, side, ast.Call(ast.parse(cast, mode="eval").body, [getattr(node, side)], []))
        return node

    def _alloc(self, what, e):
        t = self.t
        ty = t.type_of(e)
        if what in ("empty_like", "zeros_like", "ones_like", "full_like", "copy"):
            src = e.args[0]
            shape = ast.Attribute(self.visit(src), "shape", ast.Load())
            if what == "copy":
                return self._materialize(ast.BinOp(src, ast.Mult(), ast.Constant(1)), e, ty)
        elif what == "arange":
            return _hostmake.arange(self, e, ty)
        else:
            shape = self.visit(e.args[0])
        tmp = t.fresh("a")
        t.env[tmp] = ty
        self.pre.append(ast.Assign([name(tmp, ast.Store())], call("rt.zeros", [shape, ast.Constant(ty.dtype)])))
        fill = {"ones": 1, "ones_like": 1}.get(what)
        value = ast.Constant(fill) if fill is not None else None
        if what == "full":
            value = e.args[1]
        elif what == "full_like":
            value = e.args[1]
        if value is not None:
            self.pre.extend(_arrayexpr.assign(t, ast.Subscript(name(tmp), ast.Slice(), ast.Load()), value))
        return name(tmp)

    def _along_axis(self, fn, x, axis, e):
        ty = self.t.type_of(x)
        if ty.ndim == 1:  # the whole array, a number
            return _reduce.reduce(self.t, fn, x, self.pre, e)
        if not isinstance(x, ast.Name):  # a slice or an expression: computed into an array first
            x = self._materialize(ast.BinOp(x, ast.Mult(), ast.Constant(1)) if ty.dtype != "bool" else x, e, ty)
        return _reduce.along_axis(self.t, fn, self.visit(x), axis, self.pre, e)

    def _materialize(self, value, node, ty):
        tmp = self.t.fresh("a")
        self.t.env[tmp] = ty
        self.pre.extend(_arrayexpr.assign(self.t, None, value, new=tmp))
        return name(tmp)

    def visit_Subscript(self, e):
        """a[m] with m a boolean array: the elements where m is true (a count, then a scan)."""
        t = self.t
        if (
            isinstance(e.ctx, ast.Load)
            and isinstance(t.type_of(e.value), Arr)
            and not isinstance(e.slice, (ast.Tuple, ast.Slice))
            and isinstance(t.type_of(e.slice), Arr)
        ):
            mask = e.slice if isinstance(e.slice, ast.Name) else self._materialize(e.slice, e.slice, t.type_of(e.slice))
            return call("rt.compress", [self.visit(e.value), self.visit(mask)])
        return self.generic_visit(e)

    def visit_Name(self, e):
        return ast.copy_location(ast.Name("np", e.ctx), e) if e.id == NUMPY else e

    def visit_UnaryOp(self, e):
        if isinstance(self.t.type_of(e), Arr):
            return self._materialize(e, e, self.t.type_of(e))
        return self.generic_visit(e)

    def visit_Attribute(self, e):
        ty = self.t.type_of(e.value)
        if isinstance(ty, Arr):
            if e.attr == "size":
                return call("rt.size", [self.visit(e.value)])
            if e.attr == "ndim":
                return ast.Constant(ty.ndim)
            if e.attr == "shape":  # a tuple on Views, NumPy and CuPy arrays alike
                return ast.Attribute(self.visit(e.value), "shape", ast.Load())
            if e.attr == "T" and ty.ndim <= 2:  # the same memory, axes reversed (as Numba's view)
                return call("rt.transpose", [self.visit(e.value)])
            if e.attr in ("real", "imag"):  # computed by a kernel, as np.real(a) is
                fn = ast.Attribute(ast.Name(NUMPY, ast.Load()), e.attr, ast.Load())
                return self._materialize(ast.copy_location(ast.Call(fn, [e.value], []), e), e, self.t.type_of(e))
            raise self.hb.err(e, f"the array attribute .{e.attr} is not supported")
        return self.generic_visit(e)


def emit_host_function(t, fname: str) -> None:
    body = t.fdef.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    out = HostBody(t).block(body)
    # The function called by its user keeps every parameter; a helper's dtype or function ones are dropped.
    params = [p for p in t.params if not (not t.top and isinstance(t.arg_types.get(p), Const))]
    fdef = ast.FunctionDef(fname, ast.arguments([], [ast.arg(p) for p in params], None, [], [], None, []), out or [ast.Pass()], [], None)
    t.module.add(fdef)


def emit_caller(t, fname: str, body: str) -> None:
    """The function with the original signature: arrays in, NumPy arrays and numbers out."""
    args = [ast.arg(p) for p in t.params]
    ret = ast.Return(call("rt.call", [name(body), *[name(p) for p in t.params]]))
    doc = ast.Expr(
        ast.Constant(f"{fname}{tuple(t.params)!s} translated from {t.ctx.filename}:{t.ctx.first_line}".replace("'", "").replace(",)", ")"))
    )
    t.module.add(ast.FunctionDef(fname, ast.arguments([], args, None, [], [], None, []), [doc, ret], [], None))
