"""Level 3 BLAS, as upstream's `pykokkos.linalg.l3_blas` names it."""

from __future__ import annotations

import numpy as np

import pykokkos as pk


@pk.workunit
def _gemm(i: int, j: int, alpha: float, a: pk.View2D[pk.double], b: pk.View2D[pk.double], c: pk.View2D[pk.double]):
    # The terms in upstream's order (each product scaled, then added), so sums round alike.
    for k in range(a.extent(1)):
        c[i][j] += a[i][k] * b[k][j] * alpha


@pk.workunit
def _gemm_c(
    i: int,
    j: int,
    alpha: float,
    beta: float,
    a: pk.View2D[pk.double],
    b: pk.View2D[pk.double],
    c_in: pk.View2D[pk.double],
    c: pk.View2D[pk.double],
):
    for k in range(a.extent(1)):
        c[i][j] += a[i][k] * b[k][j] * alpha
    c[i][j] += c_in[i][j] * beta


def dgemm(alpha: float, view_a, view_b, beta: float = 0.0, view_c=None):
    """`C = alpha * A @ B (+ beta * view_c)` in double precision, one kernel
    over the (m, n) entries of C; A is (m, k), B is (k, n)."""
    k_a, k_b = view_a.shape[1], view_b.shape[0]
    if k_a != k_b:
        raise ValueError(f"Second dimensions shape of a is {k_a} which does not match first dimension shape of b, {k_b}.")
    a, b = (v if v.dtype == pk.double else pk.array(np.asarray(v, dtype=np.float64)) for v in (view_a, view_b))
    m, n = view_a.shape[0], view_b.shape[1]
    c = pk.View([m, n], pk.double)
    policy = pk.MDRangePolicy([0, 0], [m, n])
    if view_c is None:
        pk.parallel_for(policy, _gemm, alpha=float(alpha), a=a, b=b, c=c)
    else:
        pk.parallel_for(policy, _gemm_c, alpha=float(alpha), beta=float(beta), a=a, b=b, c_in=view_c, c=c)
    return c
