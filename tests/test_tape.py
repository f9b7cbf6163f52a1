"""Lazy mode and learned flushes (src/pipeline/memo/hold.rs): once a flush of a few
small host launches ran as one fused kernel, the same launches arriving again
with nothing pending are held, and the last one runs that kernel at once.
Anything that does not continue them (a host access, another launch, a flush,
another thread) gets the held launches recorded first. Values equal NumPy's
(and eager mode's) throughout."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykokkos as pk
from test_fusion import copy, mul2, scale_by, total

pytestmark = [
    pytest.mark.eager_only,  # each test switches lazy mode on itself
    pytest.mark.host_only("learned flushes are for host launches; GPU launches are recorded"),
]

N = 100  # under the adaptive bypass's size: these launches are the tape's
HALVES = (2.0, 0.5)  # exact in binary: the values stay exact, so == holds


def fresh(value=1.0):
    v = pk.View([N], pk.double)
    np.asarray(v)[:] = value
    return v


def step(v, ref, k):
    """One iteration of the loop the tape is for: a map, its sum read."""
    pk.parallel_for(N, scale_by, v=v, a=HALVES[k % 2])
    ref *= HALVES[k % 2]
    assert float(pk.parallel_reduce(N, total, v=v)) == ref.sum()


def learned(v, ref):
    """Runs the loop until the tape has learned it (its first flush)."""
    runs = pk._native.tape_runs()
    for k in range(4):
        step(v, ref, k)
    assert pk._native.tape_runs() > runs, "the loop was not learned"


def test_a_read_every_iteration_loop_runs_one_kernel_per_iteration(lazy):
    v, ref = fresh(), np.ones(N)
    runs = pk._native.tape_runs()
    for k in range(50):
        step(v, ref, k)
    # Learned from the first flush: every later iteration ran from the tape.
    assert pk._native.tape_runs() - runs >= 48
    np.testing.assert_array_equal(np.asarray(v), ref)


def test_a_held_launch_is_pending_and_a_host_read_sees_it(lazy):
    v, ref = fresh(), np.ones(N)
    learned(v, ref)
    pk.parallel_for(N, scale_by, v=v, a=2.0)
    ref *= 2.0
    assert pk.pending() == 1  # held, so pending
    assert v[3] == ref[3]  # the read ran it first
    assert pk.pending() == 0
    assert float(pk.parallel_reduce(N, total, v=v)) == ref.sum()
    learned(v, ref)  # and the loop is taken up again
    np.testing.assert_array_equal(np.asarray(v), ref)


def test_a_launch_that_does_not_continue_the_loop_comes_after_the_held_one(lazy):
    v, out, ref = fresh(), fresh(0.0), np.ones(N)
    learned(v, ref)
    pk.parallel_for(N, scale_by, v=v, a=2.0)  # held
    ref *= 2.0
    pk.parallel_for(N, mul2, x=v, y=out)  # another kernel: the held one is recorded first
    assert float(pk.parallel_reduce(N, total, v=out)) == 2.0 * ref.sum()
    np.testing.assert_array_equal(np.asarray(out), 2.0 * ref)
    assert pk.pending() == 0  # nothing left behind


def test_the_dag_shows_a_held_launch(lazy):
    v, ref = fresh(), np.ones(N)
    learned(v, ref)
    pk.parallel_for(N, scale_by, v=v, a=0.5)
    ref *= 0.5
    assert '"scale_by"' in pk._native.graph_json()  # spilled into the DAG to be shown
    pk.flush()
    np.testing.assert_array_equal(np.asarray(v), ref)


def test_other_views_and_scalars_take_the_learned_kernel(lazy):
    """Allocations are matched by first use, not identity: the loop over
    another view of the same shape is the same program."""
    v, w, ref_v, ref_w = fresh(), fresh(3.0), np.ones(N), np.full(N, 3.0)
    learned(v, ref_v)
    runs = pk._native.tape_runs()
    for k in range(6):
        step(w, ref_w, k)
    assert pk._native.tape_runs() - runs == 6
    np.testing.assert_array_equal(np.asarray(v), ref_v)
    np.testing.assert_array_equal(np.asarray(w), ref_w)


@pk.workunit
def dot(i, acc, x, y):
    acc += x[i] * y[i]


def test_a_different_aliasing_is_not_the_learned_program(lazy):
    """Learned as a = s * a, then the dot of a and b, over two views, then run
    with b = a: the kernel built for distinct views (which reads b[i] from
    memory while a[i]'s new value waits in a register) must not run."""
    a, b = fresh(), fresh(3.0)
    ra, rb = np.arange(N, dtype=float), np.full(N, 3.0)
    np.asarray(a)[:] = ra
    for k in range(4):
        pk.parallel_for(N, scale_by, v=a, a=HALVES[k % 2])
        ra *= HALVES[k % 2]
        assert float(pk.parallel_reduce(N, dot, x=a, y=b)) == (ra * rb).sum()
    runs = pk._native.tape_runs()
    assert runs > 0, "not learned"
    for k in range(3):
        pk.parallel_for(N, scale_by, v=a, a=HALVES[k % 2])
        ra *= HALVES[k % 2]
        assert float(pk.parallel_reduce(N, dot, x=a, y=a)) == (ra * ra).sum()
        if k == 0:  # not the learned program (that one is learned in turn)
            assert pk._native.tape_runs() == runs
    np.testing.assert_array_equal(np.asarray(a), ra)


@pk.workunit
def add_into(i, dst, src):
    dst[i] = dst[i] + src[i]


def chain2(x, out, keep=None):
    """out += 2x through a temporary that dies here (unless kept), so the
    fused kernel keeps it in registers (out is updated in place: no launch
    can be deferred)."""
    t = pk.View([N], pk.double)
    pk.parallel_for(N, mul2, x=x, y=t)
    pk.parallel_for(N, add_into, dst=out, src=t)
    if keep is not None:
        keep.append(t)


def test_a_dead_temporary_stays_in_registers_and_a_kept_one_is_written(lazy):
    x, out = fresh(), fresh(0.0)
    rx, rout = np.arange(N, dtype=float), np.zeros(N)
    np.asarray(x)[:] = rx
    runs = pk._native.tape_runs()
    for _ in range(8):
        chain2(x, out)
        rout += 2.0 * rx
        assert float(pk.parallel_reduce(N, total, v=out)) == rout.sum()
    assert pk._native.tape_runs() - runs >= 6  # learned with its temporary dead
    kept = []
    chain2(x, out, kept)  # alive at the reduction: not the learned program
    rout += 2.0 * rx
    assert float(pk.parallel_reduce(N, total, v=out)) == rout.sum()
    np.testing.assert_array_equal(np.asarray(kept[0]), 2.0 * rx)  # so it was written
    np.testing.assert_array_equal(np.asarray(out), rout)


def test_a_temporary_alive_at_the_reduction_but_dead_at_the_read(lazy):
    """The total is read after the function that made the temporary returned:
    the flush sees it dead, the next iteration's reduction alive. Such a
    loop is not replayed (its program could never match); values stay right."""
    def step(x, out):
        t = pk.View([N], pk.double)
        pk.parallel_for(N, mul2, x=x, y=t)
        pk.parallel_for(N, add_into, dst=out, src=t)
        return pk.parallel_reduce(N, total, v=out)

    x, out = fresh(), fresh(0.0)
    rx, rout = np.arange(N, dtype=float), np.zeros(N)
    np.asarray(x)[:] = rx
    runs = pk._native.tape_runs()
    for _ in range(12):
        got = float(step(x, out))
        rout += 2.0 * rx
        assert got == rout.sum()
    assert pk._native.tape_runs() == runs
    np.testing.assert_array_equal(np.asarray(out), rout)


def test_another_range_is_not_the_learned_program(lazy):
    v, ref = fresh(), np.ones(N)
    learned(v, ref)
    runs = pk._native.tape_runs()
    pk.parallel_for(N // 2, scale_by, v=v, a=2.0)
    ref[: N // 2] *= 2.0
    assert float(pk.parallel_reduce(N // 2, total, v=v)) == ref[: N // 2].sum()
    assert pk._native.tape_runs() == runs
    np.testing.assert_array_equal(np.asarray(v), ref)


def test_an_exception_between_the_launches_loses_nothing(lazy):
    v, ref = fresh(), np.ones(N)
    learned(v, ref)
    with pytest.raises(ZeroDivisionError):
        pk.parallel_for(N, scale_by, v=v, a=2.0)  # held
        ref *= 2.0
        1 / 0
    pk.flush()
    np.testing.assert_array_equal(np.asarray(v), ref)


def test_switched_off_the_loop_runs_as_before(lazy):
    v, ref = fresh(), np.ones(N)
    was = pk._native.set_tape(False)
    try:
        runs = pk._native.tape_runs()
        for k in range(20):
            step(v, ref, k)
        assert pk._native.tape_runs() == runs
    finally:
        pk._native.set_tape(was)
    np.testing.assert_array_equal(np.asarray(v), ref)


def test_threads_running_the_loop_on_their_own_views(lazy):
    """Each thread's launches may continue or spill what another thread's
    left on the tape: every sum and every view stays right."""
    views = [fresh(float(t + 1)) for t in range(3)]
    errors = []

    def loop(v, start):
        ref = np.full(N, start)
        try:
            for k in range(200):
                step(v, ref, k)
            np.testing.assert_array_equal(np.asarray(v), ref)
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=loop, args=(v, float(t + 1))) for t, v in enumerate(views)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


# Differential: random loop bodies over two views, each iteration's read
# checked against NumPy. A body repeats, so the tape learns and replays it.
OPS = ("scale", "copy", "mul2")


def _apply(op, views, refs, a):
    src, dst = op[1], op[2]
    if op[0] == "scale":
        pk.parallel_for(N, scale_by, v=views[dst], a=a)
        refs[dst] *= a
    elif op[0] == "copy":
        pk.parallel_for(N, copy, dst=views[dst], src=views[src])
        refs[dst] = refs[src].copy()
    else:
        pk.parallel_for(N, mul2, x=views[src], y=views[dst])
        refs[dst] = 2.0 * refs[src]


# CI runs one fixed set of 12; `make fuzz` draws 300 new loops every run.
@settings(max_examples=int(os.environ.get("PK_FUZZ_TAPE_EXAMPLES", "12")), deadline=None,
          derandomize=os.environ.get("PK_FUZZ_RANDOM") != "1")
@given(body=st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 1), st.integers(0, 1)), min_size=1,
                     max_size=3),
       read=st.sampled_from(("sum", "element", "dot")), which=st.integers(0, 1), other=st.integers(0, 1))
def test_random_loops_equal_numpy(body, read, which, other):
    pk._native.set_lazy(True)
    try:
        views = [fresh(1.0), fresh(0.5)]
        refs = [np.ones(N), np.full(N, 0.5)]
        for k in range(10):  # the first flushes teach the tape, the rest replay
            for op in body:
                _apply(op, views, refs, HALVES[k % 2])
            if read == "sum":
                assert float(pk.parallel_reduce(N, total, v=views[which])) == refs[which].sum()
            elif read == "dot":
                got = float(pk.parallel_reduce(N, dot, x=views[which], y=views[other]))
                assert got == (refs[which] * refs[other]).sum()
            else:
                assert views[which][k] == refs[which][k]
        for v, ref in zip(views, refs):
            np.testing.assert_array_equal(np.asarray(v), ref)
    finally:
        pk.flush()
        pk._native.set_lazy(False)


COST_AWARE = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import numpy as np, pykokkos as pk
from test_tape import fresh, step, N
(v,) = (fresh(),)
ref = np.ones(N)
step(v, ref, 0)  # kernels built
pk._native.set_lazy(True)
pk._native.adaptive_costs((1e9, 1e6))  # recording costs 1000x: run at once from the start
for k in range(400):
    step(v, ref, k)
print(pk._native.tape_runs())
"""


def test_the_bypass_learns_the_loop_at_its_first_trial():
    """With the cost signal saying recording does not pay, the launches run
    at once from the start, and the first trial of recording (due at a
    reduction, so it starts with the next launch) is one whole iteration:
    the tape learns it and runs it from then on."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(COST_AWARE)], capture_output=True, text=True,
                       env={**os.environ, "PK_FUSE": "0", "PK_FUSION_DISABLE": ""}, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    runs = int(r.stdout.split()[-1])
    # The trial is due after 256 launches (128 iterations); the rest replay.
    assert 200 <= runs < 400, runs


MEMO_LOOP = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import numpy as np, pykokkos as pk
from test_tape import fresh, step, N
v, ref = fresh(), np.ones(N)
step(v, ref, 0)  # kernels built
pk._native.set_lazy(True)
replays, runs = pk._native.plan_replays(), pk._native.tape_runs()
for k in range(200):
    step(v, ref, k)
print(pk._native.tape_runs() - runs, pk._native.plan_replays() - replays)
"""


@pytest.mark.parametrize("disabled", ["", "memo"])
def test_memo_switches_off_learned_flushes_and_plans(disabled):
    """`PK_FUSION_DISABLE=memo` (read once per process) switches the whole memo
    off: no learned flush runs and no plan is replayed; with it on, the same
    loop runs from learned flushes. Values equal NumPy's either way (`step`)."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(MEMO_LOOP)], capture_output=True, text=True,
                       env={**os.environ, "PK_FUSE": "0", "PK_FUSION_DISABLE": disabled}, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    runs, replays = map(int, r.stdout.split()[-2:])
    if disabled:
        assert (runs, replays) == (0, 0)
    else:
        assert runs >= 190, runs
