"""Conjugate gradients for the 2-D Poisson problem over MPI ranks: -laplace(u) = f
on the unit square, zero on its edges, the 5-point stencil on an n x n grid of
interior points. Rows are split in blocks (as examples/mpi/heat2d.py); every
iteration exchanges one halo row of the search direction with each neighbour
and sums two dot products over the ranks (`comm.allreduce` of a lazy total:
the local kernel runs first, then the ranks add their parts).

    mpiexec -n 2 python -m mpi4py examples/mpi/cg2d.py [n] [max_iterations]
    PK_FUSE=1 mpiexec -n 2 python -m mpi4py examples/mpi/cg2d.py
    python examples/mpi/cg2d.py               # one rank

Options after the sizes: --cuda (the Cuda space), --check (rank 0 gathers the
solution and compares it with SciPy's direct solve of the same system, and
with the exact solution, which this grid represents exactly: see right_hand_side),
--tol T (relative residual, default 1e-10; 0 runs exactly max_iterations, as
benches/bench_gpus.py does), --halos ipc|mpi|host (how halo rows travel:
pykokkos.mpi.sendrecv; by default the first of pykokkos.mpi.halo_paths()),
--staging (the same as --halos host).

Each iteration is three kernels: the stencil with the first dot product in
the same pass, the update of the solution and residual with the second, and
the new search direction. The result does not depend on the number of ranks
beyond the order in which the dot products add up.
"""

import sys
import time

import numpy as np
from mpi4py import MPI

import pykokkos as pk
from pykokkos.mpi import describe, exchange, halo_path


@pk.workunit
def stencil(k, acc, p, q, n):
    # One interior point per work item: row k // n + 1, column k % n + 1 (the
    # block has a ghost row above and below and a zero column on each side).
    i = k // n + 1
    j = k % n + 1
    v = 4.0 * p[i][j] - p[i - 1][j] - p[i + 1][j] - p[i][j - 1] - p[i][j + 1]
    q[i][j] = v
    acc += p[i][j] * v


@pk.workunit
def update(k, acc, x, r, p, q, alpha, n):
    i = k // n + 1
    j = k % n + 1
    x[i][j] = x[i][j] + alpha * p[i][j]
    r[i][j] = r[i][j] - alpha * q[i][j]
    acc += r[i][j] * r[i][j]


@pk.workunit
def direction(k, r, p, beta, n):
    i = k // n + 1
    j = k % n + 1
    p[i][j] = r[i][j] + beta * p[i][j]


def split(n: int, size: int, rank: int) -> tuple[int, int]:
    """First grid row (0-based, interior rows only) and row count of this rank's block."""
    base, extra = divmod(n, size)
    return rank * base + min(rank, extra), base + (rank < extra)


def right_hand_side(n: int, first: int, rows: int) -> np.ndarray:
    """h^2 f at rows [first, first + rows) of the interior, f = 2 (x(1-x) + y(1-y)):
    the continuous solution is u = x(1-x) y(1-y), quadratic in each variable, which
    the 5-point stencil differentiates exactly, so the grid's solution is u's values."""
    h = 1.0 / (n + 1)
    y = (np.arange(first, first + rows) + 1) * h
    x = (np.arange(n) + 1) * h
    return h * h * 2.0 * np.add.outer(y * (1 - y), x * (1 - x))


def exact_solution(n: int) -> np.ndarray:
    g = (np.arange(n) + 1) / (n + 1)
    return np.outer(g * (1 - g), g * (1 - g))


