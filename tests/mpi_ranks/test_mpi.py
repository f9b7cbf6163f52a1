"""Several MPI ranks (mpiexec -n 2, one thread each on this 2-core machine):
the halo-exchange example against NumPy, lazy work around messages, and one
compile for two ranks launching a new kernel into an empty cache."""
import glob
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.eager_only  # each test starts its own processes

pytest.importorskip("mpi4py", reason="the mpi extra installs mpi4py and MPICH (pip install .[mpi])")

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MPIEXEC = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")


def mpirun(*args, ranks=2, env=None, timeout=600):
    e = dict(os.environ)
    e.pop("PK_FUSE", None)
    e.update(env or {})
    r = subprocess.run([MPIEXEC, "-n", str(ranks), sys.executable, "-m", "mpi4py", *map(str, args)],
                       capture_output=True, text=True, env=e, timeout=timeout, cwd=HERE)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    return r.stdout


@pytest.mark.parametrize("fuse", ["0", "1"])
def test_heat_halo_exchange_equals_numpy(fuse):
    out = mpirun(ROOT / "examples" / "mpi" / "heat2d.py", 48, 30, "--check", env={"PK_FUSE": fuse})
    assert "2 rank(s)" in out and "equal to NumPy's run" in out


@pytest.mark.parametrize(("ranks", "fuse"), [(1, "0"), (2, "0"), (2, "1")])
def test_conjugate_gradients_equal_scipy(ranks, fuse):
    """Global dot products every iteration (allreduce of lazy totals) and a halo
    exchange: the solution equals SciPy's direct solve and the exact one."""
    out = mpirun(ROOT / "examples" / "mpi" / "cg2d.py", 40, "--check", ranks=ranks, env={"PK_FUSE": fuse})
    assert f"{ranks} rank(s)" in out and "equal to SciPy's solve" in out


@pytest.mark.parametrize("fuse", ["0", "1"])
def test_lazy_work_around_messages(fuse):
    out = mpirun("exchange.py", env={"PK_FUSE": fuse})
    assert "exchange ok" in out


@pytest.mark.parametrize("fuse", ["0", "1"])
def test_sendrecv_of_view_rows(fuse):
    out = mpirun("sendrecv.py", env={"PK_FUSE": fuse})
    assert out.count("sendrecv ok") == 2, out


@pytest.mark.parametrize("fuse", ["0", "1"])
def test_exchange_on_every_path_equals_numpy(fuse):
    # Null pairs between live ones, 96 KiB rows, strided columns, int32, a pair with
    # itself, more allocations than a rank keeps exported, a resized View, another
    # thread, a size mismatch (and the exchange after it): here the host path only.
    out = mpirun("halo_paths.py", env={"PK_FUSE": fuse})
    assert out.count("halo path host ok") == 2, out


def test_device_buffers_need_a_cuda_aware_mpi():
    assert "device buffer ok" in mpirun("device_buffer.py", ranks=1)


def test_two_ranks_compile_a_new_kernel_once(tmp_path):
    import pykokkos as pk

    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    stem = tmp_path / "t"
    out = mpirun("compile_once.py", stem, env={"PK_CACHE_DIR": str(cache), "PK_KOKKOS_ROOT": pk.config()["kokkos"]})
    # The node's cores split between its two ranks (one thread each on a 2-core machine).
    each = max(1, (os.cpu_count() or 1) // 2)
    assert out.count(f"threads {each}") == 2, out
    built = []
    for f in sorted(glob.glob(f"{stem}.*.jsonl")):
        events = [json.loads(line) for line in open(f)]
        built += [e for e in events if e.get("ev") == "compile" and e.get("kernel") == "brand_new" and not e["cached"]]
    assert len(glob.glob(f"{stem}.*.jsonl")) == 2
    assert len(built) == 1, built


def test_per_rank_traces_carry_the_rank_and_merge(tmp_path):
    mpirun("exchange.py", env={"PK_TRACE": str(tmp_path / "run.jsonl")})
    traces = sorted(glob.glob(str(tmp_path / "run.rank*.jsonl")))
    assert [pathlib.Path(t).name for t in traces] == ["run.rank0.jsonl", "run.rank1.jsonl"]
    headers = [json.loads(open(t).readline()) for t in traces]
    assert [(h["rank"], h["ranks"]) for h in headers] == [(0, 2), (1, 2)]
    out = tmp_path / "merged.json"
    r = subprocess.run([sys.executable, "-m", "pykokkos", "trace", "merge", *traces, "--chrome", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    events = json.loads(out.read_text())["traceEvents"]
    assert {e["pid"] for e in events} == {0, 1}
    assert sum(1 for e in events if e.get("cat") == "kernel" and e["pid"] == 1) >= 3


def replay(trace, *args):
    return subprocess.run([sys.executable, "-m", "pykokkos", "replay", str(trace), *args],
                          capture_output=True, text=True, cwd=HERE)


@pytest.mark.parametrize("fuse", ["0", "1"])
def test_one_ranks_trace_replays_alone_with_the_messages_it_received(tmp_path, fuse):
    mpirun(ROOT / "examples" / "mpi" / "heat2d.py", 32, 6,
           env={"PK_TRACE": str(tmp_path / "h.jsonl"), "PK_TRACE_DATA": "1", "PK_FUSE": fuse})
    traces = [tmp_path / f"h.rank{r}.jsonl" for r in (0, 1)]
    for t in traces:
        launches = [json.loads(line) for line in open(t) if '"ev":"launch"' in line]
        # Each step's received halo row is stored before the step that reads it.
        assert sum(len(e.get("reload", {})) for e in launches) >= 5, t
        r = replay(t, "--both")
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.count("final buffers: equal to the recording") == 2, r.stdout
        assert "(0 of" not in r.stdout
    # With one received message altered the rank's replay differs: the messages come from the trace.
    launches = [json.loads(line) for line in open(traces[1]) if '"ev":"launch"' in line]
    last = [e for e in launches if e.get("reload")][-1]
    f = tmp_path / "h.rank1.jsonl.data" / next(iter(last["reload"].values()))
    f.write_bytes(b"\x3f" * f.stat().st_size)
    r = replay(traces[1], "--no-fuse")
    assert r.returncode == 1 and "DIFFER" in r.stdout, r.stdout + r.stderr
    s = subprocess.run([sys.executable, "-m", "pykokkos", "trace", "summary", *map(str, traces), "--bandwidth", "10"],
                       capture_output=True, text=True, cwd=HERE)
    assert s.returncode == 0, s.stderr
    assert "(rank 0 of 2)" in s.stdout and "(rank 1 of 2)" in s.stdout and "all ranks (0, 1):" in s.stdout
