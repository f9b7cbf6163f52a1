"""Common spellings of Numba code rewritten, before anything is typed, into the
forms the translator takes: docstrings dropped, keyword arguments of NumPy
allocations and jitted helpers made positional (with the helper's defaults),
loops over a literal tuple unrolled, `s = a.shape` read through `a.shape`,
and `dtype=a.dtype` of a parameter resolved from the call's types."""

from __future__ import annotations

import ast
import copy
import inspect

import numpy as np

from ._errors import UnsupportedError

from ._versions import version_names

# A name that always means numpy (Names.lookup), whatever the module imported.
NUMPY = "__pk_numpy__"

_ALLOC_FIRST = {
    "empty": ["shape"],
    "zeros": ["shape"],
    "ones": ["shape"],
    "full": ["shape", "fill_value"],
    "empty_like": ["a"],
    "zeros_like": ["a"],
    "ones_like": ["a"],
    "full_like": ["a", "fill_value"],
}


def normalize(fdef: ast.FunctionDef, names, arg_types: dict) -> None:
    _constants(fdef, names, arg_types)
    _limits(fdef, names)
    _dtype_locals(fdef, names)
    _strip_strings(fdef)
    _ndenumerate(fdef, names)
    _ufunc_out(fdef, names)
    _Calls(names, arg_types).visit(fdef)
    _unroll(fdef)
    version_names(fdef)
    _shape_aliases(fdef)
    ast.fix_missing_locations(fdef)


def _constants(fdef, names, arg_types) -> None:
    """Parameters given a dtype or a jitted function: each read of them names
    that dtype (np.<name>) or that function."""
    from ._typer import Const, dtype_value

    subst = {}
    for p, t in arg_types.items():
        if not isinstance(t, Const):
            continue
        dt = dtype_value(t.value)
        if dt is not None:
            subst[p] = lambda node, dt=dt: ast.Attribute(ast.Name(NUMPY, ast.Load()), dt, ast.Load())
        else:
            alias = f"__pk_arg_{p}"
            names.globals[alias] = t.value
            subst[p] = lambda node, alias=alias: ast.Name(alias, ast.Load())
    if not subst:
        return

    class Read(ast.NodeTransformer):
        def visit_Name(self, n):
            if isinstance(n.ctx, ast.Load) and n.id in subst:
                return ast.copy_location(subst[n.id](n), n)
            return n

    for s in fdef.body:
        Read().visit(s)


def _limits(fdef, names) -> None:
    """np.iinfo(np.intp).max, np.finfo(np.float32).eps and the like: the number."""

    class Limit(ast.NodeTransformer):
        def visit_Attribute(self, n):
            self.generic_visit(n)
            c = n.value
            if not (
                isinstance(c, ast.Call)
                and len(c.args) == 1
                and not c.keywords
                and names.callee(c.func) in (("np", "iinfo"), ("np", "finfo"))
            ):
                return n
            try:
                info = getattr(np, names.callee(c.func)[1])(np.dtype(names.dtype_name(c.args[0])))
                value = getattr(info, n.attr)
            except (TypeError, ValueError, AttributeError, UnsupportedError):
                return n  # left for the typer to refuse, located
            if not isinstance(value, (int, float, np.number)):
                return n
            return ast.copy_location(
                ast.Call(
                    ast.Attribute(ast.Name(NUMPY, ast.Load()), np.asarray(value).dtype.name, ast.Load()),
                    [ast.Constant(value.item() if isinstance(value, np.generic) else value)],
                    [],
                ),
                n,
            )

    Limit().visit(fdef)


def _dtype_locals(fdef, names) -> None:
    """`dtype = np.int_` once at the top level, then `np.empty(n, dtype=dtype)`:
    each read of the name is that dtype."""
    stores: dict = {}
    for x in ast.walk(fdef):
        if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store):
            stores[x.id] = stores.get(x.id, 0) + 1
    subst: dict = {}
    keep = []
    for st in fdef.body:
        if (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Name)
            and stores.get(st.targets[0].id) == 1
            and isinstance(st.value, (ast.Attribute, ast.Name))
        ):
            try:
                subst[st.targets[0].id] = names.dtype_name(st.value)
                continue
            except UnsupportedError:
                pass
        keep.append(st)
    if not subst:
        return
    fdef.body = keep

    class Read(ast.NodeTransformer):
        def visit_Name(self, n):
            if isinstance(n.ctx, ast.Load) and n.id in subst:
                return ast.copy_location(ast.Attribute(ast.Name(NUMPY, ast.Load()), subst[n.id], ast.Load()), n)
            return n

    Read().visit(fdef)


