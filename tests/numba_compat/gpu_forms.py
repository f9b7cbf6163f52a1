"""Numba programs whose loops have a GPU form (test_gpu_forms.py loads this file
once per engine): rows summed by a team, serial reductions and running sums
run as parallel kernels. FORMS names the construct each must translate to
under pykokkos.numba; CASES makes fresh arguments."""
import math

import numpy as np
from numba import njit, prange

R = np.random.default_rng(5)


@njit(parallel=True)
def row_norms(a, out):
    n, m = a.shape
    for i in prange(n):
        acc = 0.0
        for j in range(m):
            acc += a[i, j] ** 2
        out[i] = math.sqrt(acc)


@njit(parallel=True)
def matvec(a, x):
    n = a.shape[0]
    y = np.zeros(n)
    for i in prange(n):
        t = 0.0
        for j in range(a.shape[1]):
            t += a[i, j] * x[j]
        y[i] = t
    return y


@njit(parallel=True)
def lower_means(a, out):
    # the row's range depends on i; a scalar before the sum, a local after it
    for i in prange(1, a.shape[0]):
        w = 1.0 / (i + 1)
        s = 0.5
        for j in range(i + 1):
            s = s + a[i, j] * w
        r = s - 0.5
        out[i] = r * 2.0


@njit(parallel=True)
def row_debits(a, out):
    for i in prange(a.shape[0]):
        bal = np.float32(100.0)
        for j in range(a.shape[1]):
            bal -= a[i, j]
        out[i] = bal


@njit(parallel=True)
def row_counts(a, limit, out):
    for i in prange(a.shape[0]):
        c = 0
        for j in range(a.shape[1]):
            c += a[i, j] > limit
        out[i] = c


@njit
def sum2d(arr):
    m, n = arr.shape
    result = 0.0
    for i in range(m):
        for j in range(n):
            result += arr[i, j]
    return result


@njit
def sum3d_offset(arr):
    total = 1.0
    for i in range(1, arr.shape[0]):
        for j in range(arr.shape[1]):
            for k in range(2, arr.shape[2]):
                total += arr[i, j, k] * 0.5
    return total


@njit
def spread(x):
    lo = np.inf
    hi = -np.inf
    s = 0.0
    for i, v in enumerate(x):
        d = v * v
        lo = min(lo, d)
        hi = max(hi, d)
        s += d
    return lo, hi, s


@njit
def cumulative(x):
    out = np.zeros_like(x)
    acc = 0.0
    for i, v in enumerate(x):
        acc += v
        out[i] = acc
    return out


@njit
def exclusive_counts(x, limit):
    out = np.empty(x.shape[0], dtype=np.int64)
    seen = 3
    for i in range(x.shape[0]):
        out[i] = seen
        if x[i] > limit:
            seen += 1
    return out, seen


@njit
def shifted_balance(x):
    out = np.zeros(x.shape[0])
    acc = 10.0
    for i in range(1, x.shape[0]):
        acc = acc - x[i]
        out[i] = acc * 0.5
    return out, acc


# Loops that look alike but carry values between iterations: they stay serial.
@njit
def recurrence(x):
    out = np.zeros_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] * 0.5 + x[i]
    return out


@njit
def running_into_argument(x, out):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i]
        out[i] = acc
    return acc


@njit
def last_index(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s + i


@njit
def reused_index(x, out):
    # one index name for three loops; only the last one's is read after it
    for i in range(x.shape[0]):
        out[i] = x[i] * 2.0
    for i in range(1, x.shape[0]):
        out[i] += out[i - 1]
    s = 0.0
    for i in range(3):
        s += out[i]
    return s + i


# Shapes a review found the GPU forms took wrongly: each must stay as written.
@njit(parallel=True)
def row_means(a, out):
    m = a.shape[1]
    for i in prange(a.shape[0]):
        s = 0.0
        for j in range(m):
            s += a[i, j]
        s /= m  # the sum rebound after it
        out[i] = s


@njit
def compound(r):
    bal = 1.0
    for i in range(r.shape[0]):
        bal = bal + bal * r[i]
    return bal


@njit
def capped(x, cap):
    out = np.zeros_like(x)
    acc = 0.0
    for i in range(x.shape[0]):
        if acc < cap:
            acc += x[i]
        out[i] = acc
    return out


@njit
def mixed_updates(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
        s *= 0.5
    return s


@njit
def chained_sums(x):
    c = 0.0
    s = 0.0
    for i in range(x.shape[0]):
        c = c + x[i]
        s = s + c
    return s


@njit
def aliased_running(x):
    out = np.ones(x.shape[0])
    prev = out
    acc = 0.0
    for i in range(1, x.shape[0]):
        acc += prev[i - 1]
        out[i] = acc + x[i]
    return out


@njit
def index_given(x, n):
    i = -1
    for i in range(n):
        x[i] = 1.0
    for i in range(i + 1, x.shape[0]):
        x[i] = 2.0
    return i


FORMS = {
    "row_norms": "pk.TeamThreadRange", "matvec": "pk.TeamThreadRange", "lower_means": "pk.TeamThreadRange",
    "row_debits": "pk.TeamThreadRange", "row_counts": "pk.TeamThreadRange",
    "sum2d": "pk.parallel_reduce", "sum3d_offset": "pk.parallel_reduce", "spread": "pk.parallel_reduce",
    "cumulative": "pk.parallel_scan", "exclusive_counts": "pk.parallel_scan", "shifted_balance": "pk.parallel_scan",
    "recurrence": None, "running_into_argument": None, "last_index": None, "reused_index": None,
    "row_means": None, "compound": None, "capped": None, "mixed_updates": None, "chained_sums": None,
    "aliased_running": None, "index_given": None,
}

CASES = {
    "row_norms": lambda: (R.random((37, 300)), np.zeros(37)),
    "matvec": lambda: (R.random((29, 257)), R.random(257)),
    "lower_means": lambda: (R.random((40, 40)), np.zeros(40)),
    "row_debits": lambda: (R.random((17, 90)).astype(np.float32), np.zeros(17, dtype=np.float32)),
    "row_counts": lambda: (R.random((23, 70)), 0.3, np.zeros(23, dtype=np.int64)),
    "sum2d": lambda: (R.random((45, 61)),),
    "sum3d_offset": lambda: (R.random((7, 9, 11)),),
    "spread": lambda: (R.random(1001) - 0.5,),
    "cumulative": lambda: (R.random(2049),),
    "exclusive_counts": lambda: (R.random(999), 0.25),
    "shifted_balance": lambda: (R.random(777),),
    "recurrence": lambda: (R.random(300),),
    "running_into_argument": lambda: (R.random(300), np.zeros(300)),
    "last_index": lambda: (R.random(300),),
    "reused_index": lambda: (R.random(50), np.zeros(50)),
    "row_means": lambda: (R.random((13, 77)), np.zeros(13)),
    "compound": lambda: (R.random(200) * 0.01,),
    "capped": lambda: (R.random(500), 40.0),
    "mixed_updates": lambda: (R.random(300),),
    "chained_sums": lambda: (R.random(300),),
    "aliased_running": lambda: (R.random(300),),
    "index_given": lambda: (np.zeros(10), 0),
}
