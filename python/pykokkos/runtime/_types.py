"""dtypes, layouts, spaces, traits and annotation helpers, spelled as in PyKokkos."""

from __future__ import annotations

import enum

import numpy as np

from .. import _native

# The codes the native core takes, from its one table (src/python/wire.rs):
# dtypes in code order, spaces, layouts, launch patterns and reducers.
WIRE = _native.wire_codes()
PATTERN = WIRE["patterns"]  # {"parallel_for": code, "parallel_reduce": ..., "parallel_scan": ...}
_NAMES = WIRE["dtypes"]
# NumPy's scalar type per dtype code, by the core's own names (np.dtype("bool").type is np.bool_).
_NUMPY = [np.dtype(name).type for name in _NAMES]

# Repeated values make aliases: pk.float is float32 and pk.double/pk.real float64, as in PyKokkos.
DataType = enum.Enum(
    "DataType",
    [(n, i) for i, n in enumerate(_NAMES)]
    + [("float", _NAMES.index("float32")), ("double", _NAMES.index("float64")), ("real", _NAMES.index("float64"))],
)
DataType.__doc__ = "Element types of Views (pk.double, pk.int32, pk.complex128, ...)."
# Upstream's dtypes are classes; programs (and its tests) parse str(view.dtype) as one.
DataType.__str__ = lambda self: f"<class 'pykokkos.interface.data_types.{self.name}'>"


def _make_value(self, *args):
    """`pk.double(3)`, `pk.complex128(1.0, 2.0)`: a NumPy scalar of this dtype."""
    t = _NUMPY[self.value]
    if _NAMES[self.value].startswith("complex") and len(args) == 2:  # (real, imaginary), as PyKokkos' complex types take
        return t(complex(float(args[0]), float(args[1])))
    return t(*args)


DataType.__call__ = _make_value


def numpy_dtype(code: int) -> np.dtype:
    return np.dtype(_NUMPY[code])


_BY_NUMPY = {np.dtype(t): i for i, t in enumerate(_NUMPY)}


def dtype_code(d) -> int:
    """Accepts pk dtypes, NumPy dtypes/types, Python int/float/bool and names."""
    if isinstance(d, DataType):
        return d.value
    if d is float:
        return DataType.float64.value
    if d is int:
        return DataType.int32.value
    if d is bool:
        return DataType.bool.value
    if d is complex:
        return DataType.complex128.value
    if isinstance(d, str) and d in DataType.__members__:
        return DataType[d].value
    try:
        return _BY_NUMPY[np.dtype(d)]
    except (TypeError, KeyError):
        raise TypeError(
            f"unsupported View dtype {d!r}: use pk.int8 ... pk.uint64, pk.float32, pk.double, pk.bool, pk.complex64 or pk.complex128"
        ) from None


class Layout(enum.Enum):
    LayoutRight = WIRE["layouts"]["LayoutRight"]
    LayoutLeft = WIRE["layouts"]["LayoutLeft"]
    LayoutDefault = max(WIRE["layouts"].values()) + 1  # (the core reads it as LayoutRight)


LayoutRight = Layout.LayoutRight
LayoutLeft = Layout.LayoutLeft
LayoutDefault = Layout.LayoutDefault


class ExecutionSpace(enum.Enum):
    Serial = WIRE["exec_spaces"]["Serial"]
    OpenMP = WIRE["exec_spaces"]["OpenMP"]
    Cuda = WIRE["exec_spaces"]["Cuda"]
    Debug = WIRE["exec_spaces"]["Debug"]
    Default = max(WIRE["exec_spaces"].values()) + 1  # (resolved in Python, never passed)

    @classmethod
    def _missing_(cls, value):
        # Upstream's values are the names: programs pick a space from a string
        # (ExaMiniMD: `pk.ExecutionSpace(os.environ["PK_EXA_SPACE"])`).
        return cls.__members__.get(value) if isinstance(value, str) else None


