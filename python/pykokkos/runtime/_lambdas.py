"""Lambdas as kernels, as PyKokkos' workloads write them:

    pk.parallel_for(n, lambda i: pk.printf("%d\\n", i))
    pk.parallel_for(n, lambda i: self.a[i] + y, self.a)        # a[i] = ...
    total = pk.parallel_reduce(n, lambda i, acc: acc + x[i])    # acc += x[i]

Each lambda becomes a workunit once (per code object): its body is read from
the source, `self.x` and the variables it closes over become arguments, and
module names resolve as in any kernel. Launches then go the usual way
(recorded and fused under PK_FUSE=1)."""

from __future__ import annotations

import ast
import linecache
import types

from ._types import PATTERN, WIRE

_BUILT: dict = {}


class _SelfFields(ast.NodeTransformer):
    """`self.x` -> `self_x` (an argument of the kernel)."""

    def __init__(self, owner: str):
        self.owner, self.fields = owner, []

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == self.owner:
            if node.attr not in self.fields:
                self.fields.append(node.attr)
            return ast.copy_location(ast.Name(id=f"{self.owner}_{node.attr}", ctx=node.ctx), node)
        return self.generic_visit(node)


def _adds(e, acc: str) -> bool:
    """Whether `e` is `acc` plus other terms: acc appears once, reached only
    through additions (or as the left side of a subtraction)."""
    uses = sum(isinstance(n, ast.Name) and n.id == acc for n in ast.walk(e))
    node = e
    while uses == 1:
        if isinstance(node, ast.Name):
            return node.id == acc
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, (ast.Add, ast.Sub)):
            return False
        in_left = any(isinstance(n, ast.Name) and n.id == acc for n in ast.walk(node.left))
        if not in_left and isinstance(node.op, ast.Sub):
            return False
        node = node.left if in_left else node.right
    return False


class _Replace(ast.NodeTransformer):
    """The accumulator taken as 0."""

    def __init__(self, acc: str):
        self.acc = acc

    def visit_Name(self, node):
        return ast.Constant(0) if node.id == self.acc else node


_FILES: dict = {}


def _lambda_node(fn) -> ast.Lambda:
    """The lambda's node in its file's syntax tree (by line and parameters)."""
    code = fn.__code__
    path = code.co_filename
    if path not in _FILES:
        text = "".join(linecache.getlines(path))
        try:
            _FILES[path] = ast.parse(text) if text else None
        except SyntaxError:
            _FILES[path] = None
    tree = _FILES[path]
    if tree is None:
        raise TypeError("cannot read the source of a lambda kernel: define it in a file")
    params = list(code.co_varnames[: code.co_argcount])
    found = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno and [a.arg for a in n.args.args] == params
    ]
    if len(found) != 1:
        raise TypeError(f"cannot tell the lambda kernel at {path}:{code.co_firstlineno} apart from others on its line: write it with def")
    return found[0]


def _build(fn, pattern: int, has_target: bool):
    lam = _lambda_node(fn)
    params = [a.arg for a in lam.args.args]
    free = list(fn.__code__.co_freevars)
    owner = "self" if "self" in free else None
    body = lam.body
    fields = []
    if owner:
        t = _SelfFields(owner)
        body = t.visit(body)
        fields = t.fields
    expr = ast.unparse(body)
    if pattern == PATTERN["parallel_reduce"]:  # reduce: `acc + e` or `e + acc`
        if len(params) != 2:
            raise TypeError("a reduction lambda takes (i, acc) and returns acc + value")
        acc = params[1]
        if not _adds(body, acc):
            raise TypeError(f"a reduction lambda returns {acc} + value, not {expr}")
        rest = ast.unparse(_Replace(acc).visit(body))  # the value added: acc taken as 0
        stmt = f"{acc} += {rest}"
    elif pattern in WIRE["reducers"].values():  # a built-in reducer: the lambda returns the new accumulator
        if len(params) != 2:
            raise TypeError("a reduction lambda takes (i, acc) and returns the new accumulator")
        stmt = f"{params[1]} = {expr}"
    elif has_target:
        stmt = f"pk_lambda_out[{params[0]}] = {expr}"
    else:
        stmt = expr
    args = params + [f"{owner}_{f}" for f in fields] + [v for v in free if v != owner]
    if has_target:
        args.append("pk_lambda_out")
    name = f"lambda_line{fn.__code__.co_firstlineno}"
    src = f"def {name}({', '.join(args)}):\n    {stmt}\n"
    filename = f"<pykokkos lambda {fn.__code__.co_filename}:{fn.__code__.co_firstlineno}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    code = compile(src, filename, "exec")
    made = types.FunctionType(next(c for c in code.co_consts if isinstance(c, types.CodeType)), fn.__globals__, name)
    from ._kernels import workunit

    return workunit(made), owner, fields


def lambda_kernel(fn, pattern: int, target=None):
    """(workunit, keyword arguments) for a launch of the lambda `fn`."""
    key = (fn.__code__, pattern, target is not None)
    if key not in _BUILT:
        _BUILT[key] = _build(fn, pattern, target is not None)
    wu, owner, fields = _BUILT[key]
    cells = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))
    kwargs = {k: v for k, v in cells.items() if k != owner}
    if owner:
        obj = cells[owner]
        kwargs.update({f"{owner}_{f}": getattr(obj, f) for f in fields})
    if target is not None:
        kwargs["pk_lambda_out"] = target
    return wu, kwargs


def is_lambda(fn) -> bool:
    return isinstance(fn, types.LambdaType) and fn.__name__ == "<lambda>"
