"""Must fuse: reductions through built-in reducers (pk.Max, pk.Min, pk.Prod)
and a plain sum over the same range become one multi-value reduction, each
total joined by its own reducer; the map before them folds in as epilogue.
On Cuda the fused region is one NVRTC reduction over a record of totals."""
import numpy as np


def run(pk):
    @pk.workunit
    def shape(i, x, y):
        y[i] = x[i] * x[i] - 3.0 * x[i]

    @pk.workunit
    def biggest(i, acc, y):
        if y[i] > acc:
            acc = y[i]

    @pk.workunit
    def smallest(i, acc, y):
        acc = min(acc, y[i])

    @pk.workunit
    def growth(i, acc, x):
        acc *= 1.0 + 1e-3 * x[i]

    @pk.workunit
    def odd_bits(i, acc: pk.Acc[pk.int64], k):
        acc = acc | k[i]

    @pk.workunit
    def total(i, acc, y):
        acc += y[i]

    n = 777
    x = pk.View([n], pk.double)
    k = pk.View([n], pk.int64)
    np.asarray(x)[:] = np.linspace(-2.0, 5.0, n)
    np.asarray(k)[:] = (np.arange(n) * 37) % 1024
    y = pk.View([n], pk.double)
    pk.parallel_for(n, shape, x=x, y=y)
    hi = pk.parallel_reduce(n, biggest, y=y, reducer=pk.Max)
    lo = pk.parallel_reduce(n, smallest, y=y, reducer=pk.Min)
    g = pk.parallel_reduce(n, growth, x=x, reducer=pk.Prod)
    b = pk.parallel_reduce(n, odd_bits, k=k, reducer=pk.BOr)
    s = pk.parallel_reduce(n, total, y=y)
    pk.flush()
    xs = np.linspace(-2.0, 5.0, n)
    ys = xs * xs - 3.0 * xs
    assert float(hi) == ys.max() and float(lo) == ys.min()
    assert np.isclose(float(g), np.prod(1.0 + 1e-3 * xs), rtol=1e-12)
    assert int(b) == int(np.bitwise_or.reduce((np.arange(n) * 37) % 1024))
    assert np.isclose(float(s), ys.sum(), rtol=1e-12)
    return {"hi": float(hi), "lo": float(lo), "g": float(g), "b": int(b), "s": float(s), "y": np.asarray(y).copy()}
