"""The schedule of launches that run at once (src/pipeline/alone.rs), for
tiny host launches as for large ones: a launch its last three flushes ran by
itself runs at once while nothing is pending, and a probe (recorded again)
comes every PERIOD launches of that kernel: 64, doubling while probes find
it still alone, up to 1024. Values equal NumPy's throughout."""
from __future__ import annotations

import numpy as np
import pytest

import pykokkos as pk
from test_fusion import scale_by

pytestmark = [
    pytest.mark.eager_only,  # each test switches lazy mode on itself
    pytest.mark.host_only("GPU launches are covered by test_solo_launches.py's large ones"),
]

N = 100  # tiny: under the cost signal's 2^14 items
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
    # Three flushes alone, then at once, with a probe (recorded) at the 64th
    # launch, then 128, 256, 512 and 1024 launches on.
    assert recorded[:3] == [0, 1, 2], recorded
    assert np.diff(recorded[2:]).tolist() == [64, 128, 256, 512, 1024], recorded
    np.testing.assert_array_equal(np.asarray(v), ref)


def test_a_consumer_that_follows_gives_tiny_launches_fusion_back(lazy):
    """Once the program reads after longer chains, the next probe records a
    whole chain (launches after a probe are recorded until the flush), which
    fuses, and from then on each chain is fused: recorded, or run by the tape
    (test_tape.py) as the one kernel it learned."""
    v = pk.View([N], pk.double)
    v.fill(1.0)
    ref = np.ones(N)
    for k in range(8):  # alone: from the fourth on it runs at once
        pk.parallel_for(N, scale_by, v=v, a=HALVES[k % 2])
        ref *= HALVES[k % 2]
        assert v[k] == ref[k]
    assert pk.pending() == 0
    seen = []
    for k in range(100):
        runs = pk._native.tape_runs()
        for a in HALVES * 2:  # 4 launches, then a read
            pk.parallel_for(N, scale_by, v=v, a=a)
        seen.append("fused" if pk.pending() == 4 or pk._native.tape_runs() > runs else pk.pending())
        np.testing.assert_array_equal(np.asarray(v), ref)
    first = seen.index("fused")
    assert first <= 64 // 4 and seen[first:] == ["fused"] * (100 - first), seen
