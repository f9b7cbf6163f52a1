"""Profiling traces: record (PK_TRACE, pk.trace.record), replay with stored
data (the final buffers must equal the recorded run's, eager and fused), the
summary and explain commands, and bad traces (truncated, another version, a
missing field, a workunit whose source changed) as clear errors."""
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pykokkos as pk

pytestmark = [pytest.mark.eager_only, pytest.mark.host_only("replays run child processes on the host")]

PROGRAM = textwrap.dedent("""
    import numpy as np
    import pykokkos as pk

    @pk.workunit
    def axpy(i, a, x, y):
        y[i] = a * x[i] + y[i]

    @pk.workunit
    def total(i, acc, y):
        acc += y[i]

    @pk.workunit
    def biggest(i, acc: pk.Acc[pk.double], y):
        acc = max(acc, y[i])

    @pk.functor
    class Scale:
        def __init__(self, v, k):
            self.v = v
            self.k = k

        @pk.workunit
        def run(self, i):
            self.v[i] = self.v[i] * self.k

    def main():
        n = 300
        x, y = pk.View([n], pk.double), pk.View([n], pk.double)
        np.asarray(x)[:] = np.sin(np.arange(n))
        np.asarray(y)[:] = np.cos(np.arange(n))
        for k in range(4):
            pk.parallel_for(n, axpy, a=0.5 + k, x=x, y=y)
            pk.parallel_for(n, Scale(y, 0.75).run)
            print(float(pk.parallel_reduce(n, total, y=y)),
                  float(pk.parallel_reduce(n, biggest, reducer=pk.Max, y=y)))

    if __name__ == "__main__":
        main()
""")


def run(args, env=None, cwd=None):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    d = tmp_path_factory.mktemp("trace")
    prog = d / "prog.py"
    prog.write_text(PROGRAM)
    import os

    env = dict(os.environ, PK_TRACE=str(d / "t.jsonl"), PK_TRACE_DATA="1", PK_FUSE="1")
    r = run([str(prog)], env=env, cwd=d)
    assert r.returncode == 0, r.stderr
    return d, prog, d / "t.jsonl", r.stdout


def test_the_trace_records_launches_flushes_kernels_and_data(recorded):
    d, _, trace, _ = recorded
    lines = trace.read_text().splitlines()
    head = json.loads(lines[0])
    assert head["format"] == "pykokkos-fuse-trace" and head["version"] == 1
    events = [json.loads(x) for x in lines[1:]]
    kinds = {e["ev"] for e in events}
    assert {"launch", "flush", "kernel"} <= kinds
    # Host kernels are Kokkos translation units (GPU ones may be NVRTC's: test_trace_cuda).
    assert {e["via"] for e in events if e["ev"] == "kernel"} == {"kokkos"}
    launches = [e for e in events if e["ev"] == "launch"]
    assert len(launches) == 16
    assert {e["pattern"] for e in launches} == {"for", "reduce", "reduce:Max"}
    x = next(a for a in launches[0]["args"] if a["name"] == "x")
    assert (x["dtype"], x["shape"], x["bytes"]) == ("float64", [300], [0, 2400])
    # The functor's member is the same buffer as the standalone launch's y.
    y_buf = next(a["buffer"] for a in launches[0]["args"] if a["name"] == "y")
    assert any(a["buffer"] == y_buf for a in launches[1]["args"])
    assert sorted(p.name for p in (d / "t.jsonl.data").iterdir())[:2][0].endswith((".in", ".out"))
    # Each flush names the program line that asked for it (the print of a total).
    sites = {e["site"] for e in events if e["ev"] == "flush"} - {""}
    line = next(n for n, t in enumerate(PROGRAM.splitlines(), 1) if "print(float(" in t)
    assert sites and all(s.endswith((f"prog.py:{line}", f"prog.py:{line + 1}")) for s in sites), sites


@pytest.mark.parametrize("mode", ["--fuse", "--no-fuse"])
def test_replay_with_data_reproduces_the_run(recorded, mode):
    d, _, trace, _ = recorded
    r = run(["-m", "pykokkos", "replay", str(trace), mode], cwd=d)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "final buffers: equal to the recording" in r.stdout


