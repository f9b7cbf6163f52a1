"""The plan cache: a flush of the same shape as an earlier one replays that
flush's plan. The suite runs with PK_VERIFY=1, so every replay here is also
planned afresh inside the runtime and must agree (regions, registers,
deferred launches, the report); the tests check the values against NumPy,
that replays happened, and that reports equal those of a run without the
cache (PK_FUSION_DISABLE=plan_cache)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pykokkos as pk

pytestmark = pytest.mark.eager_only  # each test switches lazy mode itself

N = 256


@pk.workunit
def step(i, a: float, x, y):
    y[i] = a * x[i] + 1.0


@pk.workunit
def total(i, acc, t):
    acc += t[i]


def chain(k, x, out, a):
    """k maps x -> ... -> out; the intermediates die at once."""
    cur = x
    for j in range(k):
        nxt = out if j == k - 1 else pk.View([N], pk.double)
        pk.parallel_for(N, step, a=a, x=cur, y=nxt)
        cur = nxt


def np_chain(k, x, a):
    for _ in range(k):
        x = a * x + 1.0
    return x


def test_a_loop_replays_its_plan_and_matches_numpy(lazy):
    ref = np.linspace(-1.0, 1.0, N)
    x = pk.View([N], pk.double)
    x[:] = ref
    live = pk.View([N], pk.double)
    before = pk._native.plan_replays()
    for it in range(12):
        a = 1.0 + it / 16  # a new scalar every iteration: not a planning fact
        chain(5, x, live, a)
        got = float(pk.parallel_reduce(N, total, t=live))
        assert got == pytest.approx(np_chain(5, ref, a).sum(), rel=1e-12)
    assert pk._native.plan_replays() - before >= 8
    # The last chain stayed pending (live is referenced, not demanded): reading it runs it.
    assert np.allclose(np.asarray(live), np_chain(5, ref, 1.0 + 11 / 16), rtol=1e-13)


def test_changing_liveness_and_demand_change_the_plan(lazy):
    """Iterations alternate between shapes whose plans differ: the live
    temporary read on the host or not, held or dropped, a fence or a read.
    A replay of the wrong shape would leave a value unwritten or stale."""
    ref = np.arange(N, dtype=np.float64) / N
    x = pk.View([N], pk.double)
    x[:] = ref
    before = pk._native.plan_replays()
    for it in range(18):
        a = 0.5 + (it % 4) / 8
        live = pk.View([N], pk.double)
        chain(3, x, live, a)
        want = np_chain(3, ref, a)
        if it % 3 == 0:
            got = float(pk.parallel_reduce(N, total, t=live))
            assert got == pytest.approx(want.sum(), rel=1e-12)
            assert np.allclose(np.asarray(live), want, rtol=1e-13)
        elif it % 3 == 1:
            got = float(pk.parallel_reduce(N, total, t=live))
            assert got == pytest.approx(want.sum(), rel=1e-12)
            del live  # the deferred chain dies unread
        else:
            pk.fence()
            assert np.allclose(np.asarray(live), want, rtol=1e-13)
        # x itself changes every third iteration: a host write between flushes.
        if it % 3 == 2:
            ref = ref + 1.0
            x[:] = ref
    assert pk._native.plan_replays() - before >= 6


def test_rewritten_outputs_are_dropped_by_a_replay_too(lazy):
    """Each iteration rewrites what the previous one left pending: the
    overwritten pass drops it, in replays as in fresh plans."""
    ref = np.linspace(0.0, 2.0, N)
    x = pk.View([N], pk.double)
    x[:] = ref
    t = pk.View([N], pk.double)
    before = pk._native.plan_replays()
    for it in range(8):
        a = 2.0 + it
        chain(3, x, t, a)
        got = float(pk.parallel_reduce(N, total, t=t))
        assert got == pytest.approx(np_chain(3, ref, a).sum(), rel=1e-12)
    text = "".join(pk._native.explain_history())
    assert text.count("dropped unrun: step") >= 6, text
    assert pk._native.plan_replays() - before >= 5
    assert np.allclose(np.asarray(t), np_chain(3, ref, 9.0), rtol=1e-13)


def test_a_replayed_report_names_the_call_sites_of_its_own_flush(lazy):
    """Flushes of one shape from two places in a loop: a flush whose plan and
    call sites repeat the last one keeps its report again, and one from the
    other place gets its own, naming its own lines."""
    import inspect

    x, t = pk.View([N], pk.double), pk.View([N], pk.double)
    x[:] = 1.0
    pk._native.explain_history()
    here = inspect.currentframe().f_lineno
    for _ in range(3):
        for _ in range(2):
            chain(4, x, t, 2.0)  # a shape of its own (the cache outlives tests)
            first = float(pk.parallel_reduce(N, total, t=t))  # here + 4
        chain(4, x, t, 2.0)
        second = float(pk.parallel_reduce(N, total, t=t))  # here + 6
        assert first == second == pytest.approx(N * 31.0)
    reports = pk._native.explain_history()
    site = [f"{__file__}:{here + 4}" in r for r in reports]
    assert site == [True, True, False] * 3, reports
    assert all(f"{__file__}:{here + 6}" in r for r, s in zip(reports, site) if not s)


SCRIPT = """
import numpy as np
import pykokkos as pk

