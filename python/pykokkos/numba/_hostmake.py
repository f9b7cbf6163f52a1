"""Arrays the host side makes with kernels: np.cumsum (a scan), np.arange, and
a @stencil applied. Each takes the host rewriter (`self`, _host._Rewrite) whose
statements run before the value is used."""

from __future__ import annotations

import ast

from . import _arrayexpr, _loops
from ._arrayexpr import call, name
from ._typer import Arr


def cumsum(self, e):
    """np.cumsum of an array: a parallel_scan over it in C order (flattened, as NumPy's)."""
    t = self.t
    ty = t.type_of(e)
    src = t.type_of(e.args[0])
    x = e.args[0]
    if not isinstance(x, ast.Name):  # a slice or an expression: computed into an array first
        x = self._materialize(ast.BinOp(x, ast.Mult(), ast.Constant(1)), e, src)
    flat = call("rt.flat", [self.visit(x)])
    tmp = t.fresh("a")
    t.env[tmp] = ty
    self.pre.append(ast.Assign([name(tmp, ast.Store())], call("rt.zeros", [call("rt.size", [flat]), ast.Constant(ty.dtype)])))
    kname = t.kernel_name("cumsum")
    acc = _loops.pk_type(ty.dtype)
    body = ast.parse("acc += x[i0]\nif last:\n    out[i0] = acc").body
    fdef = ast.FunctionDef(
        kname,
        ast.arguments(
            [],
            [
                ast.arg("i0"),
                ast.arg("acc", ast.Subscript(ast.parse("pk.Acc", mode="eval").body, acc, ast.Load())),
                ast.arg("last", name("bool")),
                ast.arg("out"),
                ast.arg("x"),
            ],
            None,
            [],
            [],
            None,
            [],
        ),
        body,
        [name("pk.workunit")],
        None,
    )
    t.module.add(fdef)
    self.pre.append(
        ast.Expr(call("pk.parallel_scan", [call("rt.size", [flat]), name(kname)], [ast.keyword("out", name(tmp)), ast.keyword("x", flat)]))
    )
    return name(tmp)


def arange(self, e, ty):
    """np.arange(start, stop, step): allocated, then start + i * step per element."""
    t = self.t
    a = [self.visit(x) for x in e.args]
    start, stop, step = (
        (ast.Constant(0), a[0], ast.Constant(1)) if len(a) == 1 else ((a[0], a[1], ast.Constant(1)) if len(a) == 2 else tuple(a))
    )
    tmp, n = t.fresh("a"), t.fresh("n")
    t.env[tmp] = ty
    self.pre.append(ast.Assign([name(n, ast.Store())], call("rt.arange_len", [start, stop, step])))
    self.pre.append(ast.Assign([name(tmp, ast.Store())], call("rt.zeros", [name(n), ast.Constant(ty.dtype)])))
    kname = t.kernel_name("arange")
    ann = _loops.pk_type(ty.dtype)
    body = [
        ast.Assign(
            [ast.Subscript(name("out"), name("i0"), ast.Store())],
            ast.BinOp(name("start"), ast.Add(), ast.BinOp(name("i0"), ast.Mult(), name("step"))),
        )
    ]
    _arrayexpr.workunit(t, kname, ["i0"], ["out", ast.arg("start", ann), ast.arg("step", ann)], body)
    self.pre.append(
        ast.Expr(
            call(
                "pk.parallel_for",
                [call("rt.upto", [name(n)]), name(kname)],
                [ast.keyword("out", name(tmp)), ast.keyword("start", start), ast.keyword("step", step)],
            )
        )
    )
    return name(tmp)


def apply_stencil(self, st, e):
    """A @stencil applied: its generated apply function, run on a new
    output (border cval) or on out=."""
    t = self.t
    if any(k.arg != "out" for k in e.keywords):
        raise self.hb.err(e, "a stencil call takes the kernel's arguments and out= only")
    tys = [t.type_of(a) for a in e.args]
    _, apply, ndim = st.functions(tuple(a.ndim if isinstance(a, Arr) else None for a in tys), t.ctx, e)
    ty = t.type_of(e)
    out_node = next((k.value for k in e.keywords if k.arg == "out"), None)
    args = []
    for a in e.args:  # each evaluated once
        v = self.visit(a)
        if not isinstance(v, (ast.Name, ast.Constant)):
            tmp = t.fresh("s")
            self.pre.append(ast.Assign([name(tmp, ast.Store())], v))
            v = name(tmp)
        args.append(v)
    cval = st.options.get("cval")
    if out_node is None:
        out = name(t.fresh("a"))
        t.env[out.id] = ty
        self.pre.append(
            ast.Assign([name(out.id, ast.Store())], call("rt.zeros", [ast.Attribute(args[0], "shape", ast.Load()), ast.Constant(ty.dtype)]))
        )
    else:
        out = self.visit(out_node)
    if cval:  # the border (all of out=, as Numba fills it) holds cval
        self.pre.extend(_arrayexpr.assign(t, ast.Subscript(out, ast.Slice(), ast.Load()), ast.Constant(cval)))
    fname = t.host_helper(apply, tys + [ty], e)
    self.pre.append(ast.Expr(ast.Call(name(fname), args + [out], [])))
    return out
