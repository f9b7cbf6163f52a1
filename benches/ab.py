"""Side by side across builds: runs a bench script that prints one JSON line
of figures under two Python interpreters (two checkouts' virtualenvs), in
turn, and prints per figure the medians, their ratio and in how many pairs
the second was the slower.

    python benches/ab.py OLD/.venv/bin/python .venv/bin/python benches/bench_checks.py --pairs 9
    python benches/ab.py OLD/.venv/bin/python .venv/bin/python benches/run_all.py --pairs 3 -- --json-line

(the second: every `make bench` row, the same bench code run against each build)
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("first")
    ap.add_argument("second")
    ap.add_argument("script")
    ap.add_argument("--pairs", type=int, default=9)
    a, rest = ap.parse_known_args()  # after --: the script's own arguments
    a.script_args = [x for x in rest if x != "--"]
    runs: dict = {a.first: [], a.second: []}
    for k in range(a.pairs):
        # Which build runs first alternates: the second run of a pair is
        # slower by 2-3% on some rows whatever the build (an A/A run shows it).
        for py in ((a.first, a.second) if k % 2 == 0 else (a.second, a.first)):
            out = subprocess.run([py, a.script, *a.script_args], capture_output=True, text=True).stdout
            runs[py].append(json.loads(out.strip().splitlines()[-1]))
    keys = [k for k in runs[a.first][0] if all(k in r for r in runs[a.first] + runs[a.second])]
    for key in keys:
        x = [r[key] for r in runs[a.first]]
        y = [r[key] for r in runs[a.second]]
        slower = sum(b > c for c, b in zip(x, y))
        print(f"{key:40s} first {statistics.median(x):.4f}  second {statistics.median(y):.4f}  "
              f"second/first {statistics.median(y) / statistics.median(x):.3f}  "
              f"(second slower in {slower} of {a.pairs} pairs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
