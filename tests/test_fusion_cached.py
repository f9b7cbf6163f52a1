"""Fused kernels keep a buffer that every launch of the region accesses only
at the work index in a local for each work item (loaded once, stored back
once: src/fusion/layout.rs, src/codegen/fused.rs). Each program here runs
eagerly and fused and is checked against NumPy: the buffers that qualify,
and the ones that must stay in memory (written only under a condition, two
names for one allocation, atomic views)."""
from __future__ import annotations

import numpy as np
import pytest

import pykokkos as pk
from test_fusion import N, both, mul2, plus, total
from test_fusion import fresh as views

pytestmark = pytest.mark.eager_only  # each test runs its program both ways itself



@pk.workunit
def c_axpy(i, a, x, y):
    y[i] = a * x[i] + y[i]


@pk.workunit
def c_pos_double(i, x, y):
    if x[i] > 0.0:
        y[i] = 2.0 * x[i]


@pk.workunit
def c_plus_one(i, x, y):
    y[i] = x[i] + 1.0


@pk.workunit
def c_count(i, x, h):
    h[i] += x[i]


def check(prog, want: dict, fuses: bool = True):
    eager, lazy, reports = both(prog)
    assert ("fused(" in reports) == fuses, reports
    for k, w in want.items():
        np.testing.assert_array_equal(eager[k], w, err_msg=k)
        np.testing.assert_array_equal(lazy[k], w, err_msg=k)


def test_a_ping_pong_chain_of_live_buffers():
    x0, y0 = np.arange(N) * 1.0, np.full(N, 3.0)

    def prog():
        x, y = views(x0, y0)
        for _ in range(3):
            pk.parallel_for(N, c_axpy, a=0.5, x=x, y=y)
            pk.parallel_for(N, c_axpy, a=0.25, x=y, y=x)
        return {"x": np.asarray(x).copy(), "y": np.asarray(y).copy()}

    x, y = x0.copy(), y0.copy()
    for _ in range(3):
        y = 0.5 * x + y
        x = 0.25 * y + x
    check(prog, {"x": x, "y": y})


def test_an_element_read_before_the_launch_that_writes_it_keeps_its_old_value():
    x0, y0 = np.arange(N) * 1.0, np.full(N, 7.0)

    def prog():
        x, y, z, w = views(x0, y0, 0.0, 0.0)
        pk.parallel_for(N, mul2, x=y, y=z)  # reads the old y
        pk.parallel_for(N, c_plus_one, x=x, y=y)  # writes every y[i]
        pk.parallel_for(N, plus, x=y, y=z, z=w)
        return {k: np.asarray(v).copy() for k, v in zip("yzw", (y, z, w))}

    check(prog, {"y": x0 + 1.0, "z": 2.0 * y0, "w": x0 + 1.0 + 2.0 * y0})


def test_a_buffer_written_only_under_a_condition_keeps_its_other_elements():
    x0 = np.where(np.arange(N) % 3 == 0, -1.0, 1.0) * np.arange(N)

    def prog():
        x, y, z = views(x0, 5.0, 0.0)
        pk.parallel_for(N, c_pos_double, x=x, y=y)
        pk.parallel_for(N, plus, x=x, y=y, z=z)
        return {"y": np.asarray(y).copy(), "z": np.asarray(z).copy()}

    y = np.where(x0 > 0, 2.0 * x0, 5.0)
    check(prog, {"y": y, "z": x0 + y})


def test_one_buffer_under_two_names_is_one_local():
    x0 = np.arange(N) * 1.0

    def prog():
        x, z = views(x0, 0.0)
        pk.parallel_for(N, c_axpy, a=2.0, x=x, y=x)  # x = 3x
        pk.parallel_for(N, plus, x=x, y=x, z=z)
        return {"x": np.asarray(x).copy(), "z": np.asarray(z).copy()}

    check(prog, {"x": 3.0 * x0, "z": 6.0 * x0})


def test_two_views_of_one_allocation_stay_in_memory():
    base0 = np.arange(2 * N) * 1.0

    def prog():
        base = pk.View([2 * N], pk.double)
        np.asarray(base)[:] = base0
        lo, hi = base[0:N], base[N:2 * N]
        pk.parallel_for(N, c_plus_one, x=lo, y=hi)
        pk.parallel_for(N, mul2, x=hi, y=lo)
        return {"base": np.asarray(base).copy()}

    hi = base0[:N] + 1.0
    check(prog, {"base": np.concatenate([2.0 * hi, hi])})


def test_a_map_and_the_reduction_after_it():
    x0 = np.arange(N) * 1.0

    def prog():
        x, = views(x0)
        pk.parallel_for(N, c_axpy, a=1.0, x=x, y=x)
        t = pk.parallel_reduce(N, total, v=x)
        return {"x": np.asarray(x).copy(), "t": np.array([float(t)])}

    check(prog, {"x": 2.0 * x0, "t": np.array([2.0 * x0.sum()])})


def test_an_atomic_view_stays_in_memory():
    x0 = np.arange(N) * 1.0

    def prog():
        x, = views(x0)
        h = pk.View([N], pk.double, trait=pk.Atomic)
        w, = views(0.0)
        pk.parallel_for(N, c_count, x=x, h=h)
        pk.parallel_for(N, plus, x=h, y=x, z=w)
        return {"h": np.asarray(h).copy(), "w": np.asarray(w).copy()}

    eager, lazy, reports = both(prog)
    for got in (eager, lazy):
        np.testing.assert_array_equal(got["h"], x0)
        np.testing.assert_array_equal(got["w"], 2.0 * x0)
