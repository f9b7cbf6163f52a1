"""njit / jit: a Dispatcher per decorated function, translated once per
argument types (as Numba compiles once per signature) into PyKokkos code."""

from __future__ import annotations

import functools
import linecache
import os

import numpy as np

from pykokkos import _native

from . import _fallback
from ._errors import UnsupportedError
from ._translate import translate
from ._typer import _view_type

_OPTIONS = {
    "parallel",
    "fastmath",
    "cache",
    "nogil",
    "nopython",
    "boundscheck",
    "error_model",
    "inline",
    "forceobj",
    "looplift",
    "debug",
    "locals",
    "target",
    "no_cpython_wrapper",
    "no_cfunc_wrapper",
    "fallback",
    "_nrt",
    "signature_or_function",
}


def _strict() -> bool:
    """PK_NUMBA_STRICT=1: no fallback; what cannot be offloaded raises its located error."""
    return os.environ.get("PK_NUMBA_STRICT", "0") not in ("", "0")


def _pk():
    import pykokkos

    return pykokkos


def _refusals() -> tuple:
    """The errors by which the runtime refuses generated code (a translation bug, never the user's)."""
    pk = _pk()
    return (pk.KernelSyntaxError, pk.KernelTypeError, pk.CompileError, UnsupportedError)


_PLAIN = (float, int, bool, complex)

# Every dispatcher made in this process, for `python -m pykokkos migrate`.
ALL: list = []


# id(dtype) -> (the dtype, its str): dtype.str formats a new string on each
# read, and the dtypes of arrays are a few shared objects.
_DTYPE_STR: dict = {}


def _dtype_str(d) -> str:
    seen = _DTYPE_STR.get(id(d))
    if seen is None or seen[0] is not d:
        if len(_DTYPE_STR) > 256:
            _DTYPE_STR.clear()
        seen = _DTYPE_STR[id(d)] = (d, d.str)
    return seen[1]


def _key(a):
    if type(a) in _PLAIN:  # (the common case first: no attribute lookups that raise)
        return type(a)
    if isinstance(a, np.ndarray):
        return ("A", _dtype_str(a.dtype), a.ndim)
    if isinstance(a, tuple):
        return ("T", tuple(_key(x) for x in a))
    view = _view_type(a)
    if view is not None:
        return ("V", *view)
    if hasattr(a, "__cuda_array_interface__") and hasattr(a, "dtype"):
        return ("A", np.dtype(a.dtype).str, int(a.ndim))
    if isinstance(a, Dispatcher):
        return ("F", id(a))
    if isinstance(a, np.dtype) or isinstance(a, type) and issubclass(a, np.generic):
        return ("D", np.dtype(a).str)
    return type(a)


