"""Runs bad-input cases (JSON on stdin, from test_bad_input.py) in a process
of its own: each builds its arguments, calls pykokkos, and must give NumPy's
result or raise a Python exception. Prints one line per case; a signal, a
hang or another exit status is what the parent test reports."""
import json
import sys

import numpy as np

import pykokkos as pk


@pk.workunit
def axpy(i, a, x, y):
    y[i] = a * x[i] + y[i]


@pk.workunit
def total(i, acc, x):
    acc += x[i]


@pk.workunit
def quotient(i, x, y, d):
    y[i] = x[i] // d


DTYPES = {"f8": np.float64, "f4": np.float32, "i8": np.int64, "i4": np.int32, "u1": np.uint8, "b": np.bool_}


def array(spec):
    """An argument from its description: a View, a NumPy array (strided,
    read-only, 2-D), a list, a number, None, a string."""
    kind = spec[0]
    if kind == "view":
        _, n, dt = spec
        v = pk.View([n], getattr(pk, np.dtype(DTYPES[dt]).name))
        np.asarray(v)[:] = np.arange(n) % 7
        return v
    if kind == "numpy":
        _, n, dt, how = spec
        a = (np.arange(2 * n + 2) % 7).astype(DTYPES[dt])
        if how == "strided":
            return a[: 2 * n : 2]
        if how == "readonly":
            a = a[:n].copy()
            a.flags.writeable = False
            return a
        if how == "2d":
            return a[: (n // 2) * 2].reshape(2, -1) if n >= 2 else a[:n].reshape(1, -1)
        if how == "reversed":
            return a[:n][::-1]
        return a[:n].copy()
    if kind == "list":
        return list(range(spec[1]))
    if kind == "number":
        return spec[1]
    if kind == "none":
        return None
    return "text"


def policy(spec):
    kind = spec[0]
    if kind == "n":
        return spec[1]
    if kind == "range":
        return pk.RangePolicy(spec[1], spec[2])
    if kind == "float":
        return float(spec[1])
    return None


def bounds(spec):
    """(lo, hi) of a valid policy description, else None."""
    if spec[0] == "n" and isinstance(spec[1], int) and spec[1] >= 0:
        return 0, spec[1]
    if spec[0] == "range" and spec[1] <= spec[2]:
        return spec[1], spec[2]
    return None


def run(case):
    kind = case["kind"]
    if kind == "view":
        shape, dtype = case["shape"], case["dtype"]
        dt = getattr(pk, dtype) if isinstance(dtype, str) and hasattr(pk, dtype) else dtype
        v = pk.View(shape, dt)
        a = np.asarray(v)
        assert tuple(a.shape) == tuple(shape if isinstance(shape, list) else [shape]) and not a.any()
        return "made"
    pol = policy(case["policy"])
    if kind == "axpy":
        x, y = array(case["x"]), array(case["y"])
        a = case["a"]
        y0 = np.array(y, dtype=np.float64, copy=True) if isinstance(y, (np.ndarray, pk.View)) else None
        pk.parallel_for(pol, axpy, a=a, x=x, y=y)
        got, b = np.asarray(y), bounds(case["policy"])
        if y0 is not None and b is not None and got.ndim == 1 and np.asarray(x).ndim == 1:
            lo, hi = b
            want = y0.copy()
            xs = np.asarray(x).astype(np.float64)
            want[lo:hi] = (a * xs[lo:hi] + y0[lo:hi]).astype(got.dtype).astype(np.float64)
            assert np.allclose(got.astype(np.float64), want, rtol=1e-6, equal_nan=True), (got, want)
        return "ran"
    if kind == "total":
        x = array(case["x"])
        t, b = float(pk.parallel_reduce(pol, total, x=x)), bounds(case["policy"])
        if b is not None and np.asarray(x).ndim == 1:
            want = np.asarray(x)[b[0]:b[1]].astype(np.float64).sum()
            assert abs(float(t) - want) <= 1e-6 * max(1.0, abs(want)), (t, want)
        return "ran"
    if kind == "quotient":
        x, y = array(case["x"]), array(case["y"])
        pk.parallel_for(pol, quotient, x=x, y=y, d=case["d"])
        np.asarray(y)  # a lazy launch runs (or fails) here
        return "ran"
    raise AssertionError(f"unknown case {kind}")


def main():
    cases = json.load(sys.stdin)
    for k, case in enumerate(cases):
        try:
            out = run(case)
            pk.flush()  # a lazy launch's error comes where its work runs
        except AssertionError:
            raise
        except Exception as e:  # any Python exception is an answer
            out = f"raised {type(e).__name__}"
        print(k, out, flush=True)
    pk.flush()
    print("end", flush=True)


if __name__ == "__main__":
    main()
