"""Array temporaries of a kernel body replaced by their expressions.

`d = (-(p - points)**2) / (2*b**2)` inside a prange loop, then `np.min(d)` and
`np.sum(np.exp(d - m))`: a kernel cannot allocate d, but each use can compute
it where it is read (the reductions loop over points). Inlining is done only
where it cannot change a value: the temporary is bound once, by an
elementwise expression, everything it reads is bound at most once before it
and never written through an index in the body, and no use indexes it or
hands it to a function (which could keep or change it)."""

from __future__ import annotations

import ast
import copy

from ._arrayexpr import ELEMENTWISE_NP
from ._typer import Arr

_EXPR_OK = (
    ast.BinOp,
    ast.UnaryOp,
    ast.Compare,
    ast.Name,
    ast.Constant,
    ast.Subscript,
    ast.Call,
    ast.Slice,
    ast.Tuple,
    ast.IfExp,
    ast.BoolOp,
)


def _elementwise(t, e) -> bool:
    in_funcs = {id(x) for c in ast.walk(e) if isinstance(c, ast.Call) for x in ast.walk(c.func)}
    for n in ast.walk(e):
        if id(n) in in_funcs:  # np.exp's `np.exp`
            continue
        if isinstance(n, ast.expr) and not isinstance(n, _EXPR_OK):
            return False
        if isinstance(n, ast.Call):
            kind = t.names.callee(n.func)
            if kind is None or not (kind[0] == "math" or kind[0] == "np" and kind[1] in ELEMENTWISE_NP):
                return False
    return True


def _uses_ok(body, name: str) -> bool:
    """Every read of `name` is a value (not indexed, not a function's argument other than NumPy's)."""
    for n in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name:
            return False
        if isinstance(n, ast.Call) and any(isinstance(a, ast.Name) and a.id == name for a in n.args):
            f = n.func
            if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)):
                return False  # a helper or builtin given the array
    return True


def inline_temporaries(t, body: list) -> list:
    tree = ast.Module(body=body, type_ignores=[])
    stores: dict = {}
    written: set = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name):
            written.add(n.value.id)
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            stores[n.target.id] = stores.get(n.target.id, 0) + 2
    subst: dict = {}

    class Sub(ast.NodeTransformer):
        def visit_Name(self, n):
            if isinstance(n.ctx, ast.Load) and n.id in subst:
                return copy.deepcopy(subst[n.id])
            return n

    out, bound = [], set()
    for k, st in enumerate(body):
        if subst:
            st = Sub().visit(st)
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            n = st.targets[0].id
            reads = {x.id for x in ast.walk(st.value) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)}
            if (
                stores.get(n) == 1
                and n not in written
                and isinstance(t.type_of(st.value), Arr)
                and _elementwise(t, st.value)
                and _uses_ok(body[k + 1 :], n)
                and all(stores.get(r, 0) == 0 or (stores[r] == 1 and r in bound) for r in reads)
                and not reads & written
            ):
                subst[n] = st.value
                continue
        for x in ast.walk(st):
            if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store):
                bound.add(x.id)
        out.append(st)
    return out
