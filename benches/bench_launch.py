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

    # A temporary made in a loop (`t = pk.View([n], pk.double)`), made and
    # dropped, beside NumPy's zero-filled array of the same size.
    view = per_call_us(lambda: pk.View([64], pk.double), calls)
    zeros = per_call_us(lambda: np.zeros(64), calls)

    return {
        "pk_launch_us": launch["median"],
        "pk_launch_mean_us": launch["mean"],
        "pk_launch_p99_us": launch["p99"],
        "pk_native_launch_us": native["median"],
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
