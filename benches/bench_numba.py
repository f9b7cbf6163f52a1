"""pykokkos.numba against real Numba on the programs of the differential corpus
(tests/numba_compat/corpus.py) at benchmark sizes, in one process: each
program's time under Numba (parallel=True where the program asks for it) and
under pykokkos.numba, eager and PK_FUSE=1 side by side (alternating calls), best
of several calls after a warm-up call that compiles and checks the results are
equal.

    python benches/bench_numba.py            # host (OpenMP)
    python benches/bench_numba.py --save-ref ref.json   # also keep Numba's outputs and times
    python benches/bench_numba.py --cuda --ref ref.json # the GPU machine (no Numba there)
    python benches/bench_numba.py --cuda --resident --ref ref.json  # arrays already on the GPU (CuPy)

On the GPU the figures compare a GPU against the host's cores (Numba's
results are the reference either way); absolute times are from the GPU only.
Nothing is asserted except equal results.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "numba_compat" / "corpus.py"

R = np.random.default_rng(11)
N = 1 << 22
REPS = 9  # timed calls of each engine: best of these (the host's noise is 10-20%)


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
        fresh = [a.copy() if hasattr(a, "copy") and hasattr(a, "shape") else a for a in args]
        fence()
        t0 = time.perf_counter()
        f(*fresh)
        fence()
        t = min(t, time.perf_counter() - t0)
    return t


def fingerprint(x):
    """A small summary of a result that equal results share: for arrays the
    shape, sums and 64 sampled elements."""
    if isinstance(x, tuple):
        return [fingerprint(v) for v in x]
    if hasattr(x, "__cuda_array_interface__") and hasattr(x, "get"):
        x = x.get()  # a CuPy array
    elif type(x).__name__ == "View":
        x = np.asarray(x)
    if isinstance(x, np.ndarray):
        flat = x.ravel()
        idx = np.linspace(0, flat.size - 1, num=min(64, flat.size)).astype(np.int64)
        return {"shape": list(x.shape), "sum": float(np.sum(flat.real)), "abs": float(np.abs(flat).sum()),
                "sample": [float(v) for v in flat[idx].real]}
    return None if x is None else float(np.real(x))


def same_print(a, b) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_print(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a["shape"] == b["shape"] and all(np.isclose(a[k], b[k], rtol=1e-8, atol=1e-10)
                                                 for k in ("sum", "abs")) and np.allclose(a["sample"], b["sample"])
    return a is None and b is None or (a is not None and b is not None and bool(np.isclose(a, b, rtol=1e-8)))


def outputs(f, args):
    """What a call gives back and every array argument after it."""
    fresh = [a.copy() if hasattr(a, "copy") and hasattr(a, "shape") else a for a in args]
    r = f(*fresh)
    return fingerprint((r if isinstance(r, tuple) else (r,)) + tuple(a for a in fresh if hasattr(a, "shape")))


def run(cuda: bool, scale: float, reps: int, ref: dict | None, save: str | None, resident: bool = False) -> dict:
    import pykokkos as pk
    import pykokkos.numba as pkn

    on_device = (lambda a: a)
    if resident:
        import cupy  # device-resident arrays: CuPy's, passed as they are

        def on_device(args):
            return [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]

    if cuda:
        pk.set_default_space(pk.Cuda)
    if ref is None:
        import numba as real
        engine = load(real, "corpus_real")
    ours = load(pkn, "corpus_pk")
    out = {}
    where = "recorded on the host that wrote the reference" if ref is not None else "this run"
    print(f"{'program':<15}{'Numba ms':>11}{'eager ms':>11}{'fused ms':>11}{'Numba/eager':>13}{'Numba/fused':>13}"
          f"   (Numba: {where})")
    for name, make in big_cases(scale).items():
        args = make()
        if ref is None:
            want = outputs(getattr(engine, name), args)
        else:
            want = ref[name]["outputs"]
        row = {"outputs": want}
        mine = on_device(args) if resident else args
        for mode in ("eager", "fused"):
            pk._native.set_lazy(mode == "fused")
            if not same_print(outputs(getattr(ours, name), mine), want):
                raise SystemExit(f"{name} ({mode}): result differs from Numba's")
            pk._native.set_lazy(False)
        # Side by side: Numba (when it runs here), eager and fused take turns
        # call by call, the first of each round rotating, so a slow spell of
        # the machine hits all of them. After each switch of mode one call
        # runs untimed: a switch costs the next call about 0.1 ms in either
        # mode (Kokkos' threads, the lazy runtime's state start over).
        fence = pk.flush if not resident else (lambda: (pk.flush(), pk.fence()))
        turns = {"eager": (False, mine, fence), "fused": (True, mine, fence)}
        if ref is None:
            turns["numba"] = (None, args, lambda: None)
        order = list(turns)
        for k in range(reps):
            for mode in order[k % len(order):] + order[:k % len(order)]:
                lazy, given, done = turns[mode]
                f = getattr(engine if lazy is None else ours, name)
                pk._native.set_lazy(bool(lazy))
                f(*[a.copy() if hasattr(a, "copy") and hasattr(a, "shape") else a for a in given])
                # pk.flush: all of it, deferred launches too, inside the timing.
                row[mode] = min(row.get(mode, float("inf")), best(f, given, 1, done))
                pk._native.set_lazy(False)
        if ref is not None:
            row["numba"] = ref[name]["numba"]
        out[name] = row
        print(f"{name:<15}{row['numba'] * 1e3:>11.3f}{row['eager'] * 1e3:>11.3f}{row['fused'] * 1e3:>11.3f}"
              f"{row['numba'] / row['eager']:>12.2f}x{row['numba'] / row['fused']:>12.2f}x")
    if ref is None and not cuda:
        call_cost(engine, ours)
    if save:
        with open(save, "w") as f:
            saved = {k: {"numba": v["numba"], "outputs": v["outputs"]} for k, v in out.items()}
            saved["_host"] = {"cores": os.cpu_count()}  # where Numba's times were taken
            json.dump(saved, f)
        print(f"Numba's outputs and times written to {save}")
    return out


def call_cost(engine, ours, n: int = 301) -> None:
    """A call's fixed cost, on a 16 x 16 row_norms: back to back (warm), and
    right after 64 MB were copied (cold: what a call costs after a large
    kernel or a NumPy step, as in the rows above, whose arguments are fresh
    copies). Medians of n calls, the engines taking turns."""
    import pykokkos as pk

    big = np.ones(1 << 23)
    junk = np.empty_like(big)
    a, out = R.random((16, 16)), np.zeros(16)
    fns = {"numba": engine.row_norms, "ours": ours.row_norms}
    times = {(k, c): [] for k in fns for c in ("warm", "cold")}
    for f in fns.values():
        f(a, out)
    for _ in range(n):
        for k, f in fns.items():
            for c in ("warm", "cold"):
                if c == "cold":
                    np.copyto(junk, big)
                else:
                    f(a, out)
                t0 = time.perf_counter()
                f(a, out)
                pk.flush()
                times[k, c].append(time.perf_counter() - t0)
    med = {key: sorted(v)[len(v) // 2] * 1e6 for key, v in times.items()}
    for c in ("warm", "cold"):
        print(f"call cost, {c:<5} Numba {med['numba', c]:7.1f} us   pykokkos.numba {med['ours', c]:7.1f} us"
              f"   (+{med['ours', c] - med['numba', c]:.1f} us a call)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cuda", action="store_true", help="run pykokkos.numba on the Cuda space")
    ap.add_argument("--ref", help="Numba's outputs and times from --save-ref (where Numba is not installed)")
    ap.add_argument("--save-ref", help="write Numba's outputs and times here")
    ap.add_argument("--resident", action="store_true", help="with --cuda: the arrays live on the GPU (CuPy)")
    a = ap.parse_args()
    scale = float(os.environ.get("PK_BENCH_SCALE", "1"))
    ref = None
    if a.ref:
        with open(a.ref) as f:
            ref = json.load(f)
    # Numba's cores: those of the machine that took its times (the reference's).
    cores = (ref or {}).get("_host", {}).get("cores", "?") if ref is not None else os.cpu_count()
    print(f"pykokkos.numba vs Numba ({'Cuda' if a.cuda else 'OpenMP'}; Numba on the host, "
          f"{cores} cores), best of {REPS}; every result checked against Numba's")
    if a.resident:
        print("arrays resident on the GPU (CuPy), passed without copies")
    run(a.cuda, scale, REPS, ref, a.save_ref, a.resident and a.cuda)
