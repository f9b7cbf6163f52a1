"""BinSort's permutation as kernels: each entry's bin, then a stable counting
sort in chunks (each chunk counts its entries per bin, the counts become
start offsets in bin-major, chunk-minor order, and each chunk places its
entries in index order). Parallel over chunks, on any space, and the same
permutation as a stable sort by bin whatever the number of chunks (Kokkos'
own BinSort fills bins with atomics, so its order within a bin changes from
run to run)."""

from __future__ import annotations

import numpy as np

from ._kernels import workunit
from ._launch import parallel_for
from ._views import View


@workunit
def _bins1(i, keys, bins, mul, lo):
    bins[i] = int(mul * (float(keys[i]) - lo))


@workunit
def _bins3(i, keys, bins, mx, my, mz, lx, ly, lz, ny, nz):
    bx = int(mx * (float(keys[i][0]) - lx))
    by = int(my * (float(keys[i][1]) - ly))
    bz = int(mz * (float(keys[i][2]) - lz))
    bins[i] = (bx * ny + by) * nz + bz


@workunit
def _count(c, bins, counts, n, size):
    hi = min((c + 1) * size, n)
    for i in range(c * size, hi):
        counts[c][bins[i]] += 1


@workunit
def _totals(b, counts, total, chunks):
    s = 0
    for c in range(chunks):
        s += counts[c][b]
    total[b] = s


@workunit
def _starts(b, counts, offsets, chunks):
    s = offsets[b]
    for c in range(chunks):
        k = counts[c][b]
        counts[c][b] = s
        s += k


@workunit
def _scatter(c, bins, counts, perm, n, size, base):
    hi = min((c + 1) * size, n)
    for i in range(c * size, hi):
        b = bins[i]
        perm[counts[c][b]] = i + base
        counts[c][b] += 1


def bins_of(op, keys: View) -> View:
    """Each key's bin, computed as `op.bins` computes it (the same doubles)."""
    n = keys.shape[0]
    bins = View([n], np.int64)
    if len(keys.shape) == 1:
        mul = 1.0 * op.max_bins / (op.max_value - op.min_value)
        parallel_for(n, _bins1, keys=keys, bins=bins, mul=mul, lo=float(op.min_value))
    else:
        m = [1.0 * b / (hi - lo) for b, lo, hi in zip(op.max_bins, op.min_value, op.max_value)]
        lo = [float(v) for v in op.min_value]
        parallel_for(
            n,
            _bins3,
            keys=keys,
            bins=bins,
            mx=m[0],
            my=m[1],
            mz=m[2],
            lx=lo[0],
            ly=lo[1],
            lz=lo[2],
            ny=int(op.max_bins[1]),
            nz=int(op.max_bins[2]),
        )
    return bins


def stable_order(bins: View, nbins: int, base: int) -> tuple[View, View, View]:
    """(permutation + base, count per bin, first position per bin), int32."""
    n = bins.shape[0]
    chunks = max(1, min(64, n // 16384))
    size = -(-n // chunks)
    counts = View([chunks, nbins], np.int32)
    parallel_for(chunks, _count, bins=bins, counts=counts, n=n, size=size)
    total = View([nbins], np.int32)
    parallel_for(nbins, _totals, counts=counts, total=total, chunks=chunks)
    count = np.asarray(total)
    offsets = View([nbins], np.int32)
    np.asarray(offsets)[:] = np.cumsum(count) - count
    parallel_for(nbins, _starts, counts=counts, offsets=offsets, chunks=chunks)
    perm = View([n], np.int32)
    parallel_for(chunks, _scatter, bins=bins, counts=counts, perm=perm, n=n, size=size, base=base)
    return perm, total, offsets


@workunit
def _gather1(i, src, tmp, perm, shift):
    tmp[i] = src[perm[i] + shift]


@workunit
def _gather2(i, src, tmp, perm, shift, m):
    for j in range(m):
        tmp[i][j] = src[perm[i] + shift][j]


@workunit
def _put1(i, tmp, dst, at):
    dst[at + i] = tmp[i]


@workunit
def _put2(i, tmp, dst, at, m):
    for j in range(m):
        dst[at + i][j] = tmp[i][j]


def permute(values: View, perm: View, shift: int, at: int) -> None:
    """values[at + i] = values[perm[i] + shift] for every i, as kernels (through
    a temporary, so entries read are the old ones)."""
    n = perm.shape[0]
    shape = list(values.shape)
    tmp = View([n] + shape[1:], np.asarray(values).dtype.type)
    if len(shape) == 1:
        parallel_for(n, _gather1, src=values, tmp=tmp, perm=perm, shift=shift)
        parallel_for(n, _put1, tmp=tmp, dst=values, at=at)
    else:
        parallel_for(n, _gather2, src=values, tmp=tmp, perm=perm, shift=shift, m=shape[1])
        parallel_for(n, _put2, tmp=tmp, dst=values, at=at, m=shape[1])
