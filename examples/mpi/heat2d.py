"""2-D heat equation (Jacobi iteration) over MPI ranks: rows split in blocks, one
halo row exchanged with each neighbour per step through mpi4py, straight from
the Views (buffer protocol: pending kernels writing a row run before it is
sent; a received row counts as written). The result equals the one-rank run.

    mpiexec -n 2 python -m mpi4py examples/mpi/heat2d.py [n] [steps]
    PK_FUSE=1 mpiexec -n 2 python -m mpi4py examples/mpi/heat2d.py
    python examples/mpi/heat2d.py            # one rank

Options after the sizes: --cuda (the Cuda space), --check (compare with NumPy on rank 0), --speedup (rank 0
then runs the problem alone, for the speedup of the ranks over one, and checks that both runs end in the
same grid, bit for bit), --save FILE.npy, --halos ipc|mpi|host (how halo rows travel, pykokkos.mpi.sendrecv: CUDA IPC
between the GPUs of one host, device memory to a CUDA-aware MPI, or host copies; by default the
first of pykokkos.mpi.halo_paths()), --staging (the same as --halos host).

Each rank builds only its own block (rows plus two ghost rows), so a grid that fills most of a GPU's
memory needs that much host memory once, not once per rank; the whole grid is gathered on rank 0 only
for --check and --save. The last line before any check gives a checksum of the final grid that does not
depend on the number of ranks (one 64-bit sum of each row's bits, hashed in row order).
"""

import hashlib
import sys
import time

import numpy as np
from mpi4py import MPI

import pykokkos as pk
from pykokkos.mpi import describe, exchange, halo_path


@pk.workunit
def jacobi(k, acc, u, v, n, r):
    # One interior point per work item: row k // (n - 2) + 1, column k % (n - 2) + 1.
    i = k // (n - 2) + 1
    j = k % (n - 2) + 1
    new = u[i][j] + r * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1] - 4.0 * u[i][j])
    v[i][j] = new
    acc += (new - u[i][j]) * (new - u[i][j])


@pk.workunit
def touch(i, u, v):
    u[i][0] = u[i][0]
    v[i][0] = v[i][0]


def split(n_rows: int, size: int, rank: int) -> tuple[int, int]:
    """First interior row and row count of this rank's block."""
    base, extra = divmod(n_rows, size)
    count = base + (rank < extra)
    return 1 + rank * base + min(rank, extra), count


def initial(n: int) -> np.ndarray:
    g = np.zeros((n, n))
    g[0, :] = 1.0  # a hot top edge; the others stay at 0
    return g


def initial_rows(n: int, lo: int, hi: int, out: np.ndarray) -> None:
    """Rows [lo, hi) of `initial(n)` into `out`, without the whole grid."""
    out[:] = 0.0
    if lo == 0:
        out[0, :] = 1.0


def row_sums(block: np.ndarray) -> np.ndarray:
    """Each row's bits summed as unsigned 64-bit integers (wrapping): equal
    rows give equal sums whichever rank holds them."""
    return block.view(np.uint64).sum(axis=1, dtype=np.uint64)


