"""pykokkos-fuse: PyKokkos-compatible Python kernels compiled to Kokkos C++.

`import pykokkos as pk` runs existing PyKokkos programs unchanged.
"""

from __future__ import annotations

import atexit
import math as _math
import os as _os

from .runtime import _openblas  # noqa: F401  first: it acts before NumPy is imported
from . import _native
from .install._install import install_kokkos as _install_kokkos
from .runtime._kernels import classtype, function, functor, workunit
from .runtime._workload import Iterate, Rank, callback, execute, main, printf, workload
from .runtime._launch import (
    AUTO,
    ExecutionPolicy,
    MDRangePolicy,
    RangePolicy,
    TeamPolicy,
    Timer,
    fence,
    flush,
    get_default_space,
    parallel_for,
    parallel_reduce,
    parallel_scan,
    set_default_space,
)
from .runtime._types import (
    Acc,
    Atomic,
    Cuda,
    CudaSpace,
    CudaUVMSpace,
    DataType,
    DeviceExecutionSpace,
    ExecutionSpace,
    ExecutionSpaceInstance,
    HostParallelExecutionSpace,
    HostSerialExecutionSpace,
    HostSpace,
    Layout,
    LayoutDefault,
    LayoutLeft,
    LayoutRight,
    MemorySpace,
    OpenMP,
    PerTeam,
    PerThread,
    RandomAccess,
    Restrict,
    ScratchView1D,
    ScratchView2D,
    ScratchView,
    ScratchView3D,
    ScratchView4D,
    ScratchView5D,
    ScratchView6D,
    ScratchView7D,
    ScratchView8D,
    Serial,
    TeamMember,
    TeamThreadMDRange,
    TeamThreadRange,
    TeamVectorMDRange,
    TeamVectorRange,
    ThreadVectorMDRange,
    ThreadVectorRange,
    Trait,
    Unmanaged,
    View1D,
    View2D,
    View3D,
    View4D,
    View5D,
    View6D,
    View7D,
    View8D,
    ViewTypeInfo,
    single,
)
from .runtime._lazy import LazyNumber
from .runtime._ext import compile_into_module
from .runtime._rng import RandomPool, Random_XorShift64_Pool, Random_XorShift1024_Pool, rand
from .runtime._reducers import (
    BAnd,
    BOr,
    LAnd,
    LOr,
    Max,
    MaxLoc,
    Min,
    MinLoc,
    MinMax,
    MinMaxLoc,
    MinMaxLocScalar,
    MinMaxScalar,
    Prod,
    Reducer,
    Sum,
    ValLoc,
)
from .runtime._views import View, array, asarray, from_numpy, full, ones, zeros

KernelSyntaxError = _native.KernelSyntaxError
KernelTypeError = _native.KernelTypeError
CompileError = _native.CompileError
KokkosError = _native.KokkosError

int8, int16, int32, int64 = DataType.int8, DataType.int16, DataType.int32, DataType.int64
uint8, uint16, uint32, uint64 = DataType.uint8, DataType.uint16, DataType.uint32, DataType.uint64
float32, float64 = DataType.float32, DataType.float64
complex64, complex128 = DataType.complex64, DataType.complex128
float = DataType.float32  # noqa: A001  (PyKokkos: pk.float is single precision)
double = real = DataType.float64
bool = DataType.bool  # noqa: A001

pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan


def initialize() -> None:
    """Kokkos starts on first use; calling this starts it now."""
    _native.initialize()


def finalize() -> None:
    """Runs what is pending, then shuts Kokkos down."""
    try:
        _native.flush()
    finally:
        _native.finalize()


def config() -> dict:
    """Compiler, Kokkos install and cache folder in use, and the flags host
    kernels are built with for their CPU (`host_target`)."""
    return dict(_native.toolchain_info())


def _exit_flush() -> None:
    """Runs what is still pending at exit. A failure there is the program's
    failure: its report (naming the launch site) goes to stderr and the exit
    status becomes 1, as for an uncaught exception (Python ignores errors of
    exit handlers otherwise)."""
    try:
        _native.flush()
    except BaseException:
        import os
        import sys
        import traceback

        traceback.print_exc()
        _native.finalize()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


atexit.register(_native.finalize)
from . import trace  # noqa: E402  (pk.trace.record)

# Registered before the exit flush, so it runs after it: the trace holds it.
atexit.register(trace.stop)
# Registered after finalize, so it runs before it: nothing pending is dropped at exit.
atexit.register(_exit_flush)
# A fresh install builds Kokkos at its first kernel (no `make setup` needed).
_native.set_kokkos_installer(_install_kokkos)
trace.start_from_environment()


def explain_graph() -> str:
    """The pending launch DAG as JSON (nodes, buffers, edges)."""
    return _native.graph_json()


def explain(dot: str | None = None, show: bool = True, verbose: bool = False) -> str:
    """The last flush's fusion report: regions, the launches in each (workunit and
    call site) with the rule that fused them, refusals with rule, buffer and reason,
    dead temporaries. Launches of one call site, and alike deferrals, share a line
    unless `verbose`. `dot="dag.dot"` also writes the DAG with its regions as
    Graphviz DOT (and an SVG beside it when `dot` is installed)."""
    last = _native.explain_last(verbose)
    text, graph = last if last else ("no flush has run yet (set PK_FUSE=1)\n", "digraph flush {}\n")
    if dot is not None:
        import shutil
        import subprocess

        with open(dot, "w") as f:
            f.write(graph)
        if shutil.which("dot"):
            subprocess.run(["dot", "-Tsvg", dot, "-o", _os.path.splitext(dot)[0] + ".svg"], check=False)
    if show:
        print(text, end="")
    return text


def device_copies() -> tuple[int, int]:
    """Bytes copied between host and GPU memory by View mirrors so far, as
    (host to device, device to host). Both stay 0 unless a kernel ran in the
    Cuda space."""
    return _native.device_copies()


def pending() -> int:
    """Number of pending launches recorded and not yet run (lazy mode); exact
    repeats of the newest pending launch are folded into it and count once."""
    return _native.pending_count()


from .runtime._binsort import BinOp, BinOp1D, BinOp3D, BinSort  # noqa: E402
from .compat._compat import *  # noqa: E402,F401,F403  (the rest of PyKokkos' names)
from .compat._compat import Optional  # noqa: E402,F401

# PyKokkos' array functions (pk.sqrt, pk.add, pk.sum, ...): see _arrays.py.
from .runtime._arrays import FUNCTIONS as _ARRAY_FUNCTIONS  # noqa: E402

globals().update(_ARRAY_FUNCTIONS)
# Special functions (pk.cyl_bessel_y0, pk.erfcx, ...) on numbers and arrays: see _special.py.
from .runtime._special import FUNCTIONS as _SPECIAL_FUNCTIONS  # noqa: E402

globals().update(_SPECIAL_FUNCTIONS)

__all__ = [n for n in dir() if not n.startswith("_")]
