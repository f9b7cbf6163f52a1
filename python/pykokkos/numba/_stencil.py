"""`@stencil`: a kernel written in relative indices (`a[-1, 0]`), applied at
every point whose whole neighbourhood lies inside the array, as Numba applies
it: the output has the first argument's shape, the border it cannot compute
is `cval` (0 unless given) in a new array and left as it was in `out=`.

A stencil becomes two generated jitted functions, which the rest of the
translation takes like any others: `elem(args..., i0, i1, ...)` returns the
kernel's value at one point (the body with each relative index shifted by the
point), and `apply(args..., out)` runs it over the interior in a prange loop.
Their source is registered with linecache under a name that says which stencil
of which file they come from, so errors point there."""

from __future__ import annotations

import ast
import itertools

from ._errors import unsupported
from ._pysource import define, generated_caller

_SERIAL = itertools.count()


def _offset(e):
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        v = _offset(e.operand)
        return None if v is None else (-v if isinstance(e.op, ast.USub) else v)
    return None


class Stencil:
    """What `@stencil` makes: callable from jitted code and from Python."""

    __pk_stencil__ = True

    def __init__(self, func, options: dict):
        bad = set(options) - {"neighborhood", "cval", "standard_indexing", "func_or_mode"}
        if bad:
            raise TypeError(f"stencil() got unexpected options {sorted(bad)}")
        if options.get("func_or_mode", "constant") != "constant":
            raise ValueError("stencil supports only the 'constant' mode, as Numba does")
        self.py_func = func
        self.options = options
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self._made: dict = {}

    # -- the generated functions ---------------------------------------------------
    def functions(self, ranks: tuple, ctx=None, node=None):
        """(elem, apply, ndim) for arguments of these ranks (None for a scalar)."""
        key = tuple(ranks)
        if key not in self._made:
            self._made[key] = self._generate(key, ctx, node)
        return self._made[key]

    def _fail(self, ctx, node, msg):
        if ctx is not None:
            return unsupported(ctx, node, f"stencil {self.__name__}: {msg}")
        return TypeError(f"stencil {self.__name__}: {msg}")

    def _generate(self, ranks, ctx, node):
        from ._dispatch import njit, prange
        from ._translate import parse

        fdef, _ = parse(self.py_func)
        params = [a.arg for a in fdef.args.args]
        if len(ranks) != len(params) or not ranks or ranks[0] is None:
            raise self._fail(ctx, node, "its first argument must be an array, and every parameter given")
        ndim = ranks[0]
        standard = set(self.options.get("standard_indexing", ()))
        relative = {p for p, r in zip(params, ranks) if r is not None and p not in standard}
        hood = self.options.get("neighborhood")
        body = [s for s in fdef.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        returns = [n for s in body for n in ast.walk(s) if isinstance(n, ast.Return)]
        if not body or not isinstance(body[-1], ast.Return) or len(returns) != 1 or body[-1].value is None:
            raise self._fail(ctx, node, "the kernel must end in its one return of a value")
        lo, hi = [0] * ndim, [0] * ndim
        index = [f"__pk_i{d}" for d in range(ndim)]
        fail = self._fail

        class Shift(ast.NodeTransformer):
            def visit_Subscript(self, n):
                self.generic_visit(n)
                if not (isinstance(n.value, ast.Name) and n.value.id in relative):
                    return n
                elts = list(n.slice.elts) if isinstance(n.slice, ast.Tuple) else [n.slice]
                if len(elts) != ndim:
                    raise fail(ctx, node, f"{ast.unparse(n)}: a relative index needs {ndim} offsets")
                for d, e in enumerate(elts):
                    off = _offset(e)
                    if off is None and hood is None:
                        raise fail(ctx, node, f"{ast.unparse(n)}: an index that is not a constant needs the neighborhood= option")
                    if off is not None:
                        lo[d], hi[d] = min(lo[d], off), max(hi[d], off)
                shifted = [ast.BinOp(ast.Name(index[d], ast.Load()), ast.Add(), e) for d, e in enumerate(elts)]
                n.slice = shifted[0] if ndim == 1 else ast.Tuple(shifted, ast.Load())
                return n

        body = [Shift().visit(s) for s in body]
        if hood is not None:
            if len(hood) != ndim:
                raise self._fail(ctx, node, f"neighborhood= gives {len(hood)} dimensions for {ndim}-d arrays")
            lo, hi = [int(h[0]) for h in hood], [int(h[1]) for h in hood]
        tag = next(_SERIAL)
        elem_name, apply_name = f"{self.__name__}__elem{tag}", f"{self.__name__}__apply{tag}"
        elem = ast.FunctionDef(elem_name, ast.arguments([], [ast.arg(p) for p in params + index], None, [], [], None, []), body, [], None)
        first = params[0]
        loop: ast.stmt = ast.Assign(
            [
                ast.Subscript(
                    ast.Name("__pk_out", ast.Load()),
                    ast.Tuple([ast.Name(i, ast.Load()) for i in index], ast.Load()) if ndim > 1 else ast.Name(index[0], ast.Load()),
                    ast.Store(),
                )
            ],
            ast.Call(ast.Name(elem_name, ast.Load()), [ast.Name(p, ast.Load()) for p in params + index], []),
        )
        for d in reversed(range(ndim)):
            bounds = [
                ast.Constant(-min(0, lo[d])),
                ast.BinOp(
                    ast.Subscript(ast.Attribute(ast.Name(first, ast.Load()), "shape", ast.Load()), ast.Constant(d), ast.Load()),
                    ast.Sub(),
                    ast.Constant(max(0, hi[d])),
                ),
            ]
            loop = ast.For(
                ast.Name(index[d], ast.Store()),
                ast.Call(ast.Name("__pk_prange" if d == 0 else "range", ast.Load()), bounds, []),
                [loop],
                [],
            )
        apply = ast.FunctionDef(
            apply_name, ast.arguments([], [ast.arg(p) for p in params + ["__pk_out"]], None, [], [], None, []), [loop], [], None
        )
        module = ast.fix_missing_locations(ast.Module([elem, apply], []))
        text = ast.unparse(module) + "\n"
        code = self.py_func.__code__
        filename = f"<stencil {self.__name__} of {code.co_filename}:{code.co_firstlineno}>"
        scope = define(text, filename, dict(self.py_func.__globals__, __pk_prange=prange))
        e = njit(scope[elem_name])
        scope[elem_name] = e
        a = njit(parallel=True)(scope[apply_name])
        e.generated = a.generated = True
        return e, a, ndim

    # -- a call from Python --------------------------------------------------------
    def __call__(self, *args, out=None):
        """Called from Python (not from a jitted function): a jitted caller of
        this stencil, so the same generated code runs."""
        key = ("call", out is not None, len(args))
        if key not in self._made:
            names = [f"a{k}" for k in range(len(args))]
            call = ", ".join(names) + (", out=out" if out is not None else "")
            params = ", ".join(names + (["out"] if out is not None else []))
            fname = f"{self.__name__}__call{'_out' if out is not None else ''}{len(args)}"
            text = f"def {fname}({params}):\n    return __pk_stencil({call})\n"
            self._made[key] = generated_caller(fname, text, f"<{fname} of stencil {self.__name__}>", {"__pk_stencil": self})
        f = self._made[key]
        return f(*args, out) if out is not None else f(*args)


def stencil(func_or_mode="constant", **options):
    """@stencil, @stencil() and @stencil(neighborhood=..., cval=..., standard_indexing=...)."""
    if callable(func_or_mode):
        return Stencil(func_or_mode, options)

    def wrap(func):
        return Stencil(func, dict(options, func_or_mode=func_or_mode))

    return wrap


__all__ = ["Stencil", "stencil"]
