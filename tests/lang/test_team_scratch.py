"""Team scratch declared on the workunit (`@pk.workunit(scratch=...)`) and the
team-collective `pk.inclusive_scan(team_member, view)`, against NumPy."""
import numpy as np
import pytest
import pykokkos as pk

pytestmark = pytest.mark.compiles


@pk.workunit(scratch=[(int, lambda p: p.team_size)])
def block_scan(team_member: pk.TeamMember, view: pk.View1D[pk.int32], team_size: int):
    base: int = team_member.league_rank() * team_size
    r: int = team_member.team_rank()
    s: pk.ScratchView1D[pk.int32] = pk.ScratchView1D(team_member.team_scratch(0), team_size)
    s[r] = view[base + r]
    team_member.team_barrier()
    pk.inclusive_scan(team_member, s)
    view[base + r] = s[r]


@pk.workunit(scratch=[(pk.double, lambda p: p.width, 1), (pk.int64, lambda p: 3)])
def row_prefix(team_member: pk.TeamMember, m: pk.View2D[pk.double], out: pk.View2D[pk.double], width: int):
    row: int = team_member.league_rank()
    s: pk.ScratchView1D[pk.double] = pk.ScratchView1D(team_member.team_scratch(1), width)

    def load(j: int):
        s[j] = m[row][j]

    pk.parallel_for(pk.TeamThreadRange(team_member, width), load)
    team_member.team_barrier()
    pk.inclusive_scan(team_member, s)

    def store(j: int):
        out[row][j] = s[j]

    pk.parallel_for(pk.TeamThreadRange(team_member, width), store)


def test_block_scan_like_upstream_example():
    n, team = 64, 2
    v = pk.View([n], pk.int32)
    np.asarray(v)[:] = np.arange(1, n + 1)
    pol = pk.TeamPolicy(n // team, team)
    pk.parallel_for(pol, block_scan, view=v, team_size=team)
    expect = np.arange(1, n + 1).reshape(-1, team).cumsum(axis=1).ravel()
    np.testing.assert_array_equal(np.asarray(v), expect)
    assert pol.scratch_sizes == [0, 0, 0, 0]  # the caller's policy is left alone


@pytest.mark.parametrize("team", [1, 2, pk.AUTO])
def test_scan_longer_than_the_team_and_level_1(team):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(9, 37))
    m, out = pk.array(a), pk.View([9, 37], pk.double)
    pk.parallel_for(pk.TeamPolicy(9, team), row_prefix, m=m, out=out, width=37)
    np.testing.assert_allclose(np.asarray(out), np.cumsum(a, axis=1), rtol=1e-12)


@pk.workunit(scratch=[(pk.double, lambda p: p.team_size)])
def sized_by_policy(team_member: pk.TeamMember, out: pk.View1D[pk.double]):
    s: pk.ScratchView1D[pk.double] = pk.ScratchView1D(team_member.team_scratch(0), team_member.team_size())
    s[team_member.team_rank()] = 1.0
    pk.inclusive_scan(team_member, s)
    if team_member.team_rank() == team_member.team_size() - 1:
        out[team_member.league_rank()] = s[team_member.team_rank()]


def test_size_function_reads_the_policy():
    out = pk.View([5], pk.double)
    pk.parallel_for(pk.TeamPolicy(5, 2), sized_by_policy, out=out)
    np.testing.assert_array_equal(np.asarray(out), np.full(5, 2.0))


@pk.functor
class Scanner:
    def __init__(self, n):
        self.n: int = n
        self.out: pk.View1D[pk.int64] = pk.View([n], pk.int64)

    @pk.workunit(scratch=[(pk.int64, lambda p: p.n)])
    def run(self, team_member: pk.TeamMember):
        s: pk.ScratchView1D[pk.int64] = pk.ScratchView1D(team_member.team_scratch(0), self.n)

        def fill(j: int):
            s[j] = j

        pk.parallel_for(pk.TeamThreadRange(team_member, self.n), fill)
        team_member.team_barrier()
        pk.inclusive_scan(team_member, s)

        def store(j: int):
            self.out[j] = s[j]

        pk.parallel_for(pk.TeamThreadRange(team_member, self.n), store)


def test_functor_member_sizes_scratch():
    f = Scanner(50)
    pk.parallel_for(pk.TeamPolicy(1, pk.AUTO), f.run)
    np.testing.assert_array_equal(np.asarray(f.out), np.cumsum(np.arange(50)))


def test_scratch_errors():
    with pytest.raises(TypeError, match="scratch= entry"):
        pk.workunit(scratch=[(int,)])
    with pytest.raises(ValueError, match="level is 0 or 1"):
        pk.workunit(scratch=[(int, lambda p: 1, 2)])
    v = pk.View([8], pk.int32)
    with pytest.raises(TypeError, match="must be launched with a pk.TeamPolicy"):
        pk.parallel_for(8, block_scan, view=v, team_size=8)
    with pytest.raises(AttributeError, match="p.width"):
        pk.parallel_for(pk.TeamPolicy(1, 8), row_prefix, m=pk.View([1, 8], pk.double),
                        out=pk.View([1, 8], pk.double), wdth=8)
