"""Policies and launches. Kept thin: normalise arguments, call the Rust core."""

from __future__ import annotations

import sys
import time
import types
import weakref

from .. import _native
from ._lazy import LazyNumber
from ._kernels import _classify, native_of
from ._lambdas import is_lambda, lambda_kernel
from ._rng import RandomPool
from ._scratch import sized_policy
from ._reducers import finish as finish_reduced, launch_code, reducer_name
from ._types import PATTERN, SPACES, ExecutionSpace, cuda_default, space_code

AUTO = -1
_policy_new = _native.Policy.__new__


class ExecutionPolicy(_native.Policy):
    """The base of pk.RangePolicy, pk.MDRangePolicy and pk.TeamPolicy."""

    def __init__(self, *args, **kwargs):
        pass

    @property
    def space(self) -> ExecutionSpace:
        code = _native.Policy.space.__get__(self)
        return ExecutionSpace.Default if code is None else ExecutionSpace(code)


class RangePolicy(ExecutionPolicy):
    """`pk.RangePolicy([space,] begin, end)`."""

    def __new__(cls, *args, **kwargs):
        if len(args) == 2 and type(args[0]) is int and type(args[1]) is int and not kwargs:
            return _policy_new(cls, [args[0]], [args[1]], None)  # the common (begin, end), in one step
        space = kwargs.pop("space", None)
        if args and isinstance(args[0], SPACES):
            space, args = args[0], args[1:]
        if len(args) != 2 or kwargs:
            raise TypeError("pk.RangePolicy takes ([space,] begin, end)")
        return super().__new__(cls, [int(args[0])], [int(args[1])], space_code(space))

    @property
    def begin(self) -> int:
        return _native.Policy.begin.__get__(self)[0]

    @property
    def end(self) -> int:
        return _native.Policy.end.__get__(self)[0]


class MDRangePolicy(ExecutionPolicy):
    """`pk.MDRangePolicy([b0, b1, ...], [e0, e1, ...], [tile])`; `rank=pk.Rank(...)`,
    `iter_outer=` and `iter_inner=` choose an iteration order, which results never
    depend on (accepted, not needed)."""

    def __new__(cls, begin, end, tile=None, space=None, **_):
        if isinstance(begin, SPACES):
            space, begin, end = begin, end, tile
        return super().__new__(cls, [int(b) for b in begin], [int(e) for e in end], space_code(space))


class TeamPolicy(ExecutionPolicy):
    """`pk.TeamPolicy([space,] league_size, team_size | pk.AUTO, [vector_length])`: the
    workunit's first parameter is the team member (`pk.TeamMember`)."""

    def __new__(cls, *args, **kwargs):
        space = kwargs.pop("space", None)
        if args and isinstance(args[0], SPACES):
            space, args = args[0], args[1:]
        league = kwargs.pop("league_size", args[0] if len(args) > 0 else None)
        team = kwargs.pop("team_size", args[1] if len(args) > 1 else None)
        vector = kwargs.pop("vector_length", args[2] if len(args) > 2 else 1)
        if kwargs or league is None or team is None or len(args) > 3:
            raise TypeError("pk.TeamPolicy takes ([space,] league_size, team_size | pk.AUTO, [vector_length])")
        if isinstance(team, str) and team.lower() == "auto":  # PyKokkos accepts the string too
            team = AUTO
        team = AUTO if team is AUTO else int(team)
        if team == 0 or team < AUTO:
            raise ValueError(f"pk.TeamPolicy: team_size must be positive or pk.AUTO, got {team}")
        return super().__new__(cls, [0, 0, 0], [int(league), team, int(vector)], space_code(space), True)

    @property
    def league_size(self) -> int:
        return _native.Policy.end.__get__(self)[0]

    @property
    def team_size(self) -> int:
        return _native.Policy.end.__get__(self)[1]

    @property
    def vector_length(self) -> int:
        return _native.Policy.end.__get__(self)[2]


def _split(args, what):
    """`([name,] policy, workunit)`."""
    if args and isinstance(args[0], str):
        name, args = args[0], args[1:]
    else:
        name = None
    if len(args) != 2:
        raise TypeError(f"pk.{what} takes ([name,] policy, workunit, **kwargs)")
    return name, args[0], args[1]


# A class's @pk.function methods, found once per class: walking `dir()` took
# about 10 us, most of a method launch's cost (functor classes launch in loops).
# The entry is checked against the class as it is now: the size of each
# class dict on its MRO (a method added or deleted later) and the identity of
# each method found (one replaced later, as a notebook does).
_FUNCTIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _class_functions(cls) -> dict:
    """{"self.name": classified @pk.function method} of `cls` (its bases' too)."""
    mro = cls.__mro__  # `object` last, whose dict does not change
    sizes = len(cls.__dict__) if len(mro) == 2 else tuple([len(k.__dict__) for k in mro[:-1]])
    entry = _FUNCTIONS.get(cls)
    if entry is not None and entry[0] == sizes:
        for k, m in entry[1]:
            if getattr(cls, k, None) is not m:
                break
        else:
            return entry[2]
    found, seen = {}, []
    for k in dir(cls):
        m = getattr(cls, k, None)
        if getattr(m, "__pk_function__", False):
            found["self." + k] = _classify(m)
            seen.append((k, m))
    _FUNCTIONS[cls] = (sizes, tuple(seen), found)
    return found


