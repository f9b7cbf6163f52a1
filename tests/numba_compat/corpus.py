"""Numba programs of our own writing, run unchanged under real Numba and under
pykokkos.numba (test_differential.py imports this file once per engine, with
`import numba` resolving to each). CASES lists each function with a maker of
its arguments (fresh arrays per run; every array argument is compared after
the call too)."""
import math

import numba
import numpy as np
from numba import njit, prange

R = np.random.default_rng(7)


def vec(n=1000, dtype=np.float64):
    return R.random(n).astype(dtype)


def mat(n=40, m=30):
    return R.random((n, m))


# -- prange loops -----------------------------------------------------------------------------
@njit(parallel=True)
def saxpy(a, x, y, out):
    for i in prange(x.shape[0]):
        out[i] = a * x[i] + y[i]


@njit(parallel=True)
def dot_prange(x, y):
    s = 0.0
    for i in prange(len(x)):
        s += x[i] * y[i]
    return s


@njit(parallel=True)
def moments(x):
    s = 0.0
    s2 = 0.0
    for i in prange(x.size):
        s += x[i]
        s2 += x[i] * x[i]
    mean = s / x.size
    return mean, s2 / x.size - mean * mean


@njit(parallel=True)
def extremes(x):
    lo = np.inf
    hi = -np.inf
    for i in prange(x.shape[0]):
        lo = min(lo, x[i])
        hi = max(hi, x[i])
    return lo, hi


@njit(parallel=True)
def int_count(x, t):
    c = 0
    for i in prange(x.shape[0]):
        if x[i] > t:
            c += 1
    return c


@njit(parallel=True)
def row_norms(a, out):
    n, m = a.shape
    for i in prange(n):
        acc = 0.0
        for j in range(m):
            acc += a[i, j] ** 2
        out[i] = math.sqrt(acc)


