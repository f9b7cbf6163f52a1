"""Kokkos' built-in reducers for `pk.parallel_reduce(..., reducer=pk.Max)`.

The workunit's accumulator starts at the reducer's identity (the lowest value
for Max, 1 for Prod, ...) and the partial results of the threads are joined
with the reducer's operation. The struct reducers hand the body a record:
`acc.val`/`acc.loc` (MinLoc, MaxLoc), `acc.min_val`/`acc.max_val` (MinMax),
and all four for MinMaxLoc; their result is a named tuple with those fields.
"""

from __future__ import annotations

import operator
from collections import namedtuple

from ._types import PATTERN, WIRE

# Each reducer's native launch code; Sum is the plain reduce.
_CODES = WIRE["reducers"]

ValLoc = namedtuple("ValLoc", "val loc")
MinMaxScalar = namedtuple("MinMaxScalar", "min_val max_val")
MinMaxLocScalar = namedtuple("MinMaxLocScalar", "min_val min_loc max_val max_loc")

# Joins an initial_value with the reduced total, as the reducer joins partial results.
_JOIN = {
    "Sum": operator.add,
    "Prod": operator.mul,
    "Min": min,
    "Max": max,
    "LAnd": lambda a, b: bool(a and b),
    "LOr": lambda a, b: bool(a or b),
    "BAnd": operator.and_,
    "BOr": operator.or_,
}


class Reducer:
    """Base of the built-in reducers; pass the class (or an instance) as `reducer=`."""

    name = "Sum"


def _make(name: str, doc: str) -> type:
    return type(name, (Reducer,), {"name": name, "__doc__": doc, "__module__": "pykokkos"})


Sum = _make("Sum", "The sum of the contributions (the default).")
Prod = _make("Prod", "The product; the accumulator starts at 1.")
Min = _make("Min", "The minimum; the accumulator starts at the type's largest value.")
Max = _make("Max", "The maximum; the accumulator starts at the type's lowest value.")
LAnd = _make("LAnd", "Logical and; the accumulator starts true.")
LOr = _make("LOr", "Logical or; the accumulator starts false.")
BAnd = _make("BAnd", "Bitwise and; the accumulator starts with all bits set.")
BOr = _make("BOr", "Bitwise or; the accumulator starts at 0.")
MinLoc = _make("MinLoc", "The minimum and its index: acc.val, acc.loc.")
MaxLoc = _make("MaxLoc", "The maximum and its index: acc.val, acc.loc.")
MinMax = _make("MinMax", "Minimum and maximum: acc.min_val, acc.max_val.")
MinMaxLoc = _make("MinMaxLoc", "Minimum, maximum and their indices: acc.min_val, acc.max_val, acc.min_loc, acc.max_loc.")

ALL = (Sum, Prod, Min, Max, LAnd, LOr, BAnd, BOr, MinLoc, MaxLoc, MinMax, MinMaxLoc)


def reducer_name(reducer) -> str:
    """The reducer's name from a class, an instance or a string ("Max")."""
    if isinstance(reducer, str):
        name = reducer
    elif isinstance(reducer, type) and issubclass(reducer, Reducer):
        name = reducer.name
    elif isinstance(reducer, Reducer):
        name = reducer.name
    else:
        raise TypeError(f"reducer= takes one of pk.{', pk.'.join(r.name for r in ALL)}, not {reducer!r}")
    if name != "Sum" and name not in _CODES:
        raise TypeError(f"unknown reducer '{name}': use one of {', '.join(r.name for r in ALL)}")
    return name


def launch_code(name: str) -> int:
    return PATTERN["parallel_reduce"] if name == "Sum" else _CODES[name]


def finish(name: str, total, initial):
    """The user's result: a named tuple for the struct reducers (forcing a
    pending total), the total joined with `initial` for the others."""
    if name in ("MinLoc", "MaxLoc"):
        return ValLoc(*_value(total))
    if name == "MinMax":
        return MinMaxScalar(*_value(total))
    if name == "MinMaxLoc":
        lo, hi, lo_at, hi_at = _value(total)
        return MinMaxLocScalar(lo, lo_at, hi, hi_at)
    if initial is None:
        return total
    return _JOIN[name](initial, _value(total))


def _value(total):
    get = getattr(total, "_get", None)
    return get() if get is not None else total
