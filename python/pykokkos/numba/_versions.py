"""Each straight-line rebinding of a name a new variable, as Numba's SSA form
makes it: in `x = conv(x32)` (float32) after `x = norm(p)` (float64) the second
x keeps its own type instead of being widened to the first's, which would run
the code after it at another precision. Only names bound by plain assignments
at the function's top level are versioned; a name also bound inside a loop,
a branch or a with block keeps one variable (its types are joined)."""
from __future__ import annotations

import ast


def _targets(t) -> list[str]:
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, (ast.Tuple, ast.List)):
        return [n for e in t.elts for n in _targets(e)]
    return []


def version_names(fdef: ast.FunctionDef) -> None:
    params = {a.arg for a in fdef.args.args}
    count: dict[str, int] = {}
    fixed: set[str] = set()  # bound some other way: never versioned
    for s in fdef.body:
        if isinstance(s, ast.Assign):
            for t in s.targets:
                for n in _targets(t):
                    count[n] = count.get(n, 0) + 1
            inner = [s.value]
        else:
            inner = [s]
        for node in inner:
            for x in ast.walk(node):
                if isinstance(x, ast.Name) and isinstance(x.ctx, (ast.Store, ast.Del)):
                    fixed.add(x.id)
                elif isinstance(x, (ast.Global, ast.Nonlocal)):
                    fixed.update(x.names)
    taken = {x.id for x in ast.walk(fdef) if isinstance(x, ast.Name)} | params
    versioned = {n for n, c in count.items() if n not in fixed and c + (n in params) >= 2}
    if not versioned:
        return
    cur: dict[str, str] = {}

    class Reads(ast.NodeTransformer):
        def visit_Name(self, n):
            if isinstance(n.ctx, ast.Load) and n.id in cur:
                return ast.copy_location(ast.Name(cur[n.id], ast.Load()), n)
            return n

    seen: dict[str, int] = {n: 1 for n in params}
    for s in fdef.body:
        if isinstance(s, ast.Assign):
            s.value = Reads().visit(s.value)
            s.targets = [Reads().visit(t) for t in s.targets]  # x[i] = ... reads x
            for t in s.targets:
                _rebind(t, versioned, cur, seen, taken)
        else:
            Reads().visit(s)


def _rebind(t, versioned, cur, seen, taken) -> None:
    if isinstance(t, ast.Name) and t.id in versioned:
        base = t.id
        k = seen.get(base, 0)
        seen[base] = k + 1
        if k == 0:
            cur.pop(base, None)
            return
        new = f"{base}__{k}"
        while new in taken:
            new += "_"
        taken.add(new)
        cur[base] = new
        t.id = new
    elif isinstance(t, (ast.Tuple, ast.List)):
        for e in t.elts:
            _rebind(e, versioned, cur, seen, taken)
