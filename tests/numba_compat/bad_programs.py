"""Jitted functions outside the subset (test_api.py checks their errors)."""
import numpy as np

from pykokkos.numba import njit, prange


@njit
def uses_dict(x):
    d = {"a": 1}
    return x[0] + d["a"]


@njit(parallel=True)
def reads_reduction_var(x):
    s = 0.0
    for i in prange(x.shape[0]):
        s += x[i]
        if s > 1.0:
            x[i] = 0.0
    return s


@njit
def fancy_index(x, idx):
    return x[idx].sum()


@njit(fallback=True)
def with_fallback(x):
    d = {"k": 2.0}
    return x.sum() * d["k"]


@njit
def good(x):
    return np.sum(x * 2.0)


@njit(parallel=True)
def unknown_ufunc_in_kernel(x, out):
    for i in prange(x.shape[0]):
        out[i] = np.sinc(x[i])
