"""`@vectorize`: a scalar function made a ufunc, as Numba makes it. Called on
arrays (from jitted code or from Python) it is an elementwise array expression
whose element is the function, a @pk.function; on numbers it is a plain call.

With signatures (`@vectorize(["float32(float32, float32)"])`) the first one
the arguments' dtypes cast to safely is used, as a ufunc's loop is chosen;
without, the function is typed from the arguments, as Numba's dynamic ufunc
compiles a loop per input types. Anything else a ufunc has (reduce, outer,
accumulate, ...) is Numba's own vectorized function's."""

from __future__ import annotations

import numpy as np

from ._pysource import generated_caller


def _sig_types(sig) -> tuple[str, tuple[str, ...]]:
    """("float64", ("float64", "int64")) from "float64(float64, int64)" or a Numba signature."""
    from ._names import DTYPES
    from ._sigs import _NAMES

    table = {**DTYPES, **_NAMES}
    text = sig if isinstance(sig, str) else str(sig)
    ret, _, rest = text.partition("(")
    args = [a.strip() for a in rest.rstrip(")").split(",") if a.strip()]

    def dt(s):
        s = s.strip()
        if s not in table:
            raise TypeError(f"vectorize: {s!r} in {text!r} is not a scalar type pykokkos.numba knows")
        return table[s]

    return dt(ret), tuple(dt(a) for a in args)


class Vectorized:
    """What `@vectorize` makes."""

    __pk_vectorize__ = True

    def __init__(self, func, signatures, options: dict):
        from ._dispatch import njit

        self.py_func = func
        self.signatures = [_sig_types(s) for s in signatures]
        self.options = options
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self.scalar = njit(func)  # the element function, typed per call like any helper
        self.scalar.generated = True
        self._callers: dict = {}
        self._real = None

    @property
    def nin(self) -> int:
        return self.py_func.__code__.co_argcount

    def loop(self, dtypes) -> tuple[tuple, str | None]:
        """(the argument types the element function is typed with, the result
        dtype a signature fixes or None) for elements of these dtypes."""
        if not self.signatures:
            return tuple(dtypes), None
        for ret, args in self.signatures:
            if len(args) == len(dtypes) and all(
                d is not None and np.can_cast(np.dtype(d), np.dtype(a), "safe") for d, a in zip(dtypes, args)
            ):
                return args, ret
        known = ", ".join(r + "(" + ", ".join(a) + ")" for r, a in self.signatures)
        raise TypeError(f"ufunc '{self.__name__}' not supported for the input types {tuple(dtypes)} (its signatures: {known})")

    def __call__(self, *args, out=None):
        """Called from Python: NumPy arrays (lists become arrays) or numbers."""
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} arguments but {len(args)} were given")
        args = tuple(np.asarray(a) if isinstance(a, (list, tuple)) else a for a in args)
        if self.signatures:  # no loop for these types: the ufunc's TypeError, before anything runs
            self.loop([np.asarray(a).dtype.name for a in args])
        key = (out is not None, len(args))
        if key not in self._callers:
            names = [f"a{k}" for k in range(len(args))]
            value = f"__pk_vec({', '.join(names)})"
            fname = f"{self.__name__}__call{'_out' if out is not None else ''}"
            if out is not None:
                text = f"def {fname}({', '.join(names)}, out):\n    out[:] = {value}\n    return out\n"
            else:
                text = f"def {fname}({', '.join(names)}):\n    return {value}\n"
            self._callers[key] = generated_caller(fname, text, f"<{fname} of vectorized {self.__name__}>", {"__pk_vec": self})
        f = self._callers[key]
        res = f(*args, out) if out is not None else f(*args)
        return res if isinstance(res, np.ndarray) else np.asarray(res)[()]  # a NumPy scalar, as a ufunc gives

    def numba_version(self, real):
        if self._real is None:
            sigs = [r + "(" + ", ".join(a) + ")" for r, a in self.signatures]
            opts = {k: v for k, v in self.options.items() if k != "target" or v != "cuda"}
            self._real = real.vectorize(sigs, **opts)(self.py_func) if sigs else real.vectorize(**opts)(self.py_func)
        return self._real

    def __getattr__(self, name):
        """reduce, accumulate, outer, at, types, ...: Numba's own vectorized function's."""
        if name.startswith("_"):
            raise AttributeError(name)
        from ._fallback import real_numba

        real = real_numba()
        if real is None:
            raise AttributeError(f"{self.__name__}.{name} needs Numba (pykokkos.numba runs the ufunc's calls only)")
        return getattr(self.numba_version(real), name)


def vectorize(ftylist_or_function=(), **options):
    """@vectorize, @vectorize(), @vectorize([signatures], target=..., ...)."""
    if callable(ftylist_or_function):
        return Vectorized(ftylist_or_function, [], options)
    sigs = [ftylist_or_function] if isinstance(ftylist_or_function, str) else list(ftylist_or_function)

    def wrap(func):
        return Vectorized(func, sigs, options)

    return wrap


__all__ = ["Vectorized", "vectorize"]
