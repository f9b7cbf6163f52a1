"""Kernel statements: a copy of a statement that keeps the user's lines, and
locals declared with their Numba types."""

from __future__ import annotations

import ast

from ._arrayexpr import name
from ._errors import unsupported
from ._kbody import assigned_names, pk_type, zero_of
from ._typer import Arr
from ._types import DTYPES


def declare(t, body: list, locals_: set, env) -> list:
    """Kernel locals declared with their Numba types before the body (the
    kernel language would otherwise type each from its first assignment)."""
    decl = []
    for n in sorted(locals_):
        ty = env.get(n)
        if isinstance(ty, str) and ty in SCALARS:
            decl.append(ast.AnnAssign(name(n, ast.Store()), pk_type(ty), zero_of(ty), 1))
        elif isinstance(ty, Arr):
            raise unsupported(
                t.ctx,
                assigned_names(body)[n],
                f"'{n}' is an array made inside a kernel; allocate arrays outside prange loops and serial loops",
            )
    return decl + body


SCALARS = DTYPES


def clone(s):
    c = ast.parse(ast.unparse(s)).body[0]
    for a, b in zip(ast.walk(s), ast.walk(c)):
        if hasattr(a, "lineno"):
            b.lineno, b.col_offset = a.lineno, a.col_offset
    return c
