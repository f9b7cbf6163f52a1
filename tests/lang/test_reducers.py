"""Built-in reducers (`pk.parallel_reduce(..., reducer=pk.Max)`), against NumPy.

Random data with ties and sizes past one thread's share; the location
reducers are checked against NumPy's argmin/argmax value (a tie may report
any index holding the extreme, as Kokkos allows, so the test checks the value
at the reported index).
"""
import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles


@pk.workunit
def r_prod(i: int, acc: pk.Acc[pk.int64], data: pk.View1D[pk.int64]):
    acc *= data[i]


@pk.workunit
def r_min(i: int, acc: pk.Acc[pk.double], data: pk.View1D[pk.double]):
    if data[i] < acc:
        acc = data[i]


@pk.workunit
def r_max(i: int, acc: pk.Acc[pk.double], data: pk.View1D[pk.double]):
    acc = max(acc, data[i])


@pk.workunit
def r_band(i: int, acc: pk.Acc[pk.int64], data: pk.View1D[pk.int64]):
    acc &= data[i]


@pk.workunit
def r_bor(i: int, acc: pk.Acc[pk.int64], data: pk.View1D[pk.int64]):
    acc = acc | data[i]


@pk.workunit
def r_land(i: int, acc: pk.Acc[pk.bool], data: pk.View1D[pk.uint8]):
    acc = acc and data[i]


@pk.workunit
def r_lor(i: int, acc: pk.Acc[pk.bool], data: pk.View1D[pk.uint8]):
    acc = acc or data[i]


@pk.workunit
def r_maxloc(i: int, acc: pk.Acc[pk.double], data: pk.View1D[pk.double]):
    if data[i] > acc.val:
        acc.val = data[i]
        acc.loc = i


@pk.workunit
def r_minloc(i: int, acc: pk.Acc[pk.float32], data: pk.View1D[pk.float32]):
    if data[i] < acc.val:
        acc.val = data[i]
        acc.loc = i


@pk.workunit
def r_minmax(i: int, acc: pk.Acc[pk.int32], data: pk.View1D[pk.int32]):
    acc.min_val = min(acc.min_val, data[i])
    acc.max_val = max(acc.max_val, data[i])


@pk.workunit
def r_minmaxloc(i: int, acc: pk.Acc[pk.double], data: pk.View1D[pk.double]):
    if data[i] < acc.min_val:
        acc.min_val = data[i]
        acc.min_loc = i
    if data[i] > acc.max_val:
        acc.max_val = data[i]
        acc.max_loc = i


@pk.workunit
def r_team_max(m: pk.TeamMember, acc: pk.Acc[pk.double], data: pk.View2D[pk.double]):
    row: int = m.league_rank()
    s: float = 0.0
    for j in range(data.extent(1)):
        s += data[row][j]
    if s > acc:
        acc = s


@pk.workunit
def r_md_min(i: int, j: int, acc: pk.Acc[pk.double], data: pk.View2D[pk.double]):
    if data[i][j] < acc:
        acc = data[i][j]


RNG = np.random.default_rng(7)
N = 5000


def test_scalar_reducers_match_numpy():
    f = RNG.normal(size=N)
    ints = RNG.integers(1, 4, size=40).astype(np.int64)  # a product that fits in int64
    bits = RNG.integers(0, 1 << 20, size=N).astype(np.int64) | 0b1001
    pol = pk.RangePolicy(0, N)
    assert pk.parallel_reduce(pk.RangePolicy(0, 40), r_prod, reducer=pk.Prod, data=pk.array(ints)) == np.prod(ints)
    assert pk.parallel_reduce(pol, r_min, reducer=pk.Min, data=pk.array(f)) == f.min()
    assert pk.parallel_reduce(pol, r_max, reducer=pk.Max, data=pk.array(f)) == f.max()
    assert pk.parallel_reduce(pol, r_band, reducer=pk.BAnd, data=pk.array(bits)) == np.bitwise_and.reduce(bits)
    assert pk.parallel_reduce(pol, r_bor, reducer=pk.BOr, data=pk.array(bits)) == np.bitwise_or.reduce(bits)
    # the name and an instance work as well as the class
    assert pk.parallel_reduce("m", pol, r_max, reducer="Max", data=pk.array(f)) == f.max()
    assert pk.parallel_reduce(pol, r_max, reducer=pk.Max(), data=pk.array(f)) == f.max()


