"""Numba programs on Kokkos: `import pykokkos.numba as numba`.

`@njit` / `@jit` functions are translated, typed from each call's arguments as
Numba types them, into PyKokkos workunits: `prange` loops run as parallel
kernels (reductions where they accumulate scalars), serial loops as compiled
one-item kernels, array expressions and NumPy reductions as kernels. Under
PK_FUSE=1 those kernels fuse like any others; `pk.set_default_space(pk.Cuda)`
runs them on the GPU. `python -m pykokkos migrate prog.py` writes the
translation out as plain PyKokkos source.

A function the translation cannot take runs under the real Numba (plain Python
without it), with one FallbackWarning saying where and why; `report()` lists
how each function last ran. PK_NUMBA_STRICT=1 turns the fallback off.
"""

from __future__ import annotations

import os as _os
import types as _types_mod

from . import rt  # noqa: F401  (used by generated code)
from ._dispatch import Dispatcher, jit, njit, prange
from ._errors import UnsupportedError
from ._fallback import FallbackWarning
from ._report import report
from ._sigs import TYPES as _TYPES
from ._stencil import stencil
from ._vectorize import vectorize

globals().update(_TYPES)
types = _types_mod.SimpleNamespace(**_TYPES)
config = _types_mod.SimpleNamespace(NUMBA_NUM_THREADS=_os.cpu_count() or 1, DISABLE_JIT=False)
__version__ = "0.1.0+pykokkos"


def get_num_threads() -> int:
    return config.NUMBA_NUM_THREADS


def set_num_threads(n: int) -> None:
    """Accepted for compatibility: Kokkos' thread count is fixed when it starts."""
    config.NUMBA_NUM_THREADS = int(n)


def __getattr__(name: str):
    """The rest of Numba's API (vectorize, stencil, typed, objmode, ...) is the
    real package's: what uses it runs under Numba itself."""
    from ._fallback import real_numba

    real = real_numba()
    if real is None or name.startswith("__"):
        raise AttributeError(f"module 'pykokkos.numba' has no attribute {name!r}")
    return getattr(real, name)


__all__ = [
    "Dispatcher",
    "jit",
    "njit",
    "prange",
    "stencil",
    "vectorize",
    "UnsupportedError",
    "FallbackWarning",
    "report",
    "types",
    "config",
    "get_num_threads",
    "set_num_threads",
    *sorted(_TYPES),
]