class Dispatcher(_native.FastDispatch):
    """What @njit returns: call it like the function; `py_func` is the original.

    A call whose argument types ran as Kokkos before goes to the translated
    body natively (the base class, src/python/numba_call.rs); others come
    to `_call_slow`."""

    __pk_dispatcher__ = True  # (how the fallback tells one apart without importing this module)

    def __init__(self, py_func, options: dict):
        unknown = set(options) - _OPTIONS
        if unknown:
            raise TypeError(f"unknown option(s) for njit/jit: {', '.join(sorted(unknown))}")
        self.py_func = py_func
        self._argc = py_func.__code__.co_argcount  # (read on every call)
        self.options = options
        self._compiled: dict = {}
        self._bodies: dict = {}  # signature key -> the translated body rt.call runs
        self._sources: dict = {}
        self._how: dict = {}  # signature key -> "kokkos", "numba" or "python"
        self.why: dict = {}  # signature key -> why it was not offloaded
        self.last_ran: str | None = None
        self.last_key = None
        self._warned = False
        functools.update_wrapper(self, py_func)
        ALL.append(self)

    @property
    def signatures(self) -> list:
        return list(self._compiled)

    def _call_slow(self, *args, **kwargs):
        positional = not kwargs and len(args) == self._argc
        if not positional:
            args = self._bind(args, kwargs)
        key = tuple(map(_key, args))
        fn = self._compiled.get(key)
        how = self._how.get(key)
        # No verdict yet (the first call raised the program's own error
        # before its kernels had all run): a first call again.
        if fn is None or how is None or (how != "kokkos" and _strict()):
            return self._first_call(key, args, positional)
        self.last_ran, self.last_key = how, key
        if how == "kokkos" and positional:
            self._register_fast(args, self._bodies[key], key)
        return fn(*args)

    def _bind(self, args, kwargs):
        import inspect

        bound = inspect.signature(self.py_func).bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.args)

    def _first_call(self, key, args, positional=False):
        """Translates for this signature and runs; what Kokkos cannot take runs
        under Numba (or Python), unless PK_NUMBA_STRICT=1 asks for the error."""
        try:
            # (translated already by a call that raised, or by pk_source: used again)
            fn = self._compiled[key] if key in self._bodies and key not in self._how else self._compile(key, args)
        except UnsupportedError as err:
            if _strict():
                raise
            return self._fall_back(key, args, str(err))
        except Exception as err:  # noqa: BLE001 - a translator bug must not stop the program
            located = UnsupportedError(
                f"{_fallback.where(self.py_func)}: pykokkos.numba could not translate "
                f"{self.py_func.__qualname__} ({type(err).__name__}: {err})"
            )
            if _strict():
                raise located from err
            return self._fall_back(key, args, str(located))
        # The generated kernels compile as they first launch (rt.call runs all
        # of them before it returns): one that the toolchain refuses is a
        # translation the fallback takes over, with the arrays put back as the
        # call found them.
        saved = [(a, a.copy()) for a in args if isinstance(a, np.ndarray) and a.flags.writeable]
        try:
            out = fn(*args)
        except _refusals() as err:
            if _strict() and isinstance(err, UnsupportedError):
                raise
            if _strict():  # located at the user's function; the generated code's error is its cause
                first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
                raise UnsupportedError(
                    f"{_fallback.where(self.py_func)}: the kernels pykokkos.numba made of "
                    f"{self.py_func.__qualname__} were refused ({first})"
                ) from err
            for a, before in saved:
                a[...] = before
            return self._fall_back(key, args, str(err))
        self._how[key] = self.last_ran = "kokkos"
        self.last_key = key
        if positional:
            self._register_fast(args, self._bodies[key], key)
        return out

    def _fall_back(self, key, args, why: str):
        twin = _fallback.numba_version(self)
        how = "numba" if twin is not None else "python"
        fn = self.py_func if twin is None else _numba_call(twin)
        if not self._warned:
            self._warned = True
            _fallback.warn(self.py_func, how, why)
        self._compiled[key] = fn
        self._how[key] = self.last_ran = how
        self.why[key], self.last_key = why, key
        return fn(*args)

    def _compile(self, key, args):
        text, entry = translate(self.py_func, args, lambda v: isinstance(v, Dispatcher))
        # Numba's error_model ("numpy" by default under parallel=True): an
        # integer divided by zero gives 0 instead of raising.
        if self.options.get("error_model", "numpy" if self.options.get("parallel") else "python") == "numpy":
            text = _numpy_division(text)
        filename = _module_file(text, self.py_func.__name__)
        scope: dict = {"__name__": f"pykokkos.numba.generated.{self.py_func.__name__}"}
        exec(compile(text, filename, "exec"), scope)
        self._sources[key] = text
        self._bodies[key] = scope["_" + entry]
        self._compiled[key] = scope[entry]
        return scope[entry]

    def pk_source(self, *args) -> str:
        """The PyKokkos module generated for these arguments (compiling it if needed)."""
        key = tuple(_key(a) for a in args)
        if key not in self._sources:
            self._compile(key, args)
        return self._sources.get(key, "")

    def __repr__(self):
        return f"<pykokkos.numba.Dispatcher {self.py_func.__qualname__}>"

    # Picklable, as Numba's own (multiprocessing passes jitted functions to
    # its workers): by name where the name leads back to this dispatcher,
    # else as a new dispatcher of the function (itself pickled by name, as
    # pickle does functions). Copies are the function itself.
    def __reduce__(self):
        module, qualname = self.py_func.__module__, self.py_func.__qualname__
        try:
            named = _named(module, qualname)
        except (ImportError, AttributeError):
            named = None
        if named is self:
            return (_named, (module, qualname))
        return (type(self), (self.py_func, self.options))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _named(module: str, qualname: str):
    """The jitted function `qualname` of `module` (what a pickle names)."""
    import importlib

    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _numba_call(twin):
    """Calls Numba's twin of a function; jitted functions passed as arguments
    go as their own Numba twins (Numba cannot call a pykokkos.numba Dispatcher)."""

    def call(*args):
        if any(isinstance(a, Dispatcher) for a in args):
            args = tuple(_fallback.numba_version(a) if isinstance(a, Dispatcher) else a for a in args)
        return twin(*args)

    return call


