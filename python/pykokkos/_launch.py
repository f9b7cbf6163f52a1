"""Policies and launches. Kept thin: normalise arguments, call the Rust core."""
from __future__ import annotations

import sys
import time

from . import _native
from ._lazy import LazyNumber
from ._kernels import _classify, native_of
from ._types import ExecutionSpace, space_code

AUTO = -1


def RangePolicy(*args):
    """`pk.RangePolicy([space,] begin, end)`."""
    space = None
    if args and isinstance(args[0], ExecutionSpace):
        space, args = args[0], args[1:]
    if len(args) != 2:
        raise TypeError("pk.RangePolicy takes ([space,] begin, end)")
    return _native.Policy([int(args[0])], [int(args[1])], space_code(space))


def MDRangePolicy(begin, end, tile=None, space=None, **_):
    """`pk.MDRangePolicy([b0, b1, ...], [e0, e1, ...], [tile])`."""
    if isinstance(begin, ExecutionSpace):
        space, begin, end = begin, end, tile
    return _native.Policy([int(b) for b in begin], [int(e) for e in end], space_code(space))


def _split(args, what):
    """`([name,] policy, workunit)`."""
    if args and isinstance(args[0], str):
        name, args = args[0], args[1:]
    else:
        name = None
    if len(args) != 2:
        raise TypeError(f"pk.{what} takes ([name,] policy, workunit, **kwargs)")
    return name, args[0], args[1]


def _target(wu, what):
    """(native workunit, functor members, functor methods) for a launch target."""
    func = getattr(wu, "__func__", None)
    obj = getattr(wu, "__self__", None)
    nat = native_of(wu)
    if nat is not None and func is None:
        return nat, None, None
    if func is not None and native_of(func) is not None:
        members = {}
        for k, v in vars(obj).items():
            if isinstance(v, (bool, int, float, _native.View)) or hasattr(v, "__array_interface__"):
                members[k] = v
        methods = {}
        for k in dir(type(obj)):
            m = getattr(type(obj), k, None)
            if getattr(m, "__pk_function__", False):
                methods["self." + k] = _classify(m)
        return native_of(func), members, methods
    if not callable(wu):
        raise TypeError(f"pk.{what} needs a @pk.workunit function, got {type(wu).__name__}")
    raise TypeError(f"pk.{what}: '{getattr(wu, '__name__', wu)}' is not decorated with @pk.workunit")


def _site(depth=2):
    """(file, line) of the user's launch call, for errors raised at flush time."""
    f = sys._getframe(depth)
    return (f.f_code.co_filename, f.f_lineno)


def _launch(pattern, args, what, kwargs, initial=None):
    name, policy, wu = _split(args, what)
    nat, members, methods = _target(wu, what)
    lazy = _native.lazy_enabled()
    site = _site(3) if lazy else None
    if members is None:
        r = _native.launch(pattern, policy, nat, kwargs, name, False, None, None if lazy else initial, site)
    else:
        r = _native.launch(pattern, policy, nat, members, name, True, methods, None if lazy else initial, site)
    if lazy and r is not None and not isinstance(r, (int, float)):
        return LazyNumber(r, initial)
    if lazy and r is not None and initial is not None:
        return initial + r
    return r


def parallel_for(*args, **kwargs):
    if len(args) >= 2 and isinstance(args[-1], list):
        name, policy, wus = _split(args, "parallel_for")
        return _explicit_fusion(policy, wus, kwargs)
    return _launch(0, args, "parallel_for", kwargs)


def parallel_reduce(*args, initial_value=None, **kwargs):
    return _launch(1, args, "parallel_reduce", kwargs, initial_value)


def parallel_scan(*args, **kwargs):
    return _launch(2, args, "parallel_scan", kwargs)


def _explicit_fusion(policy, wus, kwargs):
    """PyKokkos' older `parallel_for(n, [a, b], args_0={...}, args_1={...})`: the
    listed workunits run in order over the same range."""
    for k, wu in enumerate(wus):
        parallel_for(policy, wu, **kwargs.get(f"args_{k}", {}))


def fence():
    _native.fence()


def flush():
    """Runs all pending work (eager mode has none)."""
    _native.flush()


def set_default_space(space):
    code = space_code(space)
    _native.set_default_space(1 if code is None else code)


def get_default_space():
    return ExecutionSpace(_native.default_space())


class Timer:
    """`pk.Timer()`: seconds since construction or the last reset()."""

    def __init__(self):
        self._t0 = time.perf_counter()

    def seconds(self) -> float:
        return time.perf_counter() - self._t0

    def reset(self) -> None:
        self._t0 = time.perf_counter()
