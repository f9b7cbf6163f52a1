"""Side by side across builds: runs a bench script that prints one JSON line
of figures under two Python interpreters (two checkouts' virtualenvs), in
turn, and prints per figure the medians, their ratio and in how many pairs
the second was the slower.

    python benches/ab.py OLD/.venv/bin/python .venv/bin/python benches/bench_checks.py --pairs 9
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
    a = ap.parse_args()
    runs: dict = {a.first: [], a.second: []}
    for _ in range(a.pairs):
        for py in (a.first, a.second):
            out = subprocess.run([py, a.script], capture_output=True, text=True, check=True).stdout
            runs[py].append(json.loads(out.strip().splitlines()[-1]))
    for key in runs[a.first][0]:
        x = [r[key] for r in runs[a.first]]
        y = [r[key] for r in runs[a.second]]
        slower = sum(b > c for c, b in zip(x, y))
        print(f"{key:12s} first {statistics.median(x):.4f}  second {statistics.median(y):.4f}  "
              f"second/first {statistics.median(y) / statistics.median(x):.3f}  "
              f"(second slower in {slower} of {a.pairs} pairs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
