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
from .runtime._types import WIRE, numpy_dtype


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
        self._held = False  # (a refused View leaves nothing to release)
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


def _one_host(size: int) -> bool:
    """Whether the launcher started all `size` ranks on this host: its count of
    ranks here (MPICH, Open MPI, MVAPICH) or a one-node Slurm job says so."""
    if size == 1:
        return True
    for k in ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE"):
        if os.environ.get(k, "").isdigit():
            return int(os.environ[k]) == size
    return os.environ.get("SLURM_JOB_NUM_NODES", os.environ.get("SLURM_NNODES")) == "1"


def _sees_every_gpu() -> bool:
    """A rank limited to one GPU by CUDA_VISIBLE_DEVICES (one GPU per task) cannot
    map its peers' memory; unset, or naming several GPUs, it can."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    return visible is None or "," in visible


@functools.lru_cache(maxsize=8)
def _paths(space: int, device: int, size: int) -> tuple[str, ...]:
    paths = []
    if space == WIRE["exec_spaces"]["Cuda"] and device >= 0:
        ipc = _ipc.get()
        if _one_host(size) and (size == 1 or _sees_every_gpu()) and ipc is not None and ipc.peers_reachable():
            paths.append("ipc")
        if cuda_aware():
            paths.append("mpi")
    return (*paths, "host")


def halo_paths() -> list[str]:
    """The paths `sendrecv` can take here, best first: "ipc" (every rank on this
    host, each seeing every GPU, and kernels on the GPU: a rank copies what its
    peer sends straight out of the peer's device memory, CUDA IPC, over NVLink
    where the GPUs have it), "mpi" (a CUDA-aware MPI library takes device
    pointers: `cuda_aware()`) and "host" (host copies, always). Decided from
    facts every rank sees alike (the default execution space, the launcher's
    count of ranks on this host), so the ranks agree without a message."""
    from mpi4py import MPI

    _native.initialize()
    return list(_paths(_native.default_space(), _native.device_id(), MPI.COMM_WORLD.Get_size()))


def halo_path(requested: str | None = None) -> str:
    """The path `sendrecv` takes: `requested` (or PK_MPI_HALOS) when given, else
    the first of `halo_paths()`. A path that cannot run here is a RuntimeError
    naming the ones that can."""
    want = requested or os.environ.get("PK_MPI_HALOS") or None
    paths = halo_paths()
    if want is None:
        return paths[0]
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
    where it arrived (its device copy on "ipc" and "mpi" when it has one), each
    `sendbuf` is only read, and both may be used as soon as this returns. On
    "ipc" the first exchange of an allocation maps it into its peer
    (milliseconds, once); then all pairs cost two rounds of short messages and
    one device sync. A pair whose View has no device memory, or is strided
    there, travels as bytes within the same two rounds."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD if comm is None else comm
    how = halo_path(path)
    if how == "ipc":
        _ipc.get().exchange(comm, pairs)
        return
    # Every pair runs even after one failed (its peer waits for it); the first failure is raised.
    failure = None
    for sendbuf, dest, recvbuf, source in pairs:
        try:
            _sendrecv(comm, how, sendbuf, dest, recvbuf, source)
        except Exception as e:  # noqa: BLE001 - raised once every pair ran
            failure = failure or e
    if failure is not None:
        raise failure


def _sendrecv(comm, how: str, sendbuf, dest: int, recvbuf, source: int) -> None:
    """One pair through MPI: the Views themselves ("host": their host copies),
    their device memory ("mpi"; a View without device memory goes as on
    "host"), and for a strided View, whose memory MPI cannot take as it is, a
    contiguous host copy of its dtype. Whatever fails while the buffers are
    made ready, the pair's messages still go (an empty one out, the peer's
    taken into scratch memory), so the peer is never left waiting: its own
    size check then names the failure."""
    import numpy as np
    from mpi4py import MPI

    st, held = MPI.Status(), []
    try:
        send, recv, strided_in = _ready(sendbuf), recvbuf, _strided(recvbuf)
        if strided_in:
            recv = np.empty(recvbuf.shape, numpy_dtype(recvbuf._dtype_code))
        if how == "mpi":
            send, recv = (_device_or_host(b, held) for b in (send, recv))
    except Exception:
        for b in held:
            b.release()
        scratch = bytearray(0)
        if source != MPI.PROC_NULL:
            comm.Probe(source=source, tag=0, status=st)
            scratch = bytearray(st.Get_count(MPI.BYTE))
        comm.Sendrecv(sendbuf=bytearray(0), dest=dest, sendtag=0, recvbuf=scratch, source=source, recvtag=0)
        raise
    try:
        comm.Sendrecv(sendbuf=send, dest=dest, sendtag=0, recvbuf=recv, source=source, recvtag=0, status=st)
    except MPI.Exception as e:
        if e.Get_error_class() != MPI.ERR_TRUNCATE:
            raise
        raise ValueError(f"sendrecv: the peer sent more bytes than recvbuf holds {_ipc.nbytes(recvbuf)}") from e
    finally:
        for b in held:
            b.release()
    if source == MPI.PROC_NULL or recvbuf is None:
        return
    # MPI takes a shorter message than the buffer without a word; the other paths refuse it.
    holds = _ipc.nbytes(recvbuf)
    if st.Get_count(MPI.BYTE) != holds:
        raise ValueError(f"sendrecv: the peer sent {st.Get_count(MPI.BYTE)} bytes; recvbuf holds {holds}")
    if strided_in:
        _ipc.host_store(recvbuf, recv.tobytes())


def _strided(b) -> bool:
    return getattr(b, "_c_contiguous", True) is False  # (NumPy arrays go to MPI as they are)


def _ready(sendbuf):
    """What MPI sends of `sendbuf`: itself, or a strided View's elements in C order."""
    import numpy as np

    if not _strided(sendbuf):
        return sendbuf
    return np.frombuffer(_ipc.host_bytes(sendbuf), numpy_dtype(sendbuf._dtype_code))


def _device_or_host(b, held: list):
    """A View's device memory for a CUDA-aware MPI, when it has any; else `b` itself."""
    if b is None or not hasattr(b, "_dtype_code"):
        return b
    try:
        d = DeviceBuffer(b)
    except AttributeError:  # no CUDA kernel used it: no device memory, its host copy goes
        return b
    held.append(d)
    return d
