"""Profiling traces: `PK_TRACE=<file>` records a whole run, `with
pk.trace.record(path):` a part of one; `PK_TRACE_DATA=1` (or `data=True`)
also stores every buffer's contents when the trace first sees it and at the
end, so a replay reproduces (and checks) the results exactly.

The file holds one JSON object per line (docs/trace-format.md): a header
with the format name and version, then `launch`, `flush`, `kernel` and
`compile` events in order. `python -m pykokkos replay|trace summary` read it.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import sys

from . import _native

__all__ = ["record", "start", "stop", "recording"]

_active: dict = {}


def data_dir(path: str) -> str:
    """Where the buffer contents of the trace at `path` are stored."""
    return os.fspath(path) + ".data"


def mpi_rank() -> tuple[int, int] | None:
    """(rank, ranks) from the MPI launcher's environment, when there are several."""
    for r, n in (("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("SLURM_PROCID", "SLURM_NTASKS")):
        if os.environ.get(r, "").isdigit() and os.environ.get(n, "").isdigit() and int(os.environ[n]) > 1:
            return int(os.environ[r]), int(os.environ[n])
    return None


def rank_path(path: str) -> str:
    """`run.jsonl` -> `run.rank1.jsonl` on rank 1 of several (PK_TRACE under mpiexec)."""
    mr = mpi_rank()
    if mr is None:
        return path
    base, ext = os.path.splitext(path)
    return f"{base}.rank{mr[0]}{ext}"


def start(path, data: bool | None = None) -> None:
    """Starts recording to `path` (what is pending runs first, unrecorded)."""
    path = os.fspath(path)
    if data is None:
        data = os.environ.get("PK_TRACE_DATA") == "1"
    _native.flush()
    header = {
        "python": platform.python_version(),
        "argv": sys.argv,
        "cwd": os.getcwd(),
        "lazy": bool(_native.lazy_enabled()),
        "data": data_dir(path) if data else None,
        # Where its modules were found (a launcher may have added folders).
        "sys_path": [os.path.abspath(p) for p in sys.path if p],
    }
    mr = mpi_rank()
    if mr is not None:
        header["rank"], header["ranks"] = mr
    _native.trace_start(path, json.dumps(header))
    _native.trace_data(data_dir(path) if data else None)
    _active["path"] = path


def stop() -> None:
    """Runs what is pending (so the trace holds its kernels), then closes the
    file (and writes the Chrome trace `PK_TRACE_CHROME` asks for)."""
    if not _active:
        return
    try:
        _native.flush()
    finally:
        _native.trace_data(None)  # final contents of the buffers seen (data mode)
        _native.trace_stop()
        path, chrome = _active.get("path"), _active.get("chrome")
        _active.clear()
    if chrome:
        from .runtime import _chrome, _tracefile

        _chrome.write(_tracefile.load(path), chrome)
        if _active_temp.get("path") == path:
            os.unlink(path)


_active_temp: dict = {}


def start_from_environment() -> None:
    """`PK_TRACE=<file>` and/or `PK_TRACE_CHROME=<file>` at import."""
    path, chrome = os.environ.get("PK_TRACE"), os.environ.get("PK_TRACE_CHROME")
    if not path and not chrome:
        return
    if not path:
        import tempfile

        fd, path = tempfile.mkstemp(suffix=".jsonl", prefix="pk_trace_")
        os.close(fd)
        _active_temp["path"] = path
    else:
        path = rank_path(path)
    if chrome:
        chrome = rank_path(chrome)
    start(path)
    _active["chrome"] = chrome


def memory_root(obj) -> tuple[int, int, bool] | None:
    """The whole block of memory `obj` (an array a launch borrows) lies in:
    (first address, bytes, on the device), or None when it cannot be told.
    A trace names borrowed memory by it, so every wrapper, subview and alias
    of one NumPy or CuPy array is one buffer, stored whole."""
    import numpy as np

    mem = getattr(getattr(obj, "data", None), "mem", None)  # CuPy: the allocation
    if mem is not None and hasattr(mem, "ptr") and hasattr(mem, "size"):
        return int(mem.ptr), int(mem.size), True
    while isinstance(obj, np.ndarray) and obj.base is not None:
        obj = obj.base
    if not isinstance(obj, np.ndarray):
        try:  # any other buffer exporter (bytearray, mmap, a DLPack owner)
            obj = np.frombuffer(obj, dtype=np.uint8)
        except (TypeError, ValueError, BufferError):
            return None
    lo = hi = obj.__array_interface__["data"][0]
    for n, st in zip(obj.shape, obj.strides):
        if n == 0:
            return lo, 0, False
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    return lo, hi + obj.itemsize - lo, False


def recording() -> str | None:
    """The trace file being written, if any."""
    return _active.get("path")


@contextlib.contextmanager
def record(path, data: bool | None = None):
    """`with pk.trace.record("run.jsonl"):` records the launches inside."""
    start(path, data)
    try:
        yield path
    finally:
        stop()
