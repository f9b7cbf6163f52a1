"""The schedule of launches that run at once (src/pipeline/memo/slots.rs), for
tiny host launches as for large ones: a launch its last three flushes ran by
itself runs at once while nothing is pending, and a probe (recorded again)
comes every PERIOD launches of that kernel: 64, doubling while probes find
it still alone, up to 1024. Values equal NumPy's throughout."""
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
    pytest.mark.host_only("GPU launches are covered by test_solo_launches.py's large ones"),
]

N = 100  # tiny: under the cost signal's 2^14 items
HALVES = (2.0, 0.5)  # exact in binary: the values stay exact, so == holds


def settle_alone(v, ref, launches: int) -> None:
    """`launches` maps of `v`, each read at once (so each flushes alone):
    from the fourth on they run at once, and nothing stays pending."""
    for k in range(launches):
        pk.parallel_for(v.shape[0], scale_by, v=v, a=HALVES[k % 2])
        ref *= HALVES[k % 2]
        assert v[k] == ref[k]
    assert pk.pending() == 0


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
    settle_alone(v, ref, 8)
    seen = []
    for k in range(100):
        runs = pk._native.tape_runs()
        for a in HALVES * 2:  # 4 launches, then a read
            pk.parallel_for(N, scale_by, v=v, a=a)
        seen.append("fused" if pk.pending() == 4 or pk._native.tape_runs() > runs else pk.pending())
        np.testing.assert_array_equal(np.asarray(v), ref)
    first = seen.index("fused")
    assert first <= 64 // 4 and seen[first:] == ["fused"] * (100 - first), seen


COST = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import numpy as np, pykokkos as pk
from test_fusion import scale_by
N, BIG = 100, 1 << 15
big = pk.View([BIG], pk.double)
big.fill(1.0)
tiny = [pk.View([N], pk.double) for _ in range(400)]
for w in (big, tiny[0]):  # kernels built before lazy mode
    pk.parallel_for(w.shape[0], scale_by, v=w, a=1.0)
pk._native.set_lazy(True)
pk._native.adaptive_costs((1e9, 1e6))  # recording costs 1000x: run at once
pk.parallel_for(BIG, scale_by, v=big, a=2.0)  # large: recorded
seen = []
for w in tiny:  # with that pending, each runs now (it does not depend on it)
    w.fill(1.0)
    pk.parallel_for(N, scale_by, v=w, a=2.0)
    seen.append(pk.pending())
print(max(seen), min(seen))
pk.flush()
assert all(np.asarray(w).sum() == 2.0 * N for w in tiny) and big[7] == 2.0
"""


def test_cheap_launches_run_now_beside_pending_work():
    """While recording tiny host launches costs more (set, not timed), one
    submitted while something else is pending runs now, after only what it
    depends on, instead of joining the pending work: no trial of recording is
    on (one starts only at a probe, and ends at the next flush or after 64
    launches). Found in review: every such launch was recorded, so a program
    that reads nothing for long paid recording for all of them."""
    env = {**os.environ, "PK_FUSE": "0", "PK_FUSION_DISABLE": ""}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(COST)], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split()[-2:] == ["1", "1"], r.stdout
