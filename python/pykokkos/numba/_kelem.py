"""Whole-row statements inside a kernel: `c[i, :] = a[i, :] + b[i]`,
`out[i] += w * x[i, :]`, and array accumulation across a prange loop
(`hist += a[i, :]`, which Numba reduces elementwise). Each becomes a loop over
the target's elements; an update of memory every iteration of the parallel loop
shares is an atomic add."""

from __future__ import annotations

import ast

import numpy as np

from ._typer import Arr
from ._types import pk_type


def _name(n, ctx=None):
    return ast.Name(n, ctx or ast.Load())


def _full(i) -> bool:
    return isinstance(i, ast.Slice) and i.lower is None and i.upper is None and i.step is None


_COMPARE = {"greater": ast.Gt, "greater_equal": ast.GtE, "less": ast.Lt, "less_equal": ast.LtE, "equal": ast.Eq, "not_equal": ast.NotEq}
_LOGICAL = {"logical_and", "logical_or", "logical_not", "logical_xor", *_COMPARE}


class _Elem:
    def __init__(self, kb, ks):
        self.kb, self.ks = kb, ks

    def index(self, base, idx, node):
        """base[idx] with its full slices (and missing trailing dims) taken at the loop indices."""
        t = self.kb.ty(base)
        idx = list(idx) + [ast.Slice()] * (t.ndim - len(idx))
        kept = sum(_full(i) for i in idx)
        if kept > len(self.ks) or any(isinstance(i, ast.Slice) and not _full(i) for i in idx):
            raise self.kb.err(node, "inside a kernel, whole-array statements take full slices (a[i, :]) of at most the target's rank")
        ks = iter(self.ks[len(self.ks) - kept :])
        out = [_name(next(ks)) if _full(i) else i for i in idx]
        return ast.Subscript(base, ast.Tuple(out, ast.Load()) if len(out) > 1 else out[0], ast.Load())

    def __call__(self, e):
        t = self.kb.ty(e)
        if not isinstance(t, Arr):
            return e
        if isinstance(e, ast.Name):
            return self.index(e, [], e)
        if isinstance(e, ast.Subscript):
            idx = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
            return self.index(e.value, idx, e)
        if isinstance(e, ast.BinOp):
            return ast.BinOp(self(e.left), e.op, self(e.right))
        if isinstance(e, ast.UnaryOp):
            return ast.UnaryOp(e.op, self(e.operand))
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            return ast.Compare(self(e.left), e.ops, [self(e.comparators[0])])
        kind = self.kb.tr.names.callee(e.func) if isinstance(e, ast.Call) else None
        if kind is not None and kind[0] == "np" and kind[1] in _LOGICAL and not e.keywords:
            args = [self(a) for a in e.args]
            if kind[1] in _COMPARE:
                return ast.Compare(args[0], [_COMPARE[kind[1]]()], [args[1]])
            if kind[1] == "logical_not":
                return ast.UnaryOp(ast.Not(), args[0])
            truth = [ast.Compare(a, [ast.NotEq()], [ast.Constant(0)]) for a in args]
            if kind[1] == "logical_xor":
                return ast.Compare(truth[0], [ast.NotEq()], [truth[1]])
            return ast.BoolOp(ast.And() if kind[1] == "logical_and" else ast.Or(), truth)
        if kind is not None and kind[0] in ("np", "math"):
            return ast.Call(e.func, [self(a) for a in e.args], [])
        raise self.kb.err(e, "this array expression is not supported inside a kernel")