_CUDA_CODE = ExecutionSpace.Cuda.value


def cuda_default() -> bool:
    """Whether Cuda is the default execution space: where launches that name no
    space run, and what a View made without a space or layout is laid out for."""
    return _native.default_space() == _CUDA_CODE


Serial = ExecutionSpace.Serial
OpenMP = ExecutionSpace.OpenMP
Cuda = ExecutionSpace.Cuda
# Upstream's groupings (`pk.get_default_space() in pk.DeviceExecutionSpace`);
# HIP and Threads, which they also hold upstream, are not built here.
DeviceExecutionSpace = frozenset({ExecutionSpace.Cuda})
HostParallelExecutionSpace = frozenset({ExecutionSpace.OpenMP})
HostSerialExecutionSpace = frozenset({ExecutionSpace.Serial, ExecutionSpace.Debug})


class ExecutionSpaceInstance:
    """`pk.ExecutionSpaceInstance(space[, stream])`: an instance of a space (a
    CUDA stream). Policies accept it wherever they take a space. Launches on
    an instance run in this process's one launch order, as all launches do
    here, so results are those of any stream order; streams do not overlap."""

    def __init__(self, space: ExecutionSpace, stream=None):
        if space is ExecutionSpace.Default:
            space = ExecutionSpace(_native.default_space())
        if not isinstance(space, ExecutionSpace):
            raise TypeError(f"pk.ExecutionSpaceInstance takes an execution space, not {space!r}")
        if stream is not None and space is not ExecutionSpace.Cuda:
            raise ValueError(f"a stream argument applies to the Cuda space, not {space}")
        self.space = space
        self.stream = stream

    def fence(self) -> None:
        _native.fence()

    def __repr__(self) -> str:
        return f"pk.ExecutionSpaceInstance({self.space})"


# What policies and pk.execute accept as a space.
SPACES = (ExecutionSpace, ExecutionSpaceInstance)


def space_code(s) -> int | None:
    if isinstance(s, ExecutionSpaceInstance):
        s = s.space
    if s is None or s is ExecutionSpace.Default:
        return None
    if s is ExecutionSpace.Debug:
        return 3  # Serial, with bounds-checked view accesses
    if isinstance(s, ExecutionSpace):
        return s.value
    raise TypeError(f"unknown execution space {s!r}: use pk.OpenMP, pk.Serial or pk.Cuda")


class MemorySpace(enum.Enum):
    HostSpace = WIRE["memory_spaces"]["HostSpace"]
    CudaSpace = WIRE["memory_spaces"]["CudaSpace"]
    CudaUVMSpace = WIRE["memory_spaces"]["CudaUVMSpace"]


HostSpace = MemorySpace.HostSpace
CudaSpace = MemorySpace.CudaSpace
CudaUVMSpace = MemorySpace.CudaUVMSpace


class Trait(enum.Enum):
    Atomic = 0
    RandomAccess = 1
    Restrict = 2
    Unmanaged = 3
    TraitDefault = 4


Atomic = Trait.Atomic
RandomAccess = Trait.RandomAccess
Restrict = Trait.Restrict
Unmanaged = Trait.Unmanaged


class _Subscriptable:
    """Annotation helpers such as pk.View1D[pk.double]: read by the translator from
    source text; at run time they only need to be subscriptable."""

    def __init__(self, name: str):
        self._name = name

    def __getitem__(self, item):
        return self

    def __repr__(self) -> str:
        return f"pk.{self._name}"


Acc = _Subscriptable("Acc")
View1D, View2D, View3D, View4D, View5D, View6D, View7D, View8D = (_Subscriptable(f"View{k}D") for k in range(1, 9))
TeamMember = _Subscriptable("TeamMember")


