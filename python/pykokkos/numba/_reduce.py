"""Whole-array reductions on the host side (np.sum(a), a.max(), np.argmin(a),
np.dot of vectors): one parallel_reduce over the operand's shape."""
from __future__ import annotations

import ast

from ._arrayexpr import Expr, _workunit, call, launches, name
from ._errors import unsupported
from ._typer import Arr

REDUCERS = {"sum": "Sum", "prod": "Prod", "min": "Min", "amin": "Min", "max": "Max", "amax": "Max"}


def reduce(t, fn: str, operand, pre: list, node) -> ast.expr:
    """Host statements (appended to pre) reducing an array expression; returns
    the host expression of the result."""
    if fn in ("dot", "vdot"):
        a, b = operand
        ta, tb = t.type_of(a), t.type_of(b)
        if not (isinstance(ta, Arr) and isinstance(tb, Arr) and ta.ndim == tb.ndim == 1):
            raise unsupported(t.ctx, node, "np.dot is supported on two 1-D arrays (a dot product)")
        operand, fn = ast.BinOp(a, ast.Mult(), b), "sum"
    ty = t.type_of(operand)
    if not isinstance(ty, Arr):
        raise unsupported(t.ctx, node, f"np.{fn} of a scalar is not supported")
    x = Expr(t, pre)
    x.rank = ty.ndim
    elem = x.element(operand)
    shape = t.fresh("shape")
    pre.append(ast.Assign([name(shape, ast.Store())], call("rt.shape_of", [name(r) for r in x.regions])))
    kw = list(x.kwargs)
    for r in x.regions:
        kw.append(ast.keyword(None, call(f"{r}.args", [ast.Constant(x.prefix[r]), name(shape)])))
    res = t.fresh("red")
    acc_ty = t.type_of(ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "sum" if fn == "mean" else fn,
                                              ast.Load()), [operand], []))
    if fn in ("argmin", "argmax"):
        return _arg_reduce(t, fn, x, elem, shape, kw, pre, ty)
    if fn in ("sum", "mean"):
        body = [ast.AugAssign(name("acc", ast.Store()), ast.Add(), elem)]
        reducer = None
    elif fn == "prod":
        body = [ast.AugAssign(name("acc", ast.Store()), ast.Mult(), elem)]
        reducer = "Prod"
    else:
        f = "min" if REDUCERS[fn] == "Min" else "max"
        body = [ast.Assign([name("acc", ast.Store())], call(f, [name("acc"), elem]))]
        reducer = REDUCERS[fn]
        pre.append(ast.Expr(call("rt.nonempty", [name(shape), ast.Constant(fn)])))
    extra = [ast.keyword("reducer", call(f"pk.{reducer}", []).func)] if reducer else []
    pre.extend(launches(t, x, shape, fn, body, acc_ty, extra, res))
    if fn == "mean":
        return call("rt.mean", [name(res), call("rt.size", [name(shape)])])
    return name(res)


def _arg_reduce(t, fn, x, elem, shape, kw, pre, ty):
    """argmin/argmax: the extreme value, then the first flat index holding it."""
    best = t.fresh("best")
    f = "min" if fn == "argmin" else "max"
    k1 = t.kernel_name(f)
    _workunit(t, k1, x.rank, x.params, [ast.Assign([name("acc", ast.Store())], call(f, [name("acc"), elem]))],
              acc=ty.dtype)
    pre.append(ast.Expr(call("rt.nonempty", [name(shape), ast.Constant(fn)])))
    pre.append(ast.Assign([name(best, ast.Store())], call("pk.parallel_reduce", [
        call("rt.policy", [name(shape)]), name(k1)], kw + [ast.keyword("reducer", call(f"pk.{f.title()}", []).func)])))
    flat = name("i0")
    for d in range(1, x.rank):
        flat = ast.BinOp(ast.BinOp(flat, ast.Mult(), name(f"n{d}")), ast.Add(), name(f"i{d}"))
    k2 = t.kernel_name(fn)
    params = x.params + [best] + [f"n{d}" for d in range(1, x.rank)]
    body = [ast.If(ast.Compare(elem, [ast.Eq()], [name(best)]),
                   [ast.Assign([name("acc", ast.Store())], call("min", [name("acc"), flat]))], [])]
    _workunit(t, k2, x.rank, params, body, acc="int64")
    res = t.fresh("red")
    ext = [ast.keyword(f"n{d}", ast.Subscript(name(shape), ast.Constant(d), ast.Load())) for d in range(1, x.rank)]
    pre.append(ast.Assign([name(res, ast.Store())], call("pk.parallel_reduce", [
        call("rt.policy", [name(shape)]), name(k2)],
        kw + [ast.keyword(best, name(best))] + ext + [ast.keyword("reducer", call("pk.Min", []).func)])))
    return call("int", [name(res)])
