"""A fresh install (no `make setup`): the first kernel builds Kokkos with a
progress line on stderr, then runs. The build itself (kokkos_setup.ensure,
minutes of CMake) is stood in for by linking the Kokkos this suite uses into
the child's empty cache folder; everything around it is the real path."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import pykokkos as pk

pytestmark = [pytest.mark.eager_only, pytest.mark.host_only("the host Kokkos build")]

CHILD = textwrap.dedent("""
    import pathlib, sys
    import numpy as np
    import pykokkos as pk
    from pykokkos.install import kokkos_setup

    calls = []

    def stand_in(cuda):
        calls.append(cuda)
        root = kokkos_setup.cache_root()
        (root / "kokkos-3.4.01-host").symlink_to(pathlib.Path(sys.argv[1]))
        return root / "kokkos-3.4.01-host"

    kokkos_setup.ensure = stand_in

    @pk.workunit
    def iota(i, a):
        a[i] = i * 2.0

    a = pk.View([5], pk.double)
    pk.parallel_for(5, iota, a=a)
    print(calls, np.asarray(a).tolist())
""")


def test_the_first_kernel_of_a_fresh_cache_builds_kokkos(tmp_path):
    real = pk.config()["kokkos"]
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    prog = tmp_path / "child.py"
    prog.write_text(CHILD)
    env = dict(os.environ, PK_CACHE_DIR=str(cache))
    env.pop("PK_KOKKOS_ROOT", None)  # the project's own Kokkos, looked for in the cache
    r = subprocess.run([sys.executable, str(prog), real], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[False] [0.0, 2.0, 4.0, 6.0, 8.0]", r.stdout
    assert "is not built yet" in r.stderr and "Kokkos ready after" in r.stderr, r.stderr


def test_doctor_reports_what_is_missing_and_the_fix(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = dict(os.environ, PK_CACHE_DIR=str(cache))
    env.pop("PK_KOKKOS_ROOT", None)
    r = subprocess.run([sys.executable, "-m", "pykokkos", "doctor"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {line[9:].split("  ")[0].strip(): line for line in r.stdout.splitlines()}
    assert rows["Kokkos (host)"].startswith("missing") and "the first kernel builds it" in rows["Kokkos (host)"]
    assert rows["C++ compiler"].startswith("ok") and rows["cache folder"].startswith("ok")
    assert not any((cache / d).exists() for d in ("kernels", "build")), "doctor builds nothing"
    r = subprocess.run([sys.executable, "-m", "pykokkos", "doctor"], env=dict(env, CXX="no-such-compiler"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "install g++" in r.stdout, r.stdout


def test_the_cuda_build_says_what_it_needs(tmp_path):
    # No nvcc on the child's PATH (CUDA lives under /usr/local/cuda on these
    # machines): the first kernel says in one line what the CUDA build needs.
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    prog = tmp_path / "child.py"
    prog.write_text(CHILD.replace("kokkos_setup.ensure = stand_in", ""))
    env = dict(os.environ, PK_CACHE_DIR=str(cache), PK_KOKKOS_CUDA="1",
               PATH=f"{os.path.dirname(sys.executable)}:/usr/bin:/bin")
    env.pop("PK_KOKKOS_ROOT", None)
    r = subprocess.run([sys.executable, str(prog), "unused"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert "needs nvcc, the CUDA toolkit's compiler, on PATH" in r.stderr, r.stderr
