"""`python -m pykokkos doctor`: what this machine offers the runtime, and for
anything missing, the fix. It looks without building or compiling anything
(pk.config() would build Kokkos on a fresh install; this does not)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..install import kokkos_setup


def _version(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "?"


def _kokkos(root: Path, name: str) -> tuple[bool, str]:
    explicit = os.environ.get("PK_KOKKOS_ROOT")
    prefix = Path(explicit) if explicit else root / f"kokkos-{kokkos_setup.KOKKOS_VERSION}-{name}"
    if (prefix / "include" / "KokkosCore_config.h").exists():
        return True, f"{prefix}"
    if explicit:
        return False, f"PK_KOKKOS_ROOT={explicit} has no include/KokkosCore_config.h: point it at a Kokkos install"
    return False, (
        f"not built yet ({prefix}): the first kernel builds it (a few minutes), or `python -m pykokkos.install.kokkos_setup` now"
    )


def checks() -> list[tuple[str, bool, str]]:
    """(what, found, detail or fix) for each thing the runtime may use."""
    rows = []
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    rows.append(
        (
            "C++ compiler",
            bool(cxx and shutil.which(cxx)),
            f"{cxx}: {_version([cxx, '--version'])}"
            if cxx and shutil.which(cxx)
            else "none: install g++ (Debian: `apt-get install g++`) or set CXX",
        )
    )
    try:
        root = kokkos_setup.cache_root()
        writable = os.access(root, os.W_OK)
        kernels = root / "kernels"
        n = len(list(kernels.glob("*.so"))) if kernels.is_dir() else 0
        rows.append(
            (
                "cache folder",
                writable,
                f"{root} ({n} compiled kernels)" if writable else f"{root} is not writable: set PK_CACHE_DIR to a folder of yours",
            )
        )
    except SystemExit:  # kokkos_setup.fail has said why on stderr
        return rows + [("cache folder", False, "unusable (see above): set PK_CACHE_DIR")]
    beside = Path(sys.executable).parent
    tools = [t for t in ("cmake", "ninja") if not (shutil.which(t) or (beside / t).exists())]
    rows.append(("Kokkos (host)", *_kokkos(root, "host")))
    rows.append(
        (
            "cmake, ninja",
            True,
            "found (for the Kokkos build)" if not tools else f"{', '.join(tools)} not found: the Kokkos build installs them with pip",
        )
    )
    nvcc = shutil.which("nvcc") or next(
        (str(p) for p in (Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / "nvcc",) if p.exists()), None
    )
    gpu = _version(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]) if shutil.which("nvidia-smi") else None
    if nvcc:
        ok, where = _kokkos(root, "cuda")
        rows.append(
            (
                "CUDA",
                True,
                f"{nvcc}: {_version([nvcc, '--version']).strip()}; GPU: {gpu or 'none seen'}; "
                f"CUDA Kokkos: {where if ok else 'not built yet (PK_KOKKOS_CUDA=1 builds it at the first kernel)'}",
            )
        )
    else:
        rows.append(
            (
                "CUDA",
                False,
                "no nvcc: the Cuda space needs the CUDA toolkit (nvcc on PATH or CUDA_HOME); "
                "the host spaces (OpenMP, Serial) work without it",
            )
        )
    for module, what, fix in (
        ("numba", "Numba", "pip install numba: pykokkos.numba falls back to plain Python for functions it cannot translate"),
        ("mpi4py", "MPI (mpi4py)", "pip install mpi4py mpich: for programs on several ranks"),
        ("scipy", "SciPy", "pip install scipy: only the tests compare special functions with it"),
    ):
        spec = importlib.util.find_spec(module)
        if spec is None:
            rows.append((what, False, fix))
        else:
            version = _version([sys.executable, "-c", f"import {module}; print({module}.__version__)"])
            rows.append((what, True, version))
    return rows


def doctor() -> int:
    rows = checks()
    width = max(len(w) for w, _, _ in rows)
    for what, ok, detail in rows:
        print(f"{'ok     ' if ok else 'missing'}  {what:<{width}}  {detail}")
    # Only a compiler and a usable cache folder are needed for the host runtime.
    needed = {"C++ compiler", "cache folder"}
    return 0 if all(ok for what, ok, _ in rows if what in needed) else 1
