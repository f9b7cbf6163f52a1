"""Must fuse: a chain of elementwise maps whose temporary dies (vertical)."""
import numpy as np


def run(pk):
    @pk.workunit
    def scale(i, a, x, y):
        y[i] = a * x[i]

    @pk.workunit
    def shift(i, b, x, y):
        y[i] = x[i] + b

    n = 257
    x = pk.View([n], pk.double)
    np.asarray(x)[:] = np.linspace(-1.0, 1.0, n)
    t = pk.View([n], pk.double)
    out = pk.View([n], pk.double)
    pk.parallel_for(n, scale, a=3.0, x=x, y=t)
    pk.parallel_for(n, shift, b=0.5, x=t, y=out)
    del t
    return {"out": np.asarray(out).copy()}
