"""Loops as kernels: a `prange` loop is a parallel_for, or a parallel_reduce per
scalar it accumulates; a run of serial statements with loops is one work
item (compiled, as Numba compiles it); a jitted helper called from a kernel is
a @pk.function."""

from __future__ import annotations

import ast

from . import _rows
from ._arrayexpr import call, name, workunit
from ._errors import unsupported
from ._inline import inline_temporaries
from ._kbody import KernelBody, assigned_names, loop_vars, pk_type, read_names
from ._kloops import lower_bound
from ._kstmt import SCALARS as _SCALARS
from ._kstmt import clone as _clone
from ._kstmt import declare as _declare
from ._typer import Arr

REDUCE_OPS = {ast.Add: "Sum", ast.Sub: "Sum", ast.Mult: "Prod"}


def _params(t, names: set) -> tuple[list[ast.arg], list[ast.keyword]]:
    """Kernel parameters (scalars annotated with their type) and launch keywords."""
    args, kws = [], []
    for n in sorted(names):
        ty = t.env.get(n)
        if ty is None:
            if n in t.env:  # assigned from something the typer does not know
                where = next((x for x in ast.walk(t.fdef) if isinstance(x, ast.Name) and x.id == n), t.fdef)
                raise unsupported(t.ctx, where, f"cannot type '{n}': it is assigned from an expression pykokkos.numba does not translate")
            continue
        ann = pk_type(ty) if isinstance(ty, str) and ty in _SCALARS else None
        args.append(ast.arg(n, ann))
        kws.append(ast.keyword(n, name(n)))
    return args, kws


def _workunit(t, kname, index, acc_ty, params, body) -> None:
    workunit(t, kname, [index], params, body, acc_ty)


def _rewrite(t, body, parallel_index=None, index_lb=None):
    kb = KernelBody(t, t.env, t.fresh, parallel_index, index_lb)
    out = []
    for s in body:
        r = kb.visit(_clone(s))
        out.extend(r if isinstance(r, list) else [r])
    return out


def _accumulators(t, body, index):
    """{name: (reducer, [update statements])} of scalars the loop accumulates."""
    found: dict = {}
    other: set = set()
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            r = REDUCE_OPS.get(type(node.op))
            if r is not None and isinstance(t.env.get(node.target.id), str):
                found.setdefault(node.target.id, (r, []))[1].append(node)
                continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            n = node.targets[0].id
            kind = _reduce_form(t, n, node.value)
            if kind is not None:
                found.setdefault(n, (kind, []))[1].append(node)
                continue
    # A name also assigned plainly in the body is a private local, not a reduction.
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in found:
            if not any(_targets(u, node) for u in found[node.id][1]):
                other.add(node.id)
    return {k: v for k, v in found.items() if k not in other and k != index}


def _targets(update, node):
    return (isinstance(update, ast.AugAssign) and update.target is node) or (isinstance(update, ast.Assign) and update.targets[0] is node)


def _reduce_form(t, n, v):
    if isinstance(v, ast.BinOp) and isinstance(v.left, ast.Name) and v.left.id == n and type(v.op) in REDUCE_OPS:
        return REDUCE_OPS[type(v.op)]
    if isinstance(v, ast.BinOp) and isinstance(v.op, (ast.Add, ast.Mult)) and isinstance(v.right, ast.Name) and v.right.id == n:
        return REDUCE_OPS[type(v.op)]
    if (
        isinstance(v, ast.Call)
        and t.names.callee(v.func) in (("builtin", "min"), ("builtin", "max"))
        and len(v.args) == 2
        and any(isinstance(a, ast.Name) and a.id == n for a in v.args)
    ):
        return "Min" if t.names.callee(v.func)[1] == "min" else "Max"
    return None


