"""The rest of PyKokkos' public names: host-side atomics, the default
precision, layout and memory space queries, UVM and device selection, and
names for types that programs use in annotations and isinstance checks.
Where this machine cannot give upstream's behaviour, the name exists and
says so when used."""

from __future__ import annotations

import enum

import operator
import threading
from functools import reduce
from typing import Optional  # noqa: F401  (PyKokkos re-exports it)

import numpy as np

from ..runtime._types import DataType, ExecutionSpace, LayoutLeft, LayoutRight, MemorySpace, numpy_dtype
from ..runtime._types import get_default_precision, set_default_precision  # noqa: F401  (pk.* names)
from ..runtime._views import View

DataTypeClass = DataType  # PyKokkos' base of pk.double, pk.int32, ...: annotations and checks
ViewType = View
Subview = View  # subviews are Views here (a View over part of another's memory)

_ATOMIC = threading.Lock()  # host atomics: one read-modify-write at a time


def _fetch(op):
    def fetch(view, indices, value):
        with _ATOMIC:
            owner = reduce(operator.getitem, list(indices)[:-1], view)
            last = list(indices)[-1]
            old = owner[last]
            owner[last] = op(old, value)
            return old

    fetch.__doc__ = (
        "Host-side atomic read-modify-write of one element: returns the old value, "
        "as the same call inside a kernel (Kokkos' atomic_fetch_*) does."
    )
    return fetch


atomic_fetch_add = _fetch(operator.add)
atomic_fetch_sub = _fetch(operator.sub)
atomic_fetch_mul = _fetch(operator.mul)
atomic_fetch_div = _fetch(lambda a, b: a / b if isinstance(a, (float, np.floating)) else a // b)
atomic_fetch_mod = _fetch(operator.mod)
atomic_fetch_and = _fetch(operator.and_)
atomic_fetch_or = _fetch(operator.or_)
atomic_fetch_xor = _fetch(operator.xor)
atomic_fetch_lshift = _fetch(operator.lshift)
atomic_fetch_rshift = _fetch(operator.rshift)
atomic_fetch_max = _fetch(max)
atomic_fetch_min = _fetch(min)


def atomic_add(view, indices, value) -> None:
    atomic_fetch_add(view, indices, value)


def atomic_increment(view, indices) -> None:
    atomic_fetch_add(view, indices, 1)


def atomic_compare_exchange(view, indices, comparison, new):
    """Stores `new` if the element equals `comparison`; returns the old value."""
    with _ATOMIC:
        owner = reduce(operator.getitem, list(indices)[:-1], view)
        last = list(indices)[-1]
        old = owner[last]
        if old == comparison:
            owner[last] = new
        return old


def is_host_execution_space(space) -> bool:
    from ..runtime._launch import get_default_space

    if space is ExecutionSpace.Default:
        space = get_default_space()
    return space in (ExecutionSpace.OpenMP, ExecutionSpace.Serial, ExecutionSpace.Debug)


_UVM = [False]


def is_uvm_enabled() -> bool:
    return _UVM[0]


def enable_uvm() -> None:
    """Views for the Cuda space default to CudaUVMSpace (managed memory)."""
    _UVM[0] = True


def disable_uvm() -> None:
    _UVM[0] = False


def get_default_memory_space(space) -> MemorySpace:
    if space is ExecutionSpace.Cuda:
        return MemorySpace.CudaUVMSpace if _UVM[0] else MemorySpace.CudaSpace
    return MemorySpace.HostSpace


def get_default_layout(space) -> object:
    """Kokkos' default layout of a memory space (Views here use the layout they are given)."""
    return LayoutRight if space is MemorySpace.HostSpace else LayoutLeft


def set_device_id(device_id: int) -> None:
    """Chooses the GPU. One process drives one GPU here (rank per GPU): only 0 is accepted."""
    if not isinstance(device_id, int):
        raise TypeError("'device_id' must be of type 'int'")
    if device_id != 0:
        raise RuntimeError(
            f"device {device_id}: this runtime drives GPU 0 of the process (run one process per "
            "GPU and select it with CUDA_VISIBLE_DEVICES)"
        )


def astype(view, dtype) -> View:
    """A copy of `view` with another dtype (NumPy's casting)."""
    from ..runtime._views import array

    return array(np.asarray(view).astype(numpy_dtype(dtype.value) if isinstance(dtype, DataType) else dtype))


def result_type(*operands):
    """NumPy's result type of Views, dtypes and numbers, as a pk dtype."""
    conv = [
        numpy_dtype(o.dtype.value) if isinstance(o, View) else (numpy_dtype(o.value) if isinstance(o, DataType) else o) for o in operands
    ]
    dt = np.result_type(*conv)
    return DataType[dt.name] if dt.name in DataType.__members__ else dt


class UnsupportedFeatureError(RuntimeError):
    """A PyKokkos feature this runtime does not have (the message names it)."""


class _Unsupported:
    """A PyKokkos name whose feature this runtime does not have: using it says so."""

    def __init__(self, name: str, why: str):
        self._name, self._why = name, why

    def _fail(self, *_, **__):
        raise UnsupportedFeatureError(f"pk.{self._name}: {self._why}")

    __call__ = __getitem__ = __getattr__ = _fail

    def __repr__(self) -> str:
        return f"pk.{self._name} (not supported: {self._why})"


class Decorator(enum.Enum):
    """The kinds of PyKokkos decorators (PyKokkos exports this enum)."""

    Workload = "workload"
    Functor = "functor"
    WorkUnit = "workunit"
    KokkosClasstype = "classtype"
    KokkosFunction = "function"
    KokkosMain = "main"
    KokkosCallback = "callback"
    Space = "space"

    @staticmethod
    def is_pykokkos_decorator(decorator) -> bool:
        return isinstance(decorator, Decorator)


def add_enum_to_globals(enumeration: type) -> None:
    """Makes the members of `enumeration` module-level names of pykokkos (as
    PyKokkos does for its spaces, layouts and traits: `pk.OpenMP`)."""
    import sys

    package = sys.modules["pykokkos"]  # (imported: it is what imported this module)
    for member in enumeration:
        setattr(package, member.name, member)


def generic_error(filename: str, lineno, error: str, exit_message: str):
    """PyKokkos' fatal error report: prints the location and exits."""
    import sys

    print(f"\n\033[31m\033[01mError {filename}:{lineno}\033[0m: {error}")
    sys.exit(f"PyKokkos: {exit_message}")


class Runtime:
    """The object PyKokkos keeps as `pk.runtime_singleton.runtime`; here the
    native core is the runtime, and this handle forwards to it."""

    def flush(self) -> None:
        from ..runtime._launch import flush

        flush()

    def fence(self) -> None:
        from ..runtime._launch import fence

        fence()


class _RuntimeSingleton:
    runtime: Runtime | None = None


runtime_singleton = _RuntimeSingleton()
runtime_singleton.runtime = Runtime()


def cleanup() -> None:
    """PyKokkos' exit hook: here it runs what is still pending (idempotent;
    the package's own exit handler does the same and finalizes Kokkos)."""
    from ..runtime._launch import flush

    flush()
