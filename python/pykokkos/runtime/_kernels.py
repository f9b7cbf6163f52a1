"""Decorators: capture a kernel's source once, and resolve its free names when it
is first compiled (so functions defined later in the module are found)."""

from __future__ import annotations

import builtins
import inspect
import re
import math
import sys
import textwrap
import types

import numpy as np

from .. import _native
from ._scratch import check_entries
from ._types import DataType

_ATTR = "__pk_workunit__"


def _capture(fn) -> _native.Workunit:
    if not callable(fn):
        raise TypeError(f"@pk.workunit/@pk.function decorate functions, not {type(fn).__name__}")
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        raise TypeError(
            f"cannot read the source of {getattr(fn, '__name__', fn)!r}: kernels must be defined in a file, "
            "not typed at an interactive prompt or built with exec()"
        ) from None
    text = "".join(lines)
    indent = len(lines[0]) - len(lines[0].lstrip())
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    return _native.Workunit(fn, fn.__name__, textwrap.dedent(text), filename, first, indent)


# Workunits declared with scratch= keep their native object under another
# name, so the launch fast path (which looks for _ATTR) leaves them to the
# path that sizes their scratch.
_SCRATCH_ATTR = "__pk_scratch_workunit__"


def native_of(fn) -> _native.Workunit | None:
    return getattr(fn, _ATTR, None) or getattr(fn, _SCRATCH_ATTR, None)


def workunit(fn=None, scratch=None, **view_info):
    """`@pk.workunit`, `@pk.workunit(view=pk.ViewTypeInfo(layout=...))` or
    `@pk.workunit(scratch=[(dtype, lambda p: elements[, level])])`.

    Per-view layout hints are accepted; the generated code always uses the
    argument's real layout, so results never depend on them. `scratch=`
    sizes team scratch at each launch (see _scratch.py).
    """
    entries = None if scratch is None else check_entries(scratch)

    def mark(f):
        setattr(f, _ATTR if entries is None else _SCRATCH_ATTR, _capture(f))
        f.__pk_view_info__ = view_info
        if entries is not None:
            f.__pk_scratch__ = entries
        return f

    return mark(fn) if fn is not None else mark


def function(fn=None, **_):
    """`@pk.function`: a helper callable from kernels (and still from Python)."""

    def mark(f):
        setattr(f, _ATTR, _capture(f))
        f.__pk_function__ = True
        return f

    return mark(fn) if fn is not None else mark


def functor(cls=None, **_):
    """`@pk.functor`: members come from the instance at each launch."""

    def mark(c):
        c.__pk_functor__ = True
        return c

    return mark(cls) if cls is not None else mark


def classtype(cls):
    """`@pk.classtype`: a small value class usable inside kernels."""
    cls.__pk_classtype__ = True
    init = cls.__dict__.get("__init__")
    if init is not None and not hasattr(init, _ATTR):
        setattr(init, _ATTR, _capture(init))
    # Methods are callable on values inside kernels: `p.norm()`.
    for name, fn in list(cls.__dict__.items()):
        if name != "__init__" and inspect.isfunction(fn) and not hasattr(fn, _ATTR):
            setattr(fn, _ATTR, _capture(fn))
    return cls


def _classify(value):
    """How the translator should see a Python value a kernel refers to."""
    # The package itself, as a kernel's `pk`: the facade imported this module,
    # so it is in sys.modules (importing it here would be an edge upwards).
    pykokkos = sys.modules["pykokkos"]

    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value) if -(2**63) <= value < 2**63 else None
    if isinstance(value, float):
        return ("float", value)
    if isinstance(value, np.generic) and value.ndim == 0:
        return ("float", float(value)) if isinstance(value, np.floating) else ("int", int(value))
    if value is math:
        return ("math",)
    if value is pykokkos:
        return ("pk",)
    if value is np:
        return ("np",)
    if isinstance(value, DataType):
        return ("dtype", value.value)
    if isinstance(value, type) and getattr(value, "__pk_classtype__", False):
        init = value.__dict__.get("__init__")
        methods = {
            k: native_of(f) for k, f in value.__dict__.items() if k != "__init__" and inspect.isfunction(f) and native_of(f) is not None
        }
        return ("classtype", value.__name__, native_of(init) if init is not None else None, methods)
    nat = native_of(value)
    if nat is not None and getattr(value, "__pk_function__", False):
        return ("function", nat)
    if isinstance(value, types.MethodType):
        return _classify(value.__func__)
    return None


