"""The on-disk kernel cache, seen from separate processes.

Each test gives its child processes a private cache under tmp_path (PK_CACHE_DIR),
with PK_KOKKOS_ROOT pointing at the shared Kokkos install.
"""
from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

import numpy as np
import pytest

# Host toolchain only: these tests seed the precompiled header and fake the host
# compiler; CUDA builds use neither (the cache logic they check is the same code).
pytestmark = [pytest.mark.eager_only, pytest.mark.host_only]

from conftest import (child_env, closed_compile_spans, kernel_dir, kernel_files, kernel_sos, real_compiler,
                      run_script, seed_precompiled_header, start_script, strip_ansi, write_script)

REUSE_SCRIPT = """
    import json
    import numpy as np
    import pykokkos as pk

    @pk.workunit
    def cache_probe_axpy(i, a, x, y):
        y[i] = a * x[i] + y[i]

    x = np.arange(10.0)
    y = np.ones(10)
    pk.parallel_for(10, cache_probe_axpy, a=2.0, x=x, y=y)
    xi = np.arange(10, dtype=np.int32)
    yi = np.ones(10, np.int32)
    pk.parallel_for(10, cache_probe_axpy, a=3, x=xi, y=yi)
    y2 = np.ones(10)
    pk.parallel_for(10, cache_probe_axpy, a=2.0, x=x, y=y2)  # first signature again
    print(json.dumps([y.tolist(), yi.tolist(), y2.tolist()]))
"""


def _reuse_expected():
    x = np.arange(10.0)
    xi = np.arange(10, dtype=np.int32)
    return [(2.0 * x + 1).tolist(), (3 * xi + 1).tolist(), (2.0 * x + 1).tolist()]


def test_second_process_reuses_cache_without_compiling(tmp_path, toolchain):
    cache = tmp_path / "cache"
    seed_precompiled_header(cache, toolchain)
    script = write_script(tmp_path, "reuse.py", REUSE_SCRIPT)
    env = child_env(cache, toolchain, PK_LOG="info")

    first = run_script(script, env)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == _reuse_expected()
    compiles = closed_compile_spans(first.stderr)
    # Two signatures of one workunit: two kernel compiles (the third launch reuses the first).
    assert len([c for c in compiles if "cache_probe_axpy" in c]) == 2, strip_ansi(first.stderr)
    sos = kernel_sos(cache)
    assert len(sos) == 2
    files_after_first = kernel_files(cache)
    mtimes = {f: os.stat(kernel_dir(cache) / f).st_mtime_ns for f in files_after_first}

    second = run_script(script, env)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout) == _reuse_expected()
    assert closed_compile_spans(second.stderr) == [], strip_ansi(second.stderr)
    assert "precompile_header" not in strip_ansi(second.stderr)
    assert "cache hit" in strip_ansi(second.stderr)
    assert kernel_files(cache) == files_after_first
    assert {f: os.stat(kernel_dir(cache) / f).st_mtime_ns for f in files_after_first} == mtimes


CONCURRENT_SCRIPT = """
    import json, os, sys, time
    import numpy as np
    import pykokkos as pk

    @pk.workunit
    def concurrent_new_kernel(i, x, y):
        y[i] = x[i] * x[i] + 0.25

    ready, go = sys.argv[1], sys.argv[2]
    open(ready, "w").close()
    deadline = time.time() + 60
    while not os.path.exists(go):
        if time.time() > deadline:
            sys.exit("never got the go signal")
        time.sleep(0.002)
    x = np.arange(50.0)
    y = np.zeros(50)
    pk.parallel_for(50, concurrent_new_kernel, x=x, y=y)
    print(json.dumps(y.tolist()))
"""