def _numpy_division(text: str) -> str:
    """The generated module with `//` and `%` in its kernels as NumPy computes
    them (`pk.floor_divide`, `pk.remainder`: an integer divided by zero is 0)."""
    import ast

    ops = {ast.FloorDiv: "floor_divide", ast.Mod: "remainder"}

    def call(op, a, b):
        f = ast.Attribute(ast.Name("pk", ast.Load()), ops[type(op)], ast.Load())
        return ast.Call(f, [a, b], [])

    class Rewrite(ast.NodeTransformer):
        def visit_BinOp(self, node):
            self.generic_visit(node)
            return call(node.op, node.left, node.right) if type(node.op) in ops else node

        def visit_AugAssign(self, node):
            self.generic_visit(node)
            if type(node.op) not in ops:
                return node
            load = ast.parse(ast.unparse(node.target), mode="eval").body
            return ast.Assign([node.target], call(node.op, load, node.value))

    tree = ast.parse(text)
    kernels = [
        f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and any(ast.unparse(d).startswith("pk.") for d in f.decorator_list)
    ]
    if not any(isinstance(n, ast.BinOp | ast.AugAssign) and type(n.op) in ops for k in kernels for n in ast.walk(k)):
        return text
    for k in kernels:
        Rewrite().visit(k)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _module_file(text: str, name: str) -> str:
    """The generated module as a file in the cache root (private to the user):
    tracebacks and kernel errors show its lines, and a profiling trace of the
    program can be replayed, as for any workunit in a file. Named by its
    content, written once (by rename, so concurrent processes never see half)."""
    import hashlib
    import os
    import tempfile

    import pykokkos as pk

    folder = os.path.join(pk.config()["cache"], "numba")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.join(folder, f"{name}_{hashlib.sha256(text.encode()).hexdigest()[:24]}.py")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    # The file may be older than this process: the text is what was checked.
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)
    return path


def _decorate(args, options):
    if args and callable(args[0]) and not hasattr(args[0], "__pk_numba_sig__") and not isinstance(args[0], str):
        return Dispatcher(args[0], options)
    # Signatures (strings, type objects or lists of them) are accepted: types come from each call.

    def wrap(fn):
        return Dispatcher(fn, options)

    return wrap


def njit(*args, **options):
    """Numba's @njit: the function runs as Kokkos kernels (prange loops in parallel)."""
    options.setdefault("nopython", True)
    return _decorate(args, options)


def jit(*args, **options):
    """Numba's @jit. Only nopython code is translated; jit(forceobj=True) runs as Python."""
    if options.get("forceobj"):
        return (lambda f: f) if not args or not callable(args[0]) else args[0]
    return _decorate(args, options)


def prange(*args):
    """Numba's parallel range: a parallel_for (or reduce) inside jitted code, range outside it."""
    return range(*args)
