"""@pk.functor classes: members set in __init__, @pk.workunit methods launched
as bound methods (for and reduce), members changed between launches, and
@pk.function methods called as self.f(...) that read members too."""
import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles  # these tests compile C++ kernels


@pk.functor
class Saxpy:
    def __init__(self, n: int, a: float, x, y):
        self.n: int = n
        self.a: float = a
        self.x: pk.View1D[pk.double] = x
        self.y: pk.View1D[pk.double] = y
        self.label = "not a kernel value"   # ignored: only numbers and views are members

    @pk.function
    def axpy(self, xv: float, yv: float) -> float:
        return self.a * xv + yv

    @pk.function
    def weight(self, i: int) -> float:
        # a method reading members and calling another method
        return self.axpy(1.0, 0.0) * (i % 2)

    @pk.workunit
    def work(self, i: int) -> None:
        self.y[i] = self.axpy(self.x[i], self.y[i])

    @pk.workunit
    def sum(self, i: int, acc: pk.Acc[pk.double]):
        a = self.a * 0 + i          # a local named like a member is its own variable
        n = 1
        acc += self.y[i] * n + self.weight(i) + a - i

    @pk.workunit
    def count_big(self, i, acc):
        if self.y[i] > self.a:
            acc += 1


def test_functor_for_and_reduce():
    n = 6
    x = pk.array(np.arange(n, dtype=np.float64))
    y = pk.View([n], pk.double)
    y.fill(1.0)
    s = Saxpy(n, 2.0, x, y)
    pk.parallel_for(n, s.work)
    np.testing.assert_allclose(np.asarray(y), 2.0 * np.arange(n) + 1)
    expect = (2.0 * np.arange(n) + 1).sum() + 2.0 * 3
    assert pk.parallel_reduce(n, s.sum) == expect
    assert pk.parallel_reduce("named", pk.RangePolicy(0, n), s.count_big) == 5


def test_member_changes_take_effect():
    n = 4
    x = pk.array(np.ones(n))
    y = pk.View([n], pk.double)
    s = Saxpy(n, 2.0, x, y)
    pk.parallel_for(n, s.work)
    s.a = 10.0
    pk.parallel_for(n, s.work)
    np.testing.assert_allclose(np.asarray(y), [12.0] * n)
    s.y = pk.View([n], pk.double)          # a new view member
    pk.parallel_for(n, s.work)
    np.testing.assert_allclose(np.asarray(s.y), [10.0] * n)
    np.testing.assert_allclose(np.asarray(y), [12.0] * n)


@pk.functor
class Grid:
    def __init__(self, m):
        self.m = m
        self.scale = 3

    @pk.workunit
    def fill(self, i, j):
        self.m[i][j] = (i * 10 + j) * self.scale


def test_functor_with_mdrange():
    m = pk.View([3, 4], pk.int32)
    g = Grid(m)
    pk.parallel_for(pk.MDRangePolicy([0, 0], [3, 4]), g.fill)
    np.testing.assert_array_equal(np.asarray(m), (np.arange(3)[:, None] * 10 + np.arange(4)) * 3)


@pk.functor
class Filler:
    """Writes its member only through a @pk.function method (issue 11)."""

    def __init__(self, a):
        self.a: pk.View1D[pk.double] = a

    @pk.function
    def put(self, i: int, v: float):
        self.a[i] = v

    @pk.workunit
    def init(self, i: int):
        self.put(i, 2.0 * i)

    @pk.workunit
    def total(self, i: int, acc: pk.Acc[pk.double]):
        acc += self.a[i]


@pk.functor
class Bumper:
    def __init__(self, a):
        self.a: pk.View1D[pk.double] = a

    @pk.workunit
    def bump(self, i: int):
        self.a[i] = self.a[i] + 1.0


def test_writes_through_a_method_are_seen_by_later_launches_and_host_reads():
    n = 50
    a = pk.View([n], pk.double)
    f = Filler(a)
    pk.parallel_for(n, f.init)
    expect = 2.0 * np.arange(n)
    assert pk.parallel_reduce(n, f.total) == expect.sum()
    # A second functor sharing the view, then a host read of the first's member.
    pk.parallel_for(n, Bumper(a).bump)
    pk.parallel_for(n, f.init)
    pk.parallel_for(n, Bumper(a).bump)
    np.testing.assert_array_equal(np.asarray(f.a), expect + 1.0)


@pk.functor
class Scaler:
    def __init__(self, k: float, v):
        self.k: float = k
        self.v: pk.View1D[pk.double] = v

    @pk.workunit
    def fill(self, i: int):
        self.v[i] = self.k * i


def test_members_are_captured_at_the_launch():
    n = 6
    a, b = pk.View([n], pk.double), pk.View([n], pk.double)
    s = Scaler(2.0, a)
    pk.parallel_for(n, s.fill)
    s.k, s.v = 5.0, b          # rebinding afterwards changes nothing already launched
    pk.parallel_for(n, s.fill)
    np.testing.assert_array_equal(np.asarray(a), 2.0 * np.arange(n))
    np.testing.assert_array_equal(np.asarray(b), 5.0 * np.arange(n))

