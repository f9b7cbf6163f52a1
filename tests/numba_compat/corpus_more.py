"""More Numba programs of our own writing (as corpus.py): reductions along an
axis and names rebound to values of another type."""
import math

import numpy as np
from numba import njit, prange, stencil, vectorize

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


@njit
def transposed(a, b):
    t = a.T
    s = np.zeros(t.shape)
    for i in range(t.shape[0]):
        for j in range(t.shape[1]):
            s[i, j] = t[i, j] * 2.0
    t[0, 1] = -1.0  # writes a, as Numba's view does
    return s, t + b, np.sum(t * b), a.T.T


@njit
def limits(a, k):
    big = np.iinfo(np.intp).max
    out = np.empty(a.shape)
    for i in range(a.shape[0]):
        out[i] = a[i] + np.finfo(np.float64).eps if k < big else np.finfo(np.float32).max
    return out, big - k, np.iinfo(np.int32).min


@stencil
def jacobi(a):
    return 0.25 * (a[0, 1] + a[0, -1] + a[-1, 0] + a[1, 0])


@stencil()
def wave(p, c, r):
    return 2 * c[0, 0] - p[0, 0] + r * r * (c[-1, 0] + c[1, 0] + c[0, -1] + c[0, 1] - 4 * c[0, 0])


@stencil(neighborhood=((-2, 1),), cval=-1.0)
def window(a):
    s = 0.0
    for k in range(-2, 2):
        s += a[k]
    return s / 4


@stencil(standard_indexing=("w",))
def weighted(a, w):
    return w[0] * a[-1] + w[1] * a[0] + w[2] * a[2]


@njit(parallel=True)
def stencils(a, p, c, v, w, steps):
    err = np.max(np.abs(jacobi(a) - a))
    f = np.zeros_like(c)
    for _ in range(steps):  # a time loop around a stencil with out=
        wave(p, c, 0.3, out=f)
        p, c, f = c, f, p
    return err, c, window(v), weighted(v, w), jacobi(a.astype(np.float32))


@vectorize(nopython=True)
def cnd(x):
    return 0.5 + 0.5 * math.erf(x / math.sqrt(2.0))


@vectorize(["float32(float32, float32)", "float64(float64, float64)", "int64(int64, int64)"])
def clipped_diff(a, b):
    d = a - b
    return d if d > 0 else 0


@njit(parallel=True)
def vectorized(x, y, k):
    s = 0.0
    for i in prange(x.shape[0]):
        s += cnd(x[i])
    xs = x.astype(np.float32)
    return cnd(x) * 2.0 - cnd(0.25), s, clipped_diff(x, y), clipped_diff(xs, xs * np.float32(0.5)), \
        clipped_diff(k, 3), clipped_diff(2.5, 1.0)


@njit
def ufunc_outputs(z, c, m):
    for _ in range(3):
        np.multiply(z, z, z)
        np.add(z, c, z)
    np.logical_not(m, m)
    return z, m


@njit
def sa_like(num_states, num_actions):
    dtype = np.int_
    s_idx = np.empty(num_states * num_actions, dtype=dtype)
    i = 0
    for s in range(num_states):
        for a in range(num_actions):
            s_idx[i] = s * a
            i += 1
    return s_idx


@njit
def kick(dt, force, pos, vel):
    pos += vel * dt + 0.5 * force * dt * dt  # whole-array updates of its parameters
    vel += 0.5 * dt * force


@njit
def time_loop(pos, vel, steps):
    force = np.zeros_like(pos)
    for step in range(steps):
        force[:] = -pos
        kick(0.1, force, pos, vel)
    return pos, vel


@njit(parallel=True)
def kernel_temporaries(x, points, b):
    total = 0.0
    for i in prange(x.shape[0]):
        d = -((x[i] - points) ** 2) / (2 * b * b)  # an array per iteration: computed where it is reduced
        m = np.min(d)
        total += m + np.log(np.sum(np.exp(d - m)))
    return total


@njit(parallel=True)
def masked_means(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt)
    counts = np.zeros(npt, dtype=np.int64)
    for i in prange(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        mask = np.logical_and(r1 <= radius, radius < r2)
        values = data[mask]
        res[i] = values.mean()
        counts[i] = np.sum(mask)
    return res, counts


@njit
def histograms(x, k, grid):
    h, edges = np.histogram(x, 7)
    counts = np.histogram(k, 4)[0]
    return h, edges, counts, np.histogram(grid, 5, (0.0, 1.0))[0], np.histogram(x, bins=3)[1]


@njit(parallel=True)
def nearest(points, centers):
    labels = np.empty(points.shape[0], dtype=np.int64)
    far = np.empty(points.shape[0], dtype=np.int64)
    for i in prange(points.shape[0]):
        d = (centers[:, 0] - points[i, 0]) ** 2 + (centers[:, 1] - points[i, 1]) ** 2
        labels[i] = d.argmin()
        far[i] = np.argmax(d)
    return labels, far


@njit(parallel=True)
def bounds_of(x, y):
    lo, hi, least = np.inf, -np.inf, np.inf
    for i in prange(x.shape[0]):
        lo = min(lo, x[i] * 2.0)  # a min and a max: one pass
        hi = max(hi, x[i] - 1.0)
    for i in prange(y.shape[0]):
        least = min(least, y[i])
    return lo, hi, least


@njit(parallel=True)
def two_passes(x, y):
    for i in prange(x.shape[0]):
        y[i] = x[i] * 2.0
    for i in prange(x.shape[0]):
        y[i] += x[i] + y[i]
    return y


CASES = {
    "two_passes": lambda: (R.random(64), np.zeros(64)),
    "bounds_of": lambda: (R.random(25), np.zeros(0)),
    "nearest": lambda: (R.random((30, 2)), np.append(R.random((5, 2)), [[np.nan, 0.5]], axis=0)),
    "histograms": lambda: (np.append(R.random(50), [np.nan, 1.0]), R.integers(-5, 9, 40),
                           R.random((4, 6)) * 1.2),
    "kernel_temporaries": lambda: (R.random(40), np.array([-1.0, 2.0, 5.0, 0.5]), 0.5),
    "masked_means": lambda: (R.random(200), R.random(200), 9),
    "sa_like": lambda: (4, 3),
    "time_loop": lambda: (R.random((5, 3)), R.random((5, 3)), 4),
    "ufunc_outputs": lambda: (R.random((4, 3)) * 0.5, R.random((4, 3)) * 0.1, R.random(6) > 0.5),
    "vectorized": lambda: (R.random(11) - 0.5, R.random(11) - 0.5, R.integers(0, 7, 11)),
    "stencils": lambda: (R.random((7, 6)), R.random((6, 5)), R.random((6, 5)), R.random(10),
                         np.array([0.5, 0.25, 0.25]), 3),
    "limits": lambda: (R.random(9), 5),
    "transposed": lambda: (R.random((3, 5)), R.random((5, 3))),
    "axis_sums": lambda: (R.random((5, 7)), R.integers(0, 9, (3, 4, 5)).astype(np.int32)),
    "axis_extremes": lambda: (R.random((6, 4)),),
    "axis_of_expressions": lambda: (R.random((6, 4)), R.random((6, 4))),
    "softmax_rows": lambda: (R.random((5, 6)),),
    "normalize_columns": lambda: (R.random((8, 3)), np.zeros((8, 3))),
    "rebound_precision": lambda: (R.random(33),),
    "rebound_rank": lambda: (R.random((4, 3)),),
}
