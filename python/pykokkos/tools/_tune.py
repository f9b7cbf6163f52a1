"""`python -m pykokkos tune TRACE`: replays a trace under the rule variants
that matter (the built-in rules, each rule off, the size limits halved and
doubled, fusion off), each in a process of its own (rules are read at a
process's start), and writes the fastest rule set as a rules directory for
PK_FUSION_RULES, with the table of what it measured."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

from .. import _native

_TIME = re.compile(r"^(fused|unfused): .*kernel time ([0-9.]+) ms")


def _write(rules: dict, folder: str) -> None:
    os.makedirs(folder, exist_ok=True)
    for name, text in rules.items():
        os.makedirs(os.path.join(folder, name), exist_ok=True)
        with open(os.path.join(folder, name, "rule.toml"), "w") as f:
            f.write(text)


def _limits(text: str, factor: float) -> str:
    def scale(m):
        return f"{m.group(1)} = {max(1, int(int(m.group(2)) * factor))}"

    return re.sub(r"^(max_launches|max_statements)\s*=\s*(\d+)", scale, text, flags=re.M)


def variants() -> list:
    base = dict(_native.default_rule_files())
    out = [("built-in rules", base, False)]
    for name in base:
        out.append((f"without {name}", {k: v for k, v in base.items() if k != name}, False))
    for factor in (0.5, 2.0):
        out.append((f"limits x{factor:g}", {k: _limits(v, factor) for k, v in base.items()}, False))
    out.append(("fusion off", base, True))
    return out


def tune(trace: str, out: str, repeat: int) -> int:
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for k, (label, rules, nofuse) in enumerate(variants()):
            folder = os.path.join(d, f"v{k}")
            _write(rules, folder)
            env = dict(os.environ, PK_FUSION_RULES=folder)
            cmd = [sys.executable, "-m", "pykokkos", "replay", trace, "--repeat", str(repeat), "--no-fuse" if nofuse else "--fuse"]
            r = subprocess.run(cmd, env=env, capture_output=True, text=True)
            ms = next((float(m.group(2)) for m in map(_TIME.match, r.stdout.splitlines()) if m), None)
            if r.returncode != 0 or ms is None:
                print(f"{label}: replay failed\n{r.stdout}{r.stderr}", file=sys.stderr)
                return r.returncode or 1
            rows.append((ms, label, rules, nofuse))
            print(f"  {ms:10.3f} ms  {label}")
        best = min(rows, key=lambda r: r[0])
        if os.path.exists(out):
            shutil.rmtree(out)
        _write(best[2], out)
    note = " (fusion off did best: run without PK_FUSE)" if best[3] else ""
    print(f"fastest: {best[1]}, {best[0]:.3f} ms; rules written to {out}{note} (use PK_FUSION_RULES={out})")
    return 0
