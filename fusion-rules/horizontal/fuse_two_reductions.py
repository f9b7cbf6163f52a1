"""Must fuse: two independent reductions become one multi-value reduction."""
import numpy as np


def run(pk):
    @pk.workunit
    def total(i, acc, v):
        acc += v[i]

    @pk.workunit
    def count_pos(i, acc: pk.Acc[pk.int64], v):
        if v[i] > 0:
            acc += 1

    n = 500
    a = pk.View([n], pk.double)
    b = pk.View([n], pk.double)
    np.asarray(a)[:] = np.arange(n) - 100.0
    np.asarray(b)[:] = np.arange(n) % 7 - 3.0
    s = pk.parallel_reduce(n, total, v=a)
    c = pk.parallel_reduce(n, count_pos, v=b)
    pk.flush()
    return {"s": float(s), "c": int(c)}
