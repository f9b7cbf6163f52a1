"""A Numba program (the shape of numba-examples' Lennard-Jones prange kernel and
sum2d, and of the PRK star stencil written with slices). Only the import
differs from a program for real Numba: `import pykokkos.numba as numba`.

    python examples/numba/lennard_jones.py
    python -m pykokkos migrate examples/numba/lennard_jones.py -o /tmp/lj_pk.py
"""
import math
import sys

import numpy as np

import pykokkos.numba as numba
from pykokkos.numba import njit, prange


@njit
def lj(r):
    sr6 = (1.0 / r) ** 6
    return 4.0 * (sr6 * sr6 - sr6)


@njit
def distance(p1, p2):
    dx = p1[0] - p2[0]
    dy = p1[1] - p2[1]
    dz = p1[2] - p2[2]
    return math.sqrt(dx * dx + dy * dy + dz * dz)


@njit(parallel=True)
def potential(cluster):
    energy = 0.0
    for i in prange(len(cluster) - 1):
        for j in range(i + 1, len(cluster)):
            energy += lj(distance(cluster[i], cluster[j]))
    return energy


@njit
def sum2d(arr):
    M, N = arr.shape
    result = 0.0
    for i in range(M):
        for j in range(N):
            result += arr[i, j]
    return result


@numba.jit(nopython=True)
def star(n, r, A, B, W):
    B[r:n - r, r:n - r] += W[r, r] * A[r:n - r, r:n - r] + W[r, r + 1] * A[r:n - r, r + 1:n - r + 1] \
        + W[r, r - 1] * A[r:n - r, r - 1:n - r - 1] + W[r + 1, r] * A[r + 1:n - r + 1, r:n - r] \
        + W[r - 1, r] * A[r - 1:n - r - 1, r:n - r]


def main(n=int(sys.argv[1]) if len(sys.argv) > 1 else 400):
    rng = np.random.default_rng(1)
    cluster = rng.random((n, 3)) * n ** (1 / 3) * 1.5
    print(f"potential of {n} atoms: {potential(cluster):.10e}")
    a = rng.random((n, 50))
    print(f"sum2d: {sum2d(a):.10e}")
    A = rng.random((n, n))
    B = np.zeros((n, n))
    W = np.array([[0.0, 0.25, 0.0], [0.25, 0.0, 0.25], [0.0, 0.25, 0.0]])
    for _ in range(5):
        star(n, 1, A, B, W)
        A += 1.0
    print(f"star: norm {np.abs(B).sum():.10e}")


if __name__ == "__main__":
    main()
