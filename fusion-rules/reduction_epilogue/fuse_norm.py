"""Must fuse: a map feeding a reduce over the same range (reduction epilogue)."""
import numpy as np


def run(pk):
    @pk.workunit
    def diff(i, x, y, d):
        d[i] = x[i] - y[i]

    @pk.workunit
    def sumsq(i, acc, d):
        acc += d[i] * d[i]

    n = 333
    x = pk.View([n], pk.double)
    y = pk.View([n], pk.double)
    np.asarray(x)[:] = np.sin(np.arange(n))
    np.asarray(y)[:] = np.cos(np.arange(n))
    d = pk.View([n], pk.double)
    pk.parallel_for(n, diff, x=x, y=y, d=d)
    r = pk.parallel_reduce(n, sumsq, d=d)
    del d
    return {"r": float(r)}
