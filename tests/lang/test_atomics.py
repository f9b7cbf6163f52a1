"""Atomics: many work items hit one element; the result must be the exact count."""
import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles  # these tests compile C++ kernels

N = 4000


@pk.workunit
def atomic_ops(i, c, f, m):
    pk.atomic_add(c, [0], 1)
    pk.atomic_fetch_add(c, [1], 2)
    pk.atomic_sub(c, [2], 1)
    pk.atomic_fetch_sub(c, [3], 3)
    pk.atomic_increment(c, [4])
    pk.atomic_fetch_max(c, [5], i)
    pk.atomic_fetch_min(c, [6], N - i)
    pk.atomic_max(c, [7], i % 1000)
    pk.atomic_min(c, [8], i + 5)
    pk.atomic_fetch_or(c, [9], 1 << (i % 40))
    pk.atomic_fetch_and(c, [10], ~(1 << (i % 20)))
    pk.atomic_fetch_xor(c, [11], 1)
    if i < 10:
        pk.atomic_fetch_mul(c, [12], 2)
        pk.atomic_fetch_div(c, [13], 2)
        pk.atomic_fetch_lshift(c, [14], 1)
        pk.atomic_fetch_rshift(c, [15], 1)
    pk.atomic_fetch_mod(c, [16], 7)
    pk.atomic_add(f, [0], 0.5)
    pk.atomic_fetch_add(m, [i % 3, 1], 1)


def test_atomic_operations_are_exact():
    c = pk.View([17], pk.int64)
    c[6] = N + 10
    c[8] = 10**9
    c[10] = -1
    c[12] = 1
    c[13] = 1 << 20
    c[14] = 3
    c[15] = 1 << 40
    c[16] = 100
    f = pk.View([1], pk.double)
    m = pk.View([3, 2], pk.int32)
    pk.parallel_for(N, atomic_ops, c=c, f=f, m=m)
    expect = [N, 2 * N, -N, -3 * N, N, N - 1, 1, 999, 5, (1 << 40) - 1,
              -1 & ~((1 << 20) - 1), N % 2, 1 << 10, 1 << 10, 3 << 10, 1 << 30, 100 % 7]
    assert list(np.asarray(c)) == expect
    assert f[0] == N * 0.5
    np.testing.assert_array_equal(np.asarray(m), [[0, 1334], [0, 1333], [0, 1333]])


@pk.workunit
def fetch_returns_old(i, acc, c):
    acc += pk.atomic_fetch_add(c, [0], 1)


@pk.workunit
def compare_exchange(i, c, winners):
    old = pk.atomic_compare_exchange(c, [0], 0, i + 1)
    if old == 0:
        pk.atomic_increment(winners, [0])
    prev = pk.atomic_exchange(c, [1], i)
    pk.atomic_add(c, [2], prev >= 0)


def test_fetch_returns_each_old_value_once():
    c = pk.View([1], pk.int64)
    total = pk.parallel_reduce(N, fetch_returns_old, c=c)
    assert c[0] == N
    assert total == N * (N - 1) // 2


def test_compare_exchange_has_one_winner():
    c = pk.View([3], pk.int64)
    c[1] = -1
    winners = pk.View([1], pk.int32)
    pk.parallel_for(N, compare_exchange, c=c, winners=winners)
    assert winners[0] == 1
    assert 1 <= c[0] <= N
    assert c[2] == N - 1  # every exchange but the first saw a previous index


# --- views created with trait=pk.Atomic: `v[i] op= x` is one atomic update ---------

@pk.workunit
def bin_counts(i, data, h, w):
    b = data[i] % 10
    h[b] += 1
    w[b] += 0.5
    w[10 + b] -= 0.25


@pk.workunit
def bit_flags(i, flags):
    flags[i % 3] |= 1 << (i % 40)


