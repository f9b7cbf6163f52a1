"""Flushes of one launch on the Cuda space, lazy / eager side by side (a
check of src/pipeline/memo/slots.rs; run with PK_FUSION_DISABLE=adaptive to see
lazy mode without it). Usage: python3 scripts/gpu/alone_probe.py"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benches"))
import pykokkos as pk  # noqa: E402
from bench_fusion import step, total  # noqa: E402
from bench_lazy import _side_by_side  # noqa: E402

pk.set_default_space(pk.Cuda)
for n in (1 << 16, 1 << 20, 1 << 24):
    x, y = pk.View([n], pk.double), pk.View([n], pk.double)

    def two_reads():
        float(pk.parallel_reduce(n, total, t=x))
        float(pk.parallel_reduce(n, total, t=y))

    def map_fence():
        pk.parallel_for(n, step, a=1.0, x=x, y=y)
        pk.fence()

    for name, f in (("two_reads", two_reads), ("map_fence", map_fence)):
        s = _side_by_side(f, 500, reps=7, settle=20)
        print(
            f"n=2^{n.bit_length() - 1} {name}: lazy {s.lazy:.1f} us, eager {s.eager:.1f} us, "
            f"lazy / eager {s.ratio:.3f} (lazy slower in {s.slower}/{s.pairs} pairs)",
            flush=True,
        )
