"""(a) Launch cost of a cached trivial kernel on 1 element, beside a NumPy ufunc.

Both sides do the same amount of arithmetic (one element), so the figures are
pure per-call overhead: Python call, argument handling, and (for pk) the
Kokkos/OpenMP parallel region of the launched kernel.
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pykokkos as pk  # noqa: E402
from _util import per_call_us  # noqa: E402


@pk.workunit
def one(i, x, y, z):
    z[i] = x[i] + y[i]


@pk.workunit
def thirteen(i, x, v, f, pack, type_, id_, mass, n_local, n_ghost, dt, lo, hi, phase):
    # ExaMiniMD's shape: 13 keyword arguments, Views, a subview and scalars.
    f[i] = x[i] + v[i] * dt + mass[type_[i]] * (n_local + n_ghost + lo + hi + phase) + pack[i] + id_[i]


@pk.function
def copy_atom(j: int, g: int, x: pk.View2D[pk.double], q: pk.View1D[pk.double], id_: pk.View1D[pk.int32],
              type_: pk.View1D[pk.int32]) -> None:
    x[g][0] = x[j][0]
    x[g][1] = x[j][1]
    x[g][2] = x[j][2]
    q[g] = q[j]
    id_[g] = id_[j]
    type_[g] = type_[j]


@pk.workunit
def halo_copy(i, x, q, id_, type_, pack, first):
    # ExaMiniMD's halo copy: atoms gathered by a pack index into ghost rows.
    copy_atom(pack[i], first + i, x, q, id_, type_)


@pk.workunit
def halo_copy_dealt(i, x, q, id_, type_, pack, first):
    # The same copy in a loop of one pass whose bounds read the work index:
    # the generator takes its items for ones of unequal cost and deals the
    # range out in small chunks (prelude.hpp host_chunks), as every host
    # range up to 2^20 items was dealt out before.
    for k in range(i, i + 1):
        copy_atom(pack[k], first + k, x, q, id_, type_)


@pk.workload
class Functor:
    """PyKokkos' class style: members are the kernel's arguments; `main` launches."""

    def __init__(self, n):
        self.n = n
        self.x, self.y, self.z = pk.View([n], pk.double), pk.View([n], pk.double), pk.View([n], pk.double)
        self.label = "functor"  # fields a kernel cannot take sit beside the Views

    @pk.main
    def run(self):
        pk.parallel_for(self.n, self.one)

    @pk.workunit
    def one(self, i):
        self.z[i] = self.x[i] + self.y[i]


def main(calls: int = 10000) -> dict:
    x = pk.View([1], pk.double)
    y = pk.View([1], pk.double)
    z = pk.View([1], pk.double)
    pk.parallel_for(1, one, x=x, y=y, z=z)  # compile or load, start Kokkos
    pk.fence()

    launch = per_call_us(lambda: pk.parallel_for(1, one, x=x, y=y, z=z), calls)

    # The same launch without the Python wrapper (pk.parallel_for -> _split/_target):
    # what the Rust entry point plus the kernel itself cost.
    nat, kw = one.__pk_workunit__, {"x": x, "y": y, "z": z}
    native = per_call_us(lambda: pk._native.launch(0, 1, nat, kw), calls)

    # The Serial execution space runs the functor on the calling thread: the
    # difference to the figure above is the OpenMP fork/join of the parallel region.
    serial = pk.RangePolicy(pk.Serial, 0, 1)
    pk.parallel_for(serial, one, x=x, y=y, z=z)
    launch_serial = per_call_us(lambda: pk.parallel_for(serial, one, x=x, y=y, z=z), calls)

    # NumPy arrays passed straight to the kernel (buffer protocol on each launch).
    xa, ya, za = np.ones(1), np.ones(1), np.zeros(1)
    pk.parallel_for(1, one, x=xa, y=ya, z=za)
    launch_np = per_call_us(lambda: pk.parallel_for(1, one, x=xa, y=ya, z=za), calls)

    ufunc = per_call_us(lambda: np.add(xa, ya, out=za), calls)

    # The same kernel as a method of a workload class: launched from Python, and
    # through pk.execute (its main launches it).
    fu = Functor(1)
    pk.execute(pk.ExecutionSpace.Default, fu)
    method = per_call_us(lambda: pk.parallel_for(1, fu.one), calls)
    execute = per_call_us(lambda: pk.execute(pk.ExecutionSpace.Default, fu), calls)

    # A temporary made in a loop (`t = pk.View([n], pk.double)`), made and
    # dropped, beside NumPy's zero-filled array of the same size.
    view = per_call_us(lambda: pk.View([64], pk.double), calls)
    zeros = per_call_us(lambda: np.zeros(64), calls)

    # Thirteen keyword arguments (ExaMiniMD's launches), one a subview, beside
    # the three-argument launch; the slice its halo exchange takes before each
    # such launch is the row after.
    n = 8
    x13, v13, f13 = pk.View([n], pk.double), pk.View([n], pk.double), pk.View([n], pk.double)
    packs, type13, id13 = pk.View([6, n], pk.double), pk.View([n], pk.int32), pk.View([n], pk.int32)
    mass = pk.View([2], pk.double)

    pack = packs[2, :]

    def launch13():
        pk.parallel_for(1, thirteen, x=x13, v=v13, f=f13, pack=pack, type_=type13, id_=id13, mass=mass,
                        n_local=n, n_ghost=0, dt=0.005, lo=0, hi=n, phase=2)

    launch13()
    pk.fence()
    many = per_call_us(launch13, calls)
    slice_ = per_call_us(lambda: packs[2, :], calls)
    np_packs = np.zeros((6, n))
    np_slice = per_call_us(lambda: np_packs[2, :], calls)

    # The halo copy over 800 ghosts, split as Kokkos splits a range (a
    # contiguous run per thread) and dealt out in small chunks, side by side.
    atoms, ghosts = 2048, 800
    hx, hq = pk.View([atoms + ghosts, 3], pk.double), pk.View([atoms + ghosts], pk.double)
    hid, htype, hpack = pk.View([atoms + ghosts], pk.int32), pk.View([atoms + ghosts], pk.int32), pk.View([ghosts], pk.int32)
    np.asarray(hpack)[:] = np.random.default_rng(0).integers(0, atoms, ghosts)
    halo = {"x": hx, "q": hq, "id_": hid, "type_": htype, "pack": hpack, "first": atoms}
    copies = {}
    for wu in (halo_copy, halo_copy_dealt):
        pk.parallel_for(ghosts, wu, **halo)
    pk.fence()
    for _ in range(3):  # alternated: the machine's state moves both alike
        for name, wu in (("runs", halo_copy), ("dealt", halo_copy_dealt)):
            t = per_call_us(lambda wu=wu: pk.parallel_for(ghosts, wu, **halo), calls // 4)["median"]
            copies[name] = min(copies.get(name, t), t)

    return {
        "halo_copy_800_us": copies["runs"],
        "halo_copy_800_dealt_us": copies["dealt"],
        "halo_copy_dealt_over_runs": copies["dealt"] / copies["runs"],
        "pk_launch_13_args_us": many["median"],
        "pk_launch_13_over_3_args_us": many["median"] - launch["median"],
        "view_slice_us": slice_["median"],
        "numpy_slice_us": np_slice["median"],
        "pk_launch_us": launch["median"],
        "pk_launch_mean_us": launch["mean"],
        "pk_launch_p99_us": launch["p99"],
        "pk_native_launch_us": native["median"],
        "pk_launch_method_us": method["median"],
        "pk_execute_us": execute["median"],
        "pk_launch_serial_us": launch_serial["median"],
        "pk_launch_numpy_args_us": launch_np["median"],
        "numpy_add_us": ufunc["median"],
        "numpy_add_mean_us": ufunc["mean"],
        "pk_over_numpy": launch["median"] / ufunc["median"],
        "view_new_us": view["median"],
        "view_new_over_numpy_zeros": view["median"] / zeros["median"],
        "threads": pk._native.initialize(),
    }


if __name__ == "__main__":
    for k, v in main().items():
        print(f"{k:28s} {v:.3f}" if isinstance(v, float) else f"{k:28s} {v}")
