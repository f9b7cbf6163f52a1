"""Whole-row statements inside a kernel: `c[i, :] = a[i, :] + b[i]`,
`out[i] += w * x[i, :]`, and array accumulation across a prange loop
(`hist += a[i, :]`, which Numba reduces elementwise). Each becomes a loop over
the target's elements; an update of memory every iteration of the parallel loop
shares is an atomic add."""
from __future__ import annotations

import ast

from ._typer import Arr


def _name(n, ctx=None):
    return ast.Name(n, ctx or ast.Load())


def _full(i) -> bool:
    return isinstance(i, ast.Slice) and i.lower is None and i.upper is None and i.step is None


class _Elem:
    def __init__(self, kb, ks):
        self.kb, self.ks = kb, ks

    def index(self, base, idx, node):
        """base[idx] with its full slices (and missing trailing dims) taken at the loop indices."""
        t = self.kb.ty(base)
        idx = list(idx) + [ast.Slice()] * (t.ndim - len(idx))
        kept = sum(_full(i) for i in idx)
        if kept > len(self.ks) or any(isinstance(i, ast.Slice) and not _full(i) for i in idx):
            raise self.kb.err(node, "inside a kernel, whole-array statements take full slices (a[i, :]) "
                              "of at most the target's rank")
        ks = iter(self.ks[len(self.ks) - kept:])
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
        if isinstance(e, ast.Call) and self.kb.tr.names.callee(e.func) and \
                self.kb.tr.names.callee(e.func)[0] in ("np", "math"):
            return ast.Call(e.func, [self(a) for a in e.args], [])
        raise self.kb.err(e, "this array expression is not supported inside a kernel")


def expand(kb, s, target, value, op):
    """The loop nest computing one whole-array statement element by element."""
    t = kb.ty(target)
    ks = [kb.fresh("e") for _ in range(t.ndim)]
    el = _Elem(kb, ks)
    store = el(target)
    rhs = el(value)
    shared = op is not None and kb.parallel_index is not None and kb.parallel_index not in {
        n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    if shared:
        if not isinstance(op, (ast.Add, ast.Sub)):
            raise kb.err(s, "an array accumulated across a prange loop must use += or -=")
        if isinstance(op, ast.Sub):
            rhs = ast.UnaryOp(ast.USub(), rhs)
        idx = store.slice.elts if isinstance(store.slice, ast.Tuple) else [store.slice]
        body = ast.Expr(ast.Call(ast.Attribute(_name("pk"), "atomic_add", ast.Load()),
                                 [store.value, ast.List(idx, ast.Load()), rhs], []))
    elif op is not None:
        store.ctx = ast.Store()
        body = ast.AugAssign(store, op, rhs)
    else:
        store.ctx = ast.Store()
        body = ast.Assign([store], rhs)
    loop = [body]
    base = target.value if isinstance(target, ast.Subscript) else target
    tidx = target.slice.elts if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Tuple) else (
        [target.slice] if isinstance(target, ast.Subscript) else [])
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
