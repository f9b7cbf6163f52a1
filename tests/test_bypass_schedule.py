"""The adaptive bypass's schedule (src/pipeline/adaptive.rs). While tiny host
launches run at once, most of them take a countdown (`fast`) instead of the
whole choice; the countdown counts them in advance, so the schedule must be
the one the whole choice keeps: a recorded probe comes exactly PERIOD
launches after the last (256, doubling while probes find nothing to fuse;
plus the launches a due probe waits for a reduction to start after),
and the counters it keeps (bypassed launches, launches for the 1-in-128
timing) count each small launch once, whichever way it came. Values equal
NumPy's throughout."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pykokkos as pk
from test_fusion import scale_by

pytestmark = [
    pytest.mark.eager_only,  # each test switches lazy mode on itself
    pytest.mark.host_only("the adaptive bypass is for host launches; GPU launches are always recorded"),
]

N = 100  # under the bypass's 2^14 items
HALVES = (2.0, 0.5)  # exact in binary: the values stay exact, so == holds


def test_probes_come_every_period_and_the_period_doubles(lazy):
    v = pk.View([N], pk.double)
    v.fill(1.0)
    ref = np.ones(N)
    recorded = []
    for k in range(2100):
        pk.parallel_for(N, scale_by, v=v, a=HALVES[k % 2])
        ref *= HALVES[k % 2]
        if pk.pending():
            recorded.append(k)
        assert v[k % N] == ref[k % N]  # a read after every launch: flushes of one
    # Recorded while the average flush size falls, then run at once, with a
    # probe (recorded) due at the 256th launch, then 512 and 1024 launches
    # on. A due probe waits up to 64 launches for a reduction to start after
    # (so that it records whole iterations of a loop); this loop has none.
    gaps = np.diff(recorded).tolist()
    first_probe = next(j for j, g in enumerate(gaps) if g > 1)
    assert gaps[first_probe:] == [256 + 64, 512 + 64, 1024 + 64], recorded
    np.testing.assert_array_equal(np.asarray(v), ref)


COUNTS = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import numpy as np, pykokkos as pk
from test_fusion import scale_by
N, BIG = 100, 1 << 15
v, big, arr = pk.View([N], pk.double), pk.View([BIG], pk.double), np.ones(BIG)
v.fill(1.0)
big.fill(1.0)
for w in (v, big, arr):  # kernels built before lazy mode
    pk.parallel_for(w.shape[0], scale_by, v=w, a=1.0)
pk._native.set_lazy(True)
pk._native.adaptive_costs((1e9, 1e6))  # recording costs 1000x: run at once

def came():  # launches counted, less those counted in advance
    b, r, f = pk._native.adaptive_counts()
    return b - f, r - f

b0, r0 = came()
for k in range(200):  # under the first probe (at 256); some are timed
    pk.parallel_for(N, scale_by, v=v, a=1.0)
    assert pk.pending() == 0
b1, r1 = came()
print(b1 - b0, r1 - r0)
for k in range(10):  # a large launch on NumPy memory: runs now, not counted
    pk.parallel_for(N, scale_by, v=v, a=1.0)
    pk.parallel_for(BIG, scale_by, v=arr, a=1.0)
b2, r2 = came()
print(b2 - b1, r2 - r1)
pk.parallel_for(BIG, scale_by, v=big, a=1.0)  # recorded
assert pk.pending() == 1
pk.parallel_for(N, scale_by, v=v, a=1.0)  # a small launch with that pending
b3, r3 = came()
print(b3 - b2, r3 - r2, pk._native.adaptive_counts()[2], pk.pending())
assert (v[0], big[0], arr[0]) == (1.0, 1.0, 1.0)
"""


def test_the_counts_are_those_of_the_launches_that_came():
    """With the cost signal on (so launches are timed too), the bypass's
    counters, less what the fast path counted in advance, equal the small
    launches that came, whichever way they came: 200 at once; 10 more beside
    10 large NumPy launches (not counted: not small); one while a large
    launch is pending, which ends the fast path's advance (so a probe cannot
    come early) and runs now, past the pending one (other memory)."""
    env = {**os.environ, "PK_FUSE": "0", "PK_FUSION_DISABLE": ""}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(COUNTS)], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().split("\n")[-3:] == ["200 200", "10 10", "1 1 0 1"], r.stdout
