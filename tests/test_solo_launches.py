"""Lazy mode and launches that always flush alone (src/pipeline/memo/slots.rs): past
the cost signal's size (or on the GPU; tiny ones: test_bypass_schedule.py), a launch whose
last three flushes ran it by itself runs at once while nothing is pending, and a probe every 64th launch
records it again, so fusion comes back once a consumer follows it. Values
equal NumPy's throughout."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pykokkos as pk
from test_bypass_schedule import settle_alone
from test_fusion import mul2, scale_by, total

pytestmark = pytest.mark.eager_only  # each test switches lazy mode on itself

N = 1 << 15  # past the cost signal's 2^14 items
HALVES = (2.0, 0.5)  # exact in binary: the values stay exact, so == holds


def test_a_launch_read_after_every_run_runs_at_once_after_three_flushes_alone(lazy):
    v = pk.View([N], pk.double)
    v.fill(1.0)
    pk.flush()  # on the GPU the fill is a launch of its own
    ref = np.ones(N)
    pending = []
    for k in range(8):
        pk.parallel_for(N, scale_by, v=v, a=HALVES[k % 2])
        ref *= HALVES[k % 2]
        pending.append(pk.pending())
        assert v[k] == ref[k]  # an element read: a flush of that launch alone
    assert pending == [1, 1, 1, 0, 0, 0, 0, 0]
    np.testing.assert_array_equal(np.asarray(v), ref)


def test_a_probe_gives_fusion_back_once_a_consumer_follows(lazy):
    v, out = pk.View([N], pk.double), pk.View([N], pk.double)
    v.fill(1.0)
    ref = np.ones(N)
    settle_alone(v, ref, 4)
    seen = []
    for k in range(100):
        pk.parallel_for(N, scale_by, v=v, a=HALVES[k % 2])
        ref *= HALVES[k % 2]
        seen.append(pk.pending())
        pk.parallel_for(N, mul2, x=v, y=out)
        assert float(pk.parallel_reduce(N, total, v=out)) == 2.0 * ref.sum()
    # Run at once until the probe, recorded (and fused with its consumer,
    # so no longer alone) from then on; deferral may keep it pending too.
    first = next(k for k, n in enumerate(seen) if n > 0)
    assert 0 < first <= 64 and min(seen[first:]) >= 1, seen
    assert "scale_by" in pk.explain(show=False) and "fused" in pk.explain(show=False)
    np.testing.assert_array_equal(np.asarray(v), ref)
    np.testing.assert_array_equal(np.asarray(out), 2.0 * ref)


PROGRAM = """
import numpy as np, pykokkos as pk
from test_solo_launches import N
from test_fusion import scale_by
v = pk.View([N], pk.double)
v.fill(1.0)
pk.flush()  # on the GPU the fill is a launch of its own
seen = []
for k in range(6):
    pk.parallel_for(N, scale_by, v=v, a=2.0)
    seen.append(pk.pending())
    assert v[k] == 2.0 ** (k + 1)
print(seen)
"""


def test_with_the_adaptive_choices_off_every_launch_is_recorded():
    """`PK_FUSION_DISABLE=adaptive` (read once per process) keeps recording."""
    env = {**os.environ, "PK_FUSE": "1", "PK_FUSION_DISABLE": "adaptive",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split()[-6:] == ["[1,", "1,", "1,", "1,", "1,", "1]"], r.stdout


def test_a_solo_launch_waits_for_another_threads_flush(tmp_path, monkeypatch):
    """Found in review: while another thread's flush builds the kernel of a
    region it took out of the DAG, nothing counts as pending; a launch that
    reads that region's output must wait for it, not run at once."""
    import importlib
    import random
    import threading
    import time

    nonce = random.randint(1, 10**9)  # a new fused kernel: its build is the window
    (tmp_path / f"solo_wu_{nonce}.py").write_text(f"""
import pykokkos as pk

@pk.workunit
def K(i, x, y):
    y[i] = x[i]

@pk.workunit
def W(i, x, a):
    x[i] = a + 0.0 * {nonce}

@pk.workunit
def W2(i, x, z):
    z[i] = x[i] * 2.0
""")
    monkeypatch.syspath_prepend(str(tmp_path))
    m = importlib.import_module(f"solo_wu_{nonce}")
    pk._native.set_lazy(True)
    try:
        x, y, z = (pk.View([N], pk.double) for _ in range(3))
        for _ in range(4):  # K flushes alone three times: then it runs at once
            pk.parallel_for(N, m.K, x=x, y=y)
            assert y[0] == 0.0
        pk.parallel_for(N, m.W, x=x, a=0.0)  # W and W2 built alone first
        assert x[0] == 0.0
        pk.parallel_for(N, m.W2, x=x, z=z)
        assert z[0] == 0.0
        launched, got = threading.Event(), {}

        def writer():
            pk.parallel_for(N, m.W, x=x, a=5.0)
            pk.parallel_for(N, m.W2, x=x, z=z)
            launched.set()
            pk.flush()  # W + W2: one fused kernel, built now

        def reader():
            launched.wait()
            time.sleep(0.1)  # inside the writer's build
            pk.parallel_for(N, m.K, x=x, y=y)  # after W in program order
            got["y"] = float(y[0])

        threads = [threading.Thread(target=f) for f in (writer, reader)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert got["y"] == 5.0
        np.testing.assert_array_equal(np.asarray(y), np.full(N, 5.0))
    finally:
        pk.flush()
        pk._native.set_lazy(False)
