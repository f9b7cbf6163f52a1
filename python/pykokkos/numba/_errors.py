"""Located errors: every construct outside the subset names the user's file,
line and column, shows the line with a caret, and says what to do."""

from __future__ import annotations

import ast
from dataclasses import dataclass


class UnsupportedError(TypeError):
    """A jitted function uses something pykokkos.numba cannot run as Kokkos
    kernels (the message names the file, line and construct)."""


@dataclass
class Source:
    """Where a function's source came from, to point errors at the user's lines."""

    filename: str
    first_line: int  # line of the function's first source line in the file
    lines: list[str]  # the dedented source lines
    indent: int  # columns removed by dedenting


def unsupported(src: Source, node, message: str) -> UnsupportedError:
    line = getattr(node, "lineno", 1)
    col = getattr(node, "col_offset", 0)
    text = src.lines[line - 1].rstrip("\n") if 0 < line <= len(src.lines) else ""
    where = f"{src.filename}:{src.first_line + line - 1}:{col + src.indent + 1}"
    shown = " " * src.indent + text
    caret = " " * (col + src.indent) + "^"
    return UnsupportedError(f"{where}: {message}\n    {shown}\n    {caret}")


def construct(node) -> str:
    """A short name of the construct, for messages."""
    if isinstance(node, ast.Call):
        try:
            return f"{ast.unparse(node.func)}(...)"
        except Exception:  # noqa: BLE001
            return "this call"
    return type(node).__name__
