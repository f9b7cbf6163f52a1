"""Run by test_mpi.py under mpiexec -n 2: pykokkos.mpi.sendrecv of View rows
(the host path here), pending kernels around it, and the path's choice."""

import os

import numpy as np
from mpi4py import MPI

import pykokkos as pk
from pykokkos.mpi import halo_path, halo_paths, sendrecv


@pk.workunit
def fill(i, v, base):
    v[i][0] = base + i
    v[i][1] = base - i


@pk.workunit
def double(i, v):
    v[i][0] = 2.0 * v[i][0]


comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
peer = (rank + 1) % size
src = (rank - 1) % size
v = pk.View([4, 2], pk.double)
pk.parallel_for(4, fill, v=v, base=10.0 * rank)  # pending under PK_FUSE=1: runs before the send
sendrecv(v[1], peer, v[3], src, comm)
pk.parallel_for(4, double, v=v)  # reads the received row: runs after it arrived
got = np.asarray(v)
want_row = np.array([10.0 * src + 1, 10.0 * src - 1])
assert np.array_equal(got[3], [2 * want_row[0], want_row[1]]), got
assert np.array_equal(got[1], [2 * (10.0 * rank + 1), 10.0 * rank - 1]), got
assert halo_paths()[-1] == "host" and halo_path() == halo_paths()[0]
if "ipc" not in halo_paths():
    try:
        halo_path("ipc")
        raise AssertionError("ipc must be refused where it cannot run")
    except RuntimeError as e:
        assert "not available here" in str(e) and "host" in str(e)
os.environ["PK_MPI_HALOS"] = "nccl"
try:
    halo_path()
    raise AssertionError("an unknown path must be refused")
except ValueError as e:
    assert "ipc, mpi, host" in str(e)
print(f"sendrecv ok on rank {rank}")
