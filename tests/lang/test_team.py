"""pk.TeamPolicy workunits: the team member, nested patterns over team and vector
ranges with nested defs as bodies, pk.single, team_barrier, functor team methods,
Python scoping of nested defs, and the errors around them. Results are checked
against NumPy; conftest runs each test eagerly and lazily."""
import numpy as np
import pytest

import pykokkos as pk

pytestmark = pytest.mark.compiles

N, M = 37, 29
# Teams of this size fit every space the suite runs on (Serial allows 1).
TEAM = pk.AUTO


@pk.workunit
def yAx(team_member: pk.TeamMember, acc: pk.Acc[pk.double], cols: int, y, x, A):
    j: int = team_member.league_rank()

    def inner_reduce(i: int, inner_acc: pk.Acc[pk.double]):
        inner_acc += A[j][i] * x[i]

    temp2: float = pk.parallel_reduce(pk.TeamThreadRange(team_member, cols), inner_reduce)
    if team_member.team_rank() == 0:
        acc += y[j] * temp2


@pk.workunit
def fill_rows(tm, cols, out):
    r = tm.league_rank()

    def fill(c):
        out[r][c] = r * 1000 + c

    pk.parallel_for(pk.TeamThreadRange(tm, cols), fill)
    tm.team_barrier()

    def check(c):
        # after the barrier every column of this row is written
        if out[r][cols - 1 - c] != r * 1000 + cols - 1 - c:
            out[r][c] = -1

    pk.parallel_for(pk.TeamThreadRange(tm, 1, cols), check)


@pk.workunit
def matmul(tm, n, k, A, B, C):
    r = tm.league_rank()

    def column(c):
        def dot(q, s: pk.Acc[pk.double]):
            s += A[r][q] * B[q][c]

        C[r][c] = pk.parallel_reduce(pk.ThreadVectorRange(tm, k), dot)

    pk.parallel_for(pk.TeamThreadRange(tm, n), column)


@pk.workunit
def once_per_team(tm, count, sizes):
    def mark():
        count[tm.league_rank()] += 1
        sizes[tm.league_rank()] = tm.team_size()

    pk.single(pk.PerTeam(tm), mark)


@pk.workunit
def row_prefix(tm, cols, v, out):
    r = tm.league_rank()

    def scan(c, acc: pk.Acc[pk.int64], last_pass):
        acc += v[r][c]
        if last_pass:
            out[r][c] = acc

    pk.parallel_scan(pk.TeamThreadRange(tm, cols), scan)


@pk.workunit
def shadowing(tm, out):
    s = 1.5
    r = tm.league_rank()

    def body(c):
        s = 2.5 + c  # a new local of the nested def, as in Python
        out[r][c] = s

    pk.parallel_for(pk.TeamThreadRange(tm, 2), body)

    def last():
        out[r][2] = s  # the outer s, untouched by body

    pk.single(pk.PerTeam(tm), last)


@pk.functor
class RowSums:
    def __init__(self, A, sums):
        self.A: pk.View2D[pk.double] = A
        self.sums: pk.View1D[pk.double] = sums

    @pk.workunit
    def work(self, tm: pk.TeamMember):
        r: int = tm.league_rank()

        def add(c: int, acc: pk.Acc[pk.double]):
            acc += self.A[r][c]

        total: float = pk.parallel_reduce(pk.TeamThreadRange(tm, self.A.extent(1)), add)

        def store():
            self.sums[r] = total

        pk.single(pk.PerTeam(tm), store)


@pytest.fixture
def data():
    rng = np.random.default_rng(11)
    return rng.random((N, M)), rng.random(M), rng.random(N)


def test_nested_team_reduce_matches_numpy(pk_mode, data):
    a, x, y = data
    A, X, Y = pk.View([N, M], pk.double), pk.View([M], pk.double), pk.View([N], pk.double)
    A.data[:], X.data[:], Y.data[:] = a, x, y
    got = pk.parallel_reduce(pk.TeamPolicy(N, TEAM), yAx, cols=M, y=Y, x=X, A=A)
    assert float(got) == pytest.approx(float(y @ (a @ x)), rel=1e-12)


def test_nested_for_with_barrier_and_begin_end_range(pk_mode):
    out = pk.View([N, M], pk.int64)
    pk.parallel_for(pk.TeamPolicy(N, TEAM), fill_rows, cols=M, out=out)
    want = np.arange(N)[:, None] * 1000 + np.arange(M)[None, :]
    np.testing.assert_array_equal(out.data, want)


