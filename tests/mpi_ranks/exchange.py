"""Run by test_mpi.py under `mpiexec -n 2`: lazy work around MPI messages.
Prints one line per check on rank 0; any wrong value raises."""
import numpy as np
from mpi4py import MPI

import pykokkos as pk


@pk.workunit
def fill(i, v, base):
    v[i] = base + i


@pk.workunit
def scale(i, v, k):
    v[i] = k * v[i]


@pk.workunit
def total(i, acc, v):
    acc += v[i]


comm = MPI.COMM_WORLD
rank = comm.Get_rank()
n = 1000
lazy = pk._native.lazy_enabled()

# 1. A pending kernel writing a View runs before the View is sent; the receive
#    buffer counts as written (a pending reader of it runs before the receive).
v = pk.View([n], pk.double)
pk.parallel_for(n, fill, v=v, base=100.0 * rank)
if rank == 0:
    comm.Send(v, dest=1, tag=1)
else:
    before = pk.parallel_reduce(n, total, v=v)  # reads the old contents, still pending when lazy
    comm.Recv(v, source=0, tag=1)
    assert float(before) == 100.0 * n + n * (n - 1) / 2, float(before)
    assert np.array_equal(np.asarray(v), np.arange(n, dtype=float)), "received row"

# 2. Irecv, a kernel on other memory, Wait, then a kernel reading what arrived.
w = pk.View([n], pk.double)
other = pk.View([n], pk.double)
if rank == 1:
    req = comm.Irecv(w, source=0, tag=2)
    pk.parallel_for(n, fill, v=other, base=5.0)
    req.Wait()
    pk.parallel_for(n, scale, v=w, k=2.0)
    assert np.array_equal(np.asarray(w), 2.0 * (7.0 + np.arange(n))), "Irecv, kernel, Wait"
else:
    src = pk.View([n], pk.double)
    pk.parallel_for(n, fill, v=src, base=7.0)
    req = comm.Isend(src, dest=1, tag=2)
    req.Wait()

# 3. A lazy reduction handed to allreduce is forced first.
u = pk.View([n], pk.double)
pk.parallel_for(n, fill, v=u, base=float(rank))
local = pk.parallel_reduce(n, total, v=u)
if lazy:
    assert type(local).__name__ == "LazyNumber"
got = comm.allreduce(local)
want = sum(r * n + n * (n - 1) / 2 for r in range(comm.Get_size()))
assert got == want, (got, want)
if rank == 0:
    print(f"exchange ok ({'lazy' if lazy else 'eager'})")