@pk.workunit
def step(i, a: float, x, y):
    y[i] = a * x[i] + 1.0

@pk.workunit
def total(i, acc, t):
    acc += t[i]

N = 256
pk._native.set_lazy(True)
x = pk.View([N], pk.double)
x[:] = np.linspace(0.0, 1.0, N)
live = pk.View([N], pk.double)
out = []
for it in range(6):
    cur = x
    for j in range(4):
        nxt = live if j == 3 else pk.View([N], pk.double)
        pk.parallel_for(N, step, a=1.5, x=cur, y=nxt)
        cur = nxt
    out.append(float(pk.parallel_reduce(N, total, t=live)))
    if it == 4:
        out.append(float(np.asarray(live).sum()))
pk.flush()
for text in pk._native.explain_history():
    print(text, end="")
print("TOTALS", out)
print("REPLAYS", pk._native.plan_replays())
"""


def test_reports_of_replays_equal_reports_of_fresh_plans(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text(textwrap.dedent(SCRIPT))
    outs = {}
    for cache in ("on", "off"):
        env = dict(os.environ)
        disabled = [d for d in env.get("PK_FUSION_DISABLE", "").split(",") if d]
        env["PK_FUSION_DISABLE"] = ",".join(disabled + (["plan_cache"] if cache == "off" else []))
        env.pop("PK_FUSE", None)
        r = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True,
                           timeout=240, cwd=str(tmp_path))
        assert r.returncode == 0, r.stderr
        outs[cache] = r.stdout
    replays = {c: int(o.rsplit("REPLAYS", 1)[1]) for c, o in outs.items()}
    assert replays["off"] == 0 and replays["on"] >= 3, replays
    on, off = (o.rsplit("REPLAYS", 1)[0] for o in (outs["on"], outs["off"]))
    assert on == off
    assert "deferred: writes" in on and "dropped unrun" in on, on


def test_a_replayed_region_keeps_the_names_its_launches_have_now(lazy, tmp_path):
    """The label of a fused kernel (errors, traces) is not part of a flush's
    shape: a launch named otherwise in a replayed shape gets its own label."""
    import json

    ref = np.linspace(0.0, 1.0, N)
    x = pk.View([N], pk.double)
    x[:] = ref
    live = pk.View([N], pk.double)
    names = [None, None, None, "named_sum", "named_sum", None]
    with pk.trace.record(tmp_path / "t.jsonl"):
        for it, name in enumerate(names):
            chain(2, x, live, 1.5)
            args = (N, total) if name is None else (name, N, total)
            got = float(pk.parallel_reduce(*args, t=live))
            assert got == pytest.approx(np_chain(2, ref, 1.5).sum(), rel=1e-12)
    events = [json.loads(line) for line in open(tmp_path / "t.jsonl")]
    labels = [e["name"] for e in events if e.get("ev") == "kernel" and e.get("kind") == "region"]
    want = [f"fused(step+step+{n or 'total'})" for n in names]
    # (Stopping the trace runs the last, deferred chain: one more region.)
    assert labels[: len(want)] == want, labels
    replayed = [e["replayed"] for e in events if e.get("ev") == "flush"]
    assert not replayed[0] and sum(replayed) >= 3, replayed
