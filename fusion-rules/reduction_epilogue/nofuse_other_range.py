"""Must not fuse: the map runs over another range than the reduce."""
import numpy as np


def run(pk):
    @pk.workunit
    def fill(i, v, x):
        v[i] = x

    @pk.workunit
    def total(i, acc, v):
        acc += v[i]

    n = 64
    v = pk.View([n], pk.double)
    pk.parallel_for(pk.RangePolicy(0, n // 2), fill, v=v, x=2.0)
    r = pk.parallel_reduce(n, total, v=v)
    return {"r": float(r), "v": np.asarray(v).copy()}
