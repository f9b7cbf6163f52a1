"""Traces across spaces (on the GPU machine, `make test-gpu`): a host
recording replayed on the Cuda space, and a recording of CuPy arrays passed
straight to Cuda launches replayed on Cuda and back on the host; final
buffers equal (floating point within rounding where the space changed)."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from test_trace_foreign import PROGRAM as HOST_PROGRAM

pytestmark = [pytest.mark.eager_only, pytest.mark.device_only]

CUPY_PROGRAM = textwrap.dedent('''
    import json

    import cupy as cp
    import pykokkos as pk

    pk.set_default_space(pk.Cuda)


    @pk.workunit
    def axpy(i, a, x, y):
        y[i] = a * x[i] + y[i]


    @pk.workunit
    def total(i, acc, y):
        acc += y[i]


    if __name__ == "__main__":
        x = cp.arange(1000, dtype=cp.float64)
        y = cp.ones(1000)
        pk.parallel_for(1000, axpy, a=2.0, x=x, y=y)
        y[:10] = 5.0                                    # CuPy writes device memory between launches
        pk.parallel_for(500, axpy, a=0.5, x=x[::2], y=y[500:])
        s = pk.parallel_reduce(1000, total, y=y)
        print(json.dumps([float(s), cp.asnumpy(y).tolist()]))
''')


def record(tmp_path, program: str, fuse: str):
    prog = tmp_path / "prog.py"
    prog.write_text(program)
    trace = tmp_path / "t.jsonl"
    r = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True, cwd=tmp_path,
                       env=dict(os.environ, PK_TRACE=str(trace), PK_TRACE_DATA="1", PK_FUSE=fuse))
    assert r.returncode == 0, r.stderr
    return trace, r.stdout


def replay(trace, *args):
    r = subprocess.run([sys.executable, "-m", "pykokkos", "replay", str(trace), "--both", *args],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


@pytest.mark.parametrize("fuse", ["0", "1"])
def test_a_host_recording_replays_on_cuda(tmp_path, fuse):
    trace, _ = record(tmp_path, HOST_PROGRAM, fuse)
    out = replay(trace, "--space", "Cuda")
    assert out.count("final buffers: equal to the recording (5 of 5 compared") == 2, out


@pytest.mark.parametrize("fuse", ["0", "1"])
def test_cupy_arrays_recorded_on_cuda_replay_on_cuda_and_on_the_host(tmp_path, fuse):
    pytest.importorskip("cupy", reason="CuPy interop is what this checks")
    trace, printed = record(tmp_path, CUPY_PROGRAM, fuse)
    s, y = json.loads(printed)
    x = np.arange(1000.0)
    want = 2.0 * x + 1.0
    want[:10] = 5.0
    want[500:] += 0.5 * x[::2]
    np.testing.assert_array_equal(y, want)
    assert s == pytest.approx(want.sum(), rel=1e-13)
    events = [json.loads(line) for line in open(trace)][1:]
    launches = [e for e in events if e["ev"] == "launch"]
    assert len({a["buffer"] for e in launches for a in e["args"] if a["kind"] == "view"}) == 2
    assert list(launches[1]["reload"]) == [str(launches[0]["args"][2]["buffer"])]  # y, after CuPy wrote it
    for space in ([], ["--space", "OpenMP"]):
        out = replay(trace, *space)
        assert out.count("final buffers: equal to the recording (2 of 2 compared") == 2, out


CUDA_PROGRAM = textwrap.dedent('''
    import pykokkos as pk

    pk.set_default_space(pk.Cuda)


    @pk.workunit
    def axpy(i, a, x, y):
        y[i] = a * x[i] + y[i]


    if __name__ == "__main__":
        x, y = pk.View([1000], pk.double), pk.View([1000], pk.double)
        pk.parallel_for(1000, axpy, a=2.0, x=x, y=y)
        print(float(y[999]))
''')


@pytest.mark.parametrize("nvrtc", ["1", "0"])
def test_kernel_events_say_which_compiler_built_the_gpu_kernel(tmp_path, nvrtc, monkeypatch):
    monkeypatch.setenv("PK_NVRTC", nvrtc)
    trace, _ = record(tmp_path, CUDA_PROGRAM, "0")
    kernels = [e for e in map(json.loads, open(trace)) if e.get("ev") == "kernel" and e["name"] == "axpy"]
    assert [k["via"] for k in kernels] == ["nvrtc" if nvrtc == "1" else "kokkos"]
    r = subprocess.run([sys.executable, "-m", "pykokkos", "trace", "summary", str(trace)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert ("axpy [nvrtc]" in r.stdout) == (nvrtc == "1"), r.stdout