def test_two_processes_compile_the_same_new_kernel_at_once(tmp_path, toolchain):
    # A completely fresh cache: both processes also race to build the precompiled header.
    cache = tmp_path / "cache"
    script = write_script(tmp_path, "concurrent.py", CONCURRENT_SCRIPT)
    env = child_env(cache, toolchain, PK_LOG="info")
    go = tmp_path / "go"
    procs, readies = [], []
    for k in range(2):
        ready = tmp_path / f"ready{k}"
        readies.append(ready)
        procs.append(start_script(script, env, str(ready), str(go)))
    try:
        deadline = time.time() + 60
        while not all(r.exists() for r in readies):
            assert time.time() < deadline, "children did not start"
            assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
            time.sleep(0.01)
        go.touch()
        outs = [p.communicate(timeout=300) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    expected = (np.arange(50.0) ** 2 + 0.25).tolist()
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert json.loads(out) == expected
    # One finished kernel, no half-written or temporary files left behind.
    assert len(kernel_sos(cache)) == 1
    leftovers = [f for f in kernel_files(cache) if f.startswith(".") or ".tmp" in f]
    assert leftovers == []
    top = os.listdir(cache)
    assert [f for f in top if f.startswith(".") or ".tmp" in f] == []
    pchs = [f for f in top if f.startswith("pch-")]
    assert len(pchs) == 1
    assert (cache / pchs[0] / ".complete").exists()
    assert (cache / pchs[0] / "pk_prelude.hpp.gch").exists()
    # What they left is a working cache: a third process compiles nothing.
    go.touch()
    third = run_script(script, env, str(tmp_path / "ready2"), str(go))
    assert third.returncode == 0, third.stderr
    assert json.loads(third.stdout) == expected
    assert closed_compile_spans(third.stderr) == [], strip_ansi(third.stderr)


FAKE_CXX = """#!{python}
# A C++ compiler that fails on workunit kernels (after writing half an output file)
# and behaves like the real one for everything else.
import os, sys
args = sys.argv[1:]
if "-shared" in args and not any("support-" in a for a in args):
    out = args[args.index("-o") + 1]
    with open(out, "wb") as f:
        f.write(b"\\x7fELF half-written")
    sys.stderr.write("kernel.cpp:1:1: error: injected failure for the test\\n")
    sys.exit(1)
os.execv({real!r}, [{real!r}] + args)
"""

FAILING_SCRIPT = """
    import json
    import numpy as np
    import pykokkos as pk

    @pk.workunit
    def doomed_kernel(i, x):
        x[i] = x[i] + 1.0

    x = np.zeros(5)
    messages = []
    for attempt in range(2):
        try:
            pk.parallel_for(5, doomed_kernel, x=x)
        except pk.CompileError as e:
            assert isinstance(e, RuntimeError)
            messages.append(str(e))
    print(json.dumps({"messages": messages, "x": x.tolist()}))
"""


def test_failed_compile_leaves_nothing_in_kernels_dir(tmp_path, toolchain):
    fake = tmp_path / "fake-cxx"
    fake.write_text(FAKE_CXX.format(python=sys.executable, real=real_compiler(toolchain)))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    cache = tmp_path / "cache"
    env = child_env(cache, toolchain, CXX=str(fake))
    ident = write_script(tmp_path, "ident.py", "import pykokkos as pk\nprint(pk.config()['identity'])\n")
    probe = run_script(ident, env)
    assert probe.returncode == 0, probe.stderr
    seed_precompiled_header(cache, toolchain, identity=probe.stdout.strip())

    script = write_script(tmp_path, "failing.py", FAILING_SCRIPT)
    res = run_script(script, env)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert len(out["messages"]) == 2  # a retry fails the same way; no broken kernel is cached
    assert out["x"] == [0.0] * 5  # nothing ran
    msg = out["messages"][0]
    assert "doomed_kernel" in msg
    assert "injected failure" in msg
    # Nothing at all in the kernels dir: no .so, no partial .so, no .cpp, no temp files.
    assert kernel_files(cache) == set()
    # The generated source is kept for the bug report, outside the kernels dir.
    kept = [Path(w) for w in msg.split() if w.endswith(".cpp")]
    assert kept, msg
    assert kept[0].exists()
    assert kept[0].parent != kernel_dir(cache)
    assert "doomed_kernel" in kept[0].read_text()


def test_a_damaged_cached_kernel_is_rebuilt_not_loaded(tmp_path, toolchain):
    cache = tmp_path / "cache"
    seed_precompiled_header(cache, toolchain)
    script = write_script(tmp_path, "reuse.py", REUSE_SCRIPT)
    env = child_env(cache, toolchain, PK_LOG="warn")
    first = run_script(script, env)
    assert first.returncode == 0, first.stderr
    sos = kernel_sos(cache)
    assert len(sos) == 2
    sizes = {}
    for so in sos:  # truncated mid-file, as a full disk or a killed copy leaves it
        path = kernel_dir(cache) / so
        sizes[so] = path.stat().st_size
        path.write_bytes(path.read_bytes()[: sizes[so] // 3])
    second = run_script(script, env)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout) == _reuse_expected()
    err = strip_ansi(second.stderr)
    assert err.count("pykokkos: warning: not loading cached kernel") == 2, err
    assert err.count("do not match the hash recorded when it was built; rebuilding it") == 2, err
    assert {so: (kernel_dir(cache) / so).stat().st_size for so in kernel_sos(cache)} == sizes
