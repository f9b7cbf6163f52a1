"""A prange loop whose body sums one row (`acc = 0.0; for j in range(m): acc +=
a[i, j] ...; out[i] = f(acc)`) as a team kernel for GPUs: one team per
iteration, the row's terms summed by the team's threads (loads coalesced
along the row), what follows the sum run once per team.

One work item per row leaves a GPU mostly idle and reads memory a row's
stride apart; the team form is what a CUDA programmer would write. It adds
the row's terms in another order than Numba's sequential loop, as Numba's
own prange reductions do, so it is used only where kernels run on a GPU:
host kernels keep the sequential order and its exact bits."""

from __future__ import annotations

import ast

from ._arrayexpr import call, name, workunit
from ._kbody import KernelBody, assigned_names, pk_type, read_names
from ._kloops import lower_bound
from ._kstmt import clone, declare

_SUMMABLE = {"float64", "float32", "int64", "int32", "uint64", "uint32"}
# Calls a statement before the row's sum may make: none of them writes memory.
_PURE = {"builtin", "math", "np"}


def team_launch(t, s: ast.For, idx: str, lo: ast.expr, hi: ast.expr, params, kws, locals_: set, index_lb) -> ast.stmt | None:
    """`pk.parallel_for(pk.TeamPolicy(...), <team kernel>, ...)` for the prange
    loop `s` over range(lo, hi), or None when its body is not one row's sum."""
    form = _row_sum(t, s.body, idx)
    if form is None:
        return None
    pre, acc, init, loop, post = form
    j = loop.target.id
    kb = KernelBody(t, t.env, t.fresh, idx, index_lb)
    rng = loop.iter.args
    jlo, jhi = (rng[0], rng[1]) if len(rng) == 2 else (ast.Constant(0), rng[0])
    kb.bounds[j] = lower_bound(jlo, kb.bounds)
    pieces = [_expr(kb, x) for x in (init, jlo, jhi, _term(loop.body[0]))]
    if any(p is None for p in pieces):
        return None
    init_k, jlo_k, jhi_k, term = pieces
    head = _stmts(kb, pre)
    tail = _stmts(kb, post)
    if head is None or tail is None:
        return None
    ty = t.env[acc]
    tm, first, part = t.fresh("tm"), t.fresh("lo"), t.fresh("part")
    inner, single, total = t.kernel_name("row"), t.kernel_name("row_tail"), t.fresh("total")
    op = ast.Sub() if isinstance(loop.body[0], ast.AugAssign) and isinstance(loop.body[0].op, ast.Sub) else ast.Add()
    inner_def = ast.FunctionDef(
        inner,
        ast.arguments(
            [],
            [ast.arg(j, name("int")), ast.arg(part, ast.Subscript(ast.parse("pk.Acc", mode="eval").body, pk_type(ty), ast.Load()))],
            None,
            [],
            [],
            None,
            [],
        ),
        [ast.AugAssign(name(part, ast.Store()), op, term)],
        [],
        None,
    )
    reduce_ = call("pk.parallel_reduce", [call("pk.TeamThreadRange", [name(tm), jlo_k, jhi_k]), name(inner)])
    post_locals = set(assigned_names(post))
    tail_def = ast.FunctionDef(
        single, ast.arguments([], [], None, [], [], None, []), _declared(t, post_locals, tail) or [ast.Pass()], [], None
    )
    body = [ast.AnnAssign(name(idx, ast.Store()), name("int"), ast.BinOp(call(f"{tm}.league_rank", []), ast.Add(), name(first)), 1)]
    body += _declared(t, (locals_ - post_locals - {idx}) | {acc}, head)
    body += [
        inner_def,
        ast.AnnAssign(name(total, ast.Store()), pk_type(ty), reduce_, 1),
        ast.Assign([name(acc, ast.Store())], ast.BinOp(init_k, ast.Add(), name(total))),
        tail_def,
        ast.Expr(call("pk.single", [call("pk.PerTeam", [name(tm)]), name(single)])),
    ]
    kname = t.kernel_name("rows")
    tm_arg = ast.arg(tm, ast.parse("pk.TeamMember", mode="eval").body)
    workunit(t, kname, [], [tm_arg, ast.arg(first, name("int"))] + params, body)
    policy = call("pk.TeamPolicy", [call("rt.league", [lo, hi]), ast.parse("pk.AUTO", mode="eval").body])
    return ast.Expr(call("pk.parallel_for", [policy, name(kname)], [ast.keyword(first, lo)] + kws))