def test_atomic_trait_histogram_is_exact(pk_mode):
    n = 60000
    d = np.random.default_rng(1).integers(0, 1000, n)
    data = pk.View([n], pk.int64)
    data.data[:] = d
    h = pk.View([10], pk.int64, trait=pk.Atomic)
    w = pk.array(np.zeros(20), trait=pk.Atomic)
    pk.parallel_for(n, bin_counts, data=data, h=h, w=w)
    counts = np.bincount(d % 10, minlength=10)
    np.testing.assert_array_equal(h.data, counts)
    np.testing.assert_array_equal(w.data[:10], 0.5 * counts)  # exact: multiples of 1/4
    np.testing.assert_array_equal(w.data[10:], -0.25 * counts)


def test_atomic_trait_bitwise_updates_and_subviews(pk_mode):
    parent = pk.View([8], pk.int64, trait=pk.Atomic)
    flags = parent[2:5]  # a subview keeps the trait
    pk.parallel_for(3 * 40, bit_flags, flags=flags)
    np.testing.assert_array_equal(parent.data[2:5], [(1 << 40) - 1] * 3)
    np.testing.assert_array_equal(parent.data[[0, 1, 5, 6, 7]], 0)


@pk.workunit
def atomic_floordiv(i, h):
    h[0] //= 2


@pk.workunit
def atomic_int_plus_float(i, h):
    h[0] += 0.5


@pytest.mark.parametrize("kernel, fragment", [
    (atomic_floordiv, "is not one atomic operation"),
    (atomic_int_plus_float, "needs an integer value, not float64"),
])
def test_atomic_trait_refuses_updates_it_cannot_make_atomic(kernel, fragment):
    h = pk.View([1], pk.int32, trait=pk.Atomic)
    with pytest.raises(pk.KernelTypeError, match=fragment):
        pk.parallel_for(4, kernel, h=h)
        pk.flush()


def test_traits_are_checked():
    with pytest.raises(TypeError, match="trait must be pk.Atomic"):
        pk.View([2], pk.double, trait="atomic")
    v = pk.View([2], pk.double, trait=pk.RandomAccess)  # a hint: accepted, no effect on results
    assert not v._atomic


@pk.workunit
def complex_atomics(i: int, z: pk.View1D[pk.complex128], w: pk.View1D[pk.complex64],
                    s: pk.View1D[pk.complex128], t: pk.View1D[pk.complex64], olds: pk.View1D[pk.complex128]):
    pk.atomic_add(s, [i % 3], z[i])
    pk.atomic_sub(s, [3], z[i])
    pk.atomic_add(t, [0], w[i])
    pk.atomic_sub(t, [1], w[i])
    olds[i] = pk.atomic_fetch_add(s, [4], z[i])


def test_complex_atomics_add_every_item_once():
    # A fetch reads the pair at one instant. Sums of small integers are
    # exact in any order.
    n = 3000
    rng = np.random.default_rng(7)
    zs = rng.integers(-50, 50, n) + 1j * rng.integers(-50, 50, n)
    ws = (rng.integers(-50, 50, n) + 1j * rng.integers(-50, 50, n)).astype(np.complex64)
    s, t, olds = pk.View([5], pk.complex128), pk.View([2], pk.complex64), pk.View([n], pk.complex128)
    pk.parallel_for(n, complex_atomics, z=pk.array(zs), w=pk.array(ws), s=s, t=t, olds=olds)
    bins = [zs[np.arange(n) % 3 == k].sum() for k in range(3)]
    assert np.asarray(s).tolist() == bins + [-zs.sum(), zs.sum()]
    assert np.asarray(t).tolist() == [ws.sum(), -ws.sum()]
    # The fetches ran in some order, each seeing the sum of those before it:
    # old + own item is the next one's old, and the last one's is the total.
    from collections import Counter
    old = np.asarray(olds).tolist()
    assert Counter((np.asarray(olds) + zs).tolist()) == Counter(old) - Counter([0j]) + Counter([zs.sum()])
