"""(h) Host element access of Views beside NumPy's on the same shapes, in one
run: reads and writes through `v[i]`, `v[i, j]`, `v[i][j]` and `v[e][j][i]`,
eagerly and in lazy mode (a view with no pending work pays no lazy check).
Programs that initialise Views element by element in Python loops (PyKokkos'
tests and ExaMiniMD's set-up) spend their time here."""
from __future__ import annotations

import os
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pykokkos as pk  # noqa: E402

CASES = [
    ("v[i]", "v[5]"),
    ("v[i] = x", "v[5] = 1.5"),
    ("m[i, j]", "m[3, 4]"),
    ("m[i, j] = x", "m[3, 4] = 1.5"),
    ("m[i][j]", "m[3][4]"),
    ("m[i][j] = x", "m[3][4] = 1.5"),
    ("t[e][j][i]", "t[2][3][4]"),
    ("t[e][j][i] = x", "t[2][3][4] = 1.5"),
]


def _pair_ns(stmt: str, a: dict, b: dict, number: int = 20000, rounds: int = 7) -> tuple[float, float]:
    """Best time per statement on `a` and on `b`, measured in alternating
    rounds so that a slow spell of the machine hits both sides alike."""
    ta, tb = timeit.Timer(stmt, globals=a), timeit.Timer(stmt, globals=b)
    best_a = best_b = float("inf")
    for _ in range(rounds):
        best_a = min(best_a, ta.timeit(number))
        best_b = min(best_b, tb.timeit(number))
    return best_a / number * 1e9, best_b / number * 1e9


def main() -> dict:
    pkv = {"v": pk.View([100], pk.double), "m": pk.View([10, 10], pk.double),
           "t": pk.View([4, 8, 16], pk.double)}
    npv = {k: np.zeros(v.shape) for k, v in pkv.items()}
    out = {}
    for lazy in (False, True):
        pk._native.set_lazy(lazy)
        mode = "lazy" if lazy else "eager"
        for name, stmt in CASES:
            key = name.replace(" = x", "_write").replace(" ", "")
            p, n = _pair_ns(stmt, pkv, npv)
            out[f"{mode}:{key}:pk_ns"] = p
            out[f"{mode}:{key}:numpy_ns"] = n
            out[f"{mode}:{key}:ratio"] = p / n
    pk._native.set_lazy(False)
    return out


if __name__ == "__main__":
    for k, v in main().items():
        print(f"{k:40s} {v:8.2f}")
