"""Python functions pykokkos.numba writes itself (a stencil's kernel and loop,
the callers of stencils and ufuncs from Python), made with their source
registered in linecache, so the translator reads them as it reads a user's
functions and errors show their lines."""

from __future__ import annotations

import linecache


def define(text: str, filename: str, scope: dict) -> dict:
    """Runs `text` (function definitions) in `scope` under `filename`; returns scope."""
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), scope)  # noqa: S102 - our own generated definitions
    return scope


def generated_caller(fname: str, text: str, filename: str, scope: dict):
    """A jitted function of ours (hidden from report())."""
    from ._dispatch import njit

    f = njit(define(text, filename, scope)[fname])
    f.generated = True
    return f
