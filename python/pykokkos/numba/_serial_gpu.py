"""Serial loops over GPU data as parallel kernels.

Numba runs a plain `for` loop in order on one core. Given arrays that live on
a GPU (CuPy arrays, Cuda Views), the serial translation runs it as one work
item of a GPU thread: correct, but a hundred times slower than the host. Two
loop shapes have a parallel form a GPU runs at memory speed:

- a reduction: a loop nest (perfect, bounds not depending on outer indices)
  whose body only accumulates scalars (`s += a[i, j]`, min, max, product),
  flattened into one parallel_reduce per accumulator;
- a running sum: `acc += x[i]; out[i] = acc` and its kin, a parallel_scan.

Both add in another order than the loop (as a GPU reduction must; Numba's
own prange reductions do too), so they are used only where the serial code
would run on the GPU; host calls keep the loop and its exact bits."""

from __future__ import annotations

import ast

from . import _loops
from ._arrayexpr import call, name, workunit
from ._kbody import assigned_names, read_names
from ._kloops import lower_bound
from ._kstmt import SCALARS, clone, declare
from ._typer import Arr

_SCAN_TYPES = {"float64", "float32", "int64", "int32", "uint64", "uint32"}


def parallel(t, loop: ast.stmt) -> list[ast.stmt] | None:
    """Host statements running `loop` as parallel kernels, or None when it has no parallel form."""
    if not isinstance(loop, ast.For) or _leaves(loop):
        return None
    nest = _nest(t, loop)
    if nest is None:
        return None
    indices, bounds, body = nest
    after = _reads_after(t, loop)
    if set(indices) & after:
        return None  # the loop leaves its indices at their last values
    if _reduction_only(t, body, after):
        return _reduction(t, loop, indices, bounds, body)
    if len(indices) == 1:
        return _scan(t, loop, indices[0], bounds[0], body, after)
    return None


def _leaves(loop) -> bool:
    return any(isinstance(x, (ast.Return, ast.Break, ast.Continue, ast.While, ast.Yield)) for x in ast.walk(loop))


def _nest(t, loop):
    """([index names], [(lo, hi) host expressions], innermost body) of a perfect
    nest of `range` (or one-argument `enumerate`) loops whose bounds do not
    depend on outer indices."""
    indices, bounds = [], []
    body: list = [loop]
    while len(body) == 1 and isinstance(body[0], ast.For):
        s = body[0]
        it = s.iter
        if s.orelse or not isinstance(it, ast.Call) or it.keywords:
            return None
        kind = t.names.callee(it.func)
        pre: list = []
        if kind == ("builtin", "range") and 1 <= len(it.args) <= 2 and isinstance(s.target, ast.Name):
            lo, hi = (it.args[0], it.args[1]) if len(it.args) == 2 else (ast.Constant(0), it.args[0])
            idx = s.target.id
        elif (
            kind == ("builtin", "enumerate")
            and len(it.args) == 1
            and isinstance(s.target, ast.Tuple)
            and len(s.target.elts) == 2
            and all(isinstance(e, ast.Name) for e in s.target.elts)
            and getattr(t.type_of(it.args[0]), "ndim", 0) == 1
            and isinstance(it.args[0], ast.Name)
        ):
            idx, item = s.target.elts[0].id, s.target.elts[1].id
            lo, hi = ast.Constant(0), call("len", [it.args[0]])
            pre = [ast.copy_location(ast.Assign([name(item, ast.Store())], ast.Subscript(name(it.args[0].id), name(idx), ast.Load())), s)]
        else:
            return None
        if read_names([ast.Expr(lo), ast.Expr(hi)]) & set(indices):
            return None
        indices.append(idx)
        bounds.append((lo, hi))
        body = pre + list(s.body)
    if any(isinstance(x, ast.For) for b in body for x in ast.walk(b)) or len(set(indices)) != len(indices):
        return None
    if set(indices) & set(assigned_names(body)):
        return None
    return indices, bounds, body


