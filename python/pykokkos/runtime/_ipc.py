"""CUDA IPC between the ranks of one host, for `pykokkos.mpi.exchange`: a rank
copies what its peer sends straight out of the peer's device memory (over
NVLink where the GPUs have it), through the driver (libcuda, which the CUDA
runtime has loaded) by ctypes.

One exchange, every rank listing the same pairs in the same order:
- round 1: each sender tells its peer where the bytes are: a handle to the
  allocation that holds `sendbuf` and the offset in it ("dev"), its address for
  a pair with itself ("self"), or the bytes themselves ("bytes": a View without
  device memory, strided there, or memory the driver will not export, such as
  managed memory);
- the receiver queues its copies and syncs once;
- round 2: it tells the sender it is done, so the sender may write again.

Lifetimes. The CUDA docs make freeing an allocation that a peer still has
mapped undefined, so the sender holds every allocation it exported (through a
subview: `View.resize` cannot free it) until each peer that mapped it has
closed it. Past `OWN` allocations, the least recently sent one is retired: the
sender names it in its next round-1 message to each such peer, the peer closes
its mapping after its copies and says so in its round-2 note, and the sender
lets it go. A receiver closes a mapping only after the copies that read it.
Peers are processes (COMM_WORLD ranks), so the note goes with the next
exchange with that process on any communicator; until there is one, the
allocation stays held. At exit each rank closes what it mapped, but the ranks
do not wait for each other: a rank that ends first frees its memory while a
slower peer may still have it mapped (never read again).

Messages carry tags counted down from the communicator's MPI_TAG_UB (pair k:
round 1 TAG_UB - 2k, round 2 TAG_UB - 2k - 1), far from the small tags
programs use. (A duplicate communicator would isolate them fully, but making
one is collective over all of `comm`'s ranks, which an exchange between some
of them must not require.)
"""

from __future__ import annotations

import atexit
import ctypes
import math
import threading

from .. import _native
from ._types import numpy_dtype


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


def nbytes(buf) -> int:
    """The bytes a View's (or NumPy or CuPy array's) elements take."""
    if hasattr(buf, "_dtype_code"):
        return math.prod(buf.shape) * numpy_dtype(buf._dtype_code).itemsize
    return int(buf.nbytes) if hasattr(buf, "nbytes") else memoryview(buf).nbytes


def host_bytes(view) -> bytes:
    """The View's elements in C order, read through its buffer export (only
    the bytes it spans come from the device: not the whole allocation)."""
    with memoryview(view) as m:
        return m.tobytes()


def host_store(view, data: bytes) -> None:
    """Writes C-ordered `data` into the View through its buffer export (the
    written bytes count as newer on the host; a kernel's read takes them to
    the device)."""
    import numpy as np

    with memoryview(view) as m:
        a = np.asarray(m)
        a[...] = np.frombuffer(data, dtype=a.dtype).reshape(a.shape)
        del a  # the memoryview can only be released once NumPy let go of it


class _Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_ubyte * 64)]  # CUipcMemHandle (bytes: c_char would stop at a NUL)


class _Export:
    """An allocation this rank handed to peers: `keep` (a subview) holds it."""

    __slots__ = ("keep", "handle", "ptrs", "peers", "retiring")

    def __init__(self, keep, handle: bytes):
        self.keep, self.handle = keep, handle
        self.ptrs: set[int] = set()  # addresses in it that were sent (the address cache's keys)
        self.peers: set[int] = set()  # processes (COMM_WORLD ranks) that may have it mapped
        self.retiring = False


