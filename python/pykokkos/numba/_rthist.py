"""np.histogram(a, bins) with an integer bin count, as Numba computes it: the
range is the data's min and max (NaNs skipped) unless given, an element's bin
is floor((v - lo) * bins / (hi - lo)), the maximum goes in the last bin, and
the edges are np.linspace(lo, hi, bins + 1). The counts are one kernel of
atomic adds; min and max are reductions."""

from __future__ import annotations

import math

import numpy as np

import pykokkos as pk


@pk.workunit
def _least(i, acc: pk.Acc[pk.double], a):
    acc = min(acc, a[i])


@pk.workunit
def _greatest(i, acc: pk.Acc[pk.double], a):
    acc = max(acc, a[i])


@pk.workunit
def _bin_counts(i, a, hist, lo: pk.double, ratio: pk.double, hi: pk.double, bins: pk.int64):
    v: pk.double = a[i]
    b: pk.double = math.floor((v - lo) * ratio)
    if b >= 0 and b < bins:
        pk.atomic_add(hist, [int(b)], 1)
    elif v == hi:
        pk.atomic_add(hist, [bins - 1], 1)


def histogram(v, bins, rng=None):
    """(counts, edges) of the 1-d View v (an n-d array's elements in C order)."""
    n = int(v.shape[0])
    if rng is None:
        if n == 0:
            lo, hi = math.inf, -math.inf
        else:
            lo = float(pk.parallel_reduce(n, _least, a=v, reducer=pk.Min))
            hi = float(pk.parallel_reduce(n, _greatest, a=v, reducer=pk.Max))
            if lo > hi:  # every element NaN: no finite range, as Numba's inf > -inf
                lo, hi = math.inf, -math.inf
    else:
        lo, hi = float(rng[0]), float(rng[1])
    bins = int(bins)
    if bins <= 0:
        raise ValueError("histogram(): `bins` should be a positive integer")
    if not lo <= hi:
        raise ValueError("histogram(): max must be larger than min in range parameter")
    hist = pk.View([bins], pk.int64)
    if hi > lo and n:
        pk.parallel_for(n, _bin_counts, a=v, hist=hist, lo=lo, ratio=bins / (hi - lo), hi=hi, bins=bins)
    return hist, pk.array(np.linspace(lo, hi, bins + 1))
