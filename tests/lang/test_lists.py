"""Fixed-size list locals in kernels (`x: List[int] = [a, b]`, `z = [0.0] * n`):
indexing, writes, len/extent, in loops; the errors around them. Checked
against the same computation in Python; conftest runs each test eagerly and
lazily."""
from typing import List

import numpy as np
import pytest

import pykokkos as pk

pytestmark = pytest.mark.compiles


@pk.workunit
def use_lists(i: int, acc: pk.Acc[pk.double], a: int, b: int, x):
    ints: List[int] = [a, b, i]
    halves = [0.0] * 3
    for k in range(len(ints)):
        halves[k] = ints[k] * 0.5
    halves[2] += x[i]
    acc += halves[0] + halves[1] + halves[2] + ints.extent(0)


@pk.workunit
def list_out(i: int, out):
    w: List[float] = [1.5, 2.5]
    w[i % 2] = w[0] * w[1]
    out[i] = w[0] - w[1]


def test_list_locals_compute_what_python_lists_do():
    x = np.arange(10.0)
    got = pk.parallel_reduce(10, use_lists, a=7, b=2, x=x)
    want = 0.0
    for i in range(10):
        ints = [7, 2, i]
        halves = [v * 0.5 for v in ints]
        halves[2] += x[i]
        want += sum(halves) + len(ints)
    assert float(got) == want
    out = pk.View([6], pk.double)
    pk.parallel_for(6, list_out, out=out)
    want = []
    for i in range(6):
        w = [1.5, 2.5]
        w[i % 2] = w[0] * w[1]
        want.append(w[0] - w[1])
    assert np.asarray(out).tolist() == want


@pk.workunit
def list_resized(i: int, out):
    v = [1, 2]
    v = [1, 2, 3]
    out[i] = v[0]


@pk.workunit
def list_empty(i: int, out):
    v: List[int] = []
    out[i] = 0


def test_list_errors_name_the_line():
    out = pk.View([2], pk.double)
    with pytest.raises(pk.KernelTypeError, match="a list one size"):
        pk.parallel_for(2, list_resized, out=out)
        pk.flush()
    with pytest.raises(pk.KernelTypeError, match="empty list"):
        pk.parallel_for(2, list_empty, out=out)
        pk.flush()