class Ipc:
    """CUDA IPC through the driver; the protocol is the module's docstring."""

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
            else:
                atexit.register(cls._one.close_all)
        return cls._one

    def __init__(self, lib):
        u64, size_t, p, vp = ctypes.c_uint64, ctypes.c_size_t, ctypes.POINTER, ctypes.c_void_p
        self._get = self._fn(lib, "cuIpcGetMemHandle", p(_Handle), u64)
        self._open = self._fn(lib, "cuIpcOpenMemHandle_v2", p(u64), _Handle, ctypes.c_uint)
        self._close = self._fn(lib, "cuIpcCloseMemHandle", u64)
        self._range = self._fn(lib, "cuMemGetAddressRange_v2", p(u64), p(size_t), u64)
        self._copy = self._fn(lib, "cuMemcpy", u64, u64, size_t)
        self._sync = self._fn(lib, "cuCtxSynchronize")
        self._current = self._fn(lib, "cuCtxGetCurrent", p(vp))
        self._set_current = self._fn(lib, "cuCtxSetCurrent", vp)
        self._device = self._fn(lib, "cuDeviceGet", p(ctypes.c_int), ctypes.c_int)
        self._retain = self._fn(lib, "cuDevicePrimaryCtxRetain", p(vp), ctypes.c_int)
        self._device_count = self._fn(lib, "cuDeviceGetCount", p(ctypes.c_int))
        self._can_access = self._fn(lib, "cuDeviceCanAccessPeer", p(ctypes.c_int), ctypes.c_int, ctypes.c_int)
        self._err = lib.cuGetErrorString
        self._primary: ctypes.c_void_p | None = None
        self._opened: dict[bytes, int] = {}  # a peer's handle -> where it is mapped here
        self._exports: dict[int, _Export] = {}  # allocation start -> export, least recently sent first
        self._where: dict[int, tuple[int, int]] = {}  # sent address -> (allocation start, offset)
        self._retire: dict[int, list[bytes]] = {}  # process -> handles to name in the next message to it
        self._lock = threading.Lock()  # one exchange at a time: the tables and the sync are shared
        self._top: int | None = None  # MPI_TAG_UB

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

    def _context(self) -> None:
        """The driver calls need a current context: a thread other than the one that
        started Kokkos has none, so it takes the device's primary context (Kokkos')."""
        ctx = ctypes.c_void_p()
        self._check(self._current(ctypes.byref(ctx)), "cuCtxGetCurrent")
        if ctx.value:
            return
        if self._primary is None:
            dev, primary = ctypes.c_int(), ctypes.c_void_p()
            self._check(self._device(ctypes.byref(dev), max(_native.device_id(), 0)), "cuDeviceGet")
            self._check(self._retain(ctypes.byref(primary), dev), "cuDevicePrimaryCtxRetain")
            self._primary = primary
        self._check(self._set_current(self._primary), "cuCtxSetCurrent")

    # --- the sender's side -------------------------------------------------------

    def _describe(self, view, to_self: bool):
        """Round 1's description of `view` (see the module's docstring), and the
        export it names (None unless "dev")."""
        try:
            cai = view.__cuda_array_interface__  # pending writes run, the device settles
        except AttributeError:
            cai = None
        if cai is None or not _contiguous(cai):
            return ("bytes", host_bytes(view)), None
        ptr, size = cai["data"][0], nbytes(view)
        if size == 0:  # (an empty subview may sit at the allocation's end: no range to ask about)
            return ("bytes", b""), None
        if to_self:  # a process cannot map its own handle; the address serves
            return ("self", ptr, size), None
        # Known addresses skip the driver's queries (tens of us): the export holds the
        # allocation, so the address cannot belong to another one meanwhile.
        at = self._where.get(ptr)
        if at is None:
            start, span, h = ctypes.c_uint64(), ctypes.c_size_t(), _Handle()
            self._check(self._range(ctypes.byref(start), ctypes.byref(span), ptr), "cuMemGetAddressRange")
            if self._get(ctypes.byref(h), start.value) != 0:
                return ("bytes", host_bytes(view)), None  # managed memory: the driver exports none
            exp = self._exports.get(start.value)
            if exp is None:
                exp = self._exports[start.value] = _Export(view[tuple(slice(None) for _ in view.shape)], bytes(h.reserved))
            exp.ptrs.add(ptr)
            at = self._where[ptr] = (start.value, ptr - start.value)
        exp = self._exports.pop(at[0])
        self._exports[at[0]] = exp  # the most recently sent last
        exp.retiring = False  # sent again: kept (a retirement not yet named is dropped below)
        return ("dev", exp.handle, at[1], size), exp

    def _drop(self, start: int) -> None:
        exp = self._exports.pop(start)
        for ptr in exp.ptrs:
            self._where.pop(ptr, None)

    def _closed_by(self, peer: int, handles) -> None:
        """`peer` closed these handles: a retired allocation nobody maps goes."""
        if not handles:
            return
        for start, exp in list(self._exports.items()):
            if exp.handle in handles:
                exp.peers.discard(peer)
                if exp.retiring and not exp.peers:
                    self._drop(start)

    def _retire_oldest(self, used: set[int]) -> None:
        """Past OWN allocations, the least recently sent ones not sent now retire."""
        live = [s for s, e in self._exports.items() if not e.retiring]
        for start in live[: max(0, len(live) - self.OWN)]:
            exp = self._exports[start]
            if id(exp) in used:
                continue
            exp.retiring = True
            if not exp.peers:
                self._drop(start)
            for peer in exp.peers:
                named = self._retire.setdefault(peer, [])
                if exp.handle not in named:  # (retired, sent again, retired again before a note went)
                    named.append(exp.handle)

    # --- the receiver's side -----------------------------------------------------

    def _mapped(self, handle: bytes) -> int:
        at = self._opened.get(handle)
        if at is None:
            h, out = _Handle(), ctypes.c_uint64()
            ctypes.memmove(ctypes.addressof(h), handle, 64)
            # CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS: a peer on another GPU maps it too.
            self._check(self._open(ctypes.byref(out), h, 1), "cuIpcOpenMemHandle")
            at = self._opened[handle] = out.value
        return at

    def _receive(self, theirs, recvbuf) -> bool:
        """Copies what round 1 described into `recvbuf`; True when a device copy
        was queued (the exchange syncs once for all)."""
        import numpy as np

        if theirs[0] == "failed":
            raise RuntimeError(f"exchange: the sending rank failed: {theirs[1]}")
        size = nbytes(recvbuf)
        sent = len(theirs[1]) if theirs[0] == "bytes" else theirs[-1]
        if sent != size:
            raise ValueError(f"sendrecv: the peer sent {sent} bytes; recvbuf holds {size}")
        if theirs[0] == "bytes":
            if size:
                host_store(recvbuf, theirs[1])
            return False
        src = theirs[1] if theirs[0] == "self" else self._mapped(theirs[1]) + theirs[2]
        try:
            cai = recvbuf.__cuda_array_interface__  # pending readers of recvbuf run first
        except AttributeError:
            cai = None
        if cai is not None and _contiguous(cai):
            self._check(self._copy(cai["data"][0], src, size), "cuMemcpy")
            return True
        host = np.empty(size, np.uint8)  # host memory or a strided View: through the host
        self._check(self._copy(host.ctypes.data, src, size), "cuMemcpy")
        self._check(self._sync(), "cuCtxSynchronize")
        host_store(recvbuf, host.tobytes())
        return False

    def close_all(self) -> None:
        """At exit: every peer allocation mapped here is closed (before Kokkos
        frees this rank's own)."""
        for at in self._opened.values():
            self._close(at)
        self._opened.clear()

    # --- one exchange --------------------------------------------------------------

    def _tag_ub(self) -> int:
        # The implementation's bound, kept on COMM_WORLD (other communicators need not carry it).
        if self._top is None:
            from mpi4py import MPI

            self._top = int(MPI.COMM_WORLD.Get_attr(MPI.TAG_UB))
        return self._top

    def exchange(self, comm, pairs) -> None:
        with self._lock:
            self._exchange(comm, pairs)

    def _exchange(self, comm, pairs) -> None:
        from mpi4py import MPI

        null, me = MPI.PROC_NULL, comm.Get_rank()
        top = self._tag_ub()
        if 2 * len(pairs) > top - 32767:
            raise ValueError(f"exchange: {len(pairs)} pairs need more tags than MPI_TAG_UB ({top}) leaves")
        # Peers are processes (COMM_WORLD ranks): a communicator's handle may be reused
        # once it is freed, and a note for a process can go with any later exchange.
        world = _world_ranks(comm, {r for _, d, _, s in pairs for r in (d, s) if r != null})
        # A rank that fails along the way still takes part in both rounds, so its peers
        # never wait for a message that does not come; it raises at the end.
        failure = None
        try:
            self._context()
        except RuntimeError as e:
            failure = e
        mine: dict[int, tuple] = {}
        used: set[int] = set()
        for k, (sb, d, _, _) in enumerate(pairs):
            if d != null:
                try:
                    mine[k], exp = self._describe(sb, d == me)
                except Exception as e:  # noqa: BLE001 - raised after round 2
                    failure, mine[k], exp = failure or e, ("failed", str(e)), None
                if exp is not None:
                    used.add(id(exp))
                    exp.peers.add(world[d])
        # Round 1. Retirements go with the first message to each process, less any
        # allocation sent again in this exchange.
        named: set[int] = set()
        sent = {desc[1] for desc in mine.values() if desc[0] == "dev"}
        reqs = []
        for k, (_, d, _, _) in enumerate(pairs):
            if d != null:
                retire = []
                if world[d] not in named:
                    named.add(world[d])
                    retire = [h for h in self._retire.pop(world[d], []) if h not in sent]
                reqs.append(comm.isend((mine[k], retire), dest=d, tag=top - 2 * k))
        # Blocking receives (posted after every send): an irecv without a buffer
        # would cut a message past 32 KiB, and "bytes" descriptions can be longer.
        theirs = {k: comm.recv(source=s, tag=top - 2 * k) for k, (_, _, _, s) in enumerate(pairs) if s != null}
        MPI.Request.waitall(reqs)
        queued = False
        try:
            for k, (_, _, rb, _) in enumerate(pairs):
                if k in theirs:
                    try:  # each pair on its own: one failure leaves the others' data arriving
                        queued = self._receive(theirs[k][0], rb) or queued
                    except Exception as e:  # noqa: BLE001 - raised after round 2
                        failure = failure or e
        finally:
            if queued:  # also after a failed receive: a queued copy must end before anyone moves on
                rc = self._sync()
                if rc != 0 and failure is None:
                    try:
                        self._check(rc, "cuCtxSynchronize")
                    except RuntimeError as e:
                        failure = e
        # Retired mappings close after the copies that read them; only those that did
        # close are confirmed (the sender keeps the others' memory).
        closed: dict[int, list[bytes]] = {}
        for k, (_, retire) in theirs.items():
            closed[k] = []
            for h in retire:
                at = self._opened.get(h)
                if at is not None and self._close(at) != 0:
                    failure = failure or RuntimeError("CUDA IPC: cuIpcCloseMemHandle failed")
                    continue
                self._opened.pop(h, None)
                closed[k].append(h)
        # Round 2: the copies are done (or failed); a sender may reuse its buffer once its
        # peer says so, which keeps each `sendbuf` unchanged until it was copied.
        notes = [comm.isend(closed[k], dest=s, tag=top - 2 * k - 1) for k, (_, _, _, s) in enumerate(pairs) if s != null]
        for k, (_, d, _, _) in enumerate(pairs):
            if d != null:
                self._closed_by(world[d], set(comm.recv(source=d, tag=top - 2 * k - 1)))
        MPI.Request.waitall(notes)
        self._retire_oldest(used)
        if failure is not None:
            raise failure

    def peers_reachable(self) -> bool:
        """Whether every GPU this process sees can map every other's memory
        (peer access; NVLink or PCIe P2P). One GPU shared by the ranks needs none."""
        count = ctypes.c_int()
        if self._device_count(ctypes.byref(count)) != 0:
            return False
        for a in range(count.value):
            for b in range(count.value):
                can = ctypes.c_int()
                if a != b and (self._can_access(ctypes.byref(can), a, b) != 0 or not can.value):
                    return False
        return True


def _world_ranks(comm, ranks: set[int]) -> dict[int, int]:
    """`comm`'s ranks -> COMM_WORLD ranks."""
    from mpi4py import MPI

    if comm == MPI.COMM_WORLD or not ranks:
        return {r: r for r in ranks}
    order = sorted(ranks)
    group, world = comm.Get_group(), MPI.COMM_WORLD.Get_group()
    try:
        return dict(zip(order, MPI.Group.Translate_ranks(group, order, world)))
    finally:
        group.Free()
        world.Free()
