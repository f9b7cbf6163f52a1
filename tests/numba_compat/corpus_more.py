"""More Numba programs of our own writing (as corpus.py): reductions along an
axis and names rebound to values of another type."""
import numpy as np
from numba import njit, prange

R = np.random.default_rng(11)


@njit
def axis_sums(a, b):
    return np.sum(a, axis=1), a.sum(axis=0), np.sum(b, 0), np.sum(b, axis=-1), b.sum(2)


@njit
def axis_extremes(a):
    return np.argmin(a, axis=1), np.argmax(a, 0), a.argmax(axis=1)


@njit
def axis_of_expressions(a, b):
    # The operand is an expression or a slice, computed first.
    return np.sum(a * b + 1.0, axis=0), np.sum(a[1:, :], axis=1), np.sum(np.exp(a), axis=1) / a.shape[1]


@njit
def softmax_rows(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        m = np.max(x[i])
        out[i] = np.exp(x[i] - m)
    return out / np.reshape(np.sum(out, axis=1), (x.shape[0], 1))


@njit(parallel=True)
def normalize_columns(x, out):
    mean = np.sum(x, axis=0) / x.shape[0]
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] - mean[j]


@njit
def rebound_precision(x64):
    # y is float64, then float32: Numba types each binding apart, so the second
    # half runs in float32 (a widened y would round otherwise).
    y = x64 * 3.0
    s = np.sum(y)
    y = np.empty(x64.shape, dtype=np.float32)
    y[:] = x64 / 7.0
    y = y * np.float32(1.1) + np.float32(0.3)
    return s, y


@njit
def rebound_rank(a):
    v = a[0]
    t = np.sum(v)
    v = a * 2.0
    return t, v


CASES = {
    "axis_sums": lambda: (R.random((5, 7)), R.integers(0, 9, (3, 4, 5)).astype(np.int32)),
    "axis_extremes": lambda: (R.random((6, 4)),),
    "axis_of_expressions": lambda: (R.random((6, 4)), R.random((6, 4))),
    "softmax_rows": lambda: (R.random((5, 6)),),
    "normalize_columns": lambda: (R.random((8, 3)), np.zeros((8, 3))),
    "rebound_precision": lambda: (R.random(33),),
    "rebound_rank": lambda: (R.random((4, 3)),),
}
