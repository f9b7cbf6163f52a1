"""The lazy runtime (PK_FUSE=1): flush points, hazards, partial flushes, exit-time
flush, failures at flush time, the lazy number's protocol, and the DAG record.
Every check compares against what eager execution (or NumPy) gives."""
from __future__ import annotations

import json
import math
import operator
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pykokkos as pk

pytestmark = pytest.mark.eager_only  # these tests switch lazy mode on themselves


@pk.workunit
def fill(i, v, x):
    v[i] = x


@pk.workunit
def copy(i, dst, src):
    dst[i] = src[i]


@pk.workunit
def inc(i, v):
    x = v[i]
    v[i] = x + 1.0


@pk.workunit
def dot(i, acc, x, y):
    acc += x[i] * y[i]


@pk.workunit
def count(i, acc: pk.Acc[pk.int64]):
    acc += 1


@pk.workunit
def set_first(i, v, x):
    if i == 0:
        v[0] = x


@pk.workunit
def unused_arg(i, v, w):
    v[i] = 2.0


@pk.workunit
def scan_ints(i, acc: pk.Acc[pk.int64], last_pass, v, out):
    acc += v[i]
    if last_pass:
        out[i] = acc


@pytest.fixture
def lazy():
    pk._native.set_lazy(True)
    yield
    pk.flush()
    pk._native.set_lazy(False)


N = 16


def views(k=2, dtype=pk.double):
    return [pk.View([N], dtype) for _ in range(k)]


def test_launches_are_recorded_not_run(lazy):
    (v,) = views(1)
    pk.parallel_for(N, fill, v=v, x=3.0)
    assert pk.pending() == 1
    assert v.shape == (N,) and len(v) == N and v.extent(0) == N and v.dtype == pk.double  # metadata forces nothing
    assert pk.pending() == 1
    assert v[0] == 3.0  # host read forces
    assert pk.pending() == 0


def test_runtime_owned_view_allocates_lazily(lazy):
    v = pk.View([1 << 20], pk.double)
    assert not v._is_allocated
    pk.parallel_for(1 << 20, fill, v=v, x=1.0)
    assert not v._is_allocated  # recorded: nothing needed memory yet
    assert float(np.asarray(v).sum()) == float(1 << 20)
    assert v._is_allocated


def test_write_after_read_copy_then_fill(lazy):
    v, w = views()
    pk.parallel_for(N, fill, v=v, x=3.0)
    pk.parallel_for(N, copy, dst=w, src=v)
    pk.parallel_for(N, fill, v=v, x=7.0)
    assert np.all(np.asarray(w) == 3.0)  # w saw the old v
    assert np.all(np.asarray(v) == 7.0)


def test_read_then_store_same_element_is_a_write(lazy):
    v, w = views()
    pk.parallel_for(N, fill, v=v, x=1.0)
    pk.parallel_for(N, copy, dst=w, src=v)      # reads v = 1
    pk.parallel_for(N, inc, v=v)                # x = v[i]; v[i] = x + 1: a write
    pk.parallel_for(N, copy, dst=w, src=v)      # must see 2
    assert np.all(np.asarray(w) == 2.0)
    edges = json.loads(pk.explain_graph())["edges"] if pk.pending() else []
    assert edges == []  # already flushed by the read above


def test_constant_index_write_then_reader(lazy):
    v, w = views()
    pk.parallel_for(N, set_first, v=v, x=5.0)
    pk.parallel_for(N, copy, dst=w, src=v)
    assert np.asarray(w)[0] == 5.0 and np.all(np.asarray(w)[1:] == 0.0)


def test_unused_view_argument_creates_no_dependency(lazy):
    v, w, u = views(3)
    pk.parallel_for(N, fill, v=w, x=9.0)
    pk.parallel_for(N, unused_arg, v=v, w=w)  # w passed, never touched
    g = json.loads(pk.explain_graph())
    assert g["edges"] == []
    assert len(g["nodes"]) == 2
    pk.parallel_for(N, copy, dst=u, src=w)
    assert np.all(np.asarray(u) == 9.0) and np.all(np.asarray(v) == 2.0)


