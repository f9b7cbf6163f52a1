"""CUDA IPC between the ranks of one host, for `pykokkos.mpi.exchange`: a rank
copies what its peer sends straight out of the peer's device memory (over
NVLink where the GPUs have it), through the driver (libcuda, which the CUDA
runtime has loaded) by ctypes.
"""

from __future__ import annotations

import ctypes
import math

from ._types import numpy_dtype

# Message tags of the exchange's two rounds (pair k: _TAG + 2k, then _TAG + 2k + 1).
_TAG = 7_717_000


def get() -> Ipc | None:
    """The driver's IPC entry points, or None where libcuda cannot be loaded."""
    return Ipc.get()


def _contiguous(cai: dict) -> bool:
    """Whether a CUDA array interface describes one run of bytes (C order)."""
    want = int(cai["typestr"][2:])
    for extent, stride in zip(reversed(cai["shape"]), reversed(cai["strides"] or ())):
        if extent > 1 and stride != want:
            return False
        want *= extent
    return True


def _nbytes(view) -> int:
    return math.prod(view.shape) * numpy_dtype(view._dtype_code).itemsize


class _Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_ubyte * 64)]  # CUipcMemHandle (bytes: c_char would stop at a NUL)


class Ipc:
    """CUDA IPC through the driver (libcuda, which the CUDA runtime has loaded).

    A transfer is pulled: the sender hands its peer a handle to the allocation
    that holds `sendbuf` (after the kernels writing it finished), the receiver
    copies the bytes out of it into `recvbuf`'s device memory, and the two
    then trade a note that the copy is done, so the sender may overwrite its
    buffer. A sender whose View has no device memory sends the bytes
    themselves. A rank keeps the peers' allocations it mapped (at most `KEEP`:
    a handle names one allocation, and a freed one is never named again) and
    the handles of its own last `OWN` sent buffers, each with the View, whose
    allocation (and address) stays alive while it is kept."""

    KEEP = 64
    OWN = 8
    _one: Ipc | None = None
    _tried = False

    @classmethod
    def get(cls) -> Ipc | None:
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
        self._opened: dict[bytes, int] = {}  # handle -> where it is mapped here
        self._handles: dict[int, tuple] = {}  # address -> (View, handle, offset in its allocation)

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
        if cai is None or not _contiguous(cai):
            import numpy as np

            return ("bytes", np.ascontiguousarray(np.asarray(view)).tobytes())
        ptr = cai["data"][0]
        # Known addresses skip the driver's queries (tens of us): an entry holds the
        # View, so its allocation, and the address with it, cannot be reused meanwhile.
        known = self._handles.get(ptr)
        if known is None:
            start, size, h = ctypes.c_uint64(), ctypes.c_size_t(), _Handle()
            self._check(self._range(ctypes.byref(start), ctypes.byref(size), ptr), "cuMemGetAddressRange")
            self._check(self._get(ctypes.byref(h), start.value), "cuIpcGetMemHandle")
            if len(self._handles) >= self.OWN:
                self._handles.pop(next(iter(self._handles)))
            known = self._handles[ptr] = (view, bytes(h.reserved), ptr - start.value)
        return ("dev", known[1], known[2], _nbytes(view))

    def _mapped(self, handle: bytes) -> int:
        at = self._opened.get(handle)
        if at is None:
            if len(self._opened) >= self.KEEP:  # the oldest goes
                old = next(iter(self._opened))
                self._check(self._close(self._opened.pop(old)), "cuIpcCloseMemHandle")
            h, out = _Handle(), ctypes.c_uint64()
            ctypes.memmove(ctypes.addressof(h), handle, 64)
            # CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS: a peer on another GPU maps it too.
            self._check(self._open(ctypes.byref(out), h, 1), "cuIpcOpenMemHandle")
            at = self._opened[handle] = out.value
        return at

    def exchange(self, comm, pairs) -> None:
        from mpi4py import MPI

        null = MPI.PROC_NULL
        pairs = [p for p in pairs if p[1] != null or p[3] != null]
        if not pairs:
            return
        # Round 1: each sender's description to its peer (a tag per pair and round).
        # A rank that fails along the way still takes part in both rounds, so its
        # peers never wait for a message that does not come; it raises at the end.
        failure = None
        reqs = []
        for k, (sb, d, _, _) in enumerate(pairs):
            if d != null:
                try:
                    mine = self._describe(sb)
                except Exception as e:  # noqa: BLE001 - raised after round 2
                    failure, mine = failure or e, ("failed", str(e))
                reqs.append(comm.isend(mine, dest=d, tag=_TAG + 2 * k))
        recv = [comm.irecv(source=s, tag=_TAG + 2 * k) if s != null else None for k, (_, _, _, s) in enumerate(pairs)]
        theirs = [r.wait() if r is not None else None for r in recv]
        MPI.Request.waitall(reqs)
        try:
            copied = [self._receive(t, rb) for t, (_, _, rb, _) in zip(theirs, pairs) if t is not None]
            if any(copied):
                self._check(self._sync(), "cuCtxSynchronize")
        except Exception as e:  # noqa: BLE001 - raised after round 2
            failure = failure or e
        # Round 2: the copies are done (or failed); a sender may reuse its buffer once its
        # peer says so, which keeps each `sendbuf` unchanged until it was copied.
        notes = [comm.isend(None, dest=s, tag=_TAG + 2 * k + 1) for k, (_, _, _, s) in enumerate(pairs) if s != null]
        for k, (_, d, _, _) in enumerate(pairs):
            if d != null:
                comm.recv(source=d, tag=_TAG + 2 * k + 1)
        MPI.Request.waitall(notes)
        if failure is not None:
            raise failure

    def _receive(self, theirs, recvbuf) -> bool:
        import numpy as np

        if theirs[0] == "failed":
            raise RuntimeError(f"exchange: the sending rank failed: {theirs[1]}")
        nbytes, dtype = _nbytes(recvbuf), numpy_dtype(recvbuf._dtype_code)
        sent = theirs[3] if theirs[0] == "dev" else len(theirs[1])
        if sent != nbytes:
            raise ValueError(f"sendrecv: the peer sent {sent} bytes; recvbuf holds {nbytes}")
        if theirs[0] == "bytes":
            np.asarray(recvbuf)[...] = np.frombuffer(theirs[1], dtype=dtype).reshape(recvbuf.shape)
            return False
        src = self._mapped(theirs[1]) + theirs[2]
        try:
            cai = recvbuf.__cuda_array_interface__  # pending readers of recvbuf run first
        except AttributeError:
            cai = None
        if cai is not None and _contiguous(cai):
            # Device to device: queued, not waited for (`exchange` syncs once for all).
            self._check(self._copy(cai["data"][0], src, nbytes), "cuMemcpy")
            return True
        host = np.empty(nbytes, np.uint8)  # host memory or a strided View: through the host
        self._check(self._copy(host.ctypes.data, src, nbytes), "cuMemcpy")
        self._check(self._sync(), "cuCtxSynchronize")
        np.asarray(recvbuf)[...] = host.view(dtype).reshape(recvbuf.shape)
        return False
