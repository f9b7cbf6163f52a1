"""Must not fuse: scans are never fused with anything."""
import numpy as np


def run(pk):
    @pk.workunit
    def prefix(i, acc, last_pass, v, out):
        acc += v[i]
        if last_pass:
            out[i] = acc

    @pk.workunit
    def fill(i, v, x):
        v[i] = x

    n = 50
    v = pk.View([n], pk.double)
    out = pk.View([n], pk.double)
    w = pk.View([n], pk.double)
    np.asarray(v)[:] = np.arange(n)
    total = pk.parallel_scan(n, prefix, v=v, out=out)
    pk.parallel_for(n, fill, v=w, x=1.0)
    pk.flush()
    return {"total": float(total), "out": np.asarray(out).copy(), "w": np.asarray(w).copy()}
