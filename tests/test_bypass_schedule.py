"""The adaptive bypass's schedule (src/pipeline/adaptive.rs). While tiny host
launches run at once, most of them take a countdown (`fast`) instead of the
whole choice; the countdown counts them in advance, so the schedule must be
the one the whole choice keeps: a recorded probe comes exactly PERIOD
launches after the last (256, doubling while probes find nothing to fuse),
and with the cost signal on, launches run at once are still timed now and
then. Values equal NumPy's throughout."""
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
    # probe (recorded) at the 256th launch, then 512 and 1024 launches on.
    gaps = np.diff(recorded).tolist()
    first_probe = next(j for j, g in enumerate(gaps) if g > 1)
    assert gaps[first_probe:] == [256, 512, 1024], recorded
    np.testing.assert_array_equal(np.asarray(v), ref)


TIMED = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import numpy as np, pykokkos as pk
from test_fusion import scale_by
N = 100
v = pk.View([N], pk.double)
v.fill(1.0)
pk.parallel_for(N, scale_by, v=v, a=2.0)  # built before the costs are set
v[0]
pk._native.set_lazy(True)
pk._native.adaptive_costs((1e9, 1e6))  # recording costs 1000x: run at once
recorded = 0
for k in range(250):  # before the first probe (at 256): no flush, no trial
    pk.parallel_for(N, scale_by, v=v, a=(2.0, 0.5)[k % 2])
    recorded += pk.pending()
    assert v[k % N] == (4.0, 2.0)[k % 2]
lazy, eager = pk._native.adaptive_costs()
print(recorded, lazy, eager)
"""


def test_launches_run_at_once_are_still_timed_now_and_then():
    """250 launches run at once, none recorded (the first probe is due at
    256): one or two of them (one in 128) are timed, and their real cost
    (microseconds) is mixed into the 1 ms set (a quarter per sample)."""
    env = {**os.environ, "PK_FUSE": "0", "PK_FUSION_DISABLE": ""}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(TIMED)], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    recorded, lazy, eager = map(float, r.stdout.split())
    assert recorded == 0
    assert lazy == 1e9 and eager < 0.8e6, (lazy, eager)
