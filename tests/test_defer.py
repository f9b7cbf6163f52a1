"""Demand-driven flushes: a launch whose output is still referenced but not
demanded stays pending while its consumer takes its values in registers;
it runs only if the output is read later, never if the output dies; a later
launch that rewrites it all drops it. Each program is checked against NumPy
and its own eager run."""
from __future__ import annotations

import numpy as np
import pytest

import pykokkos as pk

pytestmark = pytest.mark.eager_only  # each test switches lazy mode itself

N = 1000


@pk.workunit
def affine(i, x, t, a: float):
    t[i] = a * x[i] + 1.0


@pk.workunit
def square(i, t, u):
    u[i] = t[i] * t[i]


@pk.workunit
def total(i, acc, t):
    acc += t[i]


@pk.workunit
def bump(i, x):
    x[i] = x[i] + 100.0


@pk.workunit
def shout(i, x, t):
    t[i] = x[i]
    if i == 0:
        pk.printf("shout\n")


def reports() -> str:
    return "".join(text for text, _ in pk._native.explain_history(plans=True))


def source() -> tuple[pk.View, np.ndarray]:
    ref = np.linspace(0.0, 1.0, N)
    x = pk.View([N], pk.double)
    x[:] = ref
    return x, ref


def test_an_undemanded_producer_stays_pending_and_runs_when_read(lazy):
    x, ref = source()
    t = pk.View([N], pk.double)
    pk.parallel_for(N, affine, x=x, t=t, a=2.0)
    r = float(pk.parallel_reduce(N, total, t=t))
    assert r == pytest.approx((2.0 * ref + 1.0).sum(), rel=1e-12)
    text = reports()
    assert "affine" in text and "deferred: writes #" in text, text
    assert pk.pending() == 1 and not t._is_allocated
    # Read later: it runs now, with the input it had.
    assert np.allclose(np.asarray(t), 2.0 * ref + 1.0)
    assert pk.pending() == 0


def test_a_producer_whose_output_dies_unread_never_runs(lazy):
    x, ref = source()

    def step():
        t = pk.View([N], pk.double)
        pk.parallel_for(N, affine, x=x, t=t, a=3.0)
        out = float(pk.parallel_reduce(N, total, t=t))
        assert not t._is_allocated  # computed in registers only
        return out

    for _ in range(3):
        assert step() == pytest.approx((3.0 * ref + 1.0).sum(), rel=1e-12)
        assert pk.pending() == 0  # t died: its producer was dropped


def test_a_later_write_to_the_producers_input_runs_it_first(lazy):
    x, ref = source()
    t = pk.View([N], pk.double)
    pk.parallel_for(N, affine, x=x, t=t, a=2.0)
    float(pk.parallel_reduce(N, total, t=t))
    pk.parallel_for(N, bump, x=x)  # write-after-read on x: affine runs before it
    assert np.allclose(np.asarray(x), ref + 100.0)
    assert np.allclose(np.asarray(t), 2.0 * ref + 1.0)


def test_a_producer_is_not_deferred_past_a_later_writer_of_its_input(lazy):
    x, ref = source()
    t = pk.View([N], pk.double)
    pk.parallel_for(N, affine, x=x, t=t, a=2.0)
    pk.parallel_for(N, square, t=t, u=x)  # reads t, then overwrites affine's input
    r = float(pk.parallel_reduce(N, total, t=x))
    assert r == pytest.approx(((2.0 * ref + 1.0) ** 2).sum(), rel=1e-12)
    assert np.allclose(np.asarray(t), 2.0 * ref + 1.0)


def test_a_host_write_to_the_producers_input_runs_it_first(lazy):
    x, ref = source()
    t = pk.View([N], pk.double)
    pk.parallel_for(N, affine, x=x, t=t, a=2.0)
    float(pk.parallel_reduce(N, total, t=t))
    x[0] = 1e6
    x[1:3] = [7.0, 8.0]
    assert np.allclose(np.asarray(t), 2.0 * ref + 1.0)


