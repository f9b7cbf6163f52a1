"""Runs PyKokkos' Python ExaMiniMD (on Cuda) to its first neighbour list, saves
what the force kernel reads (x, type, num_neighs, neighs, in their layouts),
and writes our NVRTC form of the force kernel for those very Views.
Usage: dump.py <ExaMiniMD standalone folder> <out folder> <main.py's arguments>"""

import importlib
import os
import runpy
import sys

import numpy as np

import pykokkos as pk
from pykokkos import _native
from pykokkos.runtime import _kernels


def main() -> None:
    md, out = sys.argv[1], sys.argv[2]
    sys.path.insert(0, md + "/src")
    os.chdir(md)
    n2d = importlib.import_module("neighbor_types.neighbor_2d")
    force = importlib.import_module("force_types.force_lj_neigh").fullneigh_for
    build = n2d.Neighbor2D.create_neigh_list

    calls = [0]
    at = int(os.environ.get("PK_DUMP_AT", "1"))  # the neighbour list to save: 1 = the first

    def dump_then_stop(self, system, *a, **k):
        build(self, system, *a, **k)
        calls[0] += 1
        if calls[0] < at:
            return
        nl = self.neigh_list
        arrays = dict(x=system.x, type=system.type, num_neighs=nl.num_neighs, neighs=nl.neighs)
        meta = []
        for name, v in arrays.items():
            a = np.asarray(v)
            order = "F" if v.layout is pk.LayoutLeft else "C"
            a.ravel(order=order).tofile(f"{out}/{name}.bin")
            meta.append(f"{name} {a.dtype} {order} " + " ".join(map(str, a.shape)))
        with open(f"{out}/meta.txt", "w") as f:
            f.write("\n".join(meta) + f"\nN_local {system.N_local}\n")
        coeffs = {k: pk.View([2, 2], pk.double) for k in ("rnd_lj1", "rnd_lj2", "rnd_cutsq")}
        kw = dict(coeffs, num_neighs_view=nl.num_neighs, neighs_view=nl.neighs, x=system.x, f=system.f, type=system.type)
        policy = _native.Policy([0], [system.N_local], pk.ExecutionSpace.Cuda.value)
        src = _native.generate_source(0, policy, _kernels._capture(force), kw, nvrtc=True)
        with open(f"{out}/force.cu", "w") as f:
            f.write(src)
        print("layouts:", {k: str(v.layout) for k, v in arrays.items()}, "N_local", system.N_local)
        raise SystemExit(0)

    n2d.Neighbor2D.create_neigh_list = dump_then_stop
    sys.argv = ["src/main.py"] + sys.argv[3:]
    runpy.run_path("src/main.py", run_name="__main__")


if __name__ == "__main__":
    main()
