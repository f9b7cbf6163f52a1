"""Traces of programs that hand launches memory the runtime does not own:
NumPy arrays passed straight to a launch (whole, strided, offset, aliased,
2-D and a row of it), a team kernel over them, a DLPack import. Each is
recorded with data, eagerly and under PK_FUSE=1, and replayed unfused and
fused: every buffer must be compared and equal, and the stored bytes must be
what each launch saw (before it ran, after the host's writes)."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytestmark = [pytest.mark.eager_only, pytest.mark.host_only("records and replays on the host in child processes")]

PROGRAM = textwrap.dedent('''
    import numpy as np
    import pykokkos as pk


    @pk.workunit
    def twice(i, x, y):
        y[i] = 2.0 * x[i]


    @pk.workunit
    def bump(i, y):
        y[i] = y[i] + 1.0


    @pk.workunit
    def rows(i, j, m):
        m[i, j] = m[i, j] * 3.0 + i - j


    @pk.workunit
    def total(i, acc, y):
        acc += y[i]


    @pk.workunit
    def team_sum(m: pk.TeamMember, a, out):
        r = m.league_rank()

        def body(j, acc):
            acc += a[r, j]

        s = pk.parallel_reduce(pk.TeamThreadRange(m, a.extent(1)), body)
        if m.team_rank() == 0:
            out[r] = s


    class OnlyDLPack:
        """Memory that arrives only through the DLPack protocol."""

        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, **kw):
            return self.arr.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.arr.__dlpack_device__()


    def main():
        rng = np.random.default_rng(7)
        x = rng.random(64)
        y = np.zeros(64)
        pk.parallel_for(64, twice, x=x, y=y)                    # whole arrays
        x[:8] = -1.0                                            # the host writes x between launches
        pk.parallel_for(32, twice, x=x[::2], y=y[32:])          # strided and offset subviews
        pk.parallel_for(16, bump, y=y[8:24])                    # another alias of y's memory
        big = rng.random((6, 40))
        pk.parallel_for(pk.MDRangePolicy([0, 0], [6, 40]), rows, m=big)
        pk.parallel_for(40, bump, y=big[3])                     # a row of the 2-D array
        out = np.zeros(6)
        pk.parallel_for("team", pk.TeamPolicy(6, pk.AUTO), team_sum, a=big, out=out)
        d = OnlyDLPack(np.linspace(0.0, 1.0, 50))
        pk.parallel_for(50, bump, y=d)                          # a DLPack import
        s = pk.parallel_reduce(64, total, y=y)
        print(json.dumps([float(s), out.tolist(), d.arr.tolist()]))


    if __name__ == "__main__":
        import json
        main()
''')


def expected():
    rng = np.random.default_rng(7)
    x = rng.random(64)
    y = 2.0 * x
    x[:8] = -1.0
    y[32:] = 2.0 * x[::2]
    y[8:24] += 1.0
    big = rng.random((6, 40))
    big = big * 3.0 + np.arange(6)[:, None] - np.arange(40)[None, :]
    big[3] += 1.0
    return x, y, big, np.linspace(0.0, 1.0, 50) + 1.0


def run(args, **kw):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, **kw)


@pytest.fixture(scope="module", params=["0", "1"], ids=["eager", "fused"])
def recorded(request, tmp_path_factory):
    d = tmp_path_factory.mktemp(f"foreign{request.param}")
    prog = d / "prog.py"
    prog.write_text(PROGRAM)
    trace = d / "t.jsonl"
    r = run([prog], cwd=d, env=dict(os.environ, PK_TRACE=str(trace), PK_TRACE_DATA="1", PK_FUSE=request.param))
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in open(trace)]
    return trace, events, json.loads(r.stdout)


def test_the_program_computes_what_numpy_does(recorded):
    _, _, (s, out, d) = recorded
    x, y, big, dl = expected()
    assert s == pytest.approx(y.sum(), rel=1e-14)
    np.testing.assert_allclose(out, big.sum(axis=1), rtol=1e-14)
    np.testing.assert_array_equal(d, dl)


def test_replay_unfused_and_fused_compares_every_buffer_equal(recorded):
    trace, events, _ = recorded
    buffers = {a["buffer"] for e in events if e.get("ev") == "launch" for a in e["args"] if a["kind"] == "view"}
    # x, y, big, out, the DLPack array: aliases and subviews of one array are one buffer.
    assert len(buffers) == 5
    r = run(["-m", "pykokkos", "replay", trace, "--both"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("final buffers: equal to the recording (5 of 5 compared)") == 2, r.stdout


def test_each_buffer_is_stored_as_its_launch_saw_it(recorded):
    trace, events, _ = recorded
    data = str(trace) + ".data"
    launches = [e for e in events if e.get("ev") == "launch"]
    first = {a["name"]: a["buffer"] for a in launches[0]["args"]}
    x0 = np.random.default_rng(7).random(64)
    # Stored before the first launch ran: x as made, y still zeros.
    np.testing.assert_array_equal(np.fromfile(f"{data}/{first['x']}.in"), x0)
    np.testing.assert_array_equal(np.fromfile(f"{data}/{first['y']}.in"), np.zeros(64))
    # The host wrote x before the second launch: stored again, and only x.
    assert list(launches[1].get("reload", {})) == [str(first["x"])]
    x1 = x0.copy()
    x1[:8] = -1.0
    np.testing.assert_array_equal(np.fromfile(f"{data}/{launches[1]['reload'][str(first['x'])]}"), x1)
    # y is used four more times and only kernels wrote it: never stored again.
    assert not any(str(first["y"]) in e.get("reload", {}) for e in launches)
    # Its result is what the kernels left, not read back from the host at the end.
    assert not any(e.get("ev") == "host_data" for e in events)
    np.testing.assert_array_equal(np.fromfile(f"{data}/{first['y']}.out"), expected()[1])


def test_a_buffer_whose_first_bytes_are_not_stored_makes_the_replay_differ(recorded, tmp_path):
    """The check that the replay compares: x's first bytes zeroed (as if
    they had been stored after the kernel, or not at all)."""
    trace, events, _ = recorded
    import shutil

    copy = tmp_path / "t.jsonl"
    lines = open(trace).read().splitlines(True)
    header = json.loads(lines[0])
    header["data"] = "t.jsonl.data"  # a relative folder is the trace's neighbour
    copy.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    shutil.copytree(str(trace) + ".data", str(copy) + ".data")
    x = next(a["buffer"] for a in events[1]["args"] if a["name"] == "x")
    f = tmp_path / "t.jsonl.data" / f"{x}.in"
    f.write_bytes(bytes(f.stat().st_size))
    r = run(["-m", "pykokkos", "replay", copy, "--no-fuse"])
    assert r.returncode == 1 and f"DIFFER: buffer #{events[1]['args'][1]['buffer']}" in r.stdout, r.stdout + r.stderr


BINSORT = textwrap.dedent("""
    import numpy as np
    import pykokkos as pk

    keys = pk.array(np.random.default_rng(3).integers(0, 50, 300).astype(np.int64))
    values = pk.array(np.arange(300, dtype=np.float64))
    sorter = pk.BinSort(keys, pk.BinOp1D(keys, 10, 0, 50))
    sorter.create_permute_vector()
    sorter.sort(values)
    print(float(np.asarray(values)[0]))
