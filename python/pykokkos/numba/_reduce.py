"""Whole-array reductions on the host side (np.sum(a), a.max(), np.argmin(a),
np.dot of vectors): one parallel_reduce over the operand's shape."""

from __future__ import annotations

import ast

from ._arrayexpr import Expr, _workunit, call, launches, name
from ._errors import unsupported
from ._kbody import pk_type, zero_of
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
    acc_ty = t.type_of(ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "sum" if fn == "mean" else fn, ast.Load()), [operand], []))
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
    _workunit(t, k1, x.rank, x.params, [ast.Assign([name("acc", ast.Store())], call(f, [name("acc"), elem]))], acc=ty.dtype)
    pre.append(ast.Expr(call("rt.nonempty", [name(shape), ast.Constant(fn)])))
    pre.append(
        ast.Assign(
            [name(best, ast.Store())],
            call(
                "pk.parallel_reduce",
                [call("rt.policy", [name(shape)]), name(k1)],
                kw + [ast.keyword("reducer", call(f"pk.{f.title()}", []).func)],
            ),
        )
    )
    flat = name("i0")
    for d in range(1, x.rank):
        flat = ast.BinOp(ast.BinOp(flat, ast.Mult(), name(f"n{d}")), ast.Add(), name(f"i{d}"))
    k2 = t.kernel_name(fn)
    params = x.params + [best] + [f"n{d}" for d in range(1, x.rank)]
    body = [
        ast.If(ast.Compare(elem, [ast.Eq()], [name(best)]), [ast.Assign([name("acc", ast.Store())], call("min", [name("acc"), flat]))], [])
    ]
    _workunit(t, k2, x.rank, params, body, acc="int64")
    res = t.fresh("red")
    ext = [ast.keyword(f"n{d}", ast.Subscript(name(shape), ast.Constant(d), ast.Load())) for d in range(1, x.rank)]
    pre.append(
        ast.Assign(
            [name(res, ast.Store())],
            call(
                "pk.parallel_reduce",
                [call("rt.policy", [name(shape)]), name(k2)],
                kw + [ast.keyword(best, name(best))] + ext + [ast.keyword("reducer", call("pk.Min", []).func)],
            ),
        )
    )
    return call("int", [name(res)])


def along_axis(t, fn: str, x: ast.expr, axis_node, pre: list, node) -> ast.expr:
    """np.sum(a, axis=k) and the like on an n-d array x (a host name): a kernel
    over the result's shape, each work item reducing one line along axis k."""
    ty = t.type_of(x)
    out_ty = t.type_of(node)
    axis = _const_axis(axis_node)
    if axis is None or not -ty.ndim <= axis < ty.ndim:
        raise unsupported(t.ctx, node, f"np.{fn}: the axis must be a constant between {-ty.ndim} and {ty.ndim - 1}")
    axis %= ty.ndim
    shape, n, out = t.fresh("shape"), t.fresh("n"), t.fresh("a")
    t.env[out] = out_ty
    pre.append(
        ast.Assign(
            [ast.Tuple([name(shape, ast.Store()), name(n, ast.Store())], ast.Store())], call("rt.axis_shape", [x, ast.Constant(axis)])
        )
    )
    pre.append(ast.Assign([name(out, ast.Store())], call("rt.zeros", [name(shape), ast.Constant(out_ty.dtype)])))
    idx = [name(f"i{d}") for d in range(ty.ndim - 1)]

    def at(j):
        ix = idx[:axis] + [j] + idx[axis:]
        return ast.Subscript(name("x"), ast.Tuple(ix, ast.Load()), ast.Load())

    acc_dt = out_ty.dtype if fn not in ("argmin", "argmax") else ty.dtype
    first = 0
    if fn in ("sum", "mean", "prod"):
        init = ast.Constant(1) if fn == "prod" else zero_of(acc_dt)
        step = [ast.AugAssign(name("acc", ast.Store()), ast.Mult() if fn == "prod" else ast.Add(), at(name("j")))]
    else:
        pre.append(ast.Expr(call("rt.nonempty", [ast.Tuple([name(n)], ast.Load()), ast.Constant(fn)])))
        init, first = at(ast.Constant(0)), 1
        if fn in ("min", "max", "amin", "amax"):
            f = "min" if fn in ("min", "amin") else "max"
            step = [ast.Assign([name("acc", ast.Store())], call(f, [name("acc"), at(name("j"))]))]
        else:
            cmp = ast.Lt() if fn == "argmin" else ast.Gt()
            step = [
                ast.If(
                    ast.Compare(at(name("j")), [cmp], [name("acc")]),
                    [ast.Assign([name("acc", ast.Store())], at(name("j"))), ast.Assign([name("best", ast.Store())], name("j"))],
                    [],
                )
            ]
    body = [
        ast.AnnAssign(name("acc", ast.Store()), pk_type(acc_dt), init, 1),
        ast.AnnAssign(name("best", ast.Store()), pk_type("int64"), ast.Constant(0), 1),
        ast.For(name("j", ast.Store()), call("range", [ast.Constant(first), name("n")]), step, []),
    ]
    result = name("best") if fn in ("argmin", "argmax") else name("acc")
    if fn == "mean":
        result = ast.BinOp(result, ast.Div(), name("n"))
    slot = idx[0] if len(idx) == 1 else ast.Tuple(list(idx), ast.Load())
    body.append(ast.Assign([ast.Subscript(name("out"), slot, ast.Store())], result))
    kname = t.kernel_name(f"{fn}_axis")
    _workunit(t, kname, ty.ndim - 1, ["out", "x", ast.arg("n", pk_type("int64"))], body)
    pre.append(
        ast.Expr(
            call(
                "pk.parallel_for",
                [call("rt.policy", [name(shape)]), name(kname)],
                [ast.keyword("out", name(out)), ast.keyword("x", x), ast.keyword("n", name(n))],
            )
        )
    )
    return name(out)


def _const_axis(e):
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) and type(e.operand.value) is int:
        return -e.operand.value
    return None