class _AccRewrite(ast.NodeTransformer):
    """The kept accumulator's updates write `acc`; the others' are dropped."""

    def __init__(self, keep, updates, drop_writes):
        self.keep, self.updates, self.drop_writes = keep, updates, drop_writes

    def visit_AugAssign(self, s):
        if isinstance(s.target, ast.Name) and s.target.id in self.updates:
            if s.target.id != self.keep:
                return ast.Pass()
            return ast.copy_location(ast.AugAssign(name("acc", ast.Store()), s.op, s.value), s)
        if self.drop_writes and isinstance(s.target, ast.Subscript):
            return ast.Pass()
        return s

    def visit_Assign(self, s):
        t = s.targets[0]
        if isinstance(t, ast.Name) and t.id in self.updates:
            if t.id != self.keep:
                return ast.Pass()
            return ast.copy_location(ast.Assign([name("acc", ast.Store())], _Rename(t.id).visit(s.value)), s)
        if self.drop_writes and isinstance(t, ast.Subscript):
            return ast.Pass()
        return s


def _min_max_pair(t, accs):
    """(the Min accumulator, the Max one) when a loop has just these two, of one real type."""
    if len(accs) != 2:
        return None
    by = {red: n for n, (red, _) in accs.items()}
    if (
        set(by) != {"Min", "Max"}
        or t.env.get(by["Min"]) != t.env.get(by["Max"])
        or not isinstance(t.env.get(by["Min"]), str)
        or t.env[by["Min"]].startswith(("complex", "bool"))
    ):
        return None
    return by["Min"], by["Max"]


class _AccFields(ast.NodeTransformer):
    """Each accumulator's updates write its field of the record accumulator (acc.min_val, acc.max_val)."""

    def __init__(self, fields):
        self.fields = fields

    def visit_Name(self, n):
        if n.id in self.fields:
            return ast.copy_location(ast.Attribute(name("acc"), self.fields[n.id], n.ctx), n)
        return n


class _Rename(ast.NodeTransformer):
    def __init__(self, old):
        self.old = old

    def visit_Name(self, n):
        return ast.copy_location(name("acc"), n) if n.id == self.old else n


