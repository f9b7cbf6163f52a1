"""pk.lower_bound / pk.upper_bound in workunits (PyKokkos' later API): a binary
search of the first n elements of a sorted 1-d view or scratch view, checked
against NumPy's searchsorted (side left / right)."""
import numpy as np
import pytest

import pykokkos as pk


@pk.workunit
def lower(i: int, v, keys, n: int, out):
    out[i] = pk.lower_bound(v, n, keys[i])


@pk.workunit
def upper(i: int, v, keys, n: int, out):
    out[i] = pk.upper_bound(v, n, keys[i])


@pk.workunit
def in_team(team: pk.TeamMember, v: pk.View1D[pk.double], out: pk.View1D[pk.int64]):
    size: int = team.team_size()
    rank: int = team.team_rank()
    g: int = team.league_rank() * size + rank
    s: pk.ScratchView1D[pk.double] = pk.ScratchView1D(team.team_scratch(0), size)
    s[rank] = v[g]
    team.team_barrier()
    out[g] = pk.lower_bound(s, size, rank * 1.5) * 10 + pk.upper_bound(s, size, rank * 1.5)


@pk.workunit
def of_a_matrix(i: int, m: pk.View2D[pk.double], out: pk.View1D[pk.int64]):
    out[i] = pk.lower_bound(m, 3, 1.0)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_bounds_match_searchsorted(dtype):
    sorted_ = np.array([1, 2, 2, 2, 5, 7, 7, 9, 11, 40], dtype=dtype)
    keys = np.array([0, 1, 2, 3, 7, 8, 11, 12, 40, 99, 6, -3], dtype=dtype)
    v, k = pk.array(sorted_), pk.array(keys)
    for n in (10, 6, 0):
        lo, hi = pk.View([keys.size], pk.int64), pk.View([keys.size], pk.int64)
        pk.parallel_for(keys.size, lower, v=v, keys=k, n=n, out=lo)
        pk.parallel_for(keys.size, upper, v=v, keys=k, n=n, out=hi)
        np.testing.assert_array_equal(np.asarray(lo), np.searchsorted(sorted_[:n], keys, side="left"))
        np.testing.assert_array_equal(np.asarray(hi), np.searchsorted(sorted_[:n], keys, side="right"))


def test_bounds_on_a_scratch_view_in_a_team_kernel():
    teams, size = 5, 2  # a team as large as the host has threads
    x = np.sort(np.random.default_rng(4).random(teams * size) * 6).reshape(teams, size)
    out = pk.View([teams * size], pk.int64)
    policy = pk.TeamPolicy(teams, size)
    policy.set_scratch_size(0, pk.PerTeam(pk.ScratchView1D[pk.double].shmem_size(size)))
    pk.parallel_for(policy, in_team, v=pk.array(x.ravel()), out=out)
    want = [np.searchsorted(x[t], r * 1.5) * 10 + np.searchsorted(x[t], r * 1.5, side="right")
            for t in range(teams) for r in range(size)]
    np.testing.assert_array_equal(np.asarray(out), want)


def test_a_search_of_a_2d_view_is_a_located_error():
    out = pk.View([2], pk.int64)
    with pytest.raises(TypeError, match="searches a 1-d view") as info:
        pk.parallel_for(2, of_a_matrix, m=pk.View([3, 3], pk.double), out=out)
        np.asarray(out)  # lazy mode builds the kernel when the result is read
    assert "test_search.py" in str(info.value)


@pk.workunit
def team_sum_in_scratch(team: pk.TeamMember, acc: pk.Acc[pk.double], v: pk.View1D[pk.double], m: int):
    s: pk.ScratchView1D[pk.double] = pk.ScratchView1D(team.team_scratch(0), m)
    if team.team_rank() == 0:
        for k in range(m):
            s[k] = v[team.league_rank()] * (k + 1)
    team.team_barrier()
    if team.team_rank() == 0:
        for k in range(m):
            acc += s[k]


def test_a_reduction_given_its_accumulator_by_keyword():
    # Newer PyKokkos passes `acc=0.0` to a team reduction: accepted and unused
    # (Kokkos overwrites a reduction's result), with scratch sized per team.
    teams, m = 6, 5
    v = pk.array(np.arange(1.0, teams + 1))
    policy = pk.TeamPolicy(teams, 1).set_scratch_size(0, pk.PerTeam(pk.ScratchView1D[pk.double].shmem_size(m)))
    total = pk.parallel_reduce("named", policy, team_sum_in_scratch, acc=0.0, v=v, m=m)
    assert float(total) == pytest.approx(np.arange(1.0, teams + 1).sum() * m * (m + 1) / 2)
    with pytest.raises(TypeError, match="accumulator position"):
        pk.parallel_reduce(policy, team_sum_in_scratch, acc=[0.0], v=v, m=m)