def test_replay_without_data_and_other_space_and_both_modes(recorded, tmp_path):
    _, _, trace, _ = recorded
    lines = trace.read_text().splitlines()
    head = json.loads(lines[0])
    head["data"] = None
    bare = tmp_path / "bare.jsonl"
    bare.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    r = run(["-m", "pykokkos", "replay", str(bare), "--both", "--space", "Serial", "--scale", "2"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "unfused:" in r.stdout and "fused:" in r.stdout and "unfused / fused" in r.stdout


def test_summary_and_explain(recorded):
    _, _, trace, _ = recorded
    r = run(["-m", "pykokkos", "trace", "summary", str(trace)])
    assert r.returncode == 0, r.stderr
    assert "16 launches recorded" in r.stdout and "kernel" in r.stdout
    r = run(["-m", "pykokkos", "explain", str(trace)])
    assert r.returncode == 0 and "region 0:" in r.stdout


def bad(tmp_path, trace, edit):
    lines = trace.read_text().splitlines()
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(edit(lines)) + "\n")
    r = run(["-m", "pykokkos", "replay", str(p)])
    assert r.returncode == 2, r.stdout + r.stderr
    return r.stderr


def test_bad_traces_are_clear_errors(recorded, tmp_path):
    _, _, trace, _ = recorded
    assert "bad.jsonl:5: not JSON" in bad(tmp_path, trace, lambda ls: ls[:4] + [ls[4][: len(ls[4]) // 2]])
    other = lambda ls: [ls[0].replace('"version":1', '"version":99')] + ls[1:]  # noqa: E731
    assert "version 99" in bad(tmp_path, trace, other)

    def drop_field(ls):
        e = json.loads(ls[1])
        del e["policy"]
        return [ls[0], json.dumps(e)] + ls[2:]

    assert "bad.jsonl:2: launch event without its 'policy' field" in bad(tmp_path, trace, drop_field)


def test_a_changed_workunit_is_refused(recorded, tmp_path):
    d, prog, trace, _ = recorded
    copy = tmp_path / "prog.py"
    copy.write_text(PROGRAM.replace("0.5 * x[i]" if False else "a * x[i] + y[i]", "a * x[i] - y[i]"))
    t = tmp_path / "t.jsonl"
    t.write_text(trace.read_text().replace(str(prog), str(copy)))
    r = run(["-m", "pykokkos", "replay", str(t)])
    assert r.returncode == 2 and "source of workunit 'axpy'" in r.stderr and "changed" in r.stderr


@pk.workunit
def tr_fill(i, v, x):
    v[i] = x * i


def test_record_a_part_of_a_run(tmp_path):
    v = pk.View([10], pk.double)
    pk.parallel_for(10, tr_fill, v=v, x=1.0)  # before: not in the trace
    with pk.trace.record(tmp_path / "part.jsonl"):
        assert pk.trace.recording() == str(tmp_path / "part.jsonl")
        pk.parallel_for(10, tr_fill, v=v, x=2.0)
    pk.parallel_for(10, tr_fill, v=v, x=3.0)  # after: not either
    events = [json.loads(x) for x in (tmp_path / "part.jsonl").read_text().splitlines()[1:]]
    launches = [e for e in events if e["ev"] == "launch"]
    assert [a["value"] for e in launches for a in e["args"] if a["name"] == "x"] == [2.0]
    assert pk.trace.recording() is None
    np.testing.assert_array_equal(np.asarray(v), 3.0 * np.arange(10))


def test_replay_under_other_rules(recorded):
    d, _, trace, _ = recorded
    r = run(["-m", "pykokkos", "replay", str(trace), "--disable", "vertical,horizontal"], cwd=d)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "final buffers: equal to the recording" in r.stdout


def test_compile_only_prewarms_the_cache_for_a_live_run(recorded, tmp_path, toolchain):
    from conftest import child_env, seed_precompiled_header

    d, prog, trace, _ = recorded
    cache = tmp_path / "cache"
    seed_precompiled_header(cache, toolchain)
    env = child_env(cache, toolchain)
    # Two processes prewarm one empty cache at once: a lock per key keeps it whole.
    procs = [subprocess.Popen([sys.executable, "-m", "pykokkos", "replay", str(trace), "--compile-only"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate() for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    built = [int(o.split("compiled ")[1].split()[0]) for o, _ in outs]
    assert sum(built) >= 1 and all("already in the cache" in o for o, _ in outs)
    live = tmp_path / "live.jsonl"
    r = run([str(prog)], env=dict(env, PK_FUSE="1", PK_TRACE=str(live)), cwd=d)
    assert r.returncode == 0, r.stderr
    events = [json.loads(x) for x in live.read_text().splitlines()[1:]]
    fresh = [e for e in events if e["ev"] == "compile" and not e["cached"] and e["kernel"] != "support"]
    assert fresh == []  # the live run compiled nothing
    assert r.stdout == recorded[3]  # and printed what the recorded run printed


def nested(events):
    """Every fused launch lies inside a kernel span of its thread."""
    kernels = [e for e in events if e.get("cat") == "kernel"]
    for c in (e for e in events if e.get("cat") == "fused launch"):
        assert any(k["tid"] == c["tid"] and k["ts"] - 1e-3 <= c["ts"] and
                   c["ts"] + c["dur"] <= k["ts"] + k["dur"] + 1e-3 for k in kernels), c
    return True


def test_chrome_trace_events_live_and_from_a_replay(recorded, tmp_path):
    import os

    d, prog, trace, _ = recorded
    live = tmp_path / "live.json"
    r = run([str(prog)], env=dict(os.environ, PK_FUSE="1", PK_TRACE_CHROME=str(live)), cwd=d)
    assert r.returncode == 0, r.stderr
    ev = json.loads(live.read_text())["traceEvents"]
    spans = [e for e in ev if e["ph"] == "X"]
    assert {"record", "plan", "kernel", "fused launch"} <= {e["cat"] for e in spans}
    assert all(e["dur"] > 0 and e["ts"] >= 0 for e in spans) and nested(ev)
    assert any(e["name"] == "axpy" for e in spans)  # the names Kokkos Tools see
    out = tmp_path / "replay.json"
    r = run(["-m", "pykokkos", "replay", str(trace), "--chrome", str(out)], cwd=d)
    assert r.returncode == 0, r.stderr
    assert nested(json.loads(out.read_text())["traceEvents"])


def test_tune_writes_the_fastest_rule_set(recorded, tmp_path):
    d, _, trace, _ = recorded
    out = tmp_path / "tuned"
    r = run(["-m", "pykokkos", "tune", str(trace), "--repeat", "1", "--out", str(out)], cwd=d)
    assert r.returncode == 0, r.stdout + r.stderr
    for label in ("built-in rules", "without vertical", "limits x2", "fusion off"):
        assert label in r.stdout
    assert "fastest:" in r.stdout and any(out.glob("*/rule.toml"))
    r = run(["-m", "pykokkos", "replay", str(trace), "--rules", str(out)], cwd=d)
    assert r.returncode == 0 and "final buffers: equal to the recording" in r.stdout, r.stdout + r.stderr


def test_the_format_round_trips_and_explain_draws_the_regions(recorded, tmp_path):
    from pykokkos.runtime._tracefile import load

    _, _, trace, _ = recorded
    t = load(str(trace))
    again = [json.dumps(t.header, sort_keys=True)] + [
        json.dumps({k: v for k, v in e.items() if k != "_line"}, sort_keys=True) for e in t.events]
    assert [json.loads(x) for x in again] == [json.loads(x) for x in trace.read_text().splitlines()]
    dot = tmp_path / "trace.dot"
    r = run(["-m", "pykokkos", "explain", str(trace), "--dot", str(dot)])
    assert r.returncode == 0, r.stderr
    text = dot.read_text()
    assert text.startswith("digraph trace {") and "cluster_f0_r0" in text and "axpy" in text
    r = run(["-m", "pykokkos", "trace", "summary", str(trace), "--bandwidth", "10"])
    assert "byte bound: 10.0 GB/s (given)" in r.stdout and "of bound" in r.stdout


STENCIL = textwrap.dedent("""
    import numpy as np
    import pykokkos as pk

    @pk.workunit
    def smooth(i, src, dst):
        dst[i] = 0.5 * (src[i] + dst[i])

    def main():
        n = 64
        v = pk.View([n], pk.double)
        np.asarray(v)[:] = np.arange(n) ** 2
        for _ in range(3):
            # One buffer through disjoint windows: halves, then even and odd elements.
            pk.parallel_for(n // 2, smooth, src=v[n // 2:n], dst=v[0:n // 2])
            pk.parallel_for(n // 2, smooth, src=v[0:n:2], dst=v[1:n:2])
        print(float(np.asarray(v).sum()))

    if __name__ == "__main__":
        main()
""")


def record_then_replay(tmp_path, program: str, *replay_args: str) -> tuple[str, str]:
    """Runs `program` with a data trace under PK_FUSE=1, then replays the
    trace: (the program's output, the replay's output)."""
    import os

    prog = tmp_path / "prog_under_test.py"
    prog.write_text(program)
    trace = tmp_path / "t.jsonl"
    env = dict(os.environ, PK_TRACE=str(trace), PK_TRACE_DATA="1", PK_FUSE="1")
    r = run([str(prog)], env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rep = run(["-m", "pykokkos", "replay", str(trace), *replay_args], cwd=tmp_path)
    assert rep.returncode == 0, rep.stdout + rep.stderr
    return r.stdout, rep.stdout


@pytest.mark.parametrize("mode", ["--fuse", "--no-fuse"])
def test_replay_of_subviews_sharing_one_buffer(tmp_path, mode):
    _, replayed = record_then_replay(tmp_path, STENCIL, mode)
    assert "final buffers: equal to the recording" in replayed


LAMBDAS = textwrap.dedent("""
    import numpy as np
    import pykokkos as pk

    def main():
        n = 50
        x = pk.View([n], pk.double)
        np.asarray(x)[:] = np.arange(n)
        k = 3.0
        pk.parallel_for(n, lambda i: k * x[i] + 1.0, x)  # PyKokkos' lambda kernels
        print(float(pk.parallel_reduce(n, lambda i, acc: acc + x[i])))

    if __name__ == "__main__":
        main()
""")


def test_replay_of_lambda_kernels(tmp_path):
    printed, replayed = record_then_replay(tmp_path, LAMBDAS, "--both")
    assert float(printed) == (3.0 * np.arange(50) + 1.0).sum()
    assert replayed.count("final buffers: equal to the recording") == 2


HOSTWRITES = textwrap.dedent("""
    import numpy as np
    import pykokkos as pk

    @pk.workunit
    def bump(i, v):
        v[i] = 2.0 * v[i] + 1.0

    def main():
        n = 40
        v = pk.View([n], pk.double)
        kept = np.asarray(v)  # a live NumPy view of the memory
        kept[:] = np.arange(n)
        for k in range(3):
            pk.parallel_for(n, bump, v=v)
            v[k] = -1.0 * k      # a host write between launches
            kept[n - 1 - k] = 7.0  # and one through NumPy
        print(float(np.asarray(v).sum()))

    if __name__ == "__main__":
        main()
""")


@pytest.mark.parametrize("mode", ["--fuse", "--no-fuse"])
def test_replay_with_data_follows_host_writes_between_launches(tmp_path, mode):
    _, replayed = record_then_replay(tmp_path, HOSTWRITES, mode)
    assert "final buffers: equal to the recording" in replayed


NUMPY_AND_NUMBA = textwrap.dedent("""
    import numpy as np
    import pykokkos as pk
    from pykokkos.numba import njit, prange

    @pk.workunit
    def grow(i, a, b):
        b[i] = b[i] + a[i] * 2.0

    @njit(parallel=True)
    def smooth(x, out):
        for i in prange(1, x.shape[0] - 1):
            out[i] = 0.25 * x[i - 1] + 0.5 * x[i] + 0.25 * x[i + 1]
        return np.sum(out * out)

    def main():
        a, b = np.arange(10.0), np.zeros(10)
        for _ in range(3):  # NumPy memory wrapped again at each launch, written between them
            pk.parallel_for(10, grow, a=pk.asarray(a), b=pk.asarray(b))
            a += 1.0
        x, out = np.linspace(0.0, 1.0, 64), np.zeros(64)
        print(b.sum(), smooth(x, out), smooth(out, x))

    if __name__ == "__main__":
        main()
""")


def test_replay_of_numpy_arguments_and_numba_kernels(tmp_path):
    """NumPy memory is one buffer however often it is wrapped, and its contents
    are stored; pykokkos.numba's generated kernels live in files a replay finds."""
    printed, replayed = record_then_replay(tmp_path, NUMPY_AND_NUMBA, "--both")
    assert float(printed.split()[0]) == sum(2.0 * (np.arange(10.0) + k) for k in range(3)).sum()
    assert replayed.count("final buffers: equal to the recording") == 2, replayed


ND_ALIASES = textwrap.dedent("""
    import numpy as np
    import pykokkos as pk

    @pk.workunit
    def fill2(i, j, m):
        m[i, j] = i * 10.0 + j

    @pk.workunit
    def twice(i, r):
        r[i] = 2.0 * r[i]

    def main():
        m = pk.View([4, 5], pk.double)
        pk.parallel_for(pk.MDRangePolicy([0, 0], [4, 5]), fill2, m=m)
        pk.parallel_for(5, twice, r=m[2])      # a row: another geometry of m's buffer
        pk.parallel_for(4, twice, r=m[:, 3])   # a strided column
        print(float(np.asarray(m).sum()))

    if __name__ == "__main__":
        main()
""")


def test_replay_of_views_of_other_ranks_sharing_one_buffer(tmp_path):
    printed, replayed = record_then_replay(tmp_path, ND_ALIASES, "--both")
    m = np.add.outer(np.arange(4) * 10.0, np.arange(5.0))
    m[2] *= 2.0
    m[:, 3] *= 2.0
    assert float(printed) == m.sum()
    assert replayed.count("final buffers: equal to the recording") == 2, replayed


DIES_UNREAD = textwrap.dedent("""
    import numpy as np
    import pykokkos as pk

    @pk.workunit
    def twice(i, w, x):
        w[i] = 2.0 * x[i]

    def main():
        n = 64
        x = pk.View([n], pk.double)
        np.asarray(x)[:] = np.arange(n)
        w = pk.View([n], pk.double)
        pk.parallel_for(n, twice, w=w, x=x)
        del w  # dies unread: its pending launch can never be observed, and never runs
        y = pk.View([n], pk.double)
        pk.parallel_for(n, twice, w=y, x=x)
        print(float(np.asarray(y).sum()))

    if __name__ == "__main__":
        main()
""")


def test_a_buffer_whose_unread_writes_were_dropped_is_not_compared(tmp_path, monkeypatch):
    # ExaMiniMD's first binning: its offsets View is replaced before anything
    # reads it, so the recorded run dropped the launch that wrote it. The
    # replay runs that launch; what the dead buffer held at the end was never
    # observable, so it is left out of the comparison instead of differing.
    monkeypatch.setenv("PK_FUSION_DISABLE", "memo")  # record every launch (no run-at-once)
    printed, replayed = record_then_replay(tmp_path, DIES_UNREAD, "--both")
    assert float(printed) == 2.0 * np.arange(64).sum()
    assert replayed.count("final buffers: equal to the recording") == 2, replayed
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    dropped = [e for e in events if e.get("ev") == "dropped"]
    assert len(dropped) == 1 and len(dropped[0]["seqs"]) == 1 and len(dropped[0]["buffers"]) == 1


RANDOM = textwrap.dedent("""
    import pykokkos as pk

    @pk.workunit
    def draw(i, pool, v):
        v[i] = v[i] + pk.rand(pk.double)

    if __name__ == "__main__":
        v = pk.View([100], pk.double)
        pool = pk.Random_XorShift64_Pool(12345, 100)
        for _ in range(2):
            pk.parallel_for(100, draw, pool=pool, v=v)
        print(float(v[7]))
""")


def test_replay_of_a_random_pool_draws_the_recorded_streams(tmp_path):
    """The replay passes each launch's recorded stream (a pool to the runtime,
    which knows pools by their class) and reproduces the draws."""
    printed, replayed = record_then_replay(tmp_path, RANDOM, "--both")
    assert 0.0 < float(printed) < 2.0
    assert replayed.count("final buffers: equal to the recording (1 of 1 compared)") == 2, replayed
