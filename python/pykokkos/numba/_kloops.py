"""Loops inside a kernel: `for` over ranges, arrays, enumerate, zip and
np.ndindex, as the kernel language's range loops (a mixin of KernelBody)."""

from __future__ import annotations

import ast

from ._types import Arr, Tup


def name_(n, ctx=None):
    return ast.Name(n, ctx or ast.Load())


def unravel(view, k, ndim):
    """The indices of C-order position k in a view of ndim dimensions."""
    if ndim == 1:
        return k
    out = []
    for d in range(ndim):
        inner = None
        for e in range(d + 1, ndim):
            x = _extent(view, e)
            inner = x if inner is None else ast.BinOp(inner, ast.Mult(), x)
        q = ast.BinOp(k, ast.FloorDiv(), inner) if inner is not None else k
        out.append(ast.BinOp(q, ast.Mod(), _extent(view, d)) if d > 0 else q)
    return ast.Tuple(out, ast.Load())


class _Subst(ast.NodeTransformer):
    """A tuple index name replaced by its loop indices (`a[idx]`, `idx[0]`)."""

    def __init__(self, old, tup):
        self.old, self.tup = old, tup

    def visit_Subscript(self, e):
        if isinstance(e.value, ast.Name) and e.value.id == self.old and isinstance(e.slice, ast.Constant):
            return self.tup.elts[e.slice.value]
        e = self.generic_visit(e)
        # a[i, idx] -> a[i, k1, k2]: the tuple's items join the index
        if isinstance(e.slice, ast.Tuple):
            items = []
            for x in e.slice.elts:
                items.extend(x.elts if x is self.tup else [x])
            e.slice = ast.Tuple(items, ast.Load())
        return e

    def visit_Name(self, n):
        return self.tup if n.id == self.old else n


def _extent(view, d):
    dim = d if isinstance(d, ast.AST) else ast.Constant(d)
    return ast.Call(ast.Attribute(view, "extent", ast.Load()), [dim], [])


def lower_bound(e, bounds: dict) -> int | None:
    """A lower bound of an index expression, when one is evident: constants,
    loop indices of ranges with a known start, sums and products of those,
    lengths. None: it may be negative (Numba then counts from the end)."""
    if isinstance(e, ast.Constant) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    if isinstance(e, ast.Name):
        return bounds.get(e.id)
    if isinstance(e, ast.BinOp):
        a = lower_bound(e.left, bounds)
        b = lower_bound(e.right, bounds)
        if isinstance(e.op, ast.Add) and a is not None and b is not None:
            return a + b
        if isinstance(e.op, ast.Sub) and a is not None and isinstance(e.right, ast.Constant):
            return a - e.right.value if isinstance(e.right.value, int) else None
        if isinstance(e.op, ast.Mult) and a is not None and b is not None and a >= 0 and b >= 0:
            return a * b
        if isinstance(e.op, (ast.FloorDiv, ast.Mod)) and a is not None and a >= 0 and b is not None and b > 0:
            return 0
        return None
    if isinstance(e, ast.Call) and (
        isinstance(e.func, ast.Name) and e.func.id == "len" or isinstance(e.func, ast.Attribute) and e.func.attr == "extent"
    ):
        return 0
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
        return 0
    return None