def _reads_after(t, loop) -> set:
    inside = {id(n) for n in ast.walk(loop)}
    return {n.id for n in ast.walk(t.fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in inside}


def _private(t, body, carried: set, after: set) -> bool:
    """Whether every scalar the body assigns, but `carried`, is written before
    it is read in each iteration (no value passes from one to the next) and
    not read after the loop."""
    first: dict = {}
    for s in body:
        reads = read_names([s]) - set(first)
        for n in reads:
            first[n] = "read"
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for tg in targets:
                for n in ast.walk(tg):
                    if isinstance(n, ast.Name):
                        first.setdefault(n.id, "write")
    for n in set(assigned_names(body)) - carried:
        if first.get(n) != "write" or n in after or not isinstance(t.env.get(n), str):
            return False
    return True


def _stores(body) -> list:
    return [x for s in body for x in ast.walk(s) if isinstance(x, ast.Subscript) and isinstance(x.ctx, ast.Store)]


def _update_parts(t, u, acc: str):
    """(kind, the accumulator's own Name nodes, the term) of one update, or None
    when it is not `acc op= term`, `acc = acc op term` (`term op acc`) or
    `acc = min/max(acc, term)` with a term that does not read `acc`."""
    if isinstance(u, ast.AugAssign):
        kind, own, term = _loops.REDUCE_OPS.get(type(u.op)), [u.target], u.value
    elif isinstance(u, ast.Assign) and isinstance(u.value, ast.BinOp):
        v = u.value
        left = isinstance(v.left, ast.Name) and v.left.id == acc
        kind = _loops.REDUCE_OPS.get(type(v.op)) if left or not isinstance(v.op, ast.Sub) else None
        own, term = [u.targets[0], v.left if left else v.right], v.right if left else v.left
    elif isinstance(u, ast.Assign) and isinstance(u.value, ast.Call) and len(u.value.args) == 2:
        fn = t.names.callee(u.value.func)
        kind = {("builtin", "min"): "Min", ("builtin", "max"): "Max"}.get(fn)
        a, b = u.value.args
        mine = a if isinstance(a, ast.Name) and a.id == acc else b
        own, term = [u.targets[0], mine], b if mine is a else a
    else:
        return None
    if kind is None or acc in read_names([ast.Expr(term)]):
        return None
    return kind, own, term


def _pure_updates(t, body, accs: dict) -> set | None:
    """The ids of the accumulators' own Name nodes in their updates, when every
    update of each is one pure form of one reducer (a reduce or a scan adds up
    contributions made without the running value); else None."""
    own: set = set()
    for acc, (red, ups) in accs.items():
        for u in ups:
            parts = _update_parts(t, u, acc)
            if parts is None or parts[0] != red:
                return None
            own |= {id(n) for n in parts[1]}
    return own


def _reduction_only(t, body, after) -> bool:
    accs = _loops._accumulators(t, body, None)
    if not accs or _stores(body) or not _private(t, body, set(accs), after):
        return False
    own = _pure_updates(t, body, accs)
    if own is None:
        return False
    return all(isinstance(t.env.get(n), str) and t.env[n] in SCALARS for n in accs) and not any(
        isinstance(x, ast.Name) and x.id in accs and isinstance(x.ctx, ast.Load) and id(x) not in own for s in body for x in ast.walk(s)
    )


def _reduction(t, loop, indices, bounds, body) -> list[ast.stmt] | None:
    """The nest flattened into one prange loop over k: each index from k by
    division and remainder by the extents inside it."""
    out: list[ast.stmt] = []
    extents = []
    for lo, hi in bounds:
        n = t.fresh("extent")
        t.env[n] = "int64"
        out.append(ast.Assign([name(n, ast.Store())], call("rt.league", [lo, hi])))
        extents.append(n)
    k = t.fresh("k")
    t.env[k] = "int64"
    head = []
    for d, (idx, (lo, _)) in enumerate(zip(indices, bounds)):
        inner = None
        for e in extents[d + 1 :]:
            inner = name(e) if inner is None else ast.BinOp(inner, ast.Mult(), name(e))
        q = name(k) if inner is None else ast.BinOp(name(k), ast.FloorDiv(), inner)
        pos = q if d == 0 else ast.BinOp(q, ast.Mod(), name(extents[d]))
        value = pos if isinstance(lo, ast.Constant) and lo.value == 0 else ast.BinOp(lo, ast.Add(), pos)
        head.append(ast.copy_location(ast.Assign([name(idx, ast.Store())], value), loop))
    total = name(extents[0])
    for e in extents[1:]:
        total = ast.BinOp(total, ast.Mult(), name(e))
    flat = ast.copy_location(ast.For(name(k, ast.Store()), call("range", [total]), head + body, []), loop)
    ast.fix_missing_locations(flat)
    return out + _loops.prange(t, flat)


def _scan(t, loop, idx, bound, body, after) -> list[ast.stmt] | None:
    """`acc += term` with acc read in the loop: a parallel_scan whose final
    pass stores; every store is at the loop index into an array made in the
    function (no other iteration, and no argument it might alias, reads it)."""
    accs = _loops._accumulators(t, body, idx)
    if len(accs) != 1:
        return None
    acc, (red, _) = next(iter(accs.items()))
    if red != "Sum" or t.env.get(acc) not in _SCAN_TYPES or not _private(t, body, {acc}, after):
        return None
    # The running value may be read only by stores (`out[i] = acc ...`): one
    # read by a branch test or a local could steer what the next item adds.
    own = _pure_updates(t, body, accs)
    if own is None:
        return None
    for s in ast.walk(ast.Module(body=body, type_ignores=[])):
        if not isinstance(s, ast.stmt) or isinstance(s, (ast.If, ast.For)):
            continue
        reads = [x for x in ast.walk(s) if isinstance(x, ast.Name) and x.id == acc and isinstance(x.ctx, ast.Load)]
        stores_only = isinstance(s, ast.Assign) and all(isinstance(tg, ast.Subscript) for tg in s.targets)
        if any(id(x) not in own for x in reads) and not stores_only:
            return None
    for s in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(s, ast.If) and acc in read_names([ast.Expr(s.test)]):
            return None
    stores = _stores(body)
    written = {s.value.id for s in stores if isinstance(s.value, ast.Name)}
    if not stores or len(written) != len(stores) or written & _reads_besides_stores(body):
        return None
    if any(not (isinstance(s.slice, ast.Name) and s.slice.id == idx) for s in stores):
        return None
    if any(not _made_here(t, w) for w in written):
        return None
    start = t.fresh(f"{acc}_start")
    t.env[start] = t.env[acc]
    last = t.fresh("last")
    raw = [_ScanRewrite(acc, start, last).visit(clone(s)) for s in body]
    lo, hi = bound
    lb = lower_bound(lo, {})
    kbody = _loops._rewrite(t, [ast.fix_missing_locations(s) for s in raw], idx, lb)
    locals_ = set(assigned_names(body)) - {acc}
    free = {n for n in (read_names(body) | {start}) - locals_ - {acc, idx} if n in t.env}
    params, kws = _loops._params(t, free)
    kname = t.kernel_name("scan")
    workunit(t, kname, [idx], [ast.arg(last, name("bool"))] + params, declare(t, kbody, locals_, t.env), t.env[acc], acc_name=acc)
    kws = [k for k in kws if k.arg != start] + [ast.keyword(start, name(acc))]
    total = call("pk.parallel_scan", [call("pk.RangePolicy", [lo, hi]), name(kname)], kws)
    return [ast.copy_location(ast.Assign([name(acc, ast.Store())], ast.BinOp(name(acc), ast.Add(), total)), loop)]


def _reads_besides_stores(body) -> set:
    """Names read in the body, not counting the array a store `a[i] = ...` names."""
    bases = {id(x.value) for x in _stores(body)}
    return {n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in bases}


def _made_here(t, arr: str) -> bool:
    """Whether `arr` is bound once in the function, to an array the function
    allocates, and no other name is bound to it or to a part of it."""
    binds = [x for x in ast.walk(t.fdef) if isinstance(x, ast.Name) and x.id == arr and isinstance(x.ctx, ast.Store)]
    if arr in t.params or len(binds) != 1:
        return False
    for s in ast.walk(t.fdef):
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and s.value is not None and arr in read_names([ast.Expr(s.value)]):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            try:
                array = isinstance(t.type_of(s.value), Arr)
            except Exception:  # noqa: BLE001 - a value it cannot type may be an alias
                array = True
            if array and any(isinstance(tg, (ast.Name, ast.Tuple)) for tg in targets):
                return False
    for s in ast.walk(t.fdef):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and s.targets[0] is binds[0]:
            return isinstance(s.value, ast.Name) and s.value.id in t.made
    return False


class _ScanRewrite(ast.NodeTransformer):
    """The accumulator's updates add to the scan's partial sum; a read of it is
    the start value plus that sum; stores happen in the final pass only."""

    def __init__(self, acc, start, last):
        self.acc, self.start, self.last = acc, start, last

    def visit_AugAssign(self, s):
        if isinstance(s.target, ast.Name) and s.target.id == self.acc:
            s.value = self.visit(s.value)
            return s
        return self._store(s)

    def visit_Assign(self, s):
        tg = s.targets[0]
        if isinstance(tg, ast.Name) and tg.id == self.acc:  # acc = acc + term, acc = term + acc
            v = s.value
            left = isinstance(v.left, ast.Name) and v.left.id == self.acc
            op = v.op if left else ast.Add()
            term = v.right if left else v.left
            return ast.copy_location(ast.AugAssign(name(self.acc, ast.Store()), op, self.visit(term)), s)
        return self._store(s)

    def _store(self, s):
        s = self.generic_visit(s)
        if any(isinstance(x, ast.Subscript) and isinstance(x.ctx, ast.Store) for x in ast.walk(s)):
            return ast.copy_location(ast.If(name(self.last), [s], []), s)
        return s

    def visit_Name(self, n):
        if n.id == self.acc and isinstance(n.ctx, ast.Load):
            return ast.copy_location(ast.BinOp(name(self.start), ast.Add(), name(self.acc)), n)
        return n