def test_a_chain_through_a_dead_temporary_stays_pending_whole(lazy):
    x, ref = source()
    t = pk.View([N], pk.double)
    u = pk.View([N], pk.double)
    pk.parallel_for(N, affine, x=x, t=u, a=0.5)
    pk.parallel_for(N, square, t=u, u=t)
    del u  # dead: kept in registers, so its writer must stay pending with t's
    r = float(pk.parallel_reduce(N, total, t=t))
    want = (0.5 * ref + 1.0) ** 2
    assert r == pytest.approx(want.sum(), rel=1e-12)
    assert pk.pending() == 2
    assert np.allclose(np.asarray(t), want)


def test_an_effect_runs_at_its_launch_so_its_reader_may_stay_deferred(lazy, capfd):
    x, ref = source()
    t = pk.View([N], pk.double)
    u = pk.View([N], pk.double)
    pk.parallel_for(N, shout, x=x, t=u)  # an effect (printf): runs at its launch
    assert pk.pending() == 0
    pk.parallel_for(N, square, t=u, u=t)
    del u  # stored by shout's own run: square may recompute t from it later
    r = float(pk.parallel_reduce(N, total, t=t))
    assert r == pytest.approx((ref**2).sum(), rel=1e-12)
    assert pk.pending() == (1 if pk._native.lazy_enabled() else 0)
    assert np.allclose(np.asarray(t), ref**2)
    assert pk.pending() == 0


def test_a_rewritten_output_drops_the_earlier_producer(lazy):
    x, ref = source()
    t = pk.View([N], pk.double)
    pk.parallel_for(N, affine, x=x, t=t, a=2.0)
    float(pk.parallel_reduce(N, total, t=t))
    pk.parallel_for(N, affine, x=x, t=t, a=5.0)  # rewrites all of t, unread
    assert np.allclose(np.asarray(t), 5.0 * ref + 1.0)
    assert "dropped unrun: affine" in reports()


def test_an_exact_repeat_of_a_pure_launch_is_absorbed(lazy):
    x, ref = source()
    t = pk.View([N], pk.double)
    pk.parallel_for(N, affine, x=x, t=t, a=2.0)
    pk.parallel_for(N, affine, x=x, t=t, a=2.0)
    assert pk.pending() == 1
    pk.parallel_for(N, bump, x=x)
    pk.parallel_for(N, bump, x=x)  # reads what it writes: both count
    assert np.allclose(np.asarray(t), 2.0 * ref + 1.0)
    assert np.allclose(np.asarray(x), ref + 200.0)


def test_the_cost_model_stops_deferring_what_is_always_read(lazy):
    x, ref = source()
    t = pk.View([N], pk.double)
    for k in range(5):
        pk.parallel_for(N, affine, x=x, t=t, a=float(k))
        r = float(pk.parallel_reduce(N, total, t=t))
        assert r == pytest.approx((k * ref + 1.0).sum(), rel=1e-12)
        assert np.allclose(np.asarray(t), k * ref + 1.0)  # read each time
    text = reports()
    assert "not deferred: its recent deferrals ran later" in text, text
    assert pk.pending() == 0


def test_launches_with_effects_are_never_deferred(lazy, capfd):
    x, ref = source()
    t = pk.View([N], pk.double)
    pk.parallel_for(N, shout, x=x, t=t)
    r = float(pk.parallel_reduce(N, total, t=t))
    assert r == pytest.approx(ref.sum(), rel=1e-12)
    assert pk.pending() == 0
    assert "deferred" not in reports()


def test_deferral_matches_eager_on_a_mixed_program():
    def program():
        x, _ = source()
        t, u = pk.View([N], pk.double), pk.View([N], pk.double)
        out = []
        for k in range(4):
            pk.parallel_for(N, affine, x=x, t=t, a=1.0 + k)
            pk.parallel_for(N, square, t=t, u=u)
            out.append(float(pk.parallel_reduce(N, total, t=u)))
            if k % 2:
                pk.parallel_for(N, bump, x=x)
            if k == 2:
                out.append(float(np.asarray(t).sum()))
        out.extend(np.asarray(u).tolist())
        return np.array(out)

    pk._native.set_lazy(False)
    eager = program()
    pk._native.set_lazy(True)
    try:
        fused = program()
        pk.flush()
    finally:
        pk._native.set_lazy(False)
    assert np.allclose(eager, fused, rtol=1e-12, atol=0)


