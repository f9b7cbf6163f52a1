#!/usr/bin/env python3
"""Checks the shape of src/: no import cycle between files, layers that only
look down, and no file over the line budget (exceptions are named below, each
with its reason). `make lint` runs it; it exits 1 on any finding.

An import is any path a file names: `use` items (braces expanded) and inline
`crate::a::b`, `super::x`, `self::x` paths, and `child::x` for a module the
file declares. A path resolves to the deepest file of src/ it names. `mod x;`
declarations are not imports, and `#[cfg(test)]` modules are not read.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
BUDGET = 400

# Files allowed over the budget, and why. Each is one job whose parts are
# easier to read together than apart.
OVER_BUDGET: dict[str, str] = {
    "frontend/parse.rs": "the one file that may see rustpython's AST (fenced on purpose, so the "
    "parser can be swapped by rewriting one file): one conversion per accepted node kind, plus tests",
}

# Layers, lowest first. A file may import files of its own top-level module
# and of lower layers only; modules sharing a layer are siblings that must not
# import each other. The most specific prefix of a file's path decides.
LAYERS: list[list[str]] = [
    ["types", "config.rs", "trace.rs", "interrupt.rs", "frontend/ast.rs", "frontend/source.rs"],
    ["errors.rs"],
    ["frontend"],
    ["analysis", "lower"],
    ["codegen"],
    ["compile"],
    ["kokkos.rs"],
    ["memory"],
    ["exec"],
    ["lazy", "fusion"],
    ["pipeline"],
    ["python"],
    ["lib.rs"],
]


def module_path(f: Path) -> tuple[str, ...]:
    parts = f.relative_to(SRC).with_suffix("").parts
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


FILES = sorted(SRC.rglob("*.rs"))
BY_MODULE = {module_path(f): f for f in FILES}


def strip(text: str) -> str:
    """Code without comments, string/char literals and test modules."""
    cut = text.find("#[cfg(test)]")
    if cut >= 0:
        text = text[:cut]
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == "r" and re.match(r'r#*"', text[i : i + 10]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            j = text.find('"' + hashes, i + 2 + len(hashes))
            i = n if j < 0 else j + 1 + len(hashes)
            out.append('""')
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i : i + 4]):
            i += len(re.match(r"'(\\.|[^\\'])'", text[i:]).group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand(tree: str) -> list[str]:
    """`a::{b, c::{d, e}}` -> a::b, a::c::d, a::c::e."""
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^(.*?)\{(.*)\}$", tree)
    if not m:
        return [tree]
    prefix, inner = m.groups()
    items, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    items.append(cur)
    return [p for it in items if it for p in expand(prefix + it)]


def resolve(segments: list[str], here: tuple[str, ...]) -> Path | None:
    """The deepest file a path names, or None (std, other crates, items)."""
    # `here` is the file's own module: `self` names it, `super` its parent.
    start: tuple[str, ...]
    if segments[0] == "crate":
        start, segments = (), segments[1:]
    elif segments[0] == "super":
        start = here
        while segments and segments[0] == "super":
            start, segments = start[:-1], segments[1:]
    elif segments[0] == "self":
        start, segments = here, segments[1:]
    elif here + (segments[0],) in BY_MODULE:
        start = here
    else:
        return None
    best = BY_MODULE.get(start)
    cur = start
    for s in segments:
        cur = cur + (s,)
        if cur in BY_MODULE:
            best = BY_MODULE[cur]
        else:
            break
    return best


PATH = re.compile(r"\b((?:crate|super|self|[a-z_][a-z0-9_]*)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE = re.compile(r"\buse\s+([^;]+);")


def imports(f: Path) -> set[Path]:
    code = strip(f.read_text())
    here = module_path(f)
    paths: list[str] = []
    for m in USE.finditer(code):
        # `x as y` -> x (renames are written `@` so whitespace can go).
        paths += [p.split("@")[0] for p in expand(re.sub(r"\s+as\s+", "@", m.group(1)))]
    code_wo_use = USE.sub("", code)
    paths += [m.group(1) for m in PATH.finditer(code_wo_use)]
    out = set()
    for p in paths:
        segs = [s for s in p.split("::") if s]
        if not segs:
            continue
        target = resolve(segs, here)
        if target is not None and target != f:
            out.add(target)
    return out


def layer(f: Path) -> tuple[int, str]:
    rel = f.relative_to(SRC).as_posix()
    best = None
    for rank, names in enumerate(LAYERS):
        for name in names:
            if rel == name or rel.startswith(name + "/"):
                if best is None or len(name) > len(best[1]):
                    best = (rank, name)
    if best is None:
        raise SystemExit(f"check_layers: {rel} is in no layer: add it to LAYERS")
    return best


def cycles(graph: dict[Path, set[Path]]) -> list[list[Path]]:
    """Strongly connected components of more than one file (Tarjan)."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on: set[Path] = set()
    out: list[list[Path]] = []
    sys.setrecursionlimit(10000)

    def visit(v: Path) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    graph = {f: imports(f) for f in FILES}
    problems: list[str] = []
    rel = lambda p: p.relative_to(SRC).as_posix()  # noqa: E731
    for comp in cycles(graph):
        names = ", ".join(rel(p) for p in comp)
        edges = [f"{rel(a)} -> {rel(b)}" for a in comp for b in sorted(graph[a]) if b in comp]
        problems.append(f"import cycle between {names}:\n      " + "\n      ".join(edges))
    for f, targets in sorted(graph.items()):
        (rf, lf) = layer(f)
        for t in sorted(targets):
            (rt, lt) = layer(t)
            same_module = lf == lt or rel(f).split("/")[0] == rel(t).split("/")[0]
            if same_module:
                continue
            if rt > rf or (rt == rf and lf != lt):
                problems.append(f"{rel(f)} (layer {lf}) imports {rel(t)} (layer {lt}): layers only look down")
    for f in FILES:
        n = len(f.read_text().splitlines())
        if n > BUDGET and rel(f) not in OVER_BUDGET:
            problems.append(f"{rel(f)} has {n} lines (budget {BUDGET}): split it, or name it in OVER_BUDGET with the reason")
    for name in OVER_BUDGET:
        if not (SRC / name).exists():
            problems.append(f"OVER_BUDGET names {name}, which does not exist")
        elif len((SRC / name).read_text().splitlines()) <= BUDGET:
            problems.append(f"OVER_BUDGET names {name}, which is within budget now: drop the exception")
    if problems:
        print("check_layers: " + str(len(problems)) + " problem(s)")
        for p in problems:
            print("  - " + p)
        return 1
    print(
        f"check_layers: {len(FILES)} files, no import cycle, layers look down, sizes within {BUDGET} lines"
        + (f" ({len(OVER_BUDGET)} named exception(s))" if OVER_BUDGET else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