def expand(kb, s, target, value, op):
    """The loop nest computing one whole-array statement element by element."""
    t = kb.ty(target)
    ks = [kb.fresh("e") for _ in range(t.ndim)]
    el = _Elem(kb, ks)
    store = el(target)
    rhs = el(value)
    shared = (
        op is not None
        and kb.parallel_index is not None
        and kb.parallel_index not in {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    )
    if shared:
        if not isinstance(op, (ast.Add, ast.Sub)):
            raise kb.err(s, "an array accumulated across a prange loop must use += or -=")
        if isinstance(op, ast.Sub):
            rhs = ast.UnaryOp(ast.USub(), rhs)
        idx = store.slice.elts if isinstance(store.slice, ast.Tuple) else [store.slice]
        body = ast.Expr(ast.Call(ast.Attribute(_name("pk"), "atomic_add", ast.Load()), [store.value, ast.List(idx, ast.Load()), rhs], []))
    elif op is not None:
        store.ctx = ast.Store()
        body = ast.AugAssign(store, op, rhs)
    else:
        store.ctx = ast.Store()
        body = ast.Assign([store], rhs)
    loop = [body]
    base = target.value if isinstance(target, ast.Subscript) else target
    tidx = (
        target.slice.elts
        if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Tuple)
        else ([target.slice] if isinstance(target, ast.Subscript) else [])
    )
    bt = kb.ty(base)
    tidx = list(tidx) + [ast.Slice()] * (bt.ndim - len(tidx))
    dims = [d for d, i in enumerate(tidx) if _full(i)]
    for k, d in reversed(list(zip(ks, dims))):
        ext = ast.Call(ast.Attribute(base, "extent", ast.Load()), [ast.Constant(d)], [])
        loop = [ast.For(_name(k, ast.Store()), ast.Call(_name("range"), [ext], []), loop, [])]
    for x in loop:
        ast.copy_location(x, s)
        ast.fix_missing_locations(x)
    return [kb.visit(x) for x in loop]


_REDUCERS = {"sum", "prod", "max", "min", "amax", "amin", "mean", "argmin", "argmax"}


def _base(kb, x):
    """The first array operand of an elementwise expression (its shape is the expression's)."""
    for n in ast.walk(x):
        if isinstance(n, (ast.Name, ast.Subscript)) and isinstance(kb.ty(n), Arr):
            return n
    return None


def reduce_expr(kb, fn: str, x, node) -> tuple[list, ast.expr]:
    """`x.sum()` (and prod/min/max/mean, np.sum(x), ...) of an array expression
    inside a kernel: statements accumulating it in a loop nest, and the value."""
    if isinstance(x, ast.Subscript) and not isinstance(x.slice, (ast.Tuple, ast.Slice)) and isinstance(kb.ty(x.slice), Arr):
        return _masked(kb, fn, x, node, pk_type)
    t = kb.ty(x)
    base = _base(kb, x)
    if base is None:
        raise kb.err(node, f"cannot reduce {ast.unparse(x)[:40]} inside a kernel")
    ks = [kb.fresh("r") for _ in range(t.ndim)]
    elem = _Elem(kb, ks)(x)
    method = {"mean": "sum", "amin": "min", "amax": "max"}.get(fn, fn)
    out_ty = kb.ty(ast.Call(ast.Attribute(x, method, ast.Load()), [], []))
    acc = kb.fresh("acc")
    kb.env[acc] = out_ty
    dt = np.dtype(out_ty)
    if fn in ("sum", "mean"):
        init, update = ast.Constant(0), ast.BinOp(_name(acc), ast.Add(), elem)
    elif fn == "prod":
        init, update = ast.Constant(1), ast.BinOp(_name(acc), ast.Mult(), elem)
    elif fn in ("argmin", "argmax"):
        init, update = ast.Constant(0), elem  # (replaced below)
    else:
        big = np.finfo(dt).max if dt.kind == "f" else np.iinfo(dt).max
        first = fn in ("max", "amax")
        init = ast.Constant((-big if first and dt.kind == "f" else np.iinfo(dt).min if first else big).item())
        init = ast.Call(pk_type(out_ty), [init], [])
        update = ast.Call(_name("max" if first else "min"), [_name(acc), elem], [])
    body = [ast.Assign([_name(acc, ast.Store())], update)]
    arr = base.value if isinstance(base, ast.Subscript) else base
    bt = kb.ty(arr)
    bidx = (
        base.slice.elts
        if isinstance(base, ast.Subscript) and isinstance(base.slice, ast.Tuple)
        else ([base.slice] if isinstance(base, ast.Subscript) else [])
    )
    bidx = list(bidx) + [ast.Slice()] * (bt.ndim - len(bidx))
    dims = [d for d, i in enumerate(bidx) if _full(i)]
    exts = [ast.Call(ast.Attribute(arr, "extent", ast.Load()), [ast.Constant(d)], []) for d in dims]
    head = []
    if fn in ("argmin", "argmax"):  # the first extreme's flat (C-order) index; a NaN is the first extreme
        idx, seen = kb.fresh("idx"), kb.fresh("seen")
        kb.env[idx], kb.env[seen] = "int64", "int64"
        flat = _name(ks[0])
        for k, ext in zip(ks[1:], exts[1:]):
            flat = ast.BinOp(ast.BinOp(flat, ast.Mult(), ext), ast.Add(), _name(k))
        v = kb.fresh("v")
        kb.env[v] = t.dtype
        better = ast.BoolOp(
            ast.Or(),
            [
                ast.Compare(_name(seen), [ast.Eq()], [ast.Constant(0)]),
                ast.Compare(_name(v), [ast.Lt() if fn == "argmin" else ast.Gt()], [_name(acc)]),
                ast.BoolOp(
                    ast.And(), [ast.Compare(_name(v), [ast.NotEq()], [_name(v)]), ast.Compare(_name(acc), [ast.Eq()], [_name(acc)])]
                ),
            ],
        )
        body = [
            ast.Assign([_name(v, ast.Store())], elem),
            ast.If(
                better,
                [
                    ast.Assign([_name(acc, ast.Store())], _name(v)),
                    ast.Assign([_name(idx, ast.Store())], flat),
                    ast.Assign([_name(seen, ast.Store())], ast.Constant(1)),
                ],
                [],
            ),
        ]
        kb.env[acc] = t.dtype
        init = ast.Call(pk_type(t.dtype), [ast.Constant(0)], [])
        head = [ast.Assign([_name(idx, ast.Store())], ast.Constant(0)), ast.Assign([_name(seen, ast.Store())], ast.Constant(0))]
    count = None
    for k, ext in reversed(list(zip(ks, exts))):
        count = ext if count is None else ast.BinOp(count, ast.Mult(), ext)
        body = [ast.For(_name(k, ast.Store()), ast.Call(_name("range"), [ext], []), body, [])]
    pre = (
        head
        + [ast.Assign([_name(acc, ast.Store())], ast.Call(pk_type(out_ty), [init], []) if fn in ("sum", "mean", "prod") else init)]
        + body
    )
    for s in pre:
        ast.copy_location(s, node)
        ast.fix_missing_locations(s)
    value = _name(idx) if fn in ("argmin", "argmax") else _name(acc)
    if fn == "mean":
        kb.env[acc] = "float64" if dt.kind in "biu" else out_ty
        value = ast.BinOp(value, ast.Div(), count)
    return [kb.visit(s) for s in pre], value


