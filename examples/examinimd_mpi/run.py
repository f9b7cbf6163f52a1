"""Runs PyKokkos' ExaMiniMD port with the MPI communicator of this folder.

    mpiexec -n 2 python -m mpi4py examples/examinimd_mpi/run.py /path/to/ExaMiniMD/standalone \
        -il input/in.lj --commtype MPI

The first argument is ExaMiniMD's folder (the one holding src/ and input/);
the rest are ExaMiniMD's own options. An input path that is not found from
the current directory is looked up in that folder. Nothing of ExaMiniMD is
edited: this script puts its src/ on sys.path and replaces, in the imported
modules, what an MPI run needs:

- modules_comm's factory returns CommMPI for `--commtype MPI`;
- the thermo properties (Temperature, KinE, PotE) sum their value over the
  ranks: the port calls `comm.reduce_float(value, 1)` on a Python float and
  drops the result, which no communicator can reduce in place;
- Input.create_lattice gets the same fix for what it reduces: the global atom
  count, the atom ids (offset by the atoms of lower ranks) and the initial
  velocities (momentum removed and temperature scaled over all ranks, not per
  rank).

Only rank 0 prints (System.do_print; the other ranks' stdout goes to
/dev/null unless EXA_MPI_ALL_STDOUT=1, since create_lattice has one
unconditional print). EXA_MPI_CHECK=1 also checks after every exchange that
the atom ids are 1..N exactly once; EXA_MPI_DIMS=px,py,pz picks the process grid.
"""
import math
import os
import sys

import numpy as np
from mpi4py import MPI


def _setup_paths() -> str:
    if len(sys.argv) < 2 or not os.path.isdir(os.path.join(sys.argv[1], "src")):
        raise SystemExit("usage: run.py EXAMINIMD_DIR [ExaMiniMD options, e.g. -il input/in.lj --commtype MPI]")
    exa_dir = os.path.abspath(sys.argv[1])
    args = sys.argv[2:]
    for i, a in enumerate(args[:-1]):
        if a in ("-il", "--inputlammps") and not os.path.exists(args[i + 1]):
            candidate = os.path.join(exa_dir, args[i + 1])
            if os.path.exists(candidate):
                args[i + 1] = candidate
    sys.argv = [sys.argv[0]] + args  # ExaMiniMD parses sys.argv itself
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(exa_dir, "src"))
    sys.path.insert(1, here)
    return exa_dir


def _patch() -> None:
    import input as exa_input_module
    import modules_comm
    import property_kine
    import property_pote
    import property_temperature
    from comm_mpi import CommMPI
    from types_h import CommType

    # 1. The communicator factory.
    serial_factory = modules_comm.comm_modules_instantiation

    def comm_modules_instantiation(exa_input, system):
        if exa_input.comm_type == CommType.COMM_MPI.value:
            return CommMPI(system, exa_input.force_cutoff + exa_input.neighbor_skin)
        if MPI.COMM_WORLD.Get_size() > 1:
            raise SystemExit("run.py: more than one rank needs --commtype MPI (each rank would run the whole box)")
        return serial_factory(exa_input, system)

    modules_comm.comm_modules_instantiation = comm_modules_instantiation

    # 2. Thermo values summed over the ranks. Each compute() returns its
    # rank's sum times a factor that is the same on every rank.
    def summed(compute):
        def wrapper(self, *args, **kwargs):
            value = float(compute(self, *args, **kwargs))
            if isinstance(self.comm, CommMPI):
                value = self.comm.reduce_float(value, 1)
            return value
        wrapper.__wrapped__ = compute
        return wrapper

    for cls in (property_kine.KinE, property_temperature.Temperature, property_pote.PotE):
        cls.compute = summed(cls.compute)

    # 3. create_lattice: global N, global ids, velocities set over all ranks.
    create_lattice = exa_input_module.Input.create_lattice

    def create_lattice_mpi(self, comm):
        create_lattice(self, comm)
        if not isinstance(comm, CommMPI):
            return
        s = self.system
        n = s.N_local
        s.N = comm.reduce_int(n, 1)
        ids = np.asarray(s.id)
        ids[:n] += comm.exscan_int(n)  # create_lattice numbers each rank's atoms 1..n
        _initial_velocities(self, comm, exa_input_module)
        counts = comm.cart.gather(n, root=0)
        if s.do_print:
            print(f"Atoms on all ranks: {s.N} (per rank: {' '.join(map(str, counts))})")

    exa_input_module.Input.create_lattice = create_lattice_mpi

    # 4. BinningKKSort bins z between miny and maxz (its main passes
    # [minx, miny, miny] as the lower corner). Harmless while sub-domains
    # start at y = z with equal bin sizes (the serial run on a cube, or ranks
    # split along x only), wrong otherwise: ranks split along y make BinSort
    # refuse keys below the range, along z they lose neighbors.
    _fix_binning_lower_corner()


