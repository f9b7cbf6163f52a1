"""pykokkos.numba against real Numba on the programs of the differential corpus
(tests/numba_compat/corpus.py) at benchmark sizes, in one process: each
program's time under Numba (parallel=True where the program asks for it) and
under pykokkos.numba, eager and PK_FUSE=1, best of several calls after a
warm-up call that compiles and checks the results are equal.

    python benches/bench_numba.py            # host (OpenMP)
    python benches/bench_numba.py --cuda     # the GPU; Numba runs on the host

On the GPU the figures compare a GPU against the host's cores (Numba's
results are the reference either way); absolute times are from the GPU only.
Nothing is asserted except equal results.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "numba_compat" / "corpus.py"

R = np.random.default_rng(11)
N = 1 << 22


def big_cases(scale: float) -> dict:
    n = max(1024, int(N * scale))
    side = max(64, int(2048 * scale ** 0.5))
    return {
        "saxpy": lambda: (2.5, R.random(n), R.random(n), np.zeros(n)),
        "dot_prange": lambda: (R.random(n), R.random(n)),
        "moments": lambda: (R.random(n),),
        "extremes": lambda: (R.random(n),),
        "row_norms": lambda: (R.random((side, side)), np.zeros(side)),
        "lennard_jones": lambda: (R.random((max(256, int(3000 * scale ** 0.5)), 3)) * 20.0,),
        "matvec": lambda: (R.random((side, side)), R.random(side)),
        "time_steps": lambda: (R.random(n), 4),
        "sum2d": lambda: (R.random((side, side)),),
        "star": lambda: (side, 1, R.random((side, side)), np.zeros((side, side)), R.random((3, 3))),
        "expressions": lambda: (R.random((side, side)), R.random((side, side))),
        "reductions": lambda: (R.random(n),),
        "cumulative": lambda: (R.random(n),),
    }


def load(engine, name):
    saved = sys.modules.get("numba")
    sys.modules["numba"] = engine
    try:
        spec = importlib.util.spec_from_file_location(name, CORPUS)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        if saved is None:
            sys.modules.pop("numba", None)
        else:
            sys.modules["numba"] = saved


def best(f, args, reps: int, fence) -> float:
    t = float("inf")
    for _ in range(reps):
        fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        fence()
        t0 = time.perf_counter()
        f(*fresh)
        fence()
        t = min(t, time.perf_counter() - t0)
    return t


def close(a, b) -> bool:
    if isinstance(a, tuple):
        return all(close(x, y) for x, y in zip(a, b))
    return a is None and b is None or bool(np.allclose(a, b, rtol=1e-9, atol=1e-12))


def run(cuda: bool, scale: float, reps: int) -> dict:
    import numba as real

    import pykokkos as pk
    import pykokkos.numba as pkn

    if cuda:
        pk.set_default_space(pk.Cuda)
    ref, ours = load(real, "corpus_real"), load(pkn, "corpus_pk")
    out = {}
    print(f"{'program':<15}{'Numba ms':>11}{'eager ms':>11}{'fused ms':>11}{'Numba/eager':>13}{'Numba/fused':>13}")
    for name, make in big_cases(scale).items():
        args = make()
        want = getattr(ref, name)(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        row = {"numba": best(getattr(ref, name), args, reps, lambda: None)}
        for mode in ("eager", "fused"):
            pk._native.set_lazy(mode == "fused")
            got = getattr(ours, name)(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
            if not close(got, want):
                raise SystemExit(f"{name} ({mode}): result differs from Numba's")
            row[mode] = best(getattr(ours, name), args, reps, pk.fence)
            pk._native.set_lazy(False)
        out[name] = row
        print(f"{name:<15}{row['numba'] * 1e3:>11.3f}{row['eager'] * 1e3:>11.3f}{row['fused'] * 1e3:>11.3f}"
              f"{row['numba'] / row['eager']:>12.2f}x{row['numba'] / row['fused']:>12.2f}x")
    return out


if __name__ == "__main__":
    cuda = "--cuda" in sys.argv
    scale = float(os.environ.get("PK_BENCH_SCALE", "1"))
    print(f"pykokkos.numba vs Numba ({'Cuda' if cuda else 'OpenMP'}; Numba on the host, "
          f"{os.cpu_count()} cores), best of 5; every result checked against Numba's")
    run(cuda, scale, reps=5)