def test_host_write_waits_for_pending_readers(lazy):
    v, w = views()
    pk.parallel_for(N, fill, v=v, x=4.0)
    pk.parallel_for(N, copy, dst=w, src=v)
    v[3] = 1.0  # the pending copy must read the old v[3]
    assert np.asarray(w)[3] == 4.0
    assert v[3] == 1.0


def test_partial_flush_runs_only_the_dependency_closure(lazy):
    a, b = views()
    pk.parallel_for(N, fill, v=a, x=1.0)
    pk.parallel_for(N, fill, v=b, x=2.0)
    assert pk.pending() == 2
    assert a[0] == 1.0
    assert pk.pending() == 1  # b's launch is still pending
    assert b[0] == 2.0 and pk.pending() == 0


@pk.workunit
def axpy_into(i, out, a, x, y):
    out[i] = a * x[i] + y[i]


@pk.workunit
def iota(i, v):
    v[i] = i


# src/pipeline/submit.rs MOST_PENDING: a stream nothing reads runs at this many launches.
MOST_PENDING = 2048


def test_a_long_stream_nothing_reads_stays_bounded_and_gives_numpys_results(lazy):
    """Thousands of launches that only read two shared views (each writes its
    own row of a table) and nothing reads until the end: recording each must
    not scan the reads before it, the stream runs whenever it reaches the
    bound, and a view one launch in the middle wrote, read in between, runs
    that launch alone (taken out of the DAG out of program order)."""
    rows, n = 5000, 8
    x, y, table = pk.View([n], pk.double), pk.View([n], pk.double), pk.View([rows, n], pk.double)
    alone = pk.View([n], pk.double)
    pk.parallel_for(n, iota, v=x)
    pk.parallel_for(n, fill, v=y, x=1.0)
    most = 0
    for k in range(rows):
        # Ranges differ: no launch repeats the one before (none folds).
        pk.parallel_for(1 + k % n, axpy_into, out=table[k, :], a=float(k), x=x, y=y)
        if k == 3000:
            pk.parallel_for(n, axpy_into, out=alone, a=2.0, x=x, y=y)
        most = max(most, pk.pending())
        if k == 3333:
            waiting = pk.pending()
            assert alone[n - 1] == 2.0 * (n - 1) + 1.0  # runs that launch alone, out of program order
            assert pk.pending() == waiting - 1
    assert 1000 <= most <= MOST_PENDING
    want = np.zeros((rows, n))
    for k in range(rows):
        m = 1 + k % n
        want[k, :m] = k * np.arange(m) + 1.0
    np.testing.assert_array_equal(np.asarray(table), want)
    assert pk.pending() == 0


def test_reduction_result_forces_only_its_inputs(lazy):
    a, b, c = views(3)
    pk.parallel_for(N, fill, v=a, x=2.0)
    pk.parallel_for(N, fill, v=b, x=3.0)
    pk.parallel_for(N, fill, v=c, x=5.0)  # unrelated
    r = pk.parallel_reduce(N, dot, x=a, y=b)
    assert pk.pending() == 4
    assert float(r) == 6.0 * N
    # c's fill did not run; a's and b's were computed inside the reduction
    # (their values in registers) and stay pending until a or b is read.
    assert pk.pending() == 3
    assert c[0] == 5.0 and pk.pending() == 2
    assert a[0] == 2.0 and b[N - 1] == 3.0 and pk.pending() == 0


def test_fence_and_flush_run_everything(lazy):
    a, b = views()
    pk.parallel_for(N, fill, v=a, x=1.0)
    pk.fence()
    assert pk.pending() == 0
    pk.parallel_for(N, fill, v=b, x=1.0)
    pk.flush()
    assert pk.pending() == 0 and b[N - 1] == 1.0


def test_numpy_argument_runs_at_once_after_its_dependencies(lazy):
    (v,) = views(1)
    a = np.zeros(N)
    pk.parallel_for(N, fill, v=v, x=6.0)
    pk.parallel_for(N, fill, v=a, x=2.0)  # foreign memory: runs before the call returns
    assert np.all(a == 2.0)
    assert pk.pending() == 1  # the view launch stays lazy