@njit(parallel=True)
def strided(x, out):
    for k in prange((x.shape[0] - 2) // 3):
        i = 1 + 3 * k
        out[i] = x[i - 1] - 2.0 * x[i] + x[i + 1]


@njit
def lj(r):
    sr6 = (1.0 / r) ** 6
    return 4.0 * (sr6 * sr6 - sr6)


@njit
def distance(p1, p2):
    dx = p1[0] - p2[0]
    dy = p1[1] - p2[1]
    dz = p1[2] - p2[2]
    return math.sqrt(dx * dx + dy * dy + dz * dz)


@njit(parallel=True)
def lennard_jones(cluster):
    energy = 0.0
    for i in prange(len(cluster) - 1):
        for j in range(i + 1, len(cluster)):
            r = distance(cluster[i], cluster[j])
            energy += lj(r)
    return energy


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
def time_steps(u, steps):
    n = u.shape[0]
    v = np.empty_like(u)
    for s in range(steps):
        for i in prange(1, n - 1):
            v[i] = u[i] + 0.25 * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in prange(1, n - 1):
            u[i] = v[i]
    return u.sum()


# -- serial code ------------------------------------------------------------------------------
@njit
def sum2d(arr):
    M, N = arr.shape
    result = 0.0
    for i in range(M):
        for j in range(N):
            result += arr[i, j]
    return result


@njit
def sum3d(arr):
    result = 0.0
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            for k in range(arr.shape[2]):
                result += arr[i, j, k]
    return result


@njit
def first_above(x, t):
    for i in range(x.shape[0]):
        if x[i] > t:
            return i
    return -1


@njit
def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@njit
def cumulative(x):
    out = np.zeros_like(x)
    acc = 0.0
    for i, v in enumerate(x):
        acc += v
        out[i] = acc
    return out


@njit
def pairs(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s += a * b
    for i in range(x.shape[0] - 1, -1, -2):
        s -= x[i]
    return s


@njit
def complex_poly(z, c):
    out = np.empty_like(z)
    for i in range(z.shape[0]):
        w = z[i]
        for _ in range(3):
            w = w * w + c
        out[i] = w
    return out, abs(out[0])


@njit
def mixed_types(x, k):
    total = 0
    for i in range(x.shape[0]):
        total += x[i] * k
    return total, total / 2, total // 3, -total % 5


# -- array expressions and NumPy --------------------------------------------------------------
@njit
def star(n, r, A, B, W):
    B[r:n - r, r:n - r] += W[r, r] * A[r:n - r, r:n - r] + W[r, r + 1] * A[r:n - r, r + 1:n - r + 1] \
        + W[r, r - 1] * A[r:n - r, r - 1:n - r - 1] + W[r + 1, r] * A[r + 1:n - r + 1, r:n - r] \
        + W[r - 1, r] * A[r - 1:n - r - 1, r:n - r]


@njit
def smooth(b):
    a = np.zeros_like(b)
    a[1:-1] = 0.5 * (b[:-2] + b[2:])
    a[0] = b[0]
    a[-1] = b[-1]
    return a


@njit
def expressions(a, b):
    c = a + 2.0 * b
    d = np.sqrt(np.abs(a - b)) + np.exp(-c)
    d += 1.0
    e = np.where(a > b, a, b)
    return c, d, e, np.minimum(a, b)


@njit
def broadcast(m, v):
    return m * v + 1.0


@njit
def reductions(x):
    return np.sum(x), x.min(), np.max(x), np.argmax(x), np.argmin(x), np.mean(x), x.sum() / x.size


@njit
def reductions_2d(a):
    return a.sum(), np.max(a), np.argmax(a), np.prod(a[:3, :2] + 1.0)


@njit
def shift_in_place(x):
    x[1:] = x[:-1] * 2.0
    return x


@njit
def alloc_and_fill(n, v):
    a = np.ones(n)
    b = np.full((n, 2), v)
    c = np.zeros((2, n), dtype=np.int64)
    return a.sum() + b.sum() + c.sum(), a.ndim + b.ndim, b.shape[0] * b.shape[1], b.size


@njit
def helper_on_host(a):
    return normalize(a) * 2.0


@njit
def normalize(a):
    return a / np.sqrt(np.sum(a * a))


@njit
def float32_math(x):
    y = np.empty_like(x)
    for i in range(x.shape[0]):
        y[i] = np.float32(2.0) * x[i] + np.float32(1.0)
    return y


@njit(parallel=True)
def flat_and_ndindex(a, out):
    for i in prange(a.shape[0]):
        for idx in np.ndindex(a.shape[1], a.shape[2]):
            out[i, idx[0], idx[1]] = a[i, idx[0], idx[1]] * (idx[0] + 1)
    t = 0.0
    for x in a.flat:
        t += x
    for k in range(a.size):
        if k % 7 == 0:
            out.flat[k] = -1.0
    return t


@njit
def jit_signature_forms(x, n):
    return x[:n].sum() * 2


@njit(parallel=True)
def rows_and_columns(a, w):
    n, m = a.shape
    out = np.zeros((n, m))
    colsum = np.zeros(m)
    for i in prange(n):
        out[i, :] = a[i, :] * w + 1.0
        out[i] -= a[i] * 0.5
        colsum += a[i, :]
    return out, colsum


@njit
def aranges(n):
    a = np.arange(n)
    b = np.arange(2, n, 3)
    c = np.arange(0.5, 4.0, 0.25)
    return a.sum(), b * 2, c, np.arange(n, dtype=np.float64) / n


# -- Numba's typing rules: float32 stays float32 against integer literals and
# integer arrays (ufunc loops), integer scalars widen to int64 ------------------------------
@njit
def float32_keeps_width(a, k):
    b = a ** 2 + a * 2 - a / 4 + a // 3
    c = a + k  # an int32 array: the float32 loop, as Numba picks it
    return b, c, np.sqrt(k), a ** 0.5


@njit
def small_ints_widen(x, y):
    s = x[0] * y[0]  # int8 * int8 scalars: int64 in Numba, no wraparound
    for i in range(1, x.shape[0]):
        s = s * 3 + x[i] * y[i]
    return s, x[0] + np.uint8(250) * 2


# -- spellings seen in other people's Numba programs ----------------------------------------
F32 = np.float32
SCALE = 2.5


@njit
def docstring(a):
    """Sum of squares."""
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * a[i]
    return s


@njit
def dtype_of(a):
    out = np.zeros(a.shape[0], dtype=a.dtype)
    for i in range(a.shape[0]):
        out[i] = a[i] * 2
    return out


@njit
def kw_shape(a):
    out = np.empty(shape=(a.shape[0],), dtype=np.float64)
    for i in range(a.shape[0]):
        out[i] = a[i] + 1.0
    return out


@njit
def global_dtype(a):
    out = np.zeros(a.shape[0], dtype=F32)
    for i in range(a.shape[0]):
        out[i] = a[i] * SCALE
    return out


@njit
def tuple_loop(a):
    out = np.zeros_like(a)
    for i in range(1, a.shape[0] - 1):
        for d in (-1, 0, 1):
            out[i] += a[i + d]
    return out


@njit
def shape_tuple(a):
    s = a.shape
    t = 0.0
    for i in range(s[0]):
        for j in range(s[1]):
            t += a[i, j]
    return t


@njit
def helper_int(x):
    if x > 0.5:
        return 1
    return 0


@njit
def calls_helper_int(a):
    c = 0
    for i in range(a.shape[0]):
        c += helper_int(a[i])
    return c


@njit
def helper_kw(x, scale=2.0):
    return x * scale


@njit
def calls_kw(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = helper_kw(a[i], scale=3.0)
    return out


@njit
def slice_in_loop(u, steps):
    for k in range(steps):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


@njit
def rebound(a, steps):
    cur = a.copy()
    for k in range(steps):
        cur = cur * 0.5 + 1.0
    return cur


@njit
def array_literal(x):
    w = np.array([0.25, 0.5, 0.25])
    out = np.zeros_like(x)
    for i in range(1, x.shape[0] - 1):
        out[i] = w[0] * x[i - 1] + w[1] * x[i] + w[2] * x[i + 1]
    return out


@njit
def with_assert(a):
    assert a.shape[0] > 0
    return a.sum()


@njit
def sort_copy(a):
    b = a.copy()
    b.sort()
    return b


@njit
def logical(a, b):
    return np.logical_and(a > 0.5, b < 0.5)


@njit
def atan2(a, b):
    return np.arctan2(a, b)


@njit(parallel=True)
def prange_array_mul(a):
    acc = np.ones(3)
    for i in prange(a.shape[0]):
        acc += a[i, :]
    return acc


@njit
def logical_ufuncs(a):
    return np.logical_or(a > 0.8, a < 0.2).sum() + np.logical_not(a > 0.5).sum()


@njit(parallel=True)
def row_stats(a, out):
    for i in prange(a.shape[0]):
        out[i, 0] = a[i, :].max()
        out[i, 1] = np.min(a[i])
        out[i, 2] = a[i].mean() + np.sum(a[i, :] * 2.0)


@njit
def sum_in_loop(a):
    t = 0.0
    for i in range(a.shape[0]):
        t += a[i, :].sum()
    return t


@njit
def ndenum(a):
    s = 0.0
    for idx, v in np.ndenumerate(a):
        s += v * idx[0]
    return s


@njit
def grid_outer(xn, yn):
    x = np.linspace(-2.0, 1.0, xn)
    y = np.linspace(-1.5, 1.5, yn)
    c = x + np.reshape(y, (yn, 1)) * 1j
    return np.abs(c), c.reshape(xn * yn).real


@njit
def warns_in_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 2.0:
            print("  value out of range at", i, x[i])
        s += x[i]
    return s


# Negative indices count from the end, also when computed at run time (a
# column passed as -1, x[i - 1] at i = 0), as Numba does.
@njit
def negative_indices(x, k):
    s = 0.0
    for i in range(3):
        s += x[i - 1] * 10 ** i
    return s, x[-1], x[k]


@njit(parallel=True)
def column_from_end(a, c, out):
    for i in prange(a.shape[0]):
        out[i] = a[i, c] + a[i - 1, -1]


@njit
def cumulative_shares(y, m):
    n = len(y)
    s = np.zeros(n + 1)
    s[1:] = np.cumsum(y)
    return s / s[n], np.cumsum(m), np.cumsum(y[::2] * 2.0)


@njit
def masked(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt, dtype=np.float64)
    for i in range(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        values = data[np.logical_and(r1 <= radius, radius < r2)]
        res[i] = values.mean()
    return res, data[data > 0.5], data[data > 2.0].sum()


@njit
def dtype_of_local(a):
    b = a[:, :2] * 2
    out = np.empty(b.shape, dtype=b.dtype)
    for i in range(b.shape[0]):
        for j in range(b.shape[1]):
            out[i, j] = b[i, j] + 1
    return out, out.astype(b.dtype)


CASES = {
    "dtype_of_local": lambda: (R.integers(0, 9, (4, 3)).astype(np.int32),),
    "masked": lambda: (vec(300), vec(300), 12),
    "cumulative_shares": lambda: (vec(9), R.integers(0, 9, (3, 4))),
    "negative_indices": lambda: (vec(6), -2),
    "column_from_end": lambda: (mat(6, 5), -1, np.zeros(6)),
    "warns_in_loop": lambda: (vec(8),),
    "grid_outer": lambda: (7, 5),
    "row_stats": lambda: (mat(6, 5), np.zeros((6, 3))),
    "sum_in_loop": lambda: (mat(6, 5),),
    "ndenum": lambda: (mat(6, 5),),
    "docstring": lambda: (vec(12),),
    "dtype_of": lambda: (vec(12, np.float32),),
    "kw_shape": lambda: (vec(12),),
    "global_dtype": lambda: (vec(12),),
    "tuple_loop": lambda: (vec(12),),
    "shape_tuple": lambda: (mat(6, 5),),
    "calls_helper_int": lambda: (vec(12),),
    "calls_kw": lambda: (vec(12),),
    "slice_in_loop": lambda: (mat(6, 5), 3),
    "rebound": lambda: (vec(12), 4),
    "array_literal": lambda: (vec(12),),
    "with_assert": lambda: (vec(12),),
    "sort_copy": lambda: (vec(12),),
    "logical": lambda: (vec(12), vec(12)),
    "atan2": lambda: (vec(12), vec(12)),
    "prange_array_mul": lambda: (R.random((8, 3)),),
    "logical_ufuncs": lambda: (vec(12),),
    "float32_keeps_width": lambda: (vec(64, np.float32), R.integers(1, 9, 64).astype(np.int32)),
    "small_ints_widen": lambda: (R.integers(-100, 100, 12).astype(np.int8), R.integers(-100, 100, 12).astype(np.int8)),
    "aranges": lambda: (17,),
    "rows_and_columns": lambda: (mat(64, 5), 2.0),
    "flat_and_ndindex": lambda: (R.random((3, 4, 5)), np.zeros((3, 4, 5))),
    "jit_signature_forms": lambda: (vec(20), 5),
    "saxpy": lambda: (2.5, vec(), vec(), np.zeros(1000)),
    "dot_prange": lambda: (vec(), vec()),
    "moments": lambda: (vec(),),
    "extremes": lambda: (vec(),),
    "int_count": lambda: (vec(), 0.5),
    "row_norms": lambda: (mat(), np.zeros(40)),
    "strided": lambda: (vec(100), np.zeros(100)),
    "lennard_jones": lambda: (R.random((60, 3)) * 10.0,),
    "matvec": lambda: (mat(), vec(30)),
    "time_steps": lambda: (vec(200), 5),
    "sum2d": lambda: (mat(),),
    "sum3d": lambda: (R.random((4, 5, 6)),),
    "first_above": lambda: (vec(), 0.99),
    "collatz": lambda: (27,),
    "cumulative": lambda: (vec(50),),
    "pairs": lambda: (vec(51), vec(51)),
    "complex_poly": lambda: (vec(20) + 1j * vec(20), 0.1 - 0.2j),
    "mixed_types": lambda: (R.integers(-50, 50, 30), 3),
    "star": lambda: (20, 1, R.random((20, 20)), np.zeros((20, 20)), R.random((3, 3))),
    "smooth": lambda: (vec(30),),
    "expressions": lambda: (mat(8, 5), mat(8, 5)),
    "broadcast": lambda: (mat(6, 4), vec(4)),
    "reductions": lambda: (vec(),),
    "reductions_2d": lambda: (mat(),),
    "shift_in_place": lambda: (vec(10),),
    "alloc_and_fill": lambda: (7, 1.5),
    "helper_on_host": lambda: (vec(10),),
    "float32_math": lambda: (vec(10, np.float32),),
}
