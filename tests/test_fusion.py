"""The fusion engine: every known PyFuser wrong-result case, the fixtures of each
rule in fusion-rules/, explain reports, kernel reuse, rule configuration, and
failures that lose and repeat nothing (random programs: test_fuzz.py)."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pykokkos as pk
from conftest import strip_ansi

pytestmark = pytest.mark.eager_only  # each test runs its program both ways itself

RULES = Path(__file__).resolve().parents[1] / "fusion-rules"
PLAN_SNAPSHOTS = Path(__file__).resolve().parent / "snapshots" / "plans"
FIXTURES = sorted(RULES.glob("*/*fuse_*.py"))


@pytest.fixture
def fused(lazy):
    """Lazy mode with fusion (conftest's `lazy`)."""
    yield


def both(program, with_plans=False):
    """(eager results, fused results, fusion reports of the fused run[, its plans])."""
    pk._native.set_lazy(False)
    eager = program()
    pk._native.set_lazy(True)
    pk._native.explain_history()
    try:
        lazy = program()
        pk.flush()
        history = pk._native.explain_history(plans=True)
    finally:
        pk._native.set_lazy(False)
    reports = "".join(text for text, _ in history)
    if with_plans:
        return eager, lazy, reports, [json.loads(plan) for _, plan in history]
    return eager, lazy, reports


def assert_same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        x, y = np.asarray(a[k], dtype=float), np.asarray(b[k], dtype=float)
        assert np.allclose(x, y, rtol=1e-12, atol=1e-12), (k, x, y)


def _fixture_param(path):
    return pytest.param(path, id=f"{path.parent.name}/{path.stem}")


@pytest.mark.parametrize("path", [_fixture_param(p) for p in FIXTURES])
def test_rule_fixture(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    eager, lazy, reports, plans = both(lambda: mod.run(pk), with_plans=True)
    assert_same(eager, lazy)
    rule = path.parent.name
    if path.stem.startswith("fuse_"):
        assert f"[{rule}]" in reports, reports
    else:
        assert f"[{rule}]" not in reports, reports
    # The plan of every flush (regions, the rule that joined each launch, dead
    # temporaries) is pinned: a change is a reviewed snapshot update.
    snap = PLAN_SNAPSHOTS / f"{rule}__{path.stem}.json"
    text = json.dumps(plans, indent=1, sort_keys=True) + "\n"
    if os.environ.get("PK_UPDATE_SNAPSHOTS") == "1":
        snap.parent.mkdir(parents=True, exist_ok=True)
        snap.write_text(text)
    assert snap.exists(), f"no plan snapshot {snap}: run with PK_UPDATE_SNAPSHOTS=1 and review it"
    assert json.loads(snap.read_text()) == plans, f"plan differs from {snap}:\n{text}"


# --- the PyFuser wrong-result cases (fusion.md), each eager == fused == NumPy ---

@pk.workunit
def copy(i, dst, src):
    dst[i] = src[i]


@pk.workunit
def fill(i, v, x):
    v[i] = x


@pk.workunit
def inc(i, a):
    x = a[i]
    a[i] = x + 1.0


@pk.workunit
def set_first(i, v, x):
    if i == 0:
        v[0] = x


@pk.workunit
def read_first(i, v, out):
    out[i] = v[0]


@pk.workunit
def prefix_fill(i, v):
    # Writes only v[i], but through a loop bounded by the index: not work-index access.
    for j in range(i, i + 1):
        v[j] = i


@pk.workunit
def double(i, v, w):
    w[i] = 2.0 * v[i]


@pk.workunit
def ignores_w(i, v, w):
    v[i] = v[i] + 1.0


@pk.workunit
def early_return(i, v):
    if i % 2 == 0:
        return
    v[i] = 1.0


@pk.workunit
def add_one(i, v):
    v[i] = v[i] + 1.0


@pk.workunit
def total(i, acc, v):
    acc += v[i]


N = 40


def fresh(*values):
    out = []
    for val in values:
        v = pk.View([N], pk.double)
        np.asarray(v)[:] = val
        out.append(v)
    return out


def test_write_after_read_copy_then_fill():
    def prog():
        v, w = fresh(np.arange(N), 0.0)
        pk.parallel_for(N, copy, dst=w, src=v)
        pk.parallel_for(N, fill, v=v, x=-1.0)
        return {"w": np.asarray(w).copy(), "v": np.asarray(v).copy()}

    eager, lazy, _ = both(prog)
    assert_same(eager, lazy)
    assert np.array_equal(lazy["w"], np.arange(N)) and np.all(lazy["v"] == -1.0)


def test_read_then_store_is_a_write():
    def prog():
        a, b = fresh(np.arange(N), 0.0)
        pk.parallel_for(N, inc, a=a)
        pk.parallel_for(N, copy, dst=b, src=a)
        return {"b": np.asarray(b).copy()}

    eager, lazy, reports = both(prog)
    assert_same(eager, lazy)
    assert np.array_equal(lazy["b"], np.arange(N) + 1.0)
    assert "[vertical]" in reports  # legal: both at the work index


def test_constant_index_write_is_not_fused_with_a_reader():
    def prog():
        v, out = fresh(0.0, 0.0)
        pk.parallel_for(N, set_first, v=v, x=5.0)
        pk.parallel_for(N, read_first, v=v, out=out)
        return {"out": np.asarray(out).copy()}

    eager, lazy, reports = both(prog)
    assert_same(eager, lazy)
    assert np.all(lazy["out"] == 5.0)
    assert "not fused: read_first" in reports and "work index" in reports


def test_loop_bounded_by_the_index_is_not_work_index_access():
    def prog():
        v, w = fresh(0.0, 0.0)
        pk.parallel_for(N, prefix_fill, v=v)
        pk.parallel_for(N, double, v=v, w=w)
        return {"w": np.asarray(w).copy()}

    eager, lazy, reports = both(prog)
    assert_same(eager, lazy)
    assert "not fused: double" in reports


def test_view_passed_but_unused_creates_no_false_dependency():
    def prog():
        v, w = fresh(1.0, 7.0)
        pk.parallel_for(N, ignores_w, v=v, w=w)
        pk.parallel_for(N, fill, v=w, x=3.0)
        return {"v": np.asarray(v).copy(), "w": np.asarray(w).copy()}

    eager, lazy, _ = both(prog)
    assert_same(eager, lazy)
    assert np.all(lazy["v"] == 2.0) and np.all(lazy["w"] == 3.0)


def test_early_return_ends_only_its_own_body():
    def prog():
        v, u = fresh(0.0, 0.0)
        pk.parallel_for(N, early_return, v=v)
        pk.parallel_for(N, add_one, v=u)
        pk.flush()  # both at once: independent launches fuse horizontally
        return {"v": np.asarray(v).copy(), "u": np.asarray(u).copy()}

    eager, lazy, reports = both(prog)
    assert_same(eager, lazy)
    assert np.all(lazy["u"] == 1.0)  # the second body ran for even i too
    assert "fused(early_return+add_one)" in reports


@pk.function
def store(v: pk.View1D[pk.double], j: int, x: float):
    v[j] = x


@pk.workunit
def via_helper(i, v):
    store(v, i, 3.0 * i)


@pk.functor
class Member:
    """Touches its member only through @pk.function methods."""

    def __init__(self, a, out):
        self.a: pk.View1D[pk.double] = a
        self.out: pk.View1D[pk.double] = out

    @pk.function
    def put(self, j: int, x: float):
        self.a[j] = x

    @pk.function
    def right(self, j: int) -> float:
        return self.a[j + 1] if j + 1 < self.a.extent(0) else 0.0

    @pk.workunit
    def init(self, i: int):
        self.put(i, 2.0 * i)

    @pk.workunit
    def shift(self, i: int):
        self.out[i] = self.right(i)


def test_accesses_through_methods_and_helpers_are_exact():
    """Bodies of called methods and helpers are followed: element-wise writes
    through them fuse with element-wise readers, and a neighbour read through
    a method keeps the launches apart."""

    def prog():
        a, b, c, d, e = fresh(0.0, 0.0, 0.0, 0.0, 0.0)
        m = Member(a, e)
        pk.parallel_for(N, m.init)
        pk.parallel_for(N, copy, dst=b, src=a)
        pk.parallel_for(N, via_helper, v=c)
        pk.parallel_for(N, copy, dst=d, src=c)
        pk.flush()
        pk.parallel_for(N, m.init)
        pk.parallel_for(N, m.shift)
        return {k: np.asarray(v).copy() for k, v in zip("abcde", (a, b, c, d, e))}

    eager, lazy, reports = both(prog)
    assert_same(eager, lazy)
    assert np.array_equal(lazy["b"], 2.0 * np.arange(N))
    assert np.array_equal(lazy["d"], 3.0 * np.arange(N))
    assert np.array_equal(lazy["e"], np.append(2.0 * np.arange(1, N), 0.0))
    assert "fused(init+copy+via_helper+copy)" in reports
    assert "not fused: shift" in reports


def test_two_instances_of_a_functor_fused_write_their_own_members():
    """A method is instantiated per member binding: fused launches of two
    instances must not share one instance's members (found by the fuzzer)."""

    def prog():
        a, b, c = fresh(0.0, 0.0, 0.0)
        e, f = fresh(0.0, 0.0)
        pk.parallel_for(N, Member(a, e).init)
        pk.parallel_for(N, Member(b, f).init)
        pk.parallel_for(N, Member(c, e).init)
        pk.flush()
        return {k: np.asarray(v).copy() for k, v in zip("abc", (a, b, c))}

    eager, lazy, reports = both(prog)
    assert_same(eager, lazy)
    for k in "abc":
        assert np.array_equal(lazy[k], 2.0 * np.arange(N)), k
    assert "fused(init+init+init)" in reports


def test_for_over_another_range_then_reduce():
    def prog():
        (v,) = fresh(1.0)
        pk.parallel_for(pk.RangePolicy(0, N // 2), fill, v=v, x=3.0)
        r = pk.parallel_reduce(N, total, v=v)
        return {"r": float(r)}

    eager, lazy, reports = both(prog)
    assert_same(eager, lazy)
    assert lazy["r"] == 3.0 * (N // 2) + 1.0 * (N - N // 2)
    assert "iteration spaces differ" in reports


def test_host_write_waits_for_pending_reader(fused):
    v, w = fresh(4.0, 0.0)
    pk.parallel_for(N, copy, dst=w, src=v)
    v[3] = 1.0
    assert np.all(np.asarray(w) == 4.0) and v[3] == 1.0


# --- regions, dead temporaries, reuse ---------------------------------------

@pk.workunit
def mul2(i, x, y):
    y[i] = 2.0 * x[i]


@pk.workunit
def plus(i, x, y, z):
    z[i] = x[i] + y[i]


@pk.workunit
def dot(i, acc, x, y):
    acc += x[i] * y[i]


def chain(x):
    t = pk.View([N], pk.double)
    z = pk.View([N], pk.double)
    pk.parallel_for(N, mul2, x=x, y=t)
    pk.parallel_for(N, plus, x=x, y=t, z=z)
    del t
    return pk.parallel_reduce(N, dot, x=z, y=z)


def test_chain_into_reduce_is_one_kernel_with_a_dead_temporary(fused):
    (x,) = fresh(np.arange(N) * 0.25)
    r = chain(x)
    want = float(np.sum((3 * np.arange(N) * 0.25) ** 2))
    assert float(r) == pytest.approx(want, rel=1e-12)
    text = pk.explain(show=False)
    assert "flush: 3 launch(es) -> 1 kernel(s)" in text
    assert "[vertical]" in text and "[reduction_epilogue]" in text
    assert "dead temporaries kept in registers" in text


def test_structurally_identical_regions_reuse_one_kernel(fused):
    (x,) = fresh(1.0)
    float(chain(x))
    before = pk._native.fused_kernel_count()
    for k in range(3):
        (y,) = fresh(float(k))
        assert float(chain(y)) == pytest.approx(N * (3.0 * k) ** 2)
    assert pk._native.fused_kernel_count() == before


def test_explain_writes_dot(fused, tmp_path):
    (x,) = fresh(1.0)
    float(chain(x))
    dot_file = tmp_path / "dag.dot"
    pk.explain(dot=str(dot_file), show=False)
    text = dot_file.read_text()
    assert text.startswith("digraph flush") and "cluster_0" in text and "mul2" in text


def _run(code, env):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={**os.environ, "PK_FUSE": "1", **env}, timeout=300)


PROGRAM = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import numpy as np, pykokkos as pk
from test_fusion import chain, fresh, N
(x,) = fresh(1.0)
r = float(chain(x))
assert r == N * 9.0, r
print(pk.explain(show=False))
"""


def test_disabling_a_rule_by_name():
    r = _run(PROGRAM, {"PK_FUSION_DISABLE": "vertical,adaptive_cost"})
    assert r.returncode == 0, r.stderr
    assert "[vertical]" not in r.stdout and "rule 'none'" in r.stdout or "not fused" in r.stdout


def test_rules_directory_replaces_defaults_and_limits_cut_regions(tmp_path):
    for name in ("vertical", "reduction_epilogue", "horizontal"):
        text = (RULES / name / "rule.toml").read_text().replace("max_launches = 32", "max_launches = 2")
        (tmp_path / name).mkdir()
        (tmp_path / name / "rule.toml").write_text(text)
    r = _run(PROGRAM, {"PK_FUSION_RULES": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert "3 launch(es) -> 2 kernel(s)" in r.stdout and "profitability" in r.stdout


def test_explain_env_prints_each_flush():
    r = _run(PROGRAM, {"PK_FUSE_EXPLAIN": "1"})
    assert r.returncode == 0, r.stderr
    assert "fused(mul2+plus+dot)" in r.stderr


# --- failures: nothing lost, nothing repeated ------------------------------------

FAILING = """
import numpy as np, pykokkos as pk

@pk.workunit
def bump(i, v):
    v[i] = v[i] + 1.0

@pk.workunit
def bump_too(i, v):
    v[i] = v[i] + 1.0

second = bump if REPEAT else bump_too  # identical launches run as one looping kernel
v = pk.View([100], pk.double)
for flush in range(2):
    pk.parallel_for(100, bump, v=v)
    pk.parallel_for(100, second, v=v)
    try:
        pk.flush()
        print("flushed")
    except RuntimeError as e:
        print("error:", str(e).splitlines()[0])
    print("values", sorted(set(np.asarray(v).tolist())), "pending", pk.pending())
"""


def _run_file(tmp_path, code, env):
    script = tmp_path / "prog.py"
    script.write_text(code)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env={**os.environ, "PK_FUSE": "1", **env}, timeout=300)


@pytest.mark.parametrize("repeat", [False, True])
def test_a_fused_kernel_that_fails_after_it_ran_is_not_rerun(tmp_path, repeat):
    r = _run_file(tmp_path, f"REPEAT = {repeat}\n" + FAILING, {"PK_FAILPOINT": "fused_run"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # Each flush ran the fused pair once (+2), reported the failure, dropped the launches.
    assert lines[0].startswith("error:") and "failed after it ran" in lines[0], r.stdout
    assert lines[1] == "values [2.0] pending 0", r.stdout
    assert lines[3] == "values [4.0] pending 0", r.stdout


def test_a_fused_kernel_that_fails_to_build_falls_back_once_and_is_not_rebuilt(tmp_path):
    r = _run_file(tmp_path, "REPEAT = False\n" + FAILING, {"PK_FAILPOINT": "fused_build", "PK_LOG": "info"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["flushed", "values [2.0] pending 0", "flushed", "values [4.0] pending 0"]
    # One build attempt for the region's structure, not one per flush.
    assert strip_ansi(r.stderr).count("fuse{") == 1, strip_ansi(r.stderr)


@pk.workunit
def running_copy(i, acc: pk.Acc[pk.int64], src, dst):
    dst[acc] = src[i]  # reads the running total
    acc += 1


def test_fused_reductions_that_read_their_accumulator_see_the_running_value():
    """Found by the fuzzer: fused reductions summed each work item into a fresh
    register, so a body reading its accumulator saw 0 instead of the running total."""

    def prog():
        src, a, b = fresh(np.arange(N), 0.0, 0.0)
        serial = pk.RangePolicy(pk.Serial, 0, N)
        n1 = pk.parallel_reduce(serial, running_copy, src=src, dst=a)
        n2 = pk.parallel_reduce(serial, running_copy, src=src, dst=b)
        pk.flush()  # both at once: they fuse horizontally
        return {"a": np.asarray(a).copy(), "b": np.asarray(b).copy(), "n": np.array([float(n1), float(n2)])}

    eager, lazy, reports = both(prog)
    assert_same(eager, lazy)
    assert np.array_equal(lazy["a"], np.arange(N)) and np.array_equal(lazy["b"], np.arange(N))
    assert "fused(running_copy+running_copy)" in reports


@pk.workunit
def bump_odd(i, v, step):
    if i % 2 == 0:
        return
    v[i] = v[i] * 0.5 + step


@pk.workunit
def shift_left(i, v, w):
    if i + 1 < v.extent(0):
        w[i] = v[i + 1]


def test_runs_of_identical_launches_are_one_looping_kernel():
    """1000 exact repeats (one with an early return) are recorded as one node
    and run as one kernel whose work items loop; a launch with another scalar
    ends the run; a stencil (not work-index access, here through two names
    for one View) is never folded. NumPy is the reference."""
    pending = []

    def prog():
        v, u, w = fresh(1.0, 1.0, 0.0)
        for _ in range(1000):
            pk.parallel_for(N, add_one, v=v)
        pending.append(pk.pending())
        for _ in range(300):
            pk.parallel_for(N, bump_odd, v=u, step=2.0)
        pk.parallel_for(N, bump_odd, v=u, step=3.0)
        pending.append(pk.pending())
        for _ in range(3):
            pk.parallel_for(N, shift_left, v=w, w=w)
        pending.append(pk.pending())
        pk.flush()
        return {"v": np.asarray(v).copy(), "u": np.asarray(u).copy(), "w": np.asarray(w).copy()}

    eager, lazy, reports = both(prog)
    assert_same(eager, lazy)
    np.testing.assert_array_equal(lazy["v"], np.full(N, 1001.0))
    u = np.ones(N)
    for step in [2.0] * 300 + [3.0]:
        u[1::2] = u[1::2] * 0.5 + step
    np.testing.assert_allclose(lazy["u"], u, rtol=1e-15)
    assert pending[3:] == [1, 3, 6]  # the lazy run: 1000 and 300 launches became one node each
    assert "a run of repeated launches runs as its own looping kernel" in reports


def test_repeats_around_a_reduction_keep_their_order():
    """A reduction between two runs of repeats reads the first run's result
    and ends it: the second run folds into a node of its own."""
    def prog():
        v, = fresh(2.0)
        totals = []
        for _ in range(40):
            pk.parallel_for(N, add_one, v=v)
        t = pk.parallel_reduce(N, total, v=v)
        for _ in range(40):
            pk.parallel_for(N, add_one, v=v)
        totals.append(float(t))
        return {"v": np.asarray(v).copy(), "t": np.array(totals)}

    eager, lazy, reports = both(prog)
    assert_same(eager, lazy)
    np.testing.assert_array_equal(lazy["v"], np.full(N, 82.0))
    assert lazy["t"][0] == 42.0 * N


@pk.workunit
def scale_by(i, v, a):
    v[i] = a * v[i]


@pytest.mark.host_only("the adaptive bypass is for host launches; GPU launches are always recorded")
def test_tiny_launches_read_every_iteration_run_at_once_until_chains_return():
    """Recording cannot pay when each flush runs a launch by itself: once its
    flushes ran a tiny host kernel alone three times, its launches run at
    once (nothing stays pending); a probe records one again now and then, and
    once the program builds long chains between reads, launches are recorded
    (and fused) again. Same values as NumPy throughout. (Learned flushes are
    off: they would hold each chain to run it as one kernel; test_tape.py
    covers them.)"""
    pk._native.set_lazy(True)
    tape_was = pk._native.set_tape(False)
    try:
        v, = fresh(1.0)
        ref = np.ones(N)
        for k in range(20):  # read after every map
            pk.parallel_for(N, scale_by, v=v, a=1.5)
            ref *= 1.5
            assert v[k] == pytest.approx(ref[k], rel=1e-12)
        pk.parallel_for(N, scale_by, v=v, a=0.5)
        ref *= 0.5
        assert pk.pending() == 0  # ran at once
        recorded = 0
        for _ in range(600):  # long chains between reads: a probe finds them
            for a in (2.0, 0.5) * 4:  # exact in binary: the values stay as they are
                pk.parallel_for(N, scale_by, v=v, a=a)
            recorded = pk.pending()
            np.testing.assert_array_equal(np.asarray(v), ref)
            if recorded == 8:
                break
        # Recording (and fusion) came back within the probe period: a whole
        # chain waited (the probe itself may start in the middle of one).
        assert recorded == 8
    finally:
        pk.flush()
        pk._native.set_tape(tape_was)
        pk._native.set_lazy(False)



COST_PROGRAM = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import numpy as np, pykokkos as pk
from test_fusion import N, fresh, scale_by, total
pk._native.set_lazy(True)
(v,) = fresh(1.0)
ref = np.ones(N)

def chain8():  # 8 different launches (no run of repeats), exact in binary
    for a in (2.0, 0.5) * 4:
        pk.parallel_for(N, scale_by, v=v, a=a)
    return pk.pending()

def checked():
    assert float(pk.parallel_reduce(N, total, v=v)) == ref.sum()
    np.testing.assert_array_equal(np.asarray(v), ref)

chain8()
checked()  # kernels compile (a flush that long is no launch's cost)
pk._native.set_lazy(False)
pk._native.adaptive_costs((0.0, 0.0))  # measured from here on
pk._native.set_lazy(True)
seen = [chain8()]
checked()  # the first flush measures what a recorded launch costs ...
seen.append(chain8())  # ... and the 16 launches after it run at once, measured too
lazy, eager = pk._native.adaptive_costs()
assert lazy > 0 and eager > 0, (lazy, eager)
seen.append(chain8())  # the trial's last launches
checked()
pk._native.adaptive_costs((1e9, 1e6))  # recording costs 1000x: run at once
seen.append(chain8())
checked()
pk._native.adaptive_costs((1e6, 1e9))  # recording is cheaper: record again
seen.append(chain8())
checked()
print(seen)
"""


@pytest.mark.host_only("the adaptive bypass is for host launches; GPU launches are always recorded")
def test_small_host_launches_run_at_once_while_recording_costs_more():
    """The bypass's cost signal: the first flush measures a recorded launch,
    a trial of 16 launches the same launches run at once; while recording
    costs more (here set, not timed), launches run at once, and they are
    recorded again once it does not. Values equal NumPy throughout."""
    r = _run(COST_PROGRAM, {"PK_FUSION_DISABLE": ""})
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split("\n")[-2] == "[8, 0, 0, 0, 8]", r.stdout


def test_identical_reductions_each_deliver_their_total():
    """Found by the fuzzer: two identical reductions fused side by side were
    taken for a run of repeats (which delivers no totals)."""
    def prog():
        x, = fresh(np.arange(N))
        a = pk.parallel_reduce(N, total, v=x)
        b = pk.parallel_reduce(N, total, v=x)
        return {"t": np.array([float(a), float(b)])}

    eager, lazy, reports = both(prog)
    assert_same(eager, lazy)
    assert lazy["t"].tolist() == [float(np.arange(N).sum())] * 2


@pk.workunit
def take_next(i, n, x, y):
    if i + 1 < n:
        y[i] = x[i + 1]


def test_a_temporary_written_under_a_condition_keeps_its_old_elements():
    """Found by the fuzzer: a View that dies before the flush, written by its first
    kernel only where a condition holds, was kept in registers, so the elements
    the condition skipped lost their old values."""
    def prog():
        x, y, out = fresh(np.arange(N) + 1.0, np.full(N, 7.0), np.zeros(N))
        pk.parallel_for(N, take_next, n=N, x=x, y=y)   # y[N-1] keeps 7
        pk.parallel_for(N, double, v=y, w=out)
        del y                                            # dies unread by the host
        return {"out": np.asarray(out).copy()}

    eager, lazy, reports = both(prog)
    assert_same(eager, lazy)
    want = 2.0 * np.append(np.arange(N)[1:] + 1.0, 7.0)
    assert lazy["out"].tolist() == want.tolist()


def test_explain_states_alike_facts_once(fused):
    # Eight launches of one call site: one line with their count, the rule
    # counted, dead temporaries as a range; verbose lists every launch.
    x = pk.View([N], pk.double)
    pk.parallel_for(N, fill, v=x, x=1.0)
    ys = [x]
    for _ in range(8):
        y = pk.View([N], pk.double)
        pk.parallel_for(N, mul2, x=ys[-1], y=y)
        ys.append(y)
    assert float(pk.parallel_reduce(N, dot, x=ys[-1], y=ys[-1])) == N * 256.0 ** 2
    brief, verbose = pk.explain(show=False), pk.explain(show=False, verbose=True)
    site = [line for line in brief.splitlines() if "mul2 at" in line and "deferred" not in line]
    assert len(site) == 1 and "(x7)" in site[0] and "[vertical] x7" in site[0], brief
    deferred = [line for line in brief.splitlines() if "mul2 at" in line and "deferred" in line]
    assert len(deferred) == 1 and "#1-#8" in deferred[0], brief
    listed = [line for line in verbose.splitlines() if "mul2 at" in line and "deferred" not in line]
    assert len(listed) == 7 and all(line.endswith("[vertical]") for line in listed), verbose
    assert len(brief.splitlines()) < len(verbose.splitlines())


@pk.functor
class Redefined:
    def __init__(self, a):
        self.a: pk.View1D[pk.double] = a

    @pk.function
    def value(self, j: int) -> float:
        return 1.0 * j

    @pk.workunit
    def fill(self, i: int):
        self.a[i] = self.value(i)


def test_a_method_replaced_after_a_launch_is_the_one_the_next_launch_runs():
    """A functor class's @pk.function methods are looked up once per class;
    one replaced on the class later (as a notebook cell redefines it) must be
    the one later launches translate, not the one first found."""

    def prog():
        (a,) = fresh(0.0)
        m = Redefined(a)
        pk.parallel_for(N, m.fill)
        first = np.asarray(a).copy()
        original = Redefined.value

        def value(self, j: int) -> float:
            return 2.0 * j + 1.0

        Redefined.value = pk.function(value)
        try:
            pk.parallel_for(N, m.fill)
            second = np.asarray(a).copy()
        finally:
            Redefined.value = original
        return {"first": first, "second": second}

    eager, lazy, _ = both(prog)
    assert_same(eager, lazy)
    assert np.array_equal(lazy["first"], np.arange(N, dtype=float))
    assert np.array_equal(lazy["second"], 2.0 * np.arange(N) + 1.0)


@pk.functor
class Overriding(Redefined):
    @pk.function
    def value(self, j: int) -> float:
        return 3.0 * j - 2.0


def test_a_subclass_that_overrides_a_method_runs_its_own():
    """The inherited workunit `fill` calls `self.value`: launched on an
    instance of the subclass it must run the subclass's override, after a
    launch on the base class compiled it with the base's."""

    def prog():
        a, b = fresh(0.0, 0.0)
        pk.parallel_for(N, Redefined(a).fill)
        pk.parallel_for(N, Overriding(b).fill)
        return {"a": np.asarray(a).copy(), "b": np.asarray(b).copy()}

    eager, lazy, _ = both(prog)
    assert_same(eager, lazy)
    assert np.array_equal(lazy["a"], np.arange(N, dtype=float))
    assert np.array_equal(lazy["b"], 3.0 * np.arange(N) - 2.0)


OFFSET = 1.0  # read only by Shifted.value, a subclass's override


@pk.functor
class Shifted(Redefined):
    @pk.function
    def value(self, j: int) -> float:
        return 1.0 * j + OFFSET


def test_a_number_only_a_subclass_override_reads_is_watched():
    """Module numbers a kernel compiles in are watched per launch (rebinding
    one takes effect at the next launch). The inherited `fill` was first
    launched for the base class, whose method reads no OFFSET: the subclass's
    launches must still see OFFSET rebound."""

    def prog():
        global OFFSET
        a, b = fresh(0.0, 0.0)
        pk.parallel_for(N, Redefined(a).fill)
        pk.parallel_for(N, Shifted(b).fill)
        first = np.asarray(b).copy()
        saved, OFFSET = OFFSET, 10.0
        try:
            pk.parallel_for(N, Shifted(b).fill)
            second = np.asarray(b).copy()
        finally:
            OFFSET = saved
        return {"a": np.asarray(a).copy(), "first": first, "second": second}

    eager, lazy, _ = both(prog)
    assert_same(eager, lazy)
    assert np.array_equal(lazy["a"], np.arange(N, dtype=float))
    assert np.array_equal(lazy["first"], np.arange(N) + 1.0)
    assert np.array_equal(lazy["second"], np.arange(N) + 10.0)