def _row_sum(t, body: list, idx: str):
    """(statements before, the accumulator, its initial value, the inner loop,
    statements after) when the body is `...; acc = init; for j in range(..):
    acc += term; ...` with nothing before the sum that writes memory and no
    other loop."""
    loops = [k for k, x in enumerate(body) if isinstance(x, ast.For)]
    if len(loops) != 1 or loops[0] == 0:
        return None
    k = loops[0]
    loop, start = body[k], body[k - 1]
    pre, post = body[: k - 1], body[k + 1 :]
    if not (isinstance(start, ast.Assign) and len(start.targets) == 1 and isinstance(start.targets[0], ast.Name)):
        return None
    acc = start.targets[0].id
    if t.env.get(acc) not in _SUMMABLE or loop.orelse or not isinstance(loop.target, ast.Name):
        return None
    it = loop.iter
    if not (isinstance(it, ast.Call) and t.names.callee(it.func) == ("builtin", "range") and 1 <= len(it.args) <= 2 and not it.keywords):
        return None
    j = loop.target.id
    if len(loop.body) != 1 or _term(loop.body[0], acc) is None:
        return None
    term = _term(loop.body[0], acc)
    if acc in read_names([ast.Expr(term)]) or acc in read_names([ast.Expr(a) for a in it.args]):
        return None
    for x in ast.walk(ast.Module(body=pre + post, type_ignores=[])):
        if isinstance(x, (ast.For, ast.While, ast.Return, ast.Break, ast.Continue, ast.Yield)):
            return None
    # Every thread of the team runs what comes before the sum: scalar
    # assignments only (no store, no in-place array update, no print).
    for s in pre:
        if not isinstance(s, (ast.Assign, ast.AnnAssign)):
            return None
        targets = s.targets if isinstance(s, ast.Assign) else [s.target]
        if not all(isinstance(n, ast.Name) and isinstance(t.env.get(n.id), str) for tg in targets for n in _names(tg)):
            return None
        if any(not isinstance(tg, (ast.Name, ast.Tuple)) for tg in targets):
            return None
    for x in ast.walk(ast.Module(body=pre + [start], type_ignores=[])):
        if isinstance(x, ast.Call) and (
            (t.names.callee(x.func) or ("",))[0] not in _PURE or t.names.callee(x.func) == ("builtin", "print")
        ):
            return None
    if acc in assigned_names(pre) or j in read_names(post) or j in assigned_names(pre + post):
        return None
    # What follows the sum is a nested function: a name it assigns is its own
    # local there, so it may not rebind one the body has before it (the sum,
    # a scalar computed before it, a parameter) nor read one before setting it.
    outer = set(assigned_names(pre + [start])) | {acc, idx} | set(t.params) | read_names(pre + [start, loop])
    if set(assigned_names(post)) & outer or not _set_before_read(post):
        return None
    return pre, acc, start.value, loop, post


def _names(target):
    return [n for n in ast.walk(target) if isinstance(n, ast.Name)]


def _set_before_read(body) -> bool:
    """Whether each name the statements assign is assigned (at their top level) before any read of it."""
    mine = set(assigned_names(body))
    seen: set = set()
    for s in body:
        if read_names([s]) & mine - seen:
            return False
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            for tg in s.targets if isinstance(s, ast.Assign) else [s.target]:
                seen |= {n.id for n in _names(tg)}
    return seen >= mine


def _term(s, acc: str | None = None):
    """The term an update `acc += term` (or `acc = acc + term`, `acc -= term`) adds."""
    if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and isinstance(s.op, (ast.Add, ast.Sub)):
        return s.value if acc is None or s.target.id == acc else None
    if (
        isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and isinstance(s.value, ast.BinOp)
        and isinstance(s.value.op, ast.Add)
    ):
        n = s.targets[0].id
        if acc is not None and n != acc:
            return None
        v = s.value
        if isinstance(v.left, ast.Name) and v.left.id == n:
            return v.right
        if isinstance(v.right, ast.Name) and v.right.id == n:
            return v.left
    return None


def _expr(kb, e):
    """A host-language expression in the kernel language, or None when it needs statements first."""
    s = ast.Expr(ast.parse(ast.unparse(e), mode="eval").body)
    ast.copy_location(s, e)
    for a, b in zip(ast.walk(e), ast.walk(s.value)):
        if hasattr(a, "lineno"):
            b.lineno, b.col_offset = a.lineno, a.col_offset
    r = kb.visit(s)
    return r.value if isinstance(r, ast.Expr) else None


def _stmts(kb, body):
    out = []
    for s in body:
        r = kb.visit(clone(s))
        out.extend(r if isinstance(r, list) else [r])
    return out


def _declared(t, names: set, body: list) -> list:
    return declare(t, body, names, t.env)