""")


def test_a_program_using_the_runtimes_own_kernels_replays(tmp_path):
    # pk.BinSort's kernels live in the pykokkos package and import relatively:
    # the replay imports them in their package, not as a loose file.
    prog = tmp_path / "prog.py"
    prog.write_text(BINSORT)
    trace = tmp_path / "t.jsonl"
    r = run([prog], cwd=tmp_path, env=dict(os.environ, PK_TRACE=str(trace), PK_TRACE_DATA="1"))
    assert r.returncode == 0, r.stderr
    r = run(["-m", "pykokkos", "replay", trace, "--both"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("final buffers: equal to the recording") == 2, r.stdout


DIVIDES = textwrap.dedent("""
    import numpy as np
    import pykokkos as pk

    @pk.workunit
    def shares(i, total, d, out):
        out[i] = total // d[i]

    d = pk.array(np.arange(1, 65, dtype=np.int64))
    out = pk.View([64], pk.int64)
    pk.parallel_for(64, shares, total=1000, d=d, out=out)
    print(int(np.asarray(out).sum()))
""")


def test_the_untimed_replay_pass_runs_on_the_recorded_data(tmp_path):
    # The kernel divides by what the program stored: on zeroed memory (what the
    # warm-up pass used to run on) it raised ZeroDivisionError, and a kernel
    # whose loops follow its data (a neighbour list) ran for minutes.
    prog = tmp_path / "prog.py"
    prog.write_text(DIVIDES)
    trace = tmp_path / "t.jsonl"
    r = run([prog], cwd=tmp_path, env=dict(os.environ, PK_TRACE=str(trace), PK_TRACE_DATA="1"))
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == sum(1000 // k for k in range(1, 65))
    r = run(["-m", "pykokkos", "replay", trace, "--both"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("final buffers: equal to the recording") == 2, r.stdout