def _masked(kb, fn: str, x, node, pk_type) -> tuple[list, ast.expr]:
    """`data[mask].sum()` (prod, mean) of a 1-d array inside a kernel: one loop
    adding the elements where the mask holds (mean: over their count; NaN for
    none, as NumPy's mean of an empty array)."""
    if not (isinstance(x.value, ast.Name) and kb.ty(x.value).ndim == 1 and kb.ty(x.slice).ndim == 1) or fn not in ("sum", "mean", "prod"):
        raise kb.err(node, "inside a kernel, a masked array (a[m]) is reduced by sum, prod or mean of a 1-d array")
    k = kb.fresh("r")
    el = _Elem(kb, [k])
    cond, val = el(x.slice), el(x.value)
    out_ty = kb.ty(ast.Call(ast.Attribute(x.value, "prod" if fn == "prod" else "sum", ast.Load()), [], []))
    acc, cnt = kb.fresh("acc"), kb.fresh("cnt")
    kb.env[acc], kb.env[cnt] = ("float64" if fn == "mean" and np.dtype(out_ty).kind in "biu" else out_ty), "int64"
    op = ast.Mult() if fn == "prod" else ast.Add()
    body = [
        ast.Assign([_name(acc, ast.Store())], ast.BinOp(_name(acc), op, val)),
        ast.Assign([_name(cnt, ast.Store())], ast.BinOp(_name(cnt), ast.Add(), ast.Constant(1))),
    ]
    ext = ast.Call(ast.Attribute(x.value, "extent", ast.Load()), [ast.Constant(0)], [])
    pre = [
        ast.Assign([_name(acc, ast.Store())], ast.Call(pk_type(kb.env[acc]), [ast.Constant(1 if fn == "prod" else 0)], [])),
        ast.Assign([_name(cnt, ast.Store())], ast.Constant(0)),
        ast.For(_name(k, ast.Store()), ast.Call(_name("range"), [ext], []), [ast.If(cond, body, [])], []),
    ]
    for s in pre:
        ast.copy_location(s, node)
        ast.fix_missing_locations(s)
    value = ast.BinOp(_name(acc), ast.Div(), _name(cnt)) if fn == "mean" else _name(acc)
    return [kb.visit(s) for s in pre], value