_MEMBER_TYPES = (bool, int, float, _native.View, RandomPool)


def _target(wu, what):
    """(native workunit, functor members, functor methods) for a launch target."""
    func = getattr(wu, "__func__", None)
    nat = native_of(wu if func is None else func)
    if nat is not None and func is None:
        return nat, None, None
    if nat is not None:  # a method: the instance's fields are the kernel's members
        obj = wu.__self__
        members = {}
        for k, v in vars(obj).items():
            if isinstance(v, _MEMBER_TYPES) or hasattr(v, "__array_interface__"):
                members[k] = v
            elif isinstance(v, LazyNumber):  # a reduction's total stored in a field
                members[k] = v._get()
        return nat, members, _class_functions(type(obj))
    if not callable(wu):
        raise TypeError(f"pk.{what} needs a @pk.workunit function, got {type(wu).__name__}")
    raise TypeError(f"pk.{what}: '{getattr(wu, '__name__', wu)}' is not decorated with @pk.workunit")


# A lazy total or a random pool passed to a launch is known by its class, not
# by probing its attributes (src/python/args.rs).
_native.register_arg_types(LazyNumber, (RandomPool,))

_Pending = _native.Pending
_FunctionType = types.FunctionType
_getframe = sys._getframe
_native_launch = _native.launch


def _finish(r, initial):
    # Lazy mode records reductions and hands back a pending total.
    return LazyNumber(r, initial) if type(r) is _Pending else r


def _lambda_args(args):
    """(name, policy, lambda, target view) when the launch's kernel is a lambda."""
    a = list(args)
    name = a.pop(0) if a and isinstance(a[0], str) else None
    if len(a) in (2, 3) and is_lambda(a[1]):
        return name, a[0], a[1], (a[2] if len(a) == 3 else None)
    return None


def _launch(pattern, args, what, kwargs, initial=None):
    lam = _lambda_args(args)
    if lam is not None:  # PyKokkos' lambda kernels (`lambda i, acc: acc + x[i]`)
        name, policy, fn, target = lam
        wu, kw = lambda_kernel(fn, pattern, target)
        kwargs = {**kw, **kwargs}
        args = (policy, wu) if name is None else (name, policy, wu)
    name, policy, wu = _split(args, what)
    nat, members, methods = _target(wu, what)
    scratch = getattr(wu, "__pk_scratch__", None)
    if scratch is not None:  # @pk.workunit(scratch=...): sized from this launch
        policy = sized_policy(policy, scratch, kwargs, getattr(wu, "__self__", None))
    f = _getframe(2)
    if members is None:
        r = _native_launch(pattern, policy, nat, kwargs, name, False, None, initial, f.f_code, f.f_lasti)
    else:
        r = _native_launch(pattern, policy, nat, members, name, True, methods, initial, f.f_code, f.f_lasti)
    return _finish(r, initial)


# pk.parallel_for and pk.parallel_reduce are native (_native.parallel_for):
# the common call (policy, plain @pk.workunit function, keyword arguments)
# launches without a Python frame of ours; every other form comes here.


def _parallel_for(*args, **kwargs):
    if len(args) >= 2 and isinstance(args[-1], list):
        name, policy, wus = _split(args, "parallel_for")
        return _explicit_fusion(policy, wus, kwargs)
    return _launch(PATTERN["parallel_for"], args, "parallel_for", kwargs)


def _parallel_reduce(*args, initial_value=None, reducer=None, **kwargs):
    if reducer is not None:
        name = reducer_name(reducer)
        if name != "Sum":
            if initial_value is not None and name not in ("Prod", "Min", "Max", "LAnd", "LOr", "BAnd", "BOr"):
                raise TypeError(f"initial_value is not supported with reducer=pk.{name}")
            r = _launch(launch_code(name), args, "parallel_reduce", kwargs)
            return finish_reduced(name, r, initial_value)
    return _launch(PATTERN["parallel_reduce"], args, "parallel_reduce", kwargs, initial_value)


_native.set_launch_forms(_parallel_for, _parallel_reduce, _finish, _FunctionType)
parallel_for = _native.parallel_for
parallel_reduce = _native.parallel_reduce


def parallel_scan(*args, **kwargs):
    return _launch(PATTERN["parallel_scan"], args, "parallel_scan", kwargs)


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
    """`pk.Timer()`: seconds since construction or the last reset().

    In lazy mode (PK_FUSE=1) construction, reset() and seconds() first run
    the work submitted before them, so that a Timer measures what it measures
    eagerly: host launches run at their call eagerly (programs time them with
    a Timer and no fence), and a lazy Timer would otherwise time only their
    recording; they are waited for. GPU launches are queued eagerly and the
    host goes on: lazily they are submitted, not waited for (waiting would
    drain the GPU's queue at every reading, which eager mode never does)."""

    def __init__(self):
        _settle()
        self._t0 = time.perf_counter()

    def seconds(self) -> float:
        _settle()
        return time.perf_counter() - self._t0

    def reset(self) -> None:
        _settle()
        self._t0 = time.perf_counter()


def _settle() -> None:
    if _native.lazy_enabled():
        _native.fence(not cuda_default())