def test_vector_range_inside_team_range(pk_mode, data):
    a, _, _ = data
    b = np.random.default_rng(3).random((M, 13))
    A, B, C = pk.View([N, M], pk.double), pk.View([M, 13], pk.double), pk.View([N, 13], pk.double)
    A.data[:], B.data[:] = a, b
    pk.parallel_for(pk.TeamPolicy(pk.get_default_space(), N, TEAM, 1), matmul, n=13, k=M, A=A, B=B, C=C)
    np.testing.assert_allclose(C.data, a @ b, rtol=1e-12)


def test_single_per_team_runs_once_per_team(pk_mode):
    count = pk.View([N], pk.int32)
    sizes = pk.View([N], pk.int32)
    pk.parallel_for(pk.TeamPolicy(N, 1), once_per_team, count=count, sizes=sizes)
    np.testing.assert_array_equal(count.data, np.ones(N))
    np.testing.assert_array_equal(sizes.data, np.ones(N))


def test_team_scan_gives_row_prefix_sums(pk_mode):
    v = np.random.default_rng(5).integers(-50, 50, size=(N, M))
    V, out = pk.View([N, M], pk.int64), pk.View([N, M], pk.int64)
    V.data[:] = v
    pk.parallel_for(pk.TeamPolicy(N, TEAM), row_prefix, cols=M, v=V, out=out)
    np.testing.assert_array_equal(out.data, np.cumsum(v, axis=1))


def test_nested_def_assignments_are_its_own_locals(pk_mode):
    out = pk.View([4, 3], pk.double)
    pk.parallel_for(pk.TeamPolicy(4, TEAM), shadowing, out=out)
    np.testing.assert_array_equal(out.data, np.tile([2.5, 3.5, 1.5], (4, 1)))


def test_functor_team_method(pk_mode, data):
    a, _, _ = data
    A, sums = pk.View([N, M], pk.double), pk.View([N], pk.double)
    A.data[:] = a
    pk.parallel_for(pk.TeamPolicy(N, TEAM), RowSums(A, sums).work)
    np.testing.assert_allclose(sums.data, a.sum(axis=1), rtol=1e-12)


def test_team_then_range_kernels_in_one_program(pk_mode, data):
    # A range kernel consumes what a team kernel wrote (lazy mode orders them).
    @pk.workunit
    def double_it(i, out):
        out[i][0] = 2 * out[i][0]

    out = pk.View([N, M], pk.int64)
    pk.parallel_for(pk.TeamPolicy(N, TEAM), fill_rows, cols=M, out=out)
    pk.parallel_for(N, double_it, out=out)
    assert out[5, 0] == 2 * 5000 and out[5, 1] == 5001


# --- errors ---------------------------------------------------------------------

@pk.workunit
def call_nested_def(tm, out):
    def helper(c):
        out[0][c] = 1

    helper(0)


@pk.workunit
def member_as_value(tm, out):
    out[0][0] = tm + 1


@pk.workunit
def range_outside_pattern(tm, out):
    r = pk.TeamThreadRange(tm, 3)


@pk.workunit
def body_with_wrong_arity(tm, out):
    def body(a, b):
        out[0][0] = a

    pk.parallel_for(pk.TeamThreadRange(tm, 3), body)


@pytest.mark.parametrize("kernel, fragment", [
    (call_nested_def, "'helper' is a nested def"),
    (member_as_value, "'tm' is the team member"),
    (range_outside_pattern, "is only allowed as the first argument of a nested"),
    (body_with_wrong_arity, "it must take one parameter, the index"),
])
def test_team_kernel_errors_name_the_line(kernel, fragment):
    out = pk.View([2, 3], pk.double)
    with pytest.raises(pk.KernelTypeError) as info:
        pk.parallel_for(pk.TeamPolicy(2, TEAM), kernel, out=out)
        pk.flush()
    assert fragment in str(info.value)
    assert "test_team.py" in str(info.value)


def test_scan_over_a_team_policy_is_refused():
    with pytest.raises(TypeError, match="parallel_scan needs a range policy"):
        pk.parallel_scan(pk.TeamPolicy(2, TEAM), row_prefix, cols=1, v=pk.View([2, 1], pk.int64),
                         out=pk.View([2, 1], pk.int64))