def _resolve(fn, annotated) -> dict:
    """Free names of `fn` (closure first, then globals, then builtins) -> kinds.
    `annotated`: the names its local annotations read, from the runtime's
    parse of the source captured at decoration."""
    code = fn.__code__
    found = {}
    closure = {}
    if fn.__closure__:
        for name, cell in zip(code.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                pass
    names = set(code.co_names) | set(code.co_freevars)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= set(c.co_names)
    # Annotations are not in co_names: `def f(p: Vec2)` needs Vec2 resolved too.
    for ann in getattr(fn, "__annotations__", {}).values():
        if isinstance(ann, str):
            names |= set(re.findall(r"[A-Za-z_]\w*", ann))
        elif isinstance(ann, type):
            names.add(ann.__name__)
    # Nor are annotations of locals (`d: DepOne = self.ret()`), which Python
    # never evaluates: they come from the source.
    names |= set(annotated)
    # Parameter defaults, as Python evaluated them when the function was defined.
    if fn.__defaults__:
        pos = code.co_varnames[: code.co_argcount]
        for pname, value in zip(pos[len(pos) - len(fn.__defaults__) :], fn.__defaults__):
            kind = _classify(value)
            if kind is not None:
                found["default:" + pname] = kind
    for pname, value in (fn.__kwdefaults__ or {}).items():
        kind = _classify(value)
        if kind is not None:
            found["default:" + pname] = kind
    for name in sorted(names):
        if name in closure:
            value = closure[name]
        elif name in fn.__globals__:
            value = fn.__globals__[name]
        else:
            continue
        kind = _classify(value)
        if kind is None and _plain_helper(value, fn, name):
            nat = _helper_native(value)
            kind = ("function", nat) if nat is not None else None
        if kind is not None:
            found[name] = kind
    return found


_HELPERS: dict = {}


def _plain_helper(value, fn, name: str) -> bool:
    """A plain function of the kernel's own module, called without
    @pk.function (upstream compiles these as helpers, recursively). A name
    that is also a math function (`log`, `sqrt`) stays the math function in
    kernels, whatever the module defines under it."""
    return (
        isinstance(value, types.FunctionType)
        and native_of(value) is None
        and not hasattr(math, name)
        and value.__module__ == getattr(fn, "__module__", None)
        and value.__name__ != "<lambda>"
    )


def _helper_native(value):
    """The native helper of a plain function (made once; the function itself is left as it is)."""
    if value not in _HELPERS:
        try:
            _HELPERS[value] = _capture(value)
        except TypeError:
            _HELPERS[value] = None
    return _HELPERS[value]


def _constant_sources(fn, methods=None) -> list:
    """Where each number a kernel compiles in lives, as (globals dict or
    closure cell, name or None for a cell, the name, the id of the native
    workunit whose translation reads it); for the workunit, its @pk.function
    helpers, classtypes and functor methods. The runtime reads them at every
    launch, so rebinding one takes effect at the next launch, as in Python."""
    out, seen = [], set()

    def walk(f):
        nat = native_of(f)
        owner = nat.id if nat is not None else 0
        if f is None or id(f) in seen or not hasattr(f, "__code__"):
            return
        seen.add(id(f))
        code = f.__code__
        cells = dict(zip(code.co_freevars, f.__closure__ or ()))
        names = set(code.co_names) | set(code.co_freevars)
        stack = [c for c in code.co_consts if isinstance(c, types.CodeType)]
        while stack:  # nested defs (team bodies) and their own nested defs
            c = stack.pop()
            names |= set(c.co_names) | set(c.co_freevars)
            stack.extend(x for x in c.co_consts if isinstance(x, types.CodeType))
        for name in sorted(names):
            if name in cells:
                src, key = cells[name], None
                try:
                    value = src.cell_contents
                except ValueError:
                    continue
            elif name in f.__globals__:
                src, key = f.__globals__, name
                value = src[name]
            else:
                continue
            kind = _classify(value)
            if kind is None:
                continue
            if kind[0] in ("bool", "int", "float"):
                out.append((src, key, name, owner))
            elif kind[0] == "function":
                walk(getattr(value, "__func__", value))
            elif kind[0] == "classtype":
                for m in value.__dict__.values():
                    if inspect.isfunction(m):
                        walk(m)

    walk(fn)
    for kind in (methods or {}).values():
        if kind and kind[0] == "function":
            walk(kind[1].func)
    return out


_native.set_resolver(_resolve, _constant_sources)
_ = builtins
