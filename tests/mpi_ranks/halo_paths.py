"""Run under `mpiexec -n 2` (test_mpi.py here; scripts/gpu/device_check.sh on
the GPU, where "ipc" is a path too): pykokkos.mpi.exchange through every path
`halo_paths()` offers, on the shapes of exchange programs use, each result
against NumPy's. Prints one line per path on each rank; any wrong value raises."""

import os
import threading

import numpy as np
from mpi4py import MPI

import pykokkos as pk
from pykokkos.mpi import exchange, halo_paths

NULL = MPI.PROC_NULL


@pk.workunit
def fill(i, v, base):
    for j in range(v.extent(1)):
        v[i][j] = base + 100.0 * i + j


@pk.workunit
def fill_int(i, v, base):
    v[i] = base + i


if os.environ.get("PK_TEST_SPACE") == "cuda":  # scripts/gpu/device_check.sh
    pk.set_default_space(pk.Cuda)
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
up, down = (rank + 1) % size, (rank - 1) % size


def grid(rows, cols, base):
    """A View written by a kernel (so it has device memory on the GPU) and the same values in NumPy."""
    v = pk.View([rows, cols], pk.double)
    pk.parallel_for(rows, fill, v=v, base=base)
    return v, base + 100.0 * np.arange(rows)[:, None] + np.arange(cols)[None, :]


