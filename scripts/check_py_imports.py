#!/usr/bin/env python3
"""Checks the Python package's imports: every `import` and `from ... import`
of a module of the package (at any depth: an import inside a function is
still an edge, the usual way a cycle gets hidden) is an edge between two
files; no file may reach itself, and every edge looks down the layers below
(or stays in its own layer). `make lint` runs it; it exits 1 and prints each
cycle and each edge upwards.

`from . import x` counts as importing the module x when x is a module of the
package, else the package's __init__. Imports under `if TYPE_CHECKING:` are
type annotations, not imports at run time, and are left out.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from check_layers import cycles  # (the same Tarjan pass over files, here over modules)

ROOT = Path(__file__).resolve().parents[1] / "python"
PACKAGE = "pykokkos"

# Layers, lowest first; the longest prefix of a module's name decides its
# layer. `_native` is the extension (its stub `_native.pyi` stands for it).
# The upstream module paths (`pykokkos.mpi`, `.trace`, `.interface`, `.linalg`)
# are fixed by PyKokkos' API, so they are named here rather than moved.
LAYERS: list[list[str]] = [
    ["pykokkos._native"],
    ["pykokkos.install"],  # build tooling: imports nothing else of the package
    ["pykokkos.runtime", "pykokkos.trace", "pykokkos.mpi"],
    ["pykokkos.compat"],
    ["pykokkos"],  # the public API (__init__.py), assembled from the layers below
    ["pykokkos.interface", "pykokkos.linalg", "pykokkos.numba"],  # users of the public API
    ["pykokkos.tools", "pykokkos.__main__"],
]


def layer(module: str) -> int:
    best, at = -1, -1
    for i, names in enumerate(LAYERS):
        for n in names:
            # (The bare package names only itself: a module missing from
            # LAYERS must be reported, not placed with the public API.)
            inside = module.startswith(n + ".") and n != PACKAGE
            if (module == n or inside) and len(n) > best:
                best, at = len(n), i
    return at


def module_name(f: Path) -> str:
    parts = list(f.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_only(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(x) for s in node.body for x in ast.walk(s)}
    return skip


def imports(f: Path, modules: dict[str, Path]) -> set[str]:
    here = module_name(f)
    package = here if f.name == "__init__.py" else here.rpartition(".")[0]
    tree = ast.parse(f.read_text(), str(f))
    skip = _type_checking_only(tree)
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                name = a.name
                while name and name not in modules:
                    name = name.rpartition(".")[0]
                if name:
                    out.add(name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith(PACKAGE):
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                if sub in modules:
                    out.add(sub)
                elif target in modules:
                    out.add(target)
    out.discard(here)
    return out


def main() -> int:
    files = sorted((ROOT / PACKAGE).rglob("*.py"))
    modules = {module_name(f): f for f in files}
    for stub in sorted((ROOT / PACKAGE).rglob("*.pyi")):
        modules.setdefault(module_name(stub), stub)  # an extension module
    graph = {module_name(f): imports(f, modules) for f in files}
    graph.update({m: set() for m, f in modules.items() if f.suffix == ".pyi"})
    # Every edge must look down, imports of a parent package's __init__
    # included (`import pykokkos` from the runtime is an edge upwards).
    up = [(a, b) for a in sorted(graph) for b in sorted(graph[a]) if layer(b) > layer(a)]
    # A package's __init__ imported by its own modules is Python's normal
    # shape (the parent runs first); only cycles between the modules count.
    for m in graph:
        graph[m] = {t for t in graph[m] if not (m.startswith(t + ".") and t in modules and modules[t].name == "__init__.py")}
    found = cycles(graph)
    for comp in found:
        edges = [f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp]
        print(f"import cycle among {len(comp)} modules:\n  " + "\n  ".join(edges))
    for a, b in up:
        print(f"import upwards: {a} (layer {layer(a)}) imports {b} (layer {layer(b)})")
    unplaced = sorted(m for m in graph if layer(m) < 0)
    for m in unplaced:
        print(f"module in no layer: {m} (add it to LAYERS)")
    return 1 if found or up or unplaced else 0


if __name__ == "__main__":
    sys.exit(main())