@pytest.mark.parametrize("zero_at", [None, 0, N - 1, 1234])
def test_logical_reducers(zero_at):
    flags = np.ones(N, dtype=np.uint8)
    if zero_at is not None:
        flags[zero_at] = 0
    pol = pk.RangePolicy(0, N)
    land = pk.parallel_reduce(pol, r_land, reducer=pk.LAnd, data=pk.array(flags))
    lor = pk.parallel_reduce(pol, r_lor, reducer=pk.LOr, data=pk.array(1 - flags))
    assert bool(land) is bool(flags.all())
    assert bool(lor) is bool((1 - flags).any())


def test_location_reducers():
    f = RNG.normal(size=N)
    f[[17, 4000]] = f.max() + 1.0  # a tie for the maximum
    r = pk.parallel_reduce(pk.RangePolicy(0, N), r_maxloc, reducer=pk.MaxLoc, data=pk.array(f))
    assert r.val == f.max() and f[r.loc] == f.max() and r.loc in (17, 4000)
    val, loc = r  # a tuple too
    assert (val, loc) == (r.val, r.loc)
    g = RNG.normal(size=N).astype(np.float32)
    r = pk.parallel_reduce(pk.RangePolicy(0, N), r_minloc, reducer=pk.MinLoc, data=pk.array(g))
    assert r.val == g.min() and r.loc == int(np.argmin(g))
    h = RNG.integers(-1000, 1000, size=N).astype(np.int32)
    r = pk.parallel_reduce(pk.RangePolicy(0, N), r_minmax, reducer=pk.MinMax, data=pk.array(h))
    assert (r.min_val, r.max_val) == (h.min(), h.max())
    r = pk.parallel_reduce(pk.RangePolicy(0, N), r_minmaxloc, reducer=pk.MinMaxLoc, data=pk.array(f))
    assert r.min_val == f.min() and r.min_loc == int(np.argmin(f))
    assert r.max_val == f.max() and f[r.max_loc] == f.max()


def test_reducers_on_team_and_md_policies():
    d = RNG.normal(size=(37, 11))
    best = pk.parallel_reduce(pk.TeamPolicy(37, 1), r_team_max, reducer=pk.Max, data=pk.array(d))
    assert best == pytest.approx(d.sum(axis=1).max())
    low = pk.parallel_reduce(pk.MDRangePolicy([0, 0], [37, 11]), r_md_min, reducer=pk.Min, data=pk.array(d))
    assert low == d.min()


def test_initial_value_and_lambda():
    f = RNG.normal(size=100)
    v = pk.array(f)
    assert pk.parallel_reduce(100, r_max, reducer=pk.Max, initial_value=50.0, data=v) == 50.0
    assert pk.parallel_reduce(100, r_max, reducer=pk.Max, initial_value=-50.0, data=v) == f.max()
    assert pk.parallel_reduce(100, lambda i, acc: min(acc, v[i]), reducer=pk.Min) == f.min()


def test_reducer_results_follow_pending_writes():
    """Lazy mode: a reduction through a reducer sees the fors recorded before it."""
    v = pk.View([N], pk.double)
    f = RNG.normal(size=N)
    np.asarray(v)[:] = f
    pk.parallel_for(N, scale, v=v, k=-2.0)
    r = pk.parallel_reduce(N, r_maxloc, reducer=pk.MaxLoc, data=v)
    assert r.val == (-2.0 * f).max() and r.loc == int(np.argmax(-2.0 * f))
    assert pk.parallel_reduce(N, r_min, reducer=pk.Min, data=v) == (-2.0 * f).min()


@pk.workunit
def scale(i, v, k):
    v[i] = v[i] * k


def test_reducer_errors():
    v = pk.array(np.ones(4))
    with pytest.raises(TypeError, match="unknown reducer 'Avg'"):
        pk.parallel_reduce(4, r_max, reducer="Avg", data=v)
    with pytest.raises(TypeError, match="reducer= takes one of"):
        pk.parallel_reduce(4, r_max, reducer=3, data=v)
    with pytest.raises(pk.KernelTypeError, match="acc.val, acc.loc"):
        pk.parallel_reduce(4, r_max, reducer=pk.MaxLoc, data=v)
    with pytest.raises(pk.KernelTypeError, match="has no field '.val'"):
        pk.parallel_reduce(4, r_maxloc, reducer=pk.Max, data=v)
    with pytest.raises(pk.KernelTypeError, match="reducer=pk.Max"):
        pk.parallel_reduce(4, r_min, data=v)  # plain assignment needs a reducer
