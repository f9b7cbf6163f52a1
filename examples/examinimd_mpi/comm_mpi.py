"""An MPI communicator for PyKokkos' ExaMiniMD port (`--commtype MPI`).

The global box is cut into a 3-D grid of sub-domains, one per rank, by
`MPI.Compute_dims` and a periodic Cartesian communicator. Every exchange runs
in six phases, one per face: x+, x-, y+, y-, z+, z-. In phase 2*d a rank
sends to its + neighbour along dimension d and receives from its - neighbour;
in phase 2*d+1 the other way round. Because a later phase also looks at the
ghosts that earlier phases brought in, edge and corner images come for free.

Where a dimension has a single rank, the neighbour is the rank itself: the
phase then makes the periodic images locally, as CommSerial does, without an
MPI call.

Everything is staged through NumPy on the host: `np.asarray(view)` is the
View's host memory (kernels still pending on it run first). The arrays are
taken again after every `System.grow`, which gives the Views new memory.

A note on the reductions: ExaMiniMD's Python port calls
`comm.reduce_float(KE, 1)` on a Python float and ignores what comes back, so
no communicator can reduce those values "in place". `reduce_float`,
`reduce_int` and `scan_int` here reduce NumPy arrays (and lists) in place and
also return the reduced value; run.py makes the callers use the returned
value.
"""
from __future__ import annotations

import os
import sys

import numpy as np
from mpi4py import MPI

from comm import Comm
from system import System

# Columns of one packed atom: x, y, z, vx, vy, vz, q, id, type. The integers
# travel as doubles (exact far beyond any atom count this code will see).
_NCOL = 9
_TAG_COUNT = 7001
_TAG_DATA = 7002


