"""What the safety checks cost: a cached launch (the launch-time extent check
runs on each), an integer // and % by a launch scalar (the divisor test), and
the index arithmetic of a stencil (`k // (n - 2)`, `k % (n - 2)`). Prints one
JSON line of best times (rows (j) of `make bench`); `benches/ab.py` runs it
under two builds in turn (this commit's and an older one's) and gives the
ratios.
"""
import json
import time

import numpy as np
import pykokkos as pk

@pk.workunit
def one(i, x, y, z):
    z[i] = x[i] + y[i]

@pk.workunit
def divmod_k(i, x, y, d):
    y[i] = x[i] // d + x[i] % d

@pk.workunit
def rowcol(k, acc, u, n):
    i = k // (n - 2) + 1
    j = k % (n - 2) + 1
    acc += u[i * n + j]

def best(f, reps):
    b = 1e9
    for _ in range(reps):
        t = time.perf_counter(); f(); b = min(b, time.perf_counter() - t)
    return b

def main() -> dict:
    x1, y1, z1 = (pk.View([1], pk.double) for _ in range(3))
    pk.parallel_for(1, one, x=x1, y=y1, z=z1)

    def launches():
        for _ in range(20000):
            pk.parallel_for(1, one, x=x1, y=y1, z=z1)
    n = 1 << 22
    x = pk.array(np.arange(n, dtype=np.int64))
    y = pk.View([n], pk.int64)
    pk.parallel_for(n, divmod_k, x=x, y=y, d=7)
    assert (np.asarray(y) == np.arange(n) // 7 + np.arange(n) % 7).all()
    m = 2048
    u = pk.array(np.random.default_rng(1).random(m * m))
    float(pk.parallel_reduce((m - 2) * (m - 2), rowcol, u=u, n=m))
    return {
        "launch_us": best(launches, 7) / 20000 * 1e6,
        "divmod_ms": best(lambda: (pk.parallel_for(n, divmod_k, x=x, y=y, d=7), pk.fence()), 30) * 1e3,
        "rowcol_ms": best(lambda: float(pk.parallel_reduce((m - 2) * (m - 2), rowcol, u=u, n=m)), 30) * 1e3,
    }


if __name__ == "__main__":
    print(json.dumps(main()))
