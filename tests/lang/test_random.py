"""Random pools and `pk.rand(dtype)` in kernels.

The generator is checked number for number against a Python model of it
(splitmix64-seeded xorshift64*, one generator per work item), so the test
knows the exact values; plus ranges, spaces and functor pools.
"""
import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles

M = (1 << 64) - 1


def splitmix(z):
    z = (z + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)


def model(seed, launch, index, draws):
    """The raw 64-bit draws of work item `index` in the pool's `launch`-th launch."""
    stream = splitmix(splitmix(seed) ^ launch)
    s = splitmix(splitmix(splitmix(stream ^ splitmix(index)) ^ 0) ^ 0) or 0x9E3779B97F4A7C15
    out = []
    for _ in range(draws):
        s ^= s >> 12
        s = (s ^ (s << 25)) & M
        s ^= s >> 27
        out.append((s * 2685821657736338717) & M)
    return out


@pk.workunit
def fill_uniform(i: int, out: pk.View2D[pk.double], pool: pk.Random_XorShift64_Pool):
    out[i][0] = pk.rand(pk.double)
    out[i][1] = pk.rand(pk.double)


@pk.workunit
def fill_ints(i: int, a: pk.View1D[pk.int32], b: pk.View1D[pk.uint8], pool):
    a[i] = pk.rand(pk.int32)
    b[i] = pk.rand(pk.uint8)


def test_values_follow_the_generator_model():
    n = 1000
    pool = pk.Random_XorShift64_Pool(2024, 64)
    first, second = pk.View([n, 2], pk.double), pk.View([n, 2], pk.double)
    pk.parallel_for(n, fill_uniform, out=first, pool=pool)
    pk.parallel_for(n, fill_uniform, out=second, pool=pool)  # the pool's next stream
    for launch, v in ((0, first), (1, second)):
        want = np.array([[(x >> 11) / 2.0**53 for x in model(2024, launch, i, 2)] for i in range(n)])
        np.testing.assert_array_equal(np.asarray(v), want)
    a = np.asarray(first)
    assert 0.0 <= a.min() and a.max() < 1.0 and abs(a.mean() - 0.5) < 0.03


def test_integer_draws_and_ranges():
    n = 4000
    a, b = pk.View([n], pk.int32), pk.View([n], pk.uint8)
    pk.parallel_for(n, fill_ints, a=a, b=b, pool=pk.Random_XorShift1024_Pool(5, 1))
    raw = [model(5, 0, i, 2) for i in range(n)]
    np.testing.assert_array_equal(np.asarray(a), [(r[0] >> 1) % (2**31 - 1) for r in raw])
    np.testing.assert_array_equal(np.asarray(b), [r[1] & 0xFF for r in raw])
    assert len(np.unique(np.asarray(b))) > 200


def test_same_numbers_on_every_host_space():
    out = {}
    for space in (pk.Serial, pk.OpenMP):
        v = pk.View([500, 2], pk.double)
        pk.parallel_for(pk.RangePolicy(space, 0, 500), fill_uniform, out=v, pool=pk.Random_XorShift64_Pool(9, 8))
        out[space] = np.asarray(v).copy()
    np.testing.assert_array_equal(out[pk.Serial], out[pk.OpenMP])


@pk.functor
class Walkers:
    def __init__(self, n: int, seed: int):
        self.pos: pk.View1D[pk.double] = pk.View([n], pk.double)
        self.pool: pk.Random_XorShift64_Pool = pk.Random_XorShift64_Pool(seed, n)

    @pk.workunit
    def step(self, i: int):
        self.pos[i] += pk.rand(pk.double) - 0.5

    @pk.workunit
    def team_step(self, m: pk.TeamMember):
        self.pos[m.league_rank()] += pk.rand(pk.float)


def test_functor_pool_member_and_team_kernels():
    w = Walkers(300, 77)
    for _ in range(3):
        pk.parallel_for(300, w.step)
    want = np.zeros(300)
    for launch in range(3):
        want += [(model(77, launch, i, 1)[0] >> 11) / 2.0**53 - 0.5 for i in range(300)]
    np.testing.assert_allclose(np.asarray(w.pos), want, rtol=0, atol=1e-12)
    pk.parallel_for(pk.TeamPolicy(300, 1), w.team_step)
    want += [np.float32((model(77, 3, i, 1)[0] >> 40) / 2.0**24) for i in range(300)]
    np.testing.assert_allclose(np.asarray(w.pos), want, rtol=0, atol=1e-6)


@pk.workunit
def no_pool(i: int, out: pk.View1D[pk.double]):
    out[i] = pk.rand(pk.double)


def test_rand_without_a_pool_is_a_located_error():
    with pytest.raises(pk.KernelTypeError, match="random pool") as e:
        pk.parallel_for(4, no_pool, out=pk.View([4], pk.double))
        pk.flush()  # lazy mode reports it when the launch is built
    assert "test_random.py" in str(e.value)
    with pytest.raises(RuntimeError, match="only meaningful inside"):
        pk.rand(pk.double)