class CommMPI(Comm):
    def __init__(self, s: System, comm_depth: float):
        super().__init__(s, comm_depth)

        world = MPI.COMM_WORLD
        self.size: int = world.Get_size()
        dims = _dims_from_env(self.size) or MPI.Compute_dims(self.size, 3)
        self.dims = [int(n) for n in dims]
        self.cart = world.Create_cart(self.dims, periods=[True, True, True], reorder=False)
        self.rank: int = self.cart.Get_rank()
        self.coords = [int(c) for c in self.cart.Get_coords(self.rank)]

        # send_to[p] / recv_from[p]: the partner ranks of phase p.
        self.send_to = [0] * 6
        self.recv_from = [0] * 6
        for d in range(3):
            lower, upper = self.cart.Shift(d, 1)
            self.send_to[2 * d], self.recv_from[2 * d] = upper, lower
            self.send_to[2 * d + 1], self.recv_from[2 * d + 1] = lower, upper

        # Halo bookkeeping of the last exchange_halo(), per phase.
        self.send_idx = [np.zeros(0, dtype=np.int64) for _ in range(6)]
        self.num_send = [0] * 6
        self.num_recv = [0] * 6

        self.check_ids: bool = os.environ.get("EXA_MPI_CHECK", "") not in ("", "0")

        if self.rank == 0 and s.do_print:
            print(f"CommMPI: {self.size} rank(s), process grid {self.dims[0]}x{self.dims[1]}x{self.dims[2]}")

    # ---- decomposition ------------------------------------------------------

    def create_domain_decomposition(self) -> None:
        s = self.system
        domain = (s.domain_x, s.domain_y, s.domain_z)
        lo, hi, width = [], [], []
        for d in range(3):
            w = domain[d] / self.dims[d]
            a = self.coords[d] * w
            # The last sub-domain ends at the box edge exactly (no gap from rounding).
            b = domain[d] if self.coords[d] == self.dims[d] - 1 else (self.coords[d] + 1) * w
            lo.append(a)
            hi.append(b)
            width.append(b - a)
            if self.dims[d] > 1 and w < self.comm_depth:
                self.error(f"CommMPI: sub-domain width {w:.4f} along {'xyz'[d]} is smaller than the"
                           f" communication depth {self.comm_depth:.4f}; use fewer ranks or a larger box")

        s.sub_domain_lo_x, s.sub_domain_lo_y, s.sub_domain_lo_z = lo
        s.sub_domain_hi_x, s.sub_domain_hi_y, s.sub_domain_hi_z = hi
        s.sub_domain_x, s.sub_domain_y, s.sub_domain_z = width

    # ---- helpers ------------------------------------------------------------

    def _bounds(self):
        s = self.system
        lo = (s.sub_domain_lo_x, s.sub_domain_lo_y, s.sub_domain_lo_z)
        hi = (s.sub_domain_hi_x, s.sub_domain_hi_y, s.sub_domain_hi_z)
        return lo, hi

    def _is_self(self, phase: int) -> bool:
        return self.dims[phase // 2] == 1

    def _shift(self, phase: int) -> float:
        """The periodic shift an atom sent in this phase gets: nonzero only when
        it crosses the global box edge (with one rank along d, always)."""
        d = phase // 2
        domain = (self.system.domain_x, self.system.domain_y, self.system.domain_z)[d]
        if phase % 2 == 0:
            return -domain if self.coords[d] == self.dims[d] - 1 else 0.0
        return domain if self.coords[d] == 0 else 0.0

    def _pack(self, idx: np.ndarray, phase: int) -> np.ndarray:
        s = self.system
        x, v = np.asarray(s.x), np.asarray(s.v)
        buf = np.empty((len(idx), _NCOL), dtype=np.float64)
        buf[:, 0:3] = x[idx]
        buf[:, 3:6] = v[idx]
        buf[:, 6] = np.asarray(s.q)[idx]
        buf[:, 7] = np.asarray(s.id)[idx]
        buf[:, 8] = np.asarray(s.type)[idx]
        buf[:, phase // 2] += self._shift(phase)
        return buf

    def _unpack(self, buf: np.ndarray, start: int) -> None:
        s = self.system
        k = len(buf)
        if k == 0:
            return
        s.grow(start + k)
        end = start + k
        np.asarray(s.x)[start:end] = buf[:, 0:3]
        np.asarray(s.v)[start:end] = buf[:, 3:6]
        np.asarray(s.q)[start:end] = buf[:, 6]
        ids = np.asarray(s.id)
        ids[start:end] = np.rint(buf[:, 7]).astype(ids.dtype)
        types = np.asarray(s.type)
        types[start:end] = np.rint(buf[:, 8]).astype(types.dtype)

    def _swap(self, dest: int, source: int, send: np.ndarray, ncol: int, nrecv: int = -1) -> np.ndarray:
        """Sends `send` (rows of ncol doubles) to dest, receives from source.
        The row count travels first unless the caller knows it (nrecv >= 0)."""
        send = np.ascontiguousarray(send, dtype=np.float64)
        if nrecv < 0:
            count = np.array([len(send)], dtype=np.int64)
            got = np.zeros(1, dtype=np.int64)
            self.cart.Sendrecv(count, dest, _TAG_COUNT, got, source, _TAG_COUNT)
            nrecv = int(got[0])
        recv = np.empty((nrecv, ncol), dtype=np.float64)
        self.cart.Sendrecv(send, dest, _TAG_DATA, recv, source, _TAG_DATA)
        return recv

    # ---- atom migration -----------------------------------------------------

    def exchange(self) -> None:
        s = self.system
        lo, hi = self._bounds()
        n = s.N_local
        moved = 0
        for phase in range(6):
            d = phase // 2
            coord = np.asarray(s.x)[:n, d]
            leaving = coord > hi[d] if phase % 2 == 0 else coord < lo[d]

            if self._is_self(phase):
                # One rank along d: the atom stays here, wrapped into the box.
                idx = np.flatnonzero(leaving)
                if len(idx):
                    np.asarray(s.x)[idx, d] += self._shift(phase)
                continue

            idx = np.flatnonzero(leaving)
            out = self._pack(idx, phase)
            moved += len(idx)
            if len(idx):
                keep = np.flatnonzero(~leaving)
                m = len(keep)
                for view in (s.x, s.v, s.q, s.id, s.type):
                    a = np.asarray(view)
                    a[:m] = a[keep]  # fancy indexing copies first: overlap is safe
                n = m
            came = self._swap(self.send_to[phase], self.recv_from[phase], out, _NCOL)
            self._unpack(came, n)
            n += len(came)

        s.N_local = n
        s.N_ghost = 0

        # The number of atoms must not change; a mismatch means an atom moved
        # further than one sub-domain between two exchanges (or was lost).
        total = self.cart.allreduce(n, op=MPI.SUM)
        if s.N and total != s.N:
            self.error(f"CommMPI::exchange: {total} atoms on all ranks, expected {s.N}")
        if self.check_ids:
            self._check_ids()
            moved = self.cart.allreduce(moved, op=MPI.SUM)
            if self.rank == 0:
                print(f"CommMPI::exchange: {total} atoms, {moved} moved to another rank, ids 1..N once each")

    def _check_ids(self) -> None:
        s = self.system
        mine = np.array(np.asarray(s.id)[:s.N_local], dtype=np.int64)
        everyone = self.cart.gather(mine, root=0)
        if self.rank == 0:
            ids = np.sort(np.concatenate(everyone))
            if not np.array_equal(ids, np.arange(1, len(ids) + 1)):
                self.error("CommMPI::exchange: atom ids are not 1..N exactly once")

    # ---- ghosts -------------------------------------------------------------

    def exchange_halo(self) -> None:
        s = self.system
        lo, hi = self._bounds()
        n_local = s.N_local
        n_ghost = 0
        for phase in range(6):
            d = phase // 2
            # Candidates: the locals and the ghosts of earlier phases, except
            # the ghosts that just came from the partner of this phase.
            nparticles = n_local + n_ghost - (self.num_recv[phase - 1] if phase % 2 == 1 else 0)
            coord = np.asarray(s.x)[:nparticles, d]
            if phase % 2 == 0:
                near = coord >= hi[d] - self.comm_depth
            else:
                near = coord <= lo[d] + self.comm_depth
            idx = np.flatnonzero(near)
            out = self._pack(idx, phase)
            if self._is_self(phase):
                came = out
            else:
                came = self._swap(self.send_to[phase], self.recv_from[phase], out, _NCOL)
            self._unpack(came, n_local + n_ghost)

            self.send_idx[phase] = idx
            self.num_send[phase] = len(idx)
            self.num_recv[phase] = len(came)
            n_ghost += len(came)

        s.N_ghost = n_ghost

    def update_halo(self) -> None:
        s = self.system
        start = s.N_local
        for phase in range(6):
            d = phase // 2
            x = np.asarray(s.x)
            out = x[self.send_idx[phase]]  # a copy
            out[:, d] += self._shift(phase)
            if self._is_self(phase):
                came = out
            else:
                came = self._swap(self.send_to[phase], self.recv_from[phase], out, 3, self.num_recv[phase])
            x[start:start + len(came)] = came
            start += len(came)

    def update_force(self) -> None:
        # Only called with `newton on`. ExaMiniMD's LJ force always runs on
        # full neighbor lists here (ForceLJNeigh sets half_neigh = False), so
        # ghost forces stay zero and this adds zeros; it is written for half
        # lists all the same: each ghost's force goes back to the rank it came
        # from and is added to the atom it images. Phases run backwards, so a
        # ghost that was forwarded again first collects what its own images got.
        s = self.system
        offsets = [s.N_local] * 6
        for phase in range(1, 6):
            offsets[phase] = offsets[phase - 1] + self.num_recv[phase - 1]
        for phase in range(5, -1, -1):
            f = np.asarray(s.f)
            a = offsets[phase]
            ghost_f = f[a:a + self.num_recv[phase]]
            if self._is_self(phase):
                back = ghost_f.copy()
            else:
                # The reverse of the halo phase: to its source, from its destination.
                back = self._swap(self.recv_from[phase], self.send_to[phase], ghost_f, 3, self.num_send[phase])
            np.add.at(f, self.send_idx[phase], back)

    # ---- reductions ---------------------------------------------------------

    def _allreduce(self, values, N: int, kind):
        if isinstance(values, np.ndarray):  # contiguous arrays: reduced in place
            flat = values.reshape(-1)
            self.cart.Allreduce(MPI.IN_PLACE, flat[:N or flat.size], op=MPI.SUM)
            return values
        if isinstance(values, list):
            count = N or len(values)
            part = np.array(values[:count], dtype=np.float64 if kind is float else np.int64)
            self.cart.Allreduce(MPI.IN_PLACE, part, op=MPI.SUM)
            values[:count] = [kind(v) for v in part]
            return values
        return kind(self.cart.allreduce(kind(values), op=MPI.SUM))

    def reduce_float(self, values, N: int = 1):
        """Sum over all ranks: in place for arrays and lists; returns the sum."""
        return self._allreduce(values, N, float)

    def reduce_int(self, values, N: int = 1):
        """Sum over all ranks: in place for arrays and lists; returns the sum."""
        return self._allreduce(values, N, int)

    def scan_int(self, values, N: int = 1):
        """Inclusive prefix sum over the ranks (as MPI_Scan in the C++ CommMPI):
        the one caller, Input.create_lattice, takes `scan - n` as its offset."""
        if isinstance(values, np.ndarray):
            part = values.reshape(-1)[:N]
            part[...] = self.cart.scan(np.array(part), op=MPI.SUM)
            return values
        return int(self.cart.scan(int(values), op=MPI.SUM))

    def exscan_int(self, value: int) -> int:
        """Exclusive prefix sum of one int (0 on rank 0)."""
        got = self.cart.exscan(int(value), op=MPI.SUM)
        return 0 if got is None else int(got)

    # ---- misc ---------------------------------------------------------------

    def name(self) -> str:
        return "CommMPI"

    def num_processes(self) -> int:
        return self.size

    def process_rank(self) -> int:
        return self.rank

    def error(self, errormsg: str) -> None:
        sys.stdout.flush()
        print(f"[rank {self.rank}] {errormsg}", file=sys.stderr, flush=True)
        MPI.COMM_WORLD.Abort(1)


def _dims_from_env(size: int):
    """EXA_MPI_DIMS=px,py,pz overrides MPI.Compute_dims (tests of other splits)."""
    text = os.environ.get("EXA_MPI_DIMS")
    if not text:
        return None
    dims = [int(t) for t in text.split(",")]
    if len(dims) != 3 or dims[0] * dims[1] * dims[2] != size:
        raise SystemExit(f"EXA_MPI_DIMS={text} does not multiply to {size} ranks")
    return dims