def test_live_numpy_export_makes_a_view_foreign(lazy):
    (v,) = views(1)
    arr = np.asarray(v)
    assert v._exports >= 1 and v._is_foreign
    pk.parallel_for(N, fill, v=v, x=8.0)
    assert pk.pending() == 0 and np.all(arr == 8.0)
    del arr
    assert v._exports == 0 and not v._is_foreign
    pk.parallel_for(N, fill, v=v, x=1.0)
    assert pk.pending() == 1


def test_pk_array_wrapper_is_foreign(lazy):
    a = np.zeros(N)
    v = pk.array(a)
    pk.parallel_for(N, fill, v=v, x=3.0)
    assert pk.pending() == 0 and np.all(a == 3.0)


def test_subviews_alias_their_parent(lazy):
    (v,) = views(1)
    first, second = v[: N // 2], v[N // 2:]
    pk.parallel_for(N // 2, fill, v=first, x=1.0)
    pk.parallel_for(N // 2, fill, v=second, x=2.0)
    g = json.loads(pk.explain_graph())
    assert g["edges"] == []  # disjoint halves of one allocation: no hazard
    pk.parallel_for(N, inc, v=v)  # overlaps both
    g = json.loads(pk.explain_graph())
    assert sorted(g["edges"]) == [[g["nodes"][0]["seq"], g["nodes"][2]["seq"]], [g["nodes"][1]["seq"], g["nodes"][2]["seq"]]]
    want = np.r_[np.full(N // 2, 2.0), np.full(N // 2, 3.0)]
    assert np.array_equal(np.asarray(v), want)


def test_scan_is_lazy_and_exact(lazy):
    v = pk.View([N], pk.int64)
    out = pk.View([N], pk.int64)
    np.asarray(v)[:] = np.arange(N)
    total = pk.parallel_scan(N, scan_ints, v=v, out=out)
    assert pk.pending() == 1
    assert int(total) == sum(range(N))
    assert np.array_equal(np.asarray(out), np.cumsum(np.arange(N)))


def test_lazy_number_protocol(lazy):
    a, b = views()
    pk.parallel_for(N, fill, v=a, x=1.5)
    pk.parallel_for(N, fill, v=b, x=2.0)
    r = pk.parallel_reduce(N, dot, x=a, y=b)
    want = 1.5 * 2.0 * N
    assert 0 + r == want and r + 0 == want and r - 1 == want - 1 and 1 - r == 1 - want
    assert r * 2 == 2 * want and 2 * r == 2 * want and r / 4 == want / 4 and 48 / r == 48 / want
    assert r // 5 == want // 5 and r % 5 == want % 5 and r ** 2 == want ** 2 and 2 ** (r / want) == 2.0
    assert sum([r, r]) == 2 * want
    assert float(r) == want and int(r) == int(want) and bool(r)
    assert format(r, ".3f") == format(want, ".3f") and f"{r:8.2f}" == f"{want:8.2f}"
    assert str(r) == str(want) and repr(r) == repr(want)
    assert round(r) == round(want) and round(r, 1) == round(want, 1)
    assert abs(-r) == want and -r == -want and +r == want
    assert r == want and r != want + 1 and r < want + 1 and r <= want and r > want - 1 and r >= want
    assert want + 1 > r and math.isclose(r, want)
    assert np.float64(r) == want and float(np.asarray(r)) == want
    assert hash(r) == hash(want) and {r: 1}[want] == 1
    c = pk.parallel_reduce(N, count)
    assert operator.index(c) == N and list(range(10))[c // 4] == N // 4 and int(c) == N
    init = pk.parallel_reduce(N, count, initial_value=100)
    assert init == 100 + N


def test_dag_record_is_serializable_and_deterministic(lazy):
    a, b = views()
    pk.parallel_for(N, fill, v=a, x=1.0)
    pk.parallel_for("copy-ab", pk.RangePolicy(0, N), copy, dst=b, src=a)
    g1, g2 = json.loads(pk.explain_graph()), json.loads(pk.explain_graph())
    assert g1 == g2
    n0, n1 = g1["nodes"]
    assert n0["workunit"]["name"] == "fill" and n0["scalars"] == [{"name": "x", "float": 1.0}]
    assert n1["begin"] == [0] and n1["end"] == [N] and n1["pattern"] == "For"
    assert {x["buffer"] for x in n1["buffers"]} == {0, 1}
    assert g1["edges"] == [[n0["seq"], n1["seq"]]]
    assert n1["site"].endswith(f"test_lazy.py:{n1['site'].rsplit(':', 1)[1]}")


def test_dead_view_is_reported(lazy):
    a, b = views()
    t = pk.View([N], pk.double)
    pk.parallel_for(N, fill, v=t, x=1.0)
    pk.parallel_for(N, copy, dst=b, src=t)
    del t
    g = json.loads(pk.explain_graph())
    assert g["dead_buffers"] == [0]
    assert np.all(np.asarray(b) == 1.0)


def _run(code: str, tmp_path, env_extra=None):
    import os

    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(code))
    env = {**os.environ, "PK_FUSE": "1", **(env_extra or {})}
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)


def test_a_timer_waits_for_the_work_it_times():
    # Eagerly, host launches run at their call, so programs time them with a
    # pk.Timer and no fence; a lazy Timer waits for submitted work first.
    n = 1 << 15  # not small: always recorded in lazy mode
    v = pk.View([n], pk.int64)
    lazy = pk._native.lazy_enabled()
    t = pk.Timer()
    pk.parallel_for(n, fill, v=v, x=3)
    assert pk.pending() == (1 if lazy else 0)
    assert t.seconds() >= 0.0
    assert pk.pending() == 0
    pk.parallel_for(n, inc, v=v)
    assert pk.pending() == (1 if lazy else 0)
    t.reset()
    assert pk.pending() == 0
    np.testing.assert_array_equal(np.asarray(v), np.full(n, 4))


def test_exit_flushes_pending_work(tmp_path):
    out = tmp_path / "out.npy"
    r = _run(f"""
        import numpy as np, pykokkos as pk

        @pk.workunit
        def fill(i, v, x):
            v[i] = x

        @pk.workunit
        def twice(i, v):
            v[i] = 2 * v[i]

        @pk.workunit
        def say(i, v):
            pk.printf("value %d\\n", int(v[i]))

        v = pk.View([4], pk.int64)
        pk.parallel_for(4, fill, v=v, x=7)
        pk.parallel_for(4, twice, v=v)
        assert pk.pending() == 2
        w = pk.View([1], pk.int64)
        pk.parallel_for(1, fill, v=w, x=5)
        # A printf runs at once; the fill it reads folds into it (its own
        # run stays deferred: w is alive but unread), v's two stay pending.
        pk.parallel_for(1, say, v=w)
        assert pk.pending() == 3
        import atexit
        atexit.register(lambda: np.save({str(out)!r}, np.asarray(v)))
        """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "value 5" in r.stdout
    assert np.array_equal(np.load(out), np.full(4, 14))


def test_a_failure_at_exit_sets_the_exit_status_and_names_the_site(tmp_path):
    r = _run("""
        import pykokkos as pk

        @pk.workunit
        def bad(i, v):
            v[i] = undefined_name

        v = pk.View([4], pk.double)
        pk.parallel_for(4, bad, v=v)   # never read: it runs (and fails) at exit
        print("program done")
        """, tmp_path)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "program done" in r.stdout
    assert "undefined_name" in r.stderr and "prog.py:9" in r.stderr.replace(str(tmp_path) + "/", ""), r.stderr


def test_finalize_runs_pending_work_first(tmp_path):
    r = _run("""
        import numpy as np, pykokkos as pk

        @pk.workunit
        def fill(i, v, x):
            v[i] = x

        v = pk.View([4], pk.int64)
        pk.parallel_for(4, fill, v=v, x=5)
        pk.finalize()
        assert pk.pending() == 0
        print(np.asarray(v).tolist())
        """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "[5, 5, 5, 5]" in r.stdout, r.stdout


def test_pk_fusion_naive_is_the_same_switch(tmp_path):
    r = _run("""
        import pykokkos as pk
        print(pk._native.lazy_enabled())
        """, tmp_path, {"PK_FUSE": "", "PK_FUSION": "naive"})
    assert r.stdout.strip() == "True", r.stderr


def test_failure_at_flush_names_the_launch_site_and_keeps_other_work(lazy):
    # A kernel whose types do not fit is only translated when the flush needs it.
    @pk.workunit
    def bad(i, v):
        v[i] = v  # a view used as a number

    a, b = views()
    pk.parallel_for(N, fill, v=b, x=4.0)  # independent: must survive
    pk.parallel_for(N, bad, v=a)
    line = sys._getframe().f_lineno - 1
    with pytest.raises(pk.KernelTypeError) as info:
        a[0]
    msg = str(info.value)
    assert f"test_lazy.py:{line}" in msg and "bad" in msg
    assert pk.pending() == 1
    assert b[0] == 4.0


def test_a_write_dropped_with_a_failure_keeps_the_reads_it_stood_for_in_order(lazy):
    """R reads a; W overwrites a but needs a failed launch, so the failure
    drops W and keeps R pending. A later write to a must still wait for R
    (W had stood for R's read in the DAG's frontier of a)."""

    @pk.workunit
    def bad(i, v, e):
        e[i] = 1.0
        v[i] = v  # a view used as a number: fails when the flush builds it

    a, b, c, e = views(4)
    pk.parallel_for(N, fill, v=a, x=3.0)
    a[0]  # a holds 3.0, nothing pending
    pk.parallel_for(N, copy, dst=b, src=a)  # R
    pk.parallel_for(N, bad, v=c, e=e)  # fails
    pk.parallel_for(N, copy, dst=a, src=e)  # W: needs the failed launch, covers R's read
    with pytest.raises(pk.KernelTypeError):
        c[0]  # runs only the failing launch; W is dropped with it
    assert pk.pending() == 1  # R
    pk.parallel_for(N, fill, v=a, x=7.0)  # must run after R
    assert a[0] == 7.0
    assert np.asarray(b).tolist() == [3.0] * N


@pk.workunit
def double_into(i, src, dst):
    dst[i] = 2.0 * src[i]


@pk.workunit
def two_outputs(i, src, dst, keep):
    dst[i] = src[i] + 1.0
    keep[i] = src[i] - 1.0


@pk.workunit
def noisy_copy(i, src, dst):
    if i == 0:
        pk.printf("noisy %d\n", i)
    dst[i] = src[i]


def test_launches_no_one_can_observe_are_dropped_when_their_views_die(lazy):
    """A View that dies unread takes its pending writers with it, and the
    writers that only fed them; it is never allocated. Launches with another
    live output, a printf, or a reduction's result stay."""
    src, keep = views(2)
    np.asarray(src)[:] = np.arange(N)
    for k in (double_into, noisy_copy):  # kernels never built run once (their errors must show)
        pk.parallel_for(N, k, src=src, dst=keep)
    pk.parallel_for(N, two_outputs, src=src, dst=keep, keep=keep)
    pk.flush()
    t1 = pk.View([N], pk.double)
    t2 = pk.View([N], pk.double)
    pk.parallel_for(N, double_into, src=src, dst=t1)
    pk.parallel_for(N, double_into, src=t1, dst=t2)
    assert pk.pending() == 2
    del t1  # still feeds t2's writer: stays
    assert pk.pending() == 2
    del t2  # nothing can see either result any more
    assert pk.pending() == 0
    t3 = pk.View([N], pk.double)
    pk.parallel_for(N, two_outputs, src=src, dst=t3, keep=keep)
    pk.parallel_for(N, noisy_copy, src=src, dst=pk.View([N], pk.double))  # a printf: ran at once
    del t3
    assert pk.pending() == (1 if pk._native.lazy_enabled() else 0)  # `keep` is alive
    np.testing.assert_array_equal(np.asarray(keep), np.arange(N) - 1.0)
    t4 = pk.View([N], pk.double)
    total = pk.parallel_reduce(N, sum_of, v=t4)
    del t4
    assert float(total) == 0.0
    assert np.asarray(src).tolist() == list(range(N))


@pk.workunit
def sum_of(i, acc, v):
    acc += v[i]
