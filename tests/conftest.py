"""Shared helpers for the pykokkos-fuse test suite.

In-process tests use the normal kernel cache (whatever PK_CACHE_DIR / ~/.cache says),
so a second run of the suite compiles nothing. Tests about the cache itself run child
Python processes against a private cache folder under tmp_path.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

# Every flush plan is verified in tests (each launch in one region, regions in
# dependency order): read once when the extension loads, so set it first.
os.environ.setdefault("PK_VERIFY", "1")
# Fusion checks must not depend on this machine's timing: the adaptive bypass
# decides by launch counts only here (tests/test_fusion.py tests the cost side).
os.environ.setdefault("PK_FUSION_DISABLE", "adaptive_cost")

import pykokkos as pk  # noqa: E402

# Every View dtype, with the NumPy dtype it must match on the host.
ALL_DTYPES = [
    (pk.int8, np.int8),
    (pk.int16, np.int16),
    (pk.int32, np.int32),
    (pk.int64, np.int64),
    (pk.uint8, np.uint8),
    (pk.uint16, np.uint16),
    (pk.uint32, np.uint32),
    (pk.uint64, np.uint64),
    (pk.float32, np.float32),
    (pk.float64, np.float64),
    (pk.bool, np.bool_),
]
ALL_DTYPE_IDS = [np.dtype(n).name for _, n in ALL_DTYPES]

# The few dtypes kernels are compiled for (each one is a separate compile).
KERNEL_DTYPES = [
    (pk.float64, np.float64),
    (pk.float32, np.float32),
    (pk.int32, np.int32),
    (pk.int64, np.int64),
    (pk.uint8, np.uint8),
]
KERNEL_DTYPE_IDS = [np.dtype(n).name for _, n in KERNEL_DTYPES]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def closed_compile_spans(stderr: str) -> list[str]:
    """Lines of PK_LOG=info output saying a 'compile' span closed (a C++ compile ran).

    'precompile_header' spans are not counted here; they are a different stage.
    """
    out = []
    for line in strip_ansi(stderr).splitlines():
        if re.search(r"(^|[\s:])compile\{", line) and "close" in line:
            out.append(line)
    return out


def kernel_dir(cache: Path) -> Path:
    return Path(cache) / "kernels"


def kernel_files(cache: Path) -> set[str]:
    d = kernel_dir(cache)
    return set(os.listdir(d)) if d.is_dir() else set()


def kernel_sos(cache: Path) -> set[str]:
    """Compiled workunit libraries in a cache (the support library excluded)."""
    return {f for f in kernel_files(cache) if f.endswith(".so") and not f.startswith("support-")}


@pytest.fixture(scope="session")
def toolchain():
    """pk.config() of this process, with the precompiled header guaranteed to exist."""
    @pk.workunit
    def _warm(i, x):
        x[i] = x[i] + 1.0

    x = np.zeros(3)
    pk.parallel_for(3, _warm, x=x)
    assert x.tolist() == [1.0, 1.0, 1.0]
    cfg = pk.config()
    pch = Path(cfg["cache"]) / f"pch-{cfg['identity']}"
    assert (pch / ".complete").exists()
    return cfg


def child_env(cache: Path, toolchain: dict, **extra: str) -> dict:
    """Environment of a child process using the private cache `cache`."""
    env = dict(os.environ)
    env.pop("PK_LOG", None)
    env.pop("PK_FUSE", None)
    env.pop("PK_FUSION", None)
    env["PK_CACHE_DIR"] = str(cache)
    env["PK_KOKKOS_ROOT"] = toolchain["kokkos"]
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def seed_precompiled_header(cache: Path, toolchain: dict, identity: str | None = None) -> None:
    """Lets a private cache reuse this process's precompiled header (it depends only on
    the toolchain identity, not on the cache folder), saving the multi-second build.
    Kernels, the support library and everything else are still built fresh."""
    identity = identity or toolchain["identity"]
    src = Path(toolchain["cache"]) / f"pch-{toolchain['identity']}"
    cache.mkdir(parents=True, exist_ok=True)
    dst = cache / f"pch-{identity}"
    if not dst.exists():
        os.symlink(src, dst, target_is_directory=True)


def write_script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def run_script(path: Path, env: dict, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(path), *args], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=str(path.parent))


def start_script(path: Path, env: dict, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(path), *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=str(path.parent))


def real_compiler(toolchain: dict) -> str:
    c = toolchain["compiler"]
    found = shutil.which(c)
    assert found, f"compiler {c!r} not found on PATH"
    return found


# --- the execution space under test ---------------------------------------------
# PK_TEST_SPACE=cuda|openmp|serial makes that space the default for every in-process
# test (CI runs the host default, OpenMP; `make test-gpu` runs the suite with cuda on
# the GPU machine). Tests marked `host_only` check behaviour that belongs to host
# memory or to the host toolchain; they are deselected (not run, not skipped) when
# the space under test is not a host space, and the run says how many. Tests marked
# `device_only` need a GPU and are collected only when the space under test is cuda.
TEST_SPACES = {"openmp": pk.OpenMP, "serial": pk.Serial, "cuda": pk.Cuda}
TEST_SPACE = os.environ.get("PK_TEST_SPACE", "openmp").strip().lower()
if TEST_SPACE not in TEST_SPACES:
    raise pytest.UsageError(f"PK_TEST_SPACE={TEST_SPACE!r}: use one of {', '.join(TEST_SPACES)}")
pk.set_default_space(TEST_SPACES[TEST_SPACE])
ON_DEVICE = TEST_SPACE == "cuda"


def pytest_collection_modifyitems(config, items):
    unwanted = "host_only" if ON_DEVICE else "device_only"
    kept, dropped = [], []
    for item in items:
        (dropped if item.get_closest_marker(unwanted) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


# --- eager and lazy (PK_FUSE=1) runs of the same tests -------------------------
# Every test runs twice, once eagerly and once with the lazy runtime, unless its
# module says `pytestmark = pytest.mark.eager_only` (tests of compile-time errors
# at the launch call, and of child processes with their own environment).

def pytest_configure(config):
    config.addinivalue_line("markers", "eager_only: runs only in eager mode (errors raised at the launch call)")
    config.addinivalue_line("markers", "host_only(why): checks host memory or the host toolchain; "
                            "not collected when PK_TEST_SPACE is a device space")
    config.addinivalue_line("markers", "device_only: needs a GPU; collected only when PK_TEST_SPACE=cuda")


def pytest_generate_tests(metafunc):
    if metafunc.definition.get_closest_marker("eager_only") is None:
        metafunc.parametrize("pk_mode", ["eager", "lazy"], indirect=True)


@pytest.fixture
def lazy():
    """Lazy mode for one test, its fusion reports so far cleared; pending
    work flushed after it."""
    pk._native.set_lazy(True)
    pk._native.explain_history()
    yield
    pk.flush()
    pk._native.set_lazy(False)


# Autouse: a test need not name the fixture to run in both modes (appending
# it to `fixturenames` parametrized the ids but never switched the mode on).
@pytest.fixture(autouse=True)
def pk_mode(request):
    mode = getattr(request, "param", "eager")
    pk._native.set_lazy(mode == "lazy")
    yield mode
    # Nothing pending may leak into the next test.
    pk.flush()
    pk._native.set_lazy(False)
