"""BinSort's two ways of ordering keys by bin, side by side in one process:
the host's (a counting sort in chunks) and the GPU's (atomics, a scan, slots
ordered per bin), on ExaMiniMD-like keys (3-D positions, about 18 entries a
bin), on the default space. `pk.BinSort` takes the GPU's way only when the
default space is Cuda; this bench says what either way costs on this machine.

    python benches/bench_binsort.py [--sizes 256000,16384,2048] [--reps 15]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pykokkos as pk  # noqa: E402
from pykokkos.runtime import _binsort_kernels as kernels  # noqa: E402


def one_sort(x, op, nbins: int, device: bool) -> float:
    t0 = time.perf_counter()
    perm, _, _ = kernels.stable_order(kernels.bins_of(op, x), nbins, 0, device)
    perm[0]  # the permutation, on the host: the sort has finished
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="256000,16384,2048")
    ap.add_argument("--reps", type=int, default=15, help="alternated sorts per way (median)")
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    print(f"BinSort on {pk.get_default_space()}: median ms a sort (bins of the keys, then the order)")
    print(f"{'keys':>8s} {'bins':>7s} | {'host way':>9s} | {'GPU way':>9s} | GPU/host")
    for n in (int(s) for s in a.sizes.split(",")):
        side = max(1, round((n / 18) ** (1 / 3)))
        x = pk.array(rng.uniform(0.0, 1.0, (n, 3)))
        op = pk.BinOp3D(x, [side] * 3, [0.0] * 3, [1.0] * 3)
        times = {False: [], True: []}
        for device in (False, True, False, True):  # warm-up: compiles, caches
            one_sort(x, op, side**3, device)
        for _ in range(a.reps):
            for device in (False, True):
                times[device].append(one_sort(x, op, side**3, device))
        host, gpu = (statistics.median(times[d]) * 1e3 for d in (False, True))
        print(f"{n:>8d} {side**3:>7d} | {host:9.3f} | {gpu:9.3f} | {gpu / host:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