def _ufunc_out(fdef, names) -> None:
    """`np.add(z, c, z)` or `np.add(z, c, out=z)` as a statement -> `z[...] = np.add(z, c)`."""
    for node in ast.walk(fdef):
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            for k, st in enumerate(stmts):
                c = st.value if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) else None
                kind = names.callee(c.func) if c is not None else None
                f = getattr(np, kind[1], None) if kind is not None and kind[0] == "np" else None
                if not isinstance(f, np.ufunc) or f.nout != 1:
                    continue
                outs = [kw.value for kw in c.keywords if kw.arg == "out"]
                if len(c.args) == f.nin + 1 and not c.keywords:
                    out = c.args[-1]
                elif len(c.args) == f.nin and [kw.arg for kw in c.keywords] == ["out"]:
                    out = outs[0]
                else:
                    continue
                value = ast.Call(c.func, c.args[: f.nin], [])
                target = ast.Subscript(out, ast.Slice(), ast.Store())
                stmts[k] = ast.copy_location(ast.Assign([target], ast.copy_location(value, c)), st)


def _ndenumerate(fdef, names) -> None:
    """`for idx, v in np.ndenumerate(a)` -> `for idx in np.ndindex(a.shape): v = a[idx]`."""
    for node in ast.walk(fdef):
        if not (
            isinstance(node, ast.For)
            and isinstance(node.iter, ast.Call)
            and len(node.iter.args) == 1
            and isinstance(node.iter.args[0], ast.Name)
            and isinstance(node.target, ast.Tuple)
            and len(node.target.elts) == 2
            and isinstance(node.target.elts[1], ast.Name)
            and names.callee(node.iter.func) == ("np", "ndenumerate")
        ):
            continue
        arr = node.iter.args[0].id
        idx, value = node.target.elts
        node.iter = ast.copy_location(
            ast.Call(
                ast.Attribute(ast.Name(NUMPY, ast.Load()), "ndindex", ast.Load()),
                [ast.Attribute(ast.Name(arr, ast.Load()), "shape", ast.Load())],
                [],
            ),
            node.iter,
        )
        node.target = idx
        read = copy.deepcopy(idx)
        for n in ast.walk(read):
            if isinstance(n, (ast.Name, ast.Tuple)):
                n.ctx = ast.Load()
        assign = ast.Assign([ast.Name(value.id, ast.Store())], ast.Subscript(ast.Name(arr, ast.Load()), read, ast.Load()))
        for n in ast.walk(assign):  # placed where the loop binds its names, which reads see as earlier
            ast.copy_location(n, node.target)
        node.body.insert(0, assign)


def _bodies(node):
    for field in ("body", "orelse", "finalbody"):
        stmts = getattr(node, field, None)
        if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
            yield field, stmts


def _strip_strings(fdef) -> None:
    """Docstrings and bare string statements (comments) do nothing."""
    for node in ast.walk(fdef):
        for field, stmts in list(_bodies(node)):
            kept = [
                s for s in stmts if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str))
            ]
            setattr(node, field, kept or [ast.Pass()])


class _Calls(ast.NodeTransformer):
    def __init__(self, names, arg_types):
        self.names, self.arg_types = names, arg_types

    def visit_Attribute(self, e):
        self.generic_visit(e)
        # `a.dtype` of an array parameter: its dtype's name, which dtype= takes.
        if e.attr == "dtype" and isinstance(e.value, ast.Name) and isinstance(e.ctx, ast.Load):
            t = self.arg_types.get(e.value.id)
            if hasattr(t, "dtype") and hasattr(t, "ndim"):
                return ast.copy_location(ast.Attribute(ast.Name(NUMPY, ast.Load()), t.dtype, ast.Load()), e)
        return e

    def visit_Call(self, e):
        self.generic_visit(e)
        kind = self.names.callee(e.func)
        if kind is None or not e.keywords:
            return e if kind is None or kind[0] != "helper" else _with_defaults(e, kind[1])
        if kind[0] == "np" and kind[1] in _ALLOC_FIRST:
            order = _ALLOC_FIRST[kind[1]]
            given = {k.arg: k.value for k in e.keywords}
            args = list(e.args)
            for p in order[len(args) :]:
                if p not in given:
                    break
                args.append(given.pop(p))
            e.args, e.keywords = args, [k for k in e.keywords if k.arg in given]
        elif kind[0] == "helper":
            return _with_defaults(e, kind[1])
        return e