def test_team_larger_than_the_space_allows_is_an_error_not_an_abort(pk_mode):
    out = pk.View([N, M], pk.int64)
    with pytest.raises(RuntimeError, match="can use at most"):
        pk.parallel_for(pk.TeamPolicy(N, 1 << 20), fill_rows, cols=M, out=out)
        pk.flush()
    # The process and the runtime are fine afterwards.
    pk.parallel_for(pk.TeamPolicy(N, TEAM), fill_rows, cols=M, out=out)
    assert out[2, 3] == 2003


def test_bad_team_policies():
    with pytest.raises(ValueError, match="team_size must be positive or pk.AUTO"):
        pk.TeamPolicy(4, 0)
    with pytest.raises(TypeError, match="pk.TeamPolicy takes"):
        pk.TeamPolicy(4)
    with pytest.raises(RuntimeError, match="only meaningful inside a @pk.workunit"):
        pk.TeamThreadRange(None, 3)


# --- scratch memory -----------------------------------------------------------------

@pk.workunit
def scratch_yAx(team_member: pk.TeamMember, acc: pk.Acc[pk.double], cols: int, y, x, A):
    e: int = team_member.league_rank()
    s_x: pk.ScratchView1D[pk.double] = pk.ScratchView1D(team_member.team_scratch(0), cols)

    def load(i: int):
        s_x[i] = x[i]

    pk.parallel_for(pk.TeamThreadRange(team_member, cols), load)
    team_member.team_barrier()

    def row(i: int, inner: pk.Acc[pk.double]):
        inner += A[e][i] * s_x[i]

    t: float = pk.parallel_reduce(pk.TeamThreadRange(team_member, cols), row)
    if team_member.team_rank() == 0:
        acc += y[e] * t


@pk.workunit
def scratch_tile(tm, cols, v, out):
    r = tm.league_rank()
    tile: pk.ScratchView2D[pk.int32] = pk.ScratchView2D(tm.team_scratch(1), 2, cols)

    def load(c):
        tile[0][c] = v[r][c]
        tile[1][c] = v[r][c] * 2

    pk.parallel_for(pk.TeamThreadRange(tm, cols), load)
    tm.team_barrier()

    def store(c):
        out[r][c] = tile[0][cols - 1 - c] + tile[1][c]

    pk.parallel_for(pk.TeamThreadRange(tm, cols), store)


def test_scratch_view_staged_vector(pk_mode, data):
    a, x, y = data
    A, X, Y = pk.View([N, M], pk.double), pk.View([M], pk.double), pk.View([N], pk.double)
    A.data[:], X.data[:], Y.data[:] = a, x, y
    policy = pk.TeamPolicy(N, TEAM)
    policy.set_scratch_size(0, pk.PerTeam(pk.ScratchView1D[pk.double].shmem_size(M)))
    got = pk.parallel_reduce(policy, scratch_yAx, cols=M, y=Y, x=X, A=A)
    assert float(got) == pytest.approx(float(y @ (a @ x)), rel=1e-12)


def test_two_dimensional_int_scratch_at_level_1(pk_mode):
    v = np.random.default_rng(9).integers(0, 1000, size=(N, M)).astype(np.int32)
    V, out = pk.View([N, M], pk.int32), pk.View([N, M], pk.int32)
    V.data[:] = v
    policy = pk.TeamPolicy(N, TEAM).set_scratch_size(1, pk.PerTeam(pk.ScratchView2D[pk.int32].shmem_size(2, M)))
    pk.parallel_for(policy, scratch_tile, cols=M, v=V, out=out)
    np.testing.assert_array_equal(out.data, v[:, ::-1] + 2 * v)


def test_scratch_size_requests_are_checked():
    policy = pk.TeamPolicy(4, TEAM)
    with pytest.raises(ValueError, match="levels 0 and 1"):
        policy.set_scratch_size(2, pk.PerTeam(64))
    with pytest.raises(TypeError, match="pk.PerTeam"):
        policy.set_scratch_size(0, 64)
    with pytest.raises(TypeError, match="applies to a pk.TeamPolicy"):
        pk.RangePolicy(0, 4).set_scratch_size(0, pk.PerTeam(64))
    assert pk.ScratchView1D[pk.int32].shmem_size(10) == 40  # newer PyKokkos: bytes rounded up to 8


