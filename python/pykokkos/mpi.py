"""What pykokkos knows about running under MPI (mpi4py): the probe of
CUDA-aware MPI, device buffers for it, and a one-line description of each
rank's set-up.

A View handed to mpi4py as it is goes through the buffer protocol: its host
copy (pending kernels that write it run first; a received View counts as
written on the host and goes back to the device before a kernel reads it).
Where the MPI library is CUDA-aware, `device_buffer(view)` hands MPI the
device memory instead, with no staging copy.
"""

from __future__ import annotations

import ctypes
import functools
import math
import os

from . import _native
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
            if _Ipc.get() is not None:
                paths.append("ipc")
        if cuda_aware():
            paths.append("mpi")
    return [*paths, "host"]


def halo_path(requested: str | None = None) -> str:
    """The path `sendrecv` takes: `requested` (or PK_MPI_HALOS) when given, else the
    first of `halo_paths()`. A path that cannot run here is a RuntimeError naming
    the ones that can."""
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
    through `halo_path(path)`: every rank of the exchange must take the same path
    (`halo_path()` agrees on every rank unless one asks otherwise). The data
    arrive bit for bit on every path; `recvbuf` counts as written where it
    arrived (its device copy on "ipc" and "mpi"), `sendbuf` is only read."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD if comm is None else comm
    how = halo_path(path)
    if how == "host":
        comm.Sendrecv(sendbuf=sendbuf, dest=dest, recvbuf=recvbuf, source=source)
    elif how == "mpi":
        sb, rb = DeviceBuffer(sendbuf), DeviceBuffer(recvbuf)
        try:
            comm.Sendrecv(sendbuf=sb, dest=dest, recvbuf=rb, source=source)
        finally:
            sb.release()
            rb.release()
    else:
        _Ipc.get().sendrecv(comm, sendbuf, dest, recvbuf, source)


def _nbytes(view) -> int:
    return math.prod(view.shape) * numpy_dtype(view._dtype_code).itemsize


class _Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]  # CUipcMemHandle


class _Ipc:
    """CUDA IPC through the driver (libcuda, which the CUDA runtime has loaded).

    A transfer is pulled: the sender hands its peer a handle to the allocation
    that holds `sendbuf` (after the kernels writing it finished), the receiver
    copies the bytes out of it into `recvbuf`'s device memory, and the two
    then trade a note that the copy is done, so the sender may overwrite its
    buffer. A sender whose View has no device memory sends the bytes
    themselves. Handles a rank opened stay open (a handle names one allocation,
    and a freed one is never named again), at most `KEEP` of them."""

    KEEP = 64
    _one: _Ipc | None = None
    _tried = False

    @classmethod
    def get(cls) -> _Ipc | None:
        if not cls._tried:
            cls._tried = True
            try:
                cls._one = cls(ctypes.CDLL("libcuda.so.1"))
            except (OSError, AttributeError):
                cls._one = None
        return cls._one

    def __init__(self, lib):
        u64, size_t, p = ctypes.c_uint64, ctypes.c_size_t, ctypes.POINTER
        self._get = self._fn(lib, "cuIpcGetMemHandle", p(_Handle), u64)
        self._open = self._fn(lib, "cuIpcOpenMemHandle_v2", p(u64), _Handle, ctypes.c_uint)
        self._close = self._fn(lib, "cuIpcCloseMemHandle", u64)
        self._range = self._fn(lib, "cuMemGetAddressRange_v2", p(u64), p(size_t), u64)
        self._copy = self._fn(lib, "cuMemcpy", u64, u64, size_t)
        self._sync = self._fn(lib, "cuCtxSynchronize")
        self._err = lib.cuGetErrorString
        self._opened: dict[bytes, int] = {}

    @staticmethod
    def _fn(lib, name, *args):
        f = getattr(lib, name)
        f.argtypes, f.restype = list(args), ctypes.c_int
        return f

    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            s = ctypes.c_char_p()
            self._err(rc, ctypes.byref(s))
            raise RuntimeError(f"CUDA IPC: {what} failed: {(s.value or b'error %d' % rc).decode()}")

    def _describe(self, view):
        """What the peer needs to read `view`: ("dev", handle, offset, bytes), or
        ("bytes", data) for a View without device memory or not contiguous there."""
        try:
            cai = view.__cuda_array_interface__  # pending writes run, the device settles
        except AttributeError:
            cai = None
        if cai is None or cai.get("strides") is not None:
            import numpy as np

            return ("bytes", np.ascontiguousarray(np.asarray(view)).tobytes())
        ptr = cai["data"][0]
        base, size, h = ctypes.c_uint64(), ctypes.c_size_t(), _Handle()
        self._check(self._range(ctypes.byref(base), ctypes.byref(size), ptr), "cuMemGetAddressRange")
        self._check(self._get(ctypes.byref(h), base.value), "cuIpcGetMemHandle")
        return ("dev", bytes(h.reserved), ptr - base.value, _nbytes(view))

    def _mapped(self, handle: bytes) -> int:
        at = self._opened.get(handle)
        if at is None:
            if len(self._opened) >= self.KEEP:  # the oldest goes
                old = next(iter(self._opened))
                self._check(self._close(self._opened.pop(old)), "cuIpcCloseMemHandle")
            h, out = _Handle(), ctypes.c_uint64()
            h.reserved = handle
            # CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS: a peer on another GPU maps it too.
            self._check(self._open(ctypes.byref(out), h, 1), "cuIpcOpenMemHandle")
            at = self._opened[handle] = out.value
        return at

    def sendrecv(self, comm, sendbuf, dest, recvbuf, source) -> None:
        mine = self._describe(sendbuf)
        theirs = comm.sendrecv(mine, dest=dest, source=source)
        failure = None
        if theirs is not None:
            try:
                self._receive(theirs, recvbuf)
            except Exception as e:  # noqa: BLE001 - the peer waits for the note below either way
                failure = e
        # The copy is done (or failed): the sender may reuse its buffer. Waiting for the
        # same note from `dest` keeps `sendbuf` unchanged until that peer copied it.
        comm.sendrecv(None, dest=source, source=dest)
        if failure is not None:
            raise failure

    def _receive(self, theirs, recvbuf) -> None:
        import numpy as np

        nbytes, dtype = _nbytes(recvbuf), numpy_dtype(recvbuf._dtype_code)
        sent = theirs[3] if theirs[0] == "dev" else len(theirs[1])
        if sent != nbytes:
            raise ValueError(f"sendrecv: the peer sent {sent} bytes; recvbuf holds {nbytes}")
        if theirs[0] == "bytes":
            np.asarray(recvbuf)[...] = np.frombuffer(theirs[1], dtype=dtype).reshape(recvbuf.shape)
            return
        src = self._mapped(theirs[1]) + theirs[2]
        try:
            cai = recvbuf.__cuda_array_interface__  # pending readers of recvbuf run first
        except AttributeError:
            cai = None
        if cai is not None and cai.get("strides") is None:
            self._check(self._copy(cai["data"][0], src, nbytes), "cuMemcpy")
            self._check(self._sync(), "cuCtxSynchronize")
            return
        host = np.empty(nbytes, np.uint8)  # host memory or a strided View: through the host
        self._check(self._copy(host.ctypes.data, src, nbytes), "cuMemcpy")
        self._check(self._sync(), "cuCtxSynchronize")
        np.asarray(recvbuf)[...] = host.view(dtype).reshape(recvbuf.shape)