class KernelLoops:
    """KernelBody's loops (self.tr, self.ty, self.err, self.fresh, self.env come from KernelBody)."""

    def visit_For(self, s):
        it = s.iter
        kind = self.tr.names.callee(it.func) if isinstance(it, ast.Call) else None
        body = s.body
        if s.orelse:
            raise self.err(s, "for ... else is not supported")
        if kind == ("builtin", "enumerate"):
            seq = it.args[0]
            if not (isinstance(s.target, ast.Tuple) and len(s.target.elts) == 2):
                raise self.err(s.target, "unpack enumerate(...) as 'for i, x in enumerate(a)'")
            idx, item = s.target.elts
            start = it.args[1] if len(it.args) > 1 else ast.Constant(0)
            k = self.fresh("k")
            pre = [ast.Assign([idx], ast.BinOp(ast.Name(k, ast.Load()), ast.Add(), start))]
            pre += self._bind_item(item, seq, k)
            return self._index_loop(s, k, seq, pre)
        if kind == ("builtin", "zip"):
            if not (isinstance(s.target, ast.Tuple) and len(s.target.elts) == len(it.args)):
                raise self.err(s.target, "unpack zip(...) into one name per sequence")
            k = self.fresh("k")
            pre = []
            for t, seq in zip(s.target.elts, it.args):
                pre += self._bind_item(t, seq, k)
            bound = (
                ast.Call(ast.Name("min", ast.Load()), [self._length(a) for a in it.args], [])
                if len(it.args) > 1
                else self._length(it.args[0])
            )
            return self._index_loop(s, k, bound, pre, is_bound=True)
        if kind == ("np", "ndindex"):
            return self._ndindex(s, it)
        if isinstance(it, ast.Attribute) and it.attr == "flat" and isinstance(self.ty(it.value), Arr):
            k = self.fresh("k")
            size = self.visit(ast.Attribute(it.value, "size", ast.Load()))
            pre = [ast.Assign([s.target], ast.Subscript(it, name_(k), ast.Load()))]
            return self._index_loop(s, k, size, pre, is_bound=True)
        if kind in (("builtin", "range"), ("builtin", "prange")):
            s.iter = self.visit(it)
            # The index's lower bound while the body runs (its reads need no
            # wraparound of negative indices when it cannot be negative).
            target = s.target.id if isinstance(s.target, ast.Name) else None
            step = it.args[2] if len(it.args) == 3 else ast.Constant(1)
            lb = lower_bound(it.args[0], self.bounds) if len(it.args) > 1 else 0
            rebound = any(isinstance(n, ast.Name) and n.id == target and isinstance(n.ctx, ast.Store) for b in body for n in ast.walk(b))
            saved = self.bounds.get(target, "unset")
            if (
                target
                and not rebound
                and lb is not None
                and isinstance(step, ast.Constant)
                and isinstance(step.value, int)
                and step.value > 0
            ):
                self.bounds[target] = lb
            else:
                self.bounds.pop(target, None)
            s.body = self._stmts(body)
            if saved == "unset":
                self.bounds.pop(target, None)
            else:
                self.bounds[target] = saved
            return s
        t = self.ty(it)
        if isinstance(t, (Arr, Tup)) or isinstance(it, ast.Name):
            k = self.fresh("k")
            pre = self._bind_item(s.target, it, k)
            return self._index_loop(s, k, it, pre)
        raise self.err(it, "a loop inside a kernel must run over range(...), an array, enumerate(...) or zip(...)")

    def _ndindex(self, s, it):
        """`for idx in np.ndindex(shape)`: one loop per dimension; `a[idx]` reads
        with the loop indices."""
        a = it.args
        if len(a) == 1 and isinstance(a[0], ast.Attribute) and a[0].attr == "shape":
            nd = self.ty(a[0].value).ndim
            dims = [_extent(a[0].value, d) for d in range(nd)]
        elif len(a) == 1 and isinstance(a[0], ast.Tuple):
            dims = list(a[0].elts)
        else:
            dims = list(a)
        ks = [self.fresh("k") for _ in dims]
        tup = ast.Tuple([name_(k) for k in ks], ast.Load())
        body = s.body
        if isinstance(s.target, ast.Name):
            body = [_Subst(s.target.id, tup).visit(x) for x in body]
        elif isinstance(s.target, ast.Tuple) and len(s.target.elts) == len(ks):
            body = [ast.Assign([t], name_(k)) for t, k in zip(s.target.elts, ks)] + body
        else:
            raise self.err(s.target, "unpack np.ndindex into one name per dimension, or use one tuple name")
        loop = body
        for k, d in reversed(list(zip(ks, dims))):
            loop = [ast.For(name_(k, ast.Store()), ast.Call(ast.Name("range", ast.Load()), [d], []), loop, [])]
        for x in loop:
            ast.copy_location(x, s)
        ast.fix_missing_locations(loop[0])
        return self.visit(loop[0])

    def _length(self, seq):
        if isinstance(seq, ast.Call) and self.tr.names.callee(seq.func) in (("builtin", "range"),):
            a = seq.args
            if len(a) == 1:
                return a[0]
            if len(a) == 2:
                return ast.BinOp(a[1], ast.Sub(), a[0])
            raise self.err(seq, "range with a step inside zip/enumerate is not supported")
        return _extent(self.visit(seq), 0)

    def _bind_item(self, target, seq, k):
        if isinstance(seq, ast.Call) and self.tr.names.callee(seq.func) == ("builtin", "range"):
            lo = seq.args[0] if len(seq.args) > 1 else ast.Constant(0)
            return [ast.Assign([target], ast.BinOp(lo, ast.Add(), ast.Name(k, ast.Load())))]
        return [ast.Assign([target], ast.Subscript(seq, ast.Name(k, ast.Load()), ast.Load()))]

    def _index_loop(self, s, k, seq, pre, is_bound=False):
        bound = seq if is_bound else self._length(seq)
        loop = ast.For(ast.Name(k, ast.Store()), ast.Call(ast.Name("range", ast.Load()), [bound], []), [*pre, *s.body], [])
        ast.copy_location(loop, s)
        for p in pre:
            ast.copy_location(p, s)
            ast.fix_missing_locations(p)
        return self.visit_For(loop)