def solve(comm, n: int, max_iter: int, tol: float, halos: str = "host"):
    rank, size = comm.Get_rank(), comm.Get_size()
    first, rows = split(n, size, rank)
    shape = [rows + 2, n + 2]
    # Row-major on every space: a halo row is one run of memory.
    x, r, p, q = (pk.View(shape, pk.double, layout=pk.LayoutRight) for _ in range(4))
    np.asarray(r)[1 : rows + 1, 1 : n + 1] = right_hand_side(n, first, rows)
    np.asarray(p)[...] = np.asarray(r)
    up = rank - 1 if rank > 0 else MPI.PROC_NULL
    down = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    items = rows * n

    def halos_of_p():
        exchange([(p[1], up, p[rows + 1], down), (p[rows], down, p[0], up)], comm, path=halos)

    # Build (or load) the three kernels before the clock starts, on scratch Views.
    s = pk.View(shape, pk.double, layout=pk.LayoutRight)
    float(pk.parallel_reduce(items, stencil, p=s, q=s, n=n))
    float(pk.parallel_reduce(items, update, x=s, r=s, p=s, q=s, alpha=0.0, n=n))
    pk.parallel_for(items, direction, r=s, p=s, beta=0.0, n=n)
    pk.fence()
    # The first exchange maps a peer's memory on the "ipc" path (milliseconds, once):
    # here, once a kernel gave p its device memory. p's ghosts get what the first
    # iteration gives them, and q is computed again there.
    float(pk.parallel_reduce(items, stencil, p=p, q=q, n=n))
    halos_of_p()
    rr0 = rr = comm.allreduce(float(np.sum(np.asarray(r) ** 2)))
    comm.Barrier()
    t0 = time.perf_counter()
    it = 0
    while it < max_iter and rr > tol * tol * rr0:
        halos_of_p()
        pq = comm.allreduce(pk.parallel_reduce(items, stencil, p=p, q=q, n=n))
        alpha = rr / pq
        rr_new = comm.allreduce(pk.parallel_reduce(items, update, x=x, r=r, p=p, q=q, alpha=alpha, n=n))
        pk.parallel_for(items, direction, r=r, p=p, beta=rr_new / rr, n=n)
        rr = rr_new
        it += 1
    pk.fence()
    took = time.perf_counter() - t0
    return np.asarray(x)[1 : rows + 1, 1 : n + 1].copy(), it, (rr / rr0) ** 0.5, took


def scipy_solution(n: int) -> np.ndarray:
    """SciPy's direct solve of the same linear system (the 5-point matrix, h^2 f)."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spl

    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    a = (sp.kron(sp.identity(n), t) + sp.kron(t, sp.identity(n))).tocsr()
    return spl.spsolve(a, right_hand_side(n, 0, n).ravel()).reshape(n, n)


def option(name: str):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


def main():
    args = [a for a in sys.argv[1:3] if a.isdigit()]
    n = int(args[0]) if args else 256
    max_iter = int(args[1]) if len(args) > 1 else 10 * n
    tol = float(sys.argv[sys.argv.index("--tol") + 1]) if "--tol" in sys.argv else 1e-10
    comm = MPI.COMM_WORLD
    if "--cuda" in sys.argv:
        pk.set_default_space(pk.Cuda)
    halos = halo_path("host" if "--staging" in sys.argv else option("--halos"))
    setups = comm.gather(describe(comm), root=0)
    if comm.Get_rank() == 0:
        print("\n".join(setups))
    block, iterations, residual, took = solve(comm, n, max_iter, tol, halos)
    times = comm.gather(took, root=0)
    blocks = comm.gather(block, root=0)
    if comm.Get_rank() != 0:
        return
    mode = "fused (PK_FUSE=1)" if pk._native.lazy_enabled() else "eager"
    print(
        f"{comm.Get_size()} rank(s), {mode}, halos: {halos}: {n}x{n}, {iterations} iterations, "
        f"{max(times) / max(iterations, 1) * 1e3:.3f} ms per iteration, relative residual {residual:.3e}"
    )
    if tol > 0 and residual > tol:
        raise SystemExit(f"no convergence in {iterations} iterations (relative residual {residual:.3e})")
    if "--check" in sys.argv:
        u = np.concatenate(blocks)
        ref = scipy_solution(n)
        err = float(np.abs(u - ref).max() / np.abs(ref).max())
        # CG stops at a relative residual of tol (or where it got to, with --tol 0);
        # the matrix's condition number (about 0.4 n^2) bounds the solution's
        # relative error by it.
        bound = max(tol, residual) * 0.5 * (n + 1) ** 2
        assert err <= bound, f"differs from SciPy's solve by {err:.3e} (bound {bound:.3e})"
        exact = exact_solution(n)
        grid_err = float(np.abs(u - exact).max() / np.abs(exact).max())
        assert grid_err <= bound, f"differs from the exact solution by {grid_err:.3e} (bound {bound:.3e})"
        print(f"equal to SciPy's solve within {err:.1e} and to the exact solution within {grid_err:.1e} (bound {bound:.1e})")


if __name__ == "__main__":
    main()
