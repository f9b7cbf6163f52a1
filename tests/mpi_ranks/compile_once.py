"""Run by test_mpi.py under `mpiexec -n 2` with an empty kernel cache: both ranks
launch the same new kernel; each writes a trace, and the test counts compiles."""
import sys

from mpi4py import MPI

import pykokkos as pk


@pk.workunit
def brand_new(i, v, k):
    v[i] = k * i + 0.5


rank = MPI.COMM_WORLD.Get_rank()
with pk.trace.record(f"{sys.argv[1]}.{rank}.jsonl"):
    v = pk.View([64], pk.double)
    pk.parallel_for(64, brand_new, v=v, k=3.0)
    assert float(v[10]) == 30.5
print(f"rank {rank}: threads {pk._native.initialize()}")
