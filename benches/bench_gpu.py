"""GPU benchmarks (Cuda space, device-resident Views), one run on the GPU machine.

`make bench-gpu` there (see scripts/gpu/README.md) builds what is missing and runs:
(a) launch overhead of a cached 1-element kernel: the cost of one launch as the
    caller sees it (launches do not wait for the GPU), and a launch followed by
    pk.fence() (the round trip);
(b) a triad over 2^27 doubles as a fraction of the device's copy bandwidth,
    measured in the same run with CuPy (device-to-device copy); a sum of 2^27
    doubles against CuPy's sum of the same bytes;
(c) the fusion benchmarks of benches/bench_fusion.py, eager vs fused: chains of
    k = 2, 4, 8 maps whose temporaries die, the BabelStream sequence, max, min
    and sum of one View read in turn, many small launches, flushes of one
    launch each, a loop of 10 small launches that cannot fuse and one read
    (lazy / eager side by side, per launch). Eager and fused
    results are compared and a mismatch fails the run;
(d) a chain of 7 maps and its sum whose last temporary is still referenced when
    the sum is demanded, eager and fused, against CuPy unfused and cupy.fuse in
    the same run (results compared);
(e) the first launch of a kernel no cache holds (a for, a sum, a 2-D for, a
    Min reduction, a for with atomic adds, a team reduction with a nested
    sum, a scan, a MinLoc reduction, a for that prints, a complex sum and a for
    of complex128 atomic adds, each a new kernel text): through NVRTC (the default where
    the kernel has an NVRTC form) and through nvcc and Kokkos (PK_NVRTC=0), each
    in a fresh process, compile and load included; a for and a sum under
    PK_BOUNDS_CHECK=1 the same two ways (and that an index past the end
    raises IndexError); and the steady times of the
    2-D for (the NVRTC form's index split against Kokkos' MDRange) and of a scan
    over 2^27 doubles (one pk_scan kernel against Kokkos' parallel_scan).
Kernel times are wall-clock around pk.fence()d calls; nothing here is asserted
except equal results.
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pykokkos as pk  # noqa: E402
from _util import per_call_us  # noqa: E402
from bench_fusion import add, chain, copy, dot, mul, stat_max, stat_min, step, tiny, total, triad  # noqa: E402

step_map = step

N = 1 << 27


def lazy(on: bool) -> None:
    pk._native.set_lazy(on)


def best(f, reps: int) -> float:
    t = float("inf")
    for _ in range(reps):
        pk.fence()
        t0 = time.perf_counter()
        f()
        pk.fence()
        t = min(t, time.perf_counter() - t0)
    return t


def launch_overhead() -> dict:
    x, y = pk.View([1], pk.double), pk.View([1], pk.double)
    one = lambda: pk.parallel_for(1, step, a=1.0, x=x, y=y)  # noqa: E731
    enqueue = per_call_us(one, calls=20000, warmup=500)
    pk.fence()

    def round_trip():
        one()
        pk.fence()

    rt = per_call_us(round_trip, calls=5000, warmup=200)
    # The same number of launches timed as one batch: no per-call timer at all.
    n = 20000
    pk.fence()
    t0 = time.perf_counter()
    for _ in range(n):
        one()
    pk.fence()
    batch = (time.perf_counter() - t0) / n * 1e6
    return {"launch_us": enqueue["median"], "launch_p99_us": enqueue["p99"],
            "launch_batch_us": batch, "round_trip_us": rt["median"]}


def triad_vs_copy() -> dict:
    import cupy as cp  # the GPU machine's image has CuPy

    a, b, c = (pk.View([N], pk.double) for _ in range(3))
    np.asarray(b)[:] = 1.0
    np.asarray(c)[:] = 2.0
    pk.parallel_for(N, triad, s=3.0, a=a, b=b, c=c)  # compile, device buffers
    t = best(lambda: pk.parallel_for(N, triad, s=3.0, a=a, b=b, c=c), 30)
    assert float(a[N - 1]) == 7.0
    src = cp.random.random(N)
    dst = cp.empty_like(src)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    ct = float("inf")
    for _ in range(30):
        start.record()
        dst[...] = src
        stop.record()
        stop.synchronize()
        ct = min(ct, cp.cuda.get_elapsed_time(start, stop) / 1e3)
    triad_gbs = 3 * 8 * N / t / 1e9
    copy_gbs = 2 * 8 * N / ct / 1e9
    return {"triad_ms": t * 1e3, "triad_gbs": triad_gbs, "copy_ms": ct * 1e3, "copy_gbs": copy_gbs,
            "triad_over_copy": triad_gbs / copy_gbs}


def plain_sum() -> tuple[dict, bool]:
    """A sum of 2^27 doubles read from one View, against CuPy's sum of the
    same bytes and its copy (the byte bound: a sum reads what a copy reads,
    and writes nothing)."""
    import cupy as cp

    x = pk.View([N], pk.double)
    np.asarray(x)[:] = 0.5
    ours = lambda: float(pk.parallel_reduce(N, total, t=x))  # noqa: E731
    got = ours()
    t = best(ours, 30)
    xc = cp.full(N, 0.5)
    want = float(xc.sum())
    ct = best(lambda: float(xc.sum()), 30)
    dst = cp.empty_like(xc)
    copy_t = best(lambda: (dst.__setitem__(Ellipsis, xc), cp.cuda.Device().synchronize()), 30)
    return {"sum_ms": t * 1e3, "cupy_sum_ms": ct * 1e3, "sum_over_cupy": t / ct,
            "sum_gbs": 8 * N / t / 1e9, "copy_gbs": 16 * N / copy_t / 1e9}, got == want == 0.5 * N


def chains() -> tuple[dict, bool]:
    x = pk.View([N], pk.double)
    np.asarray(x)[:] = 1.0
    out, ok = {}, True
    for k in (2, 4, 8):
        times, res = {}, {}
        for fused in (False, True):
            lazy(fused)
            o = pk.View([N], pk.double)

            def run():
                chain(k, x, o)
                pk.flush()

            run()
            times[fused] = best(run, 5)
            res[fused] = np.asarray(o).copy()
        lazy(False)
        ok &= bool(np.array_equal(res[False], res[True]))
        out[f"chain{k}_eager_ms"] = times[False] * 1e3
        out[f"chain{k}_fused_ms"] = times[True] * 1e3
        out[f"chain{k}_speedup"] = times[False] / times[True]
    return out, ok


def live_chain(k: int = 7) -> tuple[dict, bool]:
    """k maps x -> ... -> live and the sum of live; live is referenced at the
    flush (not demanded), the other temporaries die."""
    import cupy as cp

    x = pk.View([N], pk.double)
    np.asarray(x)[:] = 1.0
    live = pk.View([N], pk.double)
    xc = cp.ones(N)

    def plain(v):
        for _ in range(k):
            v = 1.0001 * v + 1.0
        return v.sum()

    @cp.fuse()
    def fused_cp(v):  # cupy.fuse takes cp.sum, not the method
        for _ in range(k):
            v = 1.0001 * v + 1.0
        return cp.sum(v)

    times, vals, split, pairs = {}, {}, {}, []
    for fused in (False, True):
        lazy(fused)
        spans = []

        def ours():
            t0 = time.perf_counter()
            chain(k, x, live)
            t1 = time.perf_counter()
            r = float(pk.parallel_reduce(N, total, t=live))
            spans.append((time.perf_counter() - t0, t1 - t0))
            return r

        ours()
        if fused:
            # Against cupy.fuse in pairs of blocks, in turn (the GPU's clocks
            # drift between blocks): the best of each, and in how many pairs
            # ours was the slower.
            vals["cupy_fuse"] = float(fused_cp(xc))
            pairs = [(best(ours, 5), best(lambda: float(fused_cp(xc)), 5)) for _ in range(7)]
            times[True], times["cupy_fuse"] = min(p for p, _ in pairs), min(c for _, c in pairs)
        else:
            times[False] = best(ours, 20)
        vals[fused] = ours()
        # The call of the best run: its chain's Python calls (launches, or
        # recordings) and the rest (flush, kernels, reading the total).
        whole, calls = min(spans)
        split[fused] = (calls, whole - calls)
    lazy(False)
    vals["cupy"] = float(plain(xc))
    times["cupy"] = best(lambda: float(plain(xc)), 20)
    ref = vals[False]
    ok = all(abs(v - ref) <= 1e-9 * abs(ref) for v in vals.values())
    return {"live_eager_ms": times[False] * 1e3, "live_fused_ms": times[True] * 1e3,
            "live_cupy_ms": times["cupy"] * 1e3, "live_cupy_fuse_ms": times["cupy_fuse"] * 1e3,
            "live_fused_over_cupy_fuse": times[True] / times["cupy_fuse"],
            "live_slower_pairs": f"{sum(p > c for p, c in pairs)}/{len(pairs)}",
            "live_fused_calls_ms": split[True][0] * 1e3, "live_fused_rest_ms": split[True][1] * 1e3,
            "live_eager_calls_ms": split[False][0] * 1e3, "live_eager_rest_ms": split[False][1] * 1e3}, ok


def babelstream() -> tuple[dict, bool]:
    times, arrs, vals = {}, {}, {}
    for fused in (False, True):
        lazy(fused)
        a, b, c = (pk.View([N], pk.double) for _ in range(3))
        np.asarray(a)[:] = 0.1
        np.asarray(b)[:] = 0.2

        def seq():
            pk.parallel_for(N, copy, a=a, c=c)
            pk.parallel_for(N, mul, s=0.4, b=b, c=c)
            pk.parallel_for(N, add, a=a, b=b, c=c)
            pk.parallel_for(N, triad, s=0.4, a=a, b=b, c=c)
            return float(pk.parallel_reduce(N, dot, a=a, b=b))

        seq()
        times[fused] = best(seq, 5)
        vals[fused] = seq()
        arrs[fused] = [np.asarray(v).copy() for v in (a, b, c)]
    lazy(False)
    ok = all(np.array_equal(u, v) for u, v in zip(arrs[False], arrs[True]))
    ok &= abs(vals[False] - vals[True]) <= 1e-12 * abs(vals[False])
    return {"babel_eager_ms": times[False] * 1e3, "babel_fused_ms": times[True] * 1e3,
            "babel_speedup": times[False] / times[True]}, ok


def statistics_row() -> tuple[dict, bool]:
    """max, min and sum of one View, each read in turn: three reductions
    eagerly; fused, the first read takes the other two along into one NVRTC
    reduction over a record of three totals."""
    x = pk.View([N], pk.double)
    np.asarray(x)[:] = np.sin(np.arange(N) * 1e-3)
    times, vals = {}, {}

    def stats():
        hi = pk.parallel_reduce(N, stat_max, x=x, reducer=pk.Max)
        lo = pk.parallel_reduce(N, stat_min, x=x, reducer=pk.Min)
        s = pk.parallel_reduce(N, total, t=x)  # launched before any total is read
        return float(hi), float(lo), float(s)

    for fused in (False, True):
        lazy(fused)
        stats()  # compiles; lazy mode's first pass (siblings join once built)
        times[fused] = best(stats, 10)
        vals[fused] = stats()
    lazy(False)
    (h0, l0, s0), (h1, l1, s1) = vals[False], vals[True]
    ok = h0 == h1 and l0 == l1 and abs(s0 - s1) <= 1e-12 * abs(s0) + 1e-9
    return {"stats_eager_ms": times[False] * 1e3, "stats_fused_ms": times[True] * 1e3,
            "stats_speedup": times[False] / times[True]}, ok


def small_launches(launches: int = 100_000) -> tuple[dict, bool]:
    tm, ok = {}, True
    for fused in (False, True):
        lazy(fused)
        v = pk.View([10], pk.double)
        for _ in range(64):  # compiles the kernels a full region needs
            pk.parallel_for(10, tiny, v=v)
        pk.flush()
        v[0] = 1.0
        pk.fence()
        t0 = time.perf_counter()
        for _ in range(launches):
            pk.parallel_for(10, tiny, v=v)
        got = v[0]
        tm[fused] = time.perf_counter() - t0
        ok &= got == launches + 1
    lazy(False)
    return {"small_launches": launches, "small_eager_s": tm[False], "small_fused_s": tm[True],
            "small_speedup": tm[False] / tm[True]}, ok


def alone_row(n: int = 1 << 20, iters: int = 300) -> tuple[dict, bool]:
    """Flushes of one launch each, nothing to fuse: a map over `n` doubles and
    one element read, then a sum read at once; lazy and eager blocks
    alternating (bench_lazy's side by side). Lazy mode runs such launches at
    once after three flushes alone (src/pipeline/memo/slots.rs)."""
    from bench_lazy import _side_by_side

    x, y = pk.View([n], pk.double), pk.View([n], pk.double)
    np.asarray(x)[:] = 1.0
    got = {}

    def step():
        pk.parallel_for(n, step_map, a=1.0, x=x, y=y)
        e = y[3]
        return e, float(pk.parallel_reduce(n, total, t=y))

    for mode in (False, True):
        lazy(mode)
        got[mode] = step()
    lazy(False)
    side = _side_by_side(step, iters, reps=7, settle=20)
    return {"alone_lazy_us": side.lazy, "alone_eager_us": side.eager, "alone_lazy_over_eager": side.ratio,
            "alone_slower_pairs": f"{side.slower}/{side.pairs}"}, got[False] == got[True]


@pk.workunit
def bump(i: int, a: pk.View1D[pk.double], s: float):
    a[i] = a[i] + s


def unfusable_loop(kernels: int = 10, iters: int = 300) -> tuple[dict, bool]:
    """A loop of `kernels` small launches that cannot fuse (each over its own
    range: 'engine: same_range' refuses them), then one element read, lazy and
    eager blocks alternating: the time per original launch. Issue 42's item 4
    (CUDA-graph replay of such loops) is measured here; target <= 1.5 us."""
    from bench_lazy import _side_by_side

    x = pk.View([1000 + 100 * kernels], pk.double)

    def step():
        for k in range(kernels):
            pk.parallel_for(1000 + 100 * k, bump, a=x, s=1.0)
        return x[0]

    ok = True
    for mode in (False, True):
        lazy(mode)
        x[0] = 0.0
        got = [step() for _ in range(3)]
        ok &= got == [float(kernels * (k + 1)) for k in range(3)]
    lazy(False)
    side = _side_by_side(step, iters, reps=7, settle=20)
    return {"unfusable_lazy_us": side.lazy / kernels, "unfusable_eager_us": side.eager / kernels,
            "unfusable_lazy_over_eager": side.ratio, "unfusable_slower_pairs": f"{side.slower}/{side.pairs}"}, ok


PROBE = """
import json, sys, time
import numpy as np
import pykokkos as pk
pk.set_default_space(pk.Cuda)

@pk.workunit
def scale(i: int, a: pk.View1D[pk.double], s: float):
    a[i] = a[i] * s + SALT

@pk.workunit
def norm(i: int, acc: pk.Acc[pk.double], a: pk.View1D[pk.double]):
    acc += a[i] * a[i] + SALT

@pk.workunit
def grid(i: int, j: int, m: pk.View2D[pk.double], s: float):
    m[i, j] = m[i, j] * s + SALT

@pk.workunit
def low(i: int, acc: pk.Acc[pk.double], a: pk.View1D[pk.double]):
    if a[i] - SALT < acc:
        acc = a[i] - SALT

@pk.workunit
def hist(i: int, a: pk.View1D[pk.double], h: pk.View1D[pk.int32], f: pk.View1D[pk.double]):
    pk.atomic_add(h, [i % 64], 1)
    pk.atomic_add(f, [i % 64], a[i] * SALT)

@pk.workunit
def rows(m: pk.TeamMember, acc: pk.Acc[pk.double], a: pk.View1D[pk.double]):
    j: int = m.league_rank()

    def part(k: int, s: pk.Acc[pk.double]):
        s += a[j * 64 + k] * SALT
    t: float = pk.parallel_reduce(pk.TeamThreadRange(m, 64), part)
    if m.team_rank() == 0:
        acc += t

@pk.workunit
def lowloc(i: int, acc: pk.Acc[pk.double], a: pk.View1D[pk.double]):
    if a[i] - SALT < acc.val:
        acc.val = a[i] - SALT
        acc.loc = i

@pk.workunit
def prefix(i: int, acc: pk.Acc[pk.double], last: bool, a: pk.View1D[pk.double], y: pk.View1D[pk.double]):
    acc += a[i] * SALT
    if last:
        y[i] = acc

@pk.workunit
def shout(i: int, a: pk.View1D[pk.double]):
    if i == 0:
        pk.printf("first %.3f\\n", a[i] + SALT)

@pk.workunit
def spin(i: int, acc: pk.Acc[pk.complex128], a: pk.View1D[pk.double]):
    acc += pk.exp(1j * (a[i] + SALT))

@pk.workunit
def cbin(i: int, a: pk.View1D[pk.double], bins: pk.View1D[pk.complex128]):
    pk.atomic_add(bins, [i % 4096], pk.exp(1j * (a[i] + SALT)))

a = pk.View([1 << 20], pk.double)
a.fill(1.0)
h = pk.View([64], pk.int32)
f = pk.View([64], pk.double)
m = pk.View([8192, 8192], pk.double)
md = pk.MDRangePolicy([0, 0], [8192, 8192])
pk.fence()
t0 = time.perf_counter()
pk.parallel_for(1 << 20, scale, a=a, s=2.0)
pk.fence()
t1 = time.perf_counter()
r = pk.parallel_reduce(1 << 20, norm, a=a)
t2 = time.perf_counter()
pk.parallel_for(md, grid, m=m, s=1.0)
pk.fence()
t3 = time.perf_counter()
lo = pk.parallel_reduce(1 << 20, low, reducer=pk.Min, a=a)
t4 = time.perf_counter()
want = (1 << 20) * ((2.0 + SALT) ** 2 + SALT)
pk.parallel_for(1 << 20, hist, a=a, h=h, f=f)
pk.fence()
t4a = time.perf_counter()
tr = pk.parallel_reduce(pk.TeamPolicy((1 << 20) // 64, 32), rows, a=a)
t4b = time.perf_counter()
y = pk.View([1 << 20], pk.double)
sc = pk.parallel_scan(1 << 20, prefix, a=a, y=y)
t4c = time.perf_counter()
assert abs(sc - (1 << 20) * (2.0 + SALT) * SALT) <= 1e-9 * sc, sc
ml = pk.parallel_reduce(1 << 20, lowloc, reducer=pk.MinLoc, a=a)
t4d = time.perf_counter()
pk.parallel_for(1 << 20, shout, a=a)
pk.fence()
t4e = time.perf_counter()
cz = pk.parallel_reduce(1 << 20, spin, a=a)
t4f = time.perf_counter()
assert abs(cz - (1 << 20) * np.exp(1j * (2.0 + 2 * SALT))) <= 1e-9 * (1 << 20), cz
bins = pk.View([4096], pk.complex128)  # few items a lock: a lock per element is taken in turn
pk.parallel_for(1 << 20, cbin, a=a, bins=bins)
pk.fence()
t4g = time.perf_counter()
assert abs(np.asarray(bins).sum() - (1 << 20) * np.exp(1j * (2.0 + 2 * SALT))) <= 1e-9 * (1 << 20)
assert ml.loc == 0 and abs(ml.val - 2.0) <= 1e-12, tuple(ml)
assert abs(tr - (1 << 20) * (2.0 + SALT) * SALT) <= 1e-9 * (1 << 20), tr
assert abs(r - want) <= 1e-9 * want, (r, want)
assert abs(lo - 2.0) <= 1e-12, lo  # (2 + SALT) - SALT rounds
assert (np.asarray(h) == (1 << 20) // 64).all(), np.asarray(h)
assert abs(np.asarray(f).sum() - (1 << 20) * (2.0 + SALT) * SALT) <= 1e-9 * (1 << 20), np.asarray(f).sum()
# Steady state of the 2-D for: the index split of the NVRTC form against
# Kokkos' MDRange (before any host read of m, which would add copies).
reps = 20
t5 = time.perf_counter()
for _ in range(reps):
    pk.parallel_for(md, grid, m=m, s=1.0)
pk.fence()
t6 = time.perf_counter()
assert abs(np.asarray(m)[-1, -1] - SALT * (reps + 1)) <= 1e-12, np.asarray(m)[-1, -1]
# Steady state of a scan over 2^27 doubles (reads a, writes y): a result each launch.
big, out = pk.View([1 << 27], pk.double), pk.View([1 << 27], pk.double)
big.fill(1.0)
pk.parallel_scan(1 << 27, prefix, a=big, y=out)
t7 = time.perf_counter()
for _ in range(reps):
    pk.parallel_scan(1 << 27, prefix, a=big, y=out)
t8 = time.perf_counter()
assert abs(np.asarray(out)[-1] - (1 << 27) * SALT) <= 1e-9 * (1 << 27), np.asarray(out)[-1]
del big, out
print(json.dumps({"for_s": t1 - t0, "sum_s": t2 - t1, "md_s": t3 - t2, "min_s": t4 - t3, "atomic_s": t4a - t4,
                  "team_s": t4b - t4a, "scan_s": t4c - t4b, "minloc_s": t4d - t4c, "printf_s": t4e - t4d,
                  "complex_s": t4f - t4e, "catomic_s": t4g - t4f,
                  "md_ms": (t6 - t5) / reps * 1e3, "scan_ms": (t8 - t7) / reps * 1e3}))
"""


def fresh_probe(probe: str, nvrtc: bool, **env: str) -> dict:
    """Runs `probe` (its kernels salted: texts no cache has seen) in a fresh
    process, eagerly, through NVRTC or nvcc; its last JSON line."""
    import json
    import os
    import random
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "probe.py"
        f.write_text(probe.replace("SALT", repr(random.random())))
        env = dict(os.environ, PK_NVRTC="1" if nvrtc else "0", PK_FUSE="0", **env)
        out = subprocess.run([sys.executable, str(f)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    # The kernel's printf line may come after (C's stdout is flushed at exit).
    return json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][-1])


def first_launch(nvrtc: bool) -> dict:
    """Seconds to the first result of each new kernel of PROBE in a fresh
    process, and the steady times of its 2-D for and scan."""
    return fresh_probe(PROBE, nvrtc)


BOUNDS_PROBE = """
import json, sys, time
import pykokkos as pk
pk.set_default_space(pk.Cuda)

@pk.workunit
def shift(i: int, a: pk.View1D[pk.double], b: pk.View1D[pk.double]):
    b[i] = a[i + 1] + SALT

@pk.workunit
def norm(i: int, acc: pk.Acc[pk.double], a: pk.View1D[pk.double]):
    acc += a[i] * SALT

a, b = pk.View([1 << 20], pk.double), pk.View([1 << 20], pk.double)
a.fill(1.0)
pk.fence()
t0 = time.perf_counter()
pk.parallel_for((1 << 20) - 1, shift, a=a, b=b)
pk.fence()
t1 = time.perf_counter()
r = pk.parallel_reduce(1 << 20, norm, a=a)
t2 = time.perf_counter()
assert abs(r - (1 << 20) * SALT) <= 1e-9 * (1 << 20), r
try:  # one index past the end: the check must catch it
    pk.parallel_for(1 << 20, shift, a=a, b=b)
    pk.fence()
    caught = False
except IndexError:
    caught = True
print(json.dumps({"for_s": t1 - t0, "sum_s": t2 - t1, "caught": caught}))
"""


def first_launch_checked(nvrtc: bool) -> dict:
    """Seconds to the first result of a new for and sum under PK_BOUNDS_CHECK=1
    in a fresh process, and whether an index past the end raised."""
    return fresh_probe(BOUNDS_PROBE, nvrtc, PK_BOUNDS_CHECK="1")


def compile_rows() -> None:
    """The (e) rows: first launches and steady times, NVRTC against nvcc."""
    nv, cc = first_launch(True), first_launch(False)
    for name, r in (("NVRTC", nv), ("nvcc", cc)):
        print(f"(e) first launch of a new kernel, compile included, through {name}: for {r['for_s']:.2f} s, "
              f"sum {r['sum_s']:.2f} s, 2-D for {r['md_s']:.2f} s, Min reduction {r['min_s']:.2f} s, "
              f"atomic for {r['atomic_s']:.2f} s, "
              f"team reduction {r['team_s']:.2f} s, scan {r['scan_s']:.2f} s, MinLoc {r['minloc_s']:.2f} s, "
              f"for with printf {r['printf_s']:.2f} s, complex sum {r['complex_s']:.2f} s, "
              f"complex128 atomic adds {r['catomic_s']:.2f} s; "
              f"target <= 1.5 s",
              flush=True)
    bn, bc = first_launch_checked(True), first_launch_checked(False)
    for name, r in (("NVRTC", bn), ("nvcc", bc)):
        print(f"(e) first launch of a new kernel under PK_BOUNDS_CHECK=1, through {name}: for {r['for_s']:.2f} s, "
              f"sum {r['sum_s']:.2f} s; an index past the end raised IndexError: {r['caught']}", flush=True)
    print(f"(e) 2-D for over 8192^2 doubles, steady: NVRTC {nv['md_ms']:.3f} ms, Kokkos MDRange {cc['md_ms']:.3f} ms, "
          f"NVRTC / Kokkos = {nv['md_ms'] / cc['md_ms']:.3f}", flush=True)
    print(f"(e) scan over 2^27 doubles (read one View, write one), steady: NVRTC {nv['scan_ms']:.3f} ms, "
          f"Kokkos {cc['scan_ms']:.3f} ms, NVRTC / Kokkos = {nv['scan_ms'] / cc['scan_ms']:.3f}", flush=True)


def unfusable_line(uf: dict) -> str:
    return (f"(c) 10 small launches that cannot fuse + 1 element read, per launch: lazy {uf['unfusable_lazy_us']:.2f} us, "
            f"eager {uf['unfusable_eager_us']:.2f} us, lazy / eager = {uf['unfusable_lazy_over_eager']:.3f} "
            f"(lazy slower in {uf['unfusable_slower_pairs']} pairs), target <= 1.5 us (CUDA graphs, issue 42)")


def main() -> int:
    assert "CUDA" in pk.config()["kokkos_config"].split(), "bench_gpu needs a CUDA build of Kokkos"
    pk.set_default_space(pk.Cuda)
    print(f"pykokkos-fuse GPU benchmarks, N = 2^27 doubles, space {pk.get_default_space()}", flush=True)
    if "--compile" in sys.argv:  # the (e) rows alone
        compile_rows()
        return 0
    if "--live" in sys.argv:  # row (d) alone (A/B runs of one setting per process)
        lc, good = live_chain()
        print(f"(d) fused {lc['live_fused_ms']:.3f} ms, cupy.fuse {lc['live_cupy_fuse_ms']:.3f} ms, "
              f"ratio {lc['live_fused_over_cupy_fuse']:.3f} (fused slower in {lc['live_slower_pairs']} pairs); eager {lc['live_eager_ms']:.3f} ms; fused chain calls "
              f"{lc['live_fused_calls_ms']:.3f} ms, rest {lc['live_fused_rest_ms']:.3f} ms", flush=True)
        return 0 if good else 1
    if "--sum" in sys.argv:  # the plain-sum row alone
        ps, good = plain_sum()
        print(f"(b) sum: ours {ps['sum_ms']:.3f} ms, CuPy {ps['cupy_sum_ms']:.3f} ms, "
              f"ours / CuPy = {ps['sum_over_cupy']:.3f}", flush=True)
        return 0 if good else 1
    if "--alone" in sys.argv:  # the flushes-of-one-launch row alone
        al, good = alone_row()
        print(f"(c) flushes of one launch: lazy {al['alone_lazy_us']:.1f} us, eager {al['alone_eager_us']:.1f} us, "
              f"lazy / eager = {al['alone_lazy_over_eager']:.3f} (lazy slower in {al['alone_slower_pairs']} pairs)", flush=True)
        return 0 if good else 1
    if "--unfusable" in sys.argv:  # the loop of unfusable launches alone
        uf, good = unfusable_loop()
        print(unfusable_line(uf), flush=True)
        return 0 if good else 1
    r = launch_overhead()
    print(f"(a) launch of a cached 1-element kernel: {r['launch_us']:.2f} us median per call "
          f"(p99 {r['launch_p99_us']:.2f} us; {r['launch_batch_us']:.2f} us per launch over a batch of 20000), "
          f"target <= 10 us", flush=True)
    print(f"    launch + pk.fence() round trip: {r['round_trip_us']:.2f} us median", flush=True)
    t = triad_vs_copy()
    print(f"(b) triad: {t['triad_ms']:.3f} ms = {t['triad_gbs']:.0f} GB/s; CuPy copy {t['copy_ms']:.3f} ms = "
          f"{t['copy_gbs']:.0f} GB/s; triad / copy = {t['triad_over_copy']:.3f}, target >= 0.85", flush=True)
    ok = True
    ps, good = plain_sum()
    ok &= good
    print(f"(b) sum of 2^27 doubles: {ps['sum_ms']:.3f} ms = {ps['sum_gbs']:.0f} GB/s read; CuPy sum "
          f"{ps['cupy_sum_ms']:.3f} ms; ours / CuPy = {ps['sum_over_cupy']:.3f}, target <= 1; CuPy copy moves "
          f"{ps['copy_gbs']:.0f} GB/s (read + write)", flush=True)
    c, good = chains()
    ok &= good
    for k in (2, 4, 8):
        print(f"(c) chain k={k}: eager {c[f'chain{k}_eager_ms']:.3f} ms, fused {c[f'chain{k}_fused_ms']:.3f} ms, "
              f"{c[f'chain{k}_speedup']:.2f}x" + (", target >= 5x" if k == 8 else ""), flush=True)
    lc, good = live_chain()
    ok &= good
    print(f"(d) 7 maps + sum, last temporary referenced: eager {lc['live_eager_ms']:.3f} ms, fused "
          f"{lc['live_fused_ms']:.3f} ms; CuPy {lc['live_cupy_ms']:.3f} ms, cupy.fuse {lc['live_cupy_fuse_ms']:.3f} ms; "
          f"fused / cupy.fuse = {lc['live_fused_over_cupy_fuse']:.3f} (fused slower in {lc['live_slower_pairs']} pairs), "
          f"target <= 1; fused: chain calls "
          f"{lc['live_fused_calls_ms']:.3f} ms, flush + kernel + read {lc['live_fused_rest_ms']:.3f} ms", flush=True)
    b, good = babelstream()
    ok &= good
    print(f"(c) BabelStream copy,mul,add,triad,dot: eager {b['babel_eager_ms']:.3f} ms, "
          f"fused {b['babel_fused_ms']:.3f} ms, {b['babel_speedup']:.2f}x (ideal 2)", flush=True)
    st, good = statistics_row()
    ok &= good
    print(f"(c) max, min and sum of one View, each read in turn: eager {st['stats_eager_ms']:.3f} ms, "
          f"fused {st['stats_fused_ms']:.3f} ms, {st['stats_speedup']:.2f}x", flush=True)
    s, good = small_launches()
    ok &= good
    print(f"(c) {s['small_launches']} launches of a 10-element kernel + 1 read: eager {s['small_eager_s']:.3f} s, "
          f"fused {s['small_fused_s']:.3f} s, {s['small_speedup']:.2f}x", flush=True)
    al, good = alone_row()
    ok &= good
    print(f"(c) flushes of one launch (map over 2^20 + element read, then a sum read): lazy {al['alone_lazy_us']:.1f} us, "
          f"eager {al['alone_eager_us']:.1f} us per iteration, lazy / eager = {al['alone_lazy_over_eager']:.3f} "
          f"(lazy slower in {al['alone_slower_pairs']} pairs), target <= 1", flush=True)
    uf, good = unfusable_loop()
    ok &= good
    print(unfusable_line(uf), flush=True)
    compile_rows()
    print(pk.explain(show=False).splitlines()[0])
    print("eager and fused results equal:", ok)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
