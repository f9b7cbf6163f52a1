"""What pykokkos knows about running under MPI (mpi4py): the probe of
CUDA-aware MPI, device buffers for it, a one-line description of each rank's
set-up, and halo transfers of Views (`exchange`, `sendrecv`) through the best
path the machine has: CUDA IPC between the GPUs of one host, a CUDA-aware MPI,
or host copies (`halo_paths`).

A View handed to mpi4py as it is goes through the buffer protocol: its host
copy (pending kernels that write it run first; a received View counts as
written on the host and goes back to the device before a kernel reads it).
Where the MPI library is CUDA-aware, `device_buffer(view)` hands MPI the
device memory instead, with no staging copy.
"""

from __future__ import annotations

import ctypes
import functools
import os

from . import _native
from .runtime import _ipc
from .runtime._types import WIRE


@functools.lru_cache(maxsize=1)
def cuda_aware() -> bool:
    """Whether the MPI library says it can take device pointers: MPICH's and
    Open MPI's MPIX_Query_cuda_support(), asked at run time (never assumed).
    False when the library has no such query."""
    from mpi4py import MPI  # noqa: F401  (loads the MPI library first)

    # Ask the library mpi4py loaded (several may be installed: a carried MPICH
    # beside the machine's Open MPI), then the names the loader would find.
    for lib in (*_loaded_libmpi(), None, "libmpi.so", "libmpi.so.12", "libmpi.so.40"):
        try:
            fn = getattr(ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL), "MPIX_Query_cuda_support")
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_int
        return bool(fn())
    return False


def _loaded_libmpi() -> list[str]:
    """Paths of the MPI libraries mapped into this process (Linux)."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "/libmpi.so" in line}
    except OSError:
        return []
    return sorted(paths)


def describe(comm=None) -> str:
    """`rank r/n (node-local l): T host threads, GPU d, CUDA-aware MPI: yes|no`."""
    if comm is None:
        from mpi4py import MPI

        comm = MPI.COMM_WORLD
    local = next(
        (
            os.environ[k]
            for k in ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")
            if k in os.environ
        ),
        "?",
    )
    threads = _native.initialize()
    device = _native.device_id()
    gpu = f"GPU {device}" if device >= 0 else "no GPU"
    return (
        f"rank {comm.Get_rank()}/{comm.Get_size()} (node-local {local}): {threads} host thread(s), "
        f"{gpu}, CUDA-aware MPI: {'yes' if cuda_aware() else 'no'}"
    )


class DeviceBuffer:
    """A View's device memory for a CUDA-aware MPI (`device_buffer`).

    Made from the View's `__cuda_array_interface__`: kernels pending on it run
    first and the device copy becomes the current one, which MPI may read or
    write. Until this object is released (mpi4py keeps it with a nonblocking
    request until Wait/Test completes it) the View counts as foreign memory:
    launches on it run in program order instead of waiting in the DAG."""

    def __init__(self, view):
        self._view = view
        self.__cuda_array_interface__ = view.__cuda_array_interface__
        _native.hold_device_export(view, True)
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            _native.hold_device_export(self._view, False)

    def __del__(self):
        self.release()


def device_buffer(view, require: bool = True):
    """The View's device memory for MPI when the library is CUDA-aware (see
    `cuda_aware()`); else, unless `require`, the View itself (host staging).
    A View no CUDA kernel has used has no device memory: AttributeError."""
    if cuda_aware():
        return DeviceBuffer(view)
    if require:
        raise RuntimeError(
            "this MPI library is not CUDA-aware (MPIX_Query_cuda_support() is 0 or absent): "
            "pass the View itself, which MPI reads and writes through its host copy"
        )
    return view


# --- Halo transfers: sendrecv, with the path chosen for the machine ----------------

HALO_PATHS = ("ipc", "mpi", "host")


def _local_size() -> int | None:
    """How many ranks the launcher started on this host (MPICH, Open MPI, MVAPICH, Slurm)."""
    for k in ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"):
        if os.environ.get(k, "").isdigit():
            return int(os.environ[k])
    return None


def halo_paths() -> list[str]:
    """The paths `sendrecv` can take here, best first: "ipc" (every rank on this
    host and kernels on the GPU: a rank copies what its peer sends straight out
    of the peer's device memory, CUDA IPC, over NVLink where the GPUs have it),
    "mpi" (a CUDA-aware MPI library takes device pointers: `cuda_aware()`) and
    "host" (host copies, always). Decided from facts every rank sees alike (the
    default execution space, the launcher's count of ranks on this host), so
    the ranks agree without a message."""
    from mpi4py import MPI

    paths = []
    _native.initialize()
    if _native.default_space() == WIRE["exec_spaces"]["Cuda"] and _native.device_id() >= 0:
        local = _local_size()
        if MPI.COMM_WORLD.Get_size() == 1 or local == MPI.COMM_WORLD.Get_size():
            if _ipc.get() is not None:
                paths.append("ipc")
        if cuda_aware():
            paths.append("mpi")
    return [*paths, "host"]


def halo_path(requested: str | None = None) -> str:
    """The path `sendrecv` takes: `requested` (or PK_MPI_HALOS) when given, else
    "host" (for now: see docs/mpi-gpu.md). A path that cannot run here is a RuntimeError naming
    the ones that can."""
    want = requested or os.environ.get("PK_MPI_HALOS") or None
    paths = halo_paths()
    if want is None:
        # "ipc" is opt-in until the review's findings are mended (tags of all-null
        # pairs, 32 KiB irecv limit, mapping lifetimes): host copies never hang.
        return "host"
    if want not in HALO_PATHS:
        raise ValueError(f"halo path {want!r}: the paths are {', '.join(HALO_PATHS)}")
    if want not in paths:
        raise RuntimeError(f"halo path {want!r} is not available here; these are: {', '.join(paths)}")
    return want


def sendrecv(sendbuf, dest: int, recvbuf, source: int, comm=None, path: str | None = None) -> None:
    """`comm.Sendrecv(sendbuf=..., dest=..., recvbuf=..., source=...)` for Views,
    through `halo_path(path)` (see `exchange`)."""
    exchange([(sendbuf, dest, recvbuf, source)], comm, path)


def exchange(pairs, comm=None, path: str | None = None) -> None:
    """Several `sendrecv`s at once: `pairs` of (sendbuf, dest, recvbuf, source),
    listed in the same order on every rank (as a Sendrecv per pair would need),
    through `halo_path(path)`, which every rank of the exchange must take alike
    (`halo_path()` agrees on every rank unless one asks otherwise).

    The data arrive bit for bit on every path; each `recvbuf` counts as written
    where it arrived (its device copy on "ipc" and "mpi"), each `sendbuf` is
    only read, and both may be used as soon as this returns. On "ipc" the
    first exchange of an allocation maps it into its peer (milliseconds, once);
    then all pairs cost two rounds of short messages and one device sync."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD if comm is None else comm
    how = halo_path(path)
    if how == "ipc":
        _ipc.get().exchange(comm, pairs)
        return
    for sendbuf, dest, recvbuf, source in pairs:
        if how == "host":
            comm.Sendrecv(sendbuf=sendbuf, dest=dest, recvbuf=recvbuf, source=source)
            continue
        sb, rb = DeviceBuffer(sendbuf), DeviceBuffer(recvbuf)
        try:
            comm.Sendrecv(sendbuf=sb, dest=dest, recvbuf=rb, source=source)
        finally:
            sb.release()
            rb.release()
