"""`python -m pykokkos migrate prog.py -o out.py`: a Numba program rewritten as
plain PyKokkos source, for users leaving Numba for good.

Numba learns a function's types at its first call; so does migrate: it runs the
program once under pykokkos.numba (`import numba` resolving to it), then writes
the program back with every jitted function that ran replaced by its
translation (workunits, @pk.function helpers, the host code that launches them
and a caller keeping the original signature). Functions that never ran stay as
plain Python, with a comment saying so.
"""

from __future__ import annotations

import ast
import contextlib
import runpy
import sys

HEADER_IMPORTS = ["import math", "import numpy as np", "import pykokkos as pk", "from pykokkos.numba import rt"]


def _generated_defs(text: str) -> list[tuple[str, str]]:
    """(name, source) of each top-level definition of a generated module."""
    tree = ast.parse(text)
    return [(n.name, ast.unparse(n)) for n in tree.body if isinstance(n, ast.FunctionDef)]


def _is_numba_module(name: str) -> bool:
    return name.split(".")[0] == "numba" or name == "pykokkos.numba"


def _is_numba_import(node) -> bool:
    if isinstance(node, ast.Import):
        return all(_is_numba_module(a.name) for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return _is_numba_module(node.module or "")
    return False


def _decorated_by_numba(node, jitted: set) -> bool:
    return isinstance(node, ast.FunctionDef) and node.name in jitted


def run_and_collect(path: str, argv: list[str]):
    """Runs the program under pykokkos.numba; the dispatchers defined in its file."""
    import pykokkos.numba as pkn
    from pykokkos.numba import _dispatch

    saved_mod, saved_argv = sys.modules.get("numba"), sys.argv
    sys.modules["numba"] = pkn
    sys.argv = [path, *argv]
    _dispatch.ALL.clear()
    try:
        # The program's own output goes to stderr: stdout may be the migrated source.
        with contextlib.redirect_stdout(sys.stderr):
            runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        if e.code not in (0, None):
            raise
    finally:
        sys.argv = saved_argv
        if saved_mod is None:
            sys.modules.pop("numba", None)
        else:
            sys.modules["numba"] = saved_mod
    import os

    target = os.path.realpath(path)
    return [d for d in _dispatch.ALL if os.path.realpath(d.py_func.__code__.co_filename) == target]


def migrate(path: str, argv: list[str]) -> str:
    dispatchers = run_and_collect(path, argv)
    with open(path) as f:
        source = f.read()
    tree = ast.parse(source)
    lines = source.splitlines(True)
    jitted = {d.py_func.__name__: d for d in dispatchers}
    emitted: dict[str, str] = {}  # generated name -> its source (one copy of shared helpers)
    edits = []  # (first line, last line, replacement text), 1-based inclusive
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if _is_numba_import(node):
            edits.append((first, node.end_lineno, ""))
        elif _decorated_by_numba(node, set(jitted)):
            d = jitted[node.name]
            texts = list(d._sources.values())
            if not texts:
                plain = "".join(lines[node.lineno - 1 : node.end_lineno]).rstrip("\n")
                from_kernels = any(f"def {node.name}_fn" in t for x in dispatchers for t in x._sources.values())
                note = (
                    f"# {node.name}: called only from kernels (as {node.name}_fn); kept as Python for host callers.\n"
                    if from_kernels
                    else f"# {node.name}: never called while migrating, so its types are unknown: kept as Python.\n"
                )
                edits.append((first, node.end_lineno, note + plain + "\n"))
                continue
            out = []
            if len(texts) > 1:
                out.append(f"# {node.name} ran with {len(texts)} argument signatures; written for the first.\n")
            for name, src in _generated_defs(texts[0]):
                if emitted.get(name) == src:
                    continue
                emitted[name] = src
                out.append(src + "\n\n\n")
            edits.append((first, node.end_lineno, "".join(out).rstrip("\n") + "\n"))
    for first, last, text in sorted(edits, reverse=True):
        lines[first - 1 : last] = [text]
    body = "".join(lines)
    have = {ln.strip() for ln in body.splitlines()}
    add = [i for i in HEADER_IMPORTS if i not in have]
    doc = (
        f"# Migrated from {path} by `python -m pykokkos migrate`: Numba's jitted functions are\n"
        "# PyKokkos workunits and the host code launching them; the rest is unchanged.\n"
    )
    # Imports go after a module docstring and __future__ imports.
    insert_at = 0
    for node in tree.body:
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)) or (
            isinstance(node, ast.ImportFrom) and node.module == "__future__"
        ):
            insert_at = node.end_lineno
        else:
            break
    out_lines = body.splitlines(True)  # edits start below insert_at: its lines did not move
    head = "".join(out_lines[:insert_at])
    text = doc + head + "\n".join(add) + ("\n" if add else "") + "".join(out_lines[insert_at:])
    return text if text.endswith("\n") else text + "\n"


def main(args) -> int:
    import shlex

    text = migrate(args.program, shlex.split(args.args))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return 0