def solve(comm, n: int, steps: int, r: float = 0.2, halos: str = "host", gather: bool = False):
    rank, size = comm.Get_rank(), comm.Get_size()
    first, rows = split(n - 2, size, rank)
    # Local block with a ghost row above and below (the grid's edge where there is no neighbour),
    # row-major on every space so that a halo row is one run of memory.
    u = pk.View([rows + 2, n], pk.double, layout=pk.LayoutRight)
    v = pk.View([rows + 2, n], pk.double, layout=pk.LayoutRight)
    initial_rows(n, first - 1, first + rows + 1, np.asarray(u))
    np.asarray(v)[:] = np.asarray(u)
    up = rank - 1 if rank > 0 else MPI.PROC_NULL
    down = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    # Compile (or load) the kernel before the clock starts: v's interior gets
    # what the first step computes again.
    float(pk.parallel_reduce(rows * (n - 2), jacobi, u=u, v=v, n=n, r=r))
    if halos != "host":  # device memory exists once a kernel used the Views
        pk.parallel_for(1, touch, u=u, v=v)

    def halo_rows(w):
        return [(w[1], up, w[rows + 1], down), (w[rows], down, w[0], up)]

    # One exchange of each View before the clock: the first maps a peer's memory
    # on the "ipc" path (milliseconds, once). Ghost rows are always received
    # again before a step reads them, so this changes no result.
    exchange(halo_rows(u) + halo_rows(v), comm, path=halos)
    comm.Barrier()
    t0 = time.perf_counter()
    change = 0.0
    # Halo rows through pykokkos.mpi.exchange: host copies, a CUDA-aware MPI, or
    # CUDA IPC between the GPUs of one host (`halos`, the same on every rank).
    for _ in range(steps):
        exchange(halo_rows(u), comm, path=halos)
        local = pk.parallel_reduce(rows * (n - 2), jacobi, u=u, v=v, n=n, r=r)
        change = comm.allreduce(local)  # a lazy total is forced, then reduced
        u, v = v, u
    pk.fence()
    took = time.perf_counter() - t0
    block = np.asarray(u)[1 : rows + 1]
    # The fixed edges: row 0 and row n - 1 never change, nor do columns 0 and n - 1.
    edges = np.empty((2, n))
    initial_rows(n, 0, 1, edges[:1])
    initial_rows(n, n - 1, n, edges[1:])
    sums = comm.gather(row_sums(block), root=0)
    digest = None
    if rank == 0:
        digest = hashlib.sha256(np.concatenate([row_sums(edges[:1]), *sums, row_sums(edges[1:])])).hexdigest()[:16]
    if not gather:
        return None, took, change, digest
    counts = comm.allgather(rows * n)
    full = np.empty((n - 2, n)) if rank == 0 else None
    comm.Gatherv(np.ascontiguousarray(block), (full, counts) if rank == 0 else None, root=0)
    if rank == 0:
        grid = np.concatenate([edges[:1], full, edges[1:]])
        return grid, took, change, digest
    return None, took, change, digest


def numpy_reference(n: int, steps: int, r: float = 0.2) -> np.ndarray:
    u = initial(n)
    for _ in range(steps):
        v = u.copy()
        v[1:-1, 1:-1] = u[1:-1, 1:-1] + r * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1])
        u = v
    return u


def option(name: str):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


def main():
    args = [a for a in sys.argv[1:3] if a.isdigit()]
    n = int(args[0]) if args else 512
    steps = int(args[1]) if len(args) > 1 else 200
    comm = MPI.COMM_WORLD
    if "--cuda" in sys.argv:
        pk.set_default_space(pk.Cuda)  # each rank on its node-local GPU
    halos = halo_path("host" if "--staging" in sys.argv else option("--halos"))
    setups = comm.gather(describe(comm), root=0)
    if comm.Get_rank() == 0:
        print("\n".join(setups))
    gather = "--check" in sys.argv or "--save" in sys.argv
    grid, took, change, digest = solve(comm, n, steps, halos=halos, gather=gather)
    times = comm.gather(took, root=0)
    if comm.Get_rank() == 0:
        mode = "fused (PK_FUSE=1)" if pk._native.lazy_enabled() else "eager"
        print(
            f"{comm.Get_size()} rank(s), {mode}, halos: {halos}: {n}x{n}, {steps} steps, "
            f"{max(times) / steps * 1e3:.3f} ms per step; last change {change:.6e}; grid checksum {digest}"
        )
    if "--speedup" in sys.argv and comm.Get_size() > 1:
        # The same problem on rank 0 alone (its threads and GPU as they are), for the
        # ratio; the other ranks wait, so they hold no GPU or cores meanwhile.
        if comm.Get_rank() == 0:
            _, alone, _, single = solve(MPI.COMM_SELF, n, steps, halos=halos)
            print(
                f"1 rank: {alone / steps * 1e3:.3f} ms per step; {comm.Get_size()} ranks are "
                f"{alone / max(times):.2f}x as fast (parallel efficiency "
                f"{alone / max(times) / comm.Get_size():.2f}); grid checksum {single}"
            )
            assert single == digest, f"{comm.Get_size()} ranks ended in another grid than 1 rank"
            print("equal to the 1-rank run")
        comm.Barrier()
    if comm.Get_rank() == 0:
        if "--save" in sys.argv:
            np.save(sys.argv[sys.argv.index("--save") + 1], grid)
        if "--check" in sys.argv:
            ref = numpy_reference(n, steps)
            assert np.array_equal(grid, ref), float(np.abs(grid - ref).max())
            print("equal to NumPy's run")


if __name__ == "__main__":
    main()
