"""What runs a jitted function the Kokkos translation cannot take: the real
`numba` package, which a Numba program already has (results identical to plain
Numba), or plain Python where Numba is not installed.

The Numba version of a function is the same code object under a copy of its
globals in which pykokkos.numba's names (the module, njit, prange, types) and
every other jitted function become real Numba's: Numba then compiles the whole
call tree, as it would have without pykokkos.numba. Numba freezes globals at
compile time anyway, so the copy changes nothing it would see.
"""

from __future__ import annotations

import importlib
import sys
import types
import warnings


class FallbackWarning(UserWarning):
    """A jitted function was not offloaded to Kokkos; the message says where and why."""


_REAL: list = []  # [module or None], once looked up
# Numba imported before pykokkos.numba (a driver that then lets `import numba`
# name pykokkos.numba): that module is the real one.
if (
    getattr(sys.modules.get("numba"), "__name__", None) == "numba"
    and hasattr(sys.modules.get("numba"), "njit")
    and "numba.core" in sys.modules
):
    _REAL.append(sys.modules["numba"])


def real_numba():
    """The real numba package, or None where it is not installed (or only
    pykokkos.numba answers to the name)."""
    if not _REAL:
        ours = sys.modules.get("pykokkos.numba")
        shadow = sys.modules.get("numba")
        if shadow is not None and shadow is ours:
            del sys.modules["numba"]
        try:
            mod = importlib.import_module("numba")
        except ImportError:
            mod = None
        finally:
            if shadow is not None and shadow is ours:
                sys.modules["numba"] = shadow
        _REAL.append(mod if mod is not None and mod is not ours else None)
    return _REAL[0]


def _translation_map(real) -> dict:
    """id(pykokkos.numba object) -> real Numba object of the same name."""
    ours = sys.modules["pykokkos.numba"]
    out = {id(ours): real}
    for name in dir(ours):
        if name.startswith("_") or not hasattr(real, name):
            continue
        value = getattr(ours, name)
        if isinstance(value, (types.FunctionType, type)) or name in ours._TYPES:
            out[id(value)] = getattr(real, name)
    return out


class Builder:
    """Real Numba dispatchers for pykokkos.numba Dispatchers (one each)."""

    def __init__(self, real):
        self.real = real
        self.map = _translation_map(real)
        self.made: dict = {}  # id(Dispatcher) -> real dispatcher

    def value(self, v):
        if getattr(type(v), "__pk_dispatcher__", False):  # a pykokkos.numba Dispatcher
            return self.dispatcher(v)
        if getattr(v, "__pk_vectorize__", False):  # Numba's own ufunc of the same function
            return v.numba_version(self.real)
        if getattr(v, "__pk_stencil__", False):  # Numba's own stencil of the same kernel
            if id(v) not in self.made:
                opts = dict(v.options)
                self.made[id(v)] = self.real.stencil(opts.pop("func_or_mode", "constant"), **opts)(v.py_func)
            return self.made[id(v)]
        return self.map.get(id(v), v)

    def dispatcher(self, d):
        got = self.made.get(id(d))
        if got is not None:
            return got
        fn = d.py_func
        scope: dict = {}
        closure = None
        if fn.__closure__:
            closure = tuple(types.CellType(self.value(c.cell_contents)) for c in fn.__closure__)
        twin = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, closure)
        twin.__kwdefaults__ = fn.__kwdefaults__
        twin.__qualname__, twin.__module__, twin.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
        options = {k: v for k, v in d.options.items() if k != "fallback"}
        made = (self.real.njit if options.pop("nopython", False) else self.real.jit)(**options)(twin)
        self.made[id(d)] = made
        if d.last_ran is None:  # it will run inside its caller's Numba code
            d.last_ran, d.why[None] = "numba", "called from a function that runs under Numba"
        # Filled after registering, so recursive and mutually recursive functions find themselves.
        scope.update({k: self.value(v) for k, v in fn.__globals__.items()})
        return made


_BUILDER: list = []


def numba_version(d):
    """The real Numba dispatcher of Dispatcher `d`, or None without Numba."""
    real = real_numba()
    if real is None:
        return None
    if not _BUILDER:
        _BUILDER.append(Builder(real))
    return _BUILDER[0].dispatcher(d)


def where(fn) -> str:
    code = fn.__code__
    return f"{code.co_filename}:{code.co_firstlineno}"


def warn(fn, how: str, why: str) -> None:
    """The one warning per function: what was not offloaded, and why."""
    reason = why.strip().splitlines()
    first = reason[0] if reason else "not translatable"
    rest = "\n".join(reason[1:])
    text = f"pykokkos.numba: {fn.__qualname__} ({where(fn)}) runs under {how}, not as Kokkos kernels: {first}" + (
        f"\n{rest}" if rest else ""
    )
    warnings.warn_explicit(text, FallbackWarning, fn.__code__.co_filename, fn.__code__.co_firstlineno, module=fn.__module__)