def _with_defaults(e: ast.Call, helper) -> ast.Call:
    """A call of a jitted helper with every parameter given by position."""
    try:
        sig = inspect.signature(helper.py_func)
    except (TypeError, ValueError):
        return e
    params = list(sig.parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params) or any(isinstance(a, ast.Starred) for a in e.args):
        return e
    given = {k.arg: k.value for k in e.keywords if k.arg is not None}
    args = list(e.args)
    for p in params[len(args) :]:
        if p.name in given:
            args.append(given.pop(p.name))
        elif p.default is not p.empty and (p.default is None or isinstance(p.default, (bool, int, float, complex))):
            args.append(ast.Constant(p.default))
        else:
            return e
    if given:
        return e
    e.args, e.keywords = args, []
    return e


def _breaks(body) -> bool:
    """A break or continue that belongs to this loop (not to a loop inside it)."""
    stack = list(body)
    while stack:
        s = stack.pop()
        if isinstance(s, (ast.Break, ast.Continue)):
            return True
        if isinstance(s, (ast.For, ast.While)):
            stack.extend(s.orelse)
            continue
        for _, stmts in _bodies(s):
            stack.extend(stmts)
    return False


def _unroll(fdef) -> None:
    """`for d in (-1, 0, 1): body` -> `d = -1; body; d = 0; body; d = 1; body`."""
    for node in list(ast.walk(fdef)):
        for field, stmts in list(_bodies(node)):
            out = []
            for s in stmts:
                if (
                    isinstance(s, ast.For)
                    and isinstance(s.iter, (ast.Tuple, ast.List))
                    and not s.orelse
                    and isinstance(s.target, (ast.Name, ast.Tuple))
                    and s.iter.elts
                    and not any(isinstance(x, ast.Starred) for x in s.iter.elts)
                    and not _breaks(s.body)
                ):
                    for elt in s.iter.elts:
                        target = copy.deepcopy(s.target)
                        for n in ast.walk(target):
                            if isinstance(n, (ast.Name, ast.Tuple)):
                                n.ctx = ast.Store()
                        out.append(ast.copy_location(ast.Assign([target], copy.deepcopy(elt)), s))
                        out.extend(copy.deepcopy(s.body))
                    continue
                out.append(s)
            setattr(node, field, out)
    # Loops unrolled inside unrolled bodies.
    if any(
        isinstance(n, ast.For) and isinstance(n.iter, (ast.Tuple, ast.List)) and not _breaks(n.body) and not n.orelse
        for n in ast.walk(fdef)
    ):
        _unroll(fdef)


def _stores(fdef) -> dict:
    out: dict = {}
    for n in ast.walk(fdef):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out[n.id] = out.get(n.id, 0) + 1
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            out[n.target.id] = out.get(n.target.id, 0) + 1
    return out


def _shape_aliases(fdef) -> None:
    """`s = a.shape` (once, `a` never rebound): every read of s is a.shape."""
    stores = _stores(fdef)
    aliases = {}
    for node in ast.walk(fdef):
        for field, stmts in list(_bodies(node)):
            for s in stmts:
                if (
                    isinstance(s, ast.Assign)
                    and len(s.targets) == 1
                    and isinstance(s.targets[0], ast.Name)
                    and isinstance(s.value, ast.Attribute)
                    and s.value.attr == "shape"
                    and isinstance(s.value.value, ast.Name)
                    and stores.get(s.targets[0].id) == 1
                    and s.value.value.id not in stores
                ):
                    aliases[s.targets[0].id] = (s.value.value.id, s)
    if not aliases:
        return

    class Read(ast.NodeTransformer):
        def visit_Name(self, n):
            if isinstance(n.ctx, ast.Load) and n.id in aliases:
                return ast.copy_location(ast.Attribute(ast.Name(aliases[n.id][0], ast.Load()), "shape", ast.Load()), n)
            return n

    Read().visit(fdef)
    dropped = {id(s) for _, s in aliases.values()}
    for node in ast.walk(fdef):
        for field, stmts in list(_bodies(node)):
            setattr(node, field, [s for s in stmts if id(s) not in dropped] or [ast.Pass()])