class _ScratchView:
    """pk.ScratchView1D/2D/3D: inside a team workunit, a view of the team's scratch
    memory (`s: pk.ScratchView1D[pk.double] = pk.ScratchView1D(m.team_scratch(0), n)`);
    on the host, `pk.ScratchView1D[dtype].shmem_size(n, ...)` gives the bytes to ask for
    with `policy.set_scratch_size(0, pk.PerTeam(bytes))`."""

    def __init__(self, rank: int, itemsize: int | None = None):
        self._rank, self._itemsize = rank, itemsize

    def __getitem__(self, dtype):
        if isinstance(dtype, DataType):
            size = np.dtype(numpy_dtype(dtype_code(dtype))).itemsize
        elif dtype in (int, float, bool):  # as a View's: int is int32, float double
            size = {int: 4, float: 8, bool: 1}[dtype]
        else:
            try:
                size = np.dtype(dtype).itemsize
            except TypeError:
                raise TypeError(f"pk.ScratchView{self._rank}D[...] takes an element type (pk.double, int, ...), not {dtype!r}") from None
        return _ScratchView(self._rank, size)

    def shmem_size(self, *extents) -> int:
        """Bytes of scratch the view takes: its elements, rounded up to the
        8-byte alignment each scratch allocation starts at (newer PyKokkos')."""
        if self._itemsize is None:
            raise TypeError(
                f"pk.ScratchView{self._rank}D.shmem_size needs the element type: pk.ScratchView{self._rank}D[pk.double].shmem_size(...)"
            )
        if len(extents) != self._rank:
            raise TypeError(f"shmem_size of a {self._rank}-D scratch view takes {self._rank} extent(s)")
        n = 1
        for e in extents:
            n *= int(e)
        return (n * self._itemsize + 7) // 8 * 8

    def __repr__(self) -> str:
        return f"pk.ScratchView{self._rank}D"


ScratchView1D, ScratchView2D, ScratchView3D, ScratchView4D, ScratchView5D, ScratchView6D, ScratchView7D, ScratchView8D = (
    _ScratchView(k) for k in range(1, 9)
)
ScratchView = _ScratchView  # the type of pk.ScratchView1D ... 8D


class PerTeam:
    """`pk.PerTeam(bytes)` for TeamPolicy.set_scratch_size; inside a kernel,
    `pk.single(pk.PerTeam(team_member), body)`."""

    kind = "team"

    def __init__(self, bytes_):
        self.bytes = int(bytes_)


class PerThread(PerTeam):
    kind = "thread"


def _kernel_only(name: str):
    """Names that exist only inside workunits (team ranges, pk.single): the
    translator reads them from the kernel's source; called on the host they
    explain where they belong."""

    def call(*_args, **_kwargs):
        raise RuntimeError(f"pk.{name}(...) is only meaningful inside a @pk.workunit launched with pk.TeamPolicy")

    call.__name__ = call.__qualname__ = name
    return call


TeamThreadRange = _kernel_only("TeamThreadRange")
TeamThreadMDRange = _kernel_only("TeamThreadMDRange")
ThreadVectorMDRange = _kernel_only("ThreadVectorMDRange")
TeamVectorMDRange = _kernel_only("TeamVectorMDRange")
ThreadVectorRange = _kernel_only("ThreadVectorRange")
TeamVectorRange = _kernel_only("TeamVectorRange")
single = _kernel_only("single")


class ViewTypeInfo:
    """Per-view type information for @pk.workunit(name=pk.ViewTypeInfo(layout=...))."""

    def __init__(self, layout=None, space=None, trait=None):
        self.layout, self.space, self.trait = layout, space, trait


_PRECISION = [DataType.float64]


def get_default_precision():
    """The dtype of Views made without one (pk.double unless changed)."""
    return _PRECISION[0]


def set_default_precision(precision) -> None:
    if not isinstance(precision, DataType) or not np.issubdtype(numpy_dtype(precision.value), np.floating):
        raise TypeError(f"the default precision is a floating dtype (pk.float32 or pk.float64), not {precision!r}")
    _PRECISION[0] = precision