def test_a_deferred_chain_rewritten_each_iteration_never_runs(lazy):
    x, ref = source()
    live = pk.View([N], pk.double)

    def chain(k=4):
        cur = x
        for j in range(k):
            nxt = live if j == k - 1 else pk.View([N], pk.double)
            pk.parallel_for(N, affine, x=cur, t=nxt, a=0.5)
            cur = nxt
        return float(pk.parallel_reduce(N, total, t=live))

    want = ref
    for _ in range(4):
        want = 0.5 * want + 1.0
    for _ in range(3):
        assert chain() == pytest.approx(want.sum(), rel=1e-12)
        assert pk.pending() == 4  # this iteration's chain only: the last one's was dropped
    assert "dropped unrun: affine" in reports()
    assert np.allclose(np.asarray(live), want)


def test_fence_waits_for_submitted_work_not_for_deferred_work(lazy):
    x, ref = source()
    t, u = pk.View([N], pk.double), pk.View([N], pk.double)
    pk.parallel_for(N, affine, x=x, t=t, a=2.0)
    float(pk.parallel_reduce(N, total, t=t))  # affine deferred
    pk.parallel_for(N, affine, x=x, t=u, a=4.0)  # submitted, not deferred
    pk.fence()
    assert pk.pending() == 1 and not t._is_allocated
    assert np.allclose(np.asarray(u), 4.0 * ref + 1.0) and pk.pending() == 1
    pk.flush()  # everything, the deferred one too
    assert pk.pending() == 0
    assert np.allclose(np.asarray(t), 2.0 * ref + 1.0)
    assert np.allclose(np.asarray(u), 4.0 * ref + 1.0)


def test_the_passes_switch_off_by_name(tmp_path):
    import os
    import subprocess
    import sys
    import textwrap

    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent("""
        import numpy as np, pykokkos as pk

        @pk.workunit
        def affine(i, x, t, a: float):
            t[i] = a * x[i] + 1.0

        @pk.workunit
        def total(i, acc, t):
            acc += t[i]

        x, t = pk.View([64], pk.double), pk.View([64], pk.double)
        x.fill(1.0)
        pk.parallel_for(64, affine, x=x, t=t, a=2.0)
        assert float(pk.parallel_reduce(64, total, t=t)) == 192.0
        print("pending", pk.pending())
    """))
    out = {}
    for off in ("", "defer"):
        env = dict(os.environ, PK_FUSE="1", PK_FUSION_DISABLE=f"{off},adaptive_cost")
        run = subprocess.run([sys.executable, str(prog)], env=env, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        out[off] = run.stdout.split()[-1]
    assert out == {"": "1", "defer": "0"}


def test_launches_whose_outputs_all_died_are_not_left_pending(lazy):
    x, ref = source()

    def step():
        t, u = pk.View([N], pk.double), pk.View([N], pk.double)
        pk.parallel_for(N, affine, x=x, t=t, a=2.0)
        pk.parallel_for(N, square, t=t, u=u)
        r = pk.parallel_reduce(N, total, t=u)
        del t, u  # every output dies before the sum is demanded
        return float(r)

    for _ in range(3):
        assert step() == pytest.approx(((2.0 * ref + 1.0) ** 2).sum(), rel=1e-12)
        assert pk.pending() == 0  # nothing is left to wait for a View that is gone


@pk.functor
class Squares:
    def __init__(self, n: int):
        self.x = pk.View([n], pk.double)
        self.scale = 0.5

    @pk.workunit
    def fill(self, i: int):
        self.x[i] = self.scale * i

    @pk.workunit
    def square_sum(self, i: int, acc: pk.Acc[pk.double]):
        acc += self.x[i] * self.x[i]


def test_a_member_view_of_a_functor_is_held_in_registers_too(lazy):
    """`self.x[i]` of a method workunit becomes the fused kernel's local as
    `x[i]` does (it once failed to compile, and the launches ran one by one)."""
    s = Squares(N)
    pk.parallel_for(N, s.fill)
    got = float(pk.parallel_reduce(N, s.square_sum))
    ref = 0.5 * np.arange(N)
    assert got == pytest.approx(np.sum(ref * ref), rel=1e-12)
    assert not s.x._is_allocated and pk.pending() == 1  # fill deferred, its values recomputed
    np.testing.assert_array_equal(np.asarray(s.x), ref)  # read: fill runs now