def _fix_binning_lower_corner() -> None:
    import pykokkos as pk
    from binning_types.binning_kksort import BinningKKSort

    @pk.main
    def run(self) -> None:
        keys = self.x[self.range_min:self.range_max, :]
        corner_lo = [self.minx, self.miny, self.minz]
        corner_hi = [self.maxx, self.maxy, self.maxz]
        sorter = pk.BinSort(keys, pk.BinOp3D(keys, [self.nbinx, self.nbiny, self.nbinz], corner_lo, corner_hi))
        sorter.create_permute_vector()
        self.permute_vector = sorter.get_permute_vector()
        self.bin_count_1d = sorter.get_bin_count()
        self.bin_offsets_1d = sorter.get_bin_offsets()
        pk.parallel_for("Binning::AssignOffsets", self.nbinx * self.nbiny * self.nbinz, self.assign_offsets)
        if self.sort:  # the atoms themselves in bin order (range_min is 0 when sorting)
            for view in (keys, self.v[self.range_min:self.range_max, :], self.f[self.range_min:self.range_max, :],
                         self.type, self.id, self.q):
                sorter.sort(view)

    BinningKKSort.run = run


def _initial_velocities(inp, comm, exa_input_module) -> None:
    """LAMMPS' `velocity all create T seed loop geom` over all ranks: each
    atom's random velocity is a function of its position only, so it is the
    same whichever rank owns the atom; the centre-of-mass motion and the
    temperature are then taken over all ranks."""
    from property_temperature import Temperature

    s = inp.system
    n = s.N_local
    x = np.array(np.asarray(s.x)[:n])
    types = np.array(np.asarray(s.type)[:n])
    masses = np.array(np.asarray(s.mass))
    v = np.asarray(s.v)
    rng = exa_input_module.LAMMPS_RandomVelocityGeom()
    for i in range(n):
        rng.reset(inp.temperature_seed, [float(x[i, 0]), float(x[i, 1]), float(x[i, 2])])
        root_m = math.sqrt(masses[int(types[i])])
        v[i, 0] = (rng.uniform() - 0.5) / root_m
        v[i, 1] = (rng.uniform() - 0.5) / root_m
        v[i, 2] = (rng.uniform() - 0.5) / root_m

    m = masses[types.astype(np.int64)]
    totals = np.zeros(4)  # momentum x, y, z and mass, summed in atom order as the serial code does
    for i in range(n):
        totals[0] += m[i] * v[i, 0]
        totals[1] += m[i] * v[i, 1]
        totals[2] += m[i] * v[i, 2]
        totals[3] += m[i]
    comm.reduce_float(totals, 4)
    v[:n] -= totals[:3] / totals[3]

    T = Temperature(comm).compute(s)
    v[:n] *= math.sqrt(inp.temperature_target / T)


def main() -> None:
    _setup_paths()
    rank = MPI.COMM_WORLD.Get_rank()
    if rank != 0 and os.environ.get("EXA_MPI_ALL_STDOUT", "") in ("", "0"):
        sys.stdout = open(os.devnull, "w")
    _patch()

    from examinimd import ExaMiniMD  # after the patches: it imports the factory by name

    exa = ExaMiniMD()
    exa.system.do_print = rank == 0
    exa.init()
    exa.run(exa.input.nsteps)


if __name__ == "__main__":
    main()
