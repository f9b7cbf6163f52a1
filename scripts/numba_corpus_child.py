"""One corpus program (numba_corpus.py runs each in a process of its own):
the reference under the real Numba, then pykokkos.numba eager, fused and
strict, each on a fresh copy of the inputs and a fresh load of the module.
Prints one JSON line: status, and what differed or why it was not offloaded."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import pathlib
import re
import sys
import traceback
import warnings

import numpy as np


def load(path: pathlib.Path, engine, name: str):
    """The program's module with `import numba` resolving to `engine` (its
    folder first on sys.path, for sibling modules)."""
    saved = sys.modules.get("numba")
    sys.modules["numba"] = engine
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(path.parent))
        sys.modules["numba"] = saved


def npbench_maker(tree: pathlib.Path, folder: pathlib.Path):
    def npbench(bench: str, **params):
        info = json.loads((tree / "bench_info" / f"{bench}.json").read_text())["benchmark"]
        env = dict(params)
        init = info.get("init")
        if init:  # inputs made by the benchmark's own initialize()
            spec = importlib.util.spec_from_file_location(f"init_{bench}", folder / f"{info['module_name']}.py")
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            outs = getattr(mod, init["func_name"])(*[params[k] for k in init["input_args"]])
            if len(init["output_args"]) == 1:
                outs = (outs,)
            env.update(zip(init["output_args"], outs))
        return tuple(env[k] for k in info["input_args"])

    return npbench


def inputs(entry: dict, tree: pathlib.Path, path: pathlib.Path, mod):
    scope = {"np": np, "rng": np.random.default_rng(0), "mod": mod, "npbench": npbench_maker(tree, path.parent)}
    made = eval(entry["args"], scope)  # noqa: S307 - the manifest is ours
    if isinstance(made, dict):
        return tuple(made.get("args", ())), dict(made.get("kwargs", {}))
    return tuple(made), {}


def fresh(args, kwargs):
    return copy.deepcopy(args), copy.deepcopy(kwargs)


def tol(dtype) -> tuple[float, float]:
    if dtype.kind in "fc" and dtype.itemsize <= 8 and dtype != np.float64 and dtype != np.complex128:
        return 2e-4, 1e-5  # float32 sums and chains in another order
    return 1e-9, 1e-11


def compare(got, want, what: str) -> str | None:
    """None when equal in value and type, else what differs."""
    if isinstance(want, (tuple, list)):
        if type(got) is not type(want) or len(got) != len(want):
            return (
                f"{what}: {type(got).__name__} of {len(got) if hasattr(got, '__len__') else '?'} "
                f"instead of {type(want).__name__} of {len(want)}"
            )
        for k, (g, w) in enumerate(zip(got, want)):
            bad = compare(g, w, f"{what}[{k}]")
            if bad:
                return bad
        return None
    if want is None or got is None:
        return None if got is want else f"{what}: {got!r} instead of {want!r}"
    if isinstance(want, np.ndarray):
        if not isinstance(got, np.ndarray):
            return f"{what}: {type(got).__name__} instead of an array"
        if got.dtype != want.dtype or got.shape != want.shape:
            return f"{what}: {got.dtype}{got.shape} instead of {want.dtype}{want.shape}"
    elif type(got) is not type(want) and not (isinstance(got, np.generic) and isinstance(want, np.generic) and got.dtype == want.dtype):
        return f"{what}: {type(got).__name__} instead of {type(want).__name__}"
    g, w = np.asarray(got), np.asarray(want)
    if w.dtype.kind in "biuSUOV":
        return None if np.array_equal(g, w) else f"{what}: values differ"
    rtol, atol = tol(w.dtype)
    if not np.allclose(g, w, rtol=rtol, atol=atol * max(1.0, float(np.nanmax(np.abs(w))) if w.size else 1.0), equal_nan=True):
        err = np.nanmax(np.abs(g - w)) if w.size else 0
        return f"{what}: values differ (max abs difference {err:.3g})"
    return None


def reason(why: str) -> str:
    first = why.strip().splitlines()[0] if why.strip() else "?"
    return re.sub(r"^\S+?:\d+(:\d+)?: ", "", first)


def main() -> int:
    entry, tree = json.loads(sys.argv[1]), pathlib.Path(sys.argv[2])
    path = tree / entry["path"]
    out = {"name": entry["name"]}
    import numba as real

    import pykokkos as pk
    import pykokkos.numba as pkn

    try:
        ref_mod = load(path, real, "corpus_ref")
        args, kwargs = inputs(entry, tree, path, ref_mod)
        a, k = fresh(args, kwargs)
        want = getattr(ref_mod, entry["call"])(*a, **k)
        want_args = a
    except Exception as e:  # noqa: BLE001
        out.update(status="ref-fails", detail=f"{type(e).__name__}: {e}"[:300])
        print(json.dumps(out))
        return 0

    def attempt(mode: str):
        pk._native.set_lazy(mode == "fused")
        if mode == "strict":
            os.environ["PK_NUMBA_STRICT"] = "1"
        mod = load(path, pkn, f"corpus_{mode}")
        a, k = fresh(args, kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = getattr(mod, entry["call"])(*a, **k)
        pk.flush()
        pk._native.set_lazy(False)
        os.environ.pop("PK_NUMBA_STRICT", None)
        bad = compare(got, want, "result")
        for j, (g, w) in enumerate(zip(a, want_args)):
            if bad is None and isinstance(w, np.ndarray):
                bad = compare(g, w, f"argument {j} after the call")
        from pykokkos.numba._dispatch import ALL

        ran = [
            (d.py_func.__name__, d.last_ran, d.why.get(d.last_key, ""))
            for d in ALL
            if d.py_func.__module__ == mod.__name__ and d.last_ran is not None
        ]
        return bad, ran

    for mode in ("eager", "fused"):
        try:
            bad, ran = attempt(mode)
        except Exception as e:  # noqa: BLE001
            tb = traceback.extract_tb(e.__traceback__)[-1]
            out.update(
                status="error",
                detail=f"{mode}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                f" ({pathlib.Path(tb.filename).name}:{tb.lineno})"[:400],
            )
            print(json.dumps(out))
            return 0
        if bad:
            out.update(status="differs", detail=f"{mode}: {bad}")
            print(json.dumps(out))
            return 0
        if mode == "eager":
            out["ran"] = ran
    fell = [(n, how, why) for n, how, why in out["ran"] if how in ("numba", "python")]
    try:
        bad, _ = attempt("strict")
        if bad:
            out.update(status="differs", detail=f"strict: {bad}")
        elif fell:
            out.update(status="bug", detail="strict mode ran what eager mode did not offload")
        else:
            out["status"] = "offloaded"
    except pkn.UnsupportedError as e:
        out.update(
            status="fallback" if fell else "bug",
            reason=reason(str(e)),
            detail="" if fell else f"strict raised though eager offloaded: {reason(str(e))}",
        )
    except Exception as e:  # noqa: BLE001
        out.update(status="error", detail=f"strict: {type(e).__name__}: {str(e)[:200]}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
