"""Serial code as one work item: the statements run in order inside a kernel,
scalars they change and the host reads later come back through one-element
Views, and a `return` inside them returns from the function."""

from __future__ import annotations

import ast

from ._arrayexpr import call, name
from ._errors import unsupported
from ._kbody import assigned_names, loop_vars, pk_type, read_names
from ._kstmt import SCALARS as _SCALARS
from ._kstmt import clone as _clone
from ._kstmt import declare as _declare
from ._loops import _params, _rewrite, _workunit
from ._typer import Arr, Const, Tup


def _events(stmts):
    """Names in evaluation order, each with whether it is read (True) or
    written: an assignment's targets are written after its value is read."""
    after: dict = {}
    for node in ast.walk(ast.Module(body=list(stmts), type_ignores=[])):
        value, targets = None, []
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            value, targets = node.value, (node.targets if isinstance(node, ast.Assign) else [node.target])
        elif isinstance(node, ast.For):
            value, targets = node.iter, [node.target]
        for tgt in targets:
            for n in ast.walk(tgt):
                if isinstance(n, ast.Name):
                    after[id(n)] = (value.end_lineno, value.end_col_offset + 1)
    out = []
    for node in ast.walk(ast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            out.append((node.lineno, node.col_offset - 1, node.target.id, True))
        elif isinstance(node, ast.Name):
            line, col = after.get(id(node), (node.lineno, node.col_offset))
            out.append((line, col, node.id, isinstance(node.ctx, ast.Load)))
    return sorted(out)


def _unconditional_writes(block) -> set:
    """Names a top-level statement of the block assigns (not inside a branch or loop)."""
    out = set()
    for s in block:
        targets = s.targets if isinstance(s, ast.Assign) else ([s.target] if isinstance(s, ast.AnnAssign) else [])
        for tgt in targets:
            out |= {n.id for n in ast.walk(tgt) if isinstance(n, ast.Name)}
    return out


def _defined_before(t, block) -> set:
    """Parameters and names assigned on lines above the block."""
    start = block[0].lineno
    return set(t.params) | {n.id for n in ast.walk(t.fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.lineno < start}


def _assigned_before(t, block) -> set:
    """Names an assignment (not a `for` loop) binds on lines above the block."""
    start = block[0].lineno
    out = set(t.params)
    for s in ast.walk(t.fdef):
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and getattr(s, "lineno", start) < start:
            for tg in s.targets if isinstance(s, ast.Assign) else [s.target]:
                out |= {n.id for n in ast.walk(tg) if isinstance(n, ast.Name)}
    return out


def _reads_outside(fdef, block) -> set:
    inside = {id(n) for s in block for n in ast.walk(s)}
    return {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in inside}


def _reads_after(fdef, block) -> set:
    """Names read below the block (in source order; nodes the translation made have no place)."""
    if getattr(block[-1], "end_lineno", None) is None:
        return _reads_outside(fdef, block)
    end = (block[-1].end_lineno, block[-1].end_col_offset)
    return {
        n.id
        for n in ast.walk(fdef)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and hasattr(n, "lineno") and (n.lineno, n.col_offset) > end
    }


class _Returns(ast.NodeTransformer):
    """`return v` in a serial kernel: store v and a flag, then end the work item."""

    def __init__(self, t):
        self.t, self.seen = t, False

    def visit_Return(self, s):
        self.seen = True
        out = []
        if s.value is not None:
            ty = self.t.type_of(s.value)
            if isinstance(ty, (Arr, Tup)):
                raise unsupported(self.t.ctx, s, "a return from inside a loop must return a number")
            out.append(ast.Assign([ast.Subscript(name("ret__v"), ast.Constant(0), ast.Store())], s.value))
        out.append(ast.Assign([ast.Subscript(name("ret__f"), ast.Constant(0), ast.Store())], ast.Constant(1)))
        out.append(ast.Return(None))
        return [ast.copy_location(x, s) for x in out]


class _LoopVarOut(ast.NodeTransformer):
    """`for i in ...: body` with `i` read after the loop: the loop runs over a
    fresh name and the body first sets `i`, an ordinary local the host gets
    back (a kernel's loop index ends with its loop)."""

    def __init__(self, t, names):
        self.t, self.names = t, names

    def visit_For(self, s):
        self.generic_visit(s)
        if isinstance(s.target, ast.Name) and s.target.id in self.names:
            n = s.target.id
            it = self.t.fresh(f"{n}_it")
            self.t.env[it] = self.t.env.get(n)
            s.body.insert(0, ast.copy_location(ast.Assign([name(n, ast.Store())], name(it)), s))
            s.target = ast.copy_location(name(it, ast.Store()), s.target)
        return s


def serial(t, block: list[ast.stmt]) -> list[ast.stmt]:
    """Host statements running `block` as one work item."""
    kept = loop_vars(block) & _reads_after(t.fdef, block)
    if kept:
        block = [ast.fix_missing_locations(_LoopVarOut(t, kept).visit(_clone(s))) for s in block]
    stored = set(assigned_names(block)) - loop_vars(block)
    live_in = set()
    first: dict = {}
    for _, _, n, is_read in _events(block):
        first.setdefault(n, is_read)
    # A name the block may leave unwritten (assigned only in a branch or a
    # loop) keeps the value it had: it goes in too.
    sure, before = _unconditional_writes(block), _defined_before(t, block)
    # A loop index handed back keeps a value the host gave it (`i = -1` before
    # a loop that may not run), not one it had only as an earlier loop's index
    # (no host variable holds that one).
    on_host = _assigned_before(t, block)
    for n in stored:
        if n in t.env and (first.get(n) or (n in before and n not in sure and (n not in kept or n in on_host))):
            live_in.add(n)
    outside = _reads_outside(t.fdef, block)
    live_out = sorted(n for n in stored if n in outside and isinstance(t.env.get(n), str) and t.env[n] in _SCALARS)
    free = {n for n in read_names(block) if n in t.env} - stored - loop_vars(block)
    params, kws = _params(t, free)
    host: list[ast.stmt] = []
    tail: list[ast.stmt] = []
    for n in sorted(live_in):
        ty = t.env.get(n)
        params.append(ast.arg(f"{n}__in", pk_type(ty) if isinstance(ty, str) and ty in _SCALARS else None))
        kws.append(ast.keyword(f"{n}__in", name(n)))
    # The kernel's outputs, (name, dtype): rt.serial makes each a one-element
    # View and hands back their values (the host names they assign, in order).
    outs: list[tuple[str, str]] = []
    targets: list[str] = []
    for n in live_out:
        params.append(ast.arg(f"{n}__out"))
        outs.append((f"{n}__out", t.env[n]))
        targets.append(n)
        tail.append(ast.Assign([ast.Subscript(name(f"{n}__out"), ast.Constant(0), ast.Store())], name(n)))
    rets = _Returns(t)
    body = []
    for s in block:
        r = rets.visit(_clone(s))
        body.extend(r if isinstance(r, list) else [r])
    ret_ty = None
    if rets.seen:
        ret_ty = t.returns if isinstance(t.returns, str) and t.returns in _SCALARS else None
        for n, dt in (("ret__f", "int32"), ("ret__v", ret_ty)):
            if dt is None:
                continue
            params.append(ast.arg(n))
            outs.append((n, dt))
            targets.append(n)
    body = [ast.Assign([name(n, ast.Store())], name(f"{n}__in")) for n in sorted(live_in)] + _rewrite(t, body)
    body = _declare(t, body + tail, stored, t.env)
    kname = t.kernel_name("serial")
    _workunit(t, kname, "i__", None, params, body)
    launch = call("rt.serial", [name(kname), ast.Constant(tuple(outs))], kws)
    if targets:
        host.append(ast.Assign([ast.Tuple([name(n, ast.Store()) for n in targets], ast.Store())], launch))
    else:
        host.append(ast.Expr(launch))
    if rets.seen:
        value = name("ret__v") if ret_ty else ast.Constant(None)
        host.append(ast.If(name("ret__f"), [ast.Return(value)], []))
    return host


def emit_function(t, fname: str) -> None:
    """A jitted helper called from kernels, as a @pk.function (parameters typed
    at the call by the kernel language; locals declared with Numba's types)."""
    body = t.fdef.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    stored = set(assigned_names(body)) - loop_vars(body) - set(t.params)
    for p in t.params:
        if p in assigned_names(body):
            raise unsupported(
                t.ctx, assigned_names(body)[p], f"a helper called from a kernel may not assign its parameter '{p}'; use a local"
            )
    out = _declare(t, _rewrite(t, body), stored, t.env)
    params = [p for p in t.params if not isinstance(t.arg_types.get(p), Const)]
    fdef = ast.FunctionDef(
        fname,
        ast.arguments([], [ast.arg(p) for p in params], None, [], [], None, []),
        out or [ast.Pass()],
        [ast.parse("pk.function", mode="eval").body],
        None,
    )
    t.module.add(fdef)