def check(path):
    mine, theirs = 1000.0 * rank, 1000.0 * down  # what `down` sends up arrives here
    # 1. Rows both ways, with a pair between them that is all null on rank 0 (as a
    #    9-point stencil at a boundary lists one) and a pair with itself on the
    #    others: the pairs after it must still match their peers'.
    v, want = grid(6, 5, mine)
    spare, spare_want = grid(2, 5, -1.0)
    middle = (spare[0], NULL, spare[1], NULL) if rank == 0 else (spare[0], rank, spare[1], rank)
    exchange([(v[4], up, v[0], down), middle, (v[1], down, v[5], up)], comm, path)
    want[0] = (1000.0 * down + 100.0 * np.arange(6)[:, None] + np.arange(5)[None, :])[4]
    want[5] = (1000.0 * up + 100.0 * np.arange(6)[:, None] + np.arange(5)[None, :])[1]
    assert np.array_equal(np.asarray(v), want), (path, np.asarray(v), want)
    if rank != 0:
        spare_want[1] = spare_want[0]
    assert np.array_equal(np.asarray(spare), spare_want), path

    # NumPy arrays as buffers, and a null pair whose receive buffer is None.
    a = np.full(5, float(rank))
    got = np.zeros(5)
    exchange([(a, up, got, down), (a, NULL, None, NULL)], comm, path)
    assert np.array_equal(got, np.full(5, float(down))), (path, got)

    # 2. A row of 96 KiB from host memory only (no kernel made device memory for it):
    #    its bytes travel in the message, past mpi4py's 32 KiB irecv buffer.
    n = 12288
    h = pk.View([2, n], pk.double)
    np.asarray(h)[0] = mine + np.arange(n)
    exchange([(h[0], up, h[1], down)], comm, path)
    assert np.array_equal(np.asarray(h)[1], theirs + np.arange(n)), path

    # 3. A strided column into a contiguous row and back, and int32 data.
    c, cw = grid(7, 3, mine)
    r = pk.View([7], pk.double)
    exchange([(c[:, 2], up, r, down)], comm, path)
    assert np.array_equal(np.asarray(r), (theirs + 100.0 * np.arange(7) + 2)), (path, np.asarray(r), np.asarray(c))
    exchange([(r, up, c[:, 0], down)], comm, path)
    cw[:, 0] = 1000.0 * ((rank - 2) % size) + 100.0 * np.arange(7) + 2  # two hops down the ring
    assert np.array_equal(np.asarray(c), cw), (path, np.asarray(c), cw)
    iv = pk.View([9], pk.int32)
    pk.parallel_for(9, fill_int, v=iv, base=10 * rank)
    iw = pk.View([9], pk.int32)
    exchange([(iv, up, iw, down)], comm, path)
    assert np.array_equal(np.asarray(iw), 10 * down + np.arange(9, dtype=np.int32)), path

    # 4. A pair with itself.
    s, sw = grid(3, 4, mine)
    exchange([(s[0], rank, s[2], rank)], comm, path)
    sw[2] = sw[0]
    assert np.array_equal(np.asarray(s), sw), path

    # 5. More allocations than a rank keeps exported, one sent again after the others
    #    retired, and a sent View resized (its old allocation must stay valid until
    #    the peer let go of it).
    keep = [grid(2, 8, mine + k) for k in range(12)]
    for k, (g, _) in enumerate(keep):
        exchange([(g[0], up, g[1], down)], comm, path)
        assert np.array_equal(np.asarray(g)[1], theirs + k + np.arange(8)), (path, k)
    g0, _ = keep[0]
    pk.parallel_for(2, fill, v=g0, base=mine + 50.0)
    exchange([(g0[0], up, g0[1], down)], comm, path)
    assert np.array_equal(np.asarray(g0)[1], theirs + 50.0 + np.arange(8)), path
    rs, _ = grid(4, 4, mine)
    exchange([(rs[0], up, rs[1], down)], comm, path)
    rs.resize(0, 9)
    pk.parallel_for(9, fill, v=rs, base=mine + 7.0)
    exchange([(rs[8], up, rs[0], down)], comm, path)
    assert np.array_equal(np.asarray(rs)[0], theirs + 7.0 + 800.0 + np.arange(4)), path

    # 6. From another thread (no current CUDA context there until the exchange takes one).
    t, tw = grid(3, 6, mine)
    errors = []
    worker = threading.Thread(target=lambda: _catch(errors, exchange, [(t[0], up, t[2], down)], comm, path))
    worker.start()
    worker.join()
    assert not errors, errors
    tw[2] = theirs + np.arange(6)
    assert np.array_equal(np.asarray(t), tw), path

    # 7. Managed memory (the driver exports none: its bytes travel in the message).
    if pk._native.default_space() == pk._native.wire_codes()["exec_spaces"]["Cuda"]:
        m = pk.View([2, 6], pk.double, space=pk.CudaUVMSpace)
        pk.parallel_for(2, fill, v=m, base=mine)
        exchange([(m[0], up, m[1], down)], comm, path)
        assert np.array_equal(np.asarray(m)[1], theirs + np.arange(6)), path

    # 8. A wrong size on one rank only fails there, and the other pairs of that
    #    exchange still arrive; then the same on every rank. The ranks stay in step:
    #    the next exchange works.
    p0, p1 = pk.View([4], pk.double), pk.View([4], pk.double)
    np.asarray(p0)[:] = mine
    short = pk.View([3 if rank == 0 else 4], pk.double)
    ok = pk.View([4], pk.double)
    try:
        exchange([(p0, up, short, down), (p1, down, ok, up)], comm, path)
        assert rank != 0, "a size mismatch must raise"
    except ValueError as e:
        assert rank == 0 and "recvbuf holds 24" in str(e), e
    if rank != 0:
        assert np.array_equal(np.asarray(short), np.full(4, theirs)), (path, np.asarray(short))
    comm.Barrier()
    a, b = pk.View([4], pk.double), pk.View([5], pk.double)
    try:
        exchange([(a, up, b, down)], comm, path)
        raise AssertionError("a size mismatch must raise")
    except ValueError as e:
        assert "recvbuf holds 40" in str(e) and "32 bytes" in str(e), e
    x, _ = grid(2, 3, mine)
    exchange([(x[0], up, x[1], down)], comm, path)
    assert np.array_equal(np.asarray(x)[1], theirs + np.arange(3)), path


def _catch(errors, f, *args):
    try:
        f(*args)
    except Exception as e:  # noqa: BLE001 - reported by the main thread
        errors.append(e)


for path in halo_paths():
    check(path)
    print(f"halo path {path} ok on rank {rank}")
