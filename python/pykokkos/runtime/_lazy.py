"""Lazy reduction results: a number that runs the work it depends on when used."""

from __future__ import annotations

import math
import operator


def _plain(value):
    return value


class LazyNumber:
    """Stands for the total of a pending parallel_reduce/parallel_scan.

    Every use Python makes of a number (arithmetic on either side, comparisons,
    float/int/index/bool, format, round, hashing, NumPy conversion) forces the
    launches this value depends on, and only those.
    """

    __slots__ = ("_pending", "_initial", "_value")

    def __init__(self, pending, initial=None):
        self._pending = pending
        self._initial = initial
        self._value = None

    def _get(self):
        if self._pending is not None:
            v = self._pending.value()
            if self._initial is not None:
                v = self._initial + v
            self._value, self._pending = v, None
        return self._value

    @property
    def ready(self) -> bool:
        return self._pending is None or self._pending.ready

    def __reduce__(self):
        # Pickled (mpi4py's lowercase calls: comm.allreduce(total)), it is the
        # number: the work it depends on runs first, and the other side gets a
        # plain number.
        return (_plain, (self._get(),))

    def __pk_number__(self):
        """The value, for a kernel argument (the runtime asks for it by this name)."""
        return self._get()

    def __float__(self):
        return float(self._get())

    def __int__(self):
        return int(self._get())

    def __index__(self):
        return operator.index(self._get())

    def __bool__(self):
        return bool(self._get())

    def __complex__(self):
        return complex(self._get())

    def __format__(self, spec):
        return format(self._get(), spec)

    def __str__(self):
        return str(self._get())

    def __repr__(self):
        return repr(self._get())

    def __hash__(self):
        return hash(self._get())

    def __round__(self, n=None):
        return round(self._get(), n) if n is not None else round(self._get())

    def __trunc__(self):
        return math.trunc(self._get())

    def __floor__(self):
        return math.floor(self._get())

    def __ceil__(self):
        return math.ceil(self._get())

    def __abs__(self):
        return abs(self._get())

    def __neg__(self):
        return -self._get()

    def __pos__(self):
        return +self._get()

    def __invert__(self):
        return ~self._get()

    def __array__(self, dtype=None, copy=None):
        import numpy as np

        return np.asarray(self._get(), dtype=dtype)


def _unwrap(x):
    return x._get() if isinstance(x, LazyNumber) else x


def _binary(op):
    def fwd(self, other):
        return op(self._get(), _unwrap(other))

    def rev(self, other):
        return op(_unwrap(other), self._get())

    return fwd, rev


for _name, _op in {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "pow": operator.pow,
    "divmod": divmod,
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
    "lshift": operator.lshift,
    "rshift": operator.rshift,
    "matmul": operator.matmul,
}.items():
    _f, _r = _binary(_op)
    setattr(LazyNumber, f"__{_name}__", _f)
    setattr(LazyNumber, f"__r{_name}__", _r)

for _name in ("lt", "le", "eq", "ne", "gt", "ge"):
    _op = getattr(operator, _name)
    setattr(LazyNumber, f"__{_name}__", (lambda op: lambda self, other: op(self._get(), _unwrap(other)))(_op))
