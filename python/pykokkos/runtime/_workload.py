"""PyKokkos' workload API: `@pk.workload` classes whose `@pk.main` method
launches the class's workunits, and whose `@pk.callback` methods run after it,
started by `pk.execute(space, instance)`.

PyKokkos translates `main` to C++; here it runs as Python, so its launches go
through the same runtime as any other (recorded, fused and flushed on demand
under PK_FUSE=1), and anything Python allows in it works. The workunits see the
instance's fields (Views and numbers) as members, like a functor's.
"""

from __future__ import annotations

import enum
import functools
import re
import types
import weakref

from ._types import ExecutionSpace


def workload(cls=None, **_):
    """`@pk.workload`: a class with one `@pk.main`, optional `@pk.callback`s and
    `@pk.workunit` methods."""

    def mark(c):
        c.__pk_functor__ = True
        c.__pk_workload__ = True
        return c

    return mark(cls) if cls is not None else mark


def main(fn):
    """`@pk.main`: the workload's entry, run by `pk.execute`."""
    fn.__pk_main__ = True
    return fn


def callback(fn):
    """`@pk.callback`: runs after `main`, in definition order."""
    fn.__pk_callback__ = True
    return fn


_MARKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _marked(cls, attr):
    """Names of `cls`'s methods marked `attr` (bases first), found once per class
    (`pk.execute` runs in loops; walking the class took microseconds)."""
    per_class = _MARKED.setdefault(cls, {})
    found = per_class.get(attr)
    if found is None:
        found = per_class[attr] = tuple(_find_marked(cls, attr))
    return found


def _find_marked(cls, attr):
    seen, out = set(), []
    for klass in reversed(cls.__mro__):
        for name, fn in vars(klass).items():
            if getattr(fn, attr, False) and name not in seen:
                seen.add(name)
                out.append(name)
    return out


def execute(space, workload_instance):
    """Runs the workload's `@pk.main` with `space` as the default execution space,
    then its callbacks."""
    from ._launch import get_default_space, set_default_space

    cls = type(workload_instance)
    if not getattr(cls, "__pk_workload__", False):
        raise TypeError(f"pk.execute takes an instance of a @pk.workload class, got {cls.__name__}")
    mains = _marked(cls, "__pk_main__")
    if len(mains) != 1:
        raise TypeError(f"workload {cls.__name__} needs exactly one @pk.main method, has {len(mains)}")
    if space is not None and not isinstance(space, ExecutionSpace):
        raise TypeError(f"pk.execute: {space!r} is not an execution space (pk.ExecutionSpace.OpenMP, ...)")
    before = get_default_space()
    if space is not None and space is not ExecutionSpace.Default:
        set_default_space(space)
    try:
        _with_field_names(getattr(cls, mains[0]), workload_instance)(workload_instance)
    finally:
        set_default_space(before)
    for name in _marked(cls, "__pk_callback__"):
        getattr(workload_instance, name)()


@functools.lru_cache(maxsize=256)
def _global_names(code) -> frozenset:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return frozenset(names)


def _with_field_names(fn, instance):
    """`main` with the instance's fields also readable by their bare names
    (`n` for `self.n`), and a bare `printf`, as PyKokkos' C++ translation of main allows. The names
    are bound when main starts: main that rebinds `self.n` reads `self.n`."""
    fields = vars(instance)
    used = _global_names(fn.__code__)
    extra = {n: fields[n] for n in used if n in fields}
    if "printf" in used and "printf" not in fn.__globals__ and "printf" not in extra:
        extra["printf"] = printf  # main translated by upstream is C++: printf is C's
    if not extra:
        return fn
    g = dict(fn.__globals__)
    g.update(extra)
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


_C_LENGTH = re.compile(r"%([-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?)(?:hh|h|ll|l|L|z|j|t)?([diouxXeEfFgGcs%])")


def printf(fmt: str, *args) -> None:
    """`pk.printf` outside kernels: C's printf formatting (length modifiers such as
    %ld or %lf accepted), printed without an added newline."""
    from ._lazy import LazyNumber

    text = _C_LENGTH.sub(r"%\1\2", fmt)
    values = tuple(a._get() if isinstance(a, LazyNumber) else a for a in args)
    print(text % values, end="", flush=True)


class Iterate(enum.Enum):
    """Iteration order of an MDRangePolicy (results never depend on it)."""

    Left = "Kokkos::Iterate::Left"
    Right = "Kokkos::Iterate::Right"
    Default = "Kokkos::Iterate::Default"


class Rank:
    """`pk.Rank(n, outer, inner)` for `pk.MDRangePolicy(..., rank=...)`."""

    def __init__(self, n: int, iter_outer: Iterate = Iterate.Default, iter_inner: Iterate = Iterate.Default):
        self.n = n
        self.iter_outer = iter_outer
        self.iter_inner = iter_inner