def prange(t, s: ast.For) -> list[ast.stmt]:
    """Host statements launching the kernels of one prange loop."""
    if not isinstance(s.target, ast.Name):
        raise unsupported(t.ctx, s.target, "a prange loop needs one index name")
    if s.orelse:
        raise unsupported(t.ctx, s, "prange ... else is not supported")
    for node in ast.walk(ast.Module(body=s.body, type_ignores=[])):
        if isinstance(node, (ast.Return, ast.Break)) and not _inside_inner_loop(s.body, node):
            raise unsupported(t.ctx, node, f"'{type(node).__name__.lower()}' cannot leave a prange loop")
    # Array temporaries the body computes and reduces become the expressions they stand for.
    s = ast.copy_location(ast.For(s.target, s.iter, inline_temporaries(t, s.body), s.orelse), s)
    idx = s.target.id
    a = s.iter.args
    if len(a) == 3:
        lo, hi, step = a
        k = t.fresh("k")
        policy = call("len", [call("range", [lo, hi, step])])  # (an int: the range up to it)
        pre_body = [ast.Assign([name(idx, ast.Store())], ast.BinOp(lo, ast.Add(), ast.BinOp(name(k), ast.Mult(), step)))]
        index = k
    else:
        lo, hi = (a[0], a[1]) if len(a) == 2 else (ast.Constant(0), a[0])
        zero = isinstance(lo, ast.Constant) and lo.value == 0 and type(lo.value) is int
        policy = call("rt.upto", [hi]) if zero else call("pk.RangePolicy", [lo, hi])
        pre_body, index = [], idx
    # The work index's lower bound (negative indices it makes need no wraparound check).
    index_lb = 0 if len(a) == 3 else lower_bound(lo, {})
    if len(a) == 3:
        free_extra = read_names([ast.Expr(lo), ast.Expr(step)])
    else:
        free_extra = set()
    accs = _accumulators(t, s.body, idx)
    # Arrays the loop updates in place (`hist += a[i, :]`) live outside it.
    updated = {
        x.target.id
        for x in ast.walk(ast.Module(body=s.body, type_ignores=[]))
        if isinstance(x, ast.AugAssign) and isinstance(x.target, ast.Name) and isinstance(t.env.get(x.target.id), Arr)
    }
    locals_ = set(assigned_names(s.body)) - set(accs) - {idx} - loop_vars(s.body) - updated
    if len(a) == 3:
        locals_.add(idx)
    for n, (_, ups) in accs.items():
        for node in ast.walk(ast.Module(body=s.body, type_ignores=[])):
            if (
                isinstance(node, ast.Name)
                and node.id == n
                and isinstance(node.ctx, ast.Load)
                and not any(node in set(ast.walk(u.target if isinstance(u, ast.AugAssign) else u)) for u in ups)
            ):
                raise unsupported(t.ctx, node, f"the reduction variable '{n}' is read inside the prange loop")
    free = (read_names(s.body) | free_extra | updated) - locals_ - set(accs) - {idx} - loop_vars(s.body)
    free = {n for n in free if n in t.env}
    writes = {
        x.value.id
        for x in ast.walk(ast.Module(body=s.body, type_ignores=[]))
        if isinstance(x, ast.Subscript) and isinstance(x.ctx, ast.Store) and isinstance(x.value, ast.Name)
    }
    if len(accs) > 1 and writes & read_names(s.body):
        raise unsupported(
            t.ctx, s, "a prange loop with several reduction variables that also reads an array it writes is not supported; split the loop"
        )
    out: list[ast.stmt] = []
    params, kws = _params(t, free)
    if not accs:
        body = _declare(t, pre_body + _rewrite(t, s.body, index, index_lb), locals_, t.env)
        kname = t.kernel_name("prange")
        _workunit(t, kname, index, None, params, body)
        flat = ast.Expr(call("pk.parallel_for", [policy, name(kname)], kws))
        team = _rows.team_launch(t, s, idx, lo, hi, params, kws, locals_, index_lb) if len(a) < 3 else None
        out.append(flat if team is None else ast.If(call("rt.teams", []), [team], [flat]))
        return out
    top = out
    if any(red in ("Min", "Max") for red, _ in accs.values()):
        # Kokkos starts a min at the type's largest value, not at the accumulator's
        # (an inf): an empty range must leave the accumulators as they were.
        p = t.fresh("policy")
        out.append(ast.Assign([name(p, ast.Store())], policy))
        policy = name(p)
        guarded: list = []
        out.append(ast.If(call("rt.ran", [policy]), guarded, []))
        out = guarded
    pair = _min_max_pair(t, accs)
    if pair is not None:  # a min and a max of the same type: one pass with the MinMax reducer
        rw = _AccFields(dict(zip(pair, ("min_val", "max_val"))))
        body = _declare(t, pre_body + _rewrite(t, [rw.visit(_clone(x)) for x in s.body], index, index_lb), locals_, t.env)
        kname = t.kernel_name("minmax")
        _workunit(t, kname, index, t.env[pair[0]], params, body)
        res = t.fresh("mm")
        out.append(
            ast.Assign(
                [name(res, ast.Store())],
                call("pk.parallel_reduce", [policy, name(kname)], kws + [ast.keyword("reducer", ast.parse("pk.MinMax", mode="eval").body)]),
            )
        )
        for n, f, field in ((pair[0], "min", "min_val"), (pair[1], "max", "max_val")):
            out.append(ast.Assign([name(n, ast.Store())], call(f, [name(n), ast.Attribute(name(res), field, ast.Load())])))
        return top
    for k, (n, (red, _)) in enumerate(sorted(accs.items())):
        rw = _AccRewrite(n, set(accs), drop_writes=k > 0)
        raw = [rw.visit(_clone(x)) for x in s.body]
        body = _declare(t, pre_body + _rewrite(t, raw, index, index_lb), locals_, t.env)
        kname = t.kernel_name("reduce")
        _workunit(t, kname, index, t.env[n], params, body)
        kw = list(kws)
        if red != "Sum":
            kw.append(ast.keyword("reducer", ast.parse(f"pk.{red}", mode="eval").body))
        total = call("pk.parallel_reduce", [policy, name(kname)], kw)
        op = {"Sum": ast.Add(), "Prod": ast.Mult()}.get(red)
        value = ast.BinOp(name(n), op, total) if op else call(red.lower(), [name(n), total])
        out.append(ast.Assign([name(n, ast.Store())], value))
    return top


def _inside_inner_loop(body, node) -> bool:
    for x in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(x, (ast.For, ast.While)) and node in set(ast.walk(x)) and isinstance(node, ast.Break):
            return True
    return False
