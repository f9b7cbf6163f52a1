"""Must not fuse: the consumer reads its input at i + 1 (a stencil)."""
import numpy as np


def run(pk):
    @pk.workunit
    def square(i, x, y):
        y[i] = x[i] * x[i]

    @pk.workunit
    def forward(i, n, x, y):
        if i + 1 < n:
            y[i] = x[i + 1] - x[i]

    n = 100
    x = pk.View([n], pk.double)
    np.asarray(x)[:] = np.arange(n) * 0.5
    t = pk.View([n], pk.double)
    d = pk.View([n], pk.double)
    pk.parallel_for(n, square, x=x, y=t)
    pk.parallel_for(n, forward, n=n, x=t, y=d)
    return {"d": np.asarray(d).copy()}