@pk.workunit
def team_total_nonlocal(tm: pk.TeamMember, acc: pk.Acc[pk.double], cols: int, A):
    r: int = tm.league_rank()

    def row(c: int, racc: pk.Acc[pk.double]):
        racc = racc + A[r][c]  # PyKokkos' other spelling of racc += ...

    t: float = pk.parallel_reduce(pk.TeamThreadRange(tm, cols), row)
    last: float = 0.0

    def once():
        nonlocal acc, last
        acc += t
        last = t

    pk.single(pk.PerTeam(tm), once)


def test_nonlocal_in_a_nested_def_and_acc_equals_acc_plus():
    rows, cols = 9, 13
    a = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols) % 7
    A = pk.array(a)
    total = pk.parallel_reduce(pk.TeamPolicy(rows, TEAM), team_total_nonlocal, cols=cols, A=A)
    assert float(total) == pytest.approx(a.sum(), rel=1e-12)


@pk.workunit
def plus_spelling(i, acc, x):
    acc = x[i] + acc


def test_acc_equals_value_plus_acc_in_a_reduction():
    x = np.arange(100.0)
    assert float(pk.parallel_reduce(100, plus_spelling, x=x)) == x.sum()


@pk.workunit
def scratch_without_extents(tm: pk.TeamMember, out):
    empty: pk.ScratchView1D[pk.double] = pk.ScratchView1D(tm.team_scratch(0))
    out[tm.league_rank()] = empty.extent(0) + 1


def test_a_scratch_view_without_extents_is_empty_as_in_kokkos():
    out = pk.View([3], pk.int64)
    pk.parallel_for(pk.TeamPolicy(3, TEAM), scratch_without_extents, out=out)
    assert np.asarray(out).tolist() == [1, 1, 1]


@pk.workunit
def md_team_fill(team, A, B, C, n1: int, n2: int):
    r: int = team.league_rank()

    def inner(i0: int, i1: int):
        A[r][i0][i1] = B[r][i0] * 10.0 + C[i1]

    pk.parallel_for(pk.TeamThreadMDRange(team, n1, n2), inner)


@pk.workunit
def md3_team_fill(team, A, n1: int, n2: int, n3: int):
    r: int = team.league_rank()

    def inner(i: int, j: int, k: int):
        A[r][i * n2 * n3 + j * n3 + k] += 1.0 + i * 100 + j * 10 + k

    pk.parallel_for(pk.TeamThreadMDRange(team, n1, n2, n3), inner)


def test_team_thread_md_range_visits_every_index_tuple_once():
    n0, n1, n2 = 5, 3, 4
    b = np.arange(n0 * n1, dtype=float).reshape(n0, n1)
    c = np.arange(n2, dtype=float) * 0.5
    A, B, C = pk.View([n0, n1, n2]), pk.array(b.copy()), pk.array(c.copy())
    pk.parallel_for(pk.TeamPolicy(n0, TEAM), md_team_fill, A=A, B=B, C=C, n1=n1, n2=n2)
    np.testing.assert_array_equal(np.asarray(A), b[:, :, None] * 10.0 + c[None, None, :])
    A3 = pk.View([2, 2 * 3 * 4])
    pk.parallel_for(pk.TeamPolicy(2, TEAM), md3_team_fill, A=A3, n1=2, n2=3, n3=4)
    want = np.array([1.0 + i * 100 + j * 10 + k for i in range(2) for j in range(3) for k in range(4)])
    np.testing.assert_array_equal(np.asarray(A3), np.stack([want, want]))


@pk.workunit
def md_team_sum(team, acc: pk.Acc[pk.double], A, n1: int, n2: int):
    r: int = team.league_rank()

    def inner(i0: int, i1: int, part: pk.Acc[pk.double]):
        part += A[r][i0][i1] * (i0 + 1)

    s: float = pk.parallel_reduce(pk.TeamThreadMDRange(team, n1, n2), inner)
    if team.team_rank() == 0:
        acc += s


def test_team_thread_md_range_in_a_nested_reduction():
    a = np.arange(4 * 3 * 5, dtype=float).reshape(4, 3, 5)
    total = pk.parallel_reduce(pk.TeamPolicy(4, TEAM), md_team_sum, A=pk.array(a.copy()), n1=3, n2=5)
    assert float(total) == float((a * (np.arange(3) + 1)[None, :, None]).sum())
