"""Each straight-line rebinding of a name a new variable, as Numba's SSA form
makes it: in `x = conv(x32)` (float32) after `x = norm(p)` (float64) the second
x keeps its own type instead of being widened to the first's, which would run
the code after it at another precision. A plain assignment at the function's
top level starts a new version; every other binding (in a loop, a branch, an
augmented assignment) rebinds the version current there, which is what a loop
carrying a value needs (its versions are joined, as Numba's phi nodes are)."""

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
    count: dict[str, int] = {n: 1 for n in params}
    for s in fdef.body:
        if isinstance(s, ast.Assign):
            for n in (n for t in s.targets for n in _targets(t)):
                count[n] = count.get(n, 0) + 1
    fixed = {n for x in ast.walk(fdef) if isinstance(x, (ast.Global, ast.Nonlocal)) for n in x.names}
    fixed |= {x.id for x in ast.walk(fdef) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Del)}
    versioned = {n for n, c in count.items() if c >= 2 and n not in fixed}
    if not versioned:
        return
    taken = {x.id for x in ast.walk(fdef) if isinstance(x, ast.Name)} | params
    cur: dict[str, str] = {}

    class Current(ast.NodeTransformer):
        """Every name, read or bound, as its current version."""

        def visit_Name(self, n):
            if n.id in cur:
                return ast.copy_location(ast.Name(cur[n.id], n.ctx), n)
            return n

    seen: dict[str, int] = {n: 1 for n in params}
    for k, s in enumerate(fdef.body):
        if not isinstance(s, ast.Assign):
            fdef.body[k] = Current().visit(s)
            continue
        s.value = Current().visit(s.value)
        s.targets = [t if isinstance(t, (ast.Name, ast.Tuple, ast.List)) else Current().visit(t) for t in s.targets]  # x[i] = ... reads x
        for t in s.targets:
            _rebind(t, versioned, cur, seen, taken, Current())


def _rebind(t, versioned, cur, seen, taken, current) -> None:
    if isinstance(t, ast.Name):
        if t.id not in versioned:
            return
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
            if isinstance(e, (ast.Name, ast.Tuple, ast.List)):
                _rebind(e, versioned, cur, seen, taken, current)
            else:  # a, b[i] = ... or a, *b = ...: b as it is
                current.visit(e)
